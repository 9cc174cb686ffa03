// MatMulInteger: int32 = (A - a_zero_point) x (B - b_zero_point) for int8 or
// uint8 A and B, with MatMul's numpy semantics (1-D operands promoted and the
// added dim dropped again, batch dims broadcast). The zero points are scalars
// or per-row of A ([M]) and per-column of B ([N]).
#include <algorithm>
#include <cstdint>
#include <vector>

#include "providers/cpu/common/broadcast.h"
#include "providers/cpu/common/dispatch.h"
#include "providers/cpu/quantization/int8_gemm.h"
#include "providers/cpu/quantization/int_matmul_shape.h"
#include "providers/kernel.h"

namespace onyx {

namespace {

using Int8TypeSet = TypeSet<int8_t, uint8_t>;

// Zero point `z` (may be null) of input `which` as one int32 per row/column
// (`count` of them), or an error naming the input.
Status ReadZeroPoint(const Tensor* z, const Tensor& of, int index, const char* zname, const char* oname,
                     int64_t count, std::vector<int32_t>* out) {
  out->assign(static_cast<size_t>(count), 0);
  if (z == nullptr) return Status::OK();
  ONYX_CHECK_ARG(z->type() == of.type(), "MatMulInteger: input ", index, " (", zname, ") has type ",
                 ElemTypeName(z->type()), " but ", oname, " has type ", ElemTypeName(of.type()));
  const bool scalar = z->size() == 1 && z->rank() <= 1;
  ONYX_CHECK_ARG(scalar || (z->rank() == 1 && z->dims()[0] == count), "MatMulInteger: input ", index, " (", zname,
                 ") of shape ", ShapeToString(z->dims()), " must be a scalar or a 1-D tensor of length ", count);
  return DispatchOver(Int8TypeSet{}, z->type(), "MatMulInteger", [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    const T* p = z->data<T>();
    for (int64_t i = 0; i < count; ++i) (*out)[i] = static_cast<int32_t>(p[scalar ? 0 : i]);
    return Status::OK();
  });
}

class MatMulIntegerKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    weights_.Init(info, 1);
    return Status::OK();
  }

  Status Compute(KernelContext& ctx) const override {
    const Tensor* A = nullptr;
    const Tensor* B = nullptr;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &A));
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(1, &B));
    IntMatMulShape sh;
    ONYX_RETURN_IF_ERROR(
        ResolveIntMatMul(A->dims(), B->dims(), "MatMulInteger", 0, "A", 1, "B", /*blas_ints=*/false, &sh));
    const int64_t M = sh.M, K = sh.K, N = sh.N;
    const Dims& batch = sh.batch;

    std::vector<int32_t> za, zb;
    ONYX_RETURN_IF_ERROR(ReadZeroPoint(ctx.Input(2), *A, 2, "a_zero_point", "input 0 (A)", M, &za));
    ONYX_RETURN_IF_ERROR(ReadZeroPoint(ctx.Input(3), *B, 3, "b_zero_point", "input 1 (B)", N, &zb));

    Tensor* Y = ctx.Output(0, sh.out_dims, ElemType::kInt32);
    if (Y == nullptr || Y->size() == 0) return Status::OK();
    for (const Tensor* t : {A, B})
      ONYX_RETURN_IF_ERROR(DispatchOver(Int8TypeSet{}, t->type(), "MatMulInteger", [](auto) { return Status::OK(); }));
    int32_t* y = Y->data<int32_t>();
    const int64_t batches = ShapeSize(batch);
    std::vector<int64_t> a_of(static_cast<size_t>(batches)), b_of(static_cast<size_t>(batches));
    for (int64_t bi = 0; bi < batches; ++bi) sh.Offsets(bi, &a_of[bi], &b_of[bi]);
    if (K == 0) {
      std::fill(y, y + Y->size(), 0);
      return Status::OK();
    }
    std::vector<int8gemm::PackedB> scratch;
    const std::vector<int8gemm::PackedB>& packed =
        weights_.Get(*B, K, N, ShapeSize(sh.bbatch), ctx.threads(), &scratch);
    for (int64_t bi = 0; bi < batches; ++bi) {
      int8gemm::GemmArgs args;
      args.M = M;
      args.a = static_cast<const uint8_t*>(A->raw()) + a_of[bi] * M * K;
      args.a_signed = A->type() == ElemType::kInt8;
      args.lda = K;
      args.za = za.data();
      args.za_per_row = true;
      args.zb = zb.data();
      args.zb_per_column = true;
      args.c = y + bi * M * N;
      args.ldc = N;
      int8gemm::Gemm(args, packed[b_of[bi]], ctx.threads());
    }
    return Status::OK();
  }

 private:
  int8gemm::PackedWeights weights_;
};

}  // namespace

ONYX_REGISTER_KERNEL(MatMulIntegerKernel, "", "MatMulInteger", 10, kMaxVersion, Int8TypeSet::ElemTypes());

}  // namespace onyx

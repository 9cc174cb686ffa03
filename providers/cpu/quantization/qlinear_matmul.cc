// QLinearMatMul (opset 10; 21 adds float16/bfloat16 scales): MatMul's numpy
// semantics (1-D operands promoted, batch dims broadcast) over int8/uint8
// A and B less their zero points, requantized to y_zero_point's type:
//   y = saturate(round_half_even(float(acc) * (a_scale * b_scale / y_scale)) + y_zp).
// a's and y's scale and zero point are per tensor or per row of A ([M]), b's
// per tensor or per column of B ([N]). The multiplier is computed in the
// scales' type, as the reference does. Exact sums from int8gemm::Gemm
// (int8_gemm.h), requantized in float as onnxruntime does
// (int8gemm::RequantizeFloat): the ONNX reference multiplies in double, but
// the two differ only where float rounding moves a product across a .5 tie,
// which none of onnx's node tests hits, while float is what every model
// quantized by onnxruntime (and its QDQ fusions, core/optimizer/qdq_fusion.cc)
// was calibrated and checked against.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "providers/cpu/common/broadcast.h"
#include "providers/cpu/quantization/int8_gemm.h"
#include "providers/cpu/quantization/int_matmul_shape.h"
#include "providers/cpu/quantization/qlinear_common.h"
#include "providers/kernel.h"

namespace onyx {

namespace {

using qlinear::Int8TypeSet;

class QLinearMatMulKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    weights_.Init(info, 3);
    return Status::OK();
  }

  Status Compute(KernelContext& ctx) const override {
    const char* op = "QLinearMatMul";
    const Tensor* A = nullptr;
    const Tensor* B = nullptr;
    const Tensor* yz = nullptr;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &A));
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(3, &B));
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(7, &yz));
    IntMatMulShape sh;
    ONYX_RETURN_IF_ERROR(ResolveIntMatMul(A->dims(), B->dims(), op, 0, "a", 3, "b", /*blas_ints=*/true, &sh));
    const int64_t M = sh.M, K = sh.K, N = sh.N;

    const char* per_row = " (one per row of a)";
    const char* per_col = " (one per column of b)";
    std::vector<float> as, bs, ys;
    std::vector<int32_t> za, zb, zy;
    ONYX_RETURN_IF_ERROR(qlinear::ReadScales(ctx.Input(1), op, 1, "a_scale", M, per_row, M, false, &as));
    ONYX_RETURN_IF_ERROR(qlinear::ReadZeroPoints(ctx.Input(2), A, op, 2, "a_zero_point", M, per_row, M, &za));
    ONYX_RETURN_IF_ERROR(qlinear::ReadScales(ctx.Input(4), op, 4, "b_scale", N, per_col, N, false, &bs));
    ONYX_RETURN_IF_ERROR(qlinear::ReadZeroPoints(ctx.Input(5), B, op, 5, "b_zero_point", N, per_col, N, &zb));
    ONYX_RETURN_IF_ERROR(qlinear::ReadScales(ctx.Input(6), op, 6, "y_scale", M, per_row, M, true, &ys));
    ONYX_RETURN_IF_ERROR(qlinear::ReadZeroPoints(yz, nullptr, op, 7, "y_zero_point", M, per_row, M, &zy));
    const ElemType st = ctx.Input(1)->type();
    ONYX_CHECK_ARG(ctx.Input(4)->type() == st && ctx.Input(6)->type() == st, "QLinearMatMul: inputs 1 (a_scale), ",
                   "4 (b_scale) and 6 (y_scale) must have one type, got ", ElemTypeName(st), ", ",
                   ElemTypeName(ctx.Input(4)->type()), ", ", ElemTypeName(ctx.Input(6)->type()));

    // multiplier[m][n] = a_scale[m] * b_scale[n] / y_scale[m], in the scales'
    // type; stored per row only when a or y has per-row scales, per column
    // only when b has per-column ones.
    const int64_t mrows = (ctx.Input(1)->size() > 1 || ctx.Input(6)->size() > 1) ? M : 1;
    const int64_t mcols = ctx.Input(4)->size() > 1 ? N : 1;
    std::vector<float> mult(static_cast<size_t>(mrows * mcols));
    ONYX_RETURN_IF_ERROR(DispatchOver(qlinear::ScaleTypeSet{}, st, op, [&](auto tag) -> Status {
      using S = typename decltype(tag)::type;
      for (int64_t m = 0; m < mrows; ++m)
        for (int64_t n = 0; n < mcols; ++n) mult[m * mcols + n] = qlinear::ScaleProduct<S>(as[m], bs[n], ys[m]);
      return Status::OK();
    }));

    Tensor* Y = ctx.Output(0, sh.out_dims, yz->type());
    if (Y == nullptr || Y->size() == 0) return Status::OK();
    const int64_t batches = ShapeSize(sh.batch);
    ONYX_RETURN_IF_ERROR(DispatchOver(Int8TypeSet{}, A->type(), op, [](auto) { return Status::OK(); }));
    ONYX_RETURN_IF_ERROR(DispatchOver(Int8TypeSet{}, B->type(), op, [](auto) { return Status::OK(); }));
    std::vector<int8gemm::PackedB> scratch;
    const std::vector<int8gemm::PackedB>& packed =
        weights_.Get(*B, K, N, ShapeSize(sh.bbatch), ctx.threads(), &scratch);
    return DispatchOver(Int8TypeSet{}, yz->type(), op, [&](auto tag) -> Status {
      using TY = typename decltype(tag)::type;
      TY* y = Y->data<TY>();
      for (int64_t bi = 0; bi < batches; ++bi) {
        int64_t oa = 0, ob = 0;
        sh.Offsets(bi, &oa, &ob);
        TY* yb = y + bi * M * N;
        int8gemm::GemmArgs args;
        args.M = M;
        args.a = static_cast<const uint8_t*>(A->raw()) + oa * M * K;
        args.a_signed = A->type() == ElemType::kInt8;
        args.lda = K;
        args.za = za.data();
        args.za_per_row = true;
        args.zb = zb.data();
        args.zb_per_column = true;
        args.epilogue = [&](int64_t m0, int64_t m1, int64_t n0, int64_t n1, const int32_t* c, int64_t ldc) {
          for (int64_t m = m0; m < m1; ++m)
            int8gemm::RequantizeFloat<TY>(c + (m - m0) * ldc, n1 - n0, 0,
                                          &mult[(mrows > 1 ? m : 0) * mcols + (mcols > 1 ? n0 : 0)], mcols > 1,
                                          zy[m], yb + m * N + n0);
        };
        int8gemm::Gemm(args, packed[ob], ctx.threads());
      }
      return Status::OK();
    });
  }

 private:
  int8gemm::PackedWeights weights_;
};

}  // namespace

ONYX_REGISTER_KERNEL(QLinearMatMulKernel, "", "QLinearMatMul", 10, kMaxVersion, Int8TypeSet::ElemTypes());

}  // namespace onyx

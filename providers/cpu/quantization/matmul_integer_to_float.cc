// onnxruntime's contrib ops (com.microsoft, version 1) for the MatMuls that
// onnxruntime.quantization.quantize_dynamic writes, and that onnxruntime's
// optimizer fuses from MatMulInteger + Cast + Mul:
//   MatMulIntegerToFloat(A, B, a_scale, b_scale, a_zero_point?, b_zero_point?, bias?)
//     Y = (A - a_zero_point) x (B - b_zero_point) * a_scale * b_scale (+ bias)
//   DynamicQuantizeMatMul(A float, B, b_scale, b_zero_point?, bias?)
//     A quantized on the fly to uint8 over the whole tensor (as
//     DynamicQuantizeLinear: range widened to hold 0, scale (max - min) / 255,
//     zero point and values rounded half to even), then as above.
// A and B int8 or uint8; a_scale and a_zero_point per tensor; b_scale and
// b_zero_point per tensor or per column of B ([N]); bias [N]; Y float. MatMul's
// numpy shapes (1-D operands promoted, batch dims broadcast). Products
// accumulate exactly in int32, then scale in float.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "providers/cpu/common/dispatch.h"
#include "providers/cpu/quantization/int8_gemm.h"
#include "providers/cpu/quantization/int_matmul_shape.h"
#include "providers/kernel.h"

namespace onyx {

namespace {

using Int8TypeSet = TypeSet<int8_t, uint8_t>;

// Input `index` (`name`): a float scalar, or (per_column) also a 1-D [n].
Status ReadScales(const Tensor& t, const char* op, int index, const char* name, bool per_column, int64_t n,
                  std::vector<float>* out) {
  ONYX_CHECK_ARG(t.type() == ElemType::kFloat, op, ": input ", index, " (", name, ") must be float, got ",
                 ElemTypeName(t.type()));
  const bool scalar = t.size() == 1 && t.rank() <= 1;
  ONYX_CHECK_ARG(scalar || (per_column && t.rank() == 1 && t.dims()[0] == n), op, ": input ", index, " (", name,
                 ") of shape ", ShapeToString(t.dims()), " must be a scalar",
                 per_column ? " or a 1-D tensor of length " : "", per_column ? std::to_string(n) : std::string());
  out->assign(static_cast<size_t>(n), t.data<float>()[0]);
  if (!scalar) std::copy(t.data<float>(), t.data<float>() + n, out->begin());
  for (int64_t i = 0; i < (scalar ? 1 : n); ++i) {
    const float s = t.data<float>()[i];
    ONYX_CHECK_ARG(std::isfinite(s), op, ": input ", index, " (", name, ") holds ", s, ", not a finite scale");
  }
  return Status::OK();
}

// Zero point `z` (may be null) of operand `of` as one int32 per column (n of
// them; per tensor when !per_column).
Status ReadZeroPoints(const Tensor* z, const Tensor& of, const char* op, int index, const char* name,
                      const char* oname, bool per_column, int64_t n, std::vector<int32_t>* out) {
  out->assign(static_cast<size_t>(n), 0);
  if (z == nullptr) return Status::OK();
  ONYX_CHECK_ARG(z->type() == of.type(), op, ": input ", index, " (", name, ") has type ", ElemTypeName(z->type()),
                 " but ", oname, " has type ", ElemTypeName(of.type()));
  const bool scalar = z->size() == 1 && z->rank() <= 1;
  ONYX_CHECK_ARG(scalar || (per_column && z->rank() == 1 && z->dims()[0] == n), op, ": input ", index, " (", name,
                 ") of shape ", ShapeToString(z->dims()), " must be a scalar",
                 per_column ? " or a 1-D tensor of length " : "", per_column ? std::to_string(n) : std::string());
  return DispatchOver(Int8TypeSet{}, z->type(), op, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    for (int64_t i = 0; i < n; ++i) (*out)[i] = static_cast<int32_t>(z->data<T>()[scalar ? 0 : i]);
    return Status::OK();
  });
}

class MatMulIntegerToFloatKernel final : public OpKernel {
 public:
  explicit MatMulIntegerToFloatKernel(bool dynamic) : dynamic_(dynamic) {}
  Status Init(const KernelInfo& info) {
    weights_.Init(info, 1);
    return Status::OK();
  }

  Status Compute(KernelContext& ctx) const override {
    const char* op = dynamic_ ? "DynamicQuantizeMatMul" : "MatMulIntegerToFloat";
    const Tensor* A = nullptr;
    const Tensor* B = nullptr;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &A));
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(1, &B));
    const int bs_i = dynamic_ ? 2 : 3, bz_i = dynamic_ ? 3 : 5, bias_i = dynamic_ ? 4 : 6;
    const Tensor* b_scale = nullptr;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(bs_i, &b_scale));
    auto opt = [&](int i) { return ctx.InputCount() > i ? ctx.Input(i) : nullptr; };
    ONYX_CHECK_ARG(B->type() == ElemType::kInt8 || B->type() == ElemType::kUint8, op,
                   ": input 1 (B) must be int8 or uint8, got ", ElemTypeName(B->type()));
    if (dynamic_) {
      ONYX_CHECK_ARG(A->type() == ElemType::kFloat, op, ": input 0 (A) must be float, got ", ElemTypeName(A->type()));
    } else {
      ONYX_CHECK_ARG(A->type() == ElemType::kInt8 || A->type() == ElemType::kUint8, op,
                     ": input 0 (A) must be int8 or uint8, got ", ElemTypeName(A->type()));
    }
    IntMatMulShape sh;
    ONYX_RETURN_IF_ERROR(ResolveIntMatMul(A->dims(), B->dims(), op, 0, "A", 1, "B", /*blas_ints=*/false, &sh));
    const int64_t M = sh.M, K = sh.K, N = sh.N;

    std::vector<float> bscale, ascale;
    std::vector<int32_t> bzp, azp;
    ONYX_RETURN_IF_ERROR(ReadScales(*b_scale, op, bs_i, "b_scale", true, N, &bscale));
    ONYX_RETURN_IF_ERROR(ReadZeroPoints(opt(bz_i), *B, op, bz_i, "b_zero_point", "input 1 (B)", true, N, &bzp));
    const Tensor* bias = opt(bias_i);
    if (bias != nullptr) {
      ONYX_CHECK_ARG(bias->type() == ElemType::kFloat && bias->rank() == 1 && bias->dims()[0] == N, op, ": input ",
                     bias_i, " (bias) of type ", ElemTypeName(bias->type()), " and shape ",
                     ShapeToString(bias->dims()), " must be float and 1-D of length ", N, ", the columns of input 1 (B)");
    }

    // A as stored, or (dynamic) quantized to uint8, with its zero point.
    const int64_t a_count = A->size();
    std::vector<uint8_t> a_quant;
    const void* a_data = A->raw();
    bool a_signed = A->type() == ElemType::kInt8;
    int32_t a_zero = 0;
    float a_scale = 1.f;
    if (dynamic_) {
      const float* a = A->data<float>();
      const int64_t bad = int8gemm::DynamicQuantizeParams(a, a_count, &a_scale, &a_zero, ctx.threads());
      ONYX_CHECK_ARG(bad < 0, op, ": input 0 (A) holds ", bad < 0 ? 0.f : a[bad], " at flat index ", bad,
                     ", which cannot be quantized");
      a_quant.resize(static_cast<size_t>(a_count));
      int8gemm::QuantizeU8(a, a_count, a_scale, a_zero, a_quant.data(), ctx.threads());
      a_data = a_quant.data();
      a_signed = false;
    } else {
      const Tensor* a_scale_t = nullptr;
      ONYX_RETURN_IF_ERROR(ctx.RequiredInput(2, &a_scale_t));
      ONYX_RETURN_IF_ERROR(ReadScales(*a_scale_t, op, 2, "a_scale", false, 1, &ascale));
      a_scale = ascale[0];
      ONYX_RETURN_IF_ERROR(ReadZeroPoints(opt(4), *A, op, 4, "a_zero_point", "input 0 (A)", false, 1, &azp));
      a_zero = azp[0];
    }
    std::vector<float> col_scale(static_cast<size_t>(N));
    for (int64_t n = 0; n < N; ++n) col_scale[n] = a_scale * bscale[n];

    Tensor* Y = ctx.Output(0, sh.out_dims, ElemType::kFloat);
    if (Y == nullptr || Y->size() == 0) return Status::OK();
    float* y = Y->data<float>();
    const float* bv = bias != nullptr ? bias->data<float>() : nullptr;
    std::vector<int8gemm::PackedB> scratch;
    const std::vector<int8gemm::PackedB>& packed =
        weights_.Get(*B, K, N, ShapeSize(sh.bbatch), ctx.threads(), &scratch);
    const int64_t batches = ShapeSize(sh.batch);
    for (int64_t bi = 0; bi < batches; ++bi) {
      int64_t oa = 0, ob = 0;
      sh.Offsets(bi, &oa, &ob);
      float* yb = y + bi * M * N;
      int8gemm::GemmArgs args;
      args.M = M;
      args.a = static_cast<const uint8_t*>(a_data) + oa * M * K;
      args.a_signed = a_signed;
      args.lda = K;
      args.za = &a_zero;
      args.zb = bzp.data();
      args.zb_per_column = true;
      args.epilogue = [&](int64_t m0, int64_t m1, int64_t n0, int64_t n1, const int32_t* c, int64_t ldc) {
        int8gemm::ScaleToFloat(c, ldc, m1 - m0, n1 - n0, col_scale.data() + n0, bv != nullptr ? bv + n0 : nullptr,
                               yb + m0 * N + n0, N);
      };
      int8gemm::Gemm(args, packed[ob], ctx.threads());
    }
    return Status::OK();
  }

 private:
  bool dynamic_;
  int8gemm::PackedWeights weights_;
};

}  // namespace

ONYX_REGISTER_KERNEL(MatMulIntegerToFloatKernel, "com.microsoft", "MatMulIntegerToFloat", 1, kMaxVersion,
                     Int8TypeSet::ElemTypes(), false);
ONYX_REGISTER_KERNEL(MatMulIntegerToFloatKernel, "com.microsoft", "DynamicQuantizeMatMul", 1, kMaxVersion,
                     std::vector<ElemType>{ElemType::kFloat}, true);

}  // namespace onyx

// onnxruntime's com.microsoft QGemm (version 1), which onnxruntime.quantization
// writes for Gemm in QOperator format (and onnxruntime's optimizer fuses from
// QDQ around a Gemm):
//   QGemm(A, a_scale, a_zero_point, B, b_scale, b_zero_point, C?, y_scale?, y_zero_point?)
// attributes alpha (1.0), transA, transB (0). A and B int8 or uint8 (2-D);
// a_scale/a_zero_point per tensor; b_scale/b_zero_point per tensor or per
// column of op(B) ([N]); C an int32 bias broadcast to [M, N] (scalar, [N],
// [1, N], [M, 1] or [M, N]), added to the exact int32 accumulator. With
// y_zero_point the output is quantized to its type:
//   y = saturate(round_half_even(float(acc) * (alpha * a_scale * b_scale[n] / y_scale)) + y_zp)
// otherwise float: y = float(acc) * (alpha * a_scale * b_scale[n] (/ y_scale if given)).
// Exact sums from int8gemm::Gemm (int8_gemm.h); quantized outputs requantized
// by int8gemm::RequantizeFloat, onnxruntime's float rounding.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "providers/cpu/quantization/int8_gemm.h"
#include "providers/cpu/quantization/qlinear_common.h"
#include "providers/kernel.h"

namespace onyx {
namespace {

using qlinear::Int8TypeSet;

class QGemmKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    alpha_ = info.AttrFloat("alpha", 1.0f);
    trans_a_ = info.AttrInt("transA", 0) != 0;
    trans_b_ = info.AttrInt("transB", 0) != 0;
    const Tensor* b = info.ConstantInput(3);
    if (b != nullptr && b->rank() == 2 && (b->type() == ElemType::kInt8 || b->type() == ElemType::kUint8)) {
      packed_b_ = PackB(*b, trans_b_ ? b->dims()[1] : b->dims()[0], trans_b_ ? b->dims()[0] : b->dims()[1], nullptr);
      packed_from_ = b;
    }
    return Status::OK();
  }

  Status Compute(KernelContext& ctx) const override {
    const char* op = "QGemm";
    const Tensor* A = nullptr;
    const Tensor* B = nullptr;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &A));
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(3, &B));
    ONYX_CHECK_ARG(A->rank() == 2, op, ": input 0 (A) of shape ", ShapeToString(A->dims()), " must be 2-D");
    ONYX_CHECK_ARG(B->rank() == 2, op, ": input 3 (B) of shape ", ShapeToString(B->dims()), " must be 2-D");
    const int64_t M = trans_a_ ? A->dims()[1] : A->dims()[0];
    const int64_t K = trans_a_ ? A->dims()[0] : A->dims()[1];
    const int64_t Kb = trans_b_ ? B->dims()[1] : B->dims()[0];
    const int64_t N = trans_b_ ? B->dims()[0] : B->dims()[1];
    ONYX_CHECK_ARG(K == Kb, op, ": inner dimensions differ: input 0 (A) ", ShapeToString(A->dims()),
                   trans_a_ ? " (transposed)" : "", " and input 3 (B) ", ShapeToString(B->dims()),
                   trans_b_ ? " (transposed)" : "");
    ONYX_CHECK_ARG(FitsBlasInt(M) && FitsBlasInt(N) && FitsBlasInt(K), op, ": dimensions of inputs 0 (A) ",
                   ShapeToString(A->dims()), " and 3 (B) ", ShapeToString(B->dims()), " are too large");

    const char* per_col = " (one per column of B)";
    qlinear::QParam qa;
    std::vector<float> bs, ys;
    std::vector<int32_t> zb, zy;
    ONYX_RETURN_IF_ERROR(qlinear::ReadQParam(ctx, op, 1, "a_scale", "a_zero_point", A, false, &qa));
    ONYX_RETURN_IF_ERROR(qlinear::ReadScales(ctx.Input(4), op, 4, "b_scale", N, per_col, N, false, &bs));
    ONYX_RETURN_IF_ERROR(qlinear::ReadZeroPoints(ctx.Input(5), B, op, 5, "b_zero_point", N, per_col, N, &zb));
    const Tensor* C = ctx.InputCount() > 6 ? ctx.Input(6) : nullptr;
    const Tensor* y_scale = ctx.InputCount() > 7 ? ctx.Input(7) : nullptr;
    const Tensor* y_zp = ctx.InputCount() > 8 ? ctx.Input(8) : nullptr;
    if (y_scale != nullptr) ONYX_RETURN_IF_ERROR(qlinear::ReadScales(y_scale, op, 7, "y_scale", -1, "", 1, true, &ys));
    if (y_zp != nullptr) {
      ONYX_CHECK_ARG(y_scale != nullptr, op, ": input 8 (y_zero_point) is given without input 7 (y_scale)");
      ONYX_RETURN_IF_ERROR(qlinear::ReadZeroPoints(y_zp, nullptr, op, 8, "y_zero_point", -1, "", 1, &zy));
    }
    int64_t c_rows = 1, c_cols = 1;
    if (C != nullptr) {
      ONYX_CHECK_ARG(C->type() == ElemType::kInt32, op, ": input 6 (C) must be int32, got ", ElemTypeName(C->type()));
      const Dims& cd = C->dims();
      bool ok = cd.size() <= 2;
      if (ok && cd.size() >= 1) c_cols = cd.back();
      if (ok && cd.size() == 2) c_rows = cd[0];
      ok = ok && (c_cols == 1 || c_cols == N) && (c_rows == 1 || c_rows == M);
      ONYX_CHECK_ARG(ok, op, ": input 6 (C) of shape ", ShapeToString(cd), " cannot be broadcast to the output [", M,
                     ",", N, "]");
    }

    // Per-column multiplier, in onnxruntime's order of float operations.
    std::vector<float> mult(static_cast<size_t>(N));
    for (int64_t n = 0; n < N; ++n) {
      mult[n] = alpha_ * qa.scale * bs[n];
      if (y_scale != nullptr) mult[n] /= ys[0];
    }
    const ElemType out_type = y_zp != nullptr ? y_zp->type() : ElemType::kFloat;
    Tensor* Y = ctx.Output(0, {M, N}, out_type);
    if (Y == nullptr || Y->size() == 0) return Status::OK();

    ONYX_RETURN_IF_ERROR(DispatchOver(Int8TypeSet{}, A->type(), op, [](auto) { return Status::OK(); }));
    ONYX_RETURN_IF_ERROR(DispatchOver(Int8TypeSet{}, B->type(), op, [](auto) { return Status::OK(); }));
    // A row-major [M, K] as stored (transposed into a copy for transA).
    std::vector<uint8_t> at;
    const uint8_t* a = static_cast<const uint8_t*>(A->raw());
    if (trans_a_) {
      at = Transposed(a, K, M);
      a = at.data();
    }
    int8gemm::PackedB scratch;
    const int8gemm::PackedB* packed = packed_b_.K() == K && packed_b_.N() == N && ctx.Input(3) == packed_from_
                                          ? &packed_b_
                                          : nullptr;
    if (packed == nullptr) {
      scratch = PackB(*B, K, N, ctx.threads());
      packed = &scratch;
    }
    const int32_t* cv = C != nullptr ? C->data<int32_t>() : nullptr;
    auto bias = [&](int64_t m, int64_t n) { return cv ? cv[(c_rows == 1 ? 0 : m * c_cols) + (c_cols == 1 ? 0 : n)] : 0; };
    int8gemm::GemmArgs args;
    args.M = M;
    args.a = a;
    args.a_signed = A->type() == ElemType::kInt8;
    args.lda = K;
    args.za = &qa.zp;
    args.zb = zb.data();
    args.zb_per_column = true;
    if (y_zp == nullptr) {
      float* y = Y->data<float>();
      args.epilogue = [&](int64_t m0, int64_t m1, int64_t n0, int64_t n1, const int32_t* c, int64_t ldc) {
        for (int64_t m = m0; m < m1; ++m)
          for (int64_t n = n0; n < n1; ++n)
            y[m * N + n] = static_cast<float>(static_cast<int32_t>(static_cast<uint32_t>(c[(m - m0) * ldc + n - n0]) +
                                                                   static_cast<uint32_t>(bias(m, n)))) *
                           mult[n];
      };
      int8gemm::Gemm(args, *packed, ctx.threads());
      return Status::OK();
    }
    return DispatchOver(Int8TypeSet{}, out_type, op, [&](auto tag) -> Status {
      using TY = typename decltype(tag)::type;
      TY* y = Y->data<TY>();
      args.epilogue = [&](int64_t m0, int64_t m1, int64_t n0, int64_t n1, const int32_t* c, int64_t ldc) {
        thread_local std::vector<int32_t> row;
        row.resize(static_cast<size_t>(n1 - n0));
        for (int64_t m = m0; m < m1; ++m) {
          const int32_t* cr = c + (m - m0) * ldc;
          const int32_t* src = cr;
          if (cv != nullptr) {
            for (int64_t n = n0; n < n1; ++n)
              row[n - n0] = static_cast<int32_t>(static_cast<uint32_t>(cr[n - n0]) + static_cast<uint32_t>(bias(m, n)));
            src = row.data();
          }
          int8gemm::RequantizeFloat<TY>(src, n1 - n0, 0, &mult[n0], true, zy[0], y + m * N + n0);
        }
      };
      int8gemm::Gemm(args, *packed, ctx.threads());
      return Status::OK();
    });
  }

 private:
  // x [rows, cols] bytes transposed to [cols, rows].
  static std::vector<uint8_t> Transposed(const uint8_t* x, int64_t rows, int64_t cols) {
    std::vector<uint8_t> t(static_cast<size_t>(rows * cols));
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c) t[c * rows + r] = x[r * cols + c];
    return t;
  }

  // op(B) as [K, N], packed.
  int8gemm::PackedB PackB(const Tensor& B, int64_t K, int64_t N, ThreadPool* pool) const {
    const uint8_t* b = static_cast<const uint8_t*>(B.raw());
    const bool s = B.type() == ElemType::kInt8;
    if (!trans_b_) return int8gemm::PackedB::Pack(b, s, K, N, N, pool);
    const std::vector<uint8_t> t = Transposed(b, N, K);
    return int8gemm::PackedB::Pack(t.data(), s, K, N, N, pool);
  }

  int8gemm::PackedB packed_b_;          // a constant B, packed at Init
  const Tensor* packed_from_ = nullptr;  // the tensor it was packed from
 private:
  float alpha_ = 1.0f;
  bool trans_a_ = false;
  bool trans_b_ = false;
};

}  // namespace

ONYX_REGISTER_KERNEL(QGemmKernel, "com.microsoft", "QGemm", 1, kMaxVersion, Int8TypeSet::ElemTypes());

}  // namespace onyx

// Shared by the integer-arithmetic kernels (QLinearMatMul, QLinearConv,
// ConvInteger, QGemm, QAttention, ...): reading per-tensor or per-channel
// scales and zero points (requantization: int8gemm::RequantizeFloat).
// ExactIntGemm (DynamicQuantizeLSTM's) sums operands less their zero points,
// integers of magnitude <= 255 held as floats, with SGEMM in slices of K
// short enough to stay exact in float, into doubles.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "core/framework/tensor.h"
#include "providers/kernel.h"
#include "providers/cpu/common/dispatch.h"
#include "providers/cpu/math/blas.h"

namespace onyx {
namespace qlinear {

using Int8TypeSet = TypeSet<int8_t, uint8_t>;
using ScaleTypeSet = TypeSet<float, Float16, BFloat16>;

// `t` holds one value (a scalar or shape [1]) or, when `count` >= 0, `count`
// values in one dim. Sets *per_channel.
inline Status CheckCount(const Tensor& t, const char* op, int index, const char* name, int64_t count,
                         const char* per, bool* per_channel) {
  *per_channel = false;
  if (t.size() == 1 && t.rank() <= 1) return Status::OK();
  ONYX_CHECK_ARG(count >= 0 && t.rank() == 1 && t.dims()[0] == count, op, ": input ", index, " (", name,
                 ") of shape ", ShapeToString(t.dims()), " must be a scalar",
                 count >= 0 ? " or a 1-D tensor of length " : "", count >= 0 ? std::to_string(count) : std::string(),
                 count >= 0 ? per : "");
  *per_channel = true;
  return Status::OK();
}

// Zero point input `index` (may be null: all zero) as `n` int32 values, one
// per channel (a single value is repeated). `like` is the quantized tensor it
// belongs to: the types must agree. count < 0: only a single value is allowed.
inline Status ReadZeroPoints(const Tensor* t, const Tensor* like, const char* op, int index, const char* name,
                             int64_t count, const char* per, int64_t n, std::vector<int32_t>* out) {
  out->assign(static_cast<size_t>(n), 0);
  if (t == nullptr) return Status::OK();
  if (like != nullptr)
    ONYX_CHECK_ARG(t->type() == like->type(), op, ": input ", index, " (", name, ") has type ",
                   ElemTypeName(t->type()), " but the tensor it quantizes has type ", ElemTypeName(like->type()));
  bool per_channel = false;
  ONYX_RETURN_IF_ERROR(CheckCount(*t, op, index, name, count, per, &per_channel));
  return DispatchOver(Int8TypeSet{}, t->type(), op, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    const T* p = t->data<T>();
    for (int64_t i = 0; i < n; ++i) (*out)[i] = static_cast<int32_t>(p[per_channel ? i : 0]);
    return Status::OK();
  });
}

// Scale input `index` as `n` floats (see ReadZeroPoints); `positive`: each
// must be finite and > 0 (a scale divided by).
inline Status ReadScales(const Tensor* t, const char* op, int index, const char* name, int64_t count,
                         const char* per, int64_t n, bool positive, std::vector<float>* out) {
  ONYX_CHECK_ARG(t != nullptr, op, ": input ", index, " (", name, ") is required");
  ONYX_CHECK_ARG(t->type() == ElemType::kFloat || t->type() == ElemType::kFloat16 || t->type() == ElemType::kBFloat16,
                 op, ": input ", index, " (", name, ") must be float, float16 or bfloat16, got ",
                 ElemTypeName(t->type()));
  bool per_channel = false;
  ONYX_RETURN_IF_ERROR(CheckCount(*t, op, index, name, count, per, &per_channel));
  out->resize(static_cast<size_t>(n));
  ONYX_RETURN_IF_ERROR(DispatchOver(ScaleTypeSet{}, t->type(), op, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    const T* p = t->data<T>();
    for (int64_t i = 0; i < n; ++i) (*out)[i] = static_cast<float>(p[per_channel ? i : 0]);
    return Status::OK();
  }));
  if (positive)
    for (int64_t i = 0; i < (per_channel ? n : std::min<int64_t>(n, 1)); ++i)
      ONYX_CHECK_ARG(std::isfinite((*out)[i]) && (*out)[i] > 0, op, ": input ", index, " (", name,
                     ") must be finite and > 0, got ", (*out)[i], per_channel ? " at index " : "",
                     per_channel ? std::to_string(i) : std::string());
  return Status::OK();
}

// One per-tensor scale (input `si`, `sname`) and optional zero point (input
// si + 1, `zname`) of the quantized tensor `like` (the zero point must have
// its type); `positive`: the scale is divided by.
struct QParam {
  float scale = 1.f;
  int32_t zp = 0;
};

inline Status ReadQParam(const KernelContext& ctx, const char* op, int si, const char* sname, const char* zname,
                         const Tensor* like, bool positive, QParam* out) {
  std::vector<float> s;
  std::vector<int32_t> z;
  ONYX_RETURN_IF_ERROR(ReadScales(ctx.Input(si), op, si, sname, -1, "", 1, positive, &s));
  const Tensor* zt = si + 1 < ctx.InputCount() ? ctx.Input(si + 1) : nullptr;
  ONYX_RETURN_IF_ERROR(ReadZeroPoints(zt, like, op, si + 1, zname, -1, "", 1, &z));
  out->scale = s[0];
  out->zp = z[0];
  return Status::OK();
}

// The inputs of onnxruntime's quantized unary ops: X (input 0), its scale and
// zero point (inputs 1, 2), the output's scale and zero point (3, 4), named
// `names` = {X's scale, X's zero point, Y's scale, Y's zero point}.
inline Status ReadUnaryQParams(const KernelContext& ctx, const char* op, const char* const names[4], const Tensor** X,
                               QParam* qx, QParam* qy) {
  ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, X));
  ONYX_RETURN_IF_ERROR(ReadQParam(ctx, op, 1, names[0], names[1], *X, false, qx));
  return ReadQParam(ctx, op, 3, names[2], names[3], *X, true, qy);
}

// a * b / c in the scales' own type S (each step rounded to S, as numpy does
// for float16), returned as float.
template <typename S>
float ScaleProduct(float a, float b, float c) {
  const S ab = S(a * b);
  return static_cast<float>(S(static_cast<float>(ab) / c));
}
template <>
inline float ScaleProduct<float>(float a, float b, float c) {
  return a * b / c;
}

// Row-major C[M,N] = A[M,K] x B[K,N] (row strides lda, ldb, ldc) where A and
// B hold integers of magnitude <= 255: each SGEMM over 256 values of K sums
// to below 256 * 255 * 255 < 2^24, exact in float; the slices add in double.
// `scratch` holds one float slice result. Runs on `pool` (null: the calling
// thread, for callers already spread over the pool).
inline void ExactIntGemm(int64_t M, int64_t N, int64_t K, const float* A, int64_t lda, const float* B, int64_t ldb,
                         double* C, int64_t ldc, std::vector<float>* scratch, ThreadPool* pool = nullptr) {
  constexpr int64_t kSlice = 256;
  for (int64_t i = 0; i < M; ++i) std::fill(C + i * ldc, C + i * ldc + N, 0.0);
  scratch->resize(static_cast<size_t>(M * N));
  for (int64_t k0 = 0; k0 < K; k0 += kSlice) {
    const int64_t kn = std::min(kSlice, K - k0);
    BlasGemm<float>(false, false, M, N, kn, 1.0f, A + k0, lda, B + k0 * ldb, ldb, 0.0f, scratch->data(), N, pool);
    for (int64_t i = 0; i < M; ++i) {
      const float* s = scratch->data() + i * N;
      double* c = C + i * ldc;
      for (int64_t j = 0; j < N; ++j) c[j] += static_cast<double>(s[j]);
    }
  }
}

// Note for the loops over 8-bit data here and in the kernels: a store through
// uint8_t* may alias any object, so a loop that reads lambda captures (by
// reference) while storing uint8_t reloads them every element and does not
// vectorize; such loops copy their captures into locals first.


}  // namespace qlinear
}  // namespace onyx

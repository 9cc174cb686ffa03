// Device-side pieces the CUDA launchers (*_impl.cu) share: launch sizes,
// 16-bit floats loaded and stored through float, warp and block reductions,
// the activation formulas, element-type dispatch. Included by .cu files only.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "core/framework/tensor.h"
#include "providers/cuda/common/launch.h"

namespace onyx {
namespace cuda {
namespace {  // each .cu file gets its own copy (no relocatable device code)

constexpr int kThreads = 256;
inline unsigned Blocks(int64_t n) {
  int64_t b = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(b > 65535 * 16 ? 65535 * 16 : (b < 1 ? 1 : b));
}

// Arithmetic type: 16-bit floats compute in float.
template <typename T> struct Acc { using type = T; };
template <> struct Acc<__half> { using type = float; };
template <> struct Acc<__nv_bfloat16> { using type = float; };
template <typename T> __device__ __forceinline__ typename Acc<T>::type Load(T v) { return v; }
__device__ __forceinline__ float Load(__half v) { return __half2float(v); }
__device__ __forceinline__ float Load(__nv_bfloat16 v) { return __bfloat162float(v); }
template <typename T> __device__ __forceinline__ T Store(typename Acc<T>::type v) { return static_cast<T>(v); }
template <> __device__ __forceinline__ __half Store<__half>(float v) { return __float2half(v); }
template <> __device__ __forceinline__ __nv_bfloat16 Store<__nv_bfloat16>(float v) { return __float2bfloat16(v); }

__device__ __forceinline__ int64_t Offset(const IndexMap& m, int k, int64_t i) {
  int64_t off = k == 0 ? m.offset : 0;
  for (int d = m.rank - 1; d >= 0; --d) {
    int64_t q = i / m.dims[d];
    off += (i - q * m.dims[d]) * m.strides[k][d];
    i = q;
  }
  return off;
}

__device__ __forceinline__ float Unary(UnaryOp op, float x) {
  switch (op) {
    case UnaryOp::kRelu: return x > 0.f ? x : 0.f;
    case UnaryOp::kSigmoid: return 1.f / (1.f + __expf(-x));
    case UnaryOp::kTanh: return tanhf(x);
    case UnaryOp::kExp: return expf(x);
    case UnaryOp::kLog: return logf(x);
    case UnaryOp::kSqrt: return sqrtf(x);
    case UnaryOp::kNeg: return -x;
    case UnaryOp::kAbs: return fabsf(x);
    case UnaryOp::kErf: return erff(x);
    case UnaryOp::kGelu: return 0.5f * x * (1.f + erff(x * 0.70710678118654752f));
    case UnaryOp::kGeluTanh: return 0.5f * x * (1.f + tanhf(0.7978845608028654f * (x + 0.044715f * x * x * x)));
    default: return 1.f / x;
  }
}

__device__ __forceinline__ float WarpSum(float v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffff, v, o);
  return v;
}
__device__ __forceinline__ float WarpMax(float v) {
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffff, v, o));
  return v;
}
// Block-wide reduction (kThreads threads); every thread gets the result.
template <bool kMax>
__device__ float BlockReduce(float v) {
  __shared__ float part[kThreads / 32];
  v = kMax ? WarpMax(v) : WarpSum(v);
  if ((threadIdx.x & 31) == 0) part[threadIdx.x >> 5] = v;
  __syncthreads();
  float r = kMax ? -INFINITY : 0.f;
  for (int w = 0; w < kThreads / 32; ++w) r = kMax ? fmaxf(r, part[w]) : r + part[w];
  __syncthreads();
  return r;
}

template <typename F>
bool DispatchFloat(ElemType t, F&& f) {
  switch (t) {
    case ElemType::kFloat: f(float{}); return true;
    case ElemType::kFloat16: f(__half{}); return true;
    case ElemType::kBFloat16: f(__nv_bfloat16{}); return true;
    default: return false;
  }
}

inline Status Unsupported(const char* what, ElemType t) {
  return MakeError(ErrorCode::kNotImplemented, what, " has no CUDA kernel for element type ", ElemTypeName(t));
}

}  // namespace
}  // namespace cuda
}  // namespace onyx

// MaxPool and AveragePool over NCHW inputs of 1 to 3 spatial dims, one thread
// per output value: every attribute the CPU kernel takes (ceil_mode,
// dilations, asymmetric and SAME pads, count_include_pad, MaxPool's Indices
// with either storage_order), sized by the same pool_geometry.h.
#include <cfloat>

#include "providers/cuda/common/device_math.cuh"
#include "providers/cuda/cuda_common.h"
#include "providers/cuda/nn/pool_launch.h"

namespace onyx {
namespace cuda {
namespace {

template <typename T> __device__ __forceinline__ T Lowest();
template <> __device__ __forceinline__ float Lowest<float>() { return -FLT_MAX; }
template <> __device__ __forceinline__ double Lowest<double>() { return -DBL_MAX; }
template <> __device__ __forceinline__ __half Lowest<__half>() { return __ushort_as_half(0xFBFF); }  // -65504
template <> __device__ __forceinline__ __nv_bfloat16 Lowest<__nv_bfloat16>() {
  return __ushort_as_bfloat16(0xFF7F);
}

template <typename T, bool kMax>
__global__ void PoolKernel(PoolGeometry g, int64_t n, const T* x, T* y, int64_t* indices) {
  using A = typename Acc<T>::type;
  const int64_t in_plane = g.in[0] * g.in[1] * g.in[2];
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    int64_t o[3], r = i;
    for (int a = 2; a >= 0; --a) {
      o[a] = r % g.out[a];
      r /= g.out[a];
    }
    const int64_t plane = r;
    const T* src = x + plane * in_plane;
    // Per axis: the window's first input coordinate and its taps [lo, hi)
    // inside the input; `incl` counts the taps inside the padded extent.
    int64_t st[3], lo[3], hi[3], incl = 1;
    for (int a = 0; a < 3; ++a) {
      st[a] = o[a] * g.s[a] - g.pb[a];
      const int64_t d = g.d[a];
      lo[a] = st[a] >= 0 ? 0 : (-st[a] + d - 1) / d;
      hi[a] = g.in[a] - st[a] > 0 ? min(g.k[a], (g.in[a] - st[a] + d - 1) / d) : 0;
      if (lo[a] > g.k[a]) lo[a] = g.k[a];
      if (hi[a] < lo[a]) hi[a] = lo[a];
      const int64_t inc = min(g.k[a], (g.in[a] + g.pe[a] - st[a] + d - 1) / d);
      incl *= inc > 0 ? inc : 0;
    }
    A acc = A(0);
    int64_t best_at = -1;
    for (int64_t t0 = lo[0]; t0 < hi[0]; ++t0) {
      const int64_t c0 = st[0] + t0 * g.d[0];
      for (int64_t t1 = lo[1]; t1 < hi[1]; ++t1) {
        const int64_t c1 = st[1] + t1 * g.d[1];
        const T* row = src + (c0 * g.in[1] + c1) * g.in[2];
        for (int64_t t2 = lo[2]; t2 < hi[2]; ++t2) {
          const int64_t c2 = st[2] + t2 * g.d[2];
          const A v = Load(row[c2]);
          if (kMax) {
            if (best_at < 0 || v > acc) {
              acc = v;
              best_at = g.column_major ? c0 + g.in[0] * (c1 + g.in[1] * c2) : (c0 * g.in[1] + c1) * g.in[2] + c2;
            }
          } else {
            acc += v;
          }
        }
      }
    }
    if (kMax) {
      y[i] = best_at < 0 ? Lowest<T>() : Store<T>(acc);
      if (indices) indices[i] = best_at < 0 ? -1 : plane * in_plane + best_at;
    } else {
      const int64_t count = g.include_pad ? incl : (hi[0] - lo[0]) * (hi[1] - lo[1]) * (hi[2] - lo[2]);
      y[i] = Store<T>(acc / static_cast<A>(count));
    }
  }
}

template <typename T>
void Launch(bool max, const PoolGeometry& g, int64_t n, const void* x, void* y, int64_t* indices, cudaStream_t s) {
  if (max)
    PoolKernel<T, true><<<Blocks(n), kThreads, 0, s>>>(g, n, static_cast<const T*>(x), static_cast<T*>(y), indices);
  else
    PoolKernel<T, false><<<Blocks(n), kThreads, 0, s>>>(g, n, static_cast<const T*>(x), static_cast<T*>(y), nullptr);
}

}  // namespace

Status LaunchPool(bool max, ElemType t, const PoolGeometry& g, int64_t planes, const void* x, void* y,
                  int64_t* indices, cudaStream_t s) {
  const int64_t n = planes * g.out[0] * g.out[1] * g.out[2];
  if (n == 0) return Status::OK();
  if (t == ElemType::kDouble) {
    Launch<double>(max, g, n, x, y, indices, s);
  } else if (!DispatchFloat(t, [&](auto v) { Launch<decltype(v)>(max, g, n, x, y, indices, s); })) {
    return Unsupported(max ? "MaxPool" : "AveragePool", t);
  }
  return CudaStatus(cudaGetLastError(), max ? "MaxPool kernel" : "AveragePool kernel");
}

}  // namespace cuda
}  // namespace onyx

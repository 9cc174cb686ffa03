// Reductions over any set of axes (ReduceMean whose axes are not one
// contiguous run) and dividing by a count (Mean of N inputs).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "providers/cuda/common/launch.h"
#include "providers/cuda/cuda_common.h"

namespace onyx {
namespace cuda {
namespace {

constexpr int kThreads = 256;
inline unsigned GridFor(int64_t n) {
  const int64_t b = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(b > 65535 * 16 ? 65535 * 16 : (b < 1 ? 1 : b));
}

// Values widen to double for the sums; 16-bit floats round through float on
// the way back, as the contiguous ReduceMean kernel does.
template <typename T> __device__ __forceinline__ double Wide(T v) { return static_cast<double>(v); }
__device__ __forceinline__ double Wide(__half v) { return static_cast<double>(__half2float(v)); }
__device__ __forceinline__ double Wide(__nv_bfloat16 v) { return static_cast<double>(__bfloat162float(v)); }
template <typename T> __device__ __forceinline__ T Narrow(double v) { return static_cast<T>(v); }
template <> __device__ __forceinline__ __half Narrow<__half>(double v) { return __float2half(static_cast<float>(v)); }
template <> __device__ __forceinline__ __nv_bfloat16 Narrow<__nv_bfloat16>(double v) {
  return __float2bfloat16(static_cast<float>(v));
}

// Element offset in x of the i-th (row-major) index of `dims`, given x's
// stride of each of them.
__device__ __forceinline__ int64_t StridedOffset(int rank, const int64_t* dims, const int64_t* strides, int64_t i) {
  int64_t off = 0;
  for (int d = rank - 1; d >= 0; --d) {
    const int64_t q = i / dims[d];
    off += (i - q * dims[d]) * strides[d];
    i = q;
  }
  return off;
}

// One thread per output element, walking its reduced elements.
template <typename T>
__global__ void ReduceMeanThreadKernel(ReduceMap m, int64_t n_out, const T* x, T* y) {
  for (int64_t o = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; o < n_out; o += int64_t(gridDim.x) * blockDim.x) {
    const T* base = x + StridedOffset(m.kept_rank, m.kept_dims, m.kept_strides, o);
    double s = 0;
    for (int64_t j = 0; j < m.count; ++j) s += Wide(base[StridedOffset(m.red_rank, m.red_dims, m.red_strides, j)]);
    y[o] = Narrow<T>(s / static_cast<double>(m.count));
  }
}

// Sum of `v` over the block (kThreads threads); every thread gets it.
__device__ double BlockSum(double v) {
  __shared__ double part[kThreads / 32];
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffff, v, o);
  if ((threadIdx.x & 31) == 0) part[threadIdx.x >> 5] = v;
  __syncthreads();
  double r = 0;
  for (int w = 0; w < kThreads / 32; ++w) r += part[w];
  __syncthreads();  // `part` is reused by the block's next output
  return r;
}

// One block per output element (few outputs, long reductions).
template <typename T>
__global__ void ReduceMeanBlockKernel(ReduceMap m, int64_t n_out, const T* x, T* y) {
  for (int64_t o = blockIdx.x; o < n_out; o += gridDim.x) {
    const T* base = x + StridedOffset(m.kept_rank, m.kept_dims, m.kept_strides, o);
    double s = 0;
    for (int64_t j = threadIdx.x; j < m.count; j += blockDim.x)
      s += Wide(base[StridedOffset(m.red_rank, m.red_dims, m.red_strides, j)]);
    s = BlockSum(s);
    if (threadIdx.x == 0) y[o] = Narrow<T>(s / static_cast<double>(m.count));
  }
}

template <typename T>
__global__ void DivideKernel(int64_t n, double d, const T* x, T* y) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    y[i] = Narrow<T>(Wide(x[i]) / d);
}

template <typename F>
bool DispatchReal(ElemType t, F&& f) {
  switch (t) {
    case ElemType::kFloat: f(float{}); return true;
    case ElemType::kDouble: f(double{}); return true;
    case ElemType::kFloat16: f(__half{}); return true;
    case ElemType::kBFloat16: f(__nv_bfloat16{}); return true;
    default: return false;
  }
}

}  // namespace

Status MakeReduceMap(const std::vector<int64_t>& dims, const std::vector<bool>& reduce, ReduceMap* map) {
  if (dims.size() > static_cast<size_t>(kMaxRank))
    return MakeError(ErrorCode::kNotImplemented, "rank ", dims.size(), " is above the CUDA kernels' ", kMaxRank);
  *map = ReduceMap();
  const std::vector<int64_t> st = Strides(dims);
  for (size_t d = 0; d < dims.size(); ++d) {
    if (reduce[d]) {
      map->red_dims[map->red_rank] = dims[d];
      map->red_strides[map->red_rank++] = st[d];
      map->count *= dims[d];
    } else {
      map->kept_dims[map->kept_rank] = dims[d];
      map->kept_strides[map->kept_rank++] = st[d];
      map->n_out *= dims[d];
    }
  }
  return Status::OK();
}

Status LaunchReduceMeanAxes(ElemType t, const ReduceMap& map, const void* x, void* y, cudaStream_t s) {
  if (map.n_out == 0) return Status::OK();
  // A block per output when the outputs alone would not fill the GPU (a
  // few thousand threads) and each sums many elements.
  const bool per_block = map.n_out < 4096 && map.count >= 512;
  if (!DispatchReal(t, [&](auto v) {
        using T = decltype(v);
        if (per_block)
          ReduceMeanBlockKernel<T><<<static_cast<unsigned>(map.n_out), kThreads, 0, s>>>(
              map, map.n_out, static_cast<const T*>(x), static_cast<T*>(y));
        else
          ReduceMeanThreadKernel<T><<<GridFor(map.n_out), kThreads, 0, s>>>(map, map.n_out, static_cast<const T*>(x),
                                                                            static_cast<T*>(y));
      }))
    return MakeError(ErrorCode::kNotImplemented, "ReduceMean has no CUDA kernel for element type ", ElemTypeName(t));
  return CudaStatus(cudaGetLastError(), "ReduceMean kernel");
}

Status LaunchDivide(ElemType t, int64_t n, double divisor, const void* x, void* y, cudaStream_t s) {
  if (n == 0) return Status::OK();
  if (!DispatchReal(t, [&](auto v) {
        using T = decltype(v);
        DivideKernel<T><<<GridFor(n), kThreads, 0, s>>>(n, divisor, static_cast<const T*>(x), static_cast<T*>(y));
      }))
    return MakeError(ErrorCode::kNotImplemented, "no CUDA division for element type ", ElemTypeName(t));
  return CudaStatus(cudaGetLastError(), "divide kernel");
}

}  // namespace cuda
}  // namespace onyx

// The Reduce* operators over any set of axes (one templated kernel for all
// of them) and dividing by a count (Mean of N inputs).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <limits>
#include <type_traits>

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

// Element <-> accumulator: float types widen to double (16-bit floats
// through float), integers to int64; results round back the same way.
template <typename T> struct Acc { using type = double; };
template <> struct Acc<int32_t> { using type = int64_t; };
template <> struct Acc<int64_t> { using type = int64_t; };
template <typename A, typename T> __device__ __forceinline__ A Widen(T v) { return static_cast<A>(v); }
template <typename A> __device__ __forceinline__ A Widen(__half v) { return static_cast<A>(__half2float(v)); }
template <typename A> __device__ __forceinline__ A Widen(__nv_bfloat16 v) {
  return static_cast<A>(__bfloat162float(v));
}
template <typename T, typename A> __device__ __forceinline__ T Narrow(A v) { return static_cast<T>(v); }
template <> __device__ __forceinline__ __half Narrow<__half, double>(double v) {
  return __float2half(static_cast<float>(v));
}
template <> __device__ __forceinline__ __nv_bfloat16 Narrow<__nv_bfloat16, double>(double v) {
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

// What each ReduceOp does to an element, between two partial results and
// at the end (see launch.h). `shift` is LogSumExp's max (0 for the rest).
template <ReduceOp kOp, typename A>
struct Reducer {
  A shift = A(0);
  static __device__ __forceinline__ A Identity() {
    if constexpr (kOp == ReduceOp::kProd) {
      return A(1);
    } else if constexpr (kOp == ReduceOp::kMax) {
      return std::numeric_limits<A>::has_infinity ? -std::numeric_limits<A>::infinity()
                                                  : std::numeric_limits<A>::lowest();
    } else if constexpr (kOp == ReduceOp::kMin) {
      return std::numeric_limits<A>::has_infinity ? std::numeric_limits<A>::infinity()
                                                  : std::numeric_limits<A>::max();
    } else {
      return A(0);
    }
  }
  __device__ __forceinline__ A Map(A x) const {
    if constexpr (kOp == ReduceOp::kSumSquare || kOp == ReduceOp::kL2) {
      return x * x;
    } else if constexpr (kOp == ReduceOp::kL1) {
      return x < A(0) ? -x : x;
    } else if constexpr (kOp == ReduceOp::kLogSumExp) {
      return exp(x - shift);
    } else {
      return x;
    }
  }
  // NaN wins in Max and Min, as numpy's.
  static __device__ __forceinline__ A Combine(A a, A b) {
    if constexpr (kOp == ReduceOp::kMax) {
      return (a != a || a > b) ? a : b;
    } else if constexpr (kOp == ReduceOp::kMin) {
      return (a != a || a < b) ? a : b;
    } else if constexpr (kOp == ReduceOp::kProd) {
      return a * b;
    } else {
      return a + b;
    }
  }
  __device__ __forceinline__ A Finish(A s, int64_t count) const {
    if constexpr (kOp == ReduceOp::kMean) {
      return s / static_cast<A>(count);
    } else if constexpr (kOp == ReduceOp::kL2) {
      return sqrt(s);
    } else if constexpr (kOp == ReduceOp::kLogSum) {
      return log(s);
    } else if constexpr (kOp == ReduceOp::kLogSumExp) {
      return log(s) + shift;
    } else {
      return s;
    }
  }
};

// LogSumExp subtracts the max before exp (as ONNX's reference): a finite
// max, else 0 (all -inf, or an inf that makes the result inf anyway).
template <typename A> __device__ __forceinline__ A Shift(A mx) { return isfinite(mx) ? mx : A(0); }

// One thread per output element, walking its reduced elements.
template <ReduceOp kOp, typename T>
__global__ void ReduceThreadKernel(ReduceMap m, const T* x, T* y) {
  using A = typename Acc<T>::type;
  for (int64_t o = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; o < m.n_out; o += int64_t(gridDim.x) * blockDim.x) {
    const T* base = x + StridedOffset(m.kept_rank, m.kept_dims, m.kept_strides, o);
    Reducer<kOp, A> r;
    if constexpr (kOp == ReduceOp::kLogSumExp) {
      using Max = Reducer<ReduceOp::kMax, A>;
      A mx = Max::Identity();
      for (int64_t j = 0; j < m.count; ++j)
        mx = Max::Combine(mx, Widen<A>(base[StridedOffset(m.red_rank, m.red_dims, m.red_strides, j)]));
      r.shift = Shift(mx);
    }
    A s = r.Identity();
    for (int64_t j = 0; j < m.count; ++j)
      s = r.Combine(s, r.Map(Widen<A>(base[StridedOffset(m.red_rank, m.red_dims, m.red_strides, j)])));
    y[o] = Narrow<T>(r.Finish(s, m.count));
  }
}

// `v` combined over the warp; every lane gets it.
template <ReduceOp kOp, typename A>
__device__ __forceinline__ A WarpCombine(A v) {
  for (int o = 16; o > 0; o >>= 1) v = Reducer<kOp, A>::Combine(v, __shfl_xor_sync(0xffffffff, v, o));
  return v;
}

// `v` combined over the block (kThreads threads); every thread gets it.
template <ReduceOp kOp, typename A>
__device__ A BlockCombine(A v) {
  __shared__ A part[kThreads / 32];
  v = WarpCombine<kOp>(v);
  if ((threadIdx.x & 31) == 0) part[threadIdx.x >> 5] = v;
  __syncthreads();
  A r = part[0];
  for (int w = 1; w < kThreads / 32; ++w) r = Reducer<kOp, A>::Combine(r, part[w]);
  __syncthreads();  // `part` is reused by the block's next output
  return r;
}

// One block per output element (few outputs, long reductions).
template <ReduceOp kOp, typename T>
__global__ void ReduceBlockKernel(ReduceMap m, const T* x, T* y) {
  using A = typename Acc<T>::type;
  for (int64_t o = blockIdx.x; o < m.n_out; o += gridDim.x) {
    const T* base = x + StridedOffset(m.kept_rank, m.kept_dims, m.kept_strides, o);
    Reducer<kOp, A> r;
    if constexpr (kOp == ReduceOp::kLogSumExp) {
      using Max = Reducer<ReduceOp::kMax, A>;
      A mx = Max::Identity();
      for (int64_t j = threadIdx.x; j < m.count; j += blockDim.x)
        mx = Max::Combine(mx, Widen<A>(base[StridedOffset(m.red_rank, m.red_dims, m.red_strides, j)]));
      r.shift = Shift(BlockCombine<ReduceOp::kMax>(mx));
    }
    A s = r.Identity();
    for (int64_t j = threadIdx.x; j < m.count; j += blockDim.x)
      s = r.Combine(s, r.Map(Widen<A>(base[StridedOffset(m.red_rank, m.red_dims, m.red_strides, j)])));
    s = BlockCombine<kOp>(s);
    if (threadIdx.x == 0) y[o] = Narrow<T>(r.Finish(s, m.count));
  }
}

// One warp per output element where the reduced elements run contiguously
// (the last reduced axis has stride 1), so that the warp's loads coalesce.
// `o` is the same for the whole warp: every lane takes part in the shuffles.
template <ReduceOp kOp, typename T>
__global__ void ReduceWarpKernel(ReduceMap m, const T* x, T* y) {
  using A = typename Acc<T>::type;
  const int lane = threadIdx.x & 31;
  const int64_t per_block = blockDim.x / 32;
  for (int64_t o = blockIdx.x * per_block + threadIdx.x / 32; o < m.n_out; o += int64_t(gridDim.x) * per_block) {
    const T* base = x + StridedOffset(m.kept_rank, m.kept_dims, m.kept_strides, o);
    Reducer<kOp, A> r;
    if constexpr (kOp == ReduceOp::kLogSumExp) {
      using Max = Reducer<ReduceOp::kMax, A>;
      A mx = Max::Identity();
      for (int64_t j = lane; j < m.count; j += 32)
        mx = Max::Combine(mx, Widen<A>(base[StridedOffset(m.red_rank, m.red_dims, m.red_strides, j)]));
      r.shift = Shift(WarpCombine<ReduceOp::kMax>(mx));
    }
    A s = r.Identity();
    for (int64_t j = lane; j < m.count; j += 32)
      s = r.Combine(s, r.Map(Widen<A>(base[StridedOffset(m.red_rank, m.red_dims, m.red_strides, j)])));
    s = WarpCombine<kOp>(s);
    if (lane == 0) y[o] = Narrow<T>(r.Finish(s, m.count));
  }
}

template <typename T>
__global__ void DivideKernel(int64_t n, double d, const T* x, T* y) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    y[i] = Narrow<T>(Widen<double>(x[i]) / d);
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

// Sum, Max and Min also take integers (accumulated in int64).
constexpr bool TakesIntegers(ReduceOp op) {
  return op == ReduceOp::kSum || op == ReduceOp::kMax || op == ReduceOp::kMin;
}

template <ReduceOp kOp, typename F>
bool DispatchReduce(ElemType t, F&& f) {
  if (DispatchReal(t, f)) return true;
  if constexpr (TakesIntegers(kOp)) {
    if (t == ElemType::kInt32) return f(int32_t{}), true;
    if (t == ElemType::kInt64) return f(int64_t{}), true;
  }
  return false;
}

template <ReduceOp kOp>
bool Launch(ElemType t, const ReduceMap& map, const void* x, void* y, cudaStream_t s) {
  // A block per output when the outputs alone would not fill the GPU (a
  // few thousand threads) and each combines many elements; a warp per
  // output when its elements are contiguous and more than a few; else a
  // thread per output.
  const bool per_block = map.n_out < 4096 && map.count >= 512;
  const bool per_warp = !per_block && map.count >= 32 && map.red_rank > 0 && map.red_strides[map.red_rank - 1] == 1;
  return DispatchReduce<kOp>(t, [&](auto v) {
    using T = decltype(v);
    if (per_block)
      ReduceBlockKernel<kOp, T><<<static_cast<unsigned>(map.n_out), kThreads, 0, s>>>(
          map, static_cast<const T*>(x), static_cast<T*>(y));
    else if (per_warp)
      ReduceWarpKernel<kOp, T><<<GridFor(map.n_out * 32), kThreads, 0, s>>>(map, static_cast<const T*>(x),
                                                                            static_cast<T*>(y));
    else
      ReduceThreadKernel<kOp, T><<<GridFor(map.n_out), kThreads, 0, s>>>(map, static_cast<const T*>(x),
                                                                         static_cast<T*>(y));
  });
}

// Calls f(std::integral_constant<ReduceOp, op>) for the run-time `op`.
template <typename F>
bool WithOp(ReduceOp op, F&& f) {
  switch (op) {
#define ONYX_REDUCE_CASE(k) \
  case ReduceOp::k: return f(std::integral_constant<ReduceOp, ReduceOp::k>{});
    ONYX_REDUCE_CASE(kSum)
    ONYX_REDUCE_CASE(kMean)
    ONYX_REDUCE_CASE(kMax)
    ONYX_REDUCE_CASE(kMin)
    ONYX_REDUCE_CASE(kProd)
    ONYX_REDUCE_CASE(kSumSquare)
    ONYX_REDUCE_CASE(kL1)
    ONYX_REDUCE_CASE(kL2)
    ONYX_REDUCE_CASE(kLogSum)
    ONYX_REDUCE_CASE(kLogSumExp)
#undef ONYX_REDUCE_CASE
  }
  return false;
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

bool ReduceSupported(ReduceOp op, ElemType t) {
  return WithOp(op, [&](auto k) { return DispatchReduce<decltype(k)::value>(t, [](auto) {}); });
}

Status LaunchReduce(ReduceOp op, ElemType t, const ReduceMap& map, const void* x, void* y, cudaStream_t s) {
  if (map.n_out == 0) return Status::OK();
  if (!WithOp(op, [&](auto k) { return Launch<decltype(k)::value>(t, map, x, y, s); }))
    return MakeError(ErrorCode::kNotImplemented, "no CUDA reduction kernel for element type ", ElemTypeName(t));
  return CudaStatus(cudaGetLastError(), "reduction kernel");
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

#include <cuda_fp16.h>
#include <cuda_bf16.h>

#include "core/framework/tensor.h"
#include "providers/cuda/common/device_math.cuh"
#include "providers/cuda/common/launch.h"
#include "providers/cuda/cuda_common.h"

namespace onyx {
namespace cuda {
namespace {



template <typename A>
__device__ __forceinline__ A Binary(BinaryOp op, A a, A b) {
  switch (op) {
    case BinaryOp::kAdd: return a + b;
    case BinaryOp::kSub: return a - b;
    case BinaryOp::kMul: return a * b;
    case BinaryOp::kDiv: return b == A(0) && !(A(0.5) > A(0)) ? A(0) : a / b;  // integer x/0 -> 0
    case BinaryOp::kPow: return static_cast<A>(pow(static_cast<double>(a), static_cast<double>(b)));
    case BinaryOp::kMax: return a > b ? a : b;
    default: return a < b ? a : b;
  }
}
template <>
__device__ __forceinline__ float Binary<float>(BinaryOp op, float a, float b) {
  switch (op) {
    case BinaryOp::kAdd: return a + b;
    case BinaryOp::kSub: return a - b;
    case BinaryOp::kMul: return a * b;
    case BinaryOp::kDiv: return a / b;
    case BinaryOp::kPow: return powf(a, b);
    case BinaryOp::kMax: return fmaxf(a, b);
    default: return fminf(a, b);
  }
}

// How operand b is indexed when a has the output's shape: kSame (b too),
// kRow (b repeats along the last dimension: a bias), kScalar; else kGeneral.
enum class BLayout { kGeneral, kSame, kRow, kScalar };

template <typename T>
__global__ void BinaryKernel(BinaryOp op, IndexMap m, int64_t n, BLayout layout, int64_t row, const T* a, const T* b,
                             T* y) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    int64_t ia = i, ib = i;
    switch (layout) {
      case BLayout::kGeneral: ia = Offset(m, 0, i); ib = Offset(m, 1, i); break;
      case BLayout::kSame: break;
      case BLayout::kRow: ib = i % row; break;
      case BLayout::kScalar: ib = 0; break;
    }
    y[i] = Store<T>(Binary(op, Load(a[ia]), Load(b[ib])));
  }
}

template <typename T>
__global__ void CompareKernel(CompareOp op, IndexMap m, int64_t n, const T* a, const T* b, bool* y) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const auto x = Load(a[Offset(m, 0, i)]), z = Load(b[Offset(m, 1, i)]);
    switch (op) {
      case CompareOp::kEqual: y[i] = x == z; break;
      case CompareOp::kLess: y[i] = x < z; break;
      case CompareOp::kLessOrEqual: y[i] = x <= z; break;
      case CompareOp::kGreater: y[i] = x > z; break;
      default: y[i] = x >= z; break;
    }
  }
}


template <typename T>
__global__ void UnaryKernel(UnaryOp op, int64_t n, const T* x, T* y) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    y[i] = Store<T>(Unary(op, static_cast<float>(Load(x[i]))));
}

// One element of the given size, copied as a whole word.
template <size_t N> struct Word;
template <> struct Word<1> { using type = uint8_t; };
template <> struct Word<2> { using type = uint16_t; };
template <> struct Word<4> { using type = uint32_t; };
template <> struct Word<8> { using type = uint64_t; };

template <typename W>
__global__ void StridedCopyKernel(IndexMap m, int64_t n, const W* x, W* y) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    y[i] = x[Offset(m, 0, i)];
}

template <typename W>
__global__ void WhereKernel(IndexMap m, int64_t n, const bool* c, const W* a, const W* b, W* y) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    y[i] = c[Offset(m, 0, i)] ? a[Offset(m, 1, i)] : b[Offset(m, 2, i)];
}

template <typename W, typename I>
__global__ void GatherKernel(int64_t n, int64_t axis_dim, int64_t inner, int64_t n_idx, const W* x, const I* idx,
                             W* y) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    int64_t in = i % inner, t = i / inner, j = t % n_idx, o = t / n_idx;
    int64_t k = static_cast<int64_t>(idx[j]);
    if (k < 0) k += axis_dim;
    y[i] = k < 0 || k >= axis_dim ? W(0) : x[(o * axis_dim + k) * inner + in];
  }
}

template <typename From, typename To>
__global__ void CastKernel(int64_t n, const From* x, To* y) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    y[i] = static_cast<To>(static_cast<typename Acc<From>::type>(x[i]));
}
template <typename From>
__global__ void CastToHalfKernel(int64_t n, const From* x, __half* y) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    y[i] = __float2half(static_cast<float>(Load(x[i])));
}


// `v` rounded to T and back when `on`. Softmax (not LogSoftmax) of 16-bit
// types rounds x - max, each exp and the sum to T, as ONNX's op-by-op
// semantics in T (its reference) and the CPU kernel do.
template <typename T>
__device__ __forceinline__ float InT(float v, bool on) {
  return on ? static_cast<float>(Load(Store<T>(static_cast<typename Acc<T>::type>(v)))) : v;
}

// Rows of a [rows, d] softmax: one block per row.
template <typename T>
__global__ void SoftmaxRowsKernel(int64_t d, bool log_sm, const T* x, T* y) {
  const T* xr = x + blockIdx.x * d;
  T* yr = y + blockIdx.x * d;
  const bool rt = !log_sm;
  float m = -INFINITY;
  for (int64_t j = threadIdx.x; j < d; j += blockDim.x) m = fmaxf(m, static_cast<float>(Load(xr[j])));
  m = BlockReduce<true>(m);
  float s = 0.f;
  for (int64_t j = threadIdx.x; j < d; j += blockDim.x)
    s += InT<T>(expf(InT<T>(static_cast<float>(Load(xr[j])) - m, rt)), rt);
  s = InT<T>(BlockReduce<false>(s), rt);
  const float ls = logf(s);
  for (int64_t j = threadIdx.x; j < d; j += blockDim.x) {
    float v = static_cast<float>(Load(xr[j])) - m;
    yr[j] = Store<T>(static_cast<typename Acc<T>::type>(log_sm ? v - ls : InT<T>(expf(InT<T>(v, rt)), rt) / s));
  }
}
// [outer, d, inner] with inner > 1: one thread per (outer, inner) column.
template <typename T>
__global__ void SoftmaxColumnsKernel(int64_t outer, int64_t d, int64_t inner, bool log_sm, const T* x, T* y) {
  for (int64_t c = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; c < outer * inner;
       c += int64_t(gridDim.x) * blockDim.x) {
    const int64_t base = (c / inner) * d * inner + c % inner;
    const bool rt = !log_sm;
    float m = -INFINITY, s = 0.f;
    for (int64_t j = 0; j < d; ++j) m = fmaxf(m, static_cast<float>(Load(x[base + j * inner])));
    for (int64_t j = 0; j < d; ++j)
      s += InT<T>(expf(InT<T>(static_cast<float>(Load(x[base + j * inner])) - m, rt)), rt);
    s = InT<T>(s, rt);
    for (int64_t j = 0; j < d; ++j) {
      float v = static_cast<float>(Load(x[base + j * inner])) - m;
      y[base + j * inner] =
          Store<T>(static_cast<typename Acc<T>::type>(log_sm ? v - logf(s) : InT<T>(expf(InT<T>(v, rt)), rt) / s));
    }
  }
}

template <typename T>
__global__ void LayerNormKernel(int64_t d, float eps, const T* x, const T* scale, const T* bias, T* y, float* mean,
                                float* inv_std) {
  const T* xr = x + blockIdx.x * d;
  T* yr = y + blockIdx.x * d;
  float s = 0.f;
  for (int64_t j = threadIdx.x; j < d; j += blockDim.x) s += static_cast<float>(Load(xr[j]));
  const float mu = BlockReduce<false>(s) / d;
  float v = 0.f;
  for (int64_t j = threadIdx.x; j < d; j += blockDim.x) {
    float t = static_cast<float>(Load(xr[j])) - mu;
    v += t * t;
  }
  const float rs = rsqrtf(BlockReduce<false>(v) / d + eps);
  for (int64_t j = threadIdx.x; j < d; j += blockDim.x) {
    float t = (static_cast<float>(Load(xr[j])) - mu) * rs * static_cast<float>(Load(scale[j]));
    if (bias) t += static_cast<float>(Load(bias[j]));
    yr[j] = Store<T>(static_cast<typename Acc<T>::type>(t));
  }
  if (threadIdx.x == 0) {
    if (mean) mean[blockIdx.x] = mu;
    if (inv_std) inv_std[blockIdx.x] = rs;
  }
}

template <typename T>
__global__ void ReduceMeanKernel(int64_t outer, int64_t r, int64_t inner, const T* x, T* y) {
  for (int64_t c = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; c < outer * inner;
       c += int64_t(gridDim.x) * blockDim.x) {
    const int64_t base = (c / inner) * r * inner + c % inner;
    double s = 0;
    for (int64_t j = 0; j < r; ++j) s += static_cast<double>(Load(x[base + j * inner]));
    y[c] = Store<T>(static_cast<typename Acc<T>::type>(s / r));
  }
}

template <typename T>
__global__ void BatchNormKernel(int64_t total, int64_t c, int64_t spatial, float eps, const T* x, const T* scale,
                                const T* bias, const T* mean, const T* var, T* y) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < total; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t ch = (i / spatial) % c;
    const float inv = rsqrtf(static_cast<float>(Load(var[ch])) + eps) * static_cast<float>(Load(scale[ch]));
    const float v = (static_cast<float>(Load(x[i])) - static_cast<float>(Load(mean[ch]))) * inv +
                    static_cast<float>(Load(bias[ch]));
    y[i] = Store<T>(static_cast<typename Acc<T>::type>(v));
  }
}

// Calls f(T{}) for the CUDA type of `t` among float, double, half, bfloat16,
// int32, int64; false when `t` is none of them.
template <typename F>
bool DispatchArith(ElemType t, F&& f) {
  switch (t) {
    case ElemType::kFloat: f(float{}); return true;
    case ElemType::kDouble: f(double{}); return true;
    case ElemType::kFloat16: f(__half{}); return true;
    case ElemType::kBFloat16: f(__nv_bfloat16{}); return true;
    case ElemType::kInt32: f(int32_t{}); return true;
    case ElemType::kInt64: f(int64_t{}); return true;
    default: return false;
  }
}
template <typename F>
bool DispatchSize(size_t size, F&& f) {
  switch (size) {
    case 1: f(uint8_t{}); return true;
    case 2: f(uint16_t{}); return true;
    case 4: f(uint32_t{}); return true;
    case 8: f(uint64_t{}); return true;
    default: return false;
  }
}
template <typename F>
bool DispatchCast(ElemType t, F&& f) {
  switch (t) {
    case ElemType::kFloat: f(float{}); return true;
    case ElemType::kDouble: f(double{}); return true;
    case ElemType::kInt32: f(int32_t{}); return true;
    case ElemType::kInt64: f(int64_t{}); return true;
    case ElemType::kInt8: f(int8_t{}); return true;
    case ElemType::kUint8: f(uint8_t{}); return true;
    case ElemType::kBool: f(bool{}); return true;
    default: return false;
  }
}


}  // namespace

std::vector<int64_t> Strides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> s(dims.size(), 1);
  for (int i = static_cast<int>(dims.size()) - 2; i >= 0; --i) s[i] = s[i + 1] * dims[i + 1];
  return s;
}

Status BroadcastShape(const std::vector<int64_t>& a, const std::vector<int64_t>& b, std::vector<int64_t>* out) {
  const size_t r = a.size() > b.size() ? a.size() : b.size();
  out->assign(r, 1);
  for (size_t i = 0; i < r; ++i) {
    int64_t x = i < r - a.size() ? 1 : a[i - (r - a.size())];
    int64_t y = i < r - b.size() ? 1 : b[i - (r - b.size())];
    if (x != y && x != 1 && y != 1)
      return MakeError(ErrorCode::kInvalidArgument, "shapes ", ShapeToString(a), " and ", ShapeToString(b),
                       " cannot be broadcast (dimension ", i, ": ", x, " vs ", y, ")");
    (*out)[i] = x == 1 ? y : x;
  }
  return Status::OK();
}

Status BroadcastMap(const std::vector<int64_t>& out, const std::vector<std::vector<int64_t>>& inputs, IndexMap* map) {
  if (out.size() > static_cast<size_t>(kMaxRank))
    return MakeError(ErrorCode::kNotImplemented, "rank ", out.size(), " is above the CUDA kernels' ", kMaxRank);
  *map = IndexMap();
  map->rank = static_cast<int>(out.size());
  for (size_t d = 0; d < out.size(); ++d) map->dims[d] = out[d];
  for (size_t k = 0; k < inputs.size(); ++k) {
    const auto& in = inputs[k];
    std::vector<int64_t> st = Strides(in);
    const size_t lead = out.size() - in.size();
    for (size_t d = 0; d < in.size(); ++d) map->strides[k][lead + d] = in[d] == 1 ? 0 : st[d];
  }
  return Status::OK();
}

bool BinarySupported(ElemType t) { return DispatchArith(t, [](auto) {}); }
bool UnarySupported(ElemType t) { return DispatchFloat(t, [](auto) {}); }
bool CastSupported(ElemType t) { return t == ElemType::kFloat16 || DispatchCast(t, [](auto) {}); }

Status LaunchBinary(BinaryOp op, ElemType t, const IndexMap& map, int64_t n, const void* a, const void* b, void* y,
                    cudaStream_t s) {
  if (n == 0) return Status::OK();
  // Same shapes (both stride vectors are the output's): no index arithmetic.
  std::vector<int64_t> dims(map.dims, map.dims + map.rank), st = Strides(dims);
  // (A dimension of size 1 moves no operand: its strides do not matter.)
  bool a_same = true, b_same = true, b_row = map.rank > 0, b_scalar = true;
  for (int d = 0; d < map.rank; ++d) {
    if (map.dims[d] == 1) continue;
    a_same = a_same && map.strides[0][d] == st[d];
    b_same = b_same && map.strides[1][d] == st[d];
    b_row = b_row && map.strides[1][d] == (d == map.rank - 1 ? 1 : 0);
    b_scalar = b_scalar && map.strides[1][d] == 0;
  }
  const BLayout layout = !a_same    ? BLayout::kGeneral
                         : b_same   ? BLayout::kSame
                         : b_scalar ? BLayout::kScalar
                         : b_row    ? BLayout::kRow
                                    : BLayout::kGeneral;
  const int64_t row = map.rank > 0 ? map.dims[map.rank - 1] : 1;
  if (!DispatchArith(t, [&](auto v) {
        using T = decltype(v);
        BinaryKernel<T><<<Blocks(n), kThreads, 0, s>>>(op, map, n, layout, row, static_cast<const T*>(a),
                                                       static_cast<const T*>(b), static_cast<T*>(y));
      }))
    return Unsupported("this operator", t);
  return CudaStatus(cudaGetLastError(), "binary elementwise kernel");
}

Status LaunchCompare(CompareOp op, ElemType t, const IndexMap& map, int64_t n, const void* a, const void* b, bool* y,
                     cudaStream_t s) {
  if (n == 0) return Status::OK();
  if (!DispatchArith(t, [&](auto v) {
        using T = decltype(v);
        CompareKernel<T><<<Blocks(n), kThreads, 0, s>>>(op, map, n, static_cast<const T*>(a), static_cast<const T*>(b),
                                                        y);
      }))
    return Unsupported("this comparison", t);
  return CudaStatus(cudaGetLastError(), "comparison kernel");
}

Status LaunchUnary(UnaryOp op, ElemType t, int64_t n, const void* x, void* y, cudaStream_t s) {
  if (n == 0) return Status::OK();
  if (!DispatchFloat(t, [&](auto v) {
        using T = decltype(v);
        UnaryKernel<T><<<Blocks(n), kThreads, 0, s>>>(op, n, static_cast<const T*>(x), static_cast<T*>(y));
      }))
    return Unsupported("this operator", t);
  return CudaStatus(cudaGetLastError(), "unary elementwise kernel");
}

Status LaunchStridedCopy(size_t elem_size, const IndexMap& map, int64_t n, const void* x, void* y, cudaStream_t s) {
  if (n == 0) return Status::OK();
  if (!DispatchSize(elem_size, [&](auto w) {
        using W = decltype(w);
        StridedCopyKernel<W><<<Blocks(n), kThreads, 0, s>>>(map, n, static_cast<const W*>(x), static_cast<W*>(y));
      }))
    return MakeError(ErrorCode::kNotImplemented, "no CUDA copy for elements of ", elem_size, " bytes");
  return CudaStatus(cudaGetLastError(), "strided copy kernel");
}

Status LaunchWhere(size_t elem_size, const IndexMap& map, int64_t n, const bool* cond, const void* a, const void* b,
                   void* y, cudaStream_t s) {
  if (n == 0) return Status::OK();
  if (!DispatchSize(elem_size, [&](auto w) {
        using W = decltype(w);
        WhereKernel<W><<<Blocks(n), kThreads, 0, s>>>(map, n, cond, static_cast<const W*>(a),
                                                      static_cast<const W*>(b), static_cast<W*>(y));
      }))
    return MakeError(ErrorCode::kNotImplemented, "no CUDA Where for elements of ", elem_size, " bytes");
  return CudaStatus(cudaGetLastError(), "Where kernel");
}

Status LaunchGather(size_t elem_size, int64_t outer, int64_t axis_dim, int64_t inner, const void* x,
                    ElemType index_type, const void* indices, int64_t n_indices, void* y, cudaStream_t s) {
  const int64_t n = outer * n_indices * inner;
  if (n == 0) return Status::OK();
  bool ok = DispatchSize(elem_size, [&](auto w) {
    using W = decltype(w);
    if (index_type == ElemType::kInt64)
      GatherKernel<W, int64_t><<<Blocks(n), kThreads, 0, s>>>(n, axis_dim, inner, n_indices, static_cast<const W*>(x),
                                                              static_cast<const int64_t*>(indices), static_cast<W*>(y));
    else
      GatherKernel<W, int32_t><<<Blocks(n), kThreads, 0, s>>>(n, axis_dim, inner, n_indices, static_cast<const W*>(x),
                                                              static_cast<const int32_t*>(indices), static_cast<W*>(y));
  });
  if (!ok) return MakeError(ErrorCode::kNotImplemented, "no CUDA Gather for elements of ", elem_size, " bytes");
  return CudaStatus(cudaGetLastError(), "Gather kernel");
}

Status LaunchCast(ElemType from, ElemType to, int64_t n, const void* x, void* y, cudaStream_t s) {
  if (n == 0) return Status::OK();
  bool ok = false;
  if (to == ElemType::kFloat16) {
    ok = DispatchCast(from, [&](auto a) {
      using A = decltype(a);
      CastToHalfKernel<A><<<Blocks(n), kThreads, 0, s>>>(n, static_cast<const A*>(x), static_cast<__half*>(y));
    });
  } else if (from == ElemType::kFloat16) {
    ok = DispatchCast(to, [&](auto b) {
      using B = decltype(b);
      CastKernel<__half, B><<<Blocks(n), kThreads, 0, s>>>(n, static_cast<const __half*>(x), static_cast<B*>(y));
    });
  } else {
    ok = DispatchCast(from, [&](auto a) {
      using A = decltype(a);
      DispatchCast(to, [&](auto b) {
        using B = decltype(b);
        CastKernel<A, B><<<Blocks(n), kThreads, 0, s>>>(n, static_cast<const A*>(x), static_cast<B*>(y));
      });
    }) && CastSupported(to);
  }
  if (!ok)
    return MakeError(ErrorCode::kNotImplemented, "Cast from ", ElemTypeName(from), " to ", ElemTypeName(to),
                     " has no CUDA kernel");
  return CudaStatus(cudaGetLastError(), "Cast kernel");
}

Status LaunchSoftmax(ElemType t, int64_t outer, int64_t d, int64_t inner, bool log, const void* x, void* y,
                     cudaStream_t s) {
  if (outer * d * inner == 0) return Status::OK();
  if (!DispatchFloat(t, [&](auto v) {
        using T = decltype(v);
        if (inner == 1)
          SoftmaxRowsKernel<T><<<static_cast<unsigned>(outer), kThreads, 0, s>>>(d, log, static_cast<const T*>(x),
                                                                                static_cast<T*>(y));
        else
          SoftmaxColumnsKernel<T><<<Blocks(outer * inner), kThreads, 0, s>>>(outer, d, inner, log,
                                                                             static_cast<const T*>(x), static_cast<T*>(y));
      }))
    return Unsupported("Softmax", t);
  return CudaStatus(cudaGetLastError(), "Softmax kernel");
}

Status LaunchLayerNorm(ElemType t, int64_t rows, int64_t d, float epsilon, const void* x, const void* scale,
                       const void* bias, void* y, float* mean, float* inv_std, cudaStream_t s) {
  if (rows * d == 0) return Status::OK();
  if (!DispatchFloat(t, [&](auto v) {
        using T = decltype(v);
        LayerNormKernel<T><<<static_cast<unsigned>(rows), kThreads, 0, s>>>(
            d, epsilon, static_cast<const T*>(x), static_cast<const T*>(scale), static_cast<const T*>(bias),
            static_cast<T*>(y), mean, inv_std);
      }))
    return Unsupported("LayerNormalization", t);
  return CudaStatus(cudaGetLastError(), "LayerNormalization kernel");
}

Status LaunchReduceMean(ElemType t, int64_t outer, int64_t r, int64_t inner, const void* x, void* y, cudaStream_t s) {
  if (outer * inner == 0) return Status::OK();
  if (!DispatchFloat(t, [&](auto v) {
        using T = decltype(v);
        ReduceMeanKernel<T><<<Blocks(outer * inner), kThreads, 0, s>>>(outer, r, inner, static_cast<const T*>(x),
                                                                       static_cast<T*>(y));
      }))
    return Unsupported("ReduceMean", t);
  return CudaStatus(cudaGetLastError(), "ReduceMean kernel");
}

Status LaunchBatchNorm(ElemType t, int64_t n, int64_t c, int64_t spatial, float epsilon, const void* x,
                       const void* scale, const void* bias, const void* mean, const void* var, void* y,
                       cudaStream_t s) {
  const int64_t total = n * c * spatial;
  if (total == 0) return Status::OK();
  if (!DispatchFloat(t, [&](auto v) {
        using T = decltype(v);
        BatchNormKernel<T><<<Blocks(total), kThreads, 0, s>>>(
            total, c, spatial, epsilon, static_cast<const T*>(x), static_cast<const T*>(scale),
            static_cast<const T*>(bias), static_cast<const T*>(mean), static_cast<const T*>(var), static_cast<T*>(y));
      }))
    return Unsupported("BatchNormalization", t);
  return CudaStatus(cudaGetLastError(), "BatchNormalization kernel");
}

}  // namespace cuda
}  // namespace onyx

#include <cfloat>

#include "providers/cuda/common/device_math.cuh"
#include "providers/cuda/contrib/transformer_launch.h"
#include "providers/cuda/cuda_common.h"

namespace onyx {
namespace cuda {
namespace {

template <typename T>
__global__ void BiasGeluKernel(UnaryOp op, int64_t n, int64_t d, const T* x, const T* bias, T* y) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    float v = static_cast<float>(Load(x[i]));
    if (bias) v += static_cast<float>(Load(bias[i % d]));
    y[i] = Store<T>(static_cast<typename Acc<T>::type>(Unary(op, v)));
  }
}

// One block per row. The row's sum v is formed from the inputs in each pass
// (no rounding of v to T before normalizing, as the CPU kernel).
template <typename T>
__global__ void SkipLayerNormKernel(bool simplified, int64_t d, int64_t skip_rows, float eps, const T* x,
                                    const T* skip, const T* gamma, const T* beta, const T* bias, T* y, T* sum,
                                    float* mean, float* inv_std) {
  const int64_t r = blockIdx.x;
  const T* xr = x + r * d;
  const T* sr = skip + (r % skip_rows) * d;
  auto value = [&](int64_t j) {
    float v = static_cast<float>(Load(xr[j])) + static_cast<float>(Load(sr[j]));
    return bias ? v + static_cast<float>(Load(bias[j])) : v;
  };
  float s = 0.f;
  if (!simplified)
    for (int64_t j = threadIdx.x; j < d; j += blockDim.x) s += value(j);
  const float mu = simplified ? 0.f : BlockReduce<false>(s) / d;
  float q = 0.f;
  for (int64_t j = threadIdx.x; j < d; j += blockDim.x) {
    const float t = value(j) - mu;
    q += t * t;
  }
  const float rs = rsqrtf(BlockReduce<false>(q) / d + eps);
  for (int64_t j = threadIdx.x; j < d; j += blockDim.x) {
    const float v = value(j);
    if (sum) sum[r * d + j] = Store<T>(static_cast<typename Acc<T>::type>(v));
    if (y) {
      float o = (v - mu) * rs * static_cast<float>(Load(gamma[j]));
      if (beta) o += static_cast<float>(Load(beta[j]));
      y[r * d + j] = Store<T>(static_cast<typename Acc<T>::type>(o));
    }
  }
  if (threadIdx.x == 0) {
    if (mean) mean[r] = mu;
    if (inv_std) inv_std[r] = rs;
  }
}

template <typename T>
__global__ void SplitHeadsKernel(int64_t n, int64_t S, int64_t N, int64_t H, int64_t Hv, const T* qkv, const T* bias,
                                 T* q, T* k, T* v) {
  const int64_t dq = N * H, width = 2 * dq + N * Hv;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t row = i / width, c = i - row * width, b = row / S, s = row - b * S;
    float val = static_cast<float>(Load(qkv[i]));
    if (bias) val += static_cast<float>(Load(bias[c]));
    const T out = Store<T>(static_cast<typename Acc<T>::type>(val));
    if (c < 2 * dq) {
      const int64_t cc = c < dq ? c : c - dq, head = cc / H, h = cc - head * H;
      (c < dq ? q : k)[((b * N + head) * S + s) * H + h] = out;
    } else {
      const int64_t cc = c - 2 * dq, head = cc / Hv, h = cc - head * Hv;
      v[((b * N + head) * S + s) * Hv + h] = out;
    }
  }
}

// One block per score row (b, n, s).
template <typename T>
__global__ void AttentionSoftmaxKernel(int64_t B, int64_t N, int64_t S, int64_t T_, AttentionMask kind,
                                       const int32_t* mask, bool causal, float filter, T* scores) {
  const int64_t row = blockIdx.x, s = row % S, b = row / (N * S);
  T* x = scores + row * T_;
  const int64_t last = causal ? s + T_ - S : T_ - 1;  // keys after it are causal-masked
  int64_t lo = 0, hi = T_;                            // kEnds / kEndsStarts keep [lo, hi)
  if (kind == AttentionMask::kEnds || kind == AttentionMask::kEndsStarts) hi = mask[b];
  if (kind == AttentionMask::kEndsStarts) lo = mask[B + b];
  auto score = [&](int64_t t) {
    if (t > last) return -FLT_MAX;
    float v = static_cast<float>(Load(x[t]));
    bool keep = true;
    if (kind == AttentionMask::kRaw2) keep = mask[b * T_ + t] > 0;
    else if (kind == AttentionMask::kRaw3) keep = mask[(b * S + s) * T_ + t] > 0;
    else if (kind != AttentionMask::kNone) keep = t >= lo && t < hi;
    return keep ? v : v + filter;
  };
  float m = -INFINITY;
  for (int64_t t = threadIdx.x; t < T_; t += blockDim.x) m = fmaxf(m, score(t));
  m = BlockReduce<true>(m);
  float sum = 0.f;
  for (int64_t t = threadIdx.x; t < T_; t += blockDim.x) sum += __expf(score(t) - m);
  const float inv = 1.f / BlockReduce<false>(sum);
  for (int64_t t = threadIdx.x; t < T_; t += blockDim.x)
    x[t] = Store<T>(static_cast<typename Acc<T>::type>(__expf(score(t) - m) * inv));
}

}  // namespace

Status LaunchBiasGelu(ElemType t, bool tanh_approx, int64_t n, int64_t d, const void* x, const void* bias, void* y,
                      cudaStream_t s) {
  if (n == 0) return Status::OK();
  const UnaryOp op = tanh_approx ? UnaryOp::kGeluTanh : UnaryOp::kGelu;
  if (!DispatchFloat(t, [&](auto v) {
        using T = decltype(v);
        BiasGeluKernel<T><<<Blocks(n), kThreads, 0, s>>>(op, n, d, static_cast<const T*>(x),
                                                         static_cast<const T*>(bias), static_cast<T*>(y));
      }))
    return Unsupported(tanh_approx ? "FastGelu" : "BiasGelu", t);
  return CudaStatus(cudaGetLastError(), tanh_approx ? "FastGelu kernel" : "BiasGelu kernel");
}

Status LaunchSkipLayerNorm(ElemType t, bool simplified, int64_t rows, int64_t d, int64_t skip_rows, float epsilon,
                           const void* x, const void* skip, const void* gamma, const void* beta, const void* bias,
                           void* y, void* sum, float* mean, float* inv_std, cudaStream_t s) {
  if (rows == 0 || d == 0) return Status::OK();
  if (!DispatchFloat(t, [&](auto v) {
        using T = decltype(v);
        SkipLayerNormKernel<T><<<static_cast<unsigned>(rows), kThreads, 0, s>>>(
            simplified, d, skip_rows, epsilon, static_cast<const T*>(x), static_cast<const T*>(skip),
            static_cast<const T*>(gamma), static_cast<const T*>(beta), static_cast<const T*>(bias),
            static_cast<T*>(y), static_cast<T*>(sum), mean, inv_std);
      }))
    return Unsupported("SkipLayerNormalization", t);
  return CudaStatus(cudaGetLastError(), "SkipLayerNormalization kernel");
}

Status LaunchSplitHeads(ElemType t, int64_t B, int64_t S, int64_t N, int64_t H, int64_t Hv, const void* qkv,
                        const void* bias, void* q, void* k, void* v, cudaStream_t s) {
  const int64_t n = B * S * (2 * N * H + N * Hv);
  if (n == 0) return Status::OK();
  if (!DispatchFloat(t, [&](auto w) {
        using T = decltype(w);
        SplitHeadsKernel<T><<<Blocks(n), kThreads, 0, s>>>(n, S, N, H, Hv, static_cast<const T*>(qkv),
                                                           static_cast<const T*>(bias), static_cast<T*>(q),
                                                           static_cast<T*>(k), static_cast<T*>(v));
      }))
    return Unsupported("Attention", t);
  return CudaStatus(cudaGetLastError(), "Attention head split kernel");
}

Status LaunchAttentionSoftmax(ElemType t, int64_t B, int64_t N, int64_t S, int64_t T, AttentionMask kind,
                              const int32_t* mask, bool causal, float filter, void* scores, cudaStream_t s) {
  if (B * N * S == 0 || T == 0) return Status::OK();
  if (B * N * S > INT32_MAX) return MakeError(ErrorCode::kNotImplemented, "Attention: too many score rows on CUDA");
  if (!DispatchFloat(t, [&](auto w) {
        using E = decltype(w);
        AttentionSoftmaxKernel<E><<<static_cast<unsigned>(B * N * S), kThreads, 0, s>>>(
            B, N, S, T, kind, mask, causal, filter, static_cast<E*>(scores));
      }))
    return Unsupported("Attention", t);
  return CudaStatus(cudaGetLastError(), "Attention softmax kernel");
}

}  // namespace cuda
}  // namespace onyx

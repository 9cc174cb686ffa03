// The convolution's epilogue in one pass over Y: y = act(y + bias[c] + z),
// where cuDNN's forward call wrote y = conv(x, w). Replaces a bias add
// (cudnnAddTensor), a copy of Z into Y before the convolution and a separate
// Relu, three passes over the output.
#include "providers/cuda/common/device_math.cuh"
#include "providers/cuda/cuda_common.h"

namespace onyx {
namespace cuda {
namespace {

template <typename T, typename A>
__device__ __forceinline__ A Epilogue(A v, const T* bias, const T* z, int64_t i, int64_t ch, bool relu) {
  if (bias) v += Load(bias[ch]);
  if (z) v += Load(z[i]);
  return relu && v < A(0) ? A(0) : v;
}

template <typename T>
__global__ void ConvEpilogueKernel(int64_t n, int64_t channels, int64_t spatial, const T* bias, const T* z, bool relu,
                                   T* y) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    y[i] = Store<T>(Epilogue(Load(y[i]), bias, z, i, (i / spatial) % channels, relu));
}

// float, four values per thread: `spatial` is a multiple of 4, so the four
// share one channel, and y and z are 16-byte aligned.
__global__ void ConvEpilogueKernel4(int64_t n4, int64_t channels, int64_t spatial, const float* bias,
                                    const float* z, bool relu, float* y) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n4; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t ch = (i * 4 / spatial) % channels;
    float4 v = reinterpret_cast<float4*>(y)[i];
    const float b = bias ? bias[ch] : 0.f;
    float4 zz = z ? reinterpret_cast<const float4*>(z)[i] : make_float4(0.f, 0.f, 0.f, 0.f);
    v.x += b + zz.x;
    v.y += b + zz.y;
    v.z += b + zz.z;
    v.w += b + zz.w;
    if (relu) {
      v.x = fmaxf(v.x, 0.f);
      v.y = fmaxf(v.y, 0.f);
      v.z = fmaxf(v.z, 0.f);
      v.w = fmaxf(v.w, 0.f);
    }
    reinterpret_cast<float4*>(y)[i] = v;
  }
}

bool Aligned16(const void* p) { return (reinterpret_cast<uintptr_t>(p) & 15) == 0; }

}  // namespace

Status LaunchConvEpilogue(ElemType t, int64_t n, int64_t channels, int64_t spatial, const void* bias, const void* z,
                          bool relu, void* y, cudaStream_t s) {
  if (n == 0 || (!bias && !z && !relu)) return Status::OK();
  if (t == ElemType::kFloat && spatial % 4 == 0 && Aligned16(y) && (!z || Aligned16(z))) {
    ConvEpilogueKernel4<<<Blocks(n / 4), kThreads, 0, s>>>(n / 4, channels, spatial, static_cast<const float*>(bias),
                                                          static_cast<const float*>(z), relu, static_cast<float*>(y));
  } else if (t == ElemType::kDouble) {
    ConvEpilogueKernel<double><<<Blocks(n), kThreads, 0, s>>>(n, channels, spatial, static_cast<const double*>(bias),
                                                              static_cast<const double*>(z), relu,
                                                              static_cast<double*>(y));
  } else if (!DispatchFloat(t, [&](auto v) {
               using T = decltype(v);
               ConvEpilogueKernel<T><<<Blocks(n), kThreads, 0, s>>>(n, channels, spatial,
                                                                    static_cast<const T*>(bias),
                                                                    static_cast<const T*>(z), relu, static_cast<T*>(y));
             })) {
    return Unsupported("Conv", t);
  }
  return CudaStatus(cudaGetLastError(), "Conv epilogue kernel");
}

}  // namespace cuda
}  // namespace onyx

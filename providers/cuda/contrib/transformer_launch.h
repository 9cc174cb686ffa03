// Launchers of the fused transformer kernels (transformer_impl.cu): the
// contrib operators onnxruntime's transformer optimizer writes, and which our
// own optimizer writes for BERT/GPT-2 (transformer.cc checks inputs and
// shapes before calling them). Pointers are device memory; 16-bit floats
// compute in float.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "core/framework/data_type.h"
#include "core/framework/status.h"

namespace onyx {
namespace cuda {

// y = gelu(x + bias[i % d]) over n elements (bias may be null): the erf form
// (BiasGelu) or the tanh approximation (FastGelu).
Status LaunchBiasGelu(ElemType t, bool tanh_approx, int64_t n, int64_t d, const void* x, const void* bias, void* y,
                      cudaStream_t s);

// SkipLayerNormalization over rows of d: v = x[r] + skip[r % skip_rows]
// (+ bias); sum (may be null) = v; y = (v - mean) * inv_std * gamma (+ beta),
// with mean 0 when `simplified` (RMS norm). mean/inv_std (float) may be null.
Status LaunchSkipLayerNorm(ElemType t, bool simplified, int64_t rows, int64_t d, int64_t skip_rows, float epsilon,
                           const void* x, const void* skip, const void* gamma, const void* beta, const void* bias,
                           void* y, void* sum, float* mean, float* inv_std, cudaStream_t s);

// qkv [B, S, N*H + N*H + N*Hv] (+ bias of that width, may be null) split into
// q and k [B, N, S, H] and v [B, N, S, Hv].
Status LaunchSplitHeads(ElemType t, int64_t B, int64_t S, int64_t N, int64_t H, int64_t Hv, const void* qkv,
                        const void* bias, void* q, void* k, void* v, cudaStream_t s);

// How Attention's int32 mask_index reads (T keys): kEnds [B] (keys at or after
// mask[b] masked), kEndsStarts [2B] (also keys before mask[B + b]), kRaw2
// [B, T] and kRaw3 [B, S, T] (0 masks a key).
enum class AttentionMask { kNone, kEnds, kEndsStarts, kRaw2, kRaw3 };

// scores [B, N, S, T], already scaled, in place: a masked key gets `filter`
// added, a causal one (t > s + T - S when `causal`) the lowest float; then
// softmax over each row of T.
Status LaunchAttentionSoftmax(ElemType t, int64_t B, int64_t N, int64_t S, int64_t T, AttentionMask kind,
                              const int32_t* mask, bool causal, float filter, void* scores, cudaStream_t s);

}  // namespace cuda
}  // namespace onyx

// onnxruntime's contrib op com.microsoft SkipLayerNormalization (version 1),
// which its transformer optimizer fuses from Add (+ bias Add) + LayerNormalization
// in BERT-style models:
//   s = input + skip (+ bias);  output = (s - mean(s)) / sqrt(var(s) + epsilon) * gamma (+ beta)
// over the last axis (hidden size H). Inputs: input [B, S, H] or [T, H]; skip
// shaped like input, or [1, S, H] / [S, H] for a 3-D input (repeated over the
// batch); gamma [H]; optional beta [H]; optional bias [H]. Outputs: output, and
// optionally mean and inv_std_var (float, input's dims with the last as 1) and
// input_skip_bias_sum (s, like input). float, float16 and bfloat16; the 16-bit
// floats accumulate in float.
// The same kernel runs com.microsoft SkipSimplifiedLayerNormalization (RMS
// norm): inputs input, skip, gamma, optional bias (input 3; no beta);
//   output = s / sqrt(mean(s^2) + epsilon) * gamma, and mean (output 1) is 0.
#include <algorithm>
#include <cmath>
#include <type_traits>
#include <vector>

#include "providers/cpu/common/broadcast.h"
#include "providers/cpu/common/dispatch.h"
#include "providers/cpu/common/fast_math.h"
#include "providers/cpu/nn/skip_layer_norm_inputs.h"
#include "providers/kernel.h"

namespace onyx {
namespace {

using SkipLnTypeSet = TypeSet<float, Float16, BFloat16>;

class SkipLayerNormKernel final : public OpKernel {
 public:
  explicit SkipLayerNormKernel(bool simplified = false) : simplified_(simplified) {}

  Status Init(const KernelInfo& info) {
    epsilon_ = info.AttrFloat("epsilon", 1e-12f);
    ONYX_CHECK(epsilon_ >= 0.f, ErrorCode::kInvalidGraph, op(), ": attribute epsilon must be >= 0, got ", epsilon_);
    return Status::OK();
  }

  Status Compute(KernelContext& ctx) const override {
    SkipLayerNormInputs in;
    ONYX_RETURN_IF_ERROR(ReadSkipLayerNormInputs(ctx, simplified_, op(), &in));
    const Tensor *x = in.x, *skip = in.skip, *gamma = in.gamma, *beta = in.beta, *bias = in.bias;
    const Dims& xd = x->dims();
    const Dims& stat_dims = in.stat_dims;
    const int64_t hidden = in.hidden, rows = in.rows, skip_rows = in.skip_rows;
    return DispatchOver(SkipLnTypeSet{}, x->type(), op(), [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      using C = typename CalcType<T>::type;
      Tensor* y = ctx.Output(0, xd, x->type());
      Tensor* mean_out = ctx.OutputCount() > 1 ? ctx.Output(1, stat_dims, ElemType::kFloat) : nullptr;
      Tensor* inv_out = ctx.OutputCount() > 2 ? ctx.Output(2, stat_dims, ElemType::kFloat) : nullptr;
      Tensor* sum_out = ctx.OutputCount() > 3 ? ctx.Output(3, xd, x->type()) : nullptr;
      if (rows == 0 || hidden == 0) return Status::OK();
      const T* xv = x->data<T>();
      const T* sv = skip->data<T>();
      const T* gv = gamma->data<T>();
      const T* bev = beta != nullptr ? beta->data<T>() : nullptr;
      const T* biv = bias != nullptr ? bias->data<T>() : nullptr;
      T* yv = y != nullptr ? y->data<T>() : nullptr;
      T* sumv = sum_out != nullptr ? sum_out->data<T>() : nullptr;
      float* mv = mean_out != nullptr ? mean_out->data<float>() : nullptr;
      float* iv = inv_out != nullptr ? inv_out->data<float>() : nullptr;
      const int64_t grain = std::max<int64_t>(1, 16384 / hidden);
      ThreadPool::For(ctx.threads(), rows, grain, [&](int64_t begin, int64_t end) {
        std::vector<C> s(static_cast<size_t>(hidden));
        for (int64_t r = begin; r < end; ++r) {
          const T* xr = xv + r * hidden;
          const T* sr = sv + (r % skip_rows) * hidden;
          if (biv != nullptr) {
            // (input + bias) + skip: the bias Add of a Linear layer, then the
            // residual Add, as skip_layer_norm_fusion finds them.
            for (int64_t i = 0; i < hidden; ++i)
              s[i] = (static_cast<C>(xr[i]) + static_cast<C>(biv[i])) + static_cast<C>(sr[i]);
          } else {
            for (int64_t i = 0; i < hidden; ++i) s[i] = static_cast<C>(xr[i]) + static_cast<C>(sr[i]);
          }
          if (sumv != nullptr)
            for (int64_t i = 0; i < hidden; ++i) sumv[r * hidden + i] = static_cast<T>(s[i]);
          // Two passes (mean, then squared deviations): no cancellation on rows
          // with a large mean; both SIMD sums (fast_math), C being float.
          static_assert(std::is_same<C, float>::value, "the 16-bit floats compute in float");
          // Rounded as LayerNormalization's kernel rounds (fastmath::NormStats).
          const fastmath::RowNorm st = fastmath::NormStats(s.data(), hidden, epsilon_, simplified_);
          const C mean = st.mean, inv = C(1) / st.sd;
          if (yv != nullptr) {
            if constexpr (std::is_same<T, float>::value) {
              fastmath::NormalizeRow(s.data(), st, simplified_, gv, bev, yv + r * hidden, hidden);
            } else {
              T* yr = yv + r * hidden;
              for (int64_t i = 0; i < hidden; ++i) {
                C v = (s[i] - mean) * inv * static_cast<C>(gv[i]);
                if (bev != nullptr) v += static_cast<C>(bev[i]);
                yr[i] = static_cast<T>(v);
              }
            }
          }
          if (mv != nullptr) mv[r] = static_cast<float>(mean);
          if (iv != nullptr) iv[r] = static_cast<float>(inv);
        }
      });
      return Status::OK();
    });
  }

 private:
  const char* op() const { return simplified_ ? "SkipSimplifiedLayerNormalization" : "SkipLayerNormalization"; }

  bool simplified_ = false;
  float epsilon_ = 1e-12f;
};

}  // namespace

ONYX_REGISTER_KERNEL(SkipLayerNormKernel, "com.microsoft", "SkipLayerNormalization", 1, kMaxVersion,
                     SkipLnTypeSet::ElemTypes());
ONYX_REGISTER_KERNEL(SkipLayerNormKernel, "com.microsoft", "SkipSimplifiedLayerNormalization", 1, kMaxVersion,
                     SkipLnTypeSet::ElemTypes(), true);

}  // namespace onyx

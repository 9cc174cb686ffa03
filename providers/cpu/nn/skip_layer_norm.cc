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
    const Tensor* x = nullptr;
    const Tensor* skip = nullptr;
    const Tensor* gamma = nullptr;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &x));
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(1, &skip));
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(2, &gamma));
    const int bias_at = simplified_ ? 3 : 4;
    const Tensor* beta = !simplified_ && ctx.InputCount() > 3 ? ctx.Input(3) : nullptr;
    const Tensor* bias = ctx.InputCount() > bias_at ? ctx.Input(bias_at) : nullptr;
    const Dims& xd = x->dims();
    ONYX_CHECK_ARG(xd.size() == 2 || xd.size() == 3, op(), ": input 0 (input) must be 2-D or 3-D, got ",
                   ShapeToString(xd));
    const int64_t hidden = xd.back();
    const Dims& sd = skip->dims();
    // skip: input's shape, or (3-D input) its last two dims with an optional leading 1.
    const bool same = sd == xd;
    const bool per_seq = xd.size() == 3 && ((sd.size() == 3 && sd[0] == 1 && sd[1] == xd[1] && sd[2] == xd[2]) ||
                                            (sd.size() == 2 && sd[0] == xd[1] && sd[1] == xd[2]));
    ONYX_CHECK_ARG(same || per_seq, op(), ": input 1 (skip) of shape ", ShapeToString(sd),
                   " must match input 0 (input) ", ShapeToString(xd),
                   xd.size() == 3 ? " or its last two dimensions (with an optional leading 1)" : "");
    auto check_vec = [&](const Tensor* t, int index, const char* name) -> Status {
      if (t == nullptr) return Status::OK();
      ONYX_CHECK_ARG(t->type() == x->type(), op(), ": input ", index, " (", name, ") has type ",
                     ElemTypeName(t->type()), " but input 0 (input) has type ", ElemTypeName(x->type()));
      ONYX_CHECK_ARG(t->rank() == 1 && t->dims()[0] == hidden, op(), ": input ", index, " (", name,
                     ") of shape ", ShapeToString(t->dims()), " must be 1-D of length ", hidden,
                     ", the hidden size (last dimension of input 0 (input) ", ShapeToString(xd), ")");
      return Status::OK();
    };
    ONYX_CHECK_ARG(skip->type() == x->type(), op(), ": input 1 (skip) has type ",
                   ElemTypeName(skip->type()), " but input 0 (input) has type ", ElemTypeName(x->type()));
    ONYX_RETURN_IF_ERROR(check_vec(gamma, 2, "gamma"));
    ONYX_RETURN_IF_ERROR(check_vec(beta, 3, "beta"));
    ONYX_RETURN_IF_ERROR(check_vec(bias, bias_at, "bias"));

    Dims stat_dims = xd;
    stat_dims.back() = 1;
    const int64_t rows = ShapeSize(Dims(xd.begin(), xd.end() - 1));
    const int64_t skip_rows = same ? rows : xd[1];  // per_seq: skip row r % S
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
            for (int64_t i = 0; i < hidden; ++i)
              s[i] = static_cast<C>(xr[i]) + static_cast<C>(sr[i]) + static_cast<C>(biv[i]);
          } else {
            for (int64_t i = 0; i < hidden; ++i) s[i] = static_cast<C>(xr[i]) + static_cast<C>(sr[i]);
          }
          if (sumv != nullptr)
            for (int64_t i = 0; i < hidden; ++i) sumv[r * hidden + i] = static_cast<T>(s[i]);
          // Two passes (mean, then squared deviations): no cancellation on rows
          // with a large mean; both SIMD sums (fast_math), C being float.
          static_assert(std::is_same<C, float>::value, "the 16-bit floats compute in float");
          const C mean = simplified_ ? C(0) : fastmath::SumArray(s.data(), hidden) / static_cast<C>(hidden);
          const C sq = fastmath::SumSquaredDevArray(s.data(), hidden, mean);
          const C inv = C(1) / std::sqrt(sq / static_cast<C>(hidden) + static_cast<C>(epsilon_));
          if (yv != nullptr) {
            if constexpr (std::is_same<T, float>::value) {
              fastmath::NormalizeArray(s.data(), mean, inv, gv, bev, yv + r * hidden, hidden);
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

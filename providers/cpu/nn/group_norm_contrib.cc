// onnxruntime's com.microsoft GroupNorm and SkipGroupNorm (version 1), which
// its transformer optimizer writes into Stable Diffusion's UNet and VAE:
//   GroupNorm      inputs X [N, H, W, C] (channels_last=1, the default) or
//                  [N, C, H, W], gamma [C], beta [C]; attributes groups (G,
//                  dividing C), epsilon, activation (0 none, 1 SiLU).
//                  Per (n, group of C/G channels): mean and variance over the
//                  group's channels and all H*W positions, then
//                  y = (x - mean) / sqrt(var + epsilon) * gamma[c] + beta[c]
//                  (then y * sigmoid(y) with SiLU).
//   SkipGroupNorm  the same on s = X + skip (+ bias [C]), NHWC only; skip is
//                  [N, H, W, C], [N, 1, 1, C] or [N, C]; output 1 (S) is s.
// X float or float16 (computed in float); gamma and beta float or float16.
#include <algorithm>
#include <cmath>
#include <vector>

#include "providers/cpu/common/broadcast.h"
#include "providers/cpu/common/dispatch.h"
#include "providers/kernel.h"

namespace onyx {
namespace {

using GroupNormTypeSet = TypeSet<float, Float16>;

struct GroupNormShape {
  int64_t N = 0, C = 0, HW = 0, G = 1;
  bool channels_last = true;
  // Offset of (n, c, position) in X.
  int64_t At(int64_t n, int64_t c, int64_t p) const {
    return channels_last ? (n * HW + p) * C + c : (n * C + c) * HW + p;
  }
};

// Y (and S) for every (batch, group); skip is null, per element (like X) or
// per channel ([N, C]); bias null or [C].
template <typename T>
void RunGroupNorm(const GroupNormShape& g, const T* x, const T* skip, bool skip_per_channel, const T* bias,
                  const float* gamma, const float* beta, float epsilon, bool silu, T* y, T* sum, ThreadPool* pool) {
  using C = typename CalcType<T>::type;
  const int64_t cg = g.C / g.G, count = cg * g.HW;
  ThreadPool::For(pool, g.N * g.G, std::max<int64_t>(1, 16384 / std::max<int64_t>(1, count)),
                  [&](int64_t begin, int64_t end) {
    std::vector<C> v(static_cast<size_t>(count));
    for (int64_t i = begin; i < end; ++i) {
      const int64_t n = i / g.G, c0 = (i % g.G) * cg;
      C total = 0;
      for (int64_t p = 0; p < g.HW; ++p)
        for (int64_t c = 0; c < cg; ++c) {
          const int64_t at = g.At(n, c0 + c, p);
          C s = static_cast<C>(x[at]);
          if (skip != nullptr) s += static_cast<C>(skip[skip_per_channel ? n * g.C + c0 + c : at]);
          if (bias != nullptr) s += static_cast<C>(bias[c0 + c]);
          if (sum != nullptr) sum[at] = static_cast<T>(s);
          v[p * cg + c] = s;
          total += s;
        }
      const C mean = total / static_cast<C>(count);
      C sq = 0;
      for (int64_t j = 0; j < count; ++j) sq += (v[j] - mean) * (v[j] - mean);
      const C inv = C(1) / std::sqrt(sq / static_cast<C>(count) + static_cast<C>(epsilon));
      for (int64_t p = 0; p < g.HW; ++p)
        for (int64_t c = 0; c < cg; ++c) {
          C r = (v[p * cg + c] - mean) * inv * gamma[c0 + c] + beta[c0 + c];
          if (silu) r = r / (C(1) + std::exp(-r));
          y[g.At(n, c0 + c, p)] = static_cast<T>(r);
        }
    }
  });
}

class GroupNormKernel final : public OpKernel {
 public:
  explicit GroupNormKernel(bool skip) : skip_(skip) {}

  Status Init(const KernelInfo& info) {
    const Attribute* groups = info.Attr("groups");
    ONYX_CHECK(groups != nullptr && groups->i > 0, ErrorCode::kInvalidGraph, op(),
               ": attribute groups is required and must be > 0");
    groups_ = groups->i;
    epsilon_ = info.AttrFloat("epsilon", 1e-5f);
    ONYX_CHECK(epsilon_ >= 0.f, ErrorCode::kInvalidGraph, op(), ": attribute epsilon must be >= 0, got ", epsilon_);
    const int64_t activation = info.AttrInt("activation", 0);
    ONYX_CHECK(activation == 0 || activation == 1, ErrorCode::kInvalidGraph, op(),
               ": attribute activation must be 0 (none) or 1 (SiLU), got ", activation);
    silu_ = activation == 1;
    channels_last_ = info.AttrInt("channels_last", 1) != 0;
    ONYX_CHECK(channels_last_ || !skip_, ErrorCode::kNotImplemented, op(), ": channels_last=0 is not supported");
    return Status::OK();
  }

  Status Compute(KernelContext& ctx) const override {
    const Tensor* x = nullptr;
    const Tensor* gamma = nullptr;
    const Tensor* beta = nullptr;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &x));
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(1, &gamma));
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(2, &beta));
    const Dims& xd = x->dims();
    ONYX_CHECK_ARG(xd.size() == 4, op(), ": input 0 (X) of shape ", ShapeToString(xd), " must be 4-D ",
                   channels_last_ ? "[N, H, W, C]" : "[N, C, H, W]");
    GroupNormShape g;
    g.channels_last = channels_last_;
    g.N = xd[0];
    g.C = channels_last_ ? xd[3] : xd[1];
    g.HW = channels_last_ ? xd[1] * xd[2] : xd[2] * xd[3];
    g.G = groups_;
    ONYX_CHECK_ARG(g.C % g.G == 0, op(), ": attribute groups ", g.G, " does not divide the ", g.C,
                   " channels of input 0 (X) ", ShapeToString(xd));
    std::vector<float> gv, bv;
    ONYX_RETURN_IF_ERROR(ReadChannels(gamma, 1, "gamma", g.C, &gv));
    ONYX_RETURN_IF_ERROR(ReadChannels(beta, 2, "beta", g.C, &bv));
    const Tensor* skip = nullptr;
    const Tensor* bias = nullptr;
    bool per_channel = false;
    if (skip_) {
      ONYX_RETURN_IF_ERROR(ctx.RequiredInput(3, &skip));
      bias = ctx.InputCount() > 4 ? ctx.Input(4) : nullptr;
      const Dims& sd = skip->dims();
      per_channel = (sd.size() == 2 && sd[0] == g.N && sd[1] == g.C) ||
                    (sd.size() == 4 && sd[0] == g.N && sd[1] == 1 && sd[2] == 1 && sd[3] == g.C);
      ONYX_CHECK_ARG(skip->type() == x->type() && (sd == xd || per_channel), op(), ": input 3 (skip) ",
                     ElemTypeName(skip->type()), " ", ShapeToString(sd), " must have input 0's type ",
                     ElemTypeName(x->type()), " and shape ", ShapeToString(xd), ", [", g.N, ", 1, 1, ", g.C,
                     "] or [", g.N, ", ", g.C, "]");
      if (bias != nullptr)
        ONYX_CHECK_ARG(bias->type() == x->type() && bias->rank() == 1 && bias->dims()[0] == g.C, op(),
                       ": input 4 (bias) ", ElemTypeName(bias->type()), " ", ShapeToString(bias->dims()),
                       " must be 1-D of ", g.C, " values of input 0's type ", ElemTypeName(x->type()));
    }
    return DispatchOver(GroupNormTypeSet{}, x->type(), op(), [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      Tensor* y = ctx.Output(0, xd, x->type());
      Tensor* s = skip_ && ctx.OutputCount() > 1 ? ctx.Output(1, xd, x->type()) : nullptr;
      if (x->size() == 0) return Status::OK();
      std::vector<T> scratch;
      T* yv = y != nullptr ? y->data<T>() : nullptr;
      if (yv == nullptr) {  // only S is wanted
        scratch.resize(static_cast<size_t>(x->size()));
        yv = scratch.data();
      }
      RunGroupNorm<T>(g, x->data<T>(), skip != nullptr ? skip->data<T>() : nullptr, per_channel,
                      bias != nullptr ? bias->data<T>() : nullptr, gv.data(), bv.data(), epsilon_, silu_, yv,
                      s != nullptr ? s->data<T>() : nullptr, ctx.threads());
      return Status::OK();
    });
  }

 private:
  const char* op() const { return skip_ ? "SkipGroupNorm" : "GroupNorm"; }

  // gamma/beta [C] (float or float16) as floats.
  Status ReadChannels(const Tensor* t, int index, const char* name, int64_t channels, std::vector<float>* out) const {
    ONYX_CHECK_ARG(t->rank() == 1 && t->dims()[0] == channels, op(), ": input ", index, " (", name, ") of shape ",
                   ShapeToString(t->dims()), " must be 1-D of length ", channels, ", the channels of input 0 (X)");
    return DispatchOver(GroupNormTypeSet{}, t->type(), op(), [&](auto tag) -> Status {
      using M = typename decltype(tag)::type;
      const M* v = t->data<M>();
      out->resize(static_cast<size_t>(channels));
      for (int64_t c = 0; c < channels; ++c) (*out)[c] = static_cast<float>(v[c]);
      return Status::OK();
    });
  }

  bool skip_ = false;
  int64_t groups_ = 1;
  float epsilon_ = 1e-5f;
  bool silu_ = false;
  bool channels_last_ = true;
};

}  // namespace

ONYX_REGISTER_KERNEL(GroupNormKernel, "com.microsoft", "GroupNorm", 1, kMaxVersion, GroupNormTypeSet::ElemTypes(),
                     false);
ONYX_REGISTER_KERNEL(GroupNormKernel, "com.microsoft", "SkipGroupNorm", 1, kMaxVersion,
                     GroupNormTypeSet::ElemTypes(), true);

}  // namespace onyx

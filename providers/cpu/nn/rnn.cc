// RNN (opsets 1-6, 7+, 14+ with layout, 22): H_t = f(X_t*W^T + H_{t-1}*R^T + Wb + Rb),
// f from `activations` (Tanh by default), clip bounding the pre-activation.
// Per direction one GEMM covers X*W^T for every step and one GEMM per step
// adds H_{t-1}*R^T. Batch entries past their sequence_lens keep their state
// and write zeros into Y.
#include <algorithm>
#include <string>
#include <vector>

#include "providers/cpu/common/dispatch.h"
#include "providers/cpu/math/blas.h"
#include "providers/cpu/nn/rnn_common.h"
#include "providers/kernel.h"

namespace onyx {
namespace {

class RnnKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    ONYX_RETURN_IF_ERROR(rnn::ParseAttrs(info, &attrs_));
    return rnn::ParseActivations(info, {"Tanh"}, attrs_.dirs, &acts_);
  }

  Status Compute(KernelContext& ctx) const override {
    rnn::Problem p;
    ONYX_RETURN_IF_ERROR(rnn::CheckInputs(ctx, "RNN", attrs_, 1, &p));
    const Tensor* x = ctx.Input(0);
    ONYX_RETURN_IF_ERROR(rnn::CheckGemmSizes(p, 1, *x, "RNN"));
    Tensor* y = ctx.Output(0, rnn::YDims(attrs_.layout, p), x->type());
    Tensor* yh = ctx.Output(1, rnn::StateDims(attrs_.layout, p), x->type());
    return DispatchFloat(x->type(), "RNN", [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      return Run<T>(ctx, p, y, yh);
    });
  }

 private:
  template <typename T>
  Status Run(KernelContext& ctx, const rnn::Problem& p, Tensor* y, Tensor* yh) const {
    const int64_t S = p.S, Bt = p.Bt, H = p.H, I = p.I;
    const int D = p.D;
    const int64_t layout = attrs_.layout;
    std::vector<T> xs;
    const T* xv = rnn::TimeMajorX<T>(*ctx.Input(0), layout, p, &xs);
    const T* wv = ctx.Input(1)->data<T>();
    const T* rv = ctx.Input(2)->data<T>();
    const Tensor* bt = ctx.Input(3);
    std::vector<T> h;
    rnn::StateToDirMajor<T>(ctx.Input(5), layout, D, Bt, H, &h);
    if (y != nullptr && y->size() > 0) std::fill(y->data<T>(), y->data<T>() + y->size(), T(0));
    std::vector<T> xw(static_cast<size_t>(S * Bt * H));
    std::vector<T> pre(static_cast<size_t>(Bt * H));
    for (int d = 0; d < D; ++d) {
      const bool rev = attrs_.reverse_only || d == 1;
      const rnn::Act& fa = acts_[d];
      rnn::InputProjection<T>(xv, wv, bt, d, S * Bt, H, I, H, xw.data(), ctx.threads());
      T* hd = h.data() + d * Bt * H;
      const T* rd = rv + d * H * H;
      for (int64_t step = 0; step < S; ++step) {
        if (ctx.terminate_requested()) return MakeError(ErrorCode::kFail, "RNN: run terminated on request");
        const int64_t t = rev ? S - 1 - step : step;
        std::copy(xw.begin() + t * Bt * H, xw.begin() + (t + 1) * Bt * H, pre.begin());
        BlasGemm<T>(false, true, Bt, H, H, T(1), hd, H, rd, H, T(1), pre.data(), H, ctx.threads());
        for (int64_t b = 0; b < Bt; ++b) {
          if (t >= p.lens[b]) continue;
          T* hb = hd + b * H;
          T* yrow = y ? rnn::YRow(y->data<T>(), layout, S, D, Bt, H, t, d, b) : nullptr;
          for (int64_t k = 0; k < H; ++k) {
            hb[k] = fa(rnn::Clip<T>(pre[b * H + k], attrs_.clip));
            if (yrow) yrow[k] = hb[k];
          }
        }
      }
    }
    rnn::StateFromDirMajor<T>(h, layout, D, Bt, H, yh);
    return Status::OK();
  }

  rnn::Attrs attrs_;
  std::vector<rnn::Act> acts_;
};

}  // namespace

ONYX_REGISTER_KERNEL(RnnKernel, "", "RNN", 1, kMaxVersion, FloatTypes());

}  // namespace onyx

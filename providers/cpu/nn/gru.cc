// GRU (opsets 1-2, 3+, 7+, 14+ with layout, 22). Gates in ONNX order z, r, h.
// Per direction one GEMM computes X*W^T (+ Wb, and Rb for z and r) for every
// step; each step adds H_{t-1}*R_zr^T, then the candidate:
//   linear_before_reset = 0: h = g(Xh + (r.*H_{t-1})*Rh^T + Rbh)
//   linear_before_reset = 1: h = g(Xh + r.*(H_{t-1}*Rh^T + Rbh))
//   H_t = (1 - z).*h + z.*H_{t-1}
// clip bounds each pre-activation. Batch entries past their sequence_lens
// keep their state and write zeros into Y.
#include <algorithm>
#include <string>
#include <vector>

#include "providers/cpu/common/dispatch.h"
#include "providers/cpu/math/blas.h"
#include "providers/cpu/nn/rnn_common.h"
#include "providers/kernel.h"

namespace onyx {
namespace {

class GruKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    ONYX_RETURN_IF_ERROR(rnn::ParseAttrs(info, &attrs_));
    ONYX_RETURN_IF_ERROR(rnn::ParseActivations(info, {"Sigmoid", "Tanh"}, attrs_.dirs, &acts_));
    linear_before_reset_ = info.AttrInt("linear_before_reset", 0) != 0;
    return Status::OK();
  }

  Status Compute(KernelContext& ctx) const override {
    rnn::Problem p;
    ONYX_RETURN_IF_ERROR(rnn::CheckInputs(ctx, "GRU", attrs_, 3, &p));
    const Tensor* x = ctx.Input(0);
    ONYX_RETURN_IF_ERROR(rnn::CheckGemmSizes(p, 3, *x, "GRU"));
    Tensor* y = ctx.Output(0, rnn::YDims(attrs_.layout, p), x->type());
    Tensor* yh = ctx.Output(1, rnn::StateDims(attrs_.layout, p), x->type());
    return DispatchFloat(x->type(), "GRU", [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      return Run<T>(ctx, p, y, yh);
    });
  }

 private:
  template <typename T>
  Status Run(KernelContext& ctx, const rnn::Problem& p, Tensor* y, Tensor* yh) const {
    const int64_t S = p.S, Bt = p.Bt, H = p.H, I = p.I, G = 3 * H;
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
    std::vector<T> xw(static_cast<size_t>(S * Bt * G));
    std::vector<T> gates(static_cast<size_t>(Bt * G));
    std::vector<T> hr(static_cast<size_t>(Bt * H));  // H*Rh^T or (r.*H)
    std::vector<T> hh(static_cast<size_t>(Bt * H));  // (r.*H)*Rh^T
    std::vector<T> rbh(static_cast<size_t>(H), T(0));
    for (int d = 0; d < D; ++d) {
      const bool rev = attrs_.reverse_only || d == 1;
      const rnn::Act& fa = acts_[d * 2 + 0];
      const rnn::Act& ga = acts_[d * 2 + 1];
      rnn::InputProjection<T>(xv, wv, bt, d, S * Bt, G, I, 2 * H, xw.data(), ctx.threads());
      std::fill(rbh.begin(), rbh.end(), T(0));
      if (bt != nullptr) {
        const T* b = bt->data<T>() + d * 2 * G;
        std::copy(b + G + 2 * H, b + 2 * G, rbh.begin());
      }
      T* hd = h.data() + d * Bt * H;
      const T* rd = rv + d * G * H;
      const T* rh = rd + 2 * H * H;
      for (int64_t step = 0; step < S; ++step) {
        if (ctx.terminate_requested()) return MakeError(ErrorCode::kFail, "GRU: run terminated on request");
        const int64_t t = rev ? S - 1 - step : step;
        std::copy(xw.begin() + t * Bt * G, xw.begin() + (t + 1) * Bt * G, gates.begin());
        // z and r: the first 2H columns.
        BlasGemm<T>(false, true, Bt, 2 * H, H, T(1), hd, H, rd, H, T(1), gates.data(), G, ctx.threads());
        for (int64_t b = 0; b < Bt; ++b)
          for (int64_t k = 0; k < 2 * H; ++k)
            gates[b * G + k] = fa(rnn::Clip<T>(gates[b * G + k], attrs_.clip));
        if (linear_before_reset_) {
          BlasGemm<T>(false, true, Bt, H, H, T(1), hd, H, rh, H, T(0), hh.data(), H, ctx.threads());
          for (int64_t b = 0; b < Bt; ++b)
            for (int64_t k = 0; k < H; ++k)
              hh[b * H + k] = gates[b * G + H + k] * (hh[b * H + k] + rbh[k]);
        } else {
          for (int64_t b = 0; b < Bt; ++b)
            for (int64_t k = 0; k < H; ++k) hr[b * H + k] = gates[b * G + H + k] * hd[b * H + k];
          BlasGemm<T>(false, true, Bt, H, H, T(1), hr.data(), H, rh, H, T(0), hh.data(), H, ctx.threads());
          for (int64_t b = 0; b < Bt; ++b)
            for (int64_t k = 0; k < H; ++k) hh[b * H + k] += rbh[k];
        }
        for (int64_t b = 0; b < Bt; ++b) {
          if (t >= p.lens[b]) continue;
          T* hb = hd + b * H;
          const T* gr = gates.data() + b * G;
          T* yrow = y ? rnn::YRow(y->data<T>(), layout, S, D, Bt, H, t, d, b) : nullptr;
          for (int64_t k = 0; k < H; ++k) {
            const T z = gr[k];
            const T hc = ga(rnn::Clip<T>(gr[2 * H + k] + hh[b * H + k], attrs_.clip));
            hb[k] = (T(1) - z) * hc + z * hb[k];
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
  bool linear_before_reset_ = false;
};

}  // namespace

ONYX_REGISTER_KERNEL(GruKernel, "", "GRU", 1, kMaxVersion, FloatTypes());

}  // namespace onyx

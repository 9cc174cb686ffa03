// LSTM (opsets 1-6 with the output_sequence attribute, 7+, 14+ with layout).
// Gates in ONNX order i, o, f, c. Per direction, one GEMM computes X*W^T + Wb
// + Rb for every time step; each step then adds H_{t-1}*R^T with one GEMM and
// runs the cell elementwise:
//   i = f(Xi + Hi + Pi.*C_{t-1}), f = f(Xf + Hf + Pf.*C_{t-1}) (1 - i with input_forget),
//   c = g(Xc + Hc), C_t = f.*C_{t-1} + i.*c, o = f(Xo + Ho + Po.*C_t), H_t = o.*h(C_t);
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

class LstmKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    ONYX_RETURN_IF_ERROR(rnn::ParseAttrs(info, &attrs_));
    ONYX_RETURN_IF_ERROR(rnn::ParseActivations(info, {"Sigmoid", "Tanh", "Tanh"}, attrs_.dirs, &acts_));
    input_forget_ = info.AttrInt("input_forget", 0) != 0;
    return Status::OK();
  }

  Status Compute(KernelContext& ctx) const override {
    rnn::Problem p;
    ONYX_RETURN_IF_ERROR(rnn::CheckInputs(ctx, "LSTM", attrs_, 4, &p));
    const Tensor* x = ctx.Input(0);
    const Dims sd = rnn::StateDims(attrs_.layout, p);
    ONYX_RETURN_IF_ERROR(rnn::CheckOptionalLikeX(ctx.Input(6), *x, "LSTM", "initial_c", sd));
    ONYX_RETURN_IF_ERROR(rnn::CheckOptionalLikeX(ctx.Input(7), *x, "LSTM", "P", {p.D, 3 * p.H}));
    ONYX_RETURN_IF_ERROR(rnn::CheckGemmSizes(p, 4, *x, "LSTM"));
    Tensor* y = ctx.Output(0, rnn::YDims(attrs_.layout, p), x->type());
    Tensor* yh = ctx.Output(1, sd, x->type());
    Tensor* yc = ctx.Output(2, sd, x->type());
    return DispatchFloat(x->type(), "LSTM", [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      return Run<T>(ctx, p, y, yh, yc);
    });
  }

 private:
  template <typename T>
  Status Run(KernelContext& ctx, const rnn::Problem& p, Tensor* y, Tensor* yh, Tensor* yc) const {
    const int64_t S = p.S, Bt = p.Bt, H = p.H, I = p.I, G = 4 * H;
    const int D = p.D;
    const int64_t layout = attrs_.layout;
    std::vector<T> xs;
    const T* xv = rnn::TimeMajorX<T>(*ctx.Input(0), layout, p, &xs);
    const T* wv = ctx.Input(1)->data<T>();
    const T* rv = ctx.Input(2)->data<T>();
    const Tensor* bt = ctx.Input(3);
    const Tensor* pt = ctx.Input(7);
    std::vector<T> h, c;
    rnn::StateToDirMajor<T>(ctx.Input(5), layout, D, Bt, H, &h);
    rnn::StateToDirMajor<T>(ctx.Input(6), layout, D, Bt, H, &c);
    if (y != nullptr && y->size() > 0) std::fill(y->data<T>(), y->data<T>() + y->size(), T(0));
    std::vector<T> xw(static_cast<size_t>(S * Bt * G));
    std::vector<T> gates(static_cast<size_t>(Bt * G));
    for (int d = 0; d < D; ++d) {
      const bool rev = attrs_.reverse_only || d == 1;
      const rnn::Act& fa = acts_[d * 3 + 0];
      const rnn::Act& ga = acts_[d * 3 + 1];
      const rnn::Act& ha = acts_[d * 3 + 2];
      // X*W^T + Wb + Rb for all steps at once.
      rnn::InputProjection<T>(xv, wv, bt, d, S * Bt, G, I, G, xw.data());
      const T* pi = pt ? pt->data<T>() + d * 3 * H : nullptr;
      const T* po = pi ? pi + H : nullptr;
      const T* pf = pi ? pi + 2 * H : nullptr;
      T* hd = h.data() + d * Bt * H;
      T* cd = c.data() + d * Bt * H;
      const T* rd = rv + d * G * H;
      for (int64_t step = 0; step < S; ++step) {
        if (ctx.terminate_requested()) return MakeError(ErrorCode::kFail, "LSTM: run terminated on request");
        const int64_t t = rev ? S - 1 - step : step;
        std::copy(xw.begin() + t * Bt * G, xw.begin() + (t + 1) * Bt * G, gates.begin());
        BlasGemm<T>(false, true, Bt, G, H, T(1), hd, H, rd, H, T(1), gates.data(), G);
        ThreadPool::For(ctx.threads(), Bt, std::max<int64_t>(1, 4096 / std::max<int64_t>(H, 1)),
                        [&](int64_t b0, int64_t b1) {
                          for (int64_t b = b0; b < b1; ++b) {
                            if (t >= p.lens[b]) continue;
                            const T* gr = gates.data() + b * G;
                            T* hb = hd + b * H;
                            T* cb = cd + b * H;
                            T* yrow = y ? rnn::YRow(y->data<T>(), layout, S, D, Bt, H, t, d, b) : nullptr;
                            for (int64_t k = 0; k < H; ++k) {
                              const T cp = cb[k];
                              const T iv = fa(rnn::Clip<T>(gr[k] + (pi ? pi[k] * cp : T(0)), attrs_.clip));
                              const T fv = input_forget_ ? T(1) - iv
                                                         : fa(rnn::Clip<T>(gr[2 * H + k] + (pf ? pf[k] * cp : T(0)),
                                                                           attrs_.clip));
                              const T cv = ga(rnn::Clip<T>(gr[3 * H + k], attrs_.clip));
                              const T cn = fv * cp + iv * cv;
                              const T ov = fa(rnn::Clip<T>(gr[H + k] + (po ? po[k] * cn : T(0)), attrs_.clip));
                              cb[k] = cn;
                              hb[k] = ov * ha(cn);
                              if (yrow) yrow[k] = hb[k];
                            }
                          }
                        });
      }
    }
    rnn::StateFromDirMajor<T>(h, layout, D, Bt, H, yh);
    rnn::StateFromDirMajor<T>(c, layout, D, Bt, H, yc);
    return Status::OK();
  }

  rnn::Attrs attrs_;
  std::vector<rnn::Act> acts_;
  bool input_forget_ = false;
};

}  // namespace

ONYX_REGISTER_KERNEL(LstmKernel, "", "LSTM", 1, kMaxVersion, FloatTypes());

}  // namespace onyx

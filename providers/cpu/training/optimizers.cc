// The ai.onnx.preview.training optimizers (opset 1): Adagrad, Adam and
// Momentum (standard and Nesterov). Each node takes the learning rate R and
// the step count T, then n tensors X, n gradients G and n (or 2n) states,
// and returns the n updated tensors followed by their updated states. The
// update rules are the spec's, computed per element in double and stored in
// the tensors' type (float or double).
#include <cmath>
#include <string>
#include <vector>

#include "providers/cpu/common/dispatch.h"
#include "providers/kernel.h"

namespace onyx {

namespace {

// R (a float or double scalar) and T (an int64 scalar).
Status ReadRateAndStep(KernelContext& ctx, const char* op, double* r, int64_t* t) {
  const Tensor* R = nullptr;
  const Tensor* T = nullptr;
  ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &R));
  ONYX_RETURN_IF_ERROR(ctx.RequiredInput(1, &T));
  ONYX_CHECK_ARG(R->size() == 1 && R->rank() <= 1, op, ": input 0 (R) must be a scalar, got shape ",
                 ShapeToString(R->dims()));
  ONYX_CHECK_ARG(T->size() == 1 && T->rank() <= 1 && T->type() == ElemType::kInt64, op,
                 ": input 1 (T) must be an int64 scalar, got ", ElemTypeName(T->type()), " of shape ",
                 ShapeToString(T->dims()));
  *t = T->data<int64_t>()[0];
  return DispatchFloat(R->type(), op, [&](auto tag) -> Status {
    using F = typename decltype(tag)::type;
    *r = static_cast<double>(R->data<F>()[0]);
    return Status::OK();
  });
}

// The tensors of one optimized variable: X, G and `states` states.
struct Group {
  const Tensor* x = nullptr;
  const Tensor* g = nullptr;
  std::vector<const Tensor*> s;
};

// Splits inputs 2.. into n groups of (X, G, states...), each input list
// [X1..Xn, G1..Gn, S1_1..S1_n, ...], checking counts, types and shapes.
Status ReadGroups(KernelContext& ctx, const char* op, int states, const char* const* state_names,
                  std::vector<Group>* out) {
  const int per = 2 + states;
  const int rest = ctx.InputCount() - 2;
  std::string layout = "X, G";
  for (int k = 0; k < states; ++k) layout = layout + ", " + state_names[k];
  ONYX_CHECK_ARG(rest > 0 && rest % per == 0, op, ": expected 2 + ", per, "n inputs (R, T, then ", layout,
                 " for each of n tensors), got ", ctx.InputCount());
  const int n = rest / per;
  ONYX_CHECK_ARG(ctx.OutputCount() <= (1 + states) * n, op, ": ", n, " tensors give ", (1 + states) * n,
                 " outputs, but the node has ", ctx.OutputCount());
  out->resize(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    Group& gr = (*out)[i];
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(2 + i, &gr.x));
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(2 + n + i, &gr.g));
    gr.s.resize(static_cast<size_t>(states));
    for (int k = 0; k < states; ++k) ONYX_RETURN_IF_ERROR(ctx.RequiredInput(2 + (2 + k) * n + i, &gr.s[k]));
    auto same = [&](const Tensor* t, int index, const char* name) -> Status {
      ONYX_CHECK_ARG(t->type() == gr.x->type() && t->dims() == gr.x->dims(), op, ": input ", index, " (", name,
                     " of tensor ", i, ") is ", ElemTypeName(t->type()), " ", ShapeToString(t->dims()),
                     " but input ", 2 + i, " (X of tensor ", i, ") is ", ElemTypeName(gr.x->type()), " ",
                     ShapeToString(gr.x->dims()));
      return Status::OK();
    };
    ONYX_RETURN_IF_ERROR(same(gr.g, 2 + n + i, "G"));
    for (int k = 0; k < states; ++k) ONYX_RETURN_IF_ERROR(same(gr.s[k], 2 + (2 + k) * n + i, state_names[k]));
  }
  return Status::OK();
}

// Runs `update(x, g, states_in, x_out, states_out)` per element of every
// group, writing output i (X_new) and n*(k+1) + i (state k) where present.
template <int kStates, typename Update>
Status RunGroups(KernelContext& ctx, const char* op, const std::vector<Group>& groups, Update update) {
  const int n = static_cast<int>(groups.size());
  for (int i = 0; i < n; ++i) {
    const Group& gr = groups[i];
    Tensor* xo = ctx.Output(i, gr.x->dims(), gr.x->type());
    Tensor* so[kStates];
    for (int k = 0; k < kStates; ++k) so[k] = ctx.Output((k + 1) * n + i, gr.x->dims(), gr.x->type());
    ONYX_RETURN_IF_ERROR(DispatchFloat(gr.x->type(), op, [&](auto tag) -> Status {
      using F = typename decltype(tag)::type;
      const F* x = gr.x->data<F>();
      const F* g = gr.g->data<F>();
      const F* s[kStates];
      F* sp[kStates];
      for (int k = 0; k < kStates; ++k) {
        s[k] = gr.s[k]->template data<F>();
        sp[k] = so[k] ? so[k]->template data<F>() : nullptr;
      }
      F* xp = xo ? xo->data<F>() : nullptr;
      for (int64_t e = 0; e < gr.x->size(); ++e) {
        double sv[kStates], snew[kStates];
        for (int k = 0; k < kStates; ++k) sv[k] = static_cast<double>(s[k][e]);
        double xnew = 0;
        update(static_cast<double>(x[e]), static_cast<double>(g[e]), sv, &xnew, snew);
        if (xp) xp[e] = static_cast<F>(xnew);
        for (int k = 0; k < kStates; ++k)
          if (sp[k]) sp[k][e] = static_cast<F>(snew[k]);
      }
      return Status::OK();
    }));
  }
  return Status::OK();
}

class AdagradKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    decay_ = info.AttrFloat("decay_factor", 0.0f);
    epsilon_ = info.AttrFloat("epsilon", 1e-6f);
    norm_ = info.AttrFloat("norm_coefficient", 0.0f);
    return Status::OK();
  }

  Status Compute(KernelContext& ctx) const override {
    double r = 0;
    int64_t t = 0;
    ONYX_RETURN_IF_ERROR(ReadRateAndStep(ctx, "Adagrad", &r, &t));
    static const char* const kNames[] = {"H"};
    std::vector<Group> groups;
    ONYX_RETURN_IF_ERROR(ReadGroups(ctx, "Adagrad", 1, kNames, &groups));
    const double rate = r / (1.0 + static_cast<double>(t) * decay_), eps = epsilon_, norm = norm_;
    return RunGroups<1>(ctx, "Adagrad", groups, [&](double x, double g, const double* s, double* xn, double* sn) {
      const double gr = norm * x + g;
      sn[0] = s[0] + gr * gr;
      *xn = x - rate * gr / (std::sqrt(sn[0]) + eps);
    });
  }

 private:
  double decay_ = 0, epsilon_ = 1e-6, norm_ = 0;
};

class AdamKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    alpha_ = info.AttrFloat("alpha", 0.9f);
    beta_ = info.AttrFloat("beta", 0.999f);
    epsilon_ = info.AttrFloat("epsilon", 1e-6f);
    norm_ = info.AttrFloat("norm_coefficient", 0.0f);
    norm_post_ = info.AttrFloat("norm_coefficient_post", 0.0f);
    return Status::OK();
  }

  Status Compute(KernelContext& ctx) const override {
    double r = 0;
    int64_t t = 0;
    ONYX_RETURN_IF_ERROR(ReadRateAndStep(ctx, "Adam", &r, &t));
    static const char* const kNames[] = {"V", "H"};
    std::vector<Group> groups;
    ONYX_RETURN_IF_ERROR(ReadGroups(ctx, "Adam", 2, kNames, &groups));
    const double a = alpha_, b = beta_, eps = epsilon_, norm = norm_, post = norm_post_;
    // Bias correction of both momentums once steps have been taken.
    const double td = static_cast<double>(t);
    const double rate = t > 0 ? r * std::sqrt(1.0 - std::pow(b, td)) / (1.0 - std::pow(a, td)) : r;
    return RunGroups<2>(ctx, "Adam", groups, [&](double x, double g, const double* s, double* xn, double* sn) {
      const double gr = norm * x + g;
      sn[0] = a * s[0] + (1.0 - a) * gr;
      sn[1] = b * s[1] + (1.0 - b) * gr * gr;
      *xn = (1.0 - post) * (x - rate * sn[0] / (std::sqrt(sn[1]) + eps));
    });
  }

 private:
  double alpha_ = 0.9, beta_ = 0.999, epsilon_ = 1e-6, norm_ = 0, norm_post_ = 0;
};

class MomentumKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    for (const char* a : {"alpha", "beta", "mode", "norm_coefficient"})
      ONYX_CHECK_ARG(info.Attr(a) != nullptr, "Momentum: attribute ", a, " is required");
    alpha_ = info.AttrFloat("alpha", 0.0f);
    beta_ = info.AttrFloat("beta", 0.0f);
    norm_ = info.AttrFloat("norm_coefficient", 0.0f);
    const std::string mode = info.AttrString("mode", "");
    ONYX_CHECK_ARG(mode == "standard" || mode == "nesterov", "Momentum: attribute mode must be 'standard' or ",
                   "'nesterov', got '", mode, "'");
    nesterov_ = mode == "nesterov";
    return Status::OK();
  }

  Status Compute(KernelContext& ctx) const override {
    double r = 0;
    int64_t t = 0;
    ONYX_RETURN_IF_ERROR(ReadRateAndStep(ctx, "Momentum", &r, &t));
    static const char* const kNames[] = {"V"};
    std::vector<Group> groups;
    ONYX_RETURN_IF_ERROR(ReadGroups(ctx, "Momentum", 1, kNames, &groups));
    // The gradient's coefficient is 1 on the first step.
    const double a = alpha_, b = t > 0 ? beta_ : 1.0, norm = norm_;
    const bool nesterov = nesterov_;
    return RunGroups<1>(ctx, "Momentum", groups, [&](double x, double g, const double* s, double* xn, double* sn) {
      const double gr = norm * x + g;
      sn[0] = a * s[0] + b * gr;
      *xn = nesterov ? x - r * (gr + a * sn[0]) : x - r * sn[0];
    });
  }

 private:
  double alpha_ = 0, beta_ = 0, norm_ = 0;
  bool nesterov_ = false;
};

}  // namespace

ONYX_REGISTER_KERNEL(AdagradKernel, "ai.onnx.preview.training", "Adagrad", 1, kMaxVersion, FloatTypes());
ONYX_REGISTER_KERNEL(AdamKernel, "ai.onnx.preview.training", "Adam", 1, kMaxVersion, FloatTypes());
ONYX_REGISTER_KERNEL(MomentumKernel, "ai.onnx.preview.training", "Momentum", 1, kMaxVersion, FloatTypes());

}  // namespace onyx

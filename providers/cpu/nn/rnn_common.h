// Shared pieces of the recurrent kernels (LSTM, GRU, RNN): the activation
// functions named by the `activations` attribute, and the checks and layout
// handling of the inputs every one of them takes
//   X [S, B, I] (layout 0) or [B, S, I] (layout 1), W [D, G*H, I], R [D, G*H, H],
//   B [D, 2*G*H], sequence_lens [B], initial_h [D, B, H] or [B, D, H],
// where G is the number of gates, D is 1 or 2 (bidirectional).
#pragma once

#include <algorithm>
#include <limits>
#include <cctype>
#include <cmath>
#include <string>
#include <vector>

#include "providers/cpu/math/blas.h"
#include "providers/kernel.h"

namespace onyx {
namespace rnn {

struct Act {
  enum class Kind {
    kSigmoid, kTanh, kRelu, kAffine, kLeakyRelu, kThresholdedRelu, kScaledTanh, kHardSigmoid, kElu, kSoftsign,
    kSoftplus
  };
  Kind kind = Kind::kSigmoid;
  float alpha = 0.f, beta = 0.f;

  template <typename T>
  T operator()(T x) const {
    switch (kind) {
      case Kind::kSigmoid:
        if (x >= T(0)) return T(1) / (T(1) + std::exp(-x));
        else {
          const T e = std::exp(x);
          return e / (T(1) + e);
        }
      case Kind::kTanh: return std::tanh(x);
      case Kind::kRelu: return x > T(0) ? x : T(0);
      case Kind::kAffine: return T(alpha) * x + T(beta);
      case Kind::kLeakyRelu: return x >= T(0) ? x : T(alpha) * x;
      case Kind::kThresholdedRelu: return x > T(alpha) ? x : T(0);
      case Kind::kScaledTanh: return T(alpha) * std::tanh(T(beta) * x);
      case Kind::kHardSigmoid: return std::max(T(0), std::min(T(1), T(alpha) * x + T(beta)));
      case Kind::kElu: return x >= T(0) ? x : T(alpha) * (std::exp(x) - T(1));
      case Kind::kSoftsign: return x / (T(1) + std::fabs(x));
      case Kind::kSoftplus: return x > T(20) ? x : std::log1p(std::exp(x));
    }
    return x;
  }
};

// Reads `activations` (names, case-insensitive) with activation_alpha/beta,
// which are consumed in order by the functions that take them. `defaults`
// holds one direction's defaults; the result has `per_dir` entries per
// direction, `dirs` directions.
inline Status ParseActivations(const KernelInfo& info, const std::vector<std::string>& defaults, int dirs,
                               std::vector<Act>* out) {
  const std::string who = info.node().Describe();
  std::vector<std::string> names;
  if (const Attribute* a = info.Attr("activations")) names = a->strings;
  const size_t per_dir = defaults.size();
  if (names.empty()) {
    for (int d = 0; d < dirs; ++d) names.insert(names.end(), defaults.begin(), defaults.end());
  } else if (names.size() == per_dir && dirs == 2) {
    // One direction's list: the same functions for both.
    std::vector<std::string> twice = names;
    twice.insert(twice.end(), names.begin(), names.end());
    names = twice;
  }
  ONYX_CHECK(names.size() == per_dir * dirs, ErrorCode::kInvalidGraph, who, ": attribute activations has ",
             names.size(), " names; ", per_dir * dirs, " are needed (", per_dir, " per direction)");
  std::vector<float> alphas, betas;
  if (const Attribute* a = info.Attr("activation_alpha")) alphas = a->floats;
  if (const Attribute* a = info.Attr("activation_beta")) betas = a->floats;
  size_t ai = 0, bi = 0;
  auto next = [](const std::vector<float>& v, size_t* i, float dflt) { return *i < v.size() ? v[(*i)++] : dflt; };
  out->clear();
  for (std::string n : names) {
    std::transform(n.begin(), n.end(), n.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    Act act;
    using K = Act::Kind;
    if (n == "sigmoid") act.kind = K::kSigmoid;
    else if (n == "tanh") act.kind = K::kTanh;
    else if (n == "relu") act.kind = K::kRelu;
    else if (n == "affine") {
      act.kind = K::kAffine;
      act.alpha = next(alphas, &ai, 1.f);
      act.beta = next(betas, &bi, 0.f);
    } else if (n == "leakyrelu") {
      act.kind = K::kLeakyRelu;
      act.alpha = next(alphas, &ai, 0.01f);
    } else if (n == "thresholdedrelu") {
      act.kind = K::kThresholdedRelu;
      act.alpha = next(alphas, &ai, 1.f);
    } else if (n == "scaledtanh") {
      act.kind = K::kScaledTanh;
      act.alpha = next(alphas, &ai, 1.f);
      act.beta = next(betas, &bi, 1.f);
    } else if (n == "hardsigmoid") {
      act.kind = K::kHardSigmoid;
      act.alpha = next(alphas, &ai, 0.2f);
      act.beta = next(betas, &bi, 0.5f);
    } else if (n == "elu") {
      act.kind = K::kElu;
      act.alpha = next(alphas, &ai, 1.f);
    } else if (n == "softsign") act.kind = K::kSoftsign;
    else if (n == "softplus") act.kind = K::kSoftplus;
    else return MakeError(ErrorCode::kNotImplemented, who, ": activation '", n, "' is not supported");
    out->push_back(act);
  }
  return Status::OK();
}

// The attributes every recurrent op has.
struct Attrs {
  int dirs = 1;
  bool reverse_only = false;  // direction == reverse
  int64_t hidden = 0;
  float clip = 0.f;  // 0: no clipping
  int64_t layout = 0;
};

inline Status ParseAttrs(const KernelInfo& info, Attrs* a) {
  const std::string who = info.node().Describe();
  const std::string dir = info.AttrString("direction", "forward");
  if (dir == "forward") a->dirs = 1;
  else if (dir == "reverse") a->dirs = 1, a->reverse_only = true;
  else if (dir == "bidirectional") a->dirs = 2;
  else return MakeError(ErrorCode::kInvalidGraph, who, ": attribute direction has unknown value '", dir, "'");
  a->hidden = info.AttrInt("hidden_size", 0);
  if (const Attribute* c = info.Attr("clip")) {
    a->clip = c->f;
    ONYX_CHECK(a->clip > 0, ErrorCode::kInvalidGraph, who, ": attribute clip must be positive, got ", a->clip);
  }
  a->layout = info.AttrInt("layout", 0);
  ONYX_CHECK(a->layout == 0 || a->layout == 1, ErrorCode::kInvalidGraph, who, ": attribute layout must be 0 or 1");
  return Status::OK();
}

// The checked sizes of one run, plus X in time-major order and per-batch
// sequence lengths.
struct Problem {
  int64_t S = 0, Bt = 0, I = 0, H = 0;
  int D = 1;
  std::vector<int64_t> lens;  // per batch entry, in [0, S]
};

inline Status CheckShape(const Tensor* t, const char* op, const char* name, const Dims& want) {
  if (t == nullptr) return Status::OK();
  ONYX_CHECK_ARG(t->dims() == want, op, ": input '", name, "' ", ShapeToString(t->dims()), " must be ",
                 ShapeToString(want));
  return Status::OK();
}

// An optional input that must have X's element type and the shape `want`.
inline Status CheckOptionalLikeX(const Tensor* t, const Tensor& x, const char* op, const char* name, const Dims& want) {
  if (t == nullptr) return Status::OK();
  ONYX_CHECK_ARG(t->type() == x.type(), op, ": input '", name, "' must have the element type of input 'X'");
  return CheckShape(t, op, name, want);
}

// A state (initial_h, initial_c, Y_h, Y_c): [D, B, H] (layout 0) or [B, D, H].
inline Dims StateDims(int64_t layout, int64_t D, int64_t Bt, int64_t H) {
  return layout == 0 ? Dims{D, Bt, H} : Dims{Bt, D, H};
}

// Checks X, W, R, B, sequence_lens and initial_h (and, for LSTM, initial_c
// and P through CheckShape by the caller). `gates` = 4 (LSTM), 3 (GRU), 1 (RNN).
inline Status CheckInputs(KernelContext& ctx, const char* op, const Attrs& a, int gates, Problem* p) {
  const Tensor* x = nullptr;
  const Tensor* w = nullptr;
  const Tensor* r = nullptr;
  ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &x));
  ONYX_RETURN_IF_ERROR(ctx.RequiredInput(1, &w));
  ONYX_RETURN_IF_ERROR(ctx.RequiredInput(2, &r));
  ONYX_CHECK_ARG(x->rank() == 3, op, ": input 'X' ", ShapeToString(x->dims()), " must have rank 3");
  ONYX_CHECK_ARG(w->rank() == 3, op, ": input 'W' ", ShapeToString(w->dims()), " must have rank 3");
  ONYX_CHECK_ARG(r->rank() == 3, op, ": input 'R' ", ShapeToString(r->dims()), " must have rank 3");
  ONYX_CHECK_ARG(w->type() == x->type() && r->type() == x->type(), op,
                 ": inputs 'X', 'W' and 'R' must have the same element type");
  p->D = a.dirs;
  p->S = a.layout == 0 ? x->dims()[0] : x->dims()[1];
  p->Bt = a.layout == 0 ? x->dims()[1] : x->dims()[0];
  p->I = x->dims()[2];
  p->H = a.hidden > 0 ? a.hidden : r->dims()[2];
  const int64_t G = gates, H = p->H, D = p->D;
  // H comes from an attribute or a dim: bound it before the 2*G*H products
  // below (a dim of a tensor without elements can be anything).
  ONYX_CHECK_ARG(H >= 0 && H <= std::numeric_limits<int64_t>::max() / (2 * G), op, ": hidden size ", H,
                 " is out of range");
  ONYX_RETURN_IF_ERROR(CheckShape(w, op, "W", {D, G * H, p->I}));
  ONYX_RETURN_IF_ERROR(CheckShape(r, op, "R", {D, G * H, H}));
  ONYX_RETURN_IF_ERROR(CheckOptionalLikeX(ctx.Input(3), *x, op, "B", {D, 2 * G * H}));
  ONYX_RETURN_IF_ERROR(CheckOptionalLikeX(ctx.Input(5), *x, op, "initial_h", StateDims(a.layout, D, p->Bt, H)));
  p->lens.assign(static_cast<size_t>(p->Bt), p->S);
  const Tensor* sl = ctx.Input(4);
  if (sl != nullptr) {
    ONYX_CHECK_ARG(sl->type() == ElemType::kInt32, op, ": input 'sequence_lens' must be int32");
    ONYX_RETURN_IF_ERROR(CheckShape(sl, op, "sequence_lens", {p->Bt}));
    for (int64_t i = 0; i < p->Bt; ++i) {
      const int64_t v = sl->data<int32_t>()[i];
      ONYX_CHECK_ARG(v >= 0 && v <= p->S, op, ": input 'sequence_lens' value ", v, " at batch ", i,
                     " is outside [0, ", p->S, "] (the sequence length of input 'X' ", ShapeToString(x->dims()), ")");
      p->lens[i] = v;
    }
  }
  return Status::OK();
}

// The output shapes of one run: Y [S, D, B, H] (layout 0) or [B, S, D, H],
// and the final states in StateDims.
inline Dims YDims(int64_t layout, const Problem& p) {
  return layout == 0 ? Dims{p.S, p.D, p.Bt, p.H} : Dims{p.Bt, p.S, p.D, p.H};
}
inline Dims StateDims(int64_t layout, const Problem& p) { return StateDims(layout, p.D, p.Bt, p.H); }

// Every GEMM dimension of a run with `gates` gates fits BLAS's int.
inline Status CheckGemmSizes(const Problem& p, int gates, const Tensor& x, const char* op) {
  ONYX_CHECK_ARG(FitsBlasInt(p.S * p.Bt) && FitsBlasInt(gates * p.H) && FitsBlasInt(p.I), op, ": input 'X' ",
                 ShapeToString(x.dims()), " is too large");
  return Status::OK();
}

// Copies a [D, B, H] (layout 0) or [B, D, H] (layout 1) state into
// direction-major [D][B][H] order; zeros when absent.
template <typename T>
void StateToDirMajor(const Tensor* t, int64_t layout, int D, int64_t Bt, int64_t H, std::vector<T>* out) {
  out->assign(static_cast<size_t>(D * Bt * H), T(0));
  if (t == nullptr) return;
  const T* v = t->data<T>();
  for (int d = 0; d < D; ++d)
    for (int64_t b = 0; b < Bt; ++b) {
      const T* src = layout == 0 ? v + (d * Bt + b) * H : v + (b * D + d) * H;
      std::copy(src, src + H, out->data() + (d * Bt + b) * H);
    }
}

// Writes direction-major state [D][B][H] to an output of layout `layout`.
template <typename T>
void StateFromDirMajor(const std::vector<T>& s, int64_t layout, int D, int64_t Bt, int64_t H, Tensor* t) {
  if (t == nullptr) return;
  T* v = t->data<T>();
  for (int d = 0; d < D; ++d)
    for (int64_t b = 0; b < Bt; ++b) {
      T* dst = layout == 0 ? v + (d * Bt + b) * H : v + (b * D + d) * H;
      std::copy(s.data() + (d * Bt + b) * H, s.data() + (d * Bt + b + 1) * H, dst);
    }
}

// Pointer to Y's row for (t, d, b) in either layout: Y [S, D, B, H] or [B, S, D, H].
template <typename T>
T* YRow(T* y, int64_t layout, int64_t S, int D, int64_t Bt, int64_t H, int64_t t, int d, int64_t b) {
  return layout == 0 ? y + ((t * D + d) * Bt + b) * H : y + ((b * S + t) * D + d) * H;
}

// X as time-major [S, B, I], copying only for layout 1.
template <typename T>
const T* TimeMajorX(const Tensor& x, int64_t layout, const Problem& p, std::vector<T>* scratch) {
  if (layout == 0) return x.data<T>();
  scratch->resize(static_cast<size_t>(p.S * p.Bt * p.I));
  const T* v = x.data<T>();
  for (int64_t b = 0; b < p.Bt; ++b)
    for (int64_t t = 0; t < p.S; ++t)
      std::copy(v + (b * p.S + t) * p.I, v + (b * p.S + t + 1) * p.I, scratch->data() + (t * p.Bt + b) * p.I);
  return scratch->data();
}

// xw [rows, G] = X [rows, I] * W_d^T, plus direction d's bias B [D, 2*G]:
// Wb on every column, Rb on the first `rb_cols` (G for LSTM and RNN; GRU
// keeps the candidate's Rb for the step, where it sits inside the reset).
template <typename T>
void InputProjection(const T* xv, const T* wv, const Tensor* bias, int d, int64_t rows, int64_t G, int64_t I,
                     int64_t rb_cols, T* xw, ThreadPool* pool) {
  BlasGemm<T>(false, true, rows, G, I, T(1), xv, I, wv + d * G * I, I, T(0), xw, G, pool);
  if (bias == nullptr) return;
  const T* b = bias->data<T>() + d * 2 * G;
  for (int64_t row = 0; row < rows; ++row) {
    for (int64_t k = 0; k < rb_cols; ++k) xw[row * G + k] += b[k] + b[G + k];
    for (int64_t k = rb_cols; k < G; ++k) xw[row * G + k] += b[k];
  }
}

template <typename T>
inline T Clip(T v, float clip) {
  if (clip <= 0.f) return v;
  const T c = static_cast<T>(clip);
  return v < -c ? -c : (v > c ? c : v);
}

}  // namespace rnn
}  // namespace onyx

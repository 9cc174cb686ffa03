// LSTM (opsets 1-6 with the output_sequence attribute, 7+, 14+ with layout),
// and onnxruntime's contrib op com.microsoft DynamicQuantizeLSTM, the LSTM that
// onnxruntime.quantization.quantize_dynamic writes (int8/uint8 W and R).
// Gates in ONNX order i, o, f, c. Per direction, one GEMM computes X*W^T + Wb
// + Rb for every time step; each step then adds H_{t-1}*R^T with one GEMM and
// runs the cell elementwise:
//   i = f(Xi + Hi + Pi.*C_{t-1}), f = f(Xf + Hf + Pf.*C_{t-1}) (1 - i with input_forget),
//   c = g(Xc + Hc), C_t = f.*C_{t-1} + i.*c, o = f(Xo + Ho + Po.*C_t), H_t = o.*h(C_t);
// clip bounds each pre-activation. Batch entries past their sequence_lens
// keep their state and write zeros into Y. The two kernels share the cell and
// differ only in how the two GEMMs are made (FloatGemms, QuantGemms).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "providers/cpu/common/dispatch.h"
#include "providers/cpu/math/blas.h"
#include "providers/cpu/nn/rnn_common.h"
#include "providers/cpu/quantization/qlinear_common.h"
#include "providers/kernel.h"

namespace onyx {
namespace {

struct LstmOptions {
  rnn::Attrs attrs;
  std::vector<rnn::Act> acts;
  bool input_forget = false;
  // Y_h and Y_c of a batch entry with sequence length 0 are zeros rather than
  // its initial state (onnxruntime's DynamicQuantizeLSTM; its own spec).
  bool zero_empty_states = false;
};

Status ParseLstmOptions(const KernelInfo& info, LstmOptions* o) {
  ONYX_RETURN_IF_ERROR(rnn::ParseAttrs(info, &o->attrs));
  ONYX_RETURN_IF_ERROR(rnn::ParseActivations(info, {"Sigmoid", "Tanh", "Tanh"}, o->attrs.dirs, &o->acts));
  o->input_forget = info.AttrInt("input_forget", 0) != 0;
  return Status::OK();
}

// The recurrence itself. `gemms` supplies, per direction d,
//   Input(d, xv, rows, xw):  xw [rows, 4H] = X [rows, I] * W_d^T + Wb + Rb
//   Recurrent(d, h, used, gates):  gates [B, 4H] += H_{t-1} [B, H] * R_d^T
// (rows without `used` count as zeros; only rows still inside their sequence
// are read back).
template <typename T, typename Gemms>
Status RunLstm(KernelContext& ctx, const LstmOptions& o, const rnn::Problem& p, const Gemms& gemms, Tensor* y,
               Tensor* yh, Tensor* yc) {
  const int64_t S = p.S, Bt = p.Bt, H = p.H, G = 4 * H;
  const int D = p.D;
  const int64_t layout = o.attrs.layout;
  std::vector<T> xs;
  const T* xv = rnn::TimeMajorX<T>(*ctx.Input(0), layout, p, &xs);
  const Tensor* pt = ctx.Input(7);
  std::vector<T> h, c;
  rnn::StateToDirMajor<T>(ctx.Input(5), layout, D, Bt, H, &h);
  rnn::StateToDirMajor<T>(ctx.Input(6), layout, D, Bt, H, &c);
  if (y != nullptr && y->size() > 0) std::fill(y->data<T>(), y->data<T>() + y->size(), T(0));
  std::vector<T> xw(static_cast<size_t>(S * Bt * G));
  std::vector<T> gates(static_cast<size_t>(Bt * G));
  std::vector<char> active(static_cast<size_t>(Bt)), used(static_cast<size_t>(Bt));
  std::vector<int64_t> tb(static_cast<size_t>(Bt));
  for (int d = 0; d < D; ++d) {
    const bool rev = o.attrs.reverse_only || d == 1;
    const rnn::Act& fa = o.acts[d * 3 + 0];
    const rnn::Act& ga = o.acts[d * 3 + 1];
    const rnn::Act& ha = o.acts[d * 3 + 2];
    ONYX_RETURN_IF_ERROR(gemms.Input(d, xv, S * Bt, xw.data()));
    const T* pi = pt ? pt->data<T>() + d * 3 * H : nullptr;
    const T* po = pi ? pi + H : nullptr;
    const T* pf = pi ? pi + 2 * H : nullptr;
    T* hd = h.data() + d * Bt * H;
    T* cd = c.data() + d * Bt * H;
    // Step k runs time t = k of each entry (t = len - 1 - k in reverse), so
    // every entry starts at step 0 whatever its length, as onnxruntime groups
    // them (its quantized GEMMs take their scale from the rows of one step).
    for (int64_t step = 0; step < S; ++step) {
      if (ctx.terminate_requested()) return MakeError(ErrorCode::kFail, "LSTM: run terminated on request");
      bool any = false;
      for (int64_t b = 0; b < Bt; ++b) {
        active[b] = step < p.lens[b];
        // Rows whose sequence ended before this step count as zeros; at step 0
        // every row holds its initial state.
        used[b] = active[b] || step == 0;
        any = any || active[b];
        tb[b] = rev ? p.lens[b] - 1 - step : step;
        if (active[b]) std::copy(xw.begin() + (tb[b] * Bt + b) * G, xw.begin() + (tb[b] * Bt + b + 1) * G,
                                 gates.begin() + b * G);
      }
      if (!any) break;
      ONYX_RETURN_IF_ERROR(gemms.Recurrent(d, hd, used.data(), gates.data()));
      ThreadPool::For(ctx.threads(), Bt, std::max<int64_t>(1, 4096 / std::max<int64_t>(H, 1)),
                      [&](int64_t b0, int64_t b1) {
                        for (int64_t b = b0; b < b1; ++b) {
                          if (!active[b]) continue;
                          const T* gr = gates.data() + b * G;
                          T* hb = hd + b * H;
                          T* cb = cd + b * H;
                          T* yrow = y ? rnn::YRow(y->data<T>(), layout, S, D, Bt, H, tb[b], d, b) : nullptr;
                          const float clip = o.attrs.clip;
                          for (int64_t k = 0; k < H; ++k) {
                            const T cp = cb[k];
                            const T iv = fa(rnn::Clip<T>(gr[k] + (pi ? pi[k] * cp : T(0)), clip));
                            const T fv = o.input_forget
                                             ? T(1) - iv
                                             : fa(rnn::Clip<T>(gr[2 * H + k] + (pf ? pf[k] * cp : T(0)), clip));
                            const T cv = ga(rnn::Clip<T>(gr[3 * H + k], clip));
                            const T cn = fv * cp + iv * cv;
                            const T ov = fa(rnn::Clip<T>(gr[H + k] + (po ? po[k] * cn : T(0)), clip));
                            cb[k] = cn;
                            hb[k] = ov * ha(cn);
                            if (yrow) yrow[k] = hb[k];
                          }
                        }
                      });
    }
  }
  if (o.zero_empty_states)
    for (int64_t b = 0; b < Bt; ++b)
      if (p.lens[b] == 0)
        for (int d = 0; d < D; ++d) {
          std::fill(h.begin() + (d * Bt + b) * H, h.begin() + (d * Bt + b + 1) * H, T(0));
          std::fill(c.begin() + (d * Bt + b) * H, c.begin() + (d * Bt + b + 1) * H, T(0));
        }
  rnn::StateFromDirMajor<T>(h, layout, D, Bt, H, yh);
  rnn::StateFromDirMajor<T>(c, layout, D, Bt, H, yc);
  return Status::OK();
}

// Float W [D, 4H, I] and R [D, 4H, H] through BLAS.
template <typename T>
struct FloatGemms {
  const T* w;
  const T* r;
  const Tensor* bias;
  int64_t I, H, Bt;
  ThreadPool* pool;
  Status Input(int d, const T* xv, int64_t rows, T* xw) const {
    rnn::InputProjection<T>(xv, w, bias, d, rows, 4 * H, I, 4 * H, xw, pool);
    return Status::OK();
  }
  Status Recurrent(int d, const T* h, const char* /*used*/, T* gates) const {
    BlasGemm<T>(false, true, Bt, 4 * H, H, T(1), h, H, r + d * 4 * H * H, H, T(1), gates, 4 * H, pool);
    return Status::OK();
  }
};

class LstmKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) { return ParseLstmOptions(info, &o_); }

  Status Compute(KernelContext& ctx) const override {
    rnn::Problem p;
    ONYX_RETURN_IF_ERROR(rnn::CheckInputs(ctx, "LSTM", o_.attrs, 4, &p));
    const Tensor* x = ctx.Input(0);
    const Dims sd = rnn::StateDims(o_.attrs.layout, p);
    ONYX_RETURN_IF_ERROR(rnn::CheckOptionalLikeX(ctx.Input(6), *x, "LSTM", "initial_c", sd));
    ONYX_RETURN_IF_ERROR(rnn::CheckOptionalLikeX(ctx.Input(7), *x, "LSTM", "P", {p.D, 3 * p.H}));
    ONYX_RETURN_IF_ERROR(rnn::CheckGemmSizes(p, 4, *x, "LSTM"));
    Tensor* y = ctx.Output(0, rnn::YDims(o_.attrs.layout, p), x->type());
    Tensor* yh = ctx.Output(1, sd, x->type());
    Tensor* yc = ctx.Output(2, sd, x->type());
    return DispatchFloat(x->type(), "LSTM", [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      FloatGemms<T> gemms{ctx.Input(1)->data<T>(), ctx.Input(2)->data<T>(), ctx.Input(3), p.I, p.H, p.Bt, ctx.threads()};
      return RunLstm<T>(ctx, o_, p, gemms, y, yh, yc);
    });
  }

 private:
  LstmOptions o_;
};

// --- com.microsoft DynamicQuantizeLSTM ---
//
// Inputs: X, W [D, I, 4H] and R [D, H, 4H] (int8 or uint8, already transposed
// by the quantizer), B, sequence_lens, initial_h, initial_c, P, then W_scale,
// W_zero_point, R_scale, R_zero_point, each [D] or [D, 4H] (per column).
// As onnxruntime does, each GEMM quantizes its float left operand on the fly
// to uint8 with one scale and zero point for the whole operand (its range
// widened to hold 0: scale = (max - min)/255, zero point = round(-min/scale)),
// multiplies in exact integers, and scales the int32 sums by
// a_scale * w_scale[column]. X is quantized once over the time steps any
// sequence reaches; H_{t-1} at each step over the batch, entries whose
// sequence has ended counting as 0 (onnxruntime's zeroed rows of Y; it reads
// H_{t-1} from Y). onnxruntime
// splits the batch across its threads when the batch has more than 4 entries
// or at least 2 with hidden_size <= 256, and then quantizes H per part (so its
// result depends on its thread count); with one thread, or a batch it does
// not split, it quantizes the whole batch as here.

struct DynQuant {
  float scale = 1.f;
  float zero_point = 0.f;
};

// Rows [0, rows) of `a` (row stride `cols`); rows with skip[r] count as zeros.
DynQuant ChooseDynQuant(const float* a, int64_t rows, int64_t cols, const char* skip) {
  float lo = 0.f, hi = 0.f;
  for (int64_t r = 0; r < rows; ++r) {
    if (skip != nullptr && skip[r]) continue;
    const float* row = a + r * cols;
    for (int64_t k = 0; k < cols; ++k) {
      lo = std::min(lo, row[k]);
      hi = std::max(hi, row[k]);
    }
  }
  DynQuant q;
  q.scale = hi == lo ? 1.f : (hi - lo) / 255.f;
  const float zp = std::nearbyint(std::max(0.f, std::min(255.f, 0.f - lo / q.scale)));
  q.zero_point = std::isfinite(zp) ? zp : 0.f;
  return q;
}

// out = quantize(a) - zero_point, integers in [-255, 255] held as floats.
void QuantizeShifted(const float* a, int64_t rows, int64_t cols, const char* skip, const DynQuant& q, float* out) {
  for (int64_t r = 0; r < rows; ++r) {
    float* o = out + r * cols;
    if (skip != nullptr && skip[r]) {
      std::fill(o, o + cols, 0.f);
      continue;
    }
    const float* row = a + r * cols;
    for (int64_t k = 0; k < cols; ++k) {
      const float v = std::nearbyint(row[k] / q.scale) + q.zero_point;
      o[k] = (v < 0.f ? 0.f : (v > 255.f ? 255.f : v)) - q.zero_point;
    }
  }
}

struct QuantGemms {
  // Per direction, the weights less their zero points: Wq [I, 4H], Rq [H, 4H].
  std::vector<std::vector<float>> wq, rq;
  std::vector<std::vector<float>> w_scale, r_scale;  // per direction, 4H each
  const Tensor* bias = nullptr;
  int64_t I = 0, H = 0, Bt = 0, max_len = 0;
  ThreadPool* pool = nullptr;

  // c [rows, 4H] (+)= float(sum) * (a_scale * scale[col]).
  static void Accumulate(const std::vector<double>& acc, int64_t rows, int64_t G, float a_scale,
                         const std::vector<float>& scale, bool add, float* c) {
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t j = 0; j < G; ++j) {
        const float v = static_cast<float>(acc[r * G + j]) * (a_scale * scale[j]);
        c[r * G + j] = add ? c[r * G + j] + v : v;
      }
  }

  Status Input(int d, const float* xv, int64_t rows, float* xw) const {
    const int64_t G = 4 * H;
    const DynQuant q = ChooseDynQuant(xv, std::min(rows, max_len * Bt), I, nullptr);
    std::vector<float> a(static_cast<size_t>(rows * I));
    QuantizeShifted(xv, rows, I, nullptr, q, a.data());
    std::vector<double> acc(static_cast<size_t>(rows * G));
    std::vector<float> scratch;
    qlinear::ExactIntGemm(rows, G, I, a.data(), I, wq[d].data(), G, acc.data(), G, &scratch, pool);
    Accumulate(acc, rows, G, q.scale, w_scale[d], false, xw);
    if (bias != nullptr) {
      const float* b = bias->data<float>() + d * 2 * G;
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t k = 0; k < G; ++k) xw[r * G + k] += b[k] + b[G + k];
    }
    return Status::OK();
  }

  Status Recurrent(int d, const float* h, const char* used, float* gates) const {
    const int64_t G = 4 * H;
    std::vector<char> skip(static_cast<size_t>(Bt));
    for (int64_t b = 0; b < Bt; ++b) skip[b] = !used[b];
    const DynQuant q = ChooseDynQuant(h, Bt, H, skip.data());
    std::vector<float> a(static_cast<size_t>(Bt * H));
    QuantizeShifted(h, Bt, H, skip.data(), q, a.data());
    std::vector<double> acc(static_cast<size_t>(Bt * G));
    std::vector<float> scratch;
    qlinear::ExactIntGemm(Bt, G, H, a.data(), H, rq[d].data(), G, acc.data(), G, &scratch, pool);
    Accumulate(acc, Bt, G, q.scale, r_scale[d], true, gates);
    return Status::OK();
  }
};

class DynamicQuantizeLstmKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    who_ = info.node().Describe();
    o_.zero_empty_states = true;
    return ParseLstmOptions(info, &o_);
  }

  Status Compute(KernelContext& ctx) const override {
    const char* op = "DynamicQuantizeLSTM";
    const Tensor *x = nullptr, *w = nullptr, *r = nullptr;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &x));
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(1, &w));
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(2, &r));
    ONYX_CHECK_ARG(x->type() == ElemType::kFloat, who_, ": input 'X' must be float, got ", ElemTypeName(x->type()));
    ONYX_CHECK_ARG(x->rank() == 3, who_, ": input 'X' ", ShapeToString(x->dims()), " must have rank 3");
    ONYX_CHECK_ARG(w->rank() == 3, who_, ": input 'W' ", ShapeToString(w->dims()),
                   " must have rank 3 ([num_directions, input_size, 4*hidden_size])");
    ONYX_CHECK_ARG(r->rank() == 3, who_, ": input 'R' ", ShapeToString(r->dims()),
                   " must have rank 3 ([num_directions, hidden_size, 4*hidden_size])");
    ONYX_CHECK_ARG((w->type() == ElemType::kInt8 || w->type() == ElemType::kUint8) && r->type() == w->type(), who_,
                   ": inputs 'W' and 'R' must both be int8 or both uint8, got ", ElemTypeName(w->type()), " and ",
                   ElemTypeName(r->type()));
    rnn::Problem p;
    p.D = o_.attrs.dirs;
    p.S = x->dims()[0];
    p.Bt = x->dims()[1];
    p.I = x->dims()[2];
    p.H = o_.attrs.hidden > 0 ? o_.attrs.hidden : r->dims()[1];
    const int64_t D = p.D, H = p.H, G = 4 * H;
    ONYX_RETURN_IF_ERROR(rnn::CheckShape(w, op, "W", {D, p.I, G}));
    ONYX_RETURN_IF_ERROR(rnn::CheckShape(r, op, "R", {D, H, G}));
    ONYX_RETURN_IF_ERROR(rnn::CheckOptionalLikeX(ctx.Input(3), *x, op, "B", {D, 2 * G}));
    const Dims sd = rnn::StateDims(0, D, p.Bt, H);
    ONYX_RETURN_IF_ERROR(rnn::CheckOptionalLikeX(ctx.Input(5), *x, op, "initial_h", sd));
    ONYX_RETURN_IF_ERROR(rnn::CheckOptionalLikeX(ctx.Input(6), *x, op, "initial_c", sd));
    ONYX_RETURN_IF_ERROR(rnn::CheckOptionalLikeX(ctx.Input(7), *x, op, "P", {D, 3 * H}));
    ONYX_RETURN_IF_ERROR(rnn::CheckGemmSizes(p, 4, *x, op));
    p.lens.assign(static_cast<size_t>(p.Bt), p.S);
    if (const Tensor* sl = ctx.Input(4)) {
      ONYX_CHECK_ARG(sl->type() == ElemType::kInt32, who_, ": input 'sequence_lens' must be int32");
      ONYX_RETURN_IF_ERROR(rnn::CheckShape(sl, op, "sequence_lens", {p.Bt}));
      for (int64_t i = 0; i < p.Bt; ++i) {
        const int64_t v = sl->data<int32_t>()[i];
        ONYX_CHECK_ARG(v >= 0 && v <= p.S, who_, ": input 'sequence_lens' value ", v, " at batch ", i,
                       " is outside [0, ", p.S, "] (the sequence length of input 'X' ", ShapeToString(x->dims()),
                       ")");
        p.lens[i] = v;
      }
    }
    QuantGemms g;
    g.I = p.I;
    g.H = H;
    g.Bt = p.Bt;
    g.pool = ctx.threads();
    g.bias = ctx.Input(3);
    g.max_len = p.lens.empty() ? 0 : *std::max_element(p.lens.begin(), p.lens.end());
    ONYX_RETURN_IF_ERROR(ReadWeights(ctx, *w, 1, 8, 9, "W", D, p.I, G, &g.wq, &g.w_scale));
    ONYX_RETURN_IF_ERROR(ReadWeights(ctx, *r, 2, 10, 11, "R", D, H, G, &g.rq, &g.r_scale));
    Tensor* y = ctx.Output(0, rnn::YDims(0, p), x->type());
    Tensor* yh = ctx.Output(1, sd, x->type());
    Tensor* yc = ctx.Output(2, sd, x->type());
    return RunLstm<float>(ctx, o_, p, g, y, yh, yc);
  }

 private:
  // Weight input `wi` [D, K, G] with its scale (input `si`) and zero point
  // (input `zi`), each [D] or [D, G]: per direction, the K x G matrix less
  // its zero points as floats, and G scales.
  Status ReadWeights(KernelContext& ctx, const Tensor& wt, int wi, int si, int zi, const char* name, int64_t D,
                     int64_t K, int64_t G, std::vector<std::vector<float>>* q,
                     std::vector<std::vector<float>>* scales) const {
    const std::string sname = std::string(name) + "_scale", zname = std::string(name) + "_zero_point";
    const Tensor* st = ctx.Input(si);
    const Tensor* zt = ctx.Input(zi);
    ONYX_CHECK_ARG(st != nullptr, who_, ": input ", si, " (", sname, ") is required");
    ONYX_CHECK_ARG(st->type() == ElemType::kFloat, who_, ": input ", si, " (", sname, ") must be float, got ",
                   ElemTypeName(st->type()));
    auto per_column = [&](const Tensor& t, int index, const std::string& n, bool* per_col) -> Status {
      *per_col = t.dims() == Dims{D, G};
      ONYX_CHECK_ARG(*per_col || t.dims() == Dims{D}, who_, ": input ", index, " (", n, ") of shape ",
                     ShapeToString(t.dims()), " must be [", D, "] (per direction) or [", D, ",", G,
                     "] (per direction and column)");
      return Status::OK();
    };
    bool s_col = false, z_col = false;
    ONYX_RETURN_IF_ERROR(per_column(*st, si, sname, &s_col));
    if (zt != nullptr) {
      ONYX_CHECK_ARG(zt->type() == wt.type(), who_, ": input ", zi, " (", zname, ") has type ",
                     ElemTypeName(zt->type()), " but input ", wi, " (", name, ") has type ", ElemTypeName(wt.type()));
      ONYX_RETURN_IF_ERROR(per_column(*zt, zi, zname, &z_col));
    }
    const float* sv = st->data<float>();
    q->assign(static_cast<size_t>(D), {});
    scales->assign(static_cast<size_t>(D), {});
    for (int64_t d = 0; d < D; ++d) {
      std::vector<float>& sc = (*scales)[d];
      sc.resize(static_cast<size_t>(G));
      for (int64_t j = 0; j < G; ++j) {
        sc[j] = sv[s_col ? d * G + j : d];
        ONYX_CHECK_ARG(std::isfinite(sc[j]) && sc[j] > 0, who_, ": input ", si, " (", sname,
                       ") must be finite and > 0, got ", sc[j], " at direction ", d, s_col ? ", column " : "",
                       s_col ? std::to_string(j) : std::string());
      }
    }
    return DispatchOver(qlinear::Int8TypeSet{}, wt.type(), name, [&](auto tag) -> Status {
      using Q = typename decltype(tag)::type;
      const Q* wv = wt.data<Q>();
      const Q* zv = zt != nullptr ? zt->data<Q>() : nullptr;
      for (int64_t d = 0; d < D; ++d) {
        std::vector<float>& m = (*q)[d];
        m.resize(static_cast<size_t>(K * G));
        const Q* src = wv + d * K * G;
        for (int64_t k = 0; k < K; ++k)
          for (int64_t j = 0; j < G; ++j) {
            const float zp = zv != nullptr ? static_cast<float>(zv[z_col ? d * G + j : d]) : 0.f;
            m[k * G + j] = static_cast<float>(src[k * G + j]) - zp;
          }
      }
      return Status::OK();
    });
  }

  LstmOptions o_;
  std::string who_;
};

}  // namespace

ONYX_REGISTER_KERNEL(LstmKernel, "", "LSTM", 1, kMaxVersion, FloatTypes());
ONYX_REGISTER_KERNEL(DynamicQuantizeLstmKernel, "com.microsoft", "DynamicQuantizeLSTM", 1, kMaxVersion,
                     std::vector<ElemType>{ElemType::kFloat});

}  // namespace onyx

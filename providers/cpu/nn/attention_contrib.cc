// onnxruntime's com.microsoft Attention (version 1), which its transformer
// optimizer fuses from BERT/GPT-2 self-attention: one packed QKV projection,
// then per head softmax(scale * Q K^T + mask (+ attention_bias)) V.
//   inputs  input [B, S, D_in], weights [D_in, Dq + Dk + Dv], bias? [Dq + Dk + Dv],
//           mask_index? int32, past? [2, B, N, P, H], attention_bias? [B|1, N|1, S, P + S]
//   outputs output [B, S, Dv], present? [2, B, N, P + S, H]
//   attributes num_heads (required), qkv_hidden_sizes (default D each, from
//   the weights), unidirectional (causal), scale (0: 1 / sqrt(head size)),
//   mask_filter_value (-10000)
// mask_index, as onnxruntime reads it (T = P + S keys):
//   [B]        keys at or after mask_index[b] are masked (right padding);
//   [2B]       also keys before mask_index[B + b] (left padding);
//   [B, T]     raw 0/1 mask per key;  [B, S, T]  raw 0/1 mask per query and key.
// A masked score gets mask_filter_value instead of 0 added; causal
// (unidirectional) positions are set to the lowest float. float only, as
// onnxruntime's CPU kernel.
//
// QAttention (com.microsoft, version 1), what onnxruntime.quantization's
// quantize_dynamic writes for an Attention node (behind a
// DynamicQuantizeLinear of its input): the same with the QKV projection on
// integers,
//   inputs  input [B, S, D_in] (uint8/int8), weight [D_in, Dsum] (uint8/int8),
//           bias [Dsum], input_scale (scalar), weight_scale (scalar or [Dsum]),
//           mask_index?, input_zero_point?, weight_zero_point? (scalar or
//           [Dsum]), past?
//   qkv = float((input - input_zp) x (weight - weight_zp)) * (input_scale *
//         weight_scale[col]) + bias[col], as onnxruntime's kernel scales its
//   exact int32 sums; then as Attention.
//
// MultiHeadAttention (com.microsoft, version 1), what the optimizer writes with
// use_multi_head_attention (self or cross attention, projections left outside):
//   inputs  query [B, S, D] or packed QKV [B, S, N, 3, H] (then no key/value),
//           key? [B, L, D], packed KV [B, L, N, 2, H] (then no value) or
//           [B, N, L, H] (cross attention's cached keys: no bias, no past),
//           value? [B, L, Dv] or [B, N, L, Hv] (with a 4-D key),
//           bias? [D + D + Dv] (Q, K, V biases), key_padding_mask? int32 [B],
//           [B, T] or [B, S, T] (as Attention's mask_index), attention_bias?
//           [B|1, N|1, S, T], past_key? / past_value? [B, N, P, H] / [B, N, P, Hv]
//   outputs output [B, S, Dv], present_key? [B, N, T, H], present_value? [B, N, T, Hv]
//   attributes num_heads, unidirectional, scale, mask_filter_value as Attention.
// float only, as onnxruntime's CPU kernel; unlike it, the packed QKV and KV
// forms run here too.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <vector>

#include "providers/cpu/common/fast_math.h"
#include "providers/cpu/math/blas.h"
#include "providers/cpu/quantization/int8_gemm.h"
#include "providers/cpu/quantization/qlinear_common.h"
#include "providers/kernel.h"

namespace onyx {
namespace {

// One operand's rows per (batch, head, position): element h of row (b, n, t)
// is base[b * b_stride + n * n_stride + t * t_stride + h] (+ bias[n * head + h]).
// Covers [B, L, N*H], [B, N, L, H] and the packed [B, L, N, k, H] layouts.
struct RowSource {
  const float* base = nullptr;
  int64_t b_stride = 0, n_stride = 0, t_stride = 0;
  const float* bias = nullptr;  // [N * head], or null

  const float* Row(int64_t b, int64_t n, int64_t t) const { return base + b * b_stride + n * n_stride + t * t_stride; }
  void Gather(int64_t b, int64_t n, int64_t t0, int64_t count, int64_t head, float* dst) const {
    for (int64_t t = 0; t < count; ++t) {
      const float* src = Row(b, n, t0 + t);
      float* d = dst + t * head;
      if (bias == nullptr) {
        std::copy(src, src + head, d);
      } else {
        const float* bv = bias + n * head;
        for (int64_t h = 0; h < head; ++h) d[h] = src[h] + bv[h];
      }
    }
  }
};

// [B, L, N*H]-style rows: row (b, t) of `width` values, head n at n * head.
RowSource TokenRows(const float* base, int64_t L, int64_t width, int64_t head, const float* bias = nullptr) {
  return RowSource{base, L * width, head, width, bias};
}

// [B, N, L, H]: the layout of past/present states and of cross attention's cached keys.
RowSource HeadRows(const float* base, int64_t N, int64_t L, int64_t head) {
  return RowSource{base, N * L * head, L * head, head, nullptr};
}

// Everything one attention call computes per (batch, head): Q [S, H] against
// K and V of T = P + S_kv positions (the first P from the past), scores =
// scale * Q K^T + attention_bias + mask, softmax per row, times V.
struct AttentionProblem {
  int64_t B = 0, N = 0, S = 0, P = 0, T = 0, H = 0, Hv = 0;
  float scale = 1.f;
  RowSource q, k_past, v_past, k_new, v_new;
  const std::vector<float>* mask3 = nullptr;  // additive [B, S, T], or empty
  const Tensor* attn_bias = nullptr;          // [B|1, N|1, S, T], or null
  float* present_k = nullptr;                 // [B, N, T, H], or null
  float* present_v = nullptr;                 // [B, N, T, Hv], or null
  float* out = nullptr;                       // [B, S, N * Hv]
};

void AttendHeads(const AttentionProblem& a, ThreadPool* pool) {
  const int64_t B = a.B, N = a.N, S = a.S, P = a.P, T = a.T, H = a.H, Hv = a.Hv;
  const int64_t Dv = N * Hv;
  const float* abv = a.attn_bias != nullptr ? a.attn_bias->data<float>() : nullptr;
  const double work = static_cast<double>(S) * T * (H + Hv);
  // Operands without a bias to add, and K/V without a past to join or a
  // present to write, are read by the GEMMs where they lie (row stride
  // t_stride) instead of copied per head.
  const bool q_direct = a.q.bias == nullptr;
  const bool kv_direct = P == 0 && a.k_new.bias == nullptr && a.v_new.bias == nullptr && a.present_k == nullptr &&
                         a.present_v == nullptr;
  ThreadPool::For(pool, B * N, std::max<int64_t>(1, static_cast<int64_t>(65536.0 / (work + 1))),
                  [&](int64_t begin, int64_t end) {
    std::vector<float> q(q_direct ? 0 : static_cast<size_t>(S * H)), k(kv_direct ? 0 : static_cast<size_t>(T * H)),
        v(kv_direct ? 0 : static_cast<size_t>(T * Hv)), probs(static_cast<size_t>(S * T));
    for (int64_t i = begin; i < end; ++i) {
      const int64_t b = i / N, n = i % N;
      const float *qp = q.data(), *kp = k.data(), *vp = v.data();
      int64_t ldq = H, ldk = H, ldv = Hv;
      if (q_direct) {
        qp = a.q.Row(b, n, 0);
        ldq = a.q.t_stride;
      } else {
        a.q.Gather(b, n, 0, S, H, q.data());
      }
      if (kv_direct) {
        kp = a.k_new.Row(b, n, 0);
        ldk = a.k_new.t_stride;
        vp = a.v_new.Row(b, n, 0);
        ldv = a.v_new.t_stride;
      } else {
        if (P > 0) {
          a.k_past.Gather(b, n, 0, P, H, k.data());
          a.v_past.Gather(b, n, 0, P, Hv, v.data());
        }
        a.k_new.Gather(b, n, 0, T - P, H, k.data() + P * H);
        a.v_new.Gather(b, n, 0, T - P, Hv, v.data() + P * Hv);
        if (a.present_k != nullptr) std::copy(k.begin(), k.end(), a.present_k + (b * N + n) * T * H);
        if (a.present_v != nullptr) std::copy(v.begin(), v.end(), a.present_v + (b * N + n) * T * Hv);
      }
      float beta = 0.f;
      if (abv != nullptr) {
        const Dims& ad = a.attn_bias->dims();
        const int64_t off = ((ad[0] == 1 ? 0 : b) * ad[1] + (ad[1] == 1 ? 0 : n)) * S * T;
        std::copy(abv + off, abv + off + S * T, probs.data());
        beta = 1.f;
      }
      if (a.mask3 != nullptr && !a.mask3->empty()) {
        const float* m = a.mask3->data() + b * S * T;
        if (beta == 0.f) std::copy(m, m + S * T, probs.data());
        else
          for (int64_t j = 0; j < S * T; ++j) probs[j] += m[j];
        beta = 1.f;
      }
      BlasGemm<float>(false, true, S, T, H, a.scale, qp, ldq, kp, ldk, beta, probs.data(), T);
      for (int64_t s = 0; s < S; ++s) fastmath::SoftmaxArray(probs.data() + s * T, probs.data() + s * T, T);
      BlasGemm<float>(false, false, S, Hv, T, 1.f, probs.data(), T, vp, ldv, 0.f, a.out + b * S * Dv + n * Hv, Dv);
    }
  });
}

// The additive mask [B, S, T] (empty when there is neither a mask nor
// causality), from an int32 mask in the forms the header lists ([2B] only
// where `starts` allows it). A masked key gets `filter`; causal positions
// after P + s the lowest float.
Status BuildMask(const Tensor* mask, int64_t B, int64_t S, int64_t T, int64_t P, bool unidirectional, float filter,
                 bool starts, const char* op, int index, const char* name, std::vector<float>* out) {
  const bool causal = unidirectional && S > 1;
  if (mask == nullptr && !causal) return Status::OK();
  out->assign(static_cast<size_t>(B * S * T), 0.f);
  if (mask != nullptr) {
    ONYX_CHECK_ARG(mask->type() == ElemType::kInt32, op, ": input ", index, " (", name, ") must be int32, got ",
                   ElemTypeName(mask->type()));
    const Dims& md = mask->dims();
    const int32_t* mv = mask->data<int32_t>();
    const bool ends = md.size() == 1 && md[0] == B;
    const bool ends_starts = starts && md.size() == 1 && md[0] == 2 * B;
    const bool raw2 = md.size() == 2 && md[0] == B && md[1] == T;
    const bool raw3 = md.size() == 3 && md[0] == B && md[1] == S && md[2] == T;
    ONYX_CHECK_ARG(ends || ends_starts || raw2 || raw3, op, ": input ", index, " (", name, ") of shape ",
                   ShapeToString(md), " must be [", B, "], ", starts ? StrCat("[", 2 * B, "], ") : std::string(),
                   "[", B, ", ", T, "] or [", B, ", ", S, ", ", T, "]");
    for (int64_t b = 0; b < B; ++b)
      for (int64_t s = 0; s < S; ++s) {
        float* row = out->data() + (b * S + s) * T;
        for (int64_t t = 0; t < T; ++t) {
          bool keep;
          if (raw3) keep = mv[(b * S + s) * T + t] > 0;
          else if (raw2) keep = mv[b * T + t] > 0;
          else keep = t < mv[b] && (!ends_starts || t >= mv[B + b]);
          row[t] = keep ? 0.f : filter;
        }
      }
  }
  if (causal)
    for (int64_t b = 0; b < B; ++b)
      for (int64_t s = 0; s < S; ++s)
        for (int64_t t = P + s + 1; t < T; ++t) (*out)[(b * S + s) * T + t] = std::numeric_limits<float>::lowest();
  return Status::OK();
}

Status CheckAttentionBias(const Tensor* attn_bias, int64_t B, int64_t N, int64_t S, int64_t T, const char* op,
                          int index) {
  if (attn_bias == nullptr) return Status::OK();
  const Dims& ad = attn_bias->dims();
  ONYX_CHECK_ARG(ad.size() == 4 && (ad[0] == B || ad[0] == 1) && (ad[1] == N || ad[1] == 1) && ad[2] == S &&
                     ad[3] == T,
                 op, ": input ", index, " (attention_bias) of shape ", ShapeToString(ad), " must be [", B, " or 1, ",
                 N, " or 1, ", S, ", ", T, "]");
  return Status::OK();
}

Status CheckFloat(const Tensor* t, const char* op, int index, const char* name) {
  if (t != nullptr)
    ONYX_CHECK_ARG(t->type() == ElemType::kFloat, op, ": input ", index, " (", name, ") must be float, got ",
                   ElemTypeName(t->type()));
  return Status::OK();
}

// The attributes Attention and MultiHeadAttention share.
struct AttentionAttrs {
  int64_t num_heads = 1;
  bool unidirectional = false;
  float scale = 0.f;  // 0: 1 / sqrt(head size)
  float mask_filter = -10000.f;

  Status Parse(const KernelInfo& info, const char* op) {
    const Attribute* heads = info.Attr("num_heads");
    ONYX_CHECK(heads != nullptr && heads->i > 0, ErrorCode::kInvalidGraph, op,
               ": attribute num_heads is required and must be > 0");
    num_heads = heads->i;
    unidirectional = info.AttrInt("unidirectional", 0) != 0;
    scale = info.AttrFloat("scale", 0.f);
    mask_filter = info.AttrFloat("mask_filter_value", -10000.f);
    return Status::OK();
  }
  float ScaleFor(int64_t head_size) const {
    return scale == 0.f ? 1.f / std::sqrt(static_cast<float>(head_size)) : scale;
  }
};

class AttentionKernel final : public OpKernel {
 public:
  explicit AttentionKernel(bool quantized) : quantized_(quantized) {}

  Status Init(const KernelInfo& info) {
    ONYX_RETURN_IF_ERROR(attrs_.Parse(info, quantized_ ? "QAttention" : "Attention"));
    qkv_sizes_ = info.AttrInts("qkv_hidden_sizes");
    ONYX_CHECK(qkv_sizes_.empty() || qkv_sizes_.size() == 3, ErrorCode::kInvalidGraph,
               "Attention: attribute qkv_hidden_sizes must hold 3 values, got ", qkv_sizes_.size());
    for (int64_t v : qkv_sizes_)
      ONYX_CHECK(v > 0 && v % attrs_.num_heads == 0, ErrorCode::kInvalidGraph, "Attention: qkv_hidden_sizes value ",
                 v, " is not a positive multiple of num_heads ", attrs_.num_heads);
    ONYX_CHECK(info.AttrInt("do_rotary", 0) == 0, ErrorCode::kNotImplemented,
               "Attention: do_rotary=1 is not supported");
    ONYX_CHECK(info.AttrInt("past_present_share_buffer", 0) == 0, ErrorCode::kNotImplemented,
               "Attention: past_present_share_buffer=1 is not supported");
    // Constant weights [Din, Dsum] are packed once for the QKV projection.
    if (quantized_) {
      qweights_.Init(info, 1);
      return Status::OK();
    }
    const Tensor* w = info.ConstantInput(1);
    if (w != nullptr && w->type() == ElemType::kFloat && w->rank() == 2 && FitsBlasInt(w->dims()[0]) &&
        FitsBlasInt(w->dims()[1]))
      packed_w_ = sgemm::PackB(false, w->dims()[0], w->dims()[1], w->data<float>(), w->dims()[1]);
    if (!packed_w_.empty()) info.ReleaseConstantInput(1);  // runs read the packed copy only
    return Status::OK();
  }

  Status Compute(KernelContext& ctx) const override {
    const char* op = quantized_ ? "QAttention" : "Attention";
    const Tensor* x = nullptr;
    const Tensor* w = nullptr;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &x));
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(1, &w));
    auto opt = [&](int i) { return ctx.InputCount() > i ? ctx.Input(i) : nullptr; };
    const Tensor* bias = opt(2);
    const Tensor* mask = opt(quantized_ ? 5 : 3);
    const Tensor* past = opt(quantized_ ? 8 : 4);
    const Tensor* attn_bias = quantized_ ? nullptr : opt(5);
    if (!quantized_)
      ONYX_CHECK_ARG(ctx.InputCount() <= 6 || ctx.Input(6) == nullptr, op,
                     ": input 6 (past_sequence_length) is not supported");
    if (!quantized_) {
      ONYX_RETURN_IF_ERROR(CheckFloat(x, op, 0, "input"));
      ONYX_RETURN_IF_ERROR(CheckFloat(w, op, 1, "weights"));
    } else {
      for (int i : {0, 1})
        ONYX_CHECK_ARG(ctx.Input(i)->type() == ElemType::kInt8 || ctx.Input(i)->type() == ElemType::kUint8, op,
                       ": input ", i, i == 0 ? " (input)" : " (weight)", " must be int8 or uint8, got ",
                       ElemTypeName(ctx.Input(i)->type()));
    }
    ONYX_RETURN_IF_ERROR(CheckFloat(bias, op, 2, "bias"));
    ONYX_RETURN_IF_ERROR(CheckFloat(past, op, 4, "past"));
    ONYX_RETURN_IF_ERROR(CheckFloat(attn_bias, op, 5, "attention_bias"));
    ONYX_CHECK_ARG(x->rank() == 3, op, ": input 0 (input) of shape ", ShapeToString(x->dims()),
                   " must be 3-D [batch, sequence, hidden]");
    const int64_t B = x->dims()[0], S = x->dims()[1], Din = x->dims()[2];
    ONYX_CHECK_ARG(w->rank() == 2 && w->dims()[0] == Din, op, ": input 1 (weights) of shape ",
                   ShapeToString(w->dims()), " must be 2-D with ", Din, " rows (the hidden size of input 0)");
    const int64_t Dsum = w->dims()[1];
    int64_t Dq = Dsum / 3, Dk = Dsum / 3, Dv = Dsum / 3;
    if (!qkv_sizes_.empty()) {
      Dq = qkv_sizes_[0];
      Dk = qkv_sizes_[1];
      Dv = qkv_sizes_[2];
    }
    const int64_t N = attrs_.num_heads;
    ONYX_CHECK_ARG(Dq + Dk + Dv == Dsum && Dq == Dk && Dq % N == 0 && Dv % N == 0, op,
                   ": input 1 (weights) of shape ", ShapeToString(w->dims()), " does not split into Q, K, V of ",
                   "hidden sizes ", Dq, ", ", Dk, ", ", Dv, " (Q and K equal, each a multiple of num_heads ", N, ")");
    if (bias != nullptr)
      ONYX_CHECK_ARG(bias->rank() == 1 && bias->dims()[0] == Dsum, op, ": input 2 (bias) of shape ",
                     ShapeToString(bias->dims()), " must be [", Dsum, "]");
    const int64_t H = Dq / N, Hv = Dv / N;
    int64_t P = 0;
    if (past != nullptr) {
      const Dims& pd = past->dims();
      ONYX_CHECK_ARG(H == Hv && pd.size() == 5 && pd[0] == 2 && pd[1] == B && pd[2] == N && pd[4] == H, op,
                     ": input 4 (past) of shape ", ShapeToString(pd), " must be [2, ", B, ", ", N, ", past, ", H,
                     "] (and K and V must share a head size)");
      P = pd[3];
    }
    const int64_t T = P + S;
    // The additive mask, [B, S, T] (null when there is none).
    std::vector<float> mask3;
    ONYX_RETURN_IF_ERROR(BuildMask(mask, B, S, T, P, attrs_.unidirectional, attrs_.mask_filter, true, op,
                                   quantized_ ? 5 : 3, "mask_index", &mask3));
    ONYX_RETURN_IF_ERROR(CheckAttentionBias(attn_bias, B, N, S, T, op, 5));
    ONYX_CHECK_ARG(FitsBlasInt(B * S) && FitsBlasInt(Dsum) && FitsBlasInt(Din) && FitsBlasInt(T), op,
                   ": dimensions of input 0 (input) ", ShapeToString(x->dims()), " are too large");

    Tensor* out = ctx.Output(0, {B, S, Dv}, ElemType::kFloat);
    Tensor* present = ctx.OutputCount() > 1 ? ctx.Output(1, {2, B, N, T, H}, ElemType::kFloat) : nullptr;
    if (present != nullptr) ONYX_CHECK_ARG(H == Hv, op, ": output 1 (present) needs equal K and V head sizes");
    if (out == nullptr || out->size() == 0) return Status::OK();

    // qkv[B*S, Dsum] = input x weights + bias: written whole by the GEMM
    // (no zeroing first), the bias added row by row after.
    std::unique_ptr<float[]> qkv_buf(new float[static_cast<size_t>(B * S * Dsum)]);
    float* qkv = qkv_buf.get();
    const float* bv = bias != nullptr ? bias->data<float>() : nullptr;
    if (quantized_) {
      ONYX_RETURN_IF_ERROR(ProjectQuantized(ctx, *x, *w, bv, B * S, Din, Dsum, qkv));
    } else {
      BlasGemm<float>(false, false, B * S, Dsum, Din, 1.f, x->data<float>(), Din, w->data<float>(), Dsum, 0.f, qkv,
                      Dsum, ctx.threads(), nullptr, &packed_w_);
      if (bv != nullptr)
        ThreadPool::For(ctx.threads(), B * S, std::max<int64_t>(1, 16384 / Dsum), [&](int64_t r0, int64_t r1) {
          for (int64_t r = r0; r < r1; ++r)
            for (int64_t j = 0; j < Dsum; ++j) qkv[r * Dsum + j] += bv[j];
        });
    }

    AttentionProblem a;
    a.B = B, a.N = N, a.S = S, a.P = P, a.T = T, a.H = H, a.Hv = Hv;
    a.scale = attrs_.ScaleFor(H);
    a.q = TokenRows(qkv, S, Dsum, H);
    a.k_new = TokenRows(qkv + Dq, S, Dsum, H);
    a.v_new = TokenRows(qkv + Dq + Dk, S, Dsum, Hv);
    if (past != nullptr) {
      a.k_past = HeadRows(past->data<float>(), N, P, H);
      a.v_past = HeadRows(past->data<float>() + B * N * P * H, N, P, H);
    }
    a.mask3 = &mask3;
    a.attn_bias = attn_bias;
    if (present != nullptr) {
      a.present_k = present->data<float>();
      a.present_v = a.present_k + B * N * T * H;
    }
    a.out = out->data<float>();
    AttendHeads(a, ctx.threads());
    return Status::OK();
  }

 private:
  // qkv[rows, Dsum] = float(exact int32 (x - zx)(w - zw)) * (x_scale *
  // w_scale[col]) + bias[col] (QAttention's inputs 3, 4, 6, 7).
  Status ProjectQuantized(KernelContext& ctx, const Tensor& x, const Tensor& w, const float* bias, int64_t rows,
                          int64_t Din, int64_t Dsum, float* qkv) const {
    const char* op = "QAttention";
    const char* per_col = " (one per column of weight)";
    std::vector<float> xs, ws;
    std::vector<int32_t> zx, zw;
    const Tensor* xst = ctx.InputCount() > 3 ? ctx.Input(3) : nullptr;
    const Tensor* wst = ctx.InputCount() > 4 ? ctx.Input(4) : nullptr;
    ONYX_RETURN_IF_ERROR(qlinear::ReadScales(xst, op, 3, "input_scale", -1, "", 1, false, &xs));
    ONYX_RETURN_IF_ERROR(qlinear::ReadScales(wst, op, 4, "weight_scale", Dsum, per_col, Dsum, false, &ws));
    ONYX_RETURN_IF_ERROR(qlinear::ReadZeroPoints(ctx.InputCount() > 6 ? ctx.Input(6) : nullptr, &x, op, 6,
                                                 "input_zero_point", -1, "", 1, &zx));
    ONYX_RETURN_IF_ERROR(qlinear::ReadZeroPoints(ctx.InputCount() > 7 ? ctx.Input(7) : nullptr, &w, op, 7,
                                                 "weight_zero_point", Dsum, per_col, Dsum, &zw));
    std::vector<float> col_scale(static_cast<size_t>(Dsum));
    for (int64_t n = 0; n < Dsum; ++n) col_scale[n] = xs[0] * ws[n];
    std::vector<int8gemm::PackedB> scratch;
    const std::vector<int8gemm::PackedB>& packed = qweights_.Get(w, Din, Dsum, 1, ctx.threads(), &scratch);
    int8gemm::GemmArgs args;
    args.M = rows;
    args.a = x.raw();
    args.a_signed = x.type() == ElemType::kInt8;
    args.lda = Din;
    args.za = zx.data();
    args.zb = zw.data();
    args.zb_per_column = true;
    args.epilogue = [&](int64_t m0, int64_t m1, int64_t n0, int64_t n1, const int32_t* c, int64_t ldc) {
      for (int64_t m = m0; m < m1; ++m) {
        const int32_t* cr = c + (m - m0) * ldc;
        float* yr = qkv + m * Dsum;
        for (int64_t n = n0; n < n1; ++n)
          yr[n] = static_cast<float>(cr[n - n0]) * col_scale[n] + (bias != nullptr ? bias[n] : 0.f);
      }
    };
    int8gemm::Gemm(args, packed[0], ctx.threads());
    return Status::OK();
  }

  AttentionAttrs attrs_;
  std::vector<int64_t> qkv_sizes_;
  sgemm::Packed packed_w_;  // constant float weights, packed (about their size again)
  bool quantized_ = false;
  int8gemm::PackedWeights qweights_;  // QAttention's constant integer weights
};

class MultiHeadAttentionKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) { return attrs_.Parse(info, "MultiHeadAttention"); }

  Status Compute(KernelContext& ctx) const override {
    const char* op = "MultiHeadAttention";
    const Tensor* query = nullptr;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &query));
    auto opt = [&](int i) { return ctx.InputCount() > i ? ctx.Input(i) : nullptr; };
    const Tensor* key = opt(1);
    const Tensor* value = opt(2);
    const Tensor* bias = opt(3);
    const Tensor* mask = opt(4);
    const Tensor* attn_bias = opt(5);
    const Tensor* past_key = opt(6);
    const Tensor* past_value = opt(7);
    ONYX_CHECK_ARG(opt(8) == nullptr && opt(9) == nullptr, op,
                   ": inputs 8 (past_sequence_length) and 9 (cache_indirection), for shared KV buffers and beam "
                   "search, are not supported");
    const char* names[] = {"query", "key", "value", "bias", "", "attention_bias", "past_key", "past_value"};
    for (int i : {0, 1, 2, 3, 5, 6, 7}) ONYX_RETURN_IF_ERROR(CheckFloat(opt(i), op, i, names[i]));
    const Dims& qd = query->dims();
    const int64_t N = attrs_.num_heads;
    ONYX_CHECK_ARG(qd.size() == 3 || (qd.size() == 5 && qd[2] == N && qd[3] == 3), op, ": input 0 (query) of shape ",
                   ShapeToString(qd), " must be [batch, sequence, hidden] or packed QKV [batch, sequence, ", N,
                   ", 3, head_size]");
    const bool packed_qkv = qd.size() == 5;
    const int64_t B = qd[0], S = qd[1];
    const int64_t D = packed_qkv ? N * qd[4] : qd[2];
    ONYX_CHECK_ARG(D % N == 0, op, ": input 0 (query) hidden size ", D, " is not a multiple of num_heads ", N);
    const int64_t H = D / N;
    ONYX_CHECK_ARG(packed_qkv == (key == nullptr), op,
                   packed_qkv ? ": input 1 (key) must be omitted when input 0 (query) holds packed QKV"
                              : ": input 1 (key) is required unless input 0 (query) holds packed QKV [batch, sequence, "
                                "num_heads, 3, head_size]");
    // Key/value layout: 3 = [B, L, D], 4 = [B, N, L, H] (cached, no bias/past), 5 = packed KV [B, L, N, 2, H].
    const int key_rank = key != nullptr ? static_cast<int>(key->rank()) : 0;
    int64_t L = S, Dv = D;
    if (key != nullptr) {
      const Dims& kd = key->dims();
      const bool ok3 = kd.size() == 3 && kd[0] == B && kd[2] == D;
      const bool ok4 = kd.size() == 4 && kd[0] == B && kd[1] == N && kd[3] == H;
      const bool ok5 = kd.size() == 5 && kd[0] == B && kd[2] == N && kd[3] == 2 && kd[4] == H;
      ONYX_CHECK_ARG(ok3 || ok4 || ok5, op, ": input 1 (key) of shape ", ShapeToString(kd), " must be [", B,
                     ", kv_sequence, ", D, "], [", B, ", ", N, ", kv_sequence, ", H, "] or packed KV [", B,
                     ", kv_sequence, ", N, ", 2, ", H, "] (query ", ShapeToString(qd), ")");
      L = ok4 ? kd[2] : kd[1];
      ONYX_CHECK_ARG((value == nullptr) == ok5, op,
                     ok5 ? ": input 2 (value) must be omitted when input 1 (key) holds packed KV"
                         : ": input 2 (value) is required with input 1 (key)");
      if (value != nullptr) {
        const Dims& vd = value->dims();
        const bool v3 = ok3 && vd.size() == 3 && vd[0] == B && vd[1] == L && vd[2] % N == 0;
        const bool v4 = ok4 && vd.size() == 4 && vd[0] == B && vd[1] == N && vd[2] == L;
        ONYX_CHECK_ARG(v3 || v4, op, ": input 2 (value) of shape ", ShapeToString(vd), " must be ",
                       ok3 ? StrCat("[", B, ", ", L, ", v_hidden] with v_hidden a multiple of ", N)
                           : StrCat("[", B, ", ", N, ", ", L, ", v_head_size]"),
                       " to match input 1 (key) ", ShapeToString(kd));
        Dv = v3 ? vd[2] : N * vd[3];
      }
      ONYX_CHECK_ARG(!ok4 || (bias == nullptr && past_key == nullptr && past_value == nullptr), op,
                     ": inputs 3 (bias), 6 (past_key) and 7 (past_value) must be omitted when input 1 (key) is 4-D "
                     "(cached keys and values)");
    }
    const int64_t Hv = Dv / N;
    if (bias != nullptr)
      ONYX_CHECK_ARG(bias->rank() == 1 && bias->dims()[0] == 2 * D + Dv, op, ": input 3 (bias) of shape ",
                     ShapeToString(bias->dims()), " must be [", 2 * D + Dv, "] (query, key and value biases)");
    ONYX_CHECK_ARG((past_key == nullptr) == (past_value == nullptr), op,
                   ": inputs 6 (past_key) and 7 (past_value) must be given together");
    int64_t P = 0;
    if (past_key != nullptr) {
      const Dims& pk = past_key->dims();
      const Dims& pv = past_value->dims();
      ONYX_CHECK_ARG(pk.size() == 4 && pk[0] == B && pk[1] == N && pk[3] == H, op, ": input 6 (past_key) of shape ",
                     ShapeToString(pk), " must be [", B, ", ", N, ", past_sequence, ", H, "]");
      P = pk[2];
      ONYX_CHECK_ARG(pv.size() == 4 && pv[0] == B && pv[1] == N && pv[2] == P && pv[3] == Hv, op,
                     ": input 7 (past_value) of shape ", ShapeToString(pv), " must be [", B, ", ", N, ", ", P, ", ",
                     Hv, "] (past_key ", ShapeToString(pk), ")");
    }
    const int64_t T = P + L;
    std::vector<float> mask3;
    ONYX_RETURN_IF_ERROR(BuildMask(mask, B, S, T, P, attrs_.unidirectional, attrs_.mask_filter, false, op, 4,
                                   "key_padding_mask", &mask3));
    ONYX_RETURN_IF_ERROR(CheckAttentionBias(attn_bias, B, N, S, T, op, 5));
    ONYX_CHECK_ARG(FitsBlasInt(S) && FitsBlasInt(T) && FitsBlasInt(H) && FitsBlasInt(Hv), op,
                   ": dimensions of input 0 (query) ", ShapeToString(qd), " are too large");
    ONYX_CHECK_ARG(ctx.OutputCount() <= 3 || ctx.Output(3, {B, N, S, T}, ElemType::kFloat) == nullptr, op,
                   ": output 3 (qk) is not supported");

    Tensor* out = ctx.Output(0, {B, S, Dv}, ElemType::kFloat);
    Tensor* present_k = ctx.OutputCount() > 1 ? ctx.Output(1, {B, N, T, H}, ElemType::kFloat) : nullptr;
    Tensor* present_v = ctx.OutputCount() > 2 ? ctx.Output(2, {B, N, T, Hv}, ElemType::kFloat) : nullptr;
    if (out == nullptr || out->size() == 0) return Status::OK();

    const float* bv = bias != nullptr ? bias->data<float>() : nullptr;
    AttentionProblem a;
    a.B = B, a.N = N, a.S = S, a.P = P, a.T = T, a.H = H, a.Hv = Hv;
    a.scale = attrs_.ScaleFor(H);
    const float* qv = query->data<float>();
    if (packed_qkv) {
      a.q = RowSource{qv, S * N * 3 * H, 3 * H, N * 3 * H, bv};
      a.k_new = RowSource{qv + H, S * N * 3 * H, 3 * H, N * 3 * H, bv != nullptr ? bv + D : nullptr};
      a.v_new = RowSource{qv + 2 * H, S * N * 3 * H, 3 * H, N * 3 * H, bv != nullptr ? bv + 2 * D : nullptr};
    } else {
      a.q = TokenRows(qv, S, D, H, bv);
      const float* kv = key->data<float>();
      if (key_rank == 5) {
        a.k_new = RowSource{kv, L * N * 2 * H, 2 * H, N * 2 * H, bv != nullptr ? bv + D : nullptr};
        a.v_new = RowSource{kv + H, L * N * 2 * H, 2 * H, N * 2 * H, bv != nullptr ? bv + 2 * D : nullptr};
      } else if (key_rank == 4) {
        a.k_new = HeadRows(kv, N, L, H);
        a.v_new = HeadRows(value->data<float>(), N, L, Hv);
      } else {
        a.k_new = TokenRows(kv, L, D, H, bv != nullptr ? bv + D : nullptr);
        a.v_new = TokenRows(value->data<float>(), L, Dv, Hv, bv != nullptr ? bv + 2 * D : nullptr);
      }
    }
    if (past_key != nullptr) {
      a.k_past = HeadRows(past_key->data<float>(), N, P, H);
      a.v_past = HeadRows(past_value->data<float>(), N, P, Hv);
    }
    a.mask3 = &mask3;
    a.attn_bias = attn_bias;
    a.present_k = present_k != nullptr ? present_k->data<float>() : nullptr;
    a.present_v = present_v != nullptr ? present_v->data<float>() : nullptr;
    a.out = out->data<float>();
    AttendHeads(a, ctx.threads());
    return Status::OK();
  }

 private:
  AttentionAttrs attrs_;
};

}  // namespace

ONYX_REGISTER_KERNEL(AttentionKernel, "com.microsoft", "Attention", 1, kMaxVersion, {ElemType::kFloat}, false);
ONYX_REGISTER_KERNEL(AttentionKernel, "com.microsoft", "QAttention", 1, kMaxVersion,
                     std::vector<ElemType>{ElemType::kInt8, ElemType::kUint8}, true);
ONYX_REGISTER_KERNEL(MultiHeadAttentionKernel, "com.microsoft", "MultiHeadAttention", 1, kMaxVersion,
                     {ElemType::kFloat});

}  // namespace onyx

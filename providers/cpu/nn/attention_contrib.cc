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

class AttentionKernel final : public OpKernel {
 public:
  explicit AttentionKernel(bool quantized) : quantized_(quantized) {}

  Status Init(const KernelInfo& info) {
    const Attribute* heads = info.Attr("num_heads");
    ONYX_CHECK(heads != nullptr && heads->i > 0, ErrorCode::kInvalidGraph,
               "Attention: attribute num_heads is required and must be > 0");
    num_heads_ = heads->i;
    unidirectional_ = info.AttrInt("unidirectional", 0) != 0;
    qkv_sizes_ = info.AttrInts("qkv_hidden_sizes");
    ONYX_CHECK(qkv_sizes_.empty() || qkv_sizes_.size() == 3, ErrorCode::kInvalidGraph,
               "Attention: attribute qkv_hidden_sizes must hold 3 values, got ", qkv_sizes_.size());
    for (int64_t v : qkv_sizes_)
      ONYX_CHECK(v > 0 && v % num_heads_ == 0, ErrorCode::kInvalidGraph, "Attention: qkv_hidden_sizes value ", v,
                 " is not a positive multiple of num_heads ", num_heads_);
    scale_ = info.AttrFloat("scale", 0.f);
    mask_filter_ = info.AttrFloat("mask_filter_value", -10000.f);
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
    auto is_float = [&](const Tensor* t, int i, const char* name) -> Status {
      if (t != nullptr)
        ONYX_CHECK_ARG(t->type() == ElemType::kFloat, op, ": input ", i, " (", name, ") must be float, got ",
                       ElemTypeName(t->type()));
      return Status::OK();
    };
    if (!quantized_) {
      ONYX_RETURN_IF_ERROR(is_float(x, 0, "input"));
      ONYX_RETURN_IF_ERROR(is_float(w, 1, "weights"));
    } else {
      for (int i : {0, 1})
        ONYX_CHECK_ARG(ctx.Input(i)->type() == ElemType::kInt8 || ctx.Input(i)->type() == ElemType::kUint8, op,
                       ": input ", i, i == 0 ? " (input)" : " (weight)", " must be int8 or uint8, got ",
                       ElemTypeName(ctx.Input(i)->type()));
    }
    ONYX_RETURN_IF_ERROR(is_float(bias, 2, "bias"));
    ONYX_RETURN_IF_ERROR(is_float(past, 4, "past"));
    ONYX_RETURN_IF_ERROR(is_float(attn_bias, 5, "attention_bias"));
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
    ONYX_CHECK_ARG(Dq + Dk + Dv == Dsum && Dq == Dk && Dq % num_heads_ == 0 && Dv % num_heads_ == 0, op,
                   ": input 1 (weights) of shape ", ShapeToString(w->dims()), " does not split into Q, K, V of ",
                   "hidden sizes ", Dq, ", ", Dk, ", ", Dv, " (Q and K equal, each a multiple of num_heads ",
                   num_heads_, ")");
    if (bias != nullptr)
      ONYX_CHECK_ARG(bias->rank() == 1 && bias->dims()[0] == Dsum, op, ": input 2 (bias) of shape ",
                     ShapeToString(bias->dims()), " must be [", Dsum, "]");
    const int64_t N = num_heads_, H = Dq / N, Hv = Dv / N;
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
    ONYX_RETURN_IF_ERROR(BuildMask(mask, B, S, T, P, op, quantized_ ? 5 : 3, &mask3));
    if (attn_bias != nullptr) {
      const Dims& ad = attn_bias->dims();
      ONYX_CHECK_ARG(ad.size() == 4 && (ad[0] == B || ad[0] == 1) && (ad[1] == N || ad[1] == 1) && ad[2] == S &&
                         ad[3] == T,
                     op, ": input 5 (attention_bias) of shape ", ShapeToString(ad), " must be [", B, " or 1, ", N,
                     " or 1, ", S, ", ", T, "]");
    }
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

    const float scale = scale_ == 0.f ? 1.f / std::sqrt(static_cast<float>(H)) : scale_;
    const float* pastv = past != nullptr ? past->data<float>() : nullptr;
    float* presv = present != nullptr ? present->data<float>() : nullptr;
    const float* abv = attn_bias != nullptr ? attn_bias->data<float>() : nullptr;
    float* outv = out->data<float>();
    const double work = static_cast<double>(S) * T * (H + Hv);
    ThreadPool::For(ctx.threads(), B * N, std::max<int64_t>(1, static_cast<int64_t>(65536.0 / (work + 1))),
                    [&](int64_t begin, int64_t end) {
      std::vector<float> k(static_cast<size_t>(T * H)), v(static_cast<size_t>(T * Hv)), probs(static_cast<size_t>(S * T));
      for (int64_t i = begin; i < end; ++i) {
        const int64_t b = i / N, n = i % N;
        // K and V of this head, past rows first: [T, H], [T, Hv].
        for (int64_t t = 0; t < T; ++t) {
          const float* ks;
          const float* vs;
          if (t < P) {
            ks = pastv + ((b * N + n) * P + t) * H;
            vs = pastv + (((B + b) * N + n) * P + t) * H;
          } else {
            ks = qkv + (b * S + t - P) * Dsum + Dq + n * H;
            vs = qkv + (b * S + t - P) * Dsum + Dq + Dk + n * Hv;
          }
          std::copy(ks, ks + H, k.data() + t * H);
          std::copy(vs, vs + Hv, v.data() + t * Hv);
        }
        if (presv != nullptr) {
          std::copy(k.begin(), k.end(), presv + (b * N + n) * T * H);
          std::copy(v.begin(), v.end(), presv + ((B + b) * N + n) * T * H);
        }
        // scores = scale * Q K^T (+ attention_bias + mask), then softmax per row.
        float beta = 0.f;
        if (abv != nullptr) {
          const Dims& ad = attn_bias->dims();
          const int64_t off = ((ad[0] == 1 ? 0 : b) * ad[1] + (ad[1] == 1 ? 0 : n)) * S * T;
          std::copy(abv + off, abv + off + S * T, probs.data());
          beta = 1.f;
        }
        if (!mask3.empty()) {
          const float* m = mask3.data() + b * S * T;
          if (beta == 0.f) std::copy(m, m + S * T, probs.data());
          else
            for (int64_t j = 0; j < S * T; ++j) probs[j] += m[j];
          beta = 1.f;
        }
        BlasGemm<float>(false, true, S, T, H, scale, qkv + b * S * Dsum + n * H, Dsum, k.data(), H, beta,
                        probs.data(), T);
        for (int64_t s = 0; s < S; ++s) fastmath::SoftmaxArray(probs.data() + s * T, probs.data() + s * T, T);
        BlasGemm<float>(false, false, S, Hv, T, 1.f, probs.data(), T, v.data(), Hv, 0.f,
                        outv + b * S * Dv + n * Hv, Dv);
      }
    });
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

  Status BuildMask(const Tensor* mask, int64_t B, int64_t S, int64_t T, int64_t P, const char* op, int index,
                   std::vector<float>* out) const {
    const bool causal = unidirectional_ && S > 1;
    if (mask == nullptr && !causal) return Status::OK();
    out->assign(static_cast<size_t>(B * S * T), 0.f);
    if (mask != nullptr) {
      ONYX_CHECK_ARG(mask->type() == ElemType::kInt32, op, ": input ", index, " (mask_index) must be int32, got ",
                     ElemTypeName(mask->type()));
      const Dims& md = mask->dims();
      const int32_t* mv = mask->data<int32_t>();
      const bool ends = md.size() == 1 && md[0] == B;
      const bool ends_starts = md.size() == 1 && md[0] == 2 * B;
      const bool raw2 = md.size() == 2 && md[0] == B && md[1] == T;
      const bool raw3 = md.size() == 3 && md[0] == B && md[1] == S && md[2] == T;
      ONYX_CHECK_ARG(ends || ends_starts || raw2 || raw3, op, ": input ", index, " (mask_index) of shape ",
                     ShapeToString(md), " must be [", B, "], [", 2 * B, "], [", B, ", ", T, "] or [", B, ", ", S,
                     ", ", T, "]");
      for (int64_t b = 0; b < B; ++b)
        for (int64_t s = 0; s < S; ++s) {
          float* row = out->data() + (b * S + s) * T;
          for (int64_t t = 0; t < T; ++t) {
            bool keep;
            if (raw3) keep = mv[(b * S + s) * T + t] > 0;
            else if (raw2) keep = mv[b * T + t] > 0;
            else keep = t < mv[b] && (!ends_starts || t >= mv[B + b]);
            row[t] = keep ? 0.f : mask_filter_;
          }
        }
    }
    if (causal)
      for (int64_t b = 0; b < B; ++b)
        for (int64_t s = 0; s < S; ++s)
          for (int64_t t = P + s + 1; t < T; ++t) (*out)[(b * S + s) * T + t] = std::numeric_limits<float>::lowest();
    return Status::OK();
  }

  int64_t num_heads_ = 1;
  bool unidirectional_ = false;
  std::vector<int64_t> qkv_sizes_;
  float scale_ = 0.f;
  float mask_filter_ = -10000.f;
  sgemm::Packed packed_w_;  // constant float weights, packed (about their size again)
  bool quantized_ = false;
  int8gemm::PackedWeights qweights_;  // QAttention's constant integer weights
};

}  // namespace

ONYX_REGISTER_KERNEL(AttentionKernel, "com.microsoft", "Attention", 1, kMaxVersion, {ElemType::kFloat}, false);
ONYX_REGISTER_KERNEL(AttentionKernel, "com.microsoft", "QAttention", 1, kMaxVersion,
                     std::vector<ElemType>{ElemType::kInt8, ElemType::kUint8}, true);

}  // namespace onyx

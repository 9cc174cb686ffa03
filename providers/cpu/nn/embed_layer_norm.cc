// onnxruntime's com.microsoft EmbedLayerNormalization (version 1), which its
// transformer optimizer fuses from BERT's embedding lookups and LayerNorm:
//   inputs  input_ids [B, S] int32, segment_ids? [B, S] int32, word_embedding [V, H],
//           position_embedding [P, H], segment_embedding? [G, H], gamma [H], beta [H],
//           mask? [B, S] int32, position_ids? [B, S] or [1, S] int32
//   outputs output [B, S, H], mask_index? [B] int32 (count of mask == 1 per row;
//           0 without a mask), embedding_sum? [B, S, H] (the sum before the norm)
//   e = word[id] + position[position_ids or s] (+ segment[segment_id]);
//   output = (e - mean(e)) / sqrt(var(e) + epsilon) * gamma + beta.
// float only, as onnxruntime's CPU kernel. An id outside its table is an error
// naming the input, the position and the value.
//
// QEmbedLayerNormalization (com.microsoft, version 1), what quantize_dynamic
// writes for it: the five tables quantized (uint8/int8, one type), each with
// a scalar scale and zero point, dequantized as read ((q - zp) * scale, in
// float, as onnxruntime's kernel):
//   inputs  input_ids, segment_ids?, word_embedding_quant, position_embedding_quant,
//           segment_embedding_quant?, gamma_quant, beta_quant, mask?,
//           word/position/segment/gamma/beta scales (8-12), their zero points (13-17)
//   outputs output, mask_index? (no position_ids, no embedding_sum)
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "providers/cpu/common/dispatch.h"
#include "providers/cpu/quantization/qlinear_common.h"
#include "providers/kernel.h"

namespace onyx {
namespace {

// Rows of an embedding table as floats: stored float, or quantized.
struct FloatRows {
  const float* p = nullptr;
  float at(int64_t i) const { return p[i]; }
};
template <typename Q>
struct QuantRows {
  const Q* p = nullptr;
  float scale = 1.f;
  int32_t zp = 0;
  float at(int64_t i) const { return static_cast<float>(static_cast<int32_t>(p[i]) - zp) * scale; }
};

class EmbedLayerNormKernel final : public OpKernel {
 public:
  explicit EmbedLayerNormKernel(bool quantized) : quantized_(quantized) {}

  Status Init(const KernelInfo& info) {
    epsilon_ = info.AttrFloat("epsilon", 1e-12f);
    ONYX_CHECK(epsilon_ >= 0.f, ErrorCode::kInvalidGraph,
               "EmbedLayerNormalization: attribute epsilon must be >= 0, got ", epsilon_);
    return Status::OK();
  }

  Status Compute(KernelContext& ctx) const override {
    const char* op = quantized_ ? "QEmbedLayerNormalization" : "EmbedLayerNormalization";
    const Tensor* ids = nullptr;
    const Tensor* word = nullptr;
    const Tensor* pos = nullptr;
    const Tensor* gamma = nullptr;
    const Tensor* beta = nullptr;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &ids));
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(2, &word));
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(3, &pos));
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(5, &gamma));
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(6, &beta));
    const Tensor* seg_ids = ctx.Input(1);
    const Tensor* seg = ctx.InputCount() > 4 ? ctx.Input(4) : nullptr;
    const Tensor* mask = ctx.InputCount() > 7 ? ctx.Input(7) : nullptr;
    const Tensor* pos_ids = !quantized_ && ctx.InputCount() > 8 ? ctx.Input(8) : nullptr;

    ONYX_CHECK_ARG(ids->rank() == 2, op, ": input 0 (input_ids) of shape ", ShapeToString(ids->dims()),
                   " must be 2-D [batch, sequence]");
    const int64_t B = ids->dims()[0], S = ids->dims()[1];
    ONYX_CHECK_ARG(word->rank() == 2, op, ": input 2 (word_embedding) of shape ", ShapeToString(word->dims()),
                   " must be 2-D");
    const int64_t H = word->dims()[1];
    auto check_int = [&](const Tensor* t, int i, const char* name, bool seq_shaped) -> Status {
      if (t == nullptr) return Status::OK();
      ONYX_CHECK_ARG(t->type() == ElemType::kInt32, op, ": input ", i, " (", name, ") must be int32, got ",
                     ElemTypeName(t->type()));
      if (seq_shaped)
        ONYX_CHECK_ARG(t->dims() == ids->dims(), op, ": input ", i, " (", name, ") of shape ",
                       ShapeToString(t->dims()), " must match input 0 (input_ids) ", ShapeToString(ids->dims()));
      return Status::OK();
    };
    // The tables' element type: float, or (quantized) word_embedding's, 8-bit.
    const ElemType table_type = quantized_ ? word->type() : ElemType::kFloat;
    if (quantized_)
      ONYX_CHECK_ARG(table_type == ElemType::kUint8 || table_type == ElemType::kInt8, op,
                     ": input 2 (word_embedding_quant) must be uint8 or int8, got ", ElemTypeName(table_type));
    auto check_table = [&](const Tensor* t, int i, const char* name) -> Status {
      if (t == nullptr) return Status::OK();
      ONYX_CHECK_ARG(t->type() == table_type, op, ": input ", i, " (", name, ") must be ", ElemTypeName(table_type),
                     ", got ", ElemTypeName(t->type()));
      ONYX_CHECK_ARG(t->rank() == 2 && t->dims()[1] == H, op, ": input ", i, " (", name, ") of shape ",
                     ShapeToString(t->dims()), " must be 2-D with ", H, " columns (the hidden size of input 2)");
      return Status::OK();
    };
    auto check_vec = [&](const Tensor* t, int i, const char* name) -> Status {
      ONYX_CHECK_ARG(t->type() == table_type && t->rank() == 1 && t->dims()[0] == H, op, ": input ", i, " (", name,
                     ") must be a ", ElemTypeName(table_type), " [", H, "], got ", ElemTypeName(t->type()),
                     ShapeToString(t->dims()));
      return Status::OK();
    };
    ONYX_RETURN_IF_ERROR(check_int(ids, 0, "input_ids", false));
    ONYX_RETURN_IF_ERROR(check_int(seg_ids, 1, "segment_ids", true));
    ONYX_RETURN_IF_ERROR(check_int(mask, 7, "mask", true));
    ONYX_RETURN_IF_ERROR(check_int(pos_ids, 8, "position_ids", false));
    ONYX_RETURN_IF_ERROR(check_table(word, 2, "word_embedding"));
    ONYX_RETURN_IF_ERROR(check_table(pos, 3, "position_embedding"));
    ONYX_RETURN_IF_ERROR(check_table(seg, 4, "segment_embedding"));
    ONYX_RETURN_IF_ERROR(check_vec(gamma, 5, "gamma"));
    ONYX_RETURN_IF_ERROR(check_vec(beta, 6, "beta"));
    ONYX_CHECK_ARG((seg_ids == nullptr) == (seg == nullptr), op,
                   ": inputs 1 (segment_ids) and 4 (segment_embedding) must be given together");
    if (pos_ids != nullptr)
      ONYX_CHECK_ARG(pos_ids->rank() == 2 && (pos_ids->dims()[0] == B || pos_ids->dims()[0] == 1) &&
                         pos_ids->dims()[1] == S,
                     op, ": input 8 (position_ids) of shape ", ShapeToString(pos_ids->dims()), " must be [", B,
                     ", ", S, "] or [1, ", S, "]");

    // Every index, checked before anything is written.
    const int32_t* idv = ids->data<int32_t>();
    const int32_t* sidv = seg_ids != nullptr ? seg_ids->data<int32_t>() : nullptr;
    const int32_t* pidv = pos_ids != nullptr ? pos_ids->data<int32_t>() : nullptr;
    const int64_t V = word->dims()[0], P = pos->dims()[0], G = seg != nullptr ? seg->dims()[0] : 0;
    std::vector<int64_t> prow(static_cast<size_t>(B * S));
    for (int64_t i = 0; i < B * S; ++i) {
      ONYX_CHECK_ARG(idv[i] >= 0 && idv[i] < V, op, ": input 0 (input_ids) holds ", idv[i], " at flat index ", i,
                     ", outside the word_embedding table of ", V, " rows");
      if (sidv != nullptr)
        ONYX_CHECK_ARG(sidv[i] >= 0 && sidv[i] < G, op, ": input 1 (segment_ids) holds ", sidv[i], " at flat index ",
                       i, ", outside the segment_embedding table of ", G, " rows");
      const int64_t s = i % S;
      prow[i] = pidv != nullptr ? pidv[pos_ids->dims()[0] == 1 ? s : i] : s;
      ONYX_CHECK_ARG(prow[i] >= 0 && prow[i] < P, op, pidv != nullptr ? ": input 8 (position_ids) holds " :
                     ": position ", prow[i], " at flat index ", i, ", outside the position_embedding table of ", P,
                     " rows");
    }

    Tensor* out = ctx.Output(0, {B, S, H}, ElemType::kFloat);
    Tensor* mask_index = ctx.OutputCount() > 1 ? ctx.Output(1, {B}, ElemType::kInt32) : nullptr;
    Tensor* sum_out = ctx.OutputCount() > 2 ? ctx.Output(2, {B, S, H}, ElemType::kFloat) : nullptr;
    if (mask_index != nullptr) {
      int32_t* mi = mask_index->data<int32_t>();
      const int32_t* mv = mask != nullptr ? mask->data<int32_t>() : nullptr;
      for (int64_t b = 0; b < B; ++b)
        mi[b] = mv == nullptr ? 0 : static_cast<int32_t>(std::count(mv + b * S, mv + (b + 1) * S, 1));
    }
    if (out == nullptr || out->size() == 0) return Status::OK();
    float* yv = out->data<float>();
    float* sv = sum_out != nullptr ? sum_out->data<float>() : nullptr;
    if (!quantized_) {
      return Run(ctx, FloatRows{word->data<float>()}, FloatRows{pos->data<float>()},
                 FloatRows{seg != nullptr ? seg->data<float>() : nullptr}, seg != nullptr, gamma->data<float>(),
                 beta->data<float>(), idv, sidv, prow, B * S, H, yv, sv);
    }
    // Inputs 8-12: scales, 13-17: zero points, of inputs 2-6.
    const char* names[5] = {"word_embedding", "position_embedding", "segment_embedding", "gamma", "beta"};
    const Tensor* tables[5] = {word, pos, seg, gamma, beta};
    float scales[5] = {1.f, 1.f, 1.f, 1.f, 1.f};
    int32_t zps[5] = {0, 0, 0, 0, 0};
    for (int k = 0; k < 5; ++k) {
      if (tables[k] == nullptr) continue;
      std::vector<float> sc;
      std::vector<int32_t> zp;
      const std::string sn = std::string(names[k]) + "_scale", zn = std::string(names[k]) + "_zero_point";
      ONYX_RETURN_IF_ERROR(qlinear::ReadScales(ctx.InputCount() > 8 + k ? ctx.Input(8 + k) : nullptr, op, 8 + k,
                                               sn.c_str(), -1, "", 1, false, &sc));
      ONYX_RETURN_IF_ERROR(qlinear::ReadZeroPoints(ctx.InputCount() > 13 + k ? ctx.Input(13 + k) : nullptr,
                                                   tables[k], op, 13 + k, zn.c_str(), -1, "", 1, &zp));
      scales[k] = sc[0];
      zps[k] = zp[0];
    }
    return DispatchOver(qlinear::Int8TypeSet{}, table_type, op, [&](auto tag) -> Status {
      using Q = typename decltype(tag)::type;
      auto rows = [&](int k) {
        return QuantRows<Q>{tables[k] != nullptr ? tables[k]->data<Q>() : nullptr, scales[k], zps[k]};
      };
      std::vector<float> gam(static_cast<size_t>(H)), bet(static_cast<size_t>(H));
      for (int64_t h = 0; h < H; ++h) {
        gam[h] = rows(3).at(h);
        bet[h] = rows(4).at(h);
      }
      return Run(ctx, rows(0), rows(1), rows(2), seg != nullptr, gam.data(), bet.data(), idv, sidv, prow, B * S, H,
                 yv, sv);
    });
  }

 private:
  // e = word[id] + position[prow] (+ segment[segment_id]) per token, then
  // the normalization; `sv` (may be null) receives e.
  template <typename Rows>
  Status Run(KernelContext& ctx, Rows wr, Rows pr, Rows gr, bool has_seg, const float* gam, const float* bet,
             const int32_t* idv, const int32_t* sidv, const std::vector<int64_t>& prow, int64_t tokens, int64_t H,
             float* yv, float* sv) const {
    ThreadPool::For(ctx.threads(), tokens, std::max<int64_t>(1, 16384 / std::max<int64_t>(H, 1)),
                    [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        const int64_t w = idv[i] * H, p = prow[i] * H, g = has_seg ? sidv[i] * H : 0;
        float* y = yv + i * H;
        float total = 0.f;
        for (int64_t h = 0; h < H; ++h) {
          const float e = has_seg ? wr.at(w + h) + pr.at(p + h) + gr.at(g + h) : wr.at(w + h) + pr.at(p + h);
          y[h] = e;
          total += e;
        }
        if (sv != nullptr) std::copy(y, y + H, sv + i * H);
        const float mean = total / static_cast<float>(H);
        float sq = 0.f;
        for (int64_t h = 0; h < H; ++h) {
          y[h] -= mean;
          sq += y[h] * y[h];
        }
        const float e = std::sqrt(sq / static_cast<float>(H) + epsilon_);
        for (int64_t h = 0; h < H; ++h) y[h] = y[h] / e * gam[h] + bet[h];
      }
    });
    return Status::OK();
  }

  bool quantized_ = false;
  float epsilon_ = 1e-12f;
};

}  // namespace

// The type constraint binds input 0 (input_ids, int32).
ONYX_REGISTER_KERNEL(EmbedLayerNormKernel, "com.microsoft", "EmbedLayerNormalization", 1, kMaxVersion,
                     {ElemType::kInt32}, false);
ONYX_REGISTER_KERNEL(EmbedLayerNormKernel, "com.microsoft", "QEmbedLayerNormalization", 1, kMaxVersion,
                     {ElemType::kInt32}, true);

}  // namespace onyx

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
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "providers/kernel.h"

namespace onyx {
namespace {

class EmbedLayerNormKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    epsilon_ = info.AttrFloat("epsilon", 1e-12f);
    ONYX_CHECK(epsilon_ >= 0.f, ErrorCode::kInvalidGraph,
               "EmbedLayerNormalization: attribute epsilon must be >= 0, got ", epsilon_);
    return Status::OK();
  }

  Status Compute(KernelContext& ctx) const override {
    const char* op = "EmbedLayerNormalization";
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
    const Tensor* pos_ids = ctx.InputCount() > 8 ? ctx.Input(8) : nullptr;

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
    auto check_table = [&](const Tensor* t, int i, const char* name) -> Status {
      if (t == nullptr) return Status::OK();
      ONYX_CHECK_ARG(t->type() == ElemType::kFloat, op, ": input ", i, " (", name, ") must be float, got ",
                     ElemTypeName(t->type()));
      ONYX_CHECK_ARG(t->rank() == 2 && t->dims()[1] == H, op, ": input ", i, " (", name, ") of shape ",
                     ShapeToString(t->dims()), " must be 2-D with ", H, " columns (the hidden size of input 2)");
      return Status::OK();
    };
    auto check_vec = [&](const Tensor* t, int i, const char* name) -> Status {
      ONYX_CHECK_ARG(t->type() == ElemType::kFloat && t->rank() == 1 && t->dims()[0] == H, op, ": input ", i, " (",
                     name, ") must be a float [", H, "], got ", ElemTypeName(t->type()), ShapeToString(t->dims()));
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
    const float* wv = word->data<float>();
    const float* pv = pos->data<float>();
    const float* gv = seg != nullptr ? seg->data<float>() : nullptr;
    const float* gam = gamma->data<float>();
    const float* bet = beta->data<float>();
    float* yv = out->data<float>();
    float* sv = sum_out != nullptr ? sum_out->data<float>() : nullptr;
    ThreadPool::For(ctx.threads(), B * S, std::max<int64_t>(1, 16384 / std::max<int64_t>(H, 1)),
                    [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        const float* w = wv + idv[i] * H;
        const float* p = pv + prow[i] * H;
        const float* g = gv != nullptr ? gv + sidv[i] * H : nullptr;
        float* y = yv + i * H;
        float total = 0.f;
        for (int64_t h = 0; h < H; ++h) {
          const float e = g != nullptr ? w[h] + p[h] + g[h] : w[h] + p[h];
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

 private:
  float epsilon_ = 1e-12f;
};

}  // namespace

// The type constraint binds input 0 (input_ids, int32).
ONYX_REGISTER_KERNEL(EmbedLayerNormKernel, "com.microsoft", "EmbedLayerNormalization", 1, kMaxVersion,
                     {ElemType::kInt32});

}  // namespace onyx

// onnxruntime's com.microsoft RotaryEmbedding (version 1), which its
// transformer optimizer fuses from the rotate-half pattern of LLaMA/Phi-style
// models: rotary positional embedding of each head's first R values.
//   inputs  input [B, S, N * H] or [B, N, S, H], position_ids int64 [1] (the
//           first position; token s is at position_ids[0] + s) or [B, S],
//           cos_cache / sin_cache [max_positions, R / 2]
//   output  like input
//   attributes rotary_embedding_dim R (0: the head size H; else needs
//           num_heads for a 3-D input), num_heads, interleaved
// For position p and k < R/2, with c = cos_cache[p, k], s = sin_cache[p, k],
// the pair (x1, x2) = (x[k], x[k + R/2]) (interleaved: (x[2k], x[2k + 1]))
// becomes (x1 c - x2 s, x2 c + x1 s); values from R to H pass through.
// float, float16 and bfloat16 (the 16-bit floats compute in float).
#include <algorithm>
#include <vector>

#include "providers/cpu/common/broadcast.h"
#include "providers/cpu/common/dispatch.h"
#include "providers/kernel.h"

namespace onyx {
namespace {

using RotaryTypeSet = TypeSet<float, Float16, BFloat16>;

class RotaryEmbeddingKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    num_heads_ = info.AttrInt("num_heads", 0);
    rotary_dim_ = info.AttrInt("rotary_embedding_dim", 0);
    interleaved_ = info.AttrInt("interleaved", 0) != 0;
    ONYX_CHECK(num_heads_ >= 0 && rotary_dim_ >= 0, ErrorCode::kInvalidGraph,
               "RotaryEmbedding: attributes num_heads and rotary_embedding_dim must be >= 0, got ", num_heads_, " and ",
               rotary_dim_);
    ONYX_CHECK(rotary_dim_ == 0 || num_heads_ > 0, ErrorCode::kInvalidGraph,
               "RotaryEmbedding: attribute num_heads is required with rotary_embedding_dim ", rotary_dim_);
    ONYX_CHECK(info.AttrInt("is_packed_batching", 0) == 0, ErrorCode::kNotImplemented,
               "RotaryEmbedding: is_packed_batching=1 (ragged batches) is not supported");
    return Status::OK();
  }

  Status Compute(KernelContext& ctx) const override {
    const char* op = "RotaryEmbedding";
    const Tensor* x = nullptr;
    const Tensor* pos = nullptr;
    const Tensor* cos = nullptr;
    const Tensor* sin = nullptr;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &x));
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(1, &pos));
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(2, &cos));
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(3, &sin));
    const Dims& xd = x->dims();
    ONYX_CHECK_ARG(xd.size() == 3 || xd.size() == 4, op, ": input 0 (input) of shape ", ShapeToString(xd),
                   " must be [batch, sequence, hidden] or [batch, heads, sequence, head_size]");
    ONYX_CHECK_ARG(cos->type() == x->type() && sin->type() == x->type(), op,
                   ": inputs 2 (cos_cache) and 3 (sin_cache) must have input 0's type ", ElemTypeName(x->type()),
                   ", got ", ElemTypeName(cos->type()), " and ", ElemTypeName(sin->type()));
    ONYX_CHECK_ARG(cos->rank() == 2 && sin->dims() == cos->dims(), op, ": inputs 2 (cos_cache) ",
                   ShapeToString(cos->dims()), " and 3 (sin_cache) ", ShapeToString(sin->dims()),
                   " must be 2-D [max_positions, rotary_dim / 2] of one shape");
    const bool transposed = xd.size() == 4;  // [B, N, S, H]
    const int64_t B = xd[0], S = transposed ? xd[2] : xd[1];
    int64_t H, N;
    if (transposed) {
      N = xd[1];
      H = xd[3];
    } else {
      H = rotary_dim_ == 0 ? cos->dims()[1] * 2 : (num_heads_ > 0 ? xd[2] / num_heads_ : 0);
      ONYX_CHECK_ARG(H > 0 && xd[2] % H == 0, op, ": the hidden size ", xd[2], " of input 0 (input) ",
                     ShapeToString(xd), " does not split into heads of size ", H,
                     rotary_dim_ == 0 ? " (twice the width of input 2 (cos_cache))" : " (hidden / num_heads)");
      N = xd[2] / H;
    }
    const int64_t R = rotary_dim_ == 0 ? H : rotary_dim_;
    ONYX_CHECK_ARG(R % 2 == 0 && R <= H && cos->dims()[1] == R / 2, op, ": rotary dimension ", R,
                   " must be even, at most the head size ", H, " and twice the width of input 2 (cos_cache) ",
                   ShapeToString(cos->dims()));
    const int64_t max_pos = cos->dims()[0];
    ONYX_CHECK_ARG(pos->type() == ElemType::kInt64, op, ": input 1 (position_ids) must be int64, got ",
                   ElemTypeName(pos->type()));
    const Dims& pd = pos->dims();
    const bool start_only = pd.size() == 1 && pd[0] == 1;
    ONYX_CHECK_ARG(start_only || (pd.size() == 2 && pd[0] == B && pd[1] == S), op, ": input 1 (position_ids) of shape ",
                   ShapeToString(pd), " must be [1] or [", B, ", ", S, "]");
    // Every position, [B, S], checked against the caches once.
    std::vector<int64_t> positions(static_cast<size_t>(B * S));
    const int64_t* pv = pos->data<int64_t>();
    for (int64_t i = 0; i < B * S; ++i) {
      const int64_t p = start_only ? pv[0] + i % S : pv[i];
      ONYX_CHECK_ARG(p >= 0 && p < max_pos, op, ": input 1 (position_ids) gives position ", p,
                     start_only ? StrCat(" (", pv[0], " + ", i % S, ")") : std::string(), " for batch ", i / S,
                     ", token ", i % S, ", outside the ", max_pos, " rows of input 2 (cos_cache)");
      positions[i] = p;
    }
    return DispatchOver(RotaryTypeSet{}, x->type(), op, [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      using C = typename CalcType<T>::type;
      Tensor* y = ctx.Output(0, xd, x->type());
      if (y == nullptr || y->size() == 0) return Status::OK();
      const T* xv = x->data<T>();
      const T* cv = cos->data<T>();
      const T* sv = sin->data<T>();
      T* yv = y->data<T>();
      const int64_t half = R / 2;
      ThreadPool::For(ctx.threads(), B * S * N, std::max<int64_t>(1, 4096 / H), [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) {
          const int64_t b = i / (S * N), s = (i / N) % S, n = i % N;
          const int64_t off = transposed ? ((b * N + n) * S + s) * H : ((b * S + s) * N + n) * H;
          const T* xr = xv + off;
          T* yr = yv + off;
          const int64_t p = positions[b * S + s];
          const T* cr = cv + p * half;
          const T* sr = sv + p * half;
          for (int64_t k = 0; k < half; ++k) {
            const int64_t i1 = interleaved_ ? 2 * k : k, i2 = interleaved_ ? 2 * k + 1 : k + half;
            const C c = static_cast<C>(cr[k]), sn = static_cast<C>(sr[k]);
            const C x1 = static_cast<C>(xr[i1]), x2 = static_cast<C>(xr[i2]);
            yr[i1] = static_cast<T>(x1 * c - x2 * sn);
            yr[i2] = static_cast<T>(x2 * c + x1 * sn);
          }
          std::copy(xr + R, xr + H, yr + R);
        }
      });
      return Status::OK();
    });
  }

 private:
  int64_t num_heads_ = 0;
  int64_t rotary_dim_ = 0;
  bool interleaved_ = false;
};

}  // namespace

ONYX_REGISTER_KERNEL(RotaryEmbeddingKernel, "com.microsoft", "RotaryEmbedding", 1, kMaxVersion,
                     RotaryTypeSet::ElemTypes());

}  // namespace onyx

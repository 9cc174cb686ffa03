// The fused transformer operators of the com.microsoft domain on CUDA:
// Attention (BERT's self-attention: one QKV GEMM, scores, masked softmax and
// the context GEMM on cuBLAS), SkipLayerNormalization and its RMS form,
// BiasGelu and FastGelu. Their CPU kernels define the semantics (the same
// shape checks and masks, providers/cpu/nn/attention_contrib.cc,
// skip_layer_norm.cc, math/gelu_contrib.cc); what a CUDA kernel here does
// not cover it declines at creation, and the CPU runs that node.
#include <cmath>
#include <memory>

#include "providers/cpu/nn/skip_layer_norm_inputs.h"
#include "providers/cuda/common/launch.h"
#include "providers/cuda/contrib/transformer_launch.h"
#include "providers/cuda/math/gemm.h"

namespace onyx {
namespace cuda {
namespace {

bool HasOutput(const KernelInfo& info, size_t i) {
  return info.node().outputs.size() > i && !info.node().outputs[i].empty();
}

// com.microsoft Attention without past/present, attention_bias or rotary
// (GPT-2-style caches run on the CPU kernel). float and float16.
class AttentionKernel final : public CudaKernel {
 public:
  using CudaKernel::CudaKernel;
  Status Init(const KernelInfo& info) {
    const Attribute* heads = info.Attr("num_heads");
    ONYX_CHECK(heads != nullptr && heads->i > 0, ErrorCode::kInvalidGraph, info.node().Describe(),
               ": attribute num_heads must be a positive integer");
    num_heads_ = heads->i;
    unidirectional_ = info.AttrInt("unidirectional", 0) != 0;
    scale_ = info.AttrFloat("scale", 0.f);
    mask_filter_ = info.AttrFloat("mask_filter_value", -10000.f);
    qkv_sizes_ = info.AttrInts("qkv_hidden_sizes");
    ONYX_CHECK(qkv_sizes_.empty() || qkv_sizes_.size() == 3, ErrorCode::kInvalidGraph, info.node().Describe(),
               ": attribute qkv_hidden_sizes must have 3 values");
    for (int i : {4, 5, 6})
      ONYX_CHECK(!info.HasInput(i), ErrorCode::kNotImplemented, "CUDA Attention takes no input ", i,
                 " (past, attention_bias, past_sequence_length): the CPU kernel runs it");
    ONYX_CHECK(!HasOutput(info, 1), ErrorCode::kNotImplemented,
               "CUDA Attention writes no present output: the CPU kernel runs it");
    ONYX_CHECK(info.AttrInt("do_rotary", 0) == 0 && info.AttrInt("past_present_share_buffer", 0) == 0,
               ErrorCode::kNotImplemented, "CUDA Attention: do_rotary / past_present_share_buffer run on the CPU");
    return Status::OK();
  }

  Status Compute(KernelContext& ctx) const override {
    const Tensor *x, *w;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &x));
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(1, &w));
    const Tensor* bias = ctx.InputCount() > 2 ? ctx.Input(2) : nullptr;
    const Tensor* mask = ctx.InputCount() > 3 ? ctx.Input(3) : nullptr;
    const ElemType t = x->type();
    ONYX_CHECK_ARG(w->type() == t && (!bias || bias->type() == t), "Attention: inputs 1 (weights) and 2 (bias) must "
                   "have the type of input 0 (", ElemTypeName(t), ")");
    ONYX_CHECK_ARG(x->rank() == 3, "Attention: input 0 (input) of shape ", ShapeToString(x->dims()),
                   " must be 3-D [batch, sequence, hidden]");
    const int64_t B = x->dims()[0], S = x->dims()[1], Din = x->dims()[2];
    ONYX_CHECK_ARG(w->rank() == 2 && w->dims()[0] == Din, "Attention: input 1 (weights) of shape ",
                   ShapeToString(w->dims()), " must be 2-D with ", Din, " rows (the hidden size of input 0)");
    const int64_t Dsum = w->dims()[1];
    int64_t Dq = Dsum / 3, Dk = Dsum / 3, Dv = Dsum / 3;
    if (!qkv_sizes_.empty()) Dq = qkv_sizes_[0], Dk = qkv_sizes_[1], Dv = qkv_sizes_[2];
    const int64_t N = num_heads_;
    ONYX_CHECK_ARG(Dq + Dk + Dv == Dsum && Dq == Dk && Dq % N == 0 && Dv % N == 0,
                   "Attention: input 1 (weights) of shape ", ShapeToString(w->dims()),
                   " does not split into Q, K, V of hidden sizes ", Dq, ", ", Dk, ", ", Dv,
                   " (Q and K equal, each a multiple of num_heads ", N, ")");
    ONYX_CHECK_ARG(!bias || (bias->rank() == 1 && bias->dims()[0] == Dsum), "Attention: input 2 (bias) of shape ",
                   ShapeToString(bias ? bias->dims() : Dims()), " must be [", Dsum, "]");
    const int64_t H = Dq / N, Hv = Dv / N, T = S;
    AttentionMask kind = AttentionMask::kNone;
    if (mask) {
      ONYX_CHECK_ARG(mask->type() == ElemType::kInt32, "Attention: input 3 (mask_index) must be int32, got ",
                     ElemTypeName(mask->type()));
      const Dims& md = mask->dims();
      if (md.size() == 1 && md[0] == B) kind = AttentionMask::kEnds;
      else if (md.size() == 1 && md[0] == 2 * B) kind = AttentionMask::kEndsStarts;
      else if (md.size() == 2 && md[0] == B && md[1] == T) kind = AttentionMask::kRaw2;
      else if (md.size() == 3 && md[0] == B && md[1] == S && md[2] == T) kind = AttentionMask::kRaw3;
      else
        return MakeError(ErrorCode::kInvalidArgument, "Attention: input 3 (mask_index) of shape ", ShapeToString(md),
                         " must be [", B, "], [", 2 * B, "], [", B, ", ", T, "] or [", B, ", ", S, ", ", T, "]");
    }
    Tensor* out = ctx.Output(0, {B, S, Dv}, t);
    if (out == nullptr || out->size() == 0) return Status::OK();

    // qkv = x W, split per head with the bias added; scores = scale Q K^T,
    // masked softmax in place; context = P V, merged back to [B, S, N*Hv].
    Tensor qkv(t, {B * S, Dsum}, env_.alloc);
    ONYX_RETURN_IF_ERROR(
        Gemm(env_, t, false, false, B * S, Dsum, Din, 1.f, x->raw(), 0, w->raw(), 0, 0.f, qkv.raw(), 0, 1));
    Tensor heads(t, {B * N * S * (2 * H + Hv)}, env_.alloc);
    const size_t es = ElemSize(t);
    char* q = static_cast<char*>(heads.raw());
    char* k = q + B * N * S * H * es;
    char* v = k + B * N * S * H * es;
    ONYX_RETURN_IF_ERROR(LaunchSplitHeads(t, B, S, N, H, Hv, qkv.raw(), bias ? bias->raw() : nullptr, q, k, v,
                                          stream()));
    const float scale = scale_ != 0.f ? scale_ : 1.f / std::sqrt(static_cast<float>(H));
    Tensor scores(t, {B * N, S, T}, env_.alloc);
    ONYX_RETURN_IF_ERROR(Gemm(env_, t, false, true, S, T, H, scale, q, S * H, k, T * H, 0.f, scores.raw(), S * T,
                              B * N));
    ONYX_RETURN_IF_ERROR(LaunchAttentionSoftmax(t, B, N, S, T, kind, mask ? mask->data<int32_t>() : nullptr,
                                                unidirectional_ && S > 1, mask_filter_, scores.raw(), stream()));
    Tensor context(t, {B, N, S, Hv}, env_.alloc);
    ONYX_RETURN_IF_ERROR(Gemm(env_, t, false, false, S, Hv, T, 1.f, scores.raw(), S * T, v, T * Hv, 0.f,
                              context.raw(), S * Hv, B * N));
    // out[b, s, n, h] = context[b, n, s, h]
    IndexMap map;
    map.rank = 4;
    const int64_t dims[4] = {B, S, N, Hv}, strides[4] = {N * S * Hv, Hv, S * Hv, 1};
    for (int i = 0; i < 4; ++i) map.dims[i] = dims[i], map.strides[0][i] = strides[i];
    return LaunchStridedCopy(es, map, out->size(), context.raw(), out->raw(), stream());
  }

 private:
  int64_t num_heads_ = 0;
  bool unidirectional_ = false;
  float scale_ = 0.f, mask_filter_ = -10000.f;
  std::vector<int64_t> qkv_sizes_;
};

// SkipLayerNormalization (kSimplified: SkipSimplifiedLayerNormalization).
template <bool kSimplified>
class SkipLayerNormKernel final : public CudaKernel {
 public:
  using CudaKernel::CudaKernel;
  Status Init(const KernelInfo& info) {
    epsilon_ = info.AttrFloat("epsilon", 1e-12f);
    ONYX_CHECK(epsilon_ >= 0.f, ErrorCode::kInvalidGraph, op(), ": attribute epsilon must be >= 0, got ", epsilon_);
    return Status::OK();
  }
  Status Compute(KernelContext& ctx) const override {
    SkipLayerNormInputs in;
    ONYX_RETURN_IF_ERROR(ReadSkipLayerNormInputs(ctx, kSimplified, op(), &in));
    const Tensor* x = in.x;
    const Dims& xd = x->dims();
    const Dims& stat_dims = in.stat_dims;
    Tensor* y = ctx.Output(0, xd, x->type());
    Tensor* mean = ctx.OutputCount() > 1 ? ctx.Output(1, stat_dims, ElemType::kFloat) : nullptr;
    Tensor* inv = ctx.OutputCount() > 2 ? ctx.Output(2, stat_dims, ElemType::kFloat) : nullptr;
    Tensor* sum = ctx.OutputCount() > 3 ? ctx.Output(3, xd, x->type()) : nullptr;
    return LaunchSkipLayerNorm(x->type(), kSimplified, in.rows, in.hidden, in.skip_rows, epsilon_, x->raw(),
                               in.skip->raw(), in.gamma->raw(), in.beta ? in.beta->raw() : nullptr,
                               in.bias ? in.bias->raw() : nullptr,
                               y ? y->raw() : nullptr, sum ? sum->raw() : nullptr,
                               mean ? mean->data<float>() : nullptr, inv ? inv->data<float>() : nullptr, stream());
  }

 private:
  static const char* op() { return kSimplified ? "SkipSimplifiedLayerNormalization" : "SkipLayerNormalization"; }
  float epsilon_ = 1e-12f;
};

// BiasGelu (bias required, erf form) and FastGelu (bias optional, tanh form).
template <bool kFast>
class BiasGeluKernel final : public CudaKernel {
 public:
  using CudaKernel::CudaKernel;
  Status Compute(KernelContext& ctx) const override {
    const char* op = kFast ? "FastGelu" : "BiasGelu";
    const char* bname = kFast ? "bias" : "B";
    const Tensor* x;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &x));
    const Tensor* b = nullptr;
    if (!kFast) ONYX_RETURN_IF_ERROR(ctx.RequiredInput(1, &b));
    else if (ctx.InputCount() > 1) b = ctx.Input(1);
    int64_t d = 1;
    if (b != nullptr) {
      ONYX_CHECK_ARG(b->type() == x->type(), op, ": input 1 (", bname, ") has type ", ElemTypeName(b->type()),
                     " but input 0 has type ", ElemTypeName(x->type()));
      ONYX_CHECK_ARG(x->rank() >= 1, op, ": input 0 must have rank >= 1 to take a bias, got a scalar");
      d = x->dims().back();
      ONYX_CHECK_ARG(b->rank() == 1 && b->dims()[0] == d, op, ": input 1 (", bname, ") of shape ",
                     ShapeToString(b->dims()), " must be [", d, "], the last dimension of input 0 ",
                     ShapeToString(x->dims()));
    }
    Tensor* y = ctx.Output(0, x->dims(), x->type());
    return LaunchBiasGelu(x->type(), kFast, x->size(), d, x->raw(), b ? b->raw() : nullptr, y->raw(), stream());
  }
};

std::vector<ElemType> AttentionTypes() { return {ElemType::kFloat, ElemType::kFloat16}; }

}  // namespace

ONYX_REGISTER_CUDA_KERNEL(AttentionKernel, "com.microsoft", "Attention", 1, kMaxVersion, AttentionTypes());
ONYX_REGISTER_CUDA_KERNEL(SkipLayerNormKernel<false>, "com.microsoft", "SkipLayerNormalization", 1, kMaxVersion,
                          FloatTypes());
ONYX_REGISTER_CUDA_KERNEL(SkipLayerNormKernel<true>, "com.microsoft", "SkipSimplifiedLayerNormalization", 1,
                          kMaxVersion, FloatTypes());
ONYX_REGISTER_CUDA_KERNEL(BiasGeluKernel<false>, "com.microsoft", "BiasGelu", 1, kMaxVersion, FloatTypes());
ONYX_REGISTER_CUDA_KERNEL(BiasGeluKernel<true>, "com.microsoft", "FastGelu", 1, kMaxVersion, FloatTypes());

}  // namespace cuda
}  // namespace onyx

// The inputs of com.microsoft SkipLayerNormalization / SkipSimplifiedLayerNormalization
// and their checks, shared by the CPU kernel (skip_layer_norm.cc) and the CUDA
// one (providers/cuda/contrib/transformer.cc). Header-only: the CUDA provider
// library compiles no CPU kernel sources.
//   input [B, S, H] or [T, H]; skip shaped like input, or [1, S, H] / [S, H]
//   for a 3-D input (repeated over the batch); gamma [H]; beta [H] (not in the
//   simplified form); bias [H] (input 4, or 3 in the simplified form).
#pragma once

#include "providers/kernel.h"

namespace onyx {

struct SkipLayerNormInputs {
  const Tensor* x = nullptr;
  const Tensor* skip = nullptr;
  const Tensor* gamma = nullptr;
  const Tensor* beta = nullptr;  // optional
  const Tensor* bias = nullptr;  // optional
  int64_t hidden = 0;     // H, the normalized (last) dimension
  int64_t rows = 0;       // rows of H values in input
  int64_t skip_rows = 0;  // rows of skip: row r of input adds skip row r % skip_rows
  Dims stat_dims;         // mean / inv_std_var outputs: input's dims with the last as 1
};

inline Status ReadSkipLayerNormInputs(KernelContext& ctx, bool simplified, const char* op, SkipLayerNormInputs* in) {
  ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &in->x));
  ONYX_RETURN_IF_ERROR(ctx.RequiredInput(1, &in->skip));
  ONYX_RETURN_IF_ERROR(ctx.RequiredInput(2, &in->gamma));
  const int bias_at = simplified ? 3 : 4;
  in->beta = !simplified && ctx.InputCount() > 3 ? ctx.Input(3) : nullptr;
  in->bias = ctx.InputCount() > bias_at ? ctx.Input(bias_at) : nullptr;
  const Tensor* x = in->x;
  const Dims& xd = x->dims();
  ONYX_CHECK_ARG(xd.size() == 2 || xd.size() == 3, op, ": input 0 (input) must be 2-D or 3-D, got ",
                 ShapeToString(xd));
  const int64_t hidden = xd.back();
  const Dims& sd = in->skip->dims();
  // skip: input's shape, or (3-D input) its last two dims with an optional leading 1.
  const bool same = sd == xd;
  const bool per_seq = xd.size() == 3 && ((sd.size() == 3 && sd[0] == 1 && sd[1] == xd[1] && sd[2] == xd[2]) ||
                                          (sd.size() == 2 && sd[0] == xd[1] && sd[1] == xd[2]));
  ONYX_CHECK_ARG(same || per_seq, op, ": input 1 (skip) of shape ", ShapeToString(sd), " must match input 0 (input) ",
                 ShapeToString(xd), xd.size() == 3 ? " or its last two dimensions (with an optional leading 1)" : "");
  ONYX_CHECK_ARG(in->skip->type() == x->type(), op, ": input 1 (skip) has type ", ElemTypeName(in->skip->type()),
                 " but input 0 (input) has type ", ElemTypeName(x->type()));
  const struct {
    const Tensor* t;
    int index;
    const char* name;
  } vecs[] = {{in->gamma, 2, "gamma"}, {in->beta, 3, "beta"}, {in->bias, bias_at, "bias"}};
  for (const auto& v : vecs) {
    if (v.t == nullptr) continue;
    ONYX_CHECK_ARG(v.t->type() == x->type(), op, ": input ", v.index, " (", v.name, ") has type ",
                   ElemTypeName(v.t->type()), " but input 0 (input) has type ", ElemTypeName(x->type()));
    ONYX_CHECK_ARG(v.t->rank() == 1 && v.t->dims()[0] == hidden, op, ": input ", v.index, " (", v.name,
                   ") of shape ", ShapeToString(v.t->dims()), " must be 1-D of length ", hidden,
                   ", the hidden size (last dimension of input 0 (input) ", ShapeToString(xd), ")");
  }
  in->hidden = hidden;
  in->rows = ShapeSize(Dims(xd.begin(), xd.end() - 1));
  in->skip_rows = same ? in->rows : xd[1];
  in->stat_dims = xd;
  in->stat_dims.back() = 1;
  return Status::OK();
}

}  // namespace onyx

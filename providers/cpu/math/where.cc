#include <climits>
#include <string>

#include "providers/cpu/common/broadcast.h"
#include "providers/cpu/common/dispatch.h"
#include "providers/kernel.h"

namespace onyx {

namespace {

template <typename T>
void WhereSegment(const bool* c, int64_t sc, const T* x, int64_t sx, const T* y, int64_t sy, T* out, int64_t len) {
  if (sc != 0 && sx != 0 && sy != 0) {
    for (int64_t i = 0; i < len; ++i) out[i] = c[i] ? x[i] : y[i];
  } else if (sc != 0 && sx == 0 && sy != 0) {
    // The attention-mask case: a constant fill value where the mask is set.
    const T xv = x[0];
    for (int64_t i = 0; i < len; ++i) out[i] = c[i] ? xv : y[i];
  } else if (sc != 0 && sx != 0 && sy == 0) {
    const T yv = y[0];
    for (int64_t i = 0; i < len; ++i) out[i] = c[i] ? x[i] : yv;
  } else {
    for (int64_t i = 0; i < len; ++i) out[i] = c[i * sc] ? x[i * sx] : y[i * sy];
  }
}

class WhereKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo&) { return Status::OK(); }

  Status Compute(KernelContext& ctx) const override {
    const Tensor* C = nullptr;
    const Tensor* X = nullptr;
    const Tensor* Y = nullptr;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &C));
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(1, &X));
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(2, &Y));
    ONYX_CHECK_ARG(C->type() == ElemType::kBool, "Where: input 0 (condition) must be bool, got ",
                   ElemTypeName(C->type()));
    ONYX_CHECK_ARG(X->type() == Y->type(), "Where: input 1 has type ", ElemTypeName(X->type()),
                   " but input 2 has type ", ElemTypeName(Y->type()));
    Dims out_dims;
    ONYX_RETURN_IF_ERROR(BroadcastShapes({C->dims(), X->dims(), Y->dims()}, &out_dims, "Where"));
    BroadcastPlan plan;
    ONYX_RETURN_IF_ERROR(plan.Init({C->dims(), X->dims(), Y->dims()}, out_dims, "Where"));
    return DispatchAll(X->type(), "Where", [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      Tensor* out = ctx.Output(0, out_dims, X->type());
      if (out == nullptr) return Status::OK();
      const bool* c = C->data<bool>();
      const T* x = X->data<T>();
      const T* y = Y->data<T>();
      T* o = out->data<T>();
      const int64_t sc = plan.inner_step(0), sx = plan.inner_step(1), sy = plan.inner_step(2);
      ParallelForEachSegment(plan, ctx.threads(), [&](int64_t off, const int64_t* in, int64_t len) {
        WhereSegment(c + in[0], sc, x + in[1], sx, y + in[2], sy, o + off, len);
      });
      return Status::OK();
    });
  }
};

}  // namespace

ONYX_REGISTER_KERNEL(WhereKernel, "", "Where", 9, kMaxVersion, AnyType());

}  // namespace onyx

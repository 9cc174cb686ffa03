#include <algorithm>
#include <climits>
#include <string>

#include "providers/cpu/common/broadcast.h"
#include "providers/cpu/common/dispatch.h"
#include "providers/kernel.h"

namespace onyx {

namespace {

class ExpandKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo&) { return Status::OK(); }

  Status Compute(KernelContext& ctx) const override {
    const Tensor* X = nullptr;
    const Tensor* S = nullptr;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &X));
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(1, &S));
    ONYX_CHECK_ARG(S->type() == ElemType::kInt64 && S->rank() == 1, "Expand: input 1 (shape) must be a 1-D int64 ",
                   "tensor, got ", ElemTypeName(S->type()), " of shape ", ShapeToString(S->dims()));
    Dims shape(S->data<int64_t>(), S->data<int64_t>() + S->size());
    for (size_t i = 0; i < shape.size(); ++i)
      ONYX_CHECK_ARG(shape[i] >= 0, "Expand: input 1 (shape) holds negative dimension ", shape[i], " at index ", i);
    Dims out_dims;
    ONYX_RETURN_IF_ERROR(BroadcastShapes(X->dims(), shape, &out_dims, "Expand"));
    BroadcastPlan plan;
    ONYX_RETURN_IF_ERROR(plan.Init({X->dims()}, out_dims, "Expand"));
    return DispatchAll(X->type(), "Expand", [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      Tensor* Y = ctx.Output(0, out_dims, X->type());
      if (Y == nullptr) return Status::OK();
      const T* x = X->data<T>();
      T* y = Y->data<T>();
      const int64_t step = plan.inner_step(0);
      ParallelForEachSegment(plan, ctx.threads(), [&](int64_t o, const int64_t* off, int64_t len) {
        if (step != 0)
          std::copy(x + off[0], x + off[0] + len, y + o);
        else
          std::fill(y + o, y + o + len, x[off[0]]);
      });
      return Status::OK();
    });
  }
};

}  // namespace

ONYX_REGISTER_KERNEL(ExpandKernel, "", "Expand", 8, kMaxVersion, AnyType());

}  // namespace onyx

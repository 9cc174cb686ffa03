// StringConcat (opset 20+): elementwise concatenation of two string tensors,
// with numpy broadcasting.
#include <string>
#include <vector>

#include "providers/cpu/common/broadcast.h"
#include "providers/kernel.h"

namespace onyx {

namespace {

class StringConcatKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo&) { return Status::OK(); }

  Status Compute(KernelContext& ctx) const override {
    const Tensor* X = nullptr;
    const Tensor* Y = nullptr;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &X));
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(1, &Y));
    Dims out_dims;
    ONYX_RETURN_IF_ERROR(BroadcastShapes(X->dims(), Y->dims(), &out_dims, "StringConcat"));
    BroadcastPlan plan;
    ONYX_RETURN_IF_ERROR(plan.Init({X->dims(), Y->dims()}, out_dims, "StringConcat"));
    Tensor* Z = ctx.Output(0, out_dims, ElemType::kString);
    if (Z == nullptr || Z->size() == 0) return Status::OK();
    const std::string* x = X->data<std::string>();
    const std::string* y = Y->data<std::string>();
    std::string* z = Z->data<std::string>();
    const int64_t sx = plan.inner_step(0), sy = plan.inner_step(1);
    ParallelForEachSegment(plan, ctx.threads(), [&](int64_t out, const int64_t* in, int64_t len) {
      for (int64_t k = 0; k < len; ++k) {
        const std::string& a = x[in[0] + k * sx];
        const std::string& b = y[in[1] + k * sy];
        std::string& r = z[out + k];
        r.reserve(a.size() + b.size());
        r.assign(a).append(b);
      }
    });
    return Status::OK();
  }
};

}  // namespace

ONYX_REGISTER_KERNEL(StringConcatKernel, "", "StringConcat", 20, kMaxVersion, {ElemType::kString});

}  // namespace onyx

// PRelu: y = x < 0 ? slope * x : x, with slope broadcast to x's shape
// (unidirectional broadcasting, opset 7+). Before opset 7 the slope was one
// value or one per channel (dim 1); both are read that way there.
#include <cstdint>
#include <type_traits>

#include "providers/cpu/common/broadcast.h"
#include "providers/cpu/common/dispatch.h"
#include "providers/cpu/math/broadcast_binary.h"
#include "providers/kernel.h"

namespace onyx {

namespace {

// Opset 16 added the integer types.
using PReluTypeSet = JoinTypeSets<FloatOrHalfTypeSet, TypeSet<int32_t, int64_t, uint32_t, uint64_t>>::type;

class PReluKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    legacy_ = info.opset() < 7;
    return Status::OK();
  }

  Status Compute(KernelContext& ctx) const override {
    const Tensor* X = nullptr;
    const Tensor* S = nullptr;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &X));
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(1, &S));
    ONYX_CHECK_ARG(X->type() == S->type(), "PRelu: input 0 (X) has type ", ElemTypeName(X->type()),
                   " but input 1 (slope) has type ", ElemTypeName(S->type()));
    Dims sdims = S->dims();
    if (legacy_ && S->size() != 1 && sdims.size() == 1 && X->rank() >= 2 && sdims[0] == X->dims()[1]) {
      // One slope per channel: [C] read as [C, 1, ..., 1].
      sdims = Dims(X->rank() - 1, 1);
      sdims[0] = S->size();
    }
    Dims out_dims;
    ONYX_RETURN_IF_ERROR(BroadcastShapes(X->dims(), sdims, &out_dims, "PRelu"));
    ONYX_CHECK_ARG(out_dims == X->dims(), "PRelu: input 1 (slope) of shape ", ShapeToString(S->dims()),
                   " does not broadcast to input 0 (X) shape ", ShapeToString(X->dims()));
    BroadcastPlan plan;
    ONYX_RETURN_IF_ERROR(plan.Init({X->dims(), sdims}, out_dims, "PRelu"));
    return DispatchOver(PReluTypeSet{}, X->type(), "PRelu", [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      using C = typename CalcType<T>::type;
      Tensor* Y = ctx.Output(0, out_dims, X->type());
      if (Y == nullptr) return Status::OK();
      BroadcastBinaryLoop(plan, ctx.threads(), X->data<T>(), S->data<T>(), Y->data<T>(), [](T x, T s) -> T {
        const C cx = static_cast<C>(x);
        if constexpr (std::is_unsigned<C>::value) {
          return x;  // never negative
        } else {
          return cx < C(0) ? static_cast<T>(static_cast<C>(cx * static_cast<C>(s))) : x;
        }
      });
      return Status::OK();
    });
  }

 private:
  bool legacy_ = false;
};

}  // namespace

ONYX_REGISTER_KERNEL(PReluKernel, "", "PRelu", 1, kMaxVersion, PReluTypeSet::ElemTypes());

}  // namespace onyx

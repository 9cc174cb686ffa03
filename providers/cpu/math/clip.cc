#include <climits>
#include <limits>
#include <type_traits>

#include "providers/cpu/common/broadcast.h"
#include "providers/cpu/common/dispatch.h"
#include "providers/kernel.h"

namespace onyx {

namespace {

// Opset < 11 takes min/max as float attributes; 11+ takes them as optional
// scalar inputs 1 and 2 of the input's own type.
class ClipKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    from_inputs_ = info.opset() >= 11;
    if (!from_inputs_) {
      min_attr_ = info.AttrFloat("min", std::numeric_limits<float>::lowest());
      max_attr_ = info.AttrFloat("max", std::numeric_limits<float>::max());
    }
    return Status::OK();
  }

  Status Compute(KernelContext& ctx) const override {
    const Tensor* X = nullptr;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &X));
    return DispatchNumericOrHalf(X->type(), "Clip", [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      using C = typename CalcType<T>::type;
      C lo = std::numeric_limits<C>::lowest();
      C hi = std::numeric_limits<C>::max();
      if (from_inputs_) {
        for (int i = 1; i <= 2; ++i) {
          const Tensor* b = ctx.Input(i);
          if (b == nullptr) continue;
          ONYX_CHECK_ARG(b->type() == X->type(), "Clip: input ", i, " has type ", ElemTypeName(b->type()),
                         " but input 0 has type ", ElemTypeName(X->type()));
          ONYX_CHECK_ARG(b->size() == 1, "Clip: input ", i, " (", i == 1 ? "min" : "max",
                         ") must be a scalar, got shape ", ShapeToString(b->dims()));
          C v = static_cast<C>(b->data<T>()[0]);
          (i == 1 ? lo : hi) = v;
        }
      } else {
        if constexpr (std::is_floating_point<C>::value) {
          lo = static_cast<C>(min_attr_);
          hi = static_cast<C>(max_attr_);
        } else {
          return UnsupportedType("Clip", X->type());
        }
      }
      Tensor* Y = ctx.Output(0, X->dims(), X->type());
      if (Y == nullptr) return Status::OK();
      const T* x = X->data<T>();
      T* y = Y->data<T>();
      // Same order as onnxruntime: max with lo first, then min with hi (so lo > hi gives hi).
      ThreadPool::For(ctx.threads(), X->size(), 1 << 16, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) {
          C v = static_cast<C>(x[i]);
          v = v < lo ? lo : v;
          v = v > hi ? hi : v;
          y[i] = static_cast<T>(v);
        }
      });
      return Status::OK();
    });
  }

 private:
  bool from_inputs_ = false;
  float min_attr_ = 0.f;
  float max_attr_ = 0.f;
};

}  // namespace

ONYX_REGISTER_KERNEL(ClipKernel, "", "Clip", 1, kMaxVersion, NumericOrHalfTypes());

}  // namespace onyx

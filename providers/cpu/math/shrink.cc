// Shrink (opset 9+): y = x + bias where x < -lambd, x - bias where x > lambd,
// else 0. Since opset 18 ONNX also gives it a function body; the kernel serves
// every opset (and is checked against that body by the conformance suite).
#include <type_traits>

#include "providers/cpu/common/dispatch.h"
#include "providers/cpu/common/float_to_int.h"
#include "providers/kernel.h"

namespace onyx {
namespace {

template <typename T>
double ToDouble(T v) {
  if constexpr (std::is_same<T, Float16>::value || std::is_same<T, BFloat16>::value) return static_cast<float>(v);
  else return static_cast<double>(v);
}
template <typename T>
T FromDouble(double v) {
  if constexpr (std::is_same<T, Float16>::value || std::is_same<T, BFloat16>::value) return T(static_cast<float>(v));
  else return FromFloat<T>(v);  // integer outputs: defined for any bias or lambd
}

class ShrinkKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    lambd_ = info.AttrFloat("lambd", 0.5f);
    bias_ = info.AttrFloat("bias", 0.f);
    return Status::OK();
  }

  Status Compute(KernelContext& ctx) const override {
    const Tensor* x = nullptr;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &x));
    Tensor* y = ctx.Output(0, x->dims(), x->type());
    if (y == nullptr) return Status::OK();
    return DispatchOver(NumericOrHalfTypeSet{}, x->type(), "Shrink", [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      const T* xv = x->data<T>();
      T* yv = y->data<T>();
      // Computed in double so 64-bit integers and the float attributes mix
      // exactly as onnx's reference does (then cast back to T).
      const double lambd = lambd_, bias = bias_;
      ThreadPool::For(ctx.threads(), x->size(), 1 << 14, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) {
          const double v = ToDouble(xv[i]);
          const double r = v < -lambd ? v + bias : (v > lambd ? v - bias : 0.0);
          yv[i] = FromDouble<T>(r);
        }
      });
      return Status::OK();
    });
  }

 private:
  float lambd_ = 0.5f, bias_ = 0.f;
};

}  // namespace

ONYX_REGISTER_KERNEL(ShrinkKernel, "", "Shrink", 9, kMaxVersion, NumericOrHalfTypes());

}  // namespace onyx

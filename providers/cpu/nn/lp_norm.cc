// LpNormalization: x divided by its L1 or L2 norm along one axis (default -1).
// A zero norm gives zeros, as in onnx's reference and onnxruntime.
#include <cmath>
#include <cstdint>

#include "providers/cpu/common/broadcast.h"
#include "providers/cpu/common/dispatch.h"
#include "providers/kernel.h"

namespace onyx {
namespace {

class LpNormKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    axis_ = info.AttrInt("axis", -1);
    p_ = info.AttrInt("p", 2);
    ONYX_CHECK(p_ == 1 || p_ == 2, ErrorCode::kInvalidGraph, "LpNormalization: attribute p must be 1 or 2, got ", p_);
    return Status::OK();
  }

  Status Compute(KernelContext& ctx) const override {
    const Tensor* X = nullptr;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &X));
    const int64_t r = static_cast<int64_t>(X->rank());
    ONYX_CHECK_ARG(r >= 1 && axis_ >= -r && axis_ < r, "LpNormalization: attribute axis ", axis_,
                   " is out of range for input 0 of rank ", r);
    const int64_t axis = axis_ < 0 ? axis_ + r : axis_;
    const Dims& d = X->dims();
    int64_t outer = 1, inner = 1;
    for (int64_t k = 0; k < axis; ++k) outer *= d[k];
    for (int64_t k = axis + 1; k < r; ++k) inner *= d[k];
    const int64_t len = d[axis];
    const bool l1 = p_ == 1;
    return DispatchOver(FloatOrHalfTypeSet{}, X->type(), "LpNormalization", [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      using C = typename CalcType<T>::type;
      Tensor* Y = ctx.Output(0, d, X->type());
      if (Y == nullptr || X->size() == 0) return Status::OK();
      const T* x = X->data<T>();
      T* y = Y->data<T>();
      ThreadPool::For(ctx.threads(), outer * inner, std::max<int64_t>(1, (1 << 14) / std::max<int64_t>(1, len)),
                      [&](int64_t b, int64_t e) {
        for (int64_t line = b; line < e; ++line) {
          const int64_t base = (line / inner) * len * inner + line % inner;
          C acc = 0;
          for (int64_t k = 0; k < len; ++k) {
            const C v = static_cast<C>(x[base + k * inner]);
            acc += l1 ? std::fabs(v) : v * v;
          }
          const C norm = l1 ? acc : std::sqrt(acc);
          for (int64_t k = 0; k < len; ++k)
            y[base + k * inner] = static_cast<T>(norm == C(0) ? C(0) : static_cast<C>(x[base + k * inner]) / norm);
        }
      });
      return Status::OK();
    });
  }

 private:
  int64_t axis_ = -1;
  int64_t p_ = 2;
};

}  // namespace

ONYX_REGISTER_KERNEL(LpNormKernel, "", "LpNormalization", 1, kMaxVersion, FloatOrHalfTypes());

}  // namespace onyx

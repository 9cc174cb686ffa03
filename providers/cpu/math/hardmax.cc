// Hardmax: 1 at the first maximum along an axis, 0 elsewhere. Opsets 1-12
// flatten the input to 2-D at `axis` (default 1) and take the max over each
// row of the flattened [outer, inner] matrix; opset 13 works along the one
// axis (default -1).
#include <cmath>
#include <cstdint>

#include "providers/cpu/common/broadcast.h"
#include "providers/cpu/common/dispatch.h"
#include "providers/kernel.h"

namespace onyx {

namespace {

class HardmaxKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    flatten_ = info.opset() < 13;
    axis_ = info.AttrInt("axis", flatten_ ? 1 : -1);
    return Status::OK();
  }

  Status Compute(KernelContext& ctx) const override {
    const Tensor* X = nullptr;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &X));
    const int64_t r = static_cast<int64_t>(X->rank());
    // Opsets 1-12 accept axis in [-r, r] (r: everything in one row); 13 in [-r, r-1].
    const int64_t hi = flatten_ ? r : r - 1;
    ONYX_CHECK_ARG(axis_ >= -r && axis_ <= hi && (r > 0 || flatten_), "Hardmax: attribute axis ", axis_,
                   " is out of range for input 0 of rank ", r);
    const int64_t axis = axis_ < 0 ? axis_ + r : axis_;
    // The reduced extent is `len`, with stride `inner` between its elements.
    int64_t outer = 1, len = 1, inner = 1;
    const Dims& d = X->dims();
    if (flatten_) {
      for (int64_t k = 0; k < axis; ++k) outer *= d[k];
      for (int64_t k = axis; k < r; ++k) len *= d[k];
    } else {
      for (int64_t k = 0; k < axis; ++k) outer *= d[k];
      len = d[axis];
      for (int64_t k = axis + 1; k < r; ++k) inner *= d[k];
    }
    return DispatchOver(FloatOrHalfTypeSet{}, X->type(), "Hardmax", [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      using C = typename CalcType<T>::type;
      Tensor* Y = ctx.Output(0, X->dims(), X->type());
      if (Y == nullptr || X->size() == 0) return Status::OK();
      const T* x = X->data<T>();
      T* y = Y->data<T>();
      const T zero = static_cast<T>(C(0)), one = static_cast<T>(C(1));
      const int64_t lines = outer * inner;
      ThreadPool::For(ctx.threads(), lines, std::max<int64_t>(1, (1 << 14) / std::max<int64_t>(1, len)),
                      [&](int64_t b, int64_t e) {
        for (int64_t line = b; line < e; ++line) {
          const int64_t o = line / inner, i = line % inner;
          const int64_t base = o * len * inner + i;
          // First maximum wins (numpy argmax); a NaN counts as the maximum, as in argmax.
          int64_t best = 0;
          C bv = static_cast<C>(x[base]);
          for (int64_t k = 1; k < len && !std::isnan(bv); ++k) {
            const C v = static_cast<C>(x[base + k * inner]);
            if (v > bv || std::isnan(v)) {
              bv = v;
              best = k;
            }
          }
          for (int64_t k = 0; k < len; ++k) y[base + k * inner] = k == best ? one : zero;
        }
      });
      return Status::OK();
    });
  }

 private:
  bool flatten_ = false;
  int64_t axis_ = -1;
};

}  // namespace

ONYX_REGISTER_KERNEL(HardmaxKernel, "", "Hardmax", 1, 12, FloatOrHalfTypes());
ONYX_REGISTER_KERNEL(HardmaxKernel, "", "Hardmax", 13, kMaxVersion, FloatOrHalfTypes());

}  // namespace onyx

// Trilu (opset 14+): keeps the upper or lower triangle of the last two dims,
// shifted by the optional diagonal offset k; the rest becomes zero.
#include <algorithm>
#include <string>
#include <vector>

#include "providers/cpu/common/indexing.h"
#include "providers/kernel.h"

namespace onyx {

namespace {

class TriluKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    upper_ = info.AttrInt("upper", 1) != 0;
    return Status::OK();
  }

  Status Compute(KernelContext& ctx) const override {
    const Tensor* X = nullptr;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &X));
    const int64_t rank = static_cast<int64_t>(X->rank());
    ONYX_CHECK_ARG(rank >= 2, "Trilu: input 0 (input) must have rank >= 2, got shape ", ShapeToString(X->dims()));
    int64_t k = 0;
    if (const Tensor* K = ctx.Input(1)) ONYX_RETURN_IF_ERROR(ReadIndexScalar(*K, "Trilu", "input 1 (k)", &k));
    const int64_t n = X->dims()[rank - 2], m = X->dims()[rank - 1];
    k = std::min(std::max(k, -(n + 1)), m + 1);  // no overflow in i + k below
    Tensor* Y = ctx.Output(0, X->dims(), X->type());
    if (Y == nullptr || Y->size() == 0) return Status::OK();
    const int64_t rows = Y->size() / m;
    const bool upper = upper_;
    return DispatchByStorage(X->type(), "Trilu", [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      const T* x = X->data<T>();
      T* y = Y->data<T>();
      ThreadPool::For(ctx.threads(), rows, std::max<int64_t>(1, (1 << 14) / m), [&](int64_t b, int64_t e) {
        for (int64_t r = b; r < e; ++r) {
          const int64_t i = r % n;
          // Columns [keep_lo, keep_hi) keep their values.
          const int64_t lo = upper ? std::min(std::max<int64_t>(i + k, 0), m) : 0;
          const int64_t hi = upper ? m : std::min(std::max<int64_t>(i + k + 1, 0), m);
          const T* xp = x + r * m;
          T* yp = y + r * m;
          std::fill(yp, yp + lo, T{});
          std::copy(xp + lo, xp + hi, yp + lo);
          std::fill(yp + std::max(lo, hi), yp + m, T{});
        }
      });
      return Status::OK();
    });
  }

 private:
  bool upper_ = true;
};

}  // namespace

ONYX_REGISTER_KERNEL(TriluKernel, "", "Trilu", 14, kMaxVersion, MovableTypes());

}  // namespace onyx

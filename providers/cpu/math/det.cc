// Det: determinant of each square matrix in the last two dims, by LU
// decomposition with partial pivoting, accumulated in double.
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include "providers/cpu/common/broadcast.h"
#include "providers/cpu/common/dispatch.h"
#include "providers/kernel.h"

namespace onyx {

namespace {

double Determinant(std::vector<double>& a, int64_t n) {
  double det = 1.0;
  for (int64_t c = 0; c < n; ++c) {
    int64_t p = c;
    double pv = std::fabs(a[c * n + c]);
    for (int64_t r = c + 1; r < n; ++r) {
      const double v = std::fabs(a[r * n + c]);
      if (v > pv) {
        pv = v;
        p = r;
      }
    }
    if (pv == 0.0) return 0.0;
    if (p != c) {
      for (int64_t k = 0; k < n; ++k) std::swap(a[c * n + k], a[p * n + k]);
      det = -det;
    }
    const double d = a[c * n + c];
    det *= d;
    for (int64_t r = c + 1; r < n; ++r) {
      const double f = a[r * n + c] / d;
      if (f == 0.0) continue;
      for (int64_t k = c + 1; k < n; ++k) a[r * n + k] -= f * a[c * n + k];
    }
  }
  return det;
}

class DetKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo&) { return Status::OK(); }

  Status Compute(KernelContext& ctx) const override {
    const Tensor* X = nullptr;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &X));
    const Dims& d = X->dims();
    ONYX_CHECK_ARG(d.size() >= 2, "Det: input 0 must have rank >= 2, got shape ", ShapeToString(d));
    const int64_t n = d[d.size() - 1];
    ONYX_CHECK_ARG(d[d.size() - 2] == n, "Det: input 0 must hold square matrices in its last two dims, got shape ",
                   ShapeToString(d));
    Dims out_dims(d.begin(), d.end() - 2);
    const int64_t batches = ShapeSize(out_dims);
    return DispatchOver(FloatOrHalfTypeSet{}, X->type(), "Det", [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      using C = typename CalcType<T>::type;
      Tensor* Y = ctx.Output(0, out_dims, X->type());
      if (Y == nullptr) return Status::OK();
      const T* x = X->data<T>();
      T* y = Y->data<T>();
      ThreadPool::For(ctx.threads(), batches, std::max<int64_t>(1, 4096 / std::max<int64_t>(1, n * n * n)),
                      [&](int64_t b, int64_t e) {
        std::vector<double> a(static_cast<size_t>(n * n));
        for (int64_t m = b; m < e; ++m) {
          const T* src = x + m * n * n;
          for (int64_t k = 0; k < n * n; ++k) a[k] = static_cast<double>(static_cast<C>(src[k]));
          y[m] = static_cast<T>(static_cast<C>(Determinant(a, n)));
        }
      });
      return Status::OK();
    });
  }
};

}  // namespace

ONYX_REGISTER_KERNEL(DetKernel, "", "Det", 11, kMaxVersion, FloatOrHalfTypes());

}  // namespace onyx

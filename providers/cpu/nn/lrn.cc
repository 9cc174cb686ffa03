// LRN: local response normalization across channels of X [N, C, D1, ...]:
//   y = x / (bias + alpha / size * sum of x^2 over nearby channels) ^ beta
// where channel c sums channels [c - floor((size-1)/2), c + ceil((size-1)/2)].
#include <cmath>
#include <cstdint>

#include "providers/cpu/common/broadcast.h"
#include "providers/cpu/common/dispatch.h"
#include "providers/kernel.h"

namespace onyx {
namespace {

class LrnKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    size_ = info.AttrInt("size", 0);
    ONYX_CHECK(size_ > 0, ErrorCode::kInvalidGraph, "LRN: attribute size must be positive, got ", size_);
    alpha_ = info.AttrFloat("alpha", 1e-4f);
    beta_ = info.AttrFloat("beta", 0.75f);
    bias_ = info.AttrFloat("bias", 1.0f);
    return Status::OK();
  }

  Status Compute(KernelContext& ctx) const override {
    const Tensor* X = nullptr;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &X));
    const Dims& d = X->dims();
    ONYX_CHECK_ARG(d.size() >= 2, "LRN: input 0 (X) must have rank >= 2 ([N, C, ...]), got shape ",
                   ShapeToString(d));
    const int64_t N = d[0], C = d[1];
    int64_t inner = 1;
    for (size_t k = 2; k < d.size(); ++k) inner *= d[k];
    const int64_t lo = (size_ - 1) / 2, hi = size_ - 1 - lo;
    const double alpha = alpha_, beta = beta_, bias = bias_, size = static_cast<double>(size_);
    return DispatchOver(FloatOrHalfTypeSet{}, X->type(), "LRN", [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      using Cc = typename CalcType<T>::type;
      Tensor* Y = ctx.Output(0, d, X->type());
      if (Y == nullptr || X->size() == 0) return Status::OK();
      const T* x = X->data<T>();
      T* y = Y->data<T>();
      ThreadPool::For(ctx.threads(), N * C, std::max<int64_t>(1, (1 << 12) / std::max<int64_t>(1, inner * size_)),
                      [&](int64_t b, int64_t e) {
        for (int64_t nc = b; nc < e; ++nc) {
          const int64_t n = nc / C, c = nc % C;
          const int64_t c0 = std::max<int64_t>(0, c - lo), c1 = std::min<int64_t>(C - 1, c + hi);
          for (int64_t i = 0; i < inner; ++i) {
            double sq = 0;
            for (int64_t cc = c0; cc <= c1; ++cc) {
              const double v = static_cast<double>(static_cast<Cc>(x[(n * C + cc) * inner + i]));
              sq += v * v;
            }
            const double xv = static_cast<double>(static_cast<Cc>(x[nc * inner + i]));
            y[nc * inner + i] = static_cast<T>(static_cast<Cc>(xv / std::pow(bias + alpha / size * sq, beta)));
          }
        }
      });
      return Status::OK();
    });
  }

 private:
  int64_t size_ = 1;
  float alpha_ = 1e-4f, beta_ = 0.75f, bias_ = 1.0f;
};

}  // namespace

ONYX_REGISTER_KERNEL(LrnKernel, "", "LRN", 1, kMaxVersion, FloatOrHalfTypes());

}  // namespace onyx

// InstanceNormalization: each (n, c) slice of X [N, C, D1, ...] normalized by
// its own mean and variance, then scale[c] * . + B[c]. Statistics in double.
#include <cmath>
#include <cstdint>

#include "providers/cpu/common/broadcast.h"
#include "providers/cpu/common/dispatch.h"
#include "providers/kernel.h"

namespace onyx {
namespace {

class InstanceNormKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    epsilon_ = info.AttrFloat("epsilon", 1e-5f);
    return Status::OK();
  }

  Status Compute(KernelContext& ctx) const override {
    const Tensor* X = nullptr;
    const Tensor* S = nullptr;
    const Tensor* B = nullptr;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &X));
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(1, &S));
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(2, &B));
    const Dims& d = X->dims();
    ONYX_CHECK_ARG(d.size() >= 2, "InstanceNormalization: input 0 (input) must have rank >= 2, got shape ",
                   ShapeToString(d));
    const int64_t C = d[1];
    ONYX_CHECK_ARG(S->type() == X->type() && B->type() == X->type(),
                   "InstanceNormalization: inputs 1 (scale) and 2 (B) must have input 0's type ",
                   ElemTypeName(X->type()));
    ONYX_CHECK_ARG(S->rank() == 1 && S->dims()[0] == C, "InstanceNormalization: input 1 (scale) of shape ",
                   ShapeToString(S->dims()), " must be [", C, "] (input 0 shape ", ShapeToString(d), ")");
    ONYX_CHECK_ARG(B->rank() == 1 && B->dims()[0] == C, "InstanceNormalization: input 2 (B) of shape ",
                   ShapeToString(B->dims()), " must be [", C, "] (input 0 shape ", ShapeToString(d), ")");
    int64_t inner = 1;
    for (size_t k = 2; k < d.size(); ++k) inner *= d[k];
    const int64_t slices = d[0] * C;
    const double eps = epsilon_;
    return DispatchOver(FloatOrHalfTypeSet{}, X->type(), "InstanceNormalization", [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      using Cc = typename CalcType<T>::type;
      Tensor* Y = ctx.Output(0, d, X->type());
      if (Y == nullptr || X->size() == 0) return Status::OK();
      const T* x = X->data<T>();
      const T* s = S->data<T>();
      const T* b = B->data<T>();
      T* y = Y->data<T>();
      ThreadPool::For(ctx.threads(), slices, std::max<int64_t>(1, (1 << 14) / std::max<int64_t>(1, inner)),
                      [&](int64_t begin, int64_t end) {
        for (int64_t sl = begin; sl < end; ++sl) {
          const int64_t c = sl % C;
          const T* xs = x + sl * inner;
          T* ys = y + sl * inner;
          double mean = 0;
          for (int64_t i = 0; i < inner; ++i) mean += static_cast<double>(static_cast<Cc>(xs[i]));
          mean /= static_cast<double>(inner);
          double var = 0;
          for (int64_t i = 0; i < inner; ++i) {
            const double t = static_cast<double>(static_cast<Cc>(xs[i])) - mean;
            var += t * t;
          }
          var /= static_cast<double>(inner);
          const double k = static_cast<double>(static_cast<Cc>(s[c])) / std::sqrt(var + eps);
          const double bc = static_cast<double>(static_cast<Cc>(b[c]));
          for (int64_t i = 0; i < inner; ++i)
            ys[i] = static_cast<T>(static_cast<Cc>((static_cast<double>(static_cast<Cc>(xs[i])) - mean) * k + bc));
        }
      });
      return Status::OK();
    });
  }

 private:
  float epsilon_ = 1e-5f;
};

}  // namespace

ONYX_REGISTER_KERNEL(InstanceNormKernel, "", "InstanceNormalization", 1, kMaxVersion, FloatOrHalfTypes());

}  // namespace onyx

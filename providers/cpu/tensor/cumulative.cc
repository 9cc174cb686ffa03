// CumSum (opset 11+, 16-bit floats from 14) and CumProd (opset 26+): running
// sums/products along one axis, optionally exclusive and/or reversed. 16-bit
// floats accumulate in float.
#include <algorithm>
#include <string>
#include <vector>

#include "providers/cpu/common/broadcast.h"
#include "providers/cpu/common/indexing.h"
#include "providers/kernel.h"

namespace onyx {

namespace {

using CumulativeTypeSet = TypeSet<float, double, int32_t, int64_t, uint32_t, uint64_t, Float16, BFloat16>;

template <bool kProduct>
class CumulativeKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    exclusive_ = info.AttrInt("exclusive", 0) != 0;
    reverse_ = info.AttrInt("reverse", 0) != 0;
    return Status::OK();
  }

  Status Compute(KernelContext& ctx) const override {
    const char* op = kProduct ? "CumProd" : "CumSum";
    const Tensor* X = nullptr;
    const Tensor* A = nullptr;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &X));
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(1, &A));
    const int64_t rank = static_cast<int64_t>(X->rank());
    ONYX_CHECK_ARG(rank >= 1, op, ": input 0 (x) must have rank >= 1, got a scalar");
    int64_t axis_value = 0, axis = 0;
    ONYX_RETURN_IF_ERROR(ReadIndexScalar(*A, op, "input 1 (axis)", &axis_value));
    ONYX_RETURN_IF_ERROR(NormalizeAxis(axis_value, rank, op, "input 1 (axis)", &axis));
    Tensor* Y = ctx.Output(0, X->dims(), X->type());
    if (Y == nullptr || Y->size() == 0) return Status::OK();
    const int64_t outer = DimProduct(X->dims(), 0, axis);
    const int64_t dim = X->dims()[axis];
    const int64_t inner = DimProduct(X->dims(), axis + 1, rank);
    const bool exclusive = exclusive_, reverse = reverse_;
    return DispatchOver(CumulativeTypeSet{}, X->type(), op, [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      using C = typename CalcType<T>::type;
      const T* x = X->data<T>();
      T* y = Y->data<T>();
      ThreadPool::For(ctx.threads(), outer, std::max<int64_t>(1, (1 << 14) / std::max<int64_t>(1, dim * inner)),
                      [&](int64_t b, int64_t e) {
                        std::vector<C> acc(static_cast<size_t>(inner));
                        for (int64_t o = b; o < e; ++o) {
                          std::fill(acc.begin(), acc.end(), static_cast<C>(kProduct ? 1 : 0));
                          for (int64_t s = 0; s < dim; ++s) {
                            const int64_t a = reverse ? dim - 1 - s : s;
                            const T* xp = x + (o * dim + a) * inner;
                            T* yp = y + (o * dim + a) * inner;
                            for (int64_t j = 0; j < inner; ++j) {
                              const C v = static_cast<C>(xp[j]);
                              if (exclusive) yp[j] = static_cast<T>(acc[j]);
                              acc[j] = kProduct ? static_cast<C>(acc[j] * v) : static_cast<C>(acc[j] + v);
                              if (!exclusive) yp[j] = static_cast<T>(acc[j]);
                            }
                          }
                        }
                      });
      return Status::OK();
    });
  }

 private:
  bool exclusive_ = false;
  bool reverse_ = false;
};

using CumSumKernel = CumulativeKernel<false>;
using CumProdKernel = CumulativeKernel<true>;

}  // namespace

ONYX_REGISTER_KERNEL(CumSumKernel, "", "CumSum", 11, kMaxVersion, CumulativeTypeSet::ElemTypes());
ONYX_REGISTER_KERNEL(CumProdKernel, "", "CumProd", 26, kMaxVersion, CumulativeTypeSet::ElemTypes());

}  // namespace onyx

// NonZero (opset 9+): the coordinates of the non-zero elements, one row per
// dim, in row-major order ([rank, count], int64). A scalar gives [0, count].
// A string is non-zero when it is not empty.
#include <algorithm>
#include <string>
#include <type_traits>
#include <vector>

#include "providers/cpu/common/broadcast.h"
#include "providers/cpu/common/indexing.h"
#include "providers/kernel.h"

namespace onyx {

namespace {

using NonZeroTypeSet = JoinTypeSets<NumericOrHalfTypeSet, TypeSet<bool, std::string>>::type;

class NonZeroKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo&) { return Status::OK(); }

  Status Compute(KernelContext& ctx) const override {
    const Tensor* X = nullptr;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &X));
    std::vector<int64_t> pos;
    ONYX_RETURN_IF_ERROR(DispatchOver(NonZeroTypeSet{}, X->type(), "NonZero", [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      const T* x = X->data<T>();
      if constexpr (std::is_same_v<T, std::string>) {
        for (int64_t i = 0; i < X->size(); ++i)
          if (!x[i].empty()) pos.push_back(i);  // numpy's truth value of a string
      } else {
        using C = typename CalcType<T>::type;
        for (int64_t i = 0; i < X->size(); ++i)
          if (static_cast<C>(x[i]) != static_cast<C>(0)) pos.push_back(i);
      }
      return Status::OK();
    }));
    const int64_t rank = static_cast<int64_t>(X->rank());
    const int64_t count = static_cast<int64_t>(pos.size());
    Tensor* Y = ctx.Output(0, {rank, count}, ElemType::kInt64);
    if (Y == nullptr || Y->size() == 0) return Status::OK();
    int64_t* y = Y->data<int64_t>();
    const Dims& d = X->dims();
    for (int64_t j = 0; j < count; ++j) {
      int64_t rem = pos[j];
      for (int64_t k = rank - 1; k >= 0; --k) {
        y[k * count + j] = rem % d[k];
        rem /= d[k];
      }
    }
    return Status::OK();
  }
};

}  // namespace

ONYX_REGISTER_KERNEL(NonZeroKernel, "", "NonZero", 9, kMaxVersion, NonZeroTypeSet::ElemTypes());

}  // namespace onyx

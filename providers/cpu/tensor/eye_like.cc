// EyeLike (opset 9+): a 2-D tensor of the input's shape with ones on the
// diagonal shifted by k, in the type of attribute dtype (else the input's).
#include <algorithm>
#include <string>
#include <vector>

#include "providers/cpu/common/broadcast.h"
#include "providers/cpu/common/indexing.h"
#include "providers/kernel.h"

namespace onyx {

namespace {

using EyeTypeSet = JoinTypeSets<NumericOrHalfTypeSet, TypeSet<bool>>::type;

class EyeLikeKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    k_ = info.AttrInt("k", 0);
    const int64_t dt = info.AttrInt("dtype", 0);
    if (dt != 0) {
      ONYX_CHECK_ARG(IsKnownElemType(static_cast<int32_t>(dt)), "EyeLike: attribute dtype ", dt, " is not a type");
      dtype_ = static_cast<ElemType>(dt);
    }
    return Status::OK();
  }

  Status Compute(KernelContext& ctx) const override {
    const Tensor* X = nullptr;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &X));
    ONYX_CHECK_ARG(X->rank() == 2, "EyeLike: input 0 (input) must be 2-D, got shape ", ShapeToString(X->dims()));
    const ElemType type = dtype_ == ElemType::kUndefined ? X->type() : dtype_;
    const int64_t n = X->dims()[0], m = X->dims()[1];
    return DispatchOver(EyeTypeSet{}, type, "EyeLike", [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      Tensor* Y = ctx.Output(0, X->dims(), type);
      if (Y == nullptr || Y->size() == 0) return Status::OK();
      T* y = Y->data<T>();
      std::fill(y, y + Y->size(), static_cast<T>(0.0f));
      const T one = static_cast<T>(1.0f);
      // Row i holds its one at column i + k when that column exists.
      const int64_t k = std::min(std::max(k_, -n), m);
      for (int64_t i = std::max<int64_t>(0, -k); i < n && i + k < m; ++i) y[i * m + i + k] = one;
      return Status::OK();
    });
  }

 private:
  int64_t k_ = 0;
  ElemType dtype_ = ElemType::kUndefined;
};

}  // namespace

ONYX_REGISTER_KERNEL(EyeLikeKernel, "", "EyeLike", 9, kMaxVersion, EyeTypeSet::ElemTypes());

}  // namespace onyx

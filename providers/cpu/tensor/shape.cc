#include <algorithm>
#include <climits>

#include "providers/kernel.h"

namespace onyx {

namespace {

class ShapeKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    if (info.opset() >= 15) {
      start_ = info.AttrInt("start", 0);
      has_end_ = info.Attr("end") != nullptr;
      end_ = info.AttrInt("end", 0);
    }
    return Status::OK();
  }

  Status Compute(KernelContext& ctx) const override {
    const Tensor* X = nullptr;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &X));
    const int64_t rank = static_cast<int64_t>(X->rank());
    // start/end clamp into [0, rank] like Python slicing.
    auto clamp = [rank](int64_t v) { return std::min(rank, std::max<int64_t>(0, v < 0 ? v + rank : v)); };
    const int64_t b = clamp(start_);
    const int64_t e = has_end_ ? clamp(end_) : rank;
    const int64_t n = std::max<int64_t>(0, e - b);
    Tensor* Y = ctx.Output(0, {n}, ElemType::kInt64);
    if (Y == nullptr) return Status::OK();
    for (int64_t i = 0; i < n; ++i) Y->data<int64_t>()[i] = X->dims()[b + i];
    return Status::OK();
  }

 private:
  int64_t start_ = 0;
  bool has_end_ = false;
  int64_t end_ = 0;
};

class SizeKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo&) { return Status::OK(); }
  Status Compute(KernelContext& ctx) const override {
    const Tensor* X = nullptr;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &X));
    Tensor* Y = ctx.Output(0, {}, ElemType::kInt64);
    if (Y != nullptr) Y->data<int64_t>()[0] = X->size();
    return Status::OK();
  }
};

}  // namespace

ONYX_REGISTER_KERNEL(ShapeKernel, "", "Shape", 1, kMaxVersion, AnyType());
ONYX_REGISTER_KERNEL(SizeKernel, "", "Size", 1, kMaxVersion, AnyType());

}  // namespace onyx

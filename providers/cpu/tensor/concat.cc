#include <climits>
#include <string>
#include <vector>

#include "providers/cpu/common/concat_copy.h"
#include "providers/kernel.h"

namespace onyx {

namespace {

class ConcatKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    const Attribute* a = info.Attr("axis");
    // Opset 1-3 defaults to axis 1; later opsets require the attribute.
    ONYX_CHECK(a != nullptr || info.opset() < 4, ErrorCode::kInvalidGraph, "Concat: attribute 'axis' is required");
    axis_ = a ? a->i : 1;
    return Status::OK();
  }

  Status Compute(KernelContext& ctx) const override {
    const int n = ctx.InputCount();
    ONYX_CHECK_ARG(n >= 1, "Concat: needs at least one input");
    std::vector<const Tensor*> ins;
    for (int i = 0; i < n; ++i) {
      const Tensor* t = nullptr;
      ONYX_RETURN_IF_ERROR(ctx.RequiredInput(i, &t));
      ins.push_back(t);
    }
    const Tensor& first = *ins[0];
    const int64_t rank = static_cast<int64_t>(first.rank());
    ONYX_CHECK_ARG(rank > 0, "Concat: inputs must have rank >= 1, input 0 is a scalar");
    const int64_t axis = axis_ < 0 ? axis_ + rank : axis_;
    ONYX_CHECK_ARG(axis >= 0 && axis < rank, "Concat: attribute axis ", axis_, " is out of range for rank ", rank);
    Dims out = first.dims();
    out[axis] = 0;
    for (int i = 0; i < n; ++i) {
      const Tensor& t = *ins[i];
      ONYX_CHECK_ARG(t.type() == first.type(), "Concat: input ", i, " has type ", ElemTypeName(t.type()),
                     " but input 0 has type ", ElemTypeName(first.type()));
      bool ok = static_cast<int64_t>(t.rank()) == rank;
      for (int64_t k = 0; ok && k < rank; ++k) ok = k == axis || t.dims()[k] == first.dims()[k];
      ONYX_CHECK_ARG(ok, "Concat: input ", i, " has shape ", ShapeToString(t.dims()), " which does not match input 0 ",
                     ShapeToString(first.dims()), " outside axis ", axis);
      out[axis] += t.dims()[axis];
    }
    Tensor* Y = ctx.Output(0, out, first.type());
    if (Y == nullptr) return Status::OK();
    int64_t outer = 1;
    for (int64_t k = 0; k < axis; ++k) outer *= out[k];
    return ConcatInto(ins, outer, ctx.threads(), Y, "Concat");
  }

 private:
  int64_t axis_ = 0;
};

}  // namespace

ONYX_REGISTER_KERNEL(ConcatKernel, "", "Concat", 1, kMaxVersion, AnyType());

}  // namespace onyx

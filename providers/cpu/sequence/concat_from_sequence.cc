// ConcatFromSequence (opset 11): concatenates a sequence's tensors along
// `axis`, or with new_axis=1 stacks them along a new axis inserted there.
#include <climits>

#include "providers/cpu/common/concat_copy.h"
#include "providers/kernel.h"
#include "providers/cpu/sequence/sequence_common.h"

namespace onyx {
namespace {

using sequence::KindName;

class ConcatFromSequenceKernel final : public sequence::NodeKernel {
 public:
  Status Init(const KernelInfo& info) {
    ONYX_RETURN_IF_ERROR(NodeKernel::Init(info));
    const Attribute* a = info.Attr("axis");
    ONYX_CHECK(a != nullptr, ErrorCode::kInvalidGraph, node(), ": attribute 'axis' is required");
    axis_ = a->i;
    new_axis_ = info.AttrInt("new_axis", 0);
    ONYX_CHECK(new_axis_ == 0 || new_axis_ == 1, ErrorCode::kInvalidGraph, node(), ": attribute 'new_axis' must be 0 or 1, got ",
               new_axis_);
    return Status::OK();
  }

  Status Compute(KernelContext& ctx) const override {
    const Value* seq = nullptr;
    ONYX_RETURN_IF_ERROR(SequenceInput(ctx, 0, &seq));
    const std::vector<Value>& items = seq->items();
    ONYX_CHECK_ARG(!items.empty(), node(), ": the input sequence is empty; there is nothing to concatenate");
    std::vector<const Tensor*> ins;
    for (size_t i = 0; i < items.size(); ++i) {
      ONYX_CHECK_ARG(items[i].IsTensor(), node(), ": sequence element ", i, " is ", KindName(items[i]),
                     ", not a tensor");
      ins.push_back(&items[i].tensor());
    }
    const Tensor& first = *ins[0];
    const int64_t rank = static_cast<int64_t>(first.rank());
    // With new_axis the output has one more dimension and `axis` indexes it.
    const int64_t out_rank = rank + new_axis_;
    ONYX_CHECK_ARG(out_rank >= 1, node(), ": cannot concatenate scalars without new_axis=1");
    ONYX_CHECK_ARG(axis_ >= -out_rank && axis_ < out_rank, node(), ": attribute axis ", axis_,
                   " is out of range [", -out_rank, ", ", out_rank - 1, "] for elements of rank ", rank,
                   new_axis_ ? " with new_axis=1" : "");
    const int64_t axis = axis_ < 0 ? axis_ + out_rank : axis_;

    // Each element seen with the output's rank: a 1 inserted at `axis` for new_axis.
    auto view = [&](const Tensor& t) {
      Dims d = t.dims();
      if (new_axis_) d.insert(d.begin() + axis, 1);
      return d;
    };
    const Dims first_view = view(first);
    Dims out = first_view;
    out[axis] = 0;
    for (size_t i = 0; i < ins.size(); ++i) {
      const Tensor& t = *ins[i];
      ONYX_CHECK_ARG(t.type() == first.type(), node(), ": sequence element ", i, " is ", ElemTypeName(t.type()),
                     " but element 0 is ", ElemTypeName(first.type()));
      bool ok = static_cast<int64_t>(t.rank()) == rank;
      const Dims v = ok ? view(t) : Dims{};
      for (int64_t k = 0; ok && k < out_rank; ++k) ok = k == axis || v[k] == first_view[k];
      ONYX_CHECK_ARG(ok, node(), ": sequence element ", i, " has shape ", ShapeToString(t.dims()),
                     " which does not match element 0 ", ShapeToString(first.dims()),
                     new_axis_ ? "" : StrCat(" outside axis ", axis));
      out[axis] += v[axis];
    }
    Tensor* Y = ctx.Output(0, out, first.type());
    if (Y == nullptr) return Status::OK();

    int64_t outer = 1;
    for (int64_t k = 0; k < axis; ++k) outer *= out[k];
    return ConcatInto(ins, outer, ctx.threads(), Y, node());
  }

 private:
  int64_t axis_ = 0;
  int64_t new_axis_ = 0;
};

}  // namespace

ONYX_REGISTER_KERNEL(ConcatFromSequenceKernel, "", "ConcatFromSequence", 11, kMaxVersion, AnyType());

}  // namespace onyx

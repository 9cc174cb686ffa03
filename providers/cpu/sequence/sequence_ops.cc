// SequenceEmpty, SequenceConstruct, SequenceInsert, SequenceErase, SequenceAt,
// SequenceLength (opset 11). Sequences are immutable and their items shared:
// building a new sequence copies the item list, never the tensors.
#include <climits>

#include "providers/kernel.h"
#include "providers/cpu/sequence/sequence_common.h"

namespace onyx {
namespace {

using sequence::KindName;
using sequence::NodeKernel;

class SequenceEmptyKernel final : public NodeKernel {
 public:
  Status Init(const KernelInfo& info) {
    ONYX_RETURN_IF_ERROR(NodeKernel::Init(info));
    const Attribute* a = info.Attr("dtype");
    if (a != nullptr) {
      // Only the graph's typing uses dtype; an empty sequence holds nothing
      // to give a type to. A bad one is still an error, as in onnx's checker.
      ONYX_CHECK(a->type == Attribute::Type::kInt && a->i > 0 && a->i <= INT32_MAX &&
                     IsKnownElemType(static_cast<int32_t>(a->i)),
                 ErrorCode::kInvalidGraph, node(), ": attribute 'dtype' (", a->i, ") is not a tensor element type");
    }
    return Status::OK();
  }
  Status Compute(KernelContext& ctx) const override { return ctx.SetOutputValue(0, Value::Sequence({})); }
};

class SequenceConstructKernel final : public NodeKernel {
 public:
  Status Compute(KernelContext& ctx) const override {
    const int n = ctx.InputCount();
    ONYX_CHECK_ARG(n >= 1, node(), ": needs at least one input");
    std::vector<Value> items;
    items.reserve(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) {
      const Value* v = nullptr;
      ONYX_RETURN_IF_ERROR(AnyInput(ctx, i, &v));
      ONYX_CHECK_ARG(v->IsTensor(), node(), ": ", InputName(i), " must be a tensor, got ", KindName(*v));
      ONYX_CHECK_ARG(i == 0 || v->tensor().type() == items[0].tensor().type(), node(), ": ", InputName(i),
                     " is ", KindName(*v), " but input 0 is ", KindName(items[0]),
                     "; a sequence holds tensors of one type");
      items.push_back(*v);
    }
    return ctx.SetOutputValue(0, Value::Sequence(std::move(items)));
  }
};

class SequenceInsertKernel final : public NodeKernel {
 public:
  Status Init(const KernelInfo& info) {
    ONYX_RETURN_IF_ERROR(NodeKernel::Init(info));
    // The element type of a sequence that is empty at run time is only
    // known from the graph.
    const TypeInfo& t = info.InputType(0);
    if (t.kind == TypeInfo::Kind::kSequence && t.inner && t.inner->kind == TypeInfo::Kind::kTensor)
      declared_elem_ = t.inner->elem;
    return Status::OK();
  }

  Status Compute(KernelContext& ctx) const override {
    const Value* seq = nullptr;
    ONYX_RETURN_IF_ERROR(SequenceInput(ctx, 0, &seq));
    const Value* v = nullptr;
    ONYX_RETURN_IF_ERROR(AnyInput(ctx, 1, &v));
    ONYX_CHECK_ARG(v->IsTensor(), node(), ": ", InputName(1), " must be a tensor, got ", KindName(*v));
    const std::vector<Value>& items = seq->items();
    const ElemType want = !items.empty() && items[0].IsTensor() ? items[0].tensor().type() : declared_elem_;
    ONYX_CHECK_ARG(want == ElemType::kUndefined || v->tensor().type() == want, node(), ": cannot insert ",
                   KindName(*v), " into a sequence of tensor(", ElemTypeName(want), ")");
    const int64_t n = static_cast<int64_t>(items.size());
    int64_t pos = n;
    ONYX_RETURN_IF_ERROR(PositionInput(ctx, 2, n, &pos));
    ONYX_RETURN_IF_ERROR(NormalizePosition(pos, n, /*allow_end=*/true, &pos));
    std::vector<Value> out;
    out.reserve(items.size() + 1);
    out.insert(out.end(), items.begin(), items.begin() + pos);
    out.push_back(*v);
    out.insert(out.end(), items.begin() + pos, items.end());
    return ctx.SetOutputValue(0, Value::Sequence(std::move(out)));
  }

 private:
  ElemType declared_elem_ = ElemType::kUndefined;
};

class SequenceEraseKernel final : public NodeKernel {
 public:
  Status Compute(KernelContext& ctx) const override {
    const Value* seq = nullptr;
    ONYX_RETURN_IF_ERROR(SequenceInput(ctx, 0, &seq));
    const std::vector<Value>& items = seq->items();
    const int64_t n = static_cast<int64_t>(items.size());
    int64_t pos = -1;
    ONYX_RETURN_IF_ERROR(PositionInput(ctx, 1, -1, &pos));
    ONYX_RETURN_IF_ERROR(NormalizePosition(pos, n, /*allow_end=*/false, &pos));
    std::vector<Value> out;
    out.reserve(items.size() - 1);
    out.insert(out.end(), items.begin(), items.begin() + pos);
    out.insert(out.end(), items.begin() + pos + 1, items.end());
    return ctx.SetOutputValue(0, Value::Sequence(std::move(out)));
  }
};

class SequenceAtKernel final : public NodeKernel {
 public:
  Status Compute(KernelContext& ctx) const override {
    const Value* seq = nullptr;
    ONYX_RETURN_IF_ERROR(SequenceInput(ctx, 0, &seq));
    ONYX_CHECK_ARG(ctx.Input(1) != nullptr || ctx.InputValue(1) != nullptr, node(), ": ", InputName(1),
                   " (position) is required but missing");
    const std::vector<Value>& items = seq->items();
    const int64_t n = static_cast<int64_t>(items.size());
    int64_t pos = 0;
    ONYX_RETURN_IF_ERROR(PositionInput(ctx, 1, 0, &pos));
    ONYX_RETURN_IF_ERROR(NormalizePosition(pos, n, /*allow_end=*/false, &pos));
    const Value& item = items[static_cast<size_t>(pos)];
    if (item.IsTensor()) return sequence::OutputCopyOf(ctx, 0, item.tensor());
    return ctx.SetOutputValue(0, item);
  }
};

class SequenceLengthKernel final : public NodeKernel {
 public:
  Status Compute(KernelContext& ctx) const override {
    const Value* seq = nullptr;
    ONYX_RETURN_IF_ERROR(SequenceInput(ctx, 0, &seq));
    Tensor* y = ctx.Output(0, {}, ElemType::kInt64);
    if (y != nullptr) y->data<int64_t>()[0] = static_cast<int64_t>(seq->items().size());
    return Status::OK();
  }
};

}  // namespace

ONYX_REGISTER_KERNEL(SequenceEmptyKernel, "", "SequenceEmpty", 11, kMaxVersion, AnyType());
ONYX_REGISTER_KERNEL(SequenceConstructKernel, "", "SequenceConstruct", 11, kMaxVersion, AnyType());
ONYX_REGISTER_KERNEL(SequenceInsertKernel, "", "SequenceInsert", 11, kMaxVersion, AnyType());
ONYX_REGISTER_KERNEL(SequenceEraseKernel, "", "SequenceErase", 11, kMaxVersion, AnyType());
ONYX_REGISTER_KERNEL(SequenceAtKernel, "", "SequenceAt", 11, kMaxVersion, AnyType());
ONYX_REGISTER_KERNEL(SequenceLengthKernel, "", "SequenceLength", 11, kMaxVersion, AnyType());

}  // namespace onyx

// Optional (opset 15), OptionalHasElement and OptionalGetElement (opset 15;
// from opset 18 they also take a plain tensor or sequence, which counts as
// present, and OptionalHasElement's input may be omitted, which does not).
#include <climits>

#include "providers/kernel.h"
#include "providers/cpu/sequence/sequence_common.h"

namespace onyx {
namespace {

using sequence::KindName;

class OptionalKernel final : public sequence::NodeKernel {
 public:
  Status Init(const KernelInfo& info) {
    ONYX_RETURN_IF_ERROR(NodeKernel::Init(info));
    // An empty optional's type comes only from the attribute.
    ONYX_CHECK(info.HasInput(0) || info.Attr("type") != nullptr, ErrorCode::kInvalidGraph, node(),
               ": attribute 'type' is required when the input is omitted");
    return Status::OK();
  }

  Status Compute(KernelContext& ctx) const override {
    const Value* v = ctx.InputValue(0);
    if (v == nullptr) {
      ONYX_CHECK(ctx.Input(0) == nullptr, ErrorCode::kNotImplemented, node(), ": this context holds tensor values only");
      return ctx.SetOutputValue(0, Value::Optional(Value()));
    }
    ONYX_CHECK_ARG(v->IsTensor() || v->IsSequence(), node(), ": ", InputName(0),
                   " must be a tensor or a sequence of tensors, got ", KindName(*v));
    return ctx.SetOutputValue(0, Value::Optional(*v));
  }
};

// Before opset 18 the input must be an optional.
Status CheckPlainAllowed(int opset, const std::string& node, const std::string& input, const std::string& kind) {
  ONYX_CHECK_ARG(opset >= 18, node, ": ", input, " must be an optional before opset 18, got ", kind);
  return Status::OK();
}

class OptionalHasElementKernel final : public sequence::NodeKernel {
 public:
  Status Init(const KernelInfo& info) {
    opset_ = info.opset();
    return NodeKernel::Init(info);
  }

  Status Compute(KernelContext& ctx) const override {
    bool has = false;
    if (const Value* v = ctx.InputValue(0)) {
      if (v->kind() == Value::Kind::kOptional) {
        has = !v->items().empty();
      } else {
        ONYX_RETURN_IF_ERROR(CheckPlainAllowed(opset_, node(), InputName(0), KindName(*v)));
        has = true;
      }
    } else if (const Tensor* t = ctx.Input(0)) {  // a tensor-only context
      ONYX_RETURN_IF_ERROR(
          CheckPlainAllowed(opset_, node(), InputName(0), StrCat("tensor(", ElemTypeName(t->type()), ")")));
      has = true;
    } else {
      ONYX_CHECK_ARG(opset_ >= 18, node(), ": input 0 is required before opset 18");
    }
    Tensor* y = ctx.Output(0, {}, ElemType::kBool);
    if (y != nullptr) y->data<bool>()[0] = has;
    return Status::OK();
  }

 private:
  int opset_ = 0;
};

class OptionalGetElementKernel final : public sequence::NodeKernel {
 public:
  Status Init(const KernelInfo& info) {
    opset_ = info.opset();
    return NodeKernel::Init(info);
  }

  Status Compute(KernelContext& ctx) const override {
    const Value* v = ctx.InputValue(0);
    if (v == nullptr) {
      const Tensor* t = nullptr;
      ONYX_RETURN_IF_ERROR(TensorInput(ctx, 0, &t));  // a tensor-only context
      ONYX_RETURN_IF_ERROR(
          CheckPlainAllowed(opset_, node(), InputName(0), StrCat("tensor(", ElemTypeName(t->type()), ")")));
      return sequence::OutputCopyOf(ctx, 0, *t);
    }
    const Value* inner = v;
    if (v->kind() == Value::Kind::kOptional) {
      ONYX_CHECK_ARG(!v->items().empty(), node(), ": ", InputName(0), " is an empty optional; it has no element to get");
      inner = &v->items()[0];
    } else {
      ONYX_RETURN_IF_ERROR(CheckPlainAllowed(opset_, node(), InputName(0), KindName(*v)));
    }
    if (inner->IsTensor()) return sequence::OutputCopyOf(ctx, 0, inner->tensor());
    return ctx.SetOutputValue(0, *inner);
  }

 private:
  int opset_ = 0;
};

}  // namespace

ONYX_REGISTER_KERNEL(OptionalKernel, "", "Optional", 15, kMaxVersion, AnyType());
ONYX_REGISTER_KERNEL(OptionalHasElementKernel, "", "OptionalHasElement", 15, kMaxVersion, AnyType());
ONYX_REGISTER_KERNEL(OptionalGetElementKernel, "", "OptionalGetElement", 15, kMaxVersion, AnyType());

}  // namespace onyx

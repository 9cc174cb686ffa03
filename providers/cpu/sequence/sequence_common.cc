#include "providers/cpu/sequence/sequence_common.h"

#include <cstring>

namespace onyx {
namespace sequence {

std::string NodeKernel::InputName(int i) const {
  const std::string name = i >= 0 && i < static_cast<int>(input_names_.size()) ? input_names_[i] : "";
  return name.empty() ? StrCat("input ", i) : StrCat("input ", i, " ('", name, "')");
}

Status NodeKernel::AnyInput(const KernelContext& ctx, int i, const Value** out) const {
  *out = ctx.InputValue(i);
  if (*out != nullptr) return Status::OK();
  ONYX_CHECK(ctx.Input(i) == nullptr, ErrorCode::kNotImplemented, node_, ": this context holds tensor values only");
  return MakeError(ErrorCode::kInvalidArgument, node_, ": ", InputName(i), " is required but missing");
}

Status NodeKernel::SequenceInput(const KernelContext& ctx, int i, const Value** out) const {
  ONYX_RETURN_IF_ERROR(AnyInput(ctx, i, out));
  ONYX_CHECK_ARG((*out)->IsSequence(), node_, ": ", InputName(i), " must be a sequence, got ", KindName(**out));
  return Status::OK();
}

Status NodeKernel::TensorInput(const KernelContext& ctx, int i, const Tensor** out) const {
  *out = ctx.Input(i);
  if (*out != nullptr) return Status::OK();
  const Value* v = ctx.InputValue(i);
  ONYX_CHECK_ARG(v == nullptr, node_, ": ", InputName(i), " must be a tensor, got ", KindName(*v));
  return MakeError(ErrorCode::kInvalidArgument, node_, ": ", InputName(i), " is required but missing");
}

Status NodeKernel::PositionInput(const KernelContext& ctx, int i, int64_t dflt, int64_t* out) const {
  *out = dflt;
  const Tensor* t = ctx.Input(i);
  if (t == nullptr) {
    const Value* v = ctx.InputValue(i);
    ONYX_CHECK_ARG(v == nullptr, node_, ": ", InputName(i), " (position) must be a tensor, got ", KindName(*v));
    return Status::OK();
  }
  ONYX_CHECK_ARG(t->size() == 1 && t->rank() <= 1, node_, ": ", InputName(i),
                 " (position) must be a scalar, got shape ", ShapeToString(t->dims()));
  if (t->type() == ElemType::kInt64) *out = t->data<int64_t>()[0];
  else if (t->type() == ElemType::kInt32) *out = t->data<int32_t>()[0];
  else
    return MakeError(ErrorCode::kInvalidArgument, node_, ": ", InputName(i), " (position) must be int32 or int64, got ",
                     ElemTypeName(t->type()));
  return Status::OK();
}

Status NodeKernel::NormalizePosition(int64_t pos, int64_t n, bool allow_end, int64_t* out) const {
  const int64_t hi = allow_end ? n : n - 1;
  if (hi < 0)
    return MakeError(ErrorCode::kInvalidArgument, node_, ": position ", pos, " is out of range: the sequence is empty");
  ONYX_CHECK_ARG(pos >= -n && pos <= hi, node_, ": position ", pos, " is out of range [", -n, ", ", hi,
                 "] for a sequence of length ", n);
  *out = pos < 0 ? pos + n : pos;
  return Status::OK();
}

std::string KindName(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::kTensor:
      return StrCat("tensor(", ElemTypeName(v.tensor().type()), ")");
    case Value::Kind::kSequence:
      return StrCat("a sequence of length ", v.items().size());
    case Value::Kind::kMap:
      return "a map";
    case Value::Kind::kOptional:
      return v.items().empty() ? "an empty optional" : "an optional";
    case Value::Kind::kSparseTensor:
      return "a sparse tensor";
    default:
      return "no value";
  }
}

void CopyTensorData(const Tensor& src, Tensor* dst) {
  if (src.type() == ElemType::kString) {
    const auto* s = src.data<std::string>();
    auto* d = dst->data<std::string>();
    for (int64_t i = 0; i < src.size(); ++i) d[i] = s[i];
  } else if (src.bytes() > 0) {
    std::memcpy(dst->raw(), src.raw(), src.bytes());
  }
}

Status OutputCopyOf(KernelContext& ctx, int i, const Tensor& src) {
  Tensor* y = ctx.Output(i, src.dims(), src.type());
  if (y != nullptr) CopyTensorData(src, y);
  return Status::OK();
}

}  // namespace sequence
}  // namespace onyx

#include "providers/cpu/controlflow/controlflow_util.h"

#include "providers/cpu/common/concat_copy.h"

#include <cstring>
#include <string>

namespace onyx {
namespace controlflow {
namespace {

bool SubByte(ElemType t) { return SubByteBits(t) != 0; }

// Copies `count` elements from src[src_off] to dst[dst_off] (element offsets).
void CopyElems(const Tensor& src, int64_t src_off, Tensor& dst, int64_t dst_off, int64_t count) {
  if (count <= 0) return;
  if (src.type() == ElemType::kString) {
    const std::string* s = src.data<std::string>() + src_off;
    std::string* d = dst.data<std::string>() + dst_off;
    for (int64_t i = 0; i < count; ++i) d[i] = s[i];
    return;
  }
  const size_t es = ElemSize(src.type());
  std::memcpy(static_cast<char*>(dst.raw()) + dst_off * es, static_cast<const char*>(src.raw()) + src_off * es,
              static_cast<size_t>(count) * es);
}

}  // namespace

Status SetOutput(KernelContext& ctx, int i, const Value& v, const std::string& what) {
  if (!v.HasValue()) return MakeError(ErrorCode::kFail, what, " produced no value for output ", i);
  if (!v.IsTensor()) return ctx.SetOutputValue(i, v);
  const Tensor& t = v.tensor();
  Tensor* out = ctx.Output(i, t.dims(), t.type());
  if (out == nullptr) return Status::OK();
  if (t.type() == ElemType::kString) {
    CopyElems(t, 0, *out, 0, t.size());
  } else if (t.bytes() > 0) {
    std::memcpy(out->raw(), t.raw(), t.bytes());
  }
  return Status::OK();
}

Value Int64Scalar(int64_t v) {
  auto t = std::make_shared<Tensor>(ElemType::kInt64, Dims{});
  *t->data<int64_t>() = v;
  return Value(std::move(t));
}

Value BoolScalar(bool v) {
  auto t = std::make_shared<Tensor>(ElemType::kBool, Dims{});
  *t->data<bool>() = v;
  return Value(std::move(t));
}

Status ScalarBool(const Tensor* t, const std::string& what, bool* out) {
  ONYX_CHECK_ARG(t != nullptr, what, " is not a tensor");
  ONYX_CHECK_ARG(t->size() == 1, what, " must hold one element, got shape ", ShapeToString(t->dims()));
  switch (t->type()) {
    case ElemType::kBool: *out = *t->data<bool>(); return Status::OK();
    case ElemType::kInt64: *out = *t->data<int64_t>() != 0; return Status::OK();
    case ElemType::kInt32: *out = *t->data<int32_t>() != 0; return Status::OK();
    case ElemType::kUint8: *out = *t->data<uint8_t>() != 0; return Status::OK();
    case ElemType::kFloat: *out = *t->data<float>() != 0.f; return Status::OK();
    default: return MakeError(ErrorCode::kInvalidArgument, what, " must be a bool tensor, got ", ElemTypeName(t->type()));
  }
}

Status ScalarInt64(const Tensor* t, const std::string& what, int64_t* out) {
  ONYX_CHECK_ARG(t != nullptr, what, " is not a tensor");
  ONYX_CHECK_ARG(t->size() == 1, what, " must hold one element, got shape ", ShapeToString(t->dims()));
  switch (t->type()) {
    case ElemType::kInt64: *out = *t->data<int64_t>(); return Status::OK();
    case ElemType::kInt32: *out = *t->data<int32_t>(); return Status::OK();
    default: return MakeError(ErrorCode::kInvalidArgument, what, " must be an int64 tensor, got ", ElemTypeName(t->type()));
  }
}

Status SliceAlongAxis(const Tensor& x, int64_t axis, int64_t index, Tensor* out) {
  ONYX_CHECK_ARG(!SubByte(x.type()), "slicing ", ElemTypeName(x.type()), " tensors is not supported");
  const Dims& d = x.dims();
  ONYX_CHECK_ARG(axis >= 0 && axis < static_cast<int64_t>(d.size()), "axis ", axis, " is out of range for shape ",
                 ShapeToString(d));
  ONYX_CHECK_ARG(index >= 0 && index < d[axis], "index ", index, " is out of range for axis ", axis, " of shape ",
                 ShapeToString(d));
  Dims od;
  int64_t outer = 1, inner = 1;
  for (size_t k = 0; k < d.size(); ++k) {
    if (static_cast<int64_t>(k) < axis) outer *= d[k];
    if (static_cast<int64_t>(k) > axis) inner *= d[k];
    if (static_cast<int64_t>(k) != axis) od.push_back(d[k]);
  }
  *out = Tensor(x.type(), od);
  for (int64_t o = 0; o < outer; ++o) CopyElems(x, (o * d[axis] + index) * inner, *out, o * inner, inner);
  return Status::OK();
}

Status StackAlongAxis(const std::vector<std::shared_ptr<Tensor>>& parts, int64_t axis, bool reverse,
                      ThreadPool* threads, Tensor* out) {
  if (parts.empty()) return Status::OK();
  const Dims& pd = parts[0]->dims();
  ONYX_CHECK_ARG(!SubByte(parts[0]->type()), "stacking ", ElemTypeName(parts[0]->type()), " tensors is not supported");
  ONYX_CHECK_ARG(axis >= 0 && axis <= static_cast<int64_t>(pd.size()), "axis ", axis, " is out of range for rank ",
                 pd.size() + 1);
  // Stacking is concatenation of parts seen with a 1 inserted at `axis`.
  int64_t outer = 1;
  for (int64_t k = 0; k < axis; ++k) outer *= pd[k];
  std::vector<const Tensor*> ins;
  ins.reserve(parts.size());
  for (size_t p = 0; p < parts.size(); ++p) {
    const Tensor& part = *parts[reverse ? parts.size() - 1 - p : p];
    ONYX_CHECK_ARG(part.dims() == pd && part.type() == parts[0]->type(), "iteration outputs differ: ",
                   ElemTypeName(parts[0]->type()), ShapeToString(pd), " and ", ElemTypeName(part.type()),
                   ShapeToString(part.dims()));
    ins.push_back(&part);
  }
  return ConcatInto(ins, outer, threads, out, "stacking iteration outputs");
}

}  // namespace controlflow
}  // namespace onyx

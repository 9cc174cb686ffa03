// Shape rules: sequences (SequenceEmpty/Construct/Insert/Erase/At/Length,
// ConcatFromSequence, SplitToSequence) and optionals (Optional,
// OptionalHasElement, OptionalGetElement). A sequence's element type carries
// the shape its tensors share: dims that differ between them are unknown, and
// a rank that differs leaves no shape.
#include <limits>

#include "core/graph/shape_inference.h"

namespace onyx {
namespace shape_inference {
namespace {

using Kind = TypeInfo::Kind;

TypeInfo Wrap(Kind kind, TypeInfo inner) {
  TypeInfo t;
  t.kind = kind;
  t.inner = std::make_shared<TypeInfo>(std::move(inner));
  return t;
}

// The tensor type of a sequence's elements, or null when not known.
const TypeInfo* ElementOf(const TypeInfo& seq) {
  if (seq.kind != Kind::kSequence || !seq.inner || seq.inner->kind != Kind::kTensor) return nullptr;
  return seq.inner.get();
}

// What two tensors of one sequence have in common (both of kind kTensor).
TypeInfo Common(const TypeInfo& a, const TypeInfo& b) {
  TypeInfo r = TypeInfo::Tensor(a.elem == b.elem ? a.elem : ElemType::kUndefined);
  if (!a.has_shape || !b.has_shape || a.dims.size() != b.dims.size()) return r;
  r.has_shape = true;
  for (size_t i = 0; i < a.dims.size(); ++i) r.dims.push_back(a.dims[i] == b.dims[i] ? a.dims[i] : Dim{});
  return r;
}

// The tensor type with its shape forgotten.
TypeInfo ElemOnly(const TypeInfo& t) { return TypeInfo::Tensor(t.elem); }

std::string TypeName(ElemType e) { return StrCat("tensor(", ElemTypeName(e), ")"); }

Status SequenceEmpty(InferContext& ctx) {
  ElemType e = ElemType::kFloat;
  if (const Attribute* a = ctx.node().Attr("dtype")) {
    // A bad dtype is the kernel's to report.
    if (a->type != Attribute::Type::kInt || a->i <= 0 || a->i > std::numeric_limits<int32_t>::max() ||
        !IsKnownElemType(static_cast<int32_t>(a->i)))
      return Status::OK();
    e = static_cast<ElemType>(a->i);
  }
  ctx.Output(0) = Wrap(Kind::kSequence, TypeInfo::Tensor(e));
  return Status::OK();
}

Status SequenceConstruct(InferContext& ctx) {
  TypeInfo elem;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    const TypeInfo& t = ctx.Input(i);
    if (t.kind != Kind::kTensor || t.elem == ElemType::kUndefined) return Status::OK();
    if (i == 0) {
      elem = t;
      continue;
    }
    if (t.elem != elem.elem)
      return ctx.Fail(StrCat("input ", i, " is ", TypeName(t.elem), " but input 0 is ", TypeName(elem.elem),
                             "; a sequence holds tensors of one type"));
    elem = Common(elem, t);
  }
  if (elem.kind == Kind::kTensor) ctx.Output(0) = Wrap(Kind::kSequence, elem);
  return Status::OK();
}

Status SequenceInsert(InferContext& ctx) {
  const TypeInfo& t = ctx.Input(1);
  if (t.kind != Kind::kTensor || t.elem == ElemType::kUndefined) {
    if (ElementOf(ctx.Input(0))) ctx.Output(0) = Wrap(Kind::kSequence, ElemOnly(*ElementOf(ctx.Input(0))));
    return Status::OK();
  }
  const TypeInfo* have = ElementOf(ctx.Input(0));
  if (have == nullptr) {
    // Nothing known about the other elements' shapes.
    ctx.Output(0) = Wrap(Kind::kSequence, ElemOnly(t));
    return Status::OK();
  }
  if (have->elem != ElemType::kUndefined && have->elem != t.elem)
    return ctx.Fail(StrCat("cannot insert ", TypeName(t.elem), " into a sequence of ", TypeName(have->elem)));
  ctx.Output(0) = Wrap(Kind::kSequence, Common(*have, t));
  return Status::OK();
}

Status SequenceErase(InferContext& ctx) {
  if (ctx.Input(0).kind == Kind::kSequence) ctx.Output(0) = ctx.Input(0);
  return Status::OK();
}

Status SequenceAt(InferContext& ctx) {
  if (const TypeInfo* e = ElementOf(ctx.Input(0))) {
    if (e->elem != ElemType::kUndefined) ctx.Output(0) = *e;
  }
  return Status::OK();
}

Status SequenceLength(InferContext& ctx) {
  ctx.SetTensor(0, ElemType::kInt64, {});
  return Status::OK();
}

Status ConcatFromSequence(InferContext& ctx) {
  const TypeInfo* e = ElementOf(ctx.Input(0));
  if (e == nullptr || e->elem == ElemType::kUndefined) return Status::OK();
  const Attribute* axis_attr = ctx.node().Attr("axis");
  const int64_t new_axis = ctx.node().AttrInt("new_axis", 0);
  if (!e->has_shape || axis_attr == nullptr || (new_axis != 0 && new_axis != 1)) {
    ctx.SetTensor(0, e->elem);
    return Status::OK();
  }
  const int64_t rank = static_cast<int64_t>(e->dims.size());
  const int64_t out_rank = rank + new_axis;
  int64_t axis = 0;
  if (!NormalizeAxis(axis_attr->i, out_rank, &axis))
    return ctx.Fail(StrCat("attribute axis ", axis_attr->i, " is out of range for sequence elements of rank ", rank,
                           new_axis ? " with new_axis=1" : ""));
  std::vector<Dim> dims = e->dims;
  // The length along the axis depends on how many elements there are.
  if (new_axis) dims.insert(dims.begin() + axis, Dim{});
  else dims[static_cast<size_t>(axis)] = Dim{};
  ctx.SetTensor(0, e->elem, dims);
  return Status::OK();
}

Status SplitToSequence(InferContext& ctx) {
  const ElemType e = ctx.InputElem(0);
  if (e == ElemType::kUndefined) return Status::OK();
  if (!ctx.HasShape(0)) {
    ctx.Output(0) = Wrap(Kind::kSequence, TypeInfo::Tensor(e));
    return Status::OK();
  }
  std::vector<Dim> dims = ctx.Dims(0);
  const int64_t rank = static_cast<int64_t>(dims.size());
  const int64_t axis_attr = ctx.node().AttrInt("axis", 0);
  int64_t axis = 0;
  if (!NormalizeAxis(axis_attr, rank, &axis))
    return ctx.Fail(StrCat("attribute axis ", axis_attr, " is out of range for input shapes ", ctx.InputShapes()));
  Dim& d = dims[static_cast<size_t>(axis)];
  if (!ctx.HasInput(1)) {
    if (ctx.node().AttrInt("keepdims", 1) != 0) d = Dim::Of(1);
    else dims.erase(dims.begin() + axis);
  } else {
    // Elements share a length along the axis only when every chunk has it.
    const IntData* split = ctx.Data(1);
    Dim chunk;
    if (split != nullptr && split->AllKnown() && split->size() >= 1) {
      const int64_t first = split->v[0];
      bool same = first > 0;
      for (int64_t v : split->v) same = same && v == first;
      // A scalar's last chunk is shorter unless it divides the axis.
      if (split->scalar) same = same && d.known() && (d.value % first == 0 || d.value < first);
      if (same) chunk = split->scalar && d.known() && d.value < first ? d : Dim::Of(first);
    }
    d = chunk;
  }
  ctx.Output(0) = Wrap(Kind::kSequence, TypeInfo::Tensor(e, dims));
  return Status::OK();
}

// The input's type, or the `type` attribute's when the input is omitted.
Status Optional(InferContext& ctx) {
  const Attribute* a = ctx.node().Attr("type");
  const TypeInfo* declared = a && a->type == Attribute::Type::kTypeProto && a->tp ? a->tp.get() : nullptr;
  if (!ctx.HasInput(0)) {
    if (declared && declared->kind != Kind::kUnknown) ctx.Output(0) = Wrap(Kind::kOptional, *declared);
    return Status::OK();
  }
  const TypeInfo& t = ctx.Input(0);
  if (t.kind == Kind::kUnknown) return Status::OK();
  if (declared && declared->kind == Kind::kTensor && t.kind == Kind::kTensor &&
      declared->elem != ElemType::kUndefined && t.elem != ElemType::kUndefined && declared->elem != t.elem)
    return ctx.Fail(StrCat("input 0 is ", t.ToString(), " but attribute 'type' says ", declared->ToString()));
  ctx.Output(0) = Wrap(Kind::kOptional, t);
  return Status::OK();
}

Status OptionalHasElement(InferContext& ctx) {
  ctx.SetTensor(0, ElemType::kBool, {});
  return Status::OK();
}

Status OptionalGetElement(InferContext& ctx) {
  const TypeInfo& t = ctx.Input(0);
  if (t.kind == Kind::kOptional) {
    if (t.inner && t.inner->kind != Kind::kUnknown) ctx.Output(0) = *t.inner;
    return Status::OK();
  }
  if (t.kind == Kind::kUnknown) return Status::OK();
  if (ctx.opset() < 18) return ctx.Fail(StrCat("input 0 must be an optional before opset 18, got ", t.ToString()));
  ctx.Output(0) = t;
  return Status::OK();
}

}  // namespace

void RegisterSequenceRules(RuleMap& m) {
  m["SequenceEmpty"] = SequenceEmpty;
  m["SequenceConstruct"] = SequenceConstruct;
  m["SequenceInsert"] = SequenceInsert;
  m["SequenceErase"] = SequenceErase;
  m["SequenceAt"] = SequenceAt;
  m["SequenceLength"] = SequenceLength;
  m["ConcatFromSequence"] = ConcatFromSequence;
  m["SplitToSequence"] = SplitToSequence;
  m["Optional"] = Optional;
  m["OptionalHasElement"] = OptionalHasElement;
  m["OptionalGetElement"] = OptionalGetElement;
}

}  // namespace shape_inference
}  // namespace onyx

// Shape rules: the random generators (RandomNormal, RandomUniform, their
// *Like forms, Bernoulli, Multinomial). Their values are never known at load
// time, only types and shapes; attributes the kernels would refuse leave the
// output as declared, so the kernel's message is the one the user sees.
#include <limits>

#include "core/graph/shape_inference.h"

namespace onyx {
namespace shape_inference {
namespace {

// The `dtype` attribute as an element type; `dflt` when absent, kUndefined
// when it is not an int naming a known type.
ElemType DtypeAttr(const Node& n, ElemType dflt) {
  const Attribute* a = n.Attr("dtype");
  if (!a) return dflt;
  if (a->type != Attribute::Type::kInt || a->i <= 0 || a->i > std::numeric_limits<int32_t>::max() ||
      !IsKnownElemType(static_cast<int32_t>(a->i)))
    return ElemType::kUndefined;
  return static_cast<ElemType>(a->i);
}

bool IsReal(ElemType e) {
  return e == ElemType::kFloat || e == ElemType::kDouble || e == ElemType::kFloat16 || e == ElemType::kBFloat16;
}

// Bernoulli's output types: the real ones, the integers and bool.
bool IsBernoulliOutput(ElemType e) {
  switch (e) {
    case ElemType::kUint8: case ElemType::kUint16: case ElemType::kUint32: case ElemType::kUint64:
    case ElemType::kInt8: case ElemType::kInt16: case ElemType::kInt32: case ElemType::kInt64:
    case ElemType::kBool:
      return true;
    default:
      return IsReal(e);
  }
}

// RandomNormal, RandomUniform: dtype (float by default) and the `shape` attribute.
Status RandomFromShape(InferContext& ctx) {
  ElemType e = DtypeAttr(ctx.node(), ElemType::kFloat);
  if (!IsReal(e)) return Status::OK();
  const Attribute* s = ctx.node().Attr("shape");
  if (!s || s->type != Attribute::Type::kInts) {
    ctx.SetTensor(0, e);
    return Status::OK();
  }
  std::vector<Dim> dims;
  for (int64_t d : s->ints) {
    if (d < 0) return ctx.Fail(StrCat("attribute 'shape' ", ShapeToString(s->ints), " has a negative dimension"));
    dims.push_back(Dim::Of(d));
  }
  ctx.SetTensor(0, e, dims);
  return Status::OK();
}

// RandomNormalLike, RandomUniformLike, Bernoulli: input 0's shape; dtype, or
// input 0's type when absent.
Status RandomLike(InferContext& ctx) {
  ElemType e = DtypeAttr(ctx.node(), ctx.InputElem(0));
  if (e == ElemType::kUndefined) return Status::OK();
  // Without a dtype the output takes the input's type, which for Bernoulli
  // must be real too.
  bool ok = ctx.node().op_type == "Bernoulli" && ctx.node().Attr("dtype") ? IsBernoulliOutput(e) : IsReal(e);
  if (!ok) return Status::OK();
  if (ctx.HasShape(0)) ctx.SetTensor(0, e, ctx.Dims(0));
  else ctx.SetTensor(0, e);
  return Status::OK();
}

// Multinomial: [batch_size, sample_size] of int32 (default) or int64.
Status Multinomial(InferContext& ctx) {
  ElemType e = DtypeAttr(ctx.node(), ElemType::kInt32);
  if (e != ElemType::kInt32 && e != ElemType::kInt64) return Status::OK();
  int64_t samples = ctx.node().AttrInt("sample_size", 1);
  Dim batch;
  if (ctx.HasShape(0)) {
    if (ctx.Dims(0).size() != 2)
      return ctx.Fail(StrCat("input 0 must be 2-D [batch_size, class_size], got ", ShapeString(ctx.Input(0))));
    batch = ctx.Dims(0)[0];
  }
  ctx.SetTensor(0, e, {batch, samples >= 1 ? Dim::Of(samples) : Dim{}});
  return Status::OK();
}

}  // namespace

void RegisterRandomRules(RuleMap& m) {
  m["RandomNormal"] = RandomFromShape;
  m["RandomUniform"] = RandomFromShape;
  m["RandomNormalLike"] = RandomLike;
  m["RandomUniformLike"] = RandomLike;
  m["Bernoulli"] = RandomLike;
  m["Multinomial"] = Multinomial;
}

}  // namespace shape_inference
}  // namespace onyx

// Shape rules: the sources of load-time integer values (Constant,
// ConstantOfShape, Shape, Size, Range) that Reshape/Expand/Slice/... consume.
#include <cmath>

#include "core/graph/shape_inference.h"

namespace onyx {
namespace shape_inference {
namespace {

constexpr size_t kMaxData = 4096;  // larger integer tensors are not tracked as data


// ---- Shape / Size ------------------------------------------------------------

Status Shape(InferContext& ctx) {
  if (!ctx.HasShape(0)) {
    ctx.SetTensor(0, ElemType::kInt64, {Dim{}});
    return Status::OK();
  }
  const auto& in = ctx.Dims(0);
  int64_t r = static_cast<int64_t>(in.size());
  int64_t start = 0, end = r;
  if (ctx.opset() >= 15) {
    start = ctx.node().AttrInt("start", 0);
    end = ctx.node().AttrInt("end", r);
    if (start < 0) start += r;
    if (end < 0) end += r;
    start = std::min(std::max<int64_t>(start, 0), r);
    end = std::min(std::max<int64_t>(end, 0), r);
  }
  int64_t n = std::max<int64_t>(0, end - start);
  ctx.SetTensor(0, ElemType::kInt64, {Dim::Of(n)});
  IntData d;
  for (int64_t i = start; i < start + n; ++i) d.PushDim(in[static_cast<size_t>(i)]);
  ctx.SetOutputData(0, std::move(d));
  return Status::OK();
}

Status Size(InferContext& ctx) {
  ctx.SetTensor(0, ElemType::kInt64, {});
  if (ctx.HasShape(0)) {
    Dim p = DimProduct(ctx.Dims(0), 0, ctx.Dims(0).size());
    IntData d;
    d.scalar = true;
    d.PushDim(ctx.Dims(0).size() == 1 ? ctx.Dims(0)[0] : p);
    ctx.SetOutputData(0, std::move(d));
  }
  return Status::OK();
}

// ---- constants -----------------------------------------------------------------

ElemType ValueAttrType(const Node& n, ElemType dflt) {
  const Attribute* v = n.Attr("value");
  return v && v->t ? v->t->type() : dflt;
}

Status ConstantOfShape(InferContext& ctx) {
  ElemType e = ValueAttrType(ctx.node(), ElemType::kFloat);
  const IntData* s = ctx.Data(0);
  if (!s) {
    SetRankOnly(ctx, 0, e, Len1D(ctx, 0));
    return Status::OK();
  }
  std::vector<Dim> dims;
  for (size_t i = 0; i < s->size(); ++i) {
    if (s->known[i] && s->v[i] < 0) return ctx.Fail(StrCat("shape value ", s->v[i], " is negative"));
    dims.push_back(s->AsDim(i));
  }
  ctx.SetTensor(0, e, dims);
  // Small int64 fills (torch's "ones like shape") stay tracked.
  const Attribute* v = ctx.node().Attr("value");
  if (s->AllKnown() && s->size() == 1 && s->v[0] <= static_cast<int64_t>(kMaxData) &&
      (e == ElemType::kInt64 || e == ElemType::kInt32)) {
    int64_t fill = 0;
    if (v && v->t && v->t->size() == 1 && v->t->raw())
      fill = e == ElemType::kInt64 ? v->t->data<int64_t>()[0] : v->t->data<int32_t>()[0];
    IntData d;
    for (int64_t i = 0; i < s->v[0]; ++i) d.Push(fill);
    ctx.SetOutputData(0, std::move(d));
  }
  return Status::OK();
}

Status Constant(InferContext& ctx) {
  const Node& n = ctx.node();
  if (const Attribute* a = n.Attr("value"); a && a->t) {
    const Tensor& t = *a->t;
    std::vector<Dim> dims;
    for (int64_t d : t.dims()) dims.push_back(Dim::Of(d));
    ctx.SetTensor(0, t.type(), dims);
    if ((t.type() == ElemType::kInt64 || t.type() == ElemType::kInt32) && t.rank() <= 1 &&
        t.size() <= static_cast<int64_t>(kMaxData) && t.raw()) {
      IntData d;
      d.scalar = t.rank() == 0;
      for (int64_t i = 0; i < t.size(); ++i)
        d.Push(t.type() == ElemType::kInt64 ? t.data<int64_t>()[i] : t.data<int32_t>()[i]);
      ctx.SetOutputData(0, std::move(d));
    }
    return Status::OK();
  }
  if (n.Attr("value_float")) {
    ctx.SetTensor(0, ElemType::kFloat, {});
  } else if (const Attribute* a = n.Attr("value_floats")) {
    ctx.SetTensor(0, ElemType::kFloat, {Dim::Of(static_cast<int64_t>(a->floats.size()))});
  } else if (const Attribute* a = n.Attr("value_int")) {
    ctx.SetTensor(0, ElemType::kInt64, {});
    IntData d;
    d.scalar = true;
    d.Push(a->i);
    ctx.SetOutputData(0, std::move(d));
  } else if (const Attribute* a = n.Attr("value_ints")) {
    ctx.SetTensor(0, ElemType::kInt64, {Dim::Of(static_cast<int64_t>(a->ints.size()))});
    if (a->ints.size() <= kMaxData) {
      IntData d;
      for (int64_t v : a->ints) d.Push(v);
      ctx.SetOutputData(0, std::move(d));
    }
  } else if (n.Attr("value_string")) {
    ctx.SetTensor(0, ElemType::kString, {});
  } else if (const Attribute* a = n.Attr("value_strings")) {
    ctx.SetTensor(0, ElemType::kString, {Dim::Of(static_cast<int64_t>(a->strings.size()))});
  }
  return Status::OK();
}

Status Range(InferContext& ctx) {
  ElemType e = ctx.InputElem(0);
  if (e == ElemType::kUndefined) return Status::OK();
  std::vector<int64_t> s, l, d;
  Dim n;
  if (ctx.Ints(0, &s) && ctx.Ints(1, &l) && ctx.Ints(2, &d) && s.size() == 1 && l.size() == 1 && d.size() == 1) {
    if (d[0] == 0) return ctx.Fail("delta must not be 0");
    double len = std::ceil((static_cast<double>(l[0]) - static_cast<double>(s[0])) / static_cast<double>(d[0]));
    // Checked before the conversion, which is undefined past int64.
    if (!(len < 9.2e18)) return ctx.Fail(StrCat("Range of ", len, " elements is too long"));
    n = Dim::Of(len > 0 ? static_cast<int64_t>(len) : 0);
  }
  ctx.SetTensor(0, e, {n});
  return Status::OK();
}

}  // namespace

void RegisterConstantRules(RuleMap& m) {
  m["Shape"] = Shape;
  m["Size"] = Size;
  m["ConstantOfShape"] = ConstantOfShape;
  m["Constant"] = Constant;
  m["Range"] = Range;
}

}  // namespace shape_inference
}  // namespace onyx

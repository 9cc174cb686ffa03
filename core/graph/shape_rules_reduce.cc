// Shape rules: Reduce* and ArgMax/ArgMin.
#include "core/graph/shape_inference.h"

namespace onyx {
namespace shape_inference {
namespace {

// Shape after reducing `axes` of `in` (all axes when `axes` is empty).
Status ReducedShape(InferContext& ctx, const std::vector<Dim>& in, const std::vector<int64_t>& axes, bool keepdims,
                    std::vector<Dim>* out) {
  int64_t r = static_cast<int64_t>(in.size());
  std::vector<bool> reduce(in.size(), axes.empty());
  for (int64_t a : axes) {
    int64_t n;
    if (!NormalizeAxis(a, r, &n))
      return ctx.Fail(StrCat("axis ", a, " is out of range for input shapes ", ctx.InputShapes()));
    reduce[static_cast<size_t>(n)] = true;
  }
  out->clear();
  for (size_t i = 0; i < in.size(); ++i) {
    if (!reduce[i]) out->push_back(in[i]);
    else if (keepdims) out->push_back(Dim::Of(1));
  }
  return Status::OK();
}

Status Reduce(InferContext& ctx, int axes_input_opset) {
  ElemType e = ctx.InputElem(0);
  if (e == ElemType::kUndefined) return Status::OK();
  bool keepdims = ctx.node().AttrInt("keepdims", 1) != 0;
  bool noop = ctx.opset() >= axes_input_opset && ctx.node().AttrInt("noop_with_empty_axes", 0) != 0;
  std::vector<int64_t> axes;
  bool axes_known = true;
  if (ctx.opset() < axes_input_opset) {
    axes = ctx.node().AttrInts("axes");
  } else if (ctx.HasInput(1)) {
    axes_known = ctx.Ints(1, &axes);
  }
  if (!ctx.HasShape(0)) {
    ctx.SetTensor(0, e);
    return Status::OK();
  }
  const auto& in = ctx.Dims(0);
  if (!axes_known) {
    // Which axes go is unknown; with keepdims the rank survives.
    if (keepdims) ctx.SetTensor(0, e, std::vector<Dim>(in.size()));
    else ctx.SetTensor(0, e);
    return Status::OK();
  }
  if (axes.empty() && noop) {
    ctx.SetTensor(0, e, in);
    return Status::OK();
  }
  std::vector<Dim> out;
  ONYX_RETURN_IF_ERROR(ReducedShape(ctx, in, axes, keepdims, &out));
  ctx.SetTensor(0, e, out);
  return Status::OK();
}

Status ArgReduce(InferContext& ctx) {
  if (!ctx.HasShape(0)) {
    ctx.SetTensor(0, ElemType::kInt64);
    return Status::OK();
  }
  bool keepdims = ctx.node().AttrInt("keepdims", 1) != 0;
  std::vector<Dim> out;
  ONYX_RETURN_IF_ERROR(ReducedShape(ctx, ctx.Dims(0), {ctx.node().AttrInt("axis", 0)}, keepdims, &out));
  ctx.SetTensor(0, ElemType::kInt64, out);
  return Status::OK();
}

}  // namespace

void RegisterReduceRules(RuleMap& m) {
  m["ReduceSum"] = [](InferContext& c) { return Reduce(c, 13); };
  for (const char* op : {"ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2", "ReduceLogSum",
                         "ReduceLogSumExp", "ReduceSumSquare"})
    m[op] = [](InferContext& c) { return Reduce(c, 18); };
  m["ArgMax"] = ArgReduce;
  m["ArgMin"] = ArgReduce;
}

}  // namespace shape_inference
}  // namespace onyx

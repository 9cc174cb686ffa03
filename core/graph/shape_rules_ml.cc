// Shape rules: ai.onnx.ml operators (ZipMap, LinearClassifier, Normalizer) and
// onnxruntime's com.microsoft Tokenizer, which skl2onnx's text pipelines use
// and ONNX's library has no schema for.
#include "core/graph/shape_inference.h"

namespace onyx {
namespace shape_inference {
namespace {

// ZipMap: seq(map(int64 or string, tensor(float))), keyed by whichever class
// label attribute the node has.
Status ZipMap(InferContext& ctx) {
  const Attribute* ints = ctx.node().Attr("classlabels_int64s");
  const Attribute* strs = ctx.node().Attr("classlabels_strings");
  const bool has_ints = ints != nullptr && !ints->ints.empty();
  const bool has_strs = strs != nullptr && !strs->strings.empty();
  if (has_ints == has_strs) return Status::OK();  // the kernel reports it
  TypeInfo map;
  map.kind = TypeInfo::Kind::kMap;
  map.map_key = has_ints ? ElemType::kInt64 : ElemType::kString;
  map.inner = std::make_shared<TypeInfo>(TypeInfo::Tensor(ElemType::kFloat));
  TypeInfo& out = ctx.Output(0);
  out = TypeInfo();
  out.kind = TypeInfo::Kind::kSequence;
  out.inner = std::make_shared<TypeInfo>(std::move(map));
  return Status::OK();
}

// The rows of a [N, F] or [F] feature input (one for [F]); unknown otherwise.
Dim Rows(InferContext& ctx) {
  if (!ctx.HasShape(0)) return Dim{};
  const std::vector<Dim>& d = ctx.Dims(0);
  return d.size() == 2 ? d[0] : d.size() == 1 ? Dim::Of(1) : Dim{};
}

// LinearClassifier: labels [N] of the labels' type, scores [N, E] of float,
// one column per class label (two for a binary model's one row).
Status LinearClassifier(InferContext& ctx) {
  const Attribute* ints = ctx.node().Attr("classlabels_ints");
  const Attribute* strs = ctx.node().Attr("classlabels_strings");
  const size_t n_ints = ints ? ints->ints.size() : 0, n_strs = strs ? strs->strings.size() : 0;
  if ((n_ints == 0) == (n_strs == 0)) return Status::OK();  // the kernel reports it
  const Dim rows = Rows(ctx);
  ctx.SetTensor(0, n_ints ? ElemType::kInt64 : ElemType::kString, {rows});
  ctx.SetTensor(1, ElemType::kFloat, {rows, Dim::Of(static_cast<int64_t>(n_ints + n_strs))});
  return Status::OK();
}

// Normalizer: float, the input's shape.
Status Normalizer(InferContext& ctx) {
  if (ctx.HasShape(0)) ctx.SetTensor(0, ElemType::kFloat, ctx.Dims(0));
  else ctx.SetTensor(0, ElemType::kFloat);
  return Status::OK();
}

// Tokenizer: strings, X's dims plus a last axis (the longest row's token
// count, known only at run time). X must be [C] or [N, C].
Status Tokenizer(InferContext& ctx) {
  if (!ctx.HasShape(0)) {
    SetRankOnly(ctx, 0, ElemType::kString, -1);
    return Status::OK();
  }
  const std::vector<Dim>& x = ctx.Dims(0);
  if (x.size() != 1 && x.size() != 2)
    return ctx.Fail(StrCat("input X must have shape [C] or [N, C], got ", ctx.InputShapes()));
  std::vector<Dim> y = x;
  y.emplace_back();
  ctx.SetTensor(0, ElemType::kString, y);
  return Status::OK();
}

}  // namespace

void RegisterMlRules(RuleMap& m) {
  m["ai.onnx.ml:ZipMap"] = ZipMap;
  m["ai.onnx.ml:LinearClassifier"] = LinearClassifier;
  m["ai.onnx.ml:Normalizer"] = Normalizer;
  m["com.microsoft:Tokenizer"] = Tokenizer;
}

}  // namespace shape_inference
}  // namespace onyx

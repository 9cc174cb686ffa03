// Shape rules: ai.onnx.ml operators.
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

}  // namespace

void RegisterMlRules(RuleMap& m) { m["ai.onnx.ml:ZipMap"] = ZipMap; }

}  // namespace shape_inference
}  // namespace onyx

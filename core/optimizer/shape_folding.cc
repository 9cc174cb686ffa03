// shape_folding (basic): Shape and Size of a value whose shape is fully known
// at load become initializers, so constant_folding can carry on through the
// Gather/Concat/Reshape chains exporters build from them.
#include "core/optimizer/transformer_util.h"

namespace onyx {
namespace optimizer {
namespace {

bool StaticDims(const Graph& graph, const std::string& value, std::vector<int64_t>* dims) {
  if (const Tensor* t = ConstantInitializer(graph, value)) {
    *dims = t->dims();
    return true;
  }
  auto it = graph.value_types.find(value);
  if (it == graph.value_types.end() || it->second.kind != TypeInfo::Kind::kTensor || !it->second.has_shape)
    return false;
  dims->clear();
  for (const Dim& d : it->second.dims) {
    if (!d.known()) return false;
    dims->push_back(d.value);
  }
  return true;
}

// Shape-15's start/end: negative counts from the back, then clamped.
int64_t ClampAxis(int64_t a, int64_t rank) {
  if (a < 0) a += rank;
  return std::min(std::max<int64_t>(a, 0), rank);
}

bool TryFold(Graph& graph, const GraphIndex& idx, size_t i) {
  const Node& n = graph.nodes[i];
  if (!n.domain.empty() || (n.op_type != "Shape" && n.op_type != "Size")) return false;
  if (n.inputs.empty() || n.inputs[0].empty() || n.outputs.empty() || n.outputs[0].empty()) return false;
  const std::string& out = n.outputs[0];
  if (idx.IsGraphOutput(out) || idx.IsImplicitInput(out)) return false;
  std::vector<int64_t> dims;
  if (!StaticDims(graph, n.inputs[0], &dims)) return false;
  std::shared_ptr<Tensor> t;
  if (n.op_type == "Shape") {
    const int64_t rank = static_cast<int64_t>(dims.size());
    const int64_t start = ClampAxis(n.AttrInt("start", 0), rank);
    const int64_t end = ClampAxis(n.AttrInt("end", rank), rank);
    const int64_t len = std::max<int64_t>(0, end - start);
    t = std::make_shared<Tensor>(ElemType::kInt64, Dims{len});
    for (int64_t k = 0; k < len; ++k) t->data<int64_t>()[k] = dims[start + k];
  } else {
    t = std::make_shared<Tensor>(ElemType::kInt64, Dims{});
    int64_t size = 1;
    for (int64_t d : dims) size *= d;
    t->data<int64_t>()[0] = size;
  }
  graph.initializers[out] = std::move(t);
  graph.nodes.erase(graph.nodes.begin() + i);
  return true;
}

}  // namespace

Status FoldShapes(Graph& graph, const OptimizerContext&, bool* changed) {
  RewriteNodes(graph, changed, TryFold);
  return Status::OK();
}

}  // namespace optimizer
}  // namespace onyx

// reshape_fusion (extended): Reshapes that only rename a buffer's shape twice.
//   Reshape(Reshape(X, s1), s2)  -> Reshape(X, s2)   when s2 is a constant
//                                   whose 0s (if any) do not copy a dim of the
//                                   intermediate (no 0s, or allowzero=1)
//   Reshape(X, s) whose output has X's shape (known dims or the same symbols)
//                                -> Identity (identity_elimination drops it)
// The inner Reshape goes when nothing else reads it.
#include "core/optimizer/transformer_util.h"

namespace onyx {
namespace optimizer {
namespace {

bool IsReshape(const Node& n) { return IsOnnxOp(n, "Reshape") && n.inputs.size() == 2 && n.outputs.size() == 1; }

// s is constant and means the same shape whatever the reshaped tensor's dims.
bool SelfContainedShape(const Graph& graph, const Node& reshape) {
  const Tensor* s = ConstantInitializer(graph, reshape.inputs[1]);
  if (s == nullptr || s->type() != ElemType::kInt64) return false;
  if (reshape.since_version >= 14 && reshape.AttrInt("allowzero", 0) != 0) return true;
  const int64_t* v = s->data<int64_t>();
  for (int64_t k = 0; k < static_cast<int64_t>(s->size()); ++k)
    if (v[k] == 0) return false;
  return true;
}

bool TryFuse(Graph& graph, const GraphIndex& idx, size_t i) {
  const Node& outer = graph.nodes[i];
  if (!IsReshape(outer)) return false;
  if (SameShape(graph, outer.inputs[0], outer.outputs[0])) {
    MakeIdentity(&graph.nodes[i]);
    return true;
  }
  const int p = idx.Producer(outer.inputs[0]);
  if (p < 0 || !IsReshape(graph.nodes[p]) || !SelfContainedShape(graph, outer)) return false;
  Node fused = outer;
  fused.inputs[0] = graph.nodes[p].inputs[0];
  ReplaceOuter(graph, idx, p, static_cast<int>(i), std::move(fused));
  return true;
}

}  // namespace

Status FuseReshapes(Graph& graph, const OptimizerContext&, bool* changed) {
  RewriteNodes(graph, changed, TryFuse);
  return Status::OK();
}

}  // namespace optimizer
}  // namespace onyx

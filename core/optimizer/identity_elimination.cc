// identity_elimination (basic): drops Identity, and Dropout in inference mode
// whose mask nobody reads, by letting the readers use the input directly.
#include "core/optimizer/transformer_util.h"

namespace onyx {
namespace optimizer {
namespace {

// Dropout copies its input unless training_mode (opset 12+) is set; opsets
// before 7 had an is_test attribute whose default meant training.
bool IsInferenceDropout(const Graph& graph, const GraphIndex& idx, const Node& n) {
  if (n.since_version < 7) return false;
  if (n.outputs.size() > 1 && !n.outputs[1].empty() && !idx.IsUnused(n.outputs[1])) return false;
  if (n.inputs.size() > 2 && !n.inputs[2].empty()) {
    const Tensor* t = ConstantInitializer(graph, n.inputs[2]);
    if (t == nullptr || t->type() != ElemType::kBool || t->size() != 1 || t->data<bool>()[0]) return false;
  }
  return true;
}

void Rename(Graph& graph, const GraphIndex& idx, const std::string& from, const std::string& to) {
  for (const auto& c : idx.Consumers(from)) graph.nodes[c.first].inputs[c.second] = to;
}

// Removes node `i` (output Y = its input X) when the rewiring is safe;
// returns whether it did.
bool TryEliminate(Graph& graph, const GraphIndex& idx, size_t i) {
  const Node& n = graph.nodes[i];
  if (n.inputs.empty() || n.inputs[0].empty() || n.outputs.empty() || n.outputs[0].empty()) return false;
  const std::string x = n.inputs[0], y = n.outputs[0];
  // Subgraphs name outer values directly; renaming under them is not worth it.
  if (idx.IsImplicitInput(x) || idx.IsImplicitInput(y)) return false;
  if (!idx.IsGraphOutput(y)) {
    Rename(graph, idx, y, x);
    graph.value_types.erase(y);
  } else {
    // Y is part of the interface and keeps its name, so X must take it: only
    // possible when X comes from a node in this graph and is not itself visible.
    const int p = idx.Producer(x);
    if (p < 0 || idx.IsGraphOutput(x)) return false;
    for (auto& o : graph.nodes[p].outputs)
      if (o == x) o = y;
    Rename(graph, idx, x, y);
    graph.value_types.erase(x);
  }
  // Dropout's unread mask goes with it.
  for (size_t k = 1; k < graph.nodes[i].outputs.size(); ++k) graph.value_types.erase(graph.nodes[i].outputs[k]);
  graph.nodes.erase(graph.nodes.begin() + i);
  return true;
}

}  // namespace

Status EliminateIdentities(Graph& graph, const OptimizerContext&, bool* changed) {
  RewriteNodes(graph, changed, [](Graph& g, const GraphIndex& idx, size_t i) {
    const Node& n = g.nodes[i];
    const bool candidate = n.domain.empty() && (n.op_type == "Identity" ||
                                                (n.op_type == "Dropout" && IsInferenceDropout(g, idx, n)));
    return candidate && TryEliminate(g, idx, i);
  });
  return Status::OK();
}

}  // namespace optimizer
}  // namespace onyx

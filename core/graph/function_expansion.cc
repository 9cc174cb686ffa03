#include "core/graph/function_expansion.h"

#include <unordered_set>

#include "core/graph/onnx_schema.h"
#include "core/graph/shape_inference.h"

namespace onyx {
namespace {

// Function bodies may call other functions (Mish -> Softplus, ...); real ones
// nest a few levels. A body that keeps producing expandable nodes past this
// is a function that calls itself.
constexpr int kMaxRounds = 32;


struct Expander {
  const Model& model;
  const KernelQuery& has_kernel;
  std::unordered_set<std::string> names;  // every name in the model (once needed), grown as bodies add theirs
  int expanded = 0;

  Status ExpandGraph(Graph& g) {
    std::vector<Node> result;
    result.reserve(g.nodes.size());
    for (Node& node : g.nodes) {
      // Most nodes have no function body: the schema answers that before
      // their types are gathered and the providers are asked.
      std::vector<TypeInfo> types;
      if (!HasFunctionBody(node) || has_kernel(node, types = NodeInputTypes(g, node))) {
        // A node that stays keeps its subgraphs, whose own nodes may expand.
        // A node that expands takes its graph attributes into its body
        // (FlexAttention's score_mod): those expand in the next round, after
        // the body has renamed them, since a renamer does not reach the
        // outer-scope names that an expansion inside them would add.
        for (auto& kv : node.attrs) {
          if (kv.second.g) ONYX_RETURN_IF_ERROR(ExpandGraph(*kv.second.g));
          for (auto& sg : kv.second.graphs) ONYX_RETURN_IF_ERROR(ExpandGraph(*sg));
        }
        result.push_back(std::move(node));
        continue;
      }
      // Names in use are gathered once, when the first body is inlined.
      if (names.empty()) CollectNames(*model.graph, &names);
      std::vector<Node> body;
      ONYX_RETURN_IF_ERROR(ExpandFunctionBody(node, types, model.opsets, names, &g, &body));
      for (const Node& b : body) {
        names.insert(b.name);
        for (const auto& o : b.outputs) names.insert(o);
      }
      ++expanded;
      for (Node& b : body) result.push_back(std::move(b));
    }
    // Every node was moved into `result`, expanded or not.
    g.nodes = std::move(result);
    return Status::OK();
  }
};

}  // namespace

void CollectNames(const Graph& g, std::unordered_set<std::string>* names) {
  for (const auto& vi : g.inputs) names->insert(vi.name);
  for (const auto& vi : g.outputs) names->insert(vi.name);
  for (const auto& kv : g.initializers) names->insert(kv.first);
  for (const auto& kv : g.value_types) names->insert(kv.first);
  for (const Node& n : g.nodes) {
    names->insert(n.name);
    for (const auto& i : n.inputs) names->insert(i);
    for (const auto& o : n.outputs) names->insert(o);
    for (const auto& kv : n.attrs) {
      if (kv.second.g) CollectNames(*kv.second.g, names);
      for (const auto& sg : kv.second.graphs) CollectNames(*sg, names);
    }
  }
}

std::vector<TypeInfo> NodeInputTypes(const Graph& graph, const Node& node) {
  std::vector<TypeInfo> types(node.inputs.size());
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    if (node.inputs[i].empty()) continue;
    for (const Graph* g = &graph; g != nullptr; g = g->parent)
      if (g->LocalType(node.inputs[i], &types[i])) break;
  }
  return types;
}

Status CheckInputTypesAgainstSchemas(const Graph& graph) {
  for (const Node& node : graph.nodes) {
    ONYX_RETURN_IF_ERROR(CheckNodeInputTypes(node, NodeInputTypes(graph, node)));
    for (const auto& kv : node.attrs) {
      if (kv.second.g) ONYX_RETURN_IF_ERROR(CheckInputTypesAgainstSchemas(*kv.second.g));
      for (const auto& sg : kv.second.graphs) ONYX_RETURN_IF_ERROR(CheckInputTypesAgainstSchemas(*sg));
    }
  }
  return Status::OK();
}

Status ExpandFunctions(Model& model, const KernelQuery& has_kernel, int* expanded) {
  Expander ex{model, has_kernel, {}, 0};
  for (int round = 0;; ++round) {
    int before = ex.expanded;
    ONYX_RETURN_IF_ERROR(ex.ExpandGraph(*model.graph));
    if (ex.expanded == before) break;
    if (round + 1 >= kMaxRounds)
      return MakeError(ErrorCode::kInvalidGraph, "function expansion did not settle after ", kMaxRounds,
                       " levels of nested function bodies (does a function call itself?)");
    // The bodies' values need types before their own function nodes expand.
    ONYX_RETURN_IF_ERROR(InferTypesAndShapes(*model.graph));
  }
  if (expanded) *expanded = ex.expanded;
  return Status::OK();
}

}  // namespace onyx

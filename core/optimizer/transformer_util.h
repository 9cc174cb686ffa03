// Internals shared by the graph transformers in core/optimizer/. Not API.
#pragma once

#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "core/graph/graph.h"
#include "core/optimizer/optimizer.h"

namespace onyx {
namespace optimizer {

// One transformer: rewrites `graph` (not its subgraphs) and sets *changed when
// it did anything. Each lives in core/optimizer/<name>.cc.
using TransformFn = Status (*)(Graph& graph, const OptimizerContext& ctx, bool* changed);

Status EliminateIdentities(Graph& graph, const OptimizerContext& ctx, bool* changed);// identity_elimination.cc
Status FoldConstants(Graph& graph, const OptimizerContext& ctx, bool* changed);// constant_folding.cc
Status FoldShapes(Graph& graph, const OptimizerContext& ctx, bool* changed);// shape_folding.cc
Status FuseConvBatchNorm(Graph& graph, const OptimizerContext& ctx, bool* changed);// conv_bn_fusion.cc
Status FuseConvActivation(Graph& graph, const OptimizerContext& ctx, bool* changed);// conv_activation_fusion.cc
Status FuseConvAdd(Graph& graph, const OptimizerContext& ctx, bool* changed);// conv_add_fusion.cc
Status FuseMatMulAdd(Graph& graph, const OptimizerContext& ctx, bool* changed);// matmul_add_fusion.cc
Status FuseQdq(Graph& graph, const OptimizerContext& ctx, bool* changed);// qdq_fusion.cc

// Who produces and who reads each value of one graph, as of when it was built;
// transformers rebuild it after each rewrite rather than patch it.
class GraphIndex {
 public:
  explicit GraphIndex(const Graph& graph);
  // Index of the node producing `value`, or -1 (graph input, initializer, outer scope).
  int Producer(const std::string& value) const;
  // (node index, input slot) of every explicit read of `value`.
  const std::vector<std::pair<int, int>>& Consumers(const std::string& value) const;
  bool IsGraphOutput(const std::string& value) const { return graph_outputs_.count(value) != 0; }
  // Read by a subgraph of some node (through implicit_inputs).
  bool IsImplicitInput(const std::string& value) const { return implicit_.count(value) != 0; }
  // Whether `name` names anything in the graph (a node's input or output, a
  // graph input or output, an initializer, a typed value), in a subgraph of
  // one of its nodes, or in an enclosing graph. Hash lookups: a transformer
  // naming many new values stays linear in the graph.
  bool NameTaken(const Graph& graph, const std::string& name) const;
  // Exactly one explicit read and nothing else sees it: the value may vanish
  // when its producer and that reader are merged.
  bool HasSingleUse(const std::string& value) const;
  // Nothing reads it and it is not a graph output.
  bool IsUnused(const std::string& value) const;

 private:
  std::unordered_map<std::string, int> producer_;
  std::unordered_map<std::string, std::vector<std::pair<int, int>>> consumers_;
  std::unordered_set<std::string> graph_outputs_, implicit_;
  // Names inside subgraphs of the nodes and in enclosing graphs (usually none).
  std::unordered_set<std::string> nested_names_;
};

// The initializer `name` when a run cannot replace it (it is not also a graph
// input), else null.
const Tensor* ConstantInitializer(const Graph& graph, const std::string& name);

// A value name not used anywhere in `graph` yet (nor in its subgraphs or
// enclosing graphs), derived from `base`; `index` must be current.
std::string UniqueValueName(const Graph& graph, const GraphIndex& index, const std::string& base);

// Drops initializers that no node (or subgraph) reads and that are neither
// graph inputs nor outputs; returns how many went.
size_t RemoveUnusedInitializers(Graph& graph);

// Scalar value of a constant float/double tensor with one element.
bool ScalarAsDouble(const Tensor& t, double* out);

// The loop every node-local transformer shares: tries
// `try_rewrite(graph, index, i)` at each node position; after a rewrite the
// index is rebuilt and position i is tried again (another node sits there now,
// or the rewritten one may combine further). Drops initializers the rewrites
// left unread and sets *changed when anything was rewritten.
template <typename TryFn>
void RewriteNodes(Graph& graph, bool* changed, TryFn&& try_rewrite) {
  GraphIndex idx(graph);
  bool any = false;
  for (size_t i = 0; i < graph.nodes.size();) {
    if (try_rewrite(graph, idx, i)) {
      any = true;
      idx = GraphIndex(graph);
      continue;
    }
    ++i;
  }
  if (any) {
    RemoveUnusedInitializers(graph);
    *changed = true;
  }
}

}  // namespace optimizer
}  // namespace onyx

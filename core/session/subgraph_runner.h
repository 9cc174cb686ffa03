// The session's side of SubgraphRunner: a subgraph (If branch, Loop or Scan
// body) prepared once, at kernel creation, as its own execution plan sharing
// the session's providers; each run gets fresh slots, fed by the node's
// kernel and, for names of enclosing graphs, by the node's context.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/session/execution_plan.h"
#include "providers/subgraph.h"

namespace onyx {

class PlanSubgraphRunner final : public SubgraphRunner {
 public:
  static Status Create(const Graph& graph, const std::vector<ExecutionProvider*>& providers,
                       const PlanOptions& options, std::unique_ptr<PlanSubgraphRunner>* out);
  const Graph& graph() const override { return graph_; }
  Status Run(const KernelContext& ctx, std::vector<Value> feeds, std::vector<Value>* outputs) const override;

 private:
  explicit PlanSubgraphRunner(const Graph& g) : graph_(g) {}
  const Graph& graph_;
  std::unique_ptr<ExecutionPlan> plan_;
  std::vector<int> input_slots_;
  std::vector<int> output_slots_;
  // Slots of values the subgraph reads from enclosing graphs.
  std::vector<std::pair<int, std::string>> outer_;
};

}  // namespace onyx

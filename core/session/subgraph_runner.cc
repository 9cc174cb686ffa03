#include "core/session/subgraph_runner.h"

#include <unordered_set>

namespace onyx {

Status PlanSubgraphRunner::Create(const Graph& graph, const std::vector<ExecutionProvider*>& providers,
                                  const PlanOptions& options, std::unique_ptr<PlanSubgraphRunner>* out) {
  std::unique_ptr<PlanSubgraphRunner> r(new PlanSubgraphRunner(graph));
  PlanOptions sub = options;
  // One iteration's intermediates are small and change shape between
  // iterations; the session's pattern machinery is for whole runs.
  sub.mem_pattern = false;
  // The caller's copies are of its own graph's constants, not this one's.
  sub.on_constant_released = nullptr;
  // Subgraphs run inside their node's step, one node at a time.
  sub.parallel = false;
  ONYX_RETURN_IF_ERROR(ExecutionPlan::Build(graph, providers, sub, &r->plan_));
  for (const auto& in : graph.inputs) r->input_slots_.push_back(r->plan_->SlotOf(in.name));
  for (const auto& o : graph.outputs) {
    int s = r->plan_->SlotOf(o.name);
    if (s < 0)
      return MakeError(ErrorCode::kInvalidGraph, "subgraph '", graph.name, "': output '", o.name,
                       "' is not produced by any of its nodes, inputs or enclosing graphs");
    r->output_slots_.push_back(s);
  }
  // Every other slot that no node, input or initializer of the subgraph fills
  // is a name of an enclosing graph.
  const std::unordered_set<int> inputs(r->input_slots_.begin(), r->input_slots_.end());
  for (size_t s = 0; s < r->plan_->num_slots(); ++s) {
    const int slot = static_cast<int>(s);
    const std::string& name = r->plan_->slot_name(slot);
    if (!r->plan_->IsNodeOutput(slot) && !inputs.count(slot) && !graph.IsInitializer(name))
      r->outer_.emplace_back(slot, name);
  }
  *out = std::move(r);
  return Status::OK();
}

Status PlanSubgraphRunner::Run(const KernelContext& ctx, std::vector<Value> feeds, std::vector<Value>* outputs) const {
  ONYX_CHECK_ARG(feeds.size() == input_slots_.size(), "subgraph '", graph_.name, "' takes ", input_slots_.size(),
                 " inputs but got ", feeds.size());
  std::vector<Value> values(plan_->num_slots());
  for (size_t i = 0; i < feeds.size(); ++i) values[input_slots_[i]] = std::move(feeds[i]);
  for (const auto& o : outer_) {
    const Value* v = ctx.OuterValue(o.second);
    if (v == nullptr)
      return MakeError(ErrorCode::kFail, "subgraph '", graph_.name, "' reads '", o.second,
                       "' from an enclosing graph, which has no value for it");
    values[o.first] = *v;
  }
  ONYX_RETURN_IF_ERROR(plan_->Execute(values, nullptr, nullptr, ctx.threads(), nullptr, &ctx));
  outputs->clear();
  outputs->reserve(output_slots_.size());
  for (size_t i = 0; i < output_slots_.size(); ++i) {
    // Copied, not moved: two outputs may name one value.
    const Value& v = values[output_slots_[i]];
    if (!v.HasValue())
      return MakeError(ErrorCode::kFail, "subgraph '", graph_.name, "' left output '", graph_.outputs[i].name,
                       "' without a value");
    outputs->push_back(v);
  }
  return Status::OK();
}

}  // namespace onyx

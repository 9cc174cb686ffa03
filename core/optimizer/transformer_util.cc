#include "core/optimizer/transformer_util.h"

namespace onyx {
namespace optimizer {
namespace {

void CollectNames(const Graph& g, std::unordered_set<std::string>* names) {
  for (const auto& v : g.inputs) names->insert(v.name);
  for (const auto& v : g.outputs) names->insert(v.name);
  for (const auto& kv : g.initializers) names->insert(kv.first);
  for (const auto& kv : g.value_types) names->insert(kv.first);
  for (const Node& n : g.nodes) {
    names->insert(n.inputs.begin(), n.inputs.end());
    names->insert(n.outputs.begin(), n.outputs.end());
    for (const auto& kv : n.attrs) {
      if (kv.second.g) CollectNames(*kv.second.g, names);
      for (const auto& sg : kv.second.graphs)
        if (sg) CollectNames(*sg, names);
    }
  }
}

}  // namespace

GraphIndex::GraphIndex(const Graph& graph) {
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const Node& n = graph.nodes[i];
    for (const auto& o : n.outputs)
      if (!o.empty()) producer_[o] = static_cast<int>(i);
    for (size_t s = 0; s < n.inputs.size(); ++s)
      if (!n.inputs[s].empty()) consumers_[n.inputs[s]].emplace_back(static_cast<int>(i), static_cast<int>(s));
    implicit_.insert(n.implicit_inputs.begin(), n.implicit_inputs.end());
  }
  for (const auto& o : graph.outputs) graph_outputs_.insert(o.name);
  for (const Node& n : graph.nodes)
    for (const auto& kv : n.attrs) {
      if (kv.second.g) CollectNames(*kv.second.g, &nested_names_);
      for (const auto& sg : kv.second.graphs)
        if (sg) CollectNames(*sg, &nested_names_);
    }
  // Outer scopes too: a subgraph value must not shadow one it could read.
  for (const Graph* p = graph.parent; p != nullptr; p = p->parent) CollectNames(*p, &nested_names_);
}

bool GraphIndex::NameTaken(const Graph& graph, const std::string& name) const {
  if (producer_.count(name) || consumers_.count(name) || graph_outputs_.count(name) || implicit_.count(name) ||
      nested_names_.count(name) || graph.initializers.count(name) || graph.value_types.count(name))
    return true;
  for (const auto& v : graph.inputs)
    if (v.name == name) return true;
  return false;
}

int GraphIndex::Producer(const std::string& value) const {
  auto it = producer_.find(value);
  return it == producer_.end() ? -1 : it->second;
}

const std::vector<std::pair<int, int>>& GraphIndex::Consumers(const std::string& value) const {
  static const std::vector<std::pair<int, int>> kNone;
  auto it = consumers_.find(value);
  return it == consumers_.end() ? kNone : it->second;
}

bool GraphIndex::HasSingleUse(const std::string& value) const {
  return Consumers(value).size() == 1 && !IsGraphOutput(value) && !IsImplicitInput(value);
}

bool GraphIndex::IsUnused(const std::string& value) const {
  return Consumers(value).empty() && !IsGraphOutput(value) && !IsImplicitInput(value);
}

const Tensor* ConstantInitializer(const Graph& graph, const std::string& name) {
  auto it = graph.initializers.find(name);
  if (it == graph.initializers.end() || !it->second) return nullptr;
  for (const auto& in : graph.inputs)
    if (in.name == name) return nullptr;
  return it->second.get();
}

std::string UniqueValueName(const Graph& graph, const GraphIndex& index, const std::string& base) {
  if (!index.NameTaken(graph, base)) return base;
  for (int i = 1;; ++i) {
    std::string n = base + "_" + std::to_string(i);
    if (!index.NameTaken(graph, n)) return n;
  }
}

size_t RemoveUnusedInitializers(Graph& graph) {
  std::unordered_set<std::string> used;
  for (const auto& v : graph.inputs) used.insert(v.name);
  for (const auto& v : graph.outputs) used.insert(v.name);
  for (const Node& n : graph.nodes) {
    used.insert(n.inputs.begin(), n.inputs.end());
    used.insert(n.implicit_inputs.begin(), n.implicit_inputs.end());
  }
  size_t removed = 0;
  for (auto it = graph.initializers.begin(); it != graph.initializers.end();) {
    if (used.count(it->first)) {
      ++it;
      continue;
    }
    graph.value_types.erase(it->first);
    it = graph.initializers.erase(it);
    ++removed;
  }
  return removed;
}

bool ScalarAsDouble(const Tensor& t, double* out) {
  if (t.size() != 1) return false;
  if (t.type() == ElemType::kFloat) {
    *out = t.data<float>()[0];
    return true;
  }
  if (t.type() == ElemType::kDouble) {
    *out = t.data<double>()[0];
    return true;
  }
  return false;
}

}  // namespace optimizer
}  // namespace onyx

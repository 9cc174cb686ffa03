#include "core/optimizer/transformer_util.h"

#include <algorithm>
#include <cmath>

#include "core/optimizer/symbolic_shapes.h"

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

std::string_view GraphIndex::Keep(const std::string& name) {
  const size_t at = names_.size();
  names_.insert(names_.end(), name.begin(), name.end());
  return std::string_view(names_.data() + at, name.size());
}

// Rebuilt after every rewrite (RewriteNodes), so its cost is the optimizer's:
// the maps are sized once and each name is copied into one buffer.
GraphIndex::GraphIndex(const Graph& graph) {
  size_t chars = 0, outputs = 0, inputs = 0;
  for (const Node& n : graph.nodes) {
    for (const auto& o : n.outputs) chars += o.size(), ++outputs;
    for (const auto& v : n.inputs) chars += v.size(), ++inputs;
  }
  names_.reserve(chars);
  producer_.reserve(outputs);
  consumers_.reserve(inputs);
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const Node& n = graph.nodes[i];
    for (const auto& o : n.outputs)
      if (!o.empty()) producer_[Keep(o)] = static_cast<int>(i);
    for (size_t s = 0; s < n.inputs.size(); ++s) {
      const std::string& v = n.inputs[s];
      if (v.empty()) continue;
      auto it = consumers_.find(std::string_view(v));
      if (it == consumers_.end()) it = consumers_.emplace(Keep(v), std::vector<std::pair<int, int>>()).first;
      it->second.emplace_back(static_cast<int>(i), static_cast<int>(s));
    }
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
  if (producer_.count(std::string_view(name)) || consumers_.count(std::string_view(name)) || graph_outputs_.count(name) || implicit_.count(name) ||
      nested_names_.count(name) || graph.initializers.count(name) || graph.value_types.count(name))
    return true;
  for (const auto& v : graph.inputs)
    if (v.name == name) return true;
  return false;
}

int GraphIndex::Producer(const std::string& value) const {
  auto it = producer_.find(std::string_view(value));
  return it == producer_.end() ? -1 : it->second;
}

const std::vector<std::pair<int, int>>& GraphIndex::Consumers(const std::string& value) const {
  static const std::vector<std::pair<int, int>> kNone;
  auto it = consumers_.find(std::string_view(value));
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

bool ConstantScalar(const Graph& graph, const std::string& name, double* out) {
  const Tensor* t = ConstantInitializer(graph, name);
  return t != nullptr && ScalarAsDouble(*t, out);
}

bool ConstantScalarNear(const Graph& graph, const std::string& name, double want, double tol) {
  double v = 0;
  return ConstantScalar(graph, name, &v) && std::fabs(v - want) <= tol;
}

bool IsFloatVector(const Graph& graph, const std::string& name, int64_t n) {
  const Tensor* t = ConstantInitializer(graph, name);
  return t != nullptr && t->type() == ElemType::kFloat && t->rank() == 1 && t->dims()[0] == n;
}

bool TensorType(const Graph& graph, const std::string& name, TypeInfo* out) {
  return graph.LocalType(name, out) && out->kind == TypeInfo::Kind::kTensor;
}

ElemType TensorElemType(const Graph& graph, const std::string& name) {
  TypeInfo t;
  return TensorType(graph, name, &t) ? t.elem : ElemType::kUndefined;
}

int TensorRank(const Graph& graph, const std::string& name) {
  TypeInfo t;
  return TensorType(graph, name, &t) && t.has_shape ? static_cast<int>(t.dims.size()) : -1;
}

int64_t LastDim(const Graph& graph, const std::string& name) {
  TypeInfo t;
  if (!TensorType(graph, name, &t) || !t.has_shape || t.dims.empty()) return -1;
  return t.dims.back().known() ? t.dims.back().value : -1;
}

bool SameShape(const Graph& graph, const std::string& a, const std::string& b) {
  TypeInfo ta, tb;
  if (!TensorType(graph, a, &ta) || !TensorType(graph, b, &tb)) return false;
  if (!ta.has_shape || !tb.has_shape || ta.dims.size() != tb.dims.size()) return false;
  bool typed_same = true;
  for (size_t i = 0; i < ta.dims.size() && typed_same; ++i) {
    const Dim& x = ta.dims[i];
    const Dim& y = tb.dims[i];
    typed_same = x.known() ? (y.known() && x.value == y.value) : (!x.symbol.empty() && x.symbol == y.symbol);
  }
  // Exported transformers lose their dims at computed Reshapes: follow them.
  return typed_same || SymbolicShapes(graph).SameShape(a, b);
}

const Node* SoleUseProducer(const Graph& graph, const GraphIndex& idx, const std::string& value, const char* op_type) {
  const int p = idx.Producer(value);
  if (p < 0 || !idx.HasSingleUse(value)) return nullptr;
  const Node& n = graph.nodes[p];
  if (!IsOnnxOp(n, op_type) || n.outputs.size() != 1) return nullptr;
  return &n;
}

int SoleConsumer(const Graph& graph, const GraphIndex& idx, const std::string& value, const char* op_type) {
  if (!idx.HasSingleUse(value)) return -1;
  const int c = idx.Consumers(value)[0].first;
  return IsOnnxOp(graph.nodes[c], op_type) ? c : -1;
}

std::string OtherInput(const Node& binary, const std::string& value) {
  if (binary.inputs.size() != 2 || binary.inputs[0] == binary.inputs[1]) return "";
  if (binary.inputs[0] == value) return binary.inputs[1];
  if (binary.inputs[1] == value) return binary.inputs[0];
  return "";
}

bool ReduceAxes(const Graph& graph, const Node& reduce, std::vector<int64_t>* axes) {
  axes->clear();
  const int axes_input_since = reduce.op_type == "ReduceSum" ? 13 : 18;
  if (reduce.since_version < axes_input_since) {
    *axes = reduce.AttrInts("axes");
    return true;
  }
  if (reduce.inputs.size() < 2 || reduce.inputs[1].empty()) return true;  // all axes
  const Tensor* t = ConstantInitializer(graph, reduce.inputs[1]);
  if (t == nullptr || t->type() != ElemType::kInt64) return false;
  axes->assign(t->data<int64_t>(), t->data<int64_t>() + t->size());
  return true;
}

bool IsLastAxisMean(const Graph& graph, const Node& reduce, int rank) {
  if (!IsOnnxOp(reduce, "ReduceMean") || reduce.outputs.size() != 1 || rank < 1) return false;
  if (reduce.AttrInt("keepdims", 1) != 1) return false;
  std::vector<int64_t> axes;
  if (!ReduceAxes(graph, reduce, &axes) || axes.size() != 1) return false;
  return axes[0] == -1 || axes[0] == rank - 1;
}

size_t RemoveDeadNodes(Graph& graph) {
  size_t removed = 0;
  for (bool again = true; again;) {
    again = false;
    GraphIndex idx(graph);
    for (size_t i = graph.nodes.size(); i-- > 0;) {
      const Node& n = graph.nodes[i];
      bool dead = true;
      for (const auto& o : n.outputs) dead = dead && (o.empty() || idx.IsUnused(o));
      if (!dead || n.outputs.empty()) continue;
      for (const auto& o : n.outputs) graph.value_types.erase(o);
      graph.nodes.erase(graph.nodes.begin() + i);
      ++removed;
      again = true;
    }
  }
  return removed;
}

void ReplaceOuter(Graph& graph, const GraphIndex& idx, int inner, int outer, Node fused) {
  if (idx.HasSingleUse(graph.nodes[inner].outputs[0]))
    ReplacePattern(graph, {inner, outer}, std::move(fused));
  else
    graph.nodes[outer] = std::move(fused);
}

void MakeContrib(Node* node, const std::string& name, const char* op_type) {
  node->name = name + "/" + op_type;
  node->op_type = op_type;
  node->domain = kMsDomain;
  node->since_version = kMsOpset;
}

Attribute IntAttr(int64_t v) {
  Attribute a;
  a.type = Attribute::Type::kInt;
  a.i = v;
  return a;
}

Attribute FloatAttr(float v) {
  Attribute a;
  a.type = Attribute::Type::kFloat;
  a.f = v;
  return a;
}

Attribute StringAttr(std::string v) {
  Attribute a;
  a.type = Attribute::Type::kString;
  a.s = std::move(v);
  return a;
}

void MakeIdentity(Node* node) {
  node->op_type = "Identity";
  node->domain.clear();
  node->attrs.clear();
  node->inputs.resize(1);
  node->outputs.resize(1);
}

void ReplacePattern(Graph& graph, std::vector<int> pattern, Node fused) {
  std::sort(pattern.begin(), pattern.end());
  pattern.erase(std::unique(pattern.begin(), pattern.end()), pattern.end());
  const std::unordered_set<std::string> kept(fused.outputs.begin(), fused.outputs.end());
  for (int i : pattern)
    for (const auto& o : graph.nodes[i].outputs)
      if (!o.empty() && !kept.count(o)) graph.value_types.erase(o);
  graph.nodes[pattern.back()] = std::move(fused);
  for (size_t k = pattern.size() - 1; k-- > 0;) graph.nodes.erase(graph.nodes.begin() + pattern[k]);
}

}  // namespace optimizer
}  // namespace onyx

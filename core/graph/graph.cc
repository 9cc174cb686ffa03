#include "core/graph/graph.h"

#include <queue>
#include <unordered_set>

namespace onyx {

void Graph::Warn(std::string message) {
  Graph* root = this;
  while (root->parent != nullptr) root = const_cast<Graph*>(root->parent);
  for (const auto& w : root->warnings)
    if (w == message) return;
  root->warnings.push_back(std::move(message));
}

bool Graph::LocalType(const std::string& name, TypeInfo* out) const {
  auto init = initializers.find(name);
  const Tensor* t = init != initializers.end() && init->second ? init->second.get() : nullptr;
  auto it = value_types.find(name);
  if (it != value_types.end()) {
    *out = it->second;
    if (t == nullptr || (out->kind != TypeInfo::Kind::kUnknown && out->has_shape && out->elem != ElemType::kUndefined))
      return true;
  } else if (t == nullptr) {
    return false;
  }
  std::vector<Dim> dims;
  for (int64_t d : t->dims()) dims.push_back(d >= 0 ? Dim::Of(d) : Dim{});
  *out = TypeInfo::Tensor(t->type(), std::move(dims));
  return true;
}

bool TypeInfo::IsComplete() const {
  switch (kind) {
    case Kind::kTensor:
    case Kind::kSparseTensor:
      return elem != ElemType::kUndefined;
    case Kind::kSequence:
    case Kind::kOptional:
      return inner && inner->IsComplete();
    case Kind::kMap:
      return map_key != ElemType::kUndefined && inner && inner->IsComplete();
    default:
      return false;
  }
}

std::string TypeInfo::ToString() const {
  switch (kind) {
    case Kind::kTensor: return StrCat("tensor(", ElemTypeName(elem), ")");
    case Kind::kSparseTensor: return StrCat("sparse_tensor(", ElemTypeName(elem), ")");
    case Kind::kSequence: return StrCat("seq(", inner ? inner->ToString() : "unknown", ")");
    case Kind::kOptional: return StrCat("optional(", inner ? inner->ToString() : "unknown", ")");
    case Kind::kMap:
      return StrCat("map(", ElemTypeName(map_key), ",", inner ? inner->ToString() : "unknown", ")");
    default: return "unknown";
  }
}

int64_t Node::AttrInt(const std::string& key, int64_t dflt) const {
  const Attribute* a = Attr(key);
  return a ? a->i : dflt;
}
float Node::AttrFloat(const std::string& key, float dflt) const {
  const Attribute* a = Attr(key);
  return a ? a->f : dflt;
}
std::string Node::AttrString(const std::string& key, const std::string& dflt) const {
  const Attribute* a = Attr(key);
  return a ? a->s : dflt;
}
std::vector<int64_t> Node::AttrInts(const std::string& key) const {
  const Attribute* a = Attr(key);
  return a ? a->ints : std::vector<int64_t>{};
}
std::string Node::Describe() const {
  return StrCat("node '", name, "' (", domain.empty() ? "" : domain + ".", op_type, ")");
}

Status Graph::Finalize(const std::vector<std::string>& outer_scope) {
  std::unordered_map<std::string, size_t> producer;
  for (size_t i = 0; i < nodes.size(); ++i) {
    for (const auto& o : nodes[i].outputs) {
      if (o.empty()) continue;
      if (!producer.emplace(o, i).second)
        return MakeError(ErrorCode::kInvalidGraph, "graph '", name, "': value '", o,
                         "' is produced by more than one node (", nodes[producer[o]].Describe(),
                         " and ", nodes[i].Describe(), ")");
      if (IsInitializer(o))
        return MakeError(ErrorCode::kInvalidGraph, "graph '", name, "': ", nodes[i].Describe(),
                         " writes to initializer '", o, "'");
    }
  }
  std::unordered_set<std::string> available(outer_scope.begin(), outer_scope.end());
  for (const auto& in : inputs) available.insert(in.name);
  for (const auto& kv : initializers) available.insert(kv.first);

  // Kahn's algorithm; ties keep the model's order so execution is deterministic.
  std::vector<int> pending(nodes.size(), 0);
  std::vector<std::vector<size_t>> consumers(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    std::vector<std::string> all_inputs = nodes[i].inputs;
    all_inputs.insert(all_inputs.end(), nodes[i].implicit_inputs.begin(), nodes[i].implicit_inputs.end());
    for (const auto& in : all_inputs) {
      if (in.empty()) continue;
      auto it = producer.find(in);
      if (it != producer.end()) {
        ++pending[i];
        consumers[it->second].push_back(i);
      } else if (!available.count(in)) {
        return MakeError(ErrorCode::kInvalidGraph, "graph '", name, "': input '", in, "' of ",
                         nodes[i].Describe(),
                         " is not a graph input, an initializer or the output of any node");
      }
    }
  }
  std::priority_queue<size_t, std::vector<size_t>, std::greater<size_t>> ready;
  for (size_t i = 0; i < nodes.size(); ++i)
    if (pending[i] == 0) ready.push(i);
  std::vector<size_t> order;
  order.reserve(nodes.size());
  while (!ready.empty()) {
    size_t i = ready.top();
    ready.pop();
    order.push_back(i);
    for (size_t c : consumers[i])
      if (--pending[c] == 0) ready.push(c);
  }
  if (order.size() != nodes.size()) {
    std::string stuck;
    for (size_t i = 0; i < nodes.size(); ++i)
      if (pending[i] > 0) { stuck = nodes[i].Describe(); break; }
    return MakeError(ErrorCode::kInvalidGraph, "graph '", name, "' contains a cycle (through ", stuck, ")");
  }
  std::vector<Node> sorted;
  sorted.reserve(nodes.size());
  for (size_t i : order) sorted.push_back(std::move(nodes[i]));
  nodes = std::move(sorted);

  for (const auto& out : outputs) {
    if (!producer.count(out.name) && !available.count(out.name))
      return MakeError(ErrorCode::kInvalidGraph, "graph '", name, "': output '", out.name,
                       "' is not produced by any node");
  }
  return Status::OK();
}

}  // namespace onyx

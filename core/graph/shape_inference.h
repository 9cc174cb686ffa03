// Load-time type and shape inference over the Graph IR, with symbolic dims.
#pragma once

#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/graph/graph.h"

namespace onyx {

// Fills graph.value_types for every node output whose type (and, where it can
// be derived, shape with symbolic dims) follows from its inputs, recursing into
// subgraphs. Declared types are kept and refined: a declared unknown (or
// symbolic) dim takes an inferred known value; a declared known dim that
// differs from an inferred known dim is a conflict. Unknown op types leave
// their outputs as declared (or absent).
// Returns INVALID_GRAPH only on a provable inconsistency, with a message that
// names the node, its op type and its input shapes, e.g.
// "node 'add1' (Add): cannot broadcast input shapes [2,3] and [4,3]".
// Never throws; odd attributes on ops whose shape cannot be derived simply
// leave that output's shape unknown.
Status InferTypesAndShapes(Graph& graph);

// "[batch,768]", "[?,3]" for an unknown dim, "?" for an unknown rank.
std::string ShapeString(const TypeInfo& t);
std::string DimsString(const std::vector<Dim>& dims);

// ---------------------------------------------------------------------------
// Internals shared by shape_inference.cc and the per-family
// shape_rules_*.cc files. Not part of the engine's API.
namespace shape_inference {

// The value of a small integer tensor (rank 0 or 1) as far as it is known at
// load time: constants fold to known values, and Shape of a symbolic tensor
// yields its symbols, so torch-style Shape->Gather->Concat->Reshape chains
// resolve even with a symbolic batch. Integer constants may be negative
// (Reshape's -1, Slice's starts), so knownness is kept in its own vector.
struct IntData {
  std::vector<int64_t> v;      // value where known[i]
  std::vector<Dim> sym;        // symbol/unknown where !known[i]
  std::vector<bool> known;
  bool scalar = false;
  size_t size() const { return v.size(); }
  bool AllKnown() const {
    for (bool k : known)
      if (!k) return false;
    return true;
  }
  // Element i as a dim (a known non-negative value, or its symbol/unknown).
  Dim AsDim(size_t i) const {
    if (known[i]) return v[i] >= 0 ? Dim::Of(v[i]) : Dim{};
    return sym[i];
  }
  void Push(int64_t x) { v.push_back(x); sym.emplace_back(); known.push_back(true); }
  void PushDim(const Dim& d) {
    if (d.known()) { Push(d.value); return; }
    v.push_back(0);
    sym.push_back(d);
    known.push_back(false);
  }
};

class InferContext;
using Rule = std::function<Status(InferContext&)>;
using RuleMap = std::unordered_map<std::string, Rule>;  // key: op_type ("" domain) or "domain:op"

void RegisterElementwiseRules(RuleMap& m);
void RegisterNnRules(RuleMap& m);
void RegisterTensorRules(RuleMap& m);
void RegisterReduceRules(RuleMap& m);
void RegisterConstantRules(RuleMap& m);
void RegisterRandomRules(RuleMap& m);
void RegisterSequenceRules(RuleMap& m);
void RegisterMlRules(RuleMap& m);

struct GraphState;  // defined in shape_inference.cc

class InferContext {
 public:
  InferContext(Graph& graph, GraphState& state, const Node& node);

  const Node& node() const { return node_; }
  int opset() const { return node_.since_version; }
  size_t num_inputs() const { return node_.inputs.size(); }
  size_t num_outputs() const { return node_.outputs.size(); }
  bool HasInput(size_t i) const { return i < node_.inputs.size() && !node_.inputs[i].empty(); }
  bool HasOutput(size_t i) const { return i < node_.outputs.size() && !node_.outputs[i].empty(); }

  // Type of input i; a kUnknown TypeInfo when absent or not inferred.
  const TypeInfo& Input(size_t i) const;
  // Element type of tensor input i, kUndefined when unknown.
  ElemType InputElem(size_t i) const;
  // Tensor input i with a known rank.
  bool HasShape(size_t i) const;
  const std::vector<Dim>& Dims(size_t i) const { return Input(i).dims; }
  int64_t Rank(size_t i) const { return HasShape(i) ? static_cast<int64_t>(Dims(i).size()) : -1; }

  // Load-time value of a small integer input, or nullptr.
  const IntData* Data(size_t i) const;
  // All elements of input i as known integers.
  bool Ints(size_t i, std::vector<int64_t>* out) const;

  // Output i to fill (a scratch value when i is out of range).
  TypeInfo& Output(size_t i);
  void SetOutputData(size_t i, IntData d);
  // Shortcuts.
  void SetTensor(size_t i, ElemType e) { if (e != ElemType::kUndefined) Output(i) = TypeInfo::Tensor(e); }
  void SetTensor(size_t i, ElemType e, std::vector<Dim> dims) {
    if (e == ElemType::kUndefined) return;
    Output(i) = TypeInfo::Tensor(e, std::move(dims));
  }

  // INVALID_GRAPH "node 'n' (Op): <what>".
  Status Fail(const std::string& what) const;
  // "[2,3] and [4,3]" / "[2,3], [4,3] and [1]"; omitted inputs are skipped.
  std::string InputShapes() const;

  // Infers a subgraph of this node; `input_types` (may be shorter than its
  // inputs) fill the subgraph's undeclared inputs.
  Status InferSubgraph(Graph& sub, const std::vector<TypeInfo>& input_types);
  // Type of a subgraph's output i after inference (kUnknown if absent).
  static TypeInfo SubgraphOutput(const Graph& sub, size_t i);

  std::vector<TypeInfo> outputs;
  std::vector<std::pair<size_t, IntData>> output_data;

 private:
  Graph& graph_;
  GraphState& state_;
  const Node& node_;
  std::vector<TypeInfo> inputs_;
  TypeInfo scratch_;
};

// ---- dim helpers (shape_inference.cc) ----
// Numpy broadcast of two dims; false on a provable mismatch.
bool BroadcastDim(const Dim& a, const Dim& b, Dim* out);
// Broadcast shapes right-aligned; false on a provable mismatch.
bool BroadcastShapes(const std::vector<Dim>& a, const std::vector<Dim>& b, std::vector<Dim>* out);
// Two dims that must be equal: the more informative one; false if both known and different.
bool UnifyDim(const Dim& a, const Dim& b, Dim* out);
// Product of dims (known only when all are known and it does not overflow).
Dim DimProduct(const std::vector<Dim>& dims, size_t begin, size_t end);
// Normalises a possibly negative axis for `rank`; false when out of range.
bool NormalizeAxis(int64_t axis, int64_t rank, int64_t* out);
std::string DimString(const Dim& d);
// The start most rules share: output 0 has input 0's element type. Returns
// false when the rule is done (that type is unknown, or input 0's rank is and
// output 0 got the bare type); otherwise sets *elem and input 0's dims are known.
bool StartShapedRule(InferContext& ctx, ElemType* elem);
// Rank-only output: `rank` unknown dims (or unknown rank when rank < 0).
void SetRankOnly(InferContext& ctx, size_t o, ElemType e, int64_t rank);
// Length of a 1-D input whose shape is declared, -1 if unknown.
int64_t Len1D(InferContext& ctx, size_t i);

}  // namespace shape_inference
}  // namespace onyx

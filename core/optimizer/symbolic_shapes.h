// Which values of a graph provably share a dimension, for the fusions that
// must know an elementwise op does not broadcast (core/optimizer/). Not API.
//
// ONNX's type inference loses the batch and sequence dims of exported
// transformers at the first Reshape whose target is computed
// (Shape -> Gather -> Unsqueeze -> Concat), so two activations of one
// [batch, seq, hidden] stream look unrelated. This pass gives every
// dimension a symbol: a known size, a symbol the model names ("batch"), or a
// fresh one for a dim nobody can name, which then flows on with the value.
// Along the way it tracks the contents of small int64 shape vectors, so that
// Reshape(x, Concat(Shape(h)[0], Shape(h)[1], 768)) gets h's leading dims.
// Only rules that hold for every run that does not fail are used; equal
// symbols mean equal sizes, different symbols mean nothing.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/graph/graph.h"

namespace onyx {
namespace optimizer {

class SymbolicShapes {
 public:
  // A dim: >= 0 a known size, or a symbol (IsSym). The contents of shape
  // vectors use the same type: any constant, or a symbol standing for a size.
  using Sym = int64_t;
  static constexpr Sym kFirstSym = INT64_MIN / 2;
  static bool IsSym(Sym v) { return v <= kFirstSym; }

  explicit SymbolicShapes(const Graph& graph);

  // The dims of tensor `value`; false when its rank is not known.
  bool Dims(const std::string& value, std::vector<Sym>* out) const;
  // Both have the same rank and the same symbol in every dim.
  bool SameShape(const std::string& a, const std::string& b) const;

 private:
  Sym Fresh() { return --next_; }
  Sym Named(const std::string& symbol);
  void FromType(const std::string& value, std::vector<Sym>* dims, bool* known);
  void Visit(const Node& n);
  bool Broadcast(const std::vector<const std::vector<Sym>*>& in, std::vector<Sym>* out);
  // The contents of a small int64 (or bool) vector or scalar, when known.
  const std::vector<Sym>* Data(const std::string& value) const;

  const Graph& graph_;
  Sym next_ = kFirstSym + 1;
  std::unordered_map<std::string, Sym> named_;
  std::unordered_map<std::string, std::vector<Sym>> dims_;
  std::unordered_map<std::string, std::vector<Sym>> data_;
};

}  // namespace optimizer
}  // namespace onyx

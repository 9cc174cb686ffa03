// cast_elimination (extended): Casts that cannot change a value.
//   Cast(X, to=type(X))                   -> Identity
//   Cast(Cast(X, to=T1), to=T2), T1 and T2 each holding every value of
//   type(X) exactly                       -> Cast(X, to=T2)
//   Cast(Cast(X, to=T1), to=type(X)), T1 holding every value of type(X)
//                                         -> Identity
// A narrowing Cast (float -> float16, int64 -> int32, float -> int) rounds,
// wraps or saturates, and how depends on the source type, so a chain with
// one stays. Identities are left to identity_elimination;
// the inner Cast goes when nothing else reads it.
#include "core/optimizer/transformer_util.h"

namespace onyx {
namespace optimizer {
namespace {

bool IsCast(const Node& n) { return IsOnnxOp(n, "Cast") && n.inputs.size() == 1 && n.outputs.size() == 1; }

ElemType CastTarget(const Node& cast) { return static_cast<ElemType>(cast.AttrInt("to", 0)); }

// Every value of `from` is exactly a value of `to` (NaN and infinities too).
bool Widens(ElemType from, ElemType to) {
  using E = ElemType;
  if (from == to) return true;
  switch (from) {
    case E::kBool:
      return to == E::kUint8 || to == E::kInt8 || to == E::kUint16 || to == E::kInt16 || to == E::kUint32 ||
             to == E::kInt32 || to == E::kUint64 || to == E::kInt64 || to == E::kFloat16 || to == E::kBFloat16 ||
             to == E::kFloat || to == E::kDouble;
    case E::kUint8:
      return to == E::kUint16 || to == E::kInt16 || to == E::kUint32 || to == E::kInt32 || to == E::kUint64 ||
             to == E::kInt64 || to == E::kFloat16 || to == E::kBFloat16 || to == E::kFloat || to == E::kDouble;
    case E::kInt8:
      return to == E::kInt16 || to == E::kInt32 || to == E::kInt64 || to == E::kFloat16 || to == E::kBFloat16 ||
             to == E::kFloat || to == E::kDouble;
    case E::kUint16:
      return to == E::kUint32 || to == E::kInt32 || to == E::kUint64 || to == E::kInt64 || to == E::kFloat ||
             to == E::kDouble;
    case E::kInt16:
      return to == E::kInt32 || to == E::kInt64 || to == E::kFloat || to == E::kDouble;
    case E::kUint32:
      return to == E::kUint64 || to == E::kInt64 || to == E::kDouble;
    case E::kInt32:
      return to == E::kInt64 || to == E::kDouble;
    case E::kFloat16:
    case E::kBFloat16:
      return to == E::kFloat || to == E::kDouble;
    case E::kFloat:
      return to == E::kDouble;
    default:
      return false;
  }
}

bool TryEliminate(Graph& graph, const GraphIndex& idx, size_t i) {
  const Node& outer = graph.nodes[i];
  if (!IsCast(outer)) return false;
  const ElemType from = TensorElemType(graph, outer.inputs[0]);
  if (from == ElemType::kUndefined) return false;
  if (CastTarget(outer) == from) {
    MakeIdentity(&graph.nodes[i]);
    return true;
  }
  const int p = idx.Producer(outer.inputs[0]);
  if (p < 0 || !IsCast(graph.nodes[p])) return false;
  const std::string x = graph.nodes[p].inputs[0];
  const ElemType orig = TensorElemType(graph, x);
  const ElemType to = CastTarget(outer);
  if (orig == ElemType::kUndefined || !Widens(orig, from) || !Widens(orig, to)) return false;
  Node fused = outer;
  fused.inputs[0] = x;
  if (to == orig) MakeIdentity(&fused);
  ReplaceOuter(graph, idx, p, static_cast<int>(i), std::move(fused));
  return true;
}

}  // namespace

Status EliminateCasts(Graph& graph, const OptimizerContext&, bool* changed) {
  RewriteNodes(graph, changed, TryEliminate);
  return Status::OK();
}

}  // namespace optimizer
}  // namespace onyx

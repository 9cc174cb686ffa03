// transpose_optimizer (extended): Transposes that cost a copy and buy nothing.
//   Transpose(Transpose(X, p1), p2)  -> Transpose(X, p1 o p2), or an Identity
//                                       of X when the two cancel (then
//                                       identity_elimination drops it)
//   MatMul(Transpose(A), B) / MatMul(A, Transpose(B)), the Transpose swapping
//   the last two dims only        -> com.microsoft FusedMatMul(A, B) with
//                                       transA / transB (version 1)
// The inner Transpose goes when nothing else reads it. A Transpose of a
// constant is left to constant folding, so that MatMul keeps packing its
// constant B once.
#include <numeric>

#include "core/optimizer/transformer_util.h"

namespace onyx {
namespace optimizer {
namespace {

// The permutation of a Transpose, its default (reversal) filled in from the
// input's rank; false when neither is known or it is not a permutation.
bool Permutation(const Graph& graph, const Node& t, std::vector<int64_t>* perm) {
  if (const Attribute* a = t.Attr("perm")) {
    *perm = a->ints;
  } else {
    const int rank = TensorRank(graph, t.inputs[0]);
    if (rank < 0) return false;
    perm->resize(rank);
    for (int i = 0; i < rank; ++i) (*perm)[i] = rank - 1 - i;
  }
  std::vector<bool> seen(perm->size(), false);
  for (int64_t p : *perm) {
    if (p < 0 || p >= static_cast<int64_t>(perm->size()) || seen[p]) return false;
    seen[p] = true;
  }
  return true;
}

bool IsTranspose(const Node& n) { return IsOnnxOp(n, "Transpose") && n.inputs.size() == 1 && n.outputs.size() == 1; }

bool TryMergePair(Graph& graph, const GraphIndex& idx, size_t i) {
  const Node& outer = graph.nodes[i];
  if (!IsTranspose(outer)) return false;
  const int p = idx.Producer(outer.inputs[0]);
  if (p < 0 || !IsTranspose(graph.nodes[p])) return false;
  const Node& inner = graph.nodes[p];
  std::vector<int64_t> p1, p2;
  if (!Permutation(graph, inner, &p1) || !Permutation(graph, outer, &p2) || p1.size() != p2.size()) return false;
  std::vector<int64_t> composed(p2.size());
  bool identity = true;
  for (size_t k = 0; k < p2.size(); ++k) {
    composed[k] = p1[p2[k]];
    identity = identity && composed[k] == static_cast<int64_t>(k);
  }
  Node fused = outer;
  fused.inputs[0] = inner.inputs[0];
  if (identity) {
    MakeIdentity(&fused);
  } else {
    fused.attrs["perm"].type = Attribute::Type::kInts;
    fused.attrs["perm"].ints = composed;
  }
  ReplaceOuter(graph, idx, p, static_cast<int>(i), std::move(fused));
  return true;
}

// The Transpose producing `value` when it swaps the last two of >= 2 dims and
// does nothing else, its output read once and its input not a constant.
int SwapLastTwo(const Graph& graph, const GraphIndex& idx, const std::string& value) {
  const int p = idx.Producer(value);
  if (p < 0 || !IsTranspose(graph.nodes[p]) || !idx.HasSingleUse(value)) return -1;
  const Node& t = graph.nodes[p];
  if (ConstantInitializer(graph, t.inputs[0]) != nullptr) return -1;
  std::vector<int64_t> perm;
  if (!Permutation(graph, t, &perm) || perm.size() < 2) return -1;
  const size_t r = perm.size();
  for (size_t k = 0; k + 2 < r; ++k)
    if (perm[k] != static_cast<int64_t>(k)) return -1;
  return perm[r - 2] == static_cast<int64_t>(r - 1) && perm[r - 1] == static_cast<int64_t>(r - 2) ? p : -1;
}

bool TryFoldIntoMatMul(Graph& graph, const GraphIndex& idx, size_t i) {
  const Node& mm = graph.nodes[i];
  if (!IsOnnxOp(mm, "MatMul") || mm.inputs.size() != 2 || mm.outputs.size() != 1) return false;
  const ElemType et = TensorElemType(graph, mm.inputs[0]);
  if (et != ElemType::kFloat && et != ElemType::kDouble) return false;
  const int ta = SwapLastTwo(graph, idx, mm.inputs[0]);
  const int tb = mm.inputs[0] == mm.inputs[1] ? -1 : SwapLastTwo(graph, idx, mm.inputs[1]);
  if (ta < 0 && tb < 0) return false;
  Node fused = mm;
  MakeContrib(&fused, mm.name, "FusedMatMul");
  std::vector<int> pattern = {static_cast<int>(i)};
  const std::pair<int, const char*> sides[] = {{ta, "transA"}, {tb, "transB"}};
  for (int k = 0; k < 2; ++k) {
    fused.attrs[sides[k].second] = IntAttr(sides[k].first >= 0 ? 1 : 0);
    if (sides[k].first < 0) continue;
    fused.inputs[k] = graph.nodes[sides[k].first].inputs[0];
    pattern.push_back(sides[k].first);
  }
  ReplacePattern(graph, pattern, std::move(fused));
  return true;
}

}  // namespace

Status OptimizeTransposes(Graph& graph, const OptimizerContext&, bool* changed) {
  RewriteNodes(graph, changed, [](Graph& g, const GraphIndex& idx, size_t i) {
    return TryMergePair(g, idx, i) || TryFoldIntoMatMul(g, idx, i);
  });
  return Status::OK();
}

}  // namespace optimizer
}  // namespace onyx

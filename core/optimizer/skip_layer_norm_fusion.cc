// skip_layer_norm_fusion (extended): the residual sum in front of a
// LayerNormalization joins it, as onnxruntime's optimizer does for BERT/GPT:
//   s = Add(A, B)                       (A, B the same shape: no broadcast)
//   Y = LayerNormalization(s, gamma, beta, axis=-1)
// becomes com.microsoft SkipLayerNormalization(A, B, gamma, beta), and
// SimplifiedLayerNormalization(s, gamma) becomes
// SkipSimplifiedLayerNormalization(A, B, gamma) (both version 1; one pass over
// the rows instead of two). When A (or B) is itself Add(P, bias) with a
// constant 1-D bias of the hidden size that nothing else reads, the bias
// moves into the fused node too (its `bias` input): the Linear layer's bias
// Add disappears. P then becomes the fused node's input 0, since the kernel
// computes (input + bias) + skip, the two Adds' roundings.
//
// When s has other readers (pre-LayerNorm blocks keep the residual stream),
// the fused node writes it as its input_skip_bias_sum output (output 3),
// under its name; those readers must come after the LayerNormalization.
// Only float tensors of rank 2 or 3 (the kernels'), normalized over the last
// axis with constant 1-D gamma and beta of the hidden size, and a
// LayerNormalization whose mean/inv_std_var outputs nobody reads.
#include <utility>

#include "core/optimizer/transformer_util.h"

namespace onyx {
namespace optimizer {
namespace {

bool OnlyFirstOutputUsed(const GraphIndex& idx, const Node& n) {
  for (size_t k = 1; k < n.outputs.size(); ++k)
    if (!n.outputs[k].empty() && !idx.IsUnused(n.outputs[k])) return false;
  return true;
}

bool TryFuse(Graph& graph, const GraphIndex& idx, size_t i) {
  const Node& ln = graph.nodes[i];
  const bool plain = IsOnnxOp(ln, "LayerNormalization");
  const bool simplified = IsOnnxOp(ln, "SimplifiedLayerNormalization");
  if ((!plain && !simplified) || ln.inputs.size() < 2 || ln.outputs.empty()) return false;
  if (!OnlyFirstOutputUsed(idx, ln) || ln.AttrInt("stash_type", 1) != 1) return false;
  const std::string s = ln.inputs[0];
  const int rank = TensorRank(graph, s);
  const int64_t hidden = LastDim(graph, s);
  if ((rank != 2 && rank != 3) || hidden <= 0 || TensorElemType(graph, s) != ElemType::kFloat) return false;
  const int64_t axis = ln.AttrInt("axis", -1);
  if (axis != -1 && axis != rank - 1) return false;
  const std::string gamma = ln.inputs[1];
  const std::string beta = simplified || ln.inputs.size() < 3 ? "" : ln.inputs[2];
  if (!IsFloatVector(graph, gamma, hidden) || (!beta.empty() && !IsFloatVector(graph, beta, hidden)))
    return false;

  const int add = idx.Producer(s);
  if (add < 0 || !IsOnnxOp(graph.nodes[add], "Add") || graph.nodes[add].inputs.size() != 2) return false;
  if (idx.IsImplicitInput(s)) return false;
  const bool keep_sum = !idx.HasSingleUse(s);
  for (const auto& use : idx.Consumers(s))
    if (use.first != static_cast<int>(i) && use.first < static_cast<int>(i)) return false;
  std::string a = graph.nodes[add].inputs[0], b = graph.nodes[add].inputs[1];
  if (a == b || !SameShape(graph, a, s) || !SameShape(graph, b, s)) return false;
  std::vector<int> nodes = {add, static_cast<int>(i)};

  // A bias Add in front of either side folds in as well.
  std::string bias;
  for (std::string* side : {&a, &b}) {
    const int p = idx.Producer(*side);
    if (p < 0 || !SoleUseProducer(graph, idx, *side, "Add")) continue;
    const Node& badd = graph.nodes[p];
    for (int k = 0; k < 2 && bias.empty(); ++k) {
      const std::string& y = badd.inputs[k];
      const std::string& c = badd.inputs[1 - k];
      if (y != c && IsFloatVector(graph, c, hidden) && SameShape(graph, y, s)) {
        bias = c;
        *side = y;
        nodes.push_back(p);
      }
    }
    if (!bias.empty()) {
      // The kernel sums (input + bias) + skip: the biased side goes first,
      // so the fused node rounds as the two Adds did.
      if (side == &b) std::swap(a, b);
      break;
    }
  }

  Node fused;
  MakeContrib(&fused, ln.name, simplified ? "SkipSimplifiedLayerNormalization" : "SkipLayerNormalization");
  fused.inputs = {a, b, gamma};
  if (!simplified) fused.inputs.push_back(beta);  // "" keeps bias at input 4
  if (!bias.empty()) fused.inputs.push_back(bias);
  while (!fused.inputs.empty() && fused.inputs.back().empty()) fused.inputs.pop_back();
  fused.outputs = {ln.outputs[0]};
  if (keep_sum) fused.outputs.insert(fused.outputs.end(), {"", "", s});
  // LayerNormalization's default, not SkipLayerNormalization's (1e-12).
  fused.attrs["epsilon"] = FloatAttr(ln.AttrFloat("epsilon", 1e-5f));
  ReplacePattern(graph, nodes, std::move(fused));
  return true;
}

}  // namespace

Status FuseSkipLayerNorm(Graph& graph, const OptimizerContext&, bool* changed) {
  RewriteNodes(graph, changed, TryFuse);
  return Status::OK();
}

}  // namespace optimizer
}  // namespace onyx

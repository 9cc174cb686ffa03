// conv_bn_fusion (extended): Conv -> BatchNormalization (inference) becomes
// one Conv with the normalization folded into new weights and bias:
//   s = scale / sqrt(var + eps),  W'[m] = W[m] * s[m],  B' = (B - mean) * s + bias.
#include <cmath>
#include <vector>

#include "core/optimizer/transformer_util.h"

namespace onyx {
namespace optimizer {
namespace {

template <typename T>
void FoldInto(const Tensor& w, const Tensor* b, const Tensor& scale, const Tensor& bias, const Tensor& mean,
              const Tensor& var, double eps, Tensor* w_out, Tensor* b_out) {
  const int64_t M = w.dims()[0];
  const int64_t per = M > 0 ? w.size() / M : 0;
  const T* wv = w.data<T>();
  T* wo = w_out->data<T>();
  T* bo = b_out->data<T>();
  for (int64_t m = 0; m < M; ++m) {
    // Double throughout so the folded parameters round once, not per step.
    const double s = static_cast<double>(scale.data<T>()[m]) / std::sqrt(static_cast<double>(var.data<T>()[m]) + eps);
    for (int64_t k = 0; k < per; ++k) wo[m * per + k] = static_cast<T>(wv[m * per + k] * s);
    const double b0 = b ? static_cast<double>(b->data<T>()[m]) : 0.0;
    bo[m] = static_cast<T>((b0 - mean.data<T>()[m]) * s + bias.data<T>()[m]);
  }
}

// Folds the BatchNormalization reading node i (a Conv) into it; returns the
// index of that BN node, which the caller drops, or -1. The graph's nodes do
// not move, so one index serves a whole pass: each fusion touches only its own
// Conv and BN, and reads the index only for values no earlier fusion changed.
int TryFuse(Graph& graph, const GraphIndex& idx, size_t i) {
  Node& conv = graph.nodes[i];
  if (!conv.domain.empty() || conv.op_type != "Conv" || conv.outputs.size() != 1 || conv.inputs.size() < 2) return -1;
  // An activation applies after the bias, so BN can no longer be folded in.
  if (conv.Attr("activation") != nullptr) return -1;
  const std::string& y = conv.outputs[0];
  if (!idx.HasSingleUse(y)) return -1;
  const auto use = idx.Consumers(y)[0];
  const Node& bn = graph.nodes[use.first];
  if (!bn.domain.empty() || bn.op_type != "BatchNormalization" || use.second != 0 || bn.inputs.size() != 5) return -1;
  if (bn.AttrInt("training_mode", 0) != 0 || bn.AttrInt("spatial", 1) != 1) return -1;
  if (bn.since_version < 7 && bn.AttrInt("is_test", 0) == 0) return -1;
  for (size_t k = 1; k < bn.outputs.size(); ++k)
    if (!bn.outputs[k].empty() && !idx.IsUnused(bn.outputs[k])) return -1;
  if (bn.outputs.empty() || bn.outputs[0].empty()) return -1;

  const Tensor* w = ConstantInitializer(graph, conv.inputs[1]);
  const bool has_b = conv.inputs.size() > 2 && !conv.inputs[2].empty();
  const Tensor* b = has_b ? ConstantInitializer(graph, conv.inputs[2]) : nullptr;
  if (w == nullptr || (has_b && b == nullptr) || w->rank() < 3) return -1;
  const ElemType et = w->type();
  if (et != ElemType::kFloat && et != ElemType::kDouble) return -1;
  const int64_t M = w->dims()[0];
  const Tensor* p[4];
  for (int k = 0; k < 4; ++k) {
    p[k] = ConstantInitializer(graph, bn.inputs[k + 1]);
    if (p[k] == nullptr || p[k]->type() != et || p[k]->rank() != 1 || p[k]->dims()[0] != M) return -1;
  }
  if (b && (b->type() != et || b->rank() != 1 || b->dims()[0] != M)) return -1;

  const double eps = bn.AttrFloat("epsilon", 1e-5f);
  auto w_new = std::make_shared<Tensor>(et, w->dims());
  auto b_new = std::make_shared<Tensor>(et, Dims{M});
  if (et == ElemType::kFloat) FoldInto<float>(*w, b, *p[0], *p[1], *p[2], *p[3], eps, w_new.get(), b_new.get());
  else FoldInto<double>(*w, b, *p[0], *p[1], *p[2], *p[3], eps, w_new.get(), b_new.get());

  // New names: the old weights may be shared with other nodes.
  const std::string base = conv.name.empty() ? bn.outputs[0] : conv.name;
  const std::string w_name = UniqueValueName(graph, idx, base + "_bn_W");
  graph.initializers[w_name] = std::move(w_new);
  const std::string b_name = UniqueValueName(graph, idx, base + "_bn_B");
  graph.initializers[b_name] = std::move(b_new);

  const size_t bn_index = static_cast<size_t>(use.first);
  const std::string z = bn.outputs[0];
  for (size_t k = 1; k < bn.outputs.size(); ++k) graph.value_types.erase(bn.outputs[k]);
  graph.value_types.erase(y);
  conv.inputs.resize(3);
  conv.inputs[1] = w_name;
  conv.inputs[2] = b_name;
  conv.outputs[0] = z;
  // Conv stays where it was: everything reading Z comes after the BN anyway.
  return static_cast<int>(bn_index);
}

}  // namespace

Status FuseConvBatchNorm(Graph& graph, const OptimizerContext&, bool* changed) {
  // One pass over one index (a CNN has a fusion per conv: rebuilding the index
  // after each made session creation quadratic). A BN fed by a BN fed by a
  // Conv folds in the optimizer's next round.
  GraphIndex idx(graph);
  std::vector<char> drop(graph.nodes.size(), 0);
  bool any = false;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    if (drop[i]) continue;
    const int bn = TryFuse(graph, idx, i);
    if (bn >= 0) {
      drop[static_cast<size_t>(bn)] = 1;
      any = true;
    }
  }
  if (!any) return Status::OK();
  size_t kept = 0;
  for (size_t i = 0; i < graph.nodes.size(); ++i)
    if (!drop[i]) {
      if (kept != i) graph.nodes[kept] = std::move(graph.nodes[i]);
      ++kept;
    }
  graph.nodes.resize(kept);
  RemoveUnusedInitializers(graph);
  *changed = true;
  return Status::OK();
}

}  // namespace optimizer
}  // namespace onyx

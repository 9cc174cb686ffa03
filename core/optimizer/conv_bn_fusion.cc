// conv_bn_fusion (extended): Conv -> BatchNormalization (inference) becomes
// one Conv with the normalization folded into new weights and bias:
//   s = scale / sqrt(var + eps),  W'[m] = W[m] * s[m],  B' = (B - mean) * s + bias.
#include <cmath>

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

bool TryFuse(Graph& graph, const GraphIndex& idx, size_t i) {
  Node& conv = graph.nodes[i];
  if (!conv.domain.empty() || conv.op_type != "Conv" || conv.outputs.size() != 1 || conv.inputs.size() < 2) return false;
  // An activation applies after the bias, so BN can no longer be folded in.
  if (conv.Attr("activation") != nullptr) return false;
  const std::string& y = conv.outputs[0];
  if (!idx.HasSingleUse(y)) return false;
  const auto use = idx.Consumers(y)[0];
  const Node& bn = graph.nodes[use.first];
  if (!bn.domain.empty() || bn.op_type != "BatchNormalization" || use.second != 0 || bn.inputs.size() != 5) return false;
  if (bn.AttrInt("training_mode", 0) != 0 || bn.AttrInt("spatial", 1) != 1) return false;
  if (bn.since_version < 7 && bn.AttrInt("is_test", 0) == 0) return false;
  for (size_t k = 1; k < bn.outputs.size(); ++k)
    if (!bn.outputs[k].empty() && !idx.IsUnused(bn.outputs[k])) return false;
  if (bn.outputs.empty() || bn.outputs[0].empty()) return false;

  const Tensor* w = ConstantInitializer(graph, conv.inputs[1]);
  const bool has_b = conv.inputs.size() > 2 && !conv.inputs[2].empty();
  const Tensor* b = has_b ? ConstantInitializer(graph, conv.inputs[2]) : nullptr;
  if (w == nullptr || (has_b && b == nullptr) || w->rank() < 3) return false;
  const ElemType et = w->type();
  if (et != ElemType::kFloat && et != ElemType::kDouble) return false;
  const int64_t M = w->dims()[0];
  const Tensor* p[4];
  for (int k = 0; k < 4; ++k) {
    p[k] = ConstantInitializer(graph, bn.inputs[k + 1]);
    if (p[k] == nullptr || p[k]->type() != et || p[k]->rank() != 1 || p[k]->dims()[0] != M) return false;
  }
  if (b && (b->type() != et || b->rank() != 1 || b->dims()[0] != M)) return false;

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
  graph.nodes.erase(graph.nodes.begin() + bn_index);
  return true;
}

}  // namespace

Status FuseConvBatchNorm(Graph& graph, const OptimizerContext&, bool* changed) {
  RewriteNodes(graph, changed, TryFuse);
  return Status::OK();
}

}  // namespace optimizer
}  // namespace onyx

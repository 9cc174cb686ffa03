// conv_add_fusion (extended): Add(Conv(X, W, B), Z) becomes FusedConv(X, W, B, Z),
// onnxruntime's contrib op (com.microsoft, opset 1), whose kernel adds Z in
// each output block's epilogue (providers/cpu/nn/conv.cc) instead of a second
// pass over memory: the residual sum of ResNet-style blocks. A Relu (or other
// activation) behind the Add then folds into the same node through
// conv_activation_fusion, since FusedConv applies its activation after Z:
// Y = activation(Conv(X, W, B) + Z).
//
// Only when Z has exactly the Conv output's shape (dims known or the same
// symbols: the sum must not broadcast) and both are float, and the Conv
// output has no other reader. The fused node takes the Add's place in the
// order, where both the Conv's inputs and Z are already computed.
#include "core/optimizer/transformer_util.h"

namespace onyx {
namespace optimizer {
namespace {

bool SameKnownShape(const Graph& graph, const std::string& a, const std::string& b) {
  TypeInfo ta, tb;
  if (!graph.LocalType(a, &ta) || !graph.LocalType(b, &tb)) return false;
  if (ta.kind != TypeInfo::Kind::kTensor || tb.kind != TypeInfo::Kind::kTensor) return false;
  if (ta.elem != ElemType::kFloat || tb.elem != ElemType::kFloat) return false;
  if (!ta.has_shape || !tb.has_shape || ta.dims.size() != tb.dims.size()) return false;
  for (size_t i = 0; i < ta.dims.size(); ++i) {
    const Dim& x = ta.dims[i];
    const Dim& y = tb.dims[i];
    const bool same = x.known() ? (y.known() && x.value == y.value) : (!x.symbol.empty() && x.symbol == y.symbol);
    if (!same) return false;
  }
  return true;
}

// A Conv, or a FusedConv without Z and without an activation (the sum must
// come before the activation).
bool FusableConv(const Node& n) {
  if (n.outputs.size() != 1 || n.inputs.size() < 2) return false;
  if (n.domain.empty() && n.op_type == "Conv") return true;
  return n.domain == "com.microsoft" && n.op_type == "FusedConv" && n.inputs.size() <= 3 && !n.Attr("activation");
}

bool TryFuse(Graph& graph, const GraphIndex& idx, size_t i) {
  const Node& add = graph.nodes[i];
  if (!add.domain.empty() || add.op_type != "Add" || add.inputs.size() != 2 || add.outputs.size() != 1) return false;
  for (int side = 0; side < 2; ++side) {
    const std::string& y = add.inputs[side];
    const std::string& z = add.inputs[1 - side];
    const int p = idx.Producer(y);
    if (p < 0 || y == z || !FusableConv(graph.nodes[p]) || !idx.HasSingleUse(y)) continue;
    if (!SameKnownShape(graph, y, z)) continue;
    Node fused = graph.nodes[p];
    fused.inputs.resize(3);  // B may be absent: "" keeps Z at position 3
    fused.inputs.push_back(z);
    fused.outputs[0] = add.outputs[0];
    fused.op_type = "FusedConv";
    fused.domain = "com.microsoft";
    fused.since_version = 1;
    graph.value_types.erase(y);
    graph.nodes[i] = std::move(fused);
    graph.nodes.erase(graph.nodes.begin() + p);
    return true;
  }
  return false;
}

}  // namespace

Status FuseConvAdd(Graph& graph, const OptimizerContext&, bool* changed) {
  RewriteNodes(graph, changed, TryFuse);
  return Status::OK();
}

}  // namespace optimizer
}  // namespace onyx

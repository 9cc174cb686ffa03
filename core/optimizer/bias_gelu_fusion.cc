// bias_gelu_fusion (extended): the bias Add of a Linear layer joins the GELU
// behind it (a MatMul with a 3-D input keeps its Add: Gemm has no batch
// dimensions), as onnxruntime's optimizer does:
//   Gelu(Add(Y, bias))      -> com.microsoft BiasGelu(Y, bias)
//   FastGelu(Add(Y, bias))  -> com.microsoft FastGelu(Y, bias)
// bias a constant 1-D float vector of Y's last dimension, Y already of the
// sum's shape (the Add broadcasts only the bias), the sum read by the GELU
// alone and not a graph output.
#include "core/optimizer/transformer_util.h"

namespace onyx {
namespace optimizer {
namespace {

bool TryFuse(Graph& graph, const GraphIndex& idx, size_t i) {
  Node& gelu = graph.nodes[i];
  const bool exact = gelu.domain == kMsDomain && gelu.op_type == "Gelu";
  const bool fast = gelu.domain == kMsDomain && gelu.op_type == "FastGelu";
  if ((!exact && !fast) || gelu.inputs.size() != 1 || gelu.outputs.size() != 1) return false;
  const std::string z = gelu.inputs[0];
  const Node* add = SoleUseProducer(graph, idx, z, "Add");
  const int64_t hidden = LastDim(graph, z);
  if (add == nullptr || add->inputs.size() != 2 || hidden <= 0) return false;
  for (int k = 0; k < 2; ++k) {
    const std::string y = add->inputs[k];
    const std::string bias = add->inputs[1 - k];
    if (y == bias || !IsFloatVector(graph, bias, hidden) || !SameShape(graph, y, z)) continue;
    Node fused = gelu;
    fused.name = gelu.name + (exact ? "/BiasGelu" : "/WithBias");
    if (exact) fused.op_type = "BiasGelu";
    fused.inputs = {y, bias};
    ReplacePattern(graph, {idx.Producer(z), static_cast<int>(i)}, std::move(fused));
    return true;
  }
  return false;
}

}  // namespace

Status FuseBiasGelu(Graph& graph, const OptimizerContext&, bool* changed) {
  RewriteNodes(graph, changed, TryFuse);
  return Status::OK();
}

}  // namespace optimizer
}  // namespace onyx

// gemm_activation_fusion (extended): Gemm -> Relu | LeakyRelu | Tanh |
// Sigmoid | HardSigmoid | Elu | Selu | Softsign | Softplus | ThresholdedRelu
// becomes com.microsoft FusedGemm (version 1), onnxruntime's contrib op:
// Gemm's inputs and attributes plus `activation` (the op type) and the
// activation's own attributes renamed activation_alpha / _beta / _gamma. The
// kernel (providers/cpu/math/gemm.cc) applies it to each output block while
// it is in cache, instead of a second pass over Y. Matrices made by
// matmul_add_fusion (MatMul + bias on 2-D inputs) get the same treatment.
// Only float Gemms whose output the activation alone reads.
#include <vector>

#include "core/optimizer/transformer_util.h"

namespace onyx {
namespace optimizer {
namespace {

// The activations FusedGemm runs, with their attributes and ONNX's defaults.
// onnxruntime's kernel requires each parameter spelled out.
struct Param {
  const char* name;
  float dflt;
};
struct ActivationAttrs {
  const char* op;
  std::vector<Param> params;
};
const std::vector<ActivationAttrs>& Activations() {
  static const std::vector<ActivationAttrs> kActivations = {
      {"Relu", {}},
      {"LeakyRelu", {{"alpha", 0.01f}}},
      {"Tanh", {}},
      {"Sigmoid", {}},
      {"HardSigmoid", {{"alpha", 0.2f}, {"beta", 0.5f}}},
      {"Elu", {{"alpha", 1.f}}},
      {"Selu", {{"alpha", 1.67326319217681884765625f}, {"gamma", 1.05070102214813232421875f}}},
      {"Softsign", {}},
      {"Softplus", {}},
      {"ThresholdedRelu", {{"alpha", 1.f}}},
  };
  return kActivations;
}

bool TryFuse(Graph& graph, const GraphIndex& idx, size_t i) {
  Node& gemm = graph.nodes[i];
  // Gemm before 7 had a `broadcast` attribute FusedGemm does not know.
  if (!IsOnnxOp(gemm, "Gemm") || gemm.since_version < 7 || gemm.outputs.size() != 1 || gemm.inputs.size() < 2)
    return false;
  if (TensorElemType(graph, gemm.inputs[0]) != ElemType::kFloat) return false;
  const std::string y = gemm.outputs[0];
  if (!idx.HasSingleUse(y)) return false;
  const auto use = idx.Consumers(y)[0];
  const Node& act = graph.nodes[use.first];
  if (!act.domain.empty() || act.inputs.size() != 1 || act.outputs.size() != 1) return false;
  const ActivationAttrs* kind = nullptr;
  for (const auto& a : Activations())
    if (act.op_type == a.op) kind = &a;
  if (kind == nullptr) return false;
  Node fused = gemm;
  MakeContrib(&fused, gemm.name, "FusedGemm");
  fused.attrs["activation"] = StringAttr(act.op_type);
  for (const Param& p : kind->params)
    fused.attrs[std::string("activation_") + p.name] = FloatAttr(act.AttrFloat(p.name, p.dflt));
  fused.outputs = act.outputs;
  ReplacePattern(graph, {static_cast<int>(i), use.first}, std::move(fused));
  return true;
}

}  // namespace

Status FuseGemmActivation(Graph& graph, const OptimizerContext&, bool* changed) {
  RewriteNodes(graph, changed, TryFuse);
  return Status::OK();
}

}  // namespace optimizer
}  // namespace onyx

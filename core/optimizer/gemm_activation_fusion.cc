// gemm_activation_fusion (extended): Gemm -> Relu | LeakyRelu | Tanh |
// Sigmoid | HardSigmoid | Elu | Selu | Softsign | Softplus | ThresholdedRelu
// becomes com.microsoft FusedGemm (version 1), onnxruntime's contrib op:
// Gemm's inputs and attributes plus `activation` (the op type) and the
// activation's own attributes renamed activation_alpha / _beta / _gamma. The
// kernel (providers/cpu/math/gemm.cc) applies it to each output block while
// it is in cache, instead of a second pass over Y. Matrices made by
// matmul_add_fusion (MatMul + bias on 2-D inputs) get the same treatment.
// Only float Gemms whose output the activation alone reads.
#include "core/optimizer/transformer_util.h"

namespace onyx {
namespace optimizer {
namespace {

// The activations FusedGemm runs, with the attributes each one has.
struct ActivationAttrs {
  const char* op;
  const char* alpha;
  const char* beta;
  const char* gamma;
};
constexpr ActivationAttrs kActivations[] = {
    {"Relu", nullptr, nullptr, nullptr},       {"LeakyRelu", "alpha", nullptr, nullptr},
    {"Tanh", nullptr, nullptr, nullptr},       {"Sigmoid", nullptr, nullptr, nullptr},
    {"HardSigmoid", "alpha", "beta", nullptr}, {"Elu", "alpha", nullptr, nullptr},
    {"Selu", "alpha", nullptr, "gamma"},       {"Softsign", nullptr, nullptr, nullptr},
    {"Softplus", nullptr, nullptr, nullptr},   {"ThresholdedRelu", "alpha", nullptr, nullptr},
};

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
  for (const auto& a : kActivations)
    if (act.op_type == a.op) kind = &a;
  if (kind == nullptr) return false;
  Node fused = gemm;
  fused.name = gemm.name + "/FusedGemm";
  fused.op_type = "FusedGemm";
  fused.domain = kMsDomain;
  fused.since_version = kMsOpset;
  Attribute name;
  name.type = Attribute::Type::kString;
  name.s = act.op_type;
  fused.attrs["activation"] = name;
  const std::pair<const char*, const char*> renames[] = {
      {kind->alpha, "activation_alpha"}, {kind->beta, "activation_beta"}, {kind->gamma, "activation_gamma"}};
  for (const auto& r : renames)
    if (r.first != nullptr)
      if (const Attribute* v = act.Attr(r.first)) fused.attrs[r.second] = *v;
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

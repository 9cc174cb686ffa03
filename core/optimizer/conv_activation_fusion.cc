// conv_activation_fusion (extended): Conv -> Relu | Clip | LeakyRelu | Sigmoid
// | Tanh | HardSigmoid becomes one FusedConv, onnxruntime's contrib op
// (domain com.microsoft, opset 1), which applies the activation in its output
// epilogue (providers/cpu/nn/conv.cc). Conv's attributes stay and two are added:
//   activation        string: the activation's op type
//   activation_params floats: Clip {min, max}, LeakyRelu {alpha},
//                     HardSigmoid {alpha, beta}; absent for the others
// Using onnxruntime's op keeps a saved optimized model valid ONNX that
// onnxruntime runs too. Its CPU kernel takes float only, so only float Convs
// are fused.
#include <limits>

#include "core/optimizer/transformer_util.h"

namespace onyx {
namespace optimizer {
namespace {

constexpr const char* kFusedDomain = "com.microsoft";
constexpr int kFusedOpset = 1;

// Clip's bound from input `k` (opset 11+) or attribute (older); `dflt` when
// absent. False when a bound is given but is not a load-time constant.
bool ClipBound(const Graph& graph, const Node& clip, size_t k, const char* attr, float dflt, float* out) {
  *out = dflt;
  if (clip.since_version < 11) {
    *out = clip.AttrFloat(attr, dflt);
    return true;
  }
  if (clip.inputs.size() <= k || clip.inputs[k].empty()) return true;
  const Tensor* t = ConstantInitializer(graph, clip.inputs[k]);
  double v = 0;
  if (t == nullptr || !ScalarAsDouble(*t, &v)) return false;
  *out = static_cast<float>(v);
  return true;
}

bool IsFloatTensor(const Graph& graph, const std::string& value) {
  if (const Tensor* t = ConstantInitializer(graph, value)) return t->type() == ElemType::kFloat;
  auto it = graph.value_types.find(value);
  return it != graph.value_types.end() && it->second.kind == TypeInfo::Kind::kTensor &&
         it->second.elem == ElemType::kFloat;
}

bool TryFuse(Graph& graph, const GraphIndex& idx, size_t i) {
  Node& conv = graph.nodes[i];
  // A Conv, or a FusedConv that conv_add_fusion made (a residual sum, no activation yet).
  const bool plain = conv.domain.empty() && conv.op_type == "Conv";
  const bool summed = conv.domain == kFusedDomain && conv.op_type == "FusedConv" && !conv.Attr("activation");
  if ((!plain && !summed) || conv.outputs.size() != 1 || conv.inputs.empty()) return false;
  if (!IsFloatTensor(graph, conv.inputs[0])) return false;
  const std::string& y = conv.outputs[0];
  if (!idx.HasSingleUse(y)) return false;
  const auto use = idx.Consumers(y)[0];
  const Node& act = graph.nodes[use.first];
  if (!act.domain.empty() || use.second != 0 || act.outputs.size() != 1 || act.outputs[0].empty()) return false;
  std::vector<float> params;
  if (act.op_type == "Relu" || act.op_type == "Sigmoid" || act.op_type == "Tanh") {
  } else if (act.op_type == "LeakyRelu") {
    params = {act.AttrFloat("alpha", 0.01f)};
  } else if (act.op_type == "HardSigmoid") {
    params = {act.AttrFloat("alpha", 0.2f), act.AttrFloat("beta", 0.5f)};
  } else if (act.op_type == "Clip") {
    float lo = 0, hi = 0;
    if (!ClipBound(graph, act, 1, "min", std::numeric_limits<float>::lowest(), &lo) ||
        !ClipBound(graph, act, 2, "max", std::numeric_limits<float>::max(), &hi))
      return false;
    params = {lo, hi};
  } else {
    return false;
  }
  Attribute kind;
  kind.type = Attribute::Type::kString;
  kind.s = act.op_type;
  conv.attrs["activation"] = std::move(kind);
  if (!params.empty()) {
    Attribute p;
    p.type = Attribute::Type::kFloats;
    p.floats = std::move(params);
    conv.attrs["activation_params"] = std::move(p);
  }
  conv.op_type = "FusedConv";
  conv.domain = kFusedDomain;
  conv.since_version = kFusedOpset;
  graph.value_types.erase(y);
  conv.outputs[0] = act.outputs[0];
  graph.nodes.erase(graph.nodes.begin() + use.first);
  return true;
}

}  // namespace

Status FuseConvActivation(Graph& graph, const OptimizerContext&, bool* changed) {
  RewriteNodes(graph, changed, TryFuse);
  return Status::OK();
}

}  // namespace optimizer
}  // namespace onyx

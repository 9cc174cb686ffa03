// conv_activation_fusion (extended): Conv -> Relu | Clip | LeakyRelu becomes
// one Conv that applies the activation in its output epilogue. The Conv gets
// two engine-internal attributes (not ONNX ones; see providers/cpu/nn/conv.cc):
//   activation        string: "Relu", "Clip" or "LeakyRelu"
//   activation_params floats: Clip {min, max}, LeakyRelu {alpha}, Relu {}
#include <limits>

#include "core/optimizer/transformer_util.h"

namespace onyx {
namespace optimizer {
namespace {

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

bool TryFuse(Graph& graph, const GraphIndex& idx, size_t i) {
  Node& conv = graph.nodes[i];
  if (!conv.domain.empty() || conv.op_type != "Conv" || conv.outputs.size() != 1) return false;
  if (conv.Attr("activation") != nullptr) return false;
  const std::string& y = conv.outputs[0];
  if (!idx.HasSingleUse(y)) return false;
  const auto use = idx.Consumers(y)[0];
  const Node& act = graph.nodes[use.first];
  if (!act.domain.empty() || use.second != 0 || act.outputs.size() != 1 || act.outputs[0].empty()) return false;
  // Only float/double convs exist, and these activations keep the type.
  Attribute params;
  params.type = Attribute::Type::kFloats;
  if (act.op_type == "Relu") {
  } else if (act.op_type == "LeakyRelu") {
    params.floats = {act.AttrFloat("alpha", 0.01f)};
  } else if (act.op_type == "Clip") {
    float lo = 0, hi = 0;
    if (!ClipBound(graph, act, 1, "min", std::numeric_limits<float>::lowest(), &lo) ||
        !ClipBound(graph, act, 2, "max", std::numeric_limits<float>::max(), &hi))
      return false;
    params.floats = {lo, hi};
  } else {
    return false;
  }
  Attribute kind;
  kind.type = Attribute::Type::kString;
  kind.s = act.op_type;
  conv.attrs["activation"] = std::move(kind);
  conv.attrs["activation_params"] = std::move(params);
  graph.value_types.erase(y);
  conv.outputs[0] = act.outputs[0];
  graph.nodes.erase(graph.nodes.begin() + use.first);
  return true;
}

}  // namespace

Status FuseConvActivation(Graph& graph, bool* changed) {
  RewriteNodes(graph, changed, TryFuse);
  return Status::OK();
}

}  // namespace optimizer
}  // namespace onyx

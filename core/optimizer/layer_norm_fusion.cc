// layer_norm_fusion (extended): the normalizations exporters write out op by
// op become one kernel call.
//
// LayerNorm, as torch.onnx writes it before opset 17:
//   mu = ReduceMean(X, axes=[-1]);  d = Sub(X, mu)
//   var = ReduceMean(Pow(d, 2), axes=[-1]);  std = Sqrt(Add(var, epsilon))
//   Y = Add(Mul(Div(d, std), gamma), beta)          (the Add is optional)
// becomes LayerNormalization(X, gamma, beta, axis=-1, epsilon). Below opset
// 17 that is onnxruntime's own LayerNormalization of the default domain
// (version 1), which it writes the same way and both runtimes run.
//
// RMSNorm (LLaMA-style, T5):
//   r = Sqrt(Add(ReduceMean(Pow(X, 2), axes=[-1]), epsilon))
//   Y = Mul(Div(X, r), gamma)   or   Mul(Mul(X, Reciprocal(r)), gamma)
// becomes SimplifiedLayerNormalization(X, gamma, axis=-1, epsilon),
// onnxruntime's default-domain contrib op (version 1).
//
// Only float tensors of known rank, reduced over the last axis alone with
// keepdims; epsilon a constant scalar, the exponent exactly 2; gamma (and
// beta) constant 1-D vectors of the last dimension's length (so Mul and Add do
// not broadcast them in another way). Every value inside the pattern must be
// read by the pattern alone and not be a graph output.
#include "core/optimizer/transformer_util.h"

namespace onyx {
namespace optimizer {
namespace {

// The normalizing tail shared by both forms: from `normed` (the value
// divided by the deviation), Mul by gamma and optionally Add beta. Fills the
// nodes it used, gamma, beta ("" when absent or not wanted) and the final value.
struct Affine {
  std::vector<int> nodes;
  std::string gamma, beta, out;
};

bool MatchAffine(const Graph& graph, const GraphIndex& idx, const std::string& normed, int64_t hidden, bool with_beta,
                 Affine* a) {
  const int mul = SoleConsumer(graph, idx, normed, "Mul");
  if (mul < 0) return false;
  a->gamma = OtherInput(graph.nodes[mul], normed);
  if (a->gamma.empty() || !IsFloatVector(graph, a->gamma, hidden)) return false;
  a->nodes.push_back(mul);
  a->out = graph.nodes[mul].outputs[0];
  const int add = with_beta ? SoleConsumer(graph, idx, a->out, "Add") : -1;
  if (add >= 0) {
    const std::string beta = OtherInput(graph.nodes[add], a->out);
    if (!beta.empty() && IsFloatVector(graph, beta, hidden)) {
      a->beta = beta;
      a->nodes.push_back(add);
      a->out = graph.nodes[add].outputs[0];
    }
  }
  return true;
}

// From `sq` (the squared values): ReduceMean -> Add(epsilon) -> Sqrt. Fills
// the nodes, epsilon and the Sqrt's output.
bool MatchDeviation(const Graph& graph, const GraphIndex& idx, const std::string& sq, int rank,
                    std::vector<int>* nodes, float* epsilon, std::string* root) {
  const int mean = SoleConsumer(graph, idx, sq, "ReduceMean");
  if (mean < 0 || graph.nodes[mean].inputs[0] != sq || !IsLastAxisMean(graph, graph.nodes[mean], rank)) return false;
  const std::string& var = graph.nodes[mean].outputs[0];
  const int add = SoleConsumer(graph, idx, var, "Add");
  if (add < 0) return false;
  double eps = 0;
  const std::string e = OtherInput(graph.nodes[add], var);
  if (e.empty() || !ConstantScalar(graph, e, &eps) || eps < 0) return false;
  const int sqrt = SoleConsumer(graph, idx, graph.nodes[add].outputs[0], "Sqrt");
  if (sqrt < 0 || !idx.HasSingleUse(graph.nodes[sqrt].outputs[0])) return false;
  nodes->insert(nodes->end(), {mean, add, sqrt});
  *epsilon = static_cast<float>(eps);
  *root = graph.nodes[sqrt].outputs[0];
  return true;
}

// `x` is a float tensor of known rank whose last dimension is known.
bool NormalizableInput(const Graph& graph, const std::string& x, int* rank, int64_t* hidden) {
  *rank = TensorRank(graph, x);
  *hidden = LastDim(graph, x);
  return *rank >= 1 && *hidden > 0 && TensorElemType(graph, x) == ElemType::kFloat;
}

bool IsSquare(const Graph& graph, const Node& pow, const std::string& base) {
  return IsOnnxOp(pow, "Pow") && pow.inputs.size() == 2 && pow.inputs[0] == base &&
         ConstantScalarNear(graph, pow.inputs[1], 2.0, 0.0);
}

Node MakeNorm(const Node& anchor, const char* op, const std::string& x, const Affine& a, float epsilon) {
  Node n;
  n.name = anchor.name + "/" + op;
  n.op_type = op;
  n.since_version = anchor.since_version;
  n.inputs = {x, a.gamma};
  if (!a.beta.empty()) n.inputs.push_back(a.beta);
  n.outputs = {a.out};
  n.attrs["axis"] = IntAttr(-1);
  n.attrs["epsilon"] = FloatAttr(epsilon);
  return n;
}

bool TryLayerNorm(Graph& graph, const GraphIndex& idx, size_t i) {
  const Node& mean = graph.nodes[i];
  if (!IsOnnxOp(mean, "ReduceMean") || mean.inputs.empty()) return false;
  const std::string x = mean.inputs[0];
  int rank = 0;
  int64_t hidden = 0;
  if (!NormalizableInput(graph, x, &rank, &hidden) || !IsLastAxisMean(graph, mean, rank)) return false;
  const int sub = SoleConsumer(graph, idx, mean.outputs[0], "Sub");
  if (sub < 0 || graph.nodes[sub].inputs[0] != x || graph.nodes[sub].inputs[1] != mean.outputs[0]) return false;
  // d feeds the Pow and the Div, nothing else.
  const std::string d = graph.nodes[sub].outputs[0];
  const auto& uses = idx.Consumers(d);
  if (uses.size() != 2 || idx.IsGraphOutput(d) || idx.IsImplicitInput(d)) return false;
  int pow = -1, div = -1;
  for (const auto& u : uses) {
    const Node& n = graph.nodes[u.first];
    if (IsSquare(graph, n, d))
      pow = u.first;
    else if (IsOnnxOp(n, "Div") && n.inputs.size() == 2 && n.inputs[0] == d && u.second == 0)
      div = u.first;
  }
  if (pow < 0 || div < 0) return false;
  std::vector<int> nodes = {static_cast<int>(i), sub, pow, div};
  float eps = 0;
  std::string root;
  if (!MatchDeviation(graph, idx, graph.nodes[pow].outputs[0], rank, &nodes, &eps, &root)) return false;
  if (graph.nodes[div].inputs[1] != root) return false;
  Affine a;
  if (!MatchAffine(graph, idx, graph.nodes[div].outputs[0], hidden, true, &a)) return false;
  nodes.insert(nodes.end(), a.nodes.begin(), a.nodes.end());
  ReplacePattern(graph, nodes, MakeNorm(mean, "LayerNormalization", x, a, eps));
  return true;
}

bool TryRmsNorm(Graph& graph, const GraphIndex& idx, size_t i) {
  const Node& pow = graph.nodes[i];
  if (!IsOnnxOp(pow, "Pow") || pow.inputs.size() != 2) return false;
  const std::string x = pow.inputs[0];
  int rank = 0;
  int64_t hidden = 0;
  if (!IsSquare(graph, pow, x) || !NormalizableInput(graph, x, &rank, &hidden)) return false;
  std::vector<int> nodes = {static_cast<int>(i)};
  float eps = 0;
  std::string root;
  if (!MatchDeviation(graph, idx, pow.outputs[0], rank, &nodes, &eps, &root)) return false;
  // X / r, or X * (1 / r).
  std::string normed;
  const int div = SoleConsumer(graph, idx, root, "Div");
  const int recip = SoleConsumer(graph, idx, root, "Reciprocal");
  if (div >= 0 && graph.nodes[div].inputs[0] == x && graph.nodes[div].inputs[1] == root) {
    nodes.push_back(div);
    normed = graph.nodes[div].outputs[0];
  } else if (recip >= 0) {
    const std::string& r = graph.nodes[recip].outputs[0];
    const int mul = SoleConsumer(graph, idx, r, "Mul");
    if (mul < 0 || OtherInput(graph.nodes[mul], r) != x) return false;
    nodes.insert(nodes.end(), {recip, mul});
    normed = graph.nodes[mul].outputs[0];
  } else {
    return false;
  }
  Affine a;
  if (!MatchAffine(graph, idx, normed, hidden, false, &a)) return false;
  nodes.insert(nodes.end(), a.nodes.begin(), a.nodes.end());
  ReplacePattern(graph, nodes, MakeNorm(pow, "SimplifiedLayerNormalization", x, a, eps));
  return true;
}

}  // namespace

Status FuseLayerNorm(Graph& graph, const OptimizerContext&, bool* changed) {
  RewriteNodes(graph, changed, [](Graph& g, const GraphIndex& idx, size_t i) {
    return TryLayerNorm(g, idx, i) || TryRmsNorm(g, idx, i);
  });
  return Status::OK();
}

}  // namespace optimizer
}  // namespace onyx

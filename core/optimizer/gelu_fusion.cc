// gelu_fusion (extended): GELU written out op by op becomes one
// com.microsoft activation (version 1), as onnxruntime's optimizer does:
//   exact (BERT):   0.5 * X * (1 + Erf(X / sqrt(2)))            -> Gelu(X)
//                   (or X * (1 / sqrt(2)) inside the Erf)
//   tanh (GPT-2):   0.5 * X * (1 + Tanh(sqrt(2/pi) * (X + 0.044715 * X^3)))
//                                                               -> FastGelu(X)
// The final product may be grouped ((X * g) * 0.5, (X * 0.5) * g or
// X * (g * 0.5)). Constants must be scalars within 1e-5 of the formula's
// (float spellings of sqrt(2), 1/sqrt(2), sqrt(2/pi)); every value inside the
// pattern must be read by the pattern alone and not be a graph output; X a
// float tensor.
#include <cmath>

#include "core/optimizer/transformer_util.h"

namespace onyx {
namespace optimizer {
namespace {

constexpr double kSqrt2 = 1.41421356237309504880;
constexpr double kSqrt2OverPi = 0.79788456080286535588;
constexpr double kTol = 1e-5;

// `mul` is a Mul of `x` and a constant near `c` (either order).
bool IsScaling(const Graph& graph, const Node& mul, const std::string& x, double c) {
  if (!IsOnnxOp(mul, "Mul")) return false;
  const std::string k = OtherInput(mul, x);
  return !k.empty() && ConstantScalarNear(graph, k, c, kTol);
}

// From `inner` (the Erf/Tanh output): Add 1, then the products with X and
// 0.5. Appends the nodes used and sets the final value.
bool MatchGate(const Graph& graph, const GraphIndex& idx, const std::string& x, const std::string& inner,
               std::vector<int>* nodes, std::string* out) {
  const int add = SoleConsumer(graph, idx, inner, "Add");
  if (add < 0) return false;
  const std::string one = OtherInput(graph.nodes[add], inner);
  if (one.empty() || !ConstantScalarNear(graph, one, 1.0, 0.0)) return false;
  const std::string& g = graph.nodes[add].outputs[0];
  const int m1 = SoleConsumer(graph, idx, g, "Mul");
  if (m1 < 0) return false;
  const std::string o = OtherInput(graph.nodes[m1], g);
  const std::string& p1 = graph.nodes[m1].outputs[0];
  nodes->insert(nodes->end(), {add, m1});
  if (o == x) {  // (X * g) * 0.5
    const int m2 = SoleConsumer(graph, idx, p1, "Mul");
    if (m2 < 0 || !IsScaling(graph, graph.nodes[m2], p1, 0.5)) return false;
    nodes->push_back(m2);
    *out = graph.nodes[m2].outputs[0];
    return true;
  }
  if (const Node* half = SoleUseProducer(graph, idx, o, "Mul")) {  // (X * 0.5) * g
    if (!IsScaling(graph, *half, x, 0.5)) return false;
    nodes->push_back(idx.Producer(o));
    *out = p1;
    return true;
  }
  if (ConstantScalarNear(graph, o, 0.5, 0.0)) {  // X * (g * 0.5)
    const int m2 = SoleConsumer(graph, idx, p1, "Mul");
    if (m2 < 0 || OtherInput(graph.nodes[m2], p1) != x) return false;
    nodes->push_back(m2);
    *out = graph.nodes[m2].outputs[0];
    return true;
  }
  return false;
}

Node MakeGelu(const Node& anchor, const char* op, const std::string& x, const std::string& out) {
  Node n;
  MakeContrib(&n, anchor.name, op);
  n.inputs = {x};
  n.outputs = {out};
  return n;
}

bool TryErf(Graph& graph, const GraphIndex& idx, size_t i) {
  const Node& erf = graph.nodes[i];
  if (!IsOnnxOp(erf, "Erf") || erf.inputs.size() != 1 || erf.outputs.size() != 1) return false;
  const std::string& u = erf.inputs[0];
  const int p = idx.Producer(u);
  if (p < 0 || !idx.HasSingleUse(u)) return false;
  const Node& scale = graph.nodes[p];
  std::string x;
  if (IsOnnxOp(scale, "Div") && scale.inputs.size() == 2 && ConstantScalarNear(graph, scale.inputs[1], kSqrt2, kTol))
    x = scale.inputs[0];
  else if (IsOnnxOp(scale, "Mul") && scale.inputs.size() == 2)
    for (int k = 0; k < 2; ++k)
      if (ConstantScalarNear(graph, scale.inputs[1 - k], 1.0 / kSqrt2, kTol)) x = scale.inputs[k];
  if (x.empty() || TensorElemType(graph, x) != ElemType::kFloat) return false;
  std::vector<int> nodes = {p, static_cast<int>(i)};
  std::string out;
  if (!MatchGate(graph, idx, x, erf.outputs[0], &nodes, &out)) return false;
  ReplacePattern(graph, nodes, MakeGelu(erf, "Gelu", x, out));
  return true;
}

bool TryTanh(Graph& graph, const GraphIndex& idx, size_t i) {
  const Node& tanh = graph.nodes[i];
  if (!IsOnnxOp(tanh, "Tanh") || tanh.inputs.size() != 1 || tanh.outputs.size() != 1) return false;
  // sqrt(2/pi) * s
  const std::string& u = tanh.inputs[0];
  const Node* outer = SoleUseProducer(graph, idx, u, "Mul");
  if (outer == nullptr || outer->inputs.size() != 2) return false;
  std::string s;
  for (int k = 0; k < 2; ++k)
    if (ConstantScalarNear(graph, outer->inputs[1 - k], kSqrt2OverPi, kTol)) s = outer->inputs[k];
  // s = X + 0.044715 * X^3
  const Node* sum = s.empty() ? nullptr : SoleUseProducer(graph, idx, s, "Add");
  if (sum == nullptr || sum->inputs.size() != 2) return false;
  for (int k = 0; k < 2; ++k) {
    const std::string& x = sum->inputs[k];
    const std::string& c = sum->inputs[1 - k];
    const Node* cube_scale = SoleUseProducer(graph, idx, c, "Mul");
    if (cube_scale == nullptr || cube_scale->inputs.size() != 2) continue;
    std::string cube;
    for (int j = 0; j < 2; ++j)
      if (ConstantScalarNear(graph, cube_scale->inputs[1 - j], 0.044715, 1e-7)) cube = cube_scale->inputs[j];
    const Node* pow = cube.empty() ? nullptr : SoleUseProducer(graph, idx, cube, "Pow");
    if (pow == nullptr || pow->inputs.size() != 2 || pow->inputs[0] != x ||
        !ConstantScalarNear(graph, pow->inputs[1], 3.0, 0.0))
      continue;
    if (TensorElemType(graph, x) != ElemType::kFloat) return false;
    std::vector<int> nodes = {idx.Producer(cube), idx.Producer(c), idx.Producer(s), idx.Producer(u),
                              static_cast<int>(i)};
    std::string out;
    if (!MatchGate(graph, idx, x, tanh.outputs[0], &nodes, &out)) return false;
    ReplacePattern(graph, nodes, MakeGelu(tanh, "FastGelu", x, out));
    return true;
  }
  return false;
}

}  // namespace

Status FuseGelu(Graph& graph, const OptimizerContext&, bool* changed) {
  RewriteNodes(graph, changed, [](Graph& g, const GraphIndex& idx, size_t i) {
    return TryErf(g, idx, i) || TryTanh(g, idx, i);
  });
  return Status::OK();
}

}  // namespace optimizer
}  // namespace onyx

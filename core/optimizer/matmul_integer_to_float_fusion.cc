// matmul_integer_to_float_fusion (extended): the integer MatMul that
// onnxruntime.quantization.quantize_dynamic writes,
//   i = MatMulInteger(A, B, a_zero_point?, b_zero_point?)
//   y = Mul(Cast(i, to=float), s)          (s: the scale product, float)
//   [z = Add(y, bias)]                     (bias a constant float [N])
// becomes com.microsoft MatMulIntegerToFloat(A, B, 1.0, s, a_zero_point,
// b_zero_point[, bias]), as onnxruntime's MatMulIntegerToFloatFusion does:
// the int32 product, its float copy and the scaled copy are never written;
// the kernel (providers/cpu/quantization/matmul_integer_to_float.cc) scales
// each sum in its GEMM epilogue, float(i) * (1.0 * s[n]) + bias[n], which is
// the unfused float(i) * s[n] + bias[n] exactly (1.0 * s is s). Where s is
// itself Mul(a, b) of a float scalar a and a b like s (quantize_dynamic's
// activation scale times weight scale), the node takes a and b instead and
// the kernel forms a * b[n] as the Mul did (exactly: one rounded product).
// Only where that holds: B a constant 2-D int8/uint8 matrix [K, N] (N known),
// A's zero point per tensor, B's per tensor or per column, s a float of shape
// [], [1] or [N] (a per-tensor or per-column scale: Mul then broadcasts like
// the kernel's scale), each intermediate read by the next node only.
#include "core/optimizer/transformer_util.h"

namespace onyx {
namespace optimizer {
namespace {

// `name` (may be empty: absent) is a tensor of shape [] or [1], or, when
// n > 0, [n]; of type `elem` unless that is kUndefined.
bool ScalarOrVector(const Graph& graph, const std::string& name, int64_t n, ElemType elem) {
  if (name.empty()) return true;
  TypeInfo t;
  if (!TensorType(graph, name, &t) || !t.has_shape) return false;
  if (elem != ElemType::kUndefined && t.elem != elem) return false;
  if (t.dims.empty()) return true;
  return t.dims.size() == 1 && t.dims[0].known() && (t.dims[0].value == 1 || (n > 0 && t.dims[0].value == n));
}

bool TryFuse(Graph& graph, const GraphIndex& idx, size_t i) {
  const Node& mmi = graph.nodes[i];
  if (!IsOnnxOp(mmi, "MatMulInteger") || mmi.inputs.size() < 2 || mmi.inputs.size() > 4 || mmi.outputs.size() != 1)
    return false;
  const Tensor* b = ConstantInitializer(graph, mmi.inputs[1]);
  if (b == nullptr || b->rank() != 2 || (b->type() != ElemType::kInt8 && b->type() != ElemType::kUint8)) return false;
  const int64_t N = b->dims()[1];
  const std::string a_zp = mmi.inputs.size() > 2 ? mmi.inputs[2] : "";
  const std::string b_zp = mmi.inputs.size() > 3 ? mmi.inputs[3] : "";
  if (!ScalarOrVector(graph, a_zp, 0, ElemType::kUndefined) || !ScalarOrVector(graph, b_zp, N, b->type()))
    return false;

  const std::string& i32 = mmi.outputs[0];
  const int cast = SoleConsumer(graph, idx, i32, "Cast");
  if (cast < 0 || graph.nodes[cast].outputs.size() != 1 ||
      graph.nodes[cast].AttrInt("to", 0) != static_cast<int64_t>(ElemType::kFloat))
    return false;
  const std::string& f = graph.nodes[cast].outputs[0];
  const int mul = SoleConsumer(graph, idx, f, "Mul");
  if (mul < 0 || graph.nodes[mul].outputs.size() != 1) return false;
  const std::string s = OtherInput(graph.nodes[mul], f);
  if (s.empty() || !ScalarOrVector(graph, s, N, ElemType::kFloat)) return false;

  std::vector<int> pattern = {static_cast<int>(i), cast, mul};
  std::string out = graph.nodes[mul].outputs[0], bias;
  const int add = SoleConsumer(graph, idx, out, "Add");
  if (add >= 0 && graph.nodes[add].outputs.size() == 1) {
    const std::string other = OtherInput(graph.nodes[add], out);
    if (!other.empty() && IsFloatVector(graph, other, N)) {
      bias = other;
      pattern.push_back(add);
      out = graph.nodes[add].outputs[0];
    }
  }

  // s = Mul(a_scale, b_scale) (quantize_dynamic's product of the activation's
  // scale and the weight's): the kernel takes the two factors and forms the
  // same product itself, so the Mul node goes (when s has no other reader).
  std::string a_scale, b_scale;
  const int smul = idx.Producer(s);
  if (smul >= 0 && IsOnnxOp(graph.nodes[smul], "Mul") && graph.nodes[smul].inputs.size() == 2) {
    const std::string& x = graph.nodes[smul].inputs[0];
    const std::string& y = graph.nodes[smul].inputs[1];
    if (ScalarOrVector(graph, x, 0, ElemType::kFloat) && ScalarOrVector(graph, y, N, ElemType::kFloat)) {
      a_scale = x;
      b_scale = y;
    } else if (ScalarOrVector(graph, y, 0, ElemType::kFloat) && ScalarOrVector(graph, x, N, ElemType::kFloat)) {
      a_scale = y;
      b_scale = x;
    }
    if (!a_scale.empty() && idx.HasSingleUse(s)) pattern.push_back(smul);
  }
  if (a_scale.empty()) {
    a_scale = UniqueValueName(graph, idx, (mmi.name.empty() ? i32 : mmi.name) + "_one");
    auto t = std::make_shared<Tensor>(ElemType::kFloat, Dims{});
    t->data<float>()[0] = 1.0f;
    graph.initializers[a_scale] = std::move(t);
    b_scale = s;
  }

  Node fused;
  fused.inputs = {mmi.inputs[0], mmi.inputs[1], a_scale, b_scale, a_zp, b_zp};
  if (!bias.empty()) fused.inputs.push_back(bias);
  while (fused.inputs.back().empty()) fused.inputs.pop_back();
  fused.outputs = {out};
  MakeContrib(&fused, mmi.name.empty() ? out : mmi.name, "MatMulIntegerToFloat");
  ReplacePattern(graph, pattern, std::move(fused));
  return true;
}

}  // namespace

Status FuseMatMulIntegerToFloat(Graph& graph, const OptimizerContext&, bool* changed) {
  RewriteNodes(graph, changed, TryFuse);
  return Status::OK();
}

}  // namespace optimizer
}  // namespace onyx

// matmul_scale_fusion (extended): a float MatMul scaled by a constant scalar
// on its output or on one of its inputs becomes com.microsoft FusedMatMul
// with the scale in alpha, as onnxruntime's MatMulScaleFusion does:
//   Div(MatMul(A, B), c)            -> FusedMatMul(A, B, alpha = 1/c)
//   Mul(MatMul(A, B), c)            -> FusedMatMul(A, B, alpha = c)
//   MatMul(Mul(A, c) | Div(A, c), B) -> FusedMatMul(A, B, alpha = c | 1/c)
// (B alike; a FusedMatMul already there multiplies its alpha). The GEMM
// applies alpha as it writes the product: the scaled copy of the product
// (BERT's attention scores / sqrt(head size)) is never made. Y / c becomes
// Y * (1/c): the values move by float rounding at most.
// Only where c is a constant one-element float whose rank does not exceed
// the scaled value's (the Mul/Div does not broadcast to a bigger shape), c
// is not 0 for a Div, and the scaled or scaling value is read by the other
// node alone.
#include "core/optimizer/transformer_util.h"

namespace onyx {
namespace optimizer {
namespace {

// The matrix products this folds into: float MatMul, and FusedMatMul
// without the batch transposes.
bool IsScalableProduct(const Graph& graph, const Node& n) {
  if (n.inputs.size() != 2 || n.outputs.size() != 1) return false;
  if (IsOnnxOp(n, "MatMul")) return TensorElemType(graph, n.inputs[0]) == ElemType::kFloat;
  if (n.domain != kMsDomain || n.op_type != "FusedMatMul") return false;
  if (n.AttrInt("transBatchA", 0) != 0 || n.AttrInt("transBatchB", 0) != 0) return false;
  return TensorElemType(graph, n.inputs[0]) == ElemType::kFloat;
}

// `scaler` multiplies or divides `value` by a constant float scalar that
// does not broadcast it: sets *factor (1/c for a Div) and returns true.
bool ScaleOf(const Graph& graph, const Node& scaler, const std::string& value, double* factor) {
  if (scaler.outputs.size() != 1 || scaler.inputs.size() != 2) return false;
  const bool div = IsOnnxOp(scaler, "Div");
  if (!div && !IsOnnxOp(scaler, "Mul")) return false;
  const std::string c = OtherInput(scaler, value);
  if (c.empty() || (div && scaler.inputs[0] != value)) return false;
  const Tensor* t = ConstantInitializer(graph, c);
  double v = 0;
  if (t == nullptr || t->type() != ElemType::kFloat || !ScalarAsDouble(*t, &v)) return false;
  if (t->rank() > 0 && TensorRank(graph, value) < static_cast<int>(t->rank())) return false;
  if (div && v == 0) return false;
  *factor = div ? 1.0 / v : v;
  return true;
}

bool TryFuse(Graph& graph, const GraphIndex& idx, size_t i) {
  const Node& mm = graph.nodes[i];
  if (!IsScalableProduct(graph, mm)) return false;
  double alpha = mm.op_type == "FusedMatMul" ? mm.AttrFloat("alpha", 1.f) : 1.0;
  Node fused = mm;
  std::vector<int> pattern = {static_cast<int>(i)};
  bool any = false;

  // A scaled input: Mul/Div(A, c) read by this product alone.
  for (int k = 0; k < 2; ++k) {
    const std::string& in = mm.inputs[k];
    const int p = idx.Producer(in);
    if (p < 0 || !idx.HasSingleUse(in)) continue;
    const Node& s = graph.nodes[p];
    for (const std::string& x : s.inputs) {
      double f = 0;
      if (ScaleOf(graph, s, x, &f)) {
        alpha *= f;
        fused.inputs[k] = x;
        pattern.push_back(p);
        any = true;
        break;
      }
    }
  }
  // A scaled output: the product read by one Mul/Div alone.
  const std::string& y = mm.outputs[0];
  if (idx.HasSingleUse(y)) {
    const int c = idx.Consumers(y)[0].first;
    double f = 0;
    if (ScaleOf(graph, graph.nodes[c], y, &f)) {
      alpha *= f;
      fused.outputs[0] = graph.nodes[c].outputs[0];
      pattern.push_back(c);
      any = true;
    }
  }
  if (!any) return false;
  if (mm.op_type == "MatMul") MakeContrib(&fused, mm.name.empty() ? fused.outputs[0] : mm.name, "FusedMatMul");
  fused.attrs["alpha"] = FloatAttr(static_cast<float>(alpha));
  ReplacePattern(graph, pattern, std::move(fused));
  return true;
}

}  // namespace

Status FuseMatMulScale(Graph& graph, const OptimizerContext&, bool* changed) {
  RewriteNodes(graph, changed, TryFuse);
  return Status::OK();
}

}  // namespace optimizer
}  // namespace onyx

// qdq_batch_norm_fusion (layout level: onnxruntime cannot run what it
// writes, so models saved at 'extended' stay its to run): the float island a
// quantizer leaves around a BatchNormalization it did not fold into a conv,
//   DequantizeLinear -> BatchNormalization -> [Relu] -> [MaxPool] -> QuantizeLinear,
// becomes one com.onyxruntime QLinearBatchNormalization (version 1) [followed
// by the MaxPool on its 8-bit output: quantizing is monotone, so the maximum
// of the quantized values is the quantized maximum, as onnxruntime's QDQ
// transformers also use; a NaN, which MaxPool skips and quantizing makes the
// zero point, is the exception], which
// takes the same steps per element in one pass over 8-bit data, bit for bit
// (providers/cpu/quantization/qlinear_batch_norm.cc), instead of three or four
// passes over float tensors four times the size. onnxruntime's static
// quantizer writes this group for models whose BatchNormalization was not
// fused before quantization (QOperator ResNets exported in training mode).
//
// Only with 8-bit codes in and out, per-tensor float scales and zero points
// that are constant initializers (Q's zero point present: it gives the output
// type), an inference-mode BatchNormalization (spatial, one output) whose
// four parameters are constant float vectors of one length, and each
// intermediate value read by the next node only.
#include <algorithm>

#include "core/optimizer/transformer_util.h"

namespace onyx {
namespace optimizer {
namespace {

// Input `scale` (and `zp`, which may be absent when `zp_required` is false)
// are constant one-element initializers: a float scale, an 8-bit zero point.
bool PerTensorParams(const Graph& graph, const Node& n, bool zp_required) {
  if (n.inputs.size() < 2 || n.outputs.size() != 1) return false;
  const Tensor* s = ConstantInitializer(graph, n.inputs[1]);
  if (s == nullptr || s->type() != ElemType::kFloat || s->size() != 1 || s->rank() > 1) return false;
  const bool has_zp = n.inputs.size() > 2 && !n.inputs[2].empty();
  if (!has_zp) return !zp_required;
  const Tensor* z = ConstantInitializer(graph, n.inputs[2]);
  return z != nullptr && Is8Bit(z->type()) && z->size() == 1 && z->rank() <= 1;
}

bool InferenceBatchNorm(const Graph& graph, const Node& bn) {
  if (!IsOnnxOp(bn, "BatchNormalization") || bn.inputs.size() != 5 || bn.outputs.empty()) return false;
  for (size_t i = 1; i < bn.outputs.size(); ++i)
    if (!bn.outputs[i].empty()) return false;
  if (bn.AttrInt("training_mode", 0) != 0 || bn.AttrInt("spatial", 1) != 1 || bn.AttrInt("is_test", 1) != 1)
    return false;
  int64_t c = -1;
  for (size_t i = 1; i < 5; ++i) {
    const Tensor* t = ConstantInitializer(graph, bn.inputs[i]);
    if (t == nullptr || t->type() != ElemType::kFloat || t->rank() != 1) return false;
    if (c >= 0 && t->dims()[0] != c) return false;
    c = t->dims()[0];
  }
  return true;
}

// Node `i` is the QuantizeLinear that ends a group: fuses it.
bool TryFuse(Graph& graph, const GraphIndex& idx, size_t i) {
  const Node& q = graph.nodes[i];
  if (!IsOnnxOp(q, "QuantizeLinear") || !PerTensorParams(graph, q, true) || q.Attr("output_dtype")) return false;
  if (!Is8Bit(TensorElemType(graph, q.outputs[0]))) return false;
  int at = idx.Producer(q.inputs[0]);
  if (at < 0 || !idx.HasSingleUse(q.inputs[0])) return false;
  std::vector<int> pattern;
  // A MaxPool just before the QuantizeLinear trades places with it.
  const Node* pool = nullptr;
  if (IsOnnxOp(graph.nodes[at], "MaxPool") && graph.nodes[at].since_version >= 12 &&
      graph.nodes[at].outputs.size() == 1 && graph.nodes[at].inputs.size() == 1) {
    pool = &graph.nodes[at];
    pattern.push_back(at);
    at = idx.Producer(pool->inputs[0]);
    if (at < 0 || !idx.HasSingleUse(pool->inputs[0])) return false;
  }
  bool relu = false;
  if (IsOnnxOp(graph.nodes[at], "Relu")) {
    relu = true;
    pattern.push_back(at);
    const std::string& in = graph.nodes[at].inputs[0];
    at = idx.Producer(in);
    if (at < 0 || !idx.HasSingleUse(in)) return false;
  }
  const Node& bn = graph.nodes[at];
  if (!InferenceBatchNorm(graph, bn)) return false;
  pattern.push_back(at);
  const int d = idx.Producer(bn.inputs[0]);
  if (d < 0 || !idx.HasSingleUse(bn.inputs[0])) return false;
  const Node& dq = graph.nodes[d];
  if (!IsOnnxOp(dq, "DequantizeLinear") || !PerTensorParams(graph, dq, false)) return false;
  if (!Is8Bit(TensorElemType(graph, dq.inputs[0])) || TensorElemType(graph, dq.outputs[0]) != ElemType::kFloat)
    return false;
  if (TensorRank(graph, dq.inputs[0]) < 2) return false;
  pattern.push_back(d);
  pattern.push_back(static_cast<int>(i));

  Node fused;
  fused.inputs = {dq.inputs[0], dq.inputs[1], dq.inputs.size() > 2 ? dq.inputs[2] : std::string(),
                  bn.inputs[1], bn.inputs[2], bn.inputs[3], bn.inputs[4], q.inputs[1], q.inputs[2]};
  Node pooled;
  if (pool != nullptr) {
    pooled = *pool;
    pooled.outputs = {q.outputs[0]};
    pooled.inputs = {UniqueValueName(graph, idx, q.outputs[0] + "_unpooled")};
    TypeInfo t = TypeInfo::Tensor(TensorElemType(graph, q.outputs[0]));
    TypeInfo before;
    if (TensorType(graph, pool->inputs[0], &before) && before.has_shape) t = TypeInfo::Tensor(t.elem, before.dims);
    graph.value_types[pooled.inputs[0]] = t;
  }
  fused.outputs = {pool != nullptr ? pooled.inputs[0] : q.outputs[0]};
  fused.name = bn.name + "/QLinearBatchNormalization";
  fused.op_type = "QLinearBatchNormalization";
  fused.domain = kOnyxDomain;
  fused.since_version = 1;
  fused.attrs["epsilon"] = FloatAttr(bn.AttrFloat("epsilon", 1e-5f));
  if (relu) fused.attrs["activation"] = StringAttr("Relu");
  TypeInfo out_type;
  const bool typed = TensorType(graph, q.outputs[0], &out_type);
  ReplacePattern(graph, pattern, std::move(fused));
  if (pool != nullptr) {
    if (typed) graph.value_types[pooled.outputs[0]] = out_type;  // ReplacePattern dropped it with the Q
    // Right after the fused node, which took the QuantizeLinear's place.
    const auto it = std::find_if(graph.nodes.begin(), graph.nodes.end(),
                                 [&](const Node& n) { return n.outputs == std::vector<std::string>{pooled.inputs[0]}; });
    graph.nodes.insert(it + 1, std::move(pooled));
  }
  return true;
}

}  // namespace

Status FuseQdqBatchNorm(Graph& graph, const OptimizerContext&, bool* changed) {
  // A fusion removes the nodes before its QuantizeLinear, so the nodes after
  // it shift past the loop's position: passes until one finds nothing (this
  // level runs each transformer once, not to a fixpoint).
  for (bool again = true; again;) {
    again = false;
    RewriteNodes(graph, &again, TryFuse);
    *changed = *changed || again;
  }
  return Status::OK();
}

}  // namespace optimizer
}  // namespace onyx

// qdq_fusion (extended): runs the operators of a QDQ-format model (what
// onnxruntime.quantization writes with QuantFormat.QDQ) on integers, as
// onnxruntime's QDQ selector/action transformer does:
//   DQ(x), DQ(w) [, DQ(bias int32)] -> Conv -> Q      QLinearConv
//   DQ(a), DQ(b) -> MatMul -> Q                       QLinearMatMul
//   DQ(a), DQ(b) [, DQ(bias int32)] -> Gemm -> Q      com.microsoft QGemm
//   DQ(a), DQ(b) -> Add | Mul -> Q                    com.microsoft QLinearAdd | QLinearMul
//   ... -> Relu | Clip -> Q: the Relu/Clip goes into the group when the Q's
//     range lies inside its bounds (a Relu before a Q whose zero point is
//     the type's lowest value), as onnxruntime folds it; such a Relu/Clip
//     outside a group (BatchNormalization -> Relu -> Q) is dropped alone;
//   DQ(x) -> Softmax | Sigmoid | LeakyRelu | AveragePool | GlobalAveragePool -> Q
//                                                     com.microsoft QLinear<op>
//   DQ(x) -> Reshape | Transpose | Squeeze | Unsqueeze | Flatten | MaxPool |
//            Gather | GatherElements | Slice | Expand | Tile | DepthToSpace |
//            SpaceToDepth -> Q
//     with the Q's scale and zero point equal to the DQ's: the op moves the
//     quantized values and both DQ and Q go (they cancel exactly). A BERT's
//     embedding Gather then reads its int8 table, not a float copy of it.
// It runs before constant folding (optimizer.cc), which would otherwise turn
// a quantized weight's DequantizeLinear into a float initializer first; the
// DequantizeLinears left unfused (a DQ shared by several readers, as
// onnxruntime leaves them too) fold as before, into float weights.
//   DQ(table) -> Gather (no equal Q behind)           Gather -> DQ (same floats)
// The fused kernels requantize in float as onnxruntime's do
// (int8gemm::RequantizeFloat), so a QDQ model gives onnxruntime's numbers.
//
// Only where the rewrite keeps the model's meaning, under onnxruntime's rules
// (qdq_selectors.cc):
//   - each DQ's output is read by the fused node alone (not a graph output),
//     the fused node's output by the Q alone; except that a Conv's or
//     MatMul's activation DQ may have other readers (it then stays), where
//     onnxruntime keeps the group in float;
//   - scales and zero points are constant initializers, present, 8-bit
//     integer zero points; per tensor, except Conv's weight (per output
//     channel, axis 0) and MatMul's B (per column of a 2-D B, axis 1);
//     no blocked (block_size) quantization;
//   - data types: the Q's output type equals the first input's; int8
//     activations need int8 weights (Conv, MatMul); Add/Mul/unary ops take
//     one type throughout;
//   - a Conv bias DQ is int32 with zero point 0 and scale x_scale * w_scale
//     (float, per channel), so its integers are QLinearConv's bias as they are.
#include <algorithm>
#include <cstring>
#include <limits>

#include "core/optimizer/transformer_util.h"

namespace onyx {
namespace optimizer {
namespace {

// One DequantizeLinear (or QuantizeLinear) with constant parameters.
struct QdqNode {
  int index = -1;
  const Tensor* scale = nullptr;
  const Tensor* zp = nullptr;
  ElemType qtype = ElemType::kUndefined;  // the quantized side's type
  bool per_tensor = true;
  int64_t axis = 1;  // as written (may be negative)
  int clip = -1;     // a Q's redundant Relu/Clip in front of it, or -1
};

// Scale and zero point of a Q or DQ node `n`: constant, float scale, zero
// point present and of the same shape, not blocked.
bool ReadParams(const Graph& graph, const Node& n, QdqNode* out) {
  if (n.inputs.size() != 3 || n.inputs[1].empty() || n.inputs[2].empty() || n.outputs.size() != 1) return false;
  if (n.AttrInt("block_size", 0) != 0) return false;
  out->scale = ConstantInitializer(graph, n.inputs[1]);
  out->zp = ConstantInitializer(graph, n.inputs[2]);
  if (out->scale == nullptr || out->zp == nullptr) return false;
  if (out->scale->type() != ElemType::kFloat || !Is8Bit(out->zp->type())) return false;
  if (out->scale->dims() != out->zp->dims() || out->scale->rank() > 1) return false;
  out->qtype = out->zp->type();
  out->per_tensor = out->scale->size() == 1;
  out->axis = n.AttrInt("axis", 1);
  return out->scale->size() >= 1;
}

// The DequantizeLinear making `value`, read only by one explicit input
// unless `shared` (then it stays for its other readers).
bool DqFeeding(const Graph& graph, const GraphIndex& idx, const std::string& value, QdqNode* out,
               bool shared = false) {
  if (value.empty()) return false;
  const int p = idx.Producer(value);
  if (p < 0) return false;
  const Node& n = graph.nodes[p];
  if (!n.domain.empty() || n.op_type != "DequantizeLinear" || !(shared || idx.HasSingleUse(value))) return false;
  if (!ReadParams(graph, n, out)) return false;
  out->index = p;
  return true;
}

// Constant scalar float input `i` of `n`, or `dflt` when absent.
bool ScalarInput(const Graph& graph, const Node& n, size_t i, float dflt, float* out) {
  *out = dflt;
  if (i >= n.inputs.size() || n.inputs[i].empty()) return true;
  const Tensor* t = ConstantInitializer(graph, n.inputs[i]);
  if (t == nullptr || t->type() != ElemType::kFloat || t->size() != 1) return false;
  *out = t->data<float>()[0];
  return true;
}

// Whether Relu or Clip node `c` changes nothing that QuantizeLinear `q`
// (per tensor) keeps: its bounds lie outside the range q represents,
// [(min - zp) * scale, (max - zp) * scale], where q saturates anyway.
bool ClipRedundant(const Graph& graph, const Node& c, const QdqNode& q) {
  const float s = q.scale->data<float>()[0];
  int32_t zp = 0, qmin = 0, qmax = 0;
  if (q.qtype == ElemType::kInt8) {
    zp = q.zp->data<int8_t>()[0];
    qmin = -128;
    qmax = 127;
  } else {
    zp = q.zp->data<uint8_t>()[0];
    qmax = 255;
  }
  const float lo = static_cast<float>(qmin - zp) * s, hi = static_cast<float>(qmax - zp) * s;
  if (!(s > 0)) return false;
  if (c.op_type == "Relu") return lo >= 0.f;
  float mn = -std::numeric_limits<float>::infinity(), mx = std::numeric_limits<float>::infinity();
  if (c.since_version < 11) {
    mn = c.AttrFloat("min", mn);
    mx = c.AttrFloat("max", mx);
  } else if (!ScalarInput(graph, c, 1, mn, &mn) || !ScalarInput(graph, c, 2, mx, &mx)) {
    return false;
  }
  return mn <= lo && mx >= hi;
}

// The QuantizeLinear that alone reads `value`, per tensor; with `clip`,
// also through a Relu/Clip that alone reads `value` and that the Q makes
// redundant (out->clip names it), as onnxruntime's selectors allow.
bool QReading(const Graph& graph, const GraphIndex& idx, const std::string& value, QdqNode* out,
              bool clip = true) {
  if (!idx.HasSingleUse(value)) return false;
  const auto& uses = idx.Consumers(value);
  if (uses.size() != 1 || uses[0].second != 0) return false;
  const Node& c = graph.nodes[uses[0].first];
  if (clip && c.domain.empty() && (c.op_type == "Relu" || c.op_type == "Clip") && c.outputs.size() == 1 &&
      !idx.IsGraphOutput(value)) {
    QdqNode inner;
    if (!QReading(graph, idx, c.outputs[0], &inner, false) || !ClipRedundant(graph, c, inner)) return false;
    *out = inner;
    out->clip = uses[0].first;
    return true;
  }
  const Node& n = c;
  if (!n.domain.empty() || n.op_type != "QuantizeLinear" || !ReadParams(graph, n, out) || !out->per_tensor) return false;
  // opset 21's output_dtype, when given, must be the zero point's type (the
  // schema's rule): anything else is left to the kernel to refuse.
  const Attribute* od = n.Attr("output_dtype");
  if (od != nullptr && od->i != 0 && od->i != static_cast<int64_t>(out->qtype)) return false;
  out->index = uses[0].first;
  return true;
}

bool SameScalar(const Tensor& a, const Tensor& b) {
  return a.type() == b.type() && a.size() == 1 && b.size() == 1 &&
         std::memcmp(a.raw(), b.raw(), ElemSize(a.type())) == 0;
}

// Per-channel parameters along `want_axis` of a tensor of rank `rank` with
// `count` channels.
bool PerChannelOk(const QdqNode& q, int64_t rank, int64_t want_axis, int64_t count) {
  if (q.per_tensor) return true;
  const int64_t axis = q.axis < 0 ? q.axis + rank : q.axis;
  return rank > 0 && axis == want_axis && q.scale->size() == count;
}

// Rank and dims of `value` when known.
bool KnownDims(const Graph& graph, const std::string& value, std::vector<int64_t>* dims) {
  if (const Tensor* t = ConstantInitializer(graph, value)) {
    *dims = t->dims();
    return true;
  }
  TypeInfo ti;
  if (!graph.LocalType(value, &ti) || ti.kind != TypeInfo::Kind::kTensor || !ti.has_shape) return false;
  dims->clear();
  for (const Dim& d : ti.dims) {
    if (!d.known()) return false;
    dims->push_back(d.value);
  }
  return true;
}

// Replaces the group: the fused node takes the Q's place in the order (all
// its inputs are computed by then); the target, its DQs and the Q go.
void Replace(Graph& graph, std::vector<int> remove, const QdqNode& q, Node fused) {
  if (q.clip >= 0) remove.push_back(q.clip);
  const Node& qn = graph.nodes[q.index];
  fused.outputs = {qn.outputs[0]};
  if (fused.name.empty()) fused.name = qn.name;
  const int qpos = q.index;
  graph.nodes[qpos] = std::move(fused);
  std::sort(remove.begin(), remove.end());
  for (auto it = remove.rbegin(); it != remove.rend(); ++it) {
    graph.value_types.erase(graph.nodes[*it].outputs[0]);
    graph.nodes.erase(graph.nodes.begin() + *it);
  }
}

Node NewNode(const Node& target, const char* op, const char* domain) {
  Node n;
  n.name = target.name;
  n.op_type = op;
  n.domain = domain;
  n.since_version = domain[0] ? 1 : 10;
  return n;
}

void PushParams(Node* n, const Node& qdq) {
  n->inputs.push_back(qdq.inputs[1]);
  n->inputs.push_back(qdq.inputs[2]);
}

// Conv, MatMul and Gemm: the integer products. A Gemm fuses (into QGemm)
// with alpha 1 and, with a bias, beta 1 and a 1-D bias: then its int32 bias
// is in units of a_scale * b_scale as QGemm adds it.
bool TryProduct(Graph& graph, const GraphIndex& idx, size_t i) {
  const Node& t = graph.nodes[i];
  const bool conv = t.op_type == "Conv", gemm = t.op_type == "Gemm";
  if (t.outputs.size() != 1 || t.inputs.size() < 2 || (conv || gemm ? t.inputs.size() > 3 : t.inputs.size() != 2))
    return false;
  const bool trans_b = gemm && t.AttrInt("transB", 0) != 0;
  if (gemm && (t.AttrFloat("alpha", 1.f) != 1.f ||
               (t.inputs.size() == 3 && !t.inputs[2].empty() && t.AttrFloat("beta", 1.f) != 1.f)))
    return false;
  QdqNode dx, dw, db, q;
  // The activation's DQ may have other readers (onnxruntime then leaves the
  // group in float, dequantizing the weight on every run; the integer kernel
  // reads the same codes): it stays for them.
  if (!DqFeeding(graph, idx, t.inputs[0], &dx, /*shared=*/true) || !DqFeeding(graph, idx, t.inputs[1], &dw))
    return false;
  if (dx.index == dw.index || !QReading(graph, idx, t.outputs[0], &q)) return false;
  if (!dx.per_tensor || q.qtype != dx.qtype) return false;
  if (dx.qtype == ElemType::kInt8 && dw.qtype != ElemType::kInt8) return false;
  std::vector<int64_t> wd;
  if (!dw.per_tensor) {
    if (!KnownDims(graph, graph.nodes[dw.index].inputs[0], &wd)) return false;
    const int64_t rank = static_cast<int64_t>(wd.size());
    if (conv ? !PerChannelOk(dw, rank, 0, wd.empty() ? 0 : wd[0])
             : (rank != 2 || !PerChannelOk(dw, rank, trans_b ? 0 : 1, wd[trans_b ? 0 : 1])))
      return false;
  }
  const bool has_bias = (conv || gemm) && t.inputs.size() == 3 && !t.inputs[2].empty();
  if (has_bias) {
    // The bias DQ reads int32, which ReadParams refuses as a zero point type:
    // its parameters are checked here.
    const int p = idx.Producer(t.inputs[2]);
    if (p < 0 || !idx.HasSingleUse(t.inputs[2])) return false;
    const Node& bn = graph.nodes[p];
    if (!bn.domain.empty() || bn.op_type != "DequantizeLinear" || bn.inputs.size() < 2 || bn.AttrInt("block_size", 0))
      return false;
    const Tensor* b = ConstantInitializer(graph, bn.inputs[0]);
    const Tensor* bs = ConstantInitializer(graph, bn.inputs[1]);
    const Tensor* bz = bn.inputs.size() > 2 && !bn.inputs[2].empty() ? ConstantInitializer(graph, bn.inputs[2]) : nullptr;
    if (b == nullptr || bs == nullptr || b->type() != ElemType::kInt32 || b->rank() != 1 ||
        bs->type() != ElemType::kFloat || (bs->size() != 1 && bs->size() != b->size()))
      return false;
    if (bn.inputs.size() > 2 && !bn.inputs[2].empty()) {
      if (bz == nullptr || bz->type() != ElemType::kInt32) return false;
      for (int64_t k = 0; k < bz->size(); ++k)
        if (bz->data<int32_t>()[k] != 0) return false;
    }
    const float xs = dx.scale->data<float>()[0];
    for (int64_t m = 0; m < b->size(); ++m) {
      const float ws = dw.scale->data<float>()[dw.per_tensor ? 0 : m];
      if (bs->data<float>()[bs->size() == 1 ? 0 : m] != xs * ws) return false;
    }
    db.index = p;
  }
  const Node& xn = graph.nodes[dx.index];
  const Node& wn = graph.nodes[dw.index];
  Node f = NewNode(t, conv ? "QLinearConv" : (gemm ? "QGemm" : "QLinearMatMul"), gemm ? "com.microsoft" : "");
  f.attrs = conv ? t.attrs : std::map<std::string, Attribute>{};
  if (gemm)
    for (const char* a : {"transA", "transB"})
      if (const Attribute* at = t.Attr(a)) f.attrs[a] = *at;
  f.inputs = {xn.inputs[0]};
  PushParams(&f, xn);
  f.inputs.push_back(wn.inputs[0]);
  PushParams(&f, wn);
  // QGemm takes its bias before y's parameters, QLinearConv after.
  if (gemm) f.inputs.push_back(has_bias ? graph.nodes[db.index].inputs[0] : std::string());
  PushParams(&f, graph.nodes[q.index]);
  if (conv && has_bias) f.inputs.push_back(graph.nodes[db.index].inputs[0]);
  std::vector<int> remove = {static_cast<int>(i), dw.index};
  if (idx.HasSingleUse(t.inputs[0])) remove.push_back(dx.index);
  if (has_bias) remove.push_back(db.index);
  Replace(graph, remove, q, std::move(f));
  return true;
}

bool TryBinary(Graph& graph, const GraphIndex& idx, size_t i) {
  const Node& t = graph.nodes[i];
  if (t.inputs.size() != 2 || t.outputs.size() != 1) return false;
  QdqNode da, db, q;
  if (!DqFeeding(graph, idx, t.inputs[0], &da) || !DqFeeding(graph, idx, t.inputs[1], &db)) return false;
  if (da.index == db.index || !QReading(graph, idx, t.outputs[0], &q)) return false;
  if (!da.per_tensor || !db.per_tensor || da.qtype != db.qtype || da.qtype != q.qtype) return false;
  const Node& an = graph.nodes[da.index];
  const Node& bn = graph.nodes[db.index];
  Node f = NewNode(t, t.op_type == "Add" ? "QLinearAdd" : "QLinearMul", "com.microsoft");
  f.inputs = {an.inputs[0]};
  PushParams(&f, an);
  f.inputs.push_back(bn.inputs[0]);
  PushParams(&f, bn);
  PushParams(&f, graph.nodes[q.index]);
  Replace(graph, {static_cast<int>(i), da.index, db.index}, q, std::move(f));
  return true;
}

bool TryUnary(Graph& graph, const GraphIndex& idx, size_t i) {
  const Node& t = graph.nodes[i];
  if (t.inputs.size() != 1 || t.outputs.size() != 1) return false;
  QdqNode dx, q;
  if (!DqFeeding(graph, idx, t.inputs[0], &dx) || !QReading(graph, idx, t.outputs[0], &q)) return false;
  if (!dx.per_tensor || dx.qtype != q.qtype) return false;
  const std::string op = "QLinear" + t.op_type;
  Node f = NewNode(t, op.c_str(), "com.microsoft");
  f.attrs = t.attrs;
  if (t.op_type == "Softmax") {
    // QLinearSoftmax names the Softmax opset whose axis rule applies.
    Attribute a;
    a.type = Attribute::Type::kInt;
    a.i = t.since_version;
    f.attrs["opset"] = a;
    if (!t.Attr("axis")) {
      a.i = t.since_version >= 13 ? -1 : 1;
      f.attrs["axis"] = a;
    }
  }
  const Node& xn = graph.nodes[dx.index];
  f.inputs = {xn.inputs[0]};
  PushParams(&f, xn);
  PushParams(&f, graph.nodes[q.index]);
  Replace(graph, {static_cast<int>(i), dx.index}, q, std::move(f));
  return true;
}

// DQ -> data movement -> Q with equal parameters: the op runs on the
// integers. Its other inputs (Reshape's shape, ...) stay as they are.
bool TryDrop(Graph& graph, const GraphIndex& idx, size_t i) {
  const Node& t = graph.nodes[i];
  if (t.inputs.empty() || t.outputs.size() != 1) return false;
  if (t.op_type == "MaxPool" && (t.since_version < 12 || t.AttrInt("storage_order", 0) != 0)) return false;
  QdqNode dx, q;
  if (!DqFeeding(graph, idx, t.inputs[0], &dx) || !QReading(graph, idx, t.outputs[0], &q, /*clip=*/false))
    return false;
  if (!dx.per_tensor || dx.qtype != q.qtype || !SameScalar(*dx.scale, *q.scale) || !SameScalar(*dx.zp, *q.zp))
    return false;
  if (!(dx.scale->data<float>()[0] > 0)) return false;
  Node f = t;
  f.inputs[0] = graph.nodes[dx.index].inputs[0];
  Replace(graph, {static_cast<int>(i), dx.index}, q, std::move(f));
  return true;
}

// DQ(table) -> Gather with no Q of equal parameters behind: the Gather
// picks the codes and a DequantizeLinear of the same parameters follows it,
// the same floats (per-tensor dequantization commutes with picking), and a
// quantized embedding table is no longer dequantized whole on every run.
bool TryGatherBeforeDq(Graph& graph, const GraphIndex& idx, size_t i) {
  const Node& t = graph.nodes[i];
  if (t.inputs.size() != 2 || t.outputs.size() != 1) return false;
  QdqNode dx;
  if (!DqFeeding(graph, idx, t.inputs[0], &dx) || !dx.per_tensor) return false;
  const Node dq = graph.nodes[dx.index];
  const std::string codes = UniqueValueName(graph, idx, t.outputs[0] + "_quantized");
  Node g = t;
  g.inputs[0] = dq.inputs[0];
  g.outputs[0] = codes;
  Node d = dq;
  d.name = dq.name.empty() ? "" : dq.name + "_after_" + t.op_type;
  d.inputs[0] = codes;
  d.outputs[0] = t.outputs[0];
  graph.value_types.erase(dq.outputs[0]);
  graph.nodes[i] = std::move(g);
  graph.nodes.insert(graph.nodes.begin() + static_cast<std::ptrdiff_t>(i) + 1, std::move(d));
  graph.nodes.erase(graph.nodes.begin() + dx.index);
  return true;
}

// A Relu/Clip read only by a QuantizeLinear that makes it redundant (see
// ClipRedundant: a Relu before a Q whose zero point is its type's lowest
// value) outside any group: it becomes an Identity (identity_elimination
// drops it), as onnxruntime's ReluQuantFusion removes it. Exact: what it
// would clip, the Q saturates to the same value.
bool TryDropClip(Graph& graph, const GraphIndex& idx, size_t i) {
  Node& c = graph.nodes[i];
  if (c.outputs.size() != 1 || c.inputs.empty() || idx.IsGraphOutput(c.outputs[0])) return false;
  QdqNode q;
  if (!QReading(graph, idx, c.outputs[0], &q, false) || !ClipRedundant(graph, c, q)) return false;
  MakeIdentity(&c);
  return true;
}

bool TryFuse(Graph& graph, const GraphIndex& idx, size_t i) {
  const Node& t = graph.nodes[i];
  if (!t.domain.empty()) return false;
  const std::string& op = t.op_type;
  if (op == "Relu" || op == "Clip") return TryDropClip(graph, idx, i);
  if (op == "Conv" || op == "MatMul" || op == "Gemm") return TryProduct(graph, idx, i);
  if (op == "Add" || op == "Mul") return TryBinary(graph, idx, i);
  if (op == "Softmax" || op == "Sigmoid" || op == "LeakyRelu" || op == "AveragePool" || op == "GlobalAveragePool")
    return TryUnary(graph, idx, i);
  if (op == "Reshape" || op == "Transpose" || op == "Squeeze" || op == "Unsqueeze" || op == "Flatten" ||
      op == "MaxPool" || op == "Gather" || op == "GatherElements" || op == "Slice" || op == "Expand" ||
      op == "Tile" || op == "DepthToSpace" || op == "SpaceToDepth") {
    if (TryDrop(graph, idx, i)) return true;
    return (op == "Gather" || op == "GatherElements") && TryGatherBeforeDq(graph, idx, i);
  }
  return false;
}

}  // namespace

Status FuseQdq(Graph& graph, const OptimizerContext&, bool* changed) {
  RewriteNodes(graph, changed, TryFuse);
  return Status::OK();
}

}  // namespace optimizer
}  // namespace onyx

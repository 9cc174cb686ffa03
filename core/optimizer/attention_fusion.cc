// attention_fusion (extended): multi-head self-attention as BERT-style
// exporters write it becomes one com.microsoft Attention (version 1), whose
// kernel (providers/cpu/nn/attention_contrib.cc) runs one packed QKV GEMM and
// the heads without materializing the transposed Q, K, V or the scores of all
// heads at once (measured: BERT-base layer, seq 128, 2 threads: 1.7x faster
// at batch 1, 1.1x at batch 8).
//
//   q = Transpose(Reshape(Add(MatMul(X, Wq), bq), [B, S, N, H]), [0, 2, 1, 3])
//   k = Transpose(Reshape(Add(MatMul(X, Wk), bk), [B, S, N, H]), [0, 2, 3, 1])
//   v = Transpose(Reshape(Add(MatMul(X, Wv), bv), [B, S, N, H]), [0, 2, 1, 3])
//   s = MatMul(q, k) / c   (or * c, or unscaled; or FusedMatMul(q, k) with
//                           alpha 1/c, matmul_scale_fusion's)
//   s = s + (1 - Cast(Unsqueeze(mask, [1, 2]))) * m        (optional)
//   Y = Reshape(Transpose(MatMul(Softmax(s, -1), v), [0, 2, 1, 3]), [B, S, N*H])
// becomes Attention(X, [Wq|Wk|Wv], [bq|bk|bv], Cast(mask, int32)) with
// num_heads N, scale 1/c (c), mask_filter_value m. (A K transposed in two
// steps, [0, 2, 1, 3] then [0, 1, 3, 2], is merged by transpose_optimizer first.)
// Where the three projections are something else (quantize_dynamic's
// MatMulIntegerToFloat after matmul_integer_to_float_fusion, or weights that
// are not constant), the part after them becomes
// MultiHeadAttention(Q, K, V, , Cast(mask, int32)) of the projected values
// Q, K, V (each float [B, S, D] of the same symbolic shape), the same
// arithmetic per head: the transposed copies of Q, K, V, the scores of all
// heads and the transposed context are never written.
//
// Only float, X 3-D with a known hidden size D = N*H, constant 2-D [D, D]
// weights and [D] biases (for Attention), every Reshape provably splitting or merging the
// last axis alone (SymbolicShapes), every value inside the pattern read by it
// alone and not a graph output; the mask an integer or bool [B, keys] tensor
// turned into the additive mask exactly that way (so its values mean keep
// (1) / drop (0), as Attention's raw mask does), with B provably X's batch.
// The nodes that computed the Reshape targets and the additive mask go with
// the last reader they had.
#include <cstring>

#include "core/framework/allocator.h"
#include "core/optimizer/symbolic_shapes.h"
#include "core/optimizer/transformer_util.h"

namespace onyx {
namespace optimizer {
namespace {

// The producer of `value` when it is the default-domain `op` and `value` has
// no other reader; -1 otherwise.
int Sole(const Graph& graph, const GraphIndex& idx, const std::string& value, const char* op) {
  return SoleUseProducer(graph, idx, value, op) != nullptr ? idx.Producer(value) : -1;
}

bool HasPerm(const Node& t, std::initializer_list<int64_t> perm) {
  const Attribute* a = t.Attr("perm");
  return a != nullptr && a->ints == std::vector<int64_t>(perm);
}

// One projection: Transpose(Reshape(in)) ending in `value`, where `in` is
// Add(MatMul(X, W), b) (then x, weight and bias are set) or anything else
// (a projection the fused node leaves outside, e.g. MatMulIntegerToFloat).
struct Projection {
  std::vector<int> nodes;   // the Transpose and Reshape
  std::vector<int> linear;  // the Add and MatMul, when matched
  std::string in, x, weight, bias, heads;  // heads: the Reshape's output
};

bool MatchProjection(const Graph& graph, const GraphIndex& idx, const std::string& value,
                     std::initializer_list<int64_t> perm, Projection* p) {
  const int t = Sole(graph, idx, value, "Transpose");
  if (t < 0 || !HasPerm(graph.nodes[t], perm)) return false;
  const int r = Sole(graph, idx, graph.nodes[t].inputs[0], "Reshape");
  if (r < 0) return false;
  p->nodes = {t, r};
  p->in = graph.nodes[r].inputs[0];
  p->heads = graph.nodes[r].outputs[0];
  const int add = Sole(graph, idx, p->in, "Add");
  if (add < 0) return true;
  for (int k = 0; k < 2; ++k) {
    const std::string& lin = graph.nodes[add].inputs[k];
    const int mm = Sole(graph, idx, lin, "MatMul");
    if (mm < 0 || graph.nodes[add].inputs[1 - k] == lin) continue;
    p->linear = {add, mm};
    p->x = graph.nodes[mm].inputs[0];
    p->weight = graph.nodes[mm].inputs[1];
    p->bias = graph.nodes[add].inputs[1 - k];
    return true;
  }
  return true;
}

// The additive mask (1 - Cast(Unsqueeze(mask, [1, 2]))) * m: sets the raw
// mask and m. Its nodes are shared by all layers and stay until unused.
bool MatchMask(const Graph& graph, const GraphIndex& idx, const std::string& ext, std::string* mask, float* filter) {
  const int mul = idx.Producer(ext);
  if (mul < 0 || !IsOnnxOp(graph.nodes[mul], "Mul")) return false;
  for (int k = 0; k < 2; ++k) {
    double m = 0;
    if (!ConstantScalar(graph, graph.nodes[mul].inputs[1 - k], &m) || !(m < 0)) continue;
    const int sub = idx.Producer(graph.nodes[mul].inputs[k]);
    if (sub < 0 || !IsOnnxOp(graph.nodes[sub], "Sub") || graph.nodes[sub].inputs.size() != 2 ||
        !ConstantScalarNear(graph, graph.nodes[sub].inputs[0], 1.0, 0.0))
      return false;
    const int cast = idx.Producer(graph.nodes[sub].inputs[1]);
    if (cast < 0 || !IsOnnxOp(graph.nodes[cast], "Cast") ||
        graph.nodes[cast].AttrInt("to", 0) != static_cast<int64_t>(ElemType::kFloat))
      return false;
    const int unsq = idx.Producer(graph.nodes[cast].inputs[0]);
    if (unsq < 0 || !IsOnnxOp(graph.nodes[unsq], "Unsqueeze")) return false;
    const Node& u = graph.nodes[unsq];
    std::vector<int64_t> axes;
    if (u.since_version < 13) {
      axes = u.AttrInts("axes");
    } else {
      const Tensor* a = u.inputs.size() > 1 ? ConstantInitializer(graph, u.inputs[1]) : nullptr;
      if (a == nullptr || a->type() != ElemType::kInt64) return false;
      axes.assign(a->data<int64_t>(), a->data<int64_t>() + a->size());
    }
    if (axes != std::vector<int64_t>{1, 2}) return false;
    const ElemType et = TensorElemType(graph, u.inputs[0]);
    if (et != ElemType::kInt64 && et != ElemType::kInt32 && et != ElemType::kBool) return false;
    if (TensorRank(graph, u.inputs[0]) != 2) return false;
    *mask = u.inputs[0];
    *filter = static_cast<float>(m);
    return true;
  }
  return false;
}

std::shared_ptr<Tensor> Concat(const std::vector<const Tensor*>& parts, int64_t rows) {
  int64_t cols = 0;
  for (const Tensor* t : parts) cols += t->size() / rows;
  // Outside the allocator's cache: the Attention kernel packs the weight and
  // releases this copy, which cached would stay resident (85 MB for BERT).
  auto out = std::make_shared<Tensor>(ElemType::kFloat, rows == 1 ? Dims{cols} : Dims{rows, cols},
                                      GetUncachedCpuAllocator());
  float* dst = out->data<float>();
  for (int64_t r = 0; r < rows; ++r)
    for (const Tensor* t : parts) {
      const int64_t c = t->size() / rows;
      std::memcpy(dst, t->data<float>() + r * c, static_cast<size_t>(c) * sizeof(float));
      dst += c;
    }
  return out;
}

// Erases those of `names` that are initializers no node, graph input or
// graph output refers to any more.
void DropUnreadInitializers(Graph& graph, const std::vector<std::string>& names) {
  for (const std::string& name : names) {
    if (graph.initializers.count(name) == 0) continue;
    bool used = false;
    for (const auto& v : graph.inputs) used = used || v.name == name;
    for (const auto& v : graph.outputs) used = used || v.name == name;
    for (const Node& n : graph.nodes) {
      if (used) break;
      for (const auto& in : n.inputs) used = used || in == name;
      for (const auto& in : n.implicit_inputs) used = used || in == name;
    }
    if (used) continue;
    graph.initializers.erase(name);
    graph.value_types.erase(name);
  }
}

bool TryFuse(Graph& graph, const GraphIndex& idx, size_t i) {
  const Node& softmax = graph.nodes[i];
  if (!IsOnnxOp(softmax, "Softmax") || softmax.outputs.size() != 1) return false;
  const int64_t axis = softmax.AttrInt("axis", softmax.since_version < 13 ? 1 : -1);
  if (axis != -1 && axis != 3) return false;
  // probs -> MatMul(probs, v) -> Transpose -> Reshape
  const int ctx_mm = SoleConsumer(graph, idx, softmax.outputs[0], "MatMul");
  if (ctx_mm < 0 || graph.nodes[ctx_mm].inputs[0] != softmax.outputs[0]) return false;
  const int ctx_t = SoleConsumer(graph, idx, graph.nodes[ctx_mm].outputs[0], "Transpose");
  if (ctx_t < 0 || !HasPerm(graph.nodes[ctx_t], {0, 2, 1, 3})) return false;
  const int ctx_r = SoleConsumer(graph, idx, graph.nodes[ctx_t].outputs[0], "Reshape");
  if (ctx_r < 0 || graph.nodes[ctx_r].inputs[0] != graph.nodes[ctx_t].outputs[0]) return false;
  std::vector<int> nodes = {static_cast<int>(i), ctx_mm, ctx_t, ctx_r};

  // scores: [Add(mask)] <- [Div|Mul(scale)] <- MatMul(q, k)
  std::string cur = softmax.inputs[0], ext_mask;
  const int madd = Sole(graph, idx, cur, "Add");
  if (madd >= 0) {
    const Node& a = graph.nodes[madd];
    for (int k = 0; k < 2 && ext_mask.empty(); ++k) {
      const int p = idx.Producer(a.inputs[k]);
      if (p >= 0 && a.inputs[k] != a.inputs[1 - k] && ConstantInitializer(graph, a.inputs[1 - k]) == nullptr &&
          (IsOnnxOp(graph.nodes[p], "Div") || IsOnnxOp(graph.nodes[p], "Mul") || IsOnnxOp(graph.nodes[p], "MatMul") ||
           (graph.nodes[p].domain == kMsDomain && graph.nodes[p].op_type == "FusedMatMul"))) {
        ext_mask = a.inputs[1 - k];
        cur = a.inputs[k];
      }
    }
    if (ext_mask.empty()) return false;
    nodes.push_back(madd);
  }
  float scale = 1.f;
  const int div = Sole(graph, idx, cur, "Div");
  const int mul = Sole(graph, idx, cur, "Mul");
  double c = 0;
  if (div >= 0) {
    if (!ConstantScalar(graph, graph.nodes[div].inputs[1], &c) || c == 0) return false;
    scale = static_cast<float>(1.0 / c);
    cur = graph.nodes[div].inputs[0];
    nodes.push_back(div);
  } else if (mul >= 0) {
    const Node& m = graph.nodes[mul];
    const int k = ConstantScalar(graph, m.inputs[1], &c) ? 0 : ConstantScalar(graph, m.inputs[0], &c) ? 1 : -1;
    if (k < 0 || c == 0) return false;
    scale = static_cast<float>(c);
    cur = m.inputs[k];
    nodes.push_back(mul);
  }
  int qk = Sole(graph, idx, cur, "MatMul");
  if (qk < 0) {
    // The scale already in a FusedMatMul's alpha (matmul_scale_fusion).
    const int p = idx.Producer(cur);
    if (p < 0 || !idx.HasSingleUse(cur)) return false;
    const Node& f = graph.nodes[p];
    if (f.domain != kMsDomain || f.op_type != "FusedMatMul" || f.inputs.size() != 2) return false;
    for (const char* a : {"transA", "transB", "transBatchA", "transBatchB"})
      if (f.AttrInt(a, 0) != 0) return false;
    scale *= f.AttrFloat("alpha", 1.f);
    qk = p;
  }
  nodes.push_back(qk);
  Projection q, k, v;
  if (!MatchProjection(graph, idx, graph.nodes[qk].inputs[0], {0, 2, 1, 3}, &q) ||
      !MatchProjection(graph, idx, graph.nodes[qk].inputs[1], {0, 2, 3, 1}, &k) ||
      !MatchProjection(graph, idx, graph.nodes[ctx_mm].inputs[1], {0, 2, 1, 3}, &v))
    return false;
  // Attention (the projections inside) where all three are X W + b of one
  // float X with constant [D, D] weights and [D] biases; else
  // MultiHeadAttention of the three projected values, which must then be
  // float [B, S, D] alike (self-attention: the same shape and rows).
  const std::string x = q.x;
  const int64_t D = LastDim(graph, q.in);
  std::vector<const Tensor*> ws, bs;
  bool packed = !x.empty() && k.x == x && v.x == x && TensorElemType(graph, x) == ElemType::kFloat &&
                TensorRank(graph, x) == 3 && LastDim(graph, x) == D && D > 0;
  for (const Projection* p : {&q, &k, &v}) {
    if (!packed) break;
    const Tensor* w = ConstantInitializer(graph, p->weight);
    packed = w != nullptr && w->type() == ElemType::kFloat && w->rank() == 2 && w->dims()[0] == D &&
             w->dims()[1] == D && IsFloatVector(graph, p->bias, D);
    ws.push_back(packed ? w : nullptr);
    bs.push_back(packed ? ConstantInitializer(graph, p->bias) : nullptr);
  }
  if (D <= 0) return false;
  for (Projection* p : {&q, &k, &v}) {
    if (packed) {
      p->nodes.insert(p->nodes.end(), p->linear.begin(), p->linear.end());
    } else if (TensorElemType(graph, p->in) != ElemType::kFloat || TensorRank(graph, p->in) != 3 ||
               LastDim(graph, p->in) != D) {
      return false;
    }
    nodes.insert(nodes.end(), p->nodes.begin(), p->nodes.end());
  }

  // The Reshapes split and merge the last axis alone.
  SymbolicShapes shapes(graph);
  std::vector<SymbolicShapes::Sym> xd, hd, yd, pd;
  if (!shapes.Dims(packed ? x : q.in, &xd) || xd.size() != 3) return false;
  int64_t heads = 0;
  for (const Projection* p : {&q, &k, &v}) {
    if (!packed && (!shapes.Dims(p->in, &pd) || pd != xd)) return false;
    if (!shapes.Dims(p->heads, &hd) || hd.size() != 4 || hd[0] != xd[0] || hd[1] != xd[1] || hd[2] <= 0 ||
        hd[3] <= 0 || hd[2] * hd[3] != D || (heads != 0 && hd[2] != heads))
      return false;
    heads = hd[2];
  }
  const std::string& y = graph.nodes[ctx_r].outputs[0];
  if (!shapes.Dims(y, &yd) || yd != std::vector<SymbolicShapes::Sym>{xd[0], xd[1], D}) return false;

  std::string mask;
  float filter = 0.f;
  if (!ext_mask.empty()) {
    if (!MatchMask(graph, idx, ext_mask, &mask, &filter)) return false;
    std::vector<SymbolicShapes::Sym> md;
    // [batch, keys]: keys may only be proved at run time, where the kernel checks them.
    if (!shapes.Dims(mask, &md) || md[0] != xd[0] || (md[1] >= 0 && md[1] != xd[1])) return false;
  }

  Node fused;
  std::string w_name, b_name;
  if (packed) {
    MakeContrib(&fused, softmax.name, "Attention");
    w_name = UniqueValueName(graph, idx, q.weight + "_qkv");
    b_name = UniqueValueName(graph, idx, q.bias + "_qkv");
    fused.inputs = {x, w_name, b_name};
  } else {
    // query, key, value, bias (none), key_padding_mask (below).
    MakeContrib(&fused, softmax.name, "MultiHeadAttention");
    fused.inputs = {q.in, k.in, v.in};
  }
  fused.attrs["num_heads"] = IntAttr(heads);
  fused.attrs["scale"] = FloatAttr(scale);
  fused.outputs = {y};

  // Attention's raw mask is int32: one Cast per mask, shared by the layers.
  std::string mask32;
  int cast_at = -1;
  Node cast;
  if (!mask.empty()) {
    fused.attrs["mask_filter_value"] = FloatAttr(filter);
    if (TensorElemType(graph, mask) == ElemType::kInt32) {
      mask32 = mask;
    } else {
      for (const auto& use : idx.Consumers(mask)) {
        const Node& u = graph.nodes[use.first];
        if (IsOnnxOp(u, "Cast") && u.AttrInt("to", 0) == static_cast<int64_t>(ElemType::kInt32)) mask32 = u.outputs[0];
      }
      if (mask32.empty()) {
        mask32 = UniqueValueName(graph, idx, mask + "_int32");
        cast.name = mask32 + "/Cast";
        cast.op_type = "Cast";
        cast.since_version = softmax.since_version;
        cast.inputs = {mask};
        cast.outputs = {mask32};
        cast.attrs["to"] = IntAttr(static_cast<int64_t>(ElemType::kInt32));
        cast_at = 0;
      }
    }
    if (!packed) fused.inputs.push_back("");
    fused.inputs.push_back(mask32);
  }

  std::vector<std::string> parts;
  if (packed) {
    graph.initializers[w_name] = Concat(ws, D);
    graph.initializers[b_name] = Concat(bs, 1);
    for (const Projection* p : {&q, &k, &v}) parts.insert(parts.end(), {p->weight, p->bias});
  }
  if (cast_at >= 0) {
    TypeInfo mt;
    if (TensorType(graph, mask, &mt)) {
      mt.elem = ElemType::kInt32;
      graph.value_types[mask32] = mt;
    }
  }
  ReplacePattern(graph, nodes, std::move(fused));
  // The Cast goes right after the mask's producer, before any layer reads it.
  if (cast_at >= 0) {
    for (size_t p = 0; p < graph.nodes.size(); ++p)
      for (const auto& o : graph.nodes[p].outputs)
        if (o == mask) cast_at = static_cast<int>(p) + 1;
    graph.nodes.insert(graph.nodes.begin() + cast_at, std::move(cast));
  }
  // The separate Q/K/V weights go now, not when the optimizer's round ends:
  // kept until then beside every layer's concatenated copy, they doubled
  // BERT-base's 85 MB of attention weights at session creation.
  DropUnreadInitializers(graph, parts);
  return true;
}

}  // namespace

Status FuseAttention(Graph& graph, const OptimizerContext&, bool* changed) {
  bool fused = false;
  RewriteNodes(graph, &fused, TryFuse);
  if (fused) {
    // What computed the Reshape targets and the additive mask has no reader left.
    RemoveDeadNodes(graph);
    *changed = true;
  }
  return Status::OK();
}

}  // namespace optimizer
}  // namespace onyx

// Internals shared by the graph transformers in core/optimizer/. Not API.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "core/graph/graph.h"
#include "core/optimizer/optimizer.h"

namespace onyx {
namespace optimizer {

// One transformer: rewrites `graph` (not its subgraphs) and sets *changed when
// it did anything. Each lives in core/optimizer/<name>.cc.
using TransformFn = Status (*)(Graph& graph, const OptimizerContext& ctx, bool* changed);

Status EliminateIdentities(Graph& graph, const OptimizerContext& ctx, bool* changed);// identity_elimination.cc
Status FoldConstants(Graph& graph, const OptimizerContext& ctx, bool* changed);// constant_folding.cc
Status FoldShapes(Graph& graph, const OptimizerContext& ctx, bool* changed);// shape_folding.cc
Status FuseConvBatchNorm(Graph& graph, const OptimizerContext& ctx, bool* changed);// conv_bn_fusion.cc
Status FuseConvActivation(Graph& graph, const OptimizerContext& ctx, bool* changed);// conv_activation_fusion.cc
Status FuseConvAdd(Graph& graph, const OptimizerContext& ctx, bool* changed);// conv_add_fusion.cc
Status FuseMatMulAdd(Graph& graph, const OptimizerContext& ctx, bool* changed);// matmul_add_fusion.cc
Status FuseMatMulIntegerToFloat(Graph& graph, const OptimizerContext& ctx, bool* changed);// matmul_integer_to_float_fusion.cc
Status FuseMatMulScale(Graph& graph, const OptimizerContext& ctx, bool* changed);// matmul_scale_fusion.cc
Status FuseQdq(Graph& graph, const OptimizerContext& ctx, bool* changed);// qdq_fusion.cc
Status FuseQdqBatchNorm(Graph& graph, const OptimizerContext& ctx, bool* changed);// qdq_batch_norm_fusion.cc
Status FuseLayerNorm(Graph& graph, const OptimizerContext& ctx, bool* changed);// layer_norm_fusion.cc
Status FuseSkipLayerNorm(Graph& graph, const OptimizerContext& ctx, bool* changed);// skip_layer_norm_fusion.cc
Status FuseGelu(Graph& graph, const OptimizerContext& ctx, bool* changed);// gelu_fusion.cc
Status FuseBiasGelu(Graph& graph, const OptimizerContext& ctx, bool* changed);// bias_gelu_fusion.cc
Status FuseGemmActivation(Graph& graph, const OptimizerContext& ctx, bool* changed);// gemm_activation_fusion.cc
Status FuseAttention(Graph& graph, const OptimizerContext& ctx, bool* changed);// attention_fusion.cc
Status OptimizeTransposes(Graph& graph, const OptimizerContext& ctx, bool* changed);// transpose_optimizer.cc
Status FuseReshapes(Graph& graph, const OptimizerContext& ctx, bool* changed);// reshape_fusion.cc
Status EliminateCasts(Graph& graph, const OptimizerContext& ctx, bool* changed);// cast_elimination.cc
Status TransformNhwc(Graph& graph, const OptimizerContext& ctx, bool* changed);// nhwc_transformer.cc

// The opset a fused contrib node (com.microsoft) carries.
constexpr const char* kMsDomain = "com.microsoft";
constexpr int kMsOpset = 1;
// Our own operators' domain (version 1): kernels onnxruntime does not have,
// written at the layout level only.
constexpr const char* kOnyxDomain = "com.onyxruntime";

inline bool Is8Bit(ElemType e) { return e == ElemType::kUint8 || e == ElemType::kInt8; }

// Who produces and who reads each value of one graph, as of when it was built;
// transformers rebuild it after each rewrite rather than patch it.
class GraphIndex {
 public:
  explicit GraphIndex(const Graph& graph);
  // The maps' keys view names_: a move keeps its buffer, a copy would not.
  GraphIndex(GraphIndex&&) = default;
  GraphIndex& operator=(GraphIndex&&) = default;
  GraphIndex(const GraphIndex&) = delete;
  GraphIndex& operator=(const GraphIndex&) = delete;
  // Index of the node producing `value`, or -1 (graph input, initializer, outer scope).
  int Producer(const std::string& value) const;
  // (node index, input slot) of every explicit read of `value`.
  const std::vector<std::pair<int, int>>& Consumers(const std::string& value) const;
  bool IsGraphOutput(const std::string& value) const { return graph_outputs_.count(value) != 0; }
  // Read by a subgraph of some node (through implicit_inputs).
  bool IsImplicitInput(const std::string& value) const { return implicit_.count(value) != 0; }
  // Whether `name` names anything in the graph (a node's input or output, a
  // graph input or output, an initializer, a typed value), in a subgraph of
  // one of its nodes, or in an enclosing graph. Hash lookups: a transformer
  // naming many new values stays linear in the graph.
  bool NameTaken(const Graph& graph, const std::string& name) const;
  // Exactly one explicit read and nothing else sees it: the value may vanish
  // when its producer and that reader are merged.
  bool HasSingleUse(const std::string& value) const;
  // Nothing reads it and it is not a graph output.
  bool IsUnused(const std::string& value) const;

 private:
  // A view of `name` copied into names_ (reserved for every name up front,
  // so the views stay valid): the maps own no string each, and a rewrite
  // that renames values in the graph leaves the index as it was built.
  std::string_view Keep(const std::string& name);

  std::vector<char> names_;
  std::unordered_map<std::string_view, int> producer_;
  std::unordered_map<std::string_view, std::vector<std::pair<int, int>>> consumers_;
  std::unordered_set<std::string> graph_outputs_, implicit_;
  // Names inside subgraphs of the nodes and in enclosing graphs (usually none).
  std::unordered_set<std::string> nested_names_;
};

// The initializer `name` when a run cannot replace it (it is not also a graph
// input), else null.
const Tensor* ConstantInitializer(const Graph& graph, const std::string& name);

// A value name not used anywhere in `graph` yet (nor in its subgraphs or
// enclosing graphs), derived from `base`; `index` must be current.
std::string UniqueValueName(const Graph& graph, const GraphIndex& index, const std::string& base);

// Drops initializers that no node (or subgraph) reads and that are neither
// graph inputs nor outputs; returns how many went.
size_t RemoveUnusedInitializers(Graph& graph);

// Scalar value of a constant float/double tensor with one element.
bool ScalarAsDouble(const Tensor& t, double* out);

// The value `name` is a constant initializer holding one float/double
// element (of any rank), stored in *out.
bool ConstantScalar(const Graph& graph, const std::string& name, double* out);
// Same, and the element lies within `tol` of `want`.
bool ConstantScalarNear(const Graph& graph, const std::string& name, double want, double tol = 1e-5);

// `name` is a constant 1-D float initializer of length `n`.
bool IsFloatVector(const Graph& graph, const std::string& name, int64_t n);

// The type of `name` in `graph` when it is a tensor (declared, inferred or
// an initializer's), else false.
bool TensorType(const Graph& graph, const std::string& name, TypeInfo* out);
// Element type of the tensor `name`; kUndefined when not known.
ElemType TensorElemType(const Graph& graph, const std::string& name);
// Rank of the tensor `name`; -1 when not known.
int TensorRank(const Graph& graph, const std::string& name);
// Last dimension of the tensor `name`; -1 when not a known number.
int64_t LastDim(const Graph& graph, const std::string& name);
// Both tensors have the same rank and, dim by dim, the same known value or
// the same symbol (as typed, or as SymbolicShapes derives them): an
// elementwise op on them does not broadcast.
bool SameShape(const Graph& graph, const std::string& a, const std::string& b);

// `node` is the default-domain operator `op_type`.
inline bool IsOnnxOp(const Node& node, const char* op_type) {
  return node.domain.empty() && node.op_type == op_type;
}
// The node producing `value` when it is the default-domain `op_type` with
// one output read by one node only (so it can vanish in a fusion), else null.
const Node* SoleUseProducer(const Graph& graph, const GraphIndex& idx, const std::string& value, const char* op_type);
// The index of the only node reading `value` when that reader is the
// default-domain `op_type` and nothing else sees the value, else -1.
int SoleConsumer(const Graph& graph, const GraphIndex& idx, const std::string& value, const char* op_type);
// Of a binary node reading `value`, the other input; empty when `value` is
// not exactly one of its two inputs.
std::string OtherInput(const Node& binary, const std::string& value);

// The reduction axes of a ReduceMean/ReduceSum (attribute before opset 18,
// constant input from 18); false when they are not load-time constants.
bool ReduceAxes(const Graph& graph, const Node& reduce, std::vector<int64_t>* axes);
// A ReduceMean with keepdims over the last axis only of a rank-`rank` input.
bool IsLastAxisMean(const Graph& graph, const Node& reduce, int rank);

// Replaces the pattern made of the nodes at `pattern` (indices into
// graph.nodes) by `fused`, which takes the place of the last of them: a
// position after every producer of the pattern's inputs. Values the
// pattern computed and `fused` does not output lose their types.
void ReplacePattern(Graph& graph, std::vector<int> pattern, Node fused);

// Drops the nodes none of whose outputs is read (by a node, a subgraph or
// as a graph output), repeatedly; returns how many went.
size_t RemoveDeadNodes(Graph& graph);

// `outer`, a node reading the output of `inner`, becomes `fused` (which no
// longer reads it); `inner` goes too when `outer` was its only reader.
void ReplaceOuter(Graph& graph, const GraphIndex& idx, int inner, int outer, Node fused);

// Makes `node` the com.microsoft contrib op `op_type` (version kMsOpset),
// named after `name` with "/<op_type>" appended.
void MakeContrib(Node* node, const std::string& name, const char* op_type);

// Attributes for the nodes transformers write.
Attribute IntAttr(int64_t v);
Attribute FloatAttr(float v);
Attribute StringAttr(std::string v);

// Turns `node` into an Identity of its first input (identity_elimination
// then lets its readers use that input directly).
void MakeIdentity(Node* node);


// The loop every node-local transformer shares: tries
// `try_rewrite(graph, index, i)` at each node position; after a rewrite the
// index is rebuilt and position i is tried again (another node sits there now,
// or the rewritten one may combine further). Drops initializers the rewrites
// left unread and sets *changed when anything was rewritten.
template <typename TryFn>
void RewriteNodes(Graph& graph, bool* changed, TryFn&& try_rewrite) {
  GraphIndex idx(graph);
  bool any = false;
  for (size_t i = 0; i < graph.nodes.size();) {
    if (try_rewrite(graph, idx, i)) {
      any = true;
      idx = GraphIndex(graph);
      continue;
    }
    ++i;
  }
  if (any) {
    RemoveUnusedInitializers(graph);
    *changed = true;
  }
}

}  // namespace optimizer
}  // namespace onyx

// matmul_add_fusion (extended): MatMul(A [M,K], B [K,N] constant) -> Add(bias
// [N] or [1,N] constant) becomes Gemm(A, B, bias). Only for a 2-D A: Gemm has
// no batch dimensions, and reshaping around it would cost what it saves.
#include "core/optimizer/transformer_util.h"

namespace onyx {
namespace optimizer {
namespace {

bool IsRank2(const Graph& graph, const std::string& value) {
  if (const Tensor* t = ConstantInitializer(graph, value)) return t->rank() == 2;
  auto it = graph.value_types.find(value);
  return it != graph.value_types.end() && it->second.kind == TypeInfo::Kind::kTensor && it->second.has_shape &&
         it->second.dims.size() == 2;
}

bool TryFuse(Graph& graph, const GraphIndex& idx, size_t i) {
  Node& mm = graph.nodes[i];
  if (!mm.domain.empty() || mm.op_type != "MatMul" || mm.inputs.size() != 2 || mm.outputs.size() != 1) return false;
  // Gemm-7 is the first that broadcasts C without an attribute.
  if (mm.since_version < 7) return false;
  const std::string& y = mm.outputs[0];
  if (!idx.HasSingleUse(y) || !IsRank2(graph, mm.inputs[0])) return false;
  const Tensor* b = ConstantInitializer(graph, mm.inputs[1]);
  if (b == nullptr || b->rank() != 2) return false;
  const ElemType et = b->type();
  if (et != ElemType::kFloat && et != ElemType::kDouble) return false;
  const int64_t N = b->dims()[1];
  const auto use = idx.Consumers(y)[0];
  const Node& add = graph.nodes[use.first];
  if (!add.domain.empty() || add.op_type != "Add" || add.inputs.size() != 2 || add.outputs.size() != 1) return false;
  const std::string& c_name = add.inputs[1 - use.second];
  const Tensor* c = ConstantInitializer(graph, c_name);
  if (c == nullptr || c->type() != et) return false;
  // A bias that would broadcast the product to a bigger shape is not Gemm's C.
  const bool row = (c->rank() == 1 && c->dims()[0] == N) || (c->rank() == 2 && c->dims()[0] == 1 && c->dims()[1] == N);
  if (!row) return false;

  mm.op_type = "Gemm";
  mm.inputs.push_back(c_name);
  mm.outputs[0] = add.outputs[0];
  graph.value_types.erase(y);
  graph.nodes.erase(graph.nodes.begin() + use.first);
  return true;
}

}  // namespace

Status FuseMatMulAdd(Graph& graph, const OptimizerContext&, bool* changed) {
  RewriteNodes(graph, changed, TryFuse);
  return Status::OK();
}

}  // namespace optimizer
}  // namespace onyx

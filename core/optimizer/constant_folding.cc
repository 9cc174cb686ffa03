// constant_folding (basic): runs, once at load, every deterministic node whose
// inputs are all constant initializers, with the kernels the session hands it
// (OptimizerContext::fold_kernels, its CPU provider's), and turns its outputs
// into initializers.
#include <algorithm>
#include <cstdint>
#include <exception>
#include <memory>
#include <unordered_set>

#include "core/optimizer/transformer_util.h"
#include "providers/kernel.h"

namespace onyx {
namespace optimizer {
namespace {

// A result may not be much bigger than what it replaces (an Expand or
// ConstantOfShape would otherwise turn into a large initializer), except
// that small results are always fine.
constexpr size_t kAlwaysFoldBytes = 1 << 20;

class FoldContext final : public KernelContext {
 public:
  // Outputs beyond `max_bytes` together are refused before they are
  // allocated (the fold is dropped): a hostile ConstantOfShape or Expand
  // must not allocate at load what its run would be refused.
  FoldContext(std::vector<const Tensor*> inputs, size_t num_outputs, size_t max_bytes)
      : inputs_(std::move(inputs)), outputs_(num_outputs), max_bytes_(max_bytes) {}
  int InputCount() const override { return static_cast<int>(inputs_.size()); }
  const Tensor* Input(int i) const override { return i >= 0 && i < InputCount() ? inputs_[i] : nullptr; }
  int OutputCount() const override { return static_cast<int>(outputs_.size()); }
  Tensor* Output(int i, const Dims& dims, ElemType type) override {
    if (i < 0 || i >= OutputCount()) return nullptr;
    const int64_t n = ShapeSize(dims);
    const size_t bytes = n < 0 ? SIZE_MAX : StorageBytes(type, static_cast<size_t>(std::min<int64_t>(n, INT64_MAX >> 5)));
    if (n < 0 || bytes > max_bytes_ - std::min(used_, max_bytes_))
      ONYX_THROW(ErrorCode::kFail, "constant folding: output of shape ", ShapeToString(dims), " is too large to fold");
    used_ += bytes;
    outputs_[i] = std::make_shared<Tensor>(type, dims);
    return outputs_[i].get();
  }
  ThreadPool* threads() const override { return nullptr; }
  bool terminate_requested() const override { return false; }
  std::vector<std::shared_ptr<Tensor>>& outputs() { return outputs_; }

 private:
  std::vector<const Tensor*> inputs_;
  std::vector<std::shared_ptr<Tensor>> outputs_;
  size_t max_bytes_;
  size_t used_ = 0;
};

bool IsNondeterministic(const Node& n) {
  static const std::unordered_set<std::string> kOps = {"RandomNormal", "RandomUniform", "RandomNormalLike",
                                                       "RandomUniformLike", "Multinomial", "Bernoulli"};
  return n.domain.empty() && kOps.count(n.op_type) != 0;
}

bool HasSubgraph(const Node& n) {
  for (const auto& kv : n.attrs)
    if (kv.second.g || !kv.second.graphs.empty()) return true;
  return false;
}

// Folds node `i` when it qualifies and its kernel succeeds; a kernel error is
// left for the run to report, where the user can see it in context.
bool TryFold(Graph& graph, const GraphIndex& idx, const KernelRegistry& kernels, size_t i) {
  const Node& n = graph.nodes[i];
  if (IsNondeterministic(n) || HasSubgraph(n) || n.outputs.empty()) return false;
  if (n.inputs.empty() && !(n.domain.empty() && n.op_type == "Constant")) return false;
  std::vector<const Tensor*> inputs;
  std::vector<TypeInfo> types;
  size_t input_bytes = 0;
  for (const auto& in : n.inputs) {
    if (in.empty()) {
      inputs.push_back(nullptr);
      types.emplace_back();
      continue;
    }
    const Tensor* t = ConstantInitializer(graph, in);
    if (t == nullptr) return false;
    inputs.push_back(t);
    types.push_back(TypeInfo::Tensor(t->type()));
    input_bytes += t->bytes();
  }
  for (const auto& o : n.outputs) {
    // Graph outputs stay produced by nodes: keeps Run's ownership rules simple.
    if (!o.empty() && (idx.IsGraphOutput(o) || idx.IsImplicitInput(o))) return false;
  }
  std::string why;
  const KernelDef* def = kernels.Find(n, types, &why);
  if (def == nullptr) return false;
  KernelInfo info(n, graph, types);
  std::unique_ptr<OpKernel> kernel;
  FoldContext ctx(inputs, n.outputs.size(), std::max(kAlwaysFoldBytes, input_bytes));
  try {
    if (!def->create(info, &kernel).ok()) return false;
    if (!kernel->Compute(ctx).ok()) return false;
  } catch (const std::exception&) {
    return false;  // the run reports it, in context
  }
  size_t out_bytes = 0;
  for (size_t k = 0; k < n.outputs.size(); ++k) {
    if (n.outputs[k].empty()) continue;
    if (!ctx.outputs()[k]) return false;
    out_bytes += ctx.outputs()[k]->bytes();
  }
  if (out_bytes > kAlwaysFoldBytes && out_bytes > input_bytes) return false;
  for (size_t k = 0; k < n.outputs.size(); ++k)
    if (!n.outputs[k].empty()) graph.initializers[n.outputs[k]] = ctx.outputs()[k];
  graph.nodes.erase(graph.nodes.begin() + i);
  return true;
}

}  // namespace

Status FoldConstants(Graph& graph, const OptimizerContext& ctx, bool* changed) {
  if (ctx.fold_kernels == nullptr) return Status::OK();
  const KernelRegistry& kernels = *ctx.fold_kernels;
  RewriteNodes(graph, changed,
               [&kernels](Graph& g, const GraphIndex& idx, size_t i) { return TryFold(g, idx, kernels, i); });
  return Status::OK();
}

}  // namespace optimizer
}  // namespace onyx

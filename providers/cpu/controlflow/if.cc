// If: runs one of two prepared subgraphs by a boolean condition.
#include "providers/cpu/controlflow/controlflow_util.h"
#include "providers/subgraph.h"

namespace onyx {
namespace {

// Two declared types that cannot both be right for one output.
bool Disagree(const TypeInfo& a, const TypeInfo& b) {
  if (a.kind == TypeInfo::Kind::kUnknown || b.kind == TypeInfo::Kind::kUnknown) return false;
  if (a.kind != b.kind) return true;
  if (a.kind == TypeInfo::Kind::kTensor)
    return a.elem != ElemType::kUndefined && b.elem != ElemType::kUndefined && a.elem != b.elem;
  if (a.inner && b.inner) return Disagree(*a.inner, *b.inner);
  return false;
}

class IfKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    node_ = info.node().Describe();
    then_ = info.Subgraph("then_branch");
    else_ = info.Subgraph("else_branch");
    ONYX_CHECK(then_ != nullptr && else_ != nullptr, ErrorCode::kInvalidGraph, node_,
               " needs graph attributes 'then_branch' and 'else_branch'");
    const auto& t = then_->graph().outputs;
    const auto& e = else_->graph().outputs;
    const size_t n = info.node().outputs.size();
    ONYX_CHECK(t.size() == n && e.size() == n, ErrorCode::kInvalidGraph, node_, " has ", n,
               " outputs but its branches have ", t.size(), " (then) and ", e.size(), " (else)");
    for (size_t i = 0; i < n; ++i)
      ONYX_CHECK(!Disagree(t[i].type, e[i].type), ErrorCode::kInvalidGraph, node_, ": output ", i,
                 " is ", t[i].type.ToString(), " in then_branch but ", e[i].type.ToString(), " in else_branch");
    return Status::OK();
  }

  Status Compute(KernelContext& ctx) const override {
    bool cond = false;
    ONYX_RETURN_IF_ERROR(controlflow::ScalarBool(ctx.Input(0), node_ + ": input 'cond'", &cond));
    const SubgraphRunner* branch = cond ? then_ : else_;
    std::vector<Value> outs;
    ONYX_RETURN_IF_ERROR(branch->Run(ctx, {}, &outs));
    const std::string what = node_ + (cond ? " then_branch" : " else_branch");
    for (int i = 0; i < ctx.OutputCount() && i < static_cast<int>(outs.size()); ++i)
      ONYX_RETURN_IF_ERROR(controlflow::SetOutput(ctx, i, outs[i], what));
    return Status::OK();
  }

 private:
  std::string node_;
  const SubgraphRunner* then_ = nullptr;
  const SubgraphRunner* else_ = nullptr;
};

}  // namespace

ONYX_REGISTER_KERNEL(IfKernel, "", "If", 1, kMaxVersion, AnyType());

}  // namespace onyx

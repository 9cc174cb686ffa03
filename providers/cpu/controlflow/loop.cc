// Loop: runs its body while the trip count and the condition allow, carrying
// values from one iteration to the next and stacking per-iteration outputs.
#include <climits>

#include "providers/cpu/controlflow/controlflow_util.h"
#include "providers/subgraph.h"

namespace onyx {
namespace {

bool SameKnownType(const TypeInfo& a, const TypeInfo& b) {
  if (a.kind == TypeInfo::Kind::kUnknown || b.kind == TypeInfo::Kind::kUnknown) return true;
  // optional(T) and T carry the same values (onnx's own loop16 test body
  // takes an optional sequence and returns a plain one).
  if (a.kind == TypeInfo::Kind::kOptional && b.kind != TypeInfo::Kind::kOptional) return a.inner && SameKnownType(*a.inner, b);
  if (b.kind == TypeInfo::Kind::kOptional && a.kind != TypeInfo::Kind::kOptional) return b.inner && SameKnownType(a, *b.inner);
  if (a.kind != b.kind) return false;
  if (a.kind == TypeInfo::Kind::kTensor)
    return a.elem == ElemType::kUndefined || b.elem == ElemType::kUndefined || a.elem == b.elem;
  if (a.inner && b.inner) return SameKnownType(*a.inner, *b.inner);
  return true;
}

class LoopKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    const Node& node = info.node();
    node_ = node.Describe();
    body_ = info.Subgraph("body");
    ONYX_CHECK(body_ != nullptr, ErrorCode::kInvalidGraph, node_, " needs a graph attribute 'body'");
    const Graph& b = body_->graph();
    carried_ = static_cast<int>(node.inputs.size()) - 2;
    ONYX_CHECK(carried_ >= 0, ErrorCode::kInvalidGraph, node_, " needs inputs M and cond (either may be empty)");
    ONYX_CHECK(static_cast<int>(b.inputs.size()) == carried_ + 2, ErrorCode::kInvalidGraph, node_, ": its body takes ",
               b.inputs.size(), " inputs but the node carries ", carried_, " values (the body needs 2 + that)");
    ONYX_CHECK(static_cast<int>(b.outputs.size()) >= carried_ + 1, ErrorCode::kInvalidGraph, node_,
               ": its body has ", b.outputs.size(), " outputs, fewer than the condition and ", carried_,
               " loop-carried values");
    scans_ = static_cast<int>(b.outputs.size()) - 1 - carried_;
    ONYX_CHECK(static_cast<int>(node.outputs.size()) <= carried_ + scans_, ErrorCode::kInvalidGraph, node_, " has ",
               node.outputs.size(), " outputs but its body makes ", carried_ + scans_);
    for (int i = 0; i < carried_; ++i) {
      const TypeInfo& in = b.inputs[2 + i].type;
      const TypeInfo& out = b.outputs[1 + i].type;
      ONYX_CHECK(SameKnownType(in, out), ErrorCode::kInvalidGraph, node_, ": loop-carried value ", i, " ('",
                 b.inputs[2 + i].name, "') enters the body as ", in.ToString(), " but leaves it as ", out.ToString());
      ONYX_CHECK(SameKnownType(info.InputType(2 + i), in), ErrorCode::kInvalidGraph, node_, ": loop-carried value ",
                 i, " starts as ", info.InputType(2 + i).ToString(), " but the body takes ", in.ToString());
    }
    for (int k = 0; k < scans_; ++k) scan_types_.push_back(b.outputs[1 + carried_ + k].type);
    for (int i = 0; i < carried_; ++i) wrap_optional_.push_back(b.inputs[2 + i].type.kind == TypeInfo::Kind::kOptional);
    return Status::OK();
  }

  Status Compute(KernelContext& ctx) const override {
    int64_t trip = INT64_MAX;
    if (ctx.Input(0) != nullptr) ONYX_RETURN_IF_ERROR(controlflow::ScalarInt64(ctx.Input(0), node_ + ": input 'M'", &trip));
    bool cond = true;
    if (ctx.Input(1) != nullptr)
      ONYX_RETURN_IF_ERROR(controlflow::ScalarBool(ctx.Input(1), node_ + ": input 'cond'", &cond));
    std::vector<Value> carried;
    for (int i = 0; i < carried_; ++i) {
      const Value* v = ctx.InputValue(2 + i);
      ONYX_CHECK_ARG(v != nullptr, node_, ": loop-carried input ", i, " is missing");
      carried.push_back(*v);
    }
    std::vector<std::vector<std::shared_ptr<Tensor>>> scans(scans_);
    std::vector<Value> outs;
    for (int64_t it = 0; it < trip && cond; ++it) {
      ONYX_CHECK(!ctx.terminate_requested(), ErrorCode::kFail, node_, ": exiting due to terminate flag being set to true");
      std::vector<Value> feeds;
      feeds.reserve(2 + carried.size());
      feeds.push_back(controlflow::Int64Scalar(it));
      feeds.push_back(controlflow::BoolScalar(cond));
      for (int i = 0; i < carried_; ++i) {
        Value& v = carried[i];
        feeds.push_back(wrap_optional_[i] && v.kind() != Value::Kind::kOptional ? Value::Optional(std::move(v)) : std::move(v));
      }
      outs.clear();
      ONYX_RETURN_IF_ERROR(body_->Run(ctx, std::move(feeds), &outs).WithContext(node_ + ", iteration " + std::to_string(it) + ": "));
      ONYX_RETURN_IF_ERROR(controlflow::ScalarBool(outs[0].IsTensor() ? &outs[0].tensor() : nullptr,
                                                   node_ + ": the body's condition output", &cond));
      carried.assign(outs.begin() + 1, outs.begin() + 1 + carried_);
      for (int k = 0; k < scans_; ++k) {
        const Value& s = outs[1 + carried_ + k];
        ONYX_CHECK_ARG(s.IsTensor(), node_, ": scan output ", k, " of iteration ", it, " is not a tensor");
        scans[k].push_back(s.tensor_ptr());
      }
    }
    for (int i = 0; i < carried_ && i < ctx.OutputCount(); ++i)
      ONYX_RETURN_IF_ERROR(controlflow::SetOutput(ctx, i, carried[i], node_));
    for (int k = 0; k < scans_ && carried_ + k < ctx.OutputCount(); ++k) {
      Dims dims{static_cast<int64_t>(scans[k].size())};
      ElemType type = scan_types_[k].elem;
      if (!scans[k].empty()) {
        type = scans[k][0]->type();
        for (int64_t d : scans[k][0]->dims()) dims.push_back(d);
      } else if (scan_types_[k].has_shape) {
        // No iteration ran: the declared element shape where it is known.
        for (const Dim& d : scan_types_[k].dims) dims.push_back(d.known() ? d.value : 0);
      }
      if (type == ElemType::kUndefined) type = ElemType::kFloat;
      Tensor* out = ctx.Output(carried_ + k, dims, type);
      if (out != nullptr) ONYX_RETURN_IF_ERROR(controlflow::StackAlongAxis(scans[k], 0, false, ctx.threads(), out));
    }
    return Status::OK();
  }

 private:
  std::string node_;
  const SubgraphRunner* body_ = nullptr;
  int carried_ = 0;
  int scans_ = 0;
  std::vector<TypeInfo> scan_types_;
  std::vector<bool> wrap_optional_;  // per carried value: the body takes it as an optional
};

}  // namespace

ONYX_REGISTER_KERNEL(LoopKernel, "", "Loop", 1, kMaxVersion, AnyType());

}  // namespace onyx

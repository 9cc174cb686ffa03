// Scan: runs its body once per slice of the scan inputs, carrying state
// values and stacking per-iteration outputs. Opset 9+ semantics (axes and
// directions per input and output); opset 8's batched form runs the same
// loop once per batch row.
#include "providers/cpu/controlflow/controlflow_util.h"
#include "providers/subgraph.h"

namespace onyx {
namespace {

class ScanKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    const Node& node = info.node();
    node_ = node.Describe();
    opset8_ = info.opset() < 9;
    body_ = info.Subgraph("body");
    ONYX_CHECK(body_ != nullptr, ErrorCode::kInvalidGraph, node_, " needs a graph attribute 'body'");
    scan_inputs_ = static_cast<int>(info.AttrInt("num_scan_inputs", -1));
    const int first = opset8_ ? 1 : 0;  // opset 8: input 0 is sequence_lens
    const int n_in = static_cast<int>(node.inputs.size()) - first;
    ONYX_CHECK(scan_inputs_ >= 1 && scan_inputs_ <= n_in, ErrorCode::kInvalidGraph, node_,
               ": num_scan_inputs must be between 1 and the number of inputs (", n_in, ")");
    states_ = n_in - scan_inputs_;
    const Graph& b = body_->graph();
    ONYX_CHECK(static_cast<int>(b.inputs.size()) == n_in, ErrorCode::kInvalidGraph, node_, ": its body takes ",
               b.inputs.size(), " inputs but the node has ", n_in, " state and scan inputs");
    scan_outputs_ = static_cast<int>(b.outputs.size()) - states_;
    ONYX_CHECK(scan_outputs_ >= 0, ErrorCode::kInvalidGraph, node_, ": its body has fewer outputs than states");
    in_axes_ = info.AttrInts("scan_input_axes");
    in_dirs_ = info.AttrInts(opset8_ ? "directions" : "scan_input_directions");
    out_axes_ = info.AttrInts("scan_output_axes");
    out_dirs_ = info.AttrInts("scan_output_directions");
    in_axes_.resize(scan_inputs_, 0);
    in_dirs_.resize(scan_inputs_, 0);
    out_axes_.resize(scan_outputs_, 0);
    out_dirs_.resize(scan_outputs_, 0);
    return Status::OK();
  }

  Status Compute(KernelContext& ctx) const override {
    const int first = opset8_ ? 1 : 0;
    std::vector<Value> states;
    std::vector<const Tensor*> xs;
    for (int i = 0; i < states_; ++i) {
      const Value* v = ctx.InputValue(first + i);
      ONYX_CHECK_ARG(v != nullptr, node_, ": state input ", i, " is missing");
      states.push_back(*v);
    }
    for (int j = 0; j < scan_inputs_; ++j) {
      const Tensor* x = ctx.Input(first + states_ + j);
      ONYX_CHECK_ARG(x != nullptr, node_, ": scan input ", j, " is missing or not a tensor");
      xs.push_back(x);
    }
    if (!opset8_) {
      std::vector<Value> final_states;
      std::vector<std::shared_ptr<Tensor>> outs;
      ONYX_RETURN_IF_ERROR(ScanOnce(ctx, std::move(states), xs, &final_states, &outs));
      for (int i = 0; i < states_; ++i) ONYX_RETURN_IF_ERROR(controlflow::SetOutput(ctx, i, final_states[i], node_));
      for (int k = 0; k < scan_outputs_; ++k) ONYX_RETURN_IF_ERROR(controlflow::SetOutput(ctx, states_ + k, Value(outs[k]), node_));
      return Status::OK();
    }
    // Opset 8: axis 0 of every state and scan input is the batch.
    ONYX_CHECK_ARG(xs[0]->rank() >= 2, node_, ": scan inputs need a batch and a sequence axis");
    const int64_t batch = xs[0]->dims()[0];
    if (const Tensor* lens = ctx.Input(0)) {
      ONYX_CHECK_ARG(lens->type() == ElemType::kInt32 || lens->type() == ElemType::kInt64, node_,
                     ": sequence_lens must be int32 or int64");
      for (int64_t b = 0; b < lens->size(); ++b) {
        int64_t len = lens->type() == ElemType::kInt32 ? lens->data<int32_t>()[b] : lens->data<int64_t>()[b];
        ONYX_CHECK(len == xs[0]->dims()[1], ErrorCode::kNotImplemented, node_, ": sequence_lens shorter than the ",
                   "sequence axis (", len, " of ", xs[0]->dims()[1], ") is not supported");
      }
    }
    std::vector<std::vector<std::shared_ptr<Tensor>>> state_rows(states_), out_rows(scan_outputs_);
    for (int64_t b = 0; b < batch; ++b) {
      std::vector<Value> row_states;
      for (int i = 0; i < states_; ++i) {
        ONYX_CHECK_ARG(states[i].IsTensor(), node_, ": state ", i, " is not a tensor");
        Tensor s;
        ONYX_RETURN_IF_ERROR(controlflow::SliceAlongAxis(states[i].tensor(), 0, b, &s));
        row_states.emplace_back(std::move(s));
      }
      std::vector<Tensor> row_x(scan_inputs_);
      std::vector<const Tensor*> row_xp;
      for (int j = 0; j < scan_inputs_; ++j) {
        ONYX_RETURN_IF_ERROR(controlflow::SliceAlongAxis(*xs[j], 0, b, &row_x[j]));
        row_xp.push_back(&row_x[j]);
      }
      std::vector<Value> fs;
      std::vector<std::shared_ptr<Tensor>> os;
      ONYX_RETURN_IF_ERROR(ScanOnce(ctx, std::move(row_states), row_xp, &fs, &os));
      for (int i = 0; i < states_; ++i) state_rows[i].push_back(fs[i].tensor_ptr());
      for (int k = 0; k < scan_outputs_; ++k) out_rows[k].push_back(os[k]);
    }
    auto stack = [&](int out_index, const std::vector<std::shared_ptr<Tensor>>& rows) -> Status {
      if (rows.empty()) return Status::OK();
      Dims dims{static_cast<int64_t>(rows.size())};
      for (int64_t d : rows[0]->dims()) dims.push_back(d);
      Tensor* out = ctx.Output(out_index, dims, rows[0]->type());
      return out ? controlflow::StackAlongAxis(rows, 0, false, ctx.threads(), out) : Status::OK();
    };
    for (int i = 0; i < states_; ++i) ONYX_RETURN_IF_ERROR(stack(i, state_rows[i]));
    for (int k = 0; k < scan_outputs_; ++k) ONYX_RETURN_IF_ERROR(stack(states_ + k, out_rows[k]));
    return Status::OK();
  }

 private:
  // One scan over `xs` (opset 9 layout): the final states and the stacked outputs.
  Status ScanOnce(const KernelContext& ctx, std::vector<Value> states, const std::vector<const Tensor*>& xs,
                  std::vector<Value>* final_states, std::vector<std::shared_ptr<Tensor>>* stacked) const {
    std::vector<int64_t> axes(scan_inputs_);
    int64_t length = -1;
    for (int j = 0; j < scan_inputs_; ++j) {
      const int64_t rank = static_cast<int64_t>(xs[j]->rank());
      int64_t a = in_axes_[j] < 0 ? in_axes_[j] + rank : in_axes_[j];
      ONYX_CHECK_ARG(a >= 0 && a < rank, node_, ": scan_input_axes[", j, "] = ", in_axes_[j],
                     " is out of range for rank ", rank);
      axes[j] = a;
      const int64_t len = xs[j]->dims()[a];
      ONYX_CHECK_ARG(length < 0 || len == length, node_, ": scan inputs have different sequence lengths (", length,
                     " and ", len, ")");
      length = len;
    }
    std::vector<std::vector<std::shared_ptr<Tensor>>> parts(scan_outputs_);
    std::vector<Value> outs;
    for (int64_t t = 0; t < length; ++t) {
      ONYX_CHECK(!ctx.terminate_requested(), ErrorCode::kFail, node_, ": exiting due to terminate flag being set to true");
      std::vector<Value> feeds = std::move(states);
      for (int j = 0; j < scan_inputs_; ++j) {
        Tensor slice;
        ONYX_RETURN_IF_ERROR(controlflow::SliceAlongAxis(*xs[j], axes[j], in_dirs_[j] ? length - 1 - t : t, &slice));
        feeds.emplace_back(std::move(slice));
      }
      outs.clear();
      ONYX_RETURN_IF_ERROR(body_->Run(ctx, std::move(feeds), &outs).WithContext(node_ + ", iteration " + std::to_string(t) + ": "));
      states.assign(outs.begin(), outs.begin() + states_);
      for (int k = 0; k < scan_outputs_; ++k) {
        const Value& o = outs[states_ + k];
        ONYX_CHECK_ARG(o.IsTensor(), node_, ": scan output ", k, " is not a tensor");
        parts[k].push_back(o.tensor_ptr());
      }
    }
    *final_states = std::move(states);
    stacked->clear();
    for (int k = 0; k < scan_outputs_; ++k) {
      const TypeInfo& declared = body_->graph().outputs[states_ + k].type;
      Dims elem;
      ElemType type = declared.elem == ElemType::kUndefined ? ElemType::kFloat : declared.elem;
      if (!parts[k].empty()) {
        elem = parts[k][0]->dims();
        type = parts[k][0]->type();
      } else if (declared.has_shape) {
        for (const Dim& d : declared.dims) elem.push_back(d.known() ? d.value : 0);
      }
      const int64_t rank = static_cast<int64_t>(elem.size()) + 1;
      int64_t a = out_axes_[k] < 0 ? out_axes_[k] + rank : out_axes_[k];
      ONYX_CHECK_ARG(a >= 0 && a < rank, node_, ": scan_output_axes[", k, "] = ", out_axes_[k],
                     " is out of range for rank ", rank);
      Dims dims = elem;
      dims.insert(dims.begin() + a, static_cast<int64_t>(parts[k].size()));
      auto out = std::make_shared<Tensor>(type, dims);
      ONYX_RETURN_IF_ERROR(controlflow::StackAlongAxis(parts[k], a, out_dirs_[k] != 0, ctx.threads(), out.get()));
      stacked->push_back(std::move(out));
    }
    return Status::OK();
  }

  std::string node_;
  bool opset8_ = false;
  const SubgraphRunner* body_ = nullptr;
  int scan_inputs_ = 0, states_ = 0, scan_outputs_ = 0;
  std::vector<int64_t> in_axes_, in_dirs_, out_axes_, out_dirs_;
};

}  // namespace

ONYX_REGISTER_KERNEL(ScanKernel, "", "Scan", 8, kMaxVersion, AnyType());

}  // namespace onyx

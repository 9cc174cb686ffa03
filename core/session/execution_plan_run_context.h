// The context a kernel sees during a run of an ExecutionPlan: its inputs
// and outputs as slots of the run's value array, caller-bound output
// buffers, the memory pattern, the thread pool and the terminate flag.
// Internal to core/session/execution_plan*.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/session/execution_plan.h"

namespace onyx {

class RunContext final : public KernelContext {
 public:
  RunContext(std::vector<Value>& values, const std::vector<int>& inputs, const std::vector<int>& outputs,
             const std::vector<int>& views, const std::vector<int>& in_place,
             const std::vector<std::shared_ptr<Tensor>>* presets, Allocator* alloc,
             const std::vector<Allocator*>* output_allocs, MemPatternRun* pattern,
             ThreadPool* threads, const RunOptions* ro, const ExecutionPlan& plan, const KernelContext* outer)
      : values_(values),
        inputs_(inputs),
        outputs_(outputs),
        views_(views),
        in_place_(in_place),
        presets_(presets),
        alloc_(alloc),
        output_allocs_(output_allocs),
        pattern_(pattern),
        threads_(threads),
        run_options_(ro),
        plan_(plan),
        outer_(outer) {}

  int InputCount() const override { return static_cast<int>(inputs_.size()); }
  const Tensor* Input(int i) const override {
    const Value* v = InputValue(i);
    return v && v->IsTensor() ? &v->tensor() : nullptr;
  }
  const Value* InputValue(int i) const override {
    if (i < 0 || i >= static_cast<int>(inputs_.size()) || inputs_[i] < 0) return nullptr;
    const Value& v = values_[inputs_[i]];
    return v.HasValue() ? &v : nullptr;
  }
  int OutputCount() const override { return static_cast<int>(outputs_.size()); }
  // Writes into a caller-bound buffer when the slot has one (throwing
  // OnyxException when it does not fit), else takes the memory pattern's
  // block or allocates.
  Tensor* Output(int i, const Dims& dims, ElemType type) override;
  // A view where the plan allowed one (Step::views), unless the caller bound
  // the output to a buffer of its own.
  const Tensor* OutputView(int out, int in, const Dims& dims) override;
  // The input's bytes where the plan allowed it (Step::in_place), unless the
  // caller bound the output or something else holds the input's tensor.
  Tensor* OutputInPlace(int out, int in, const Dims& dims, ElemType type) override;
  Status SetOutputValue(int i, Value v) override;
  ThreadPool* threads() const override { return threads_; }
  bool terminate_requested() const override {
    return (run_options_ && run_options_->terminate.load()) || (outer_ && outer_->terminate_requested());
  }
  const Value* OuterValue(const std::string& name) const override {
    int slot = plan_.SlotOf(name);
    if (slot >= 0 && values_[slot].HasValue()) return &values_[slot];
    return outer_ ? outer_->OuterValue(name) : nullptr;
  }

 private:
  // Whether the caller bound output `slot` to a buffer of its own (directly
  // or through its device twin): written there, never a view or in place.
  bool Bound(int slot) const;

  std::vector<Value>& values_;
  const std::vector<int>& inputs_;
  const std::vector<int>& outputs_;
  const std::vector<int>& views_;
  const std::vector<int>& in_place_;
  const std::vector<std::shared_ptr<Tensor>>* presets_;
  Allocator* alloc_;
  const std::vector<Allocator*>* output_allocs_;  // null: every output from alloc_
  MemPatternRun* pattern_;
  ThreadPool* threads_;
  const RunOptions* run_options_;
  const ExecutionPlan& plan_;
  const KernelContext* outer_;
};

}  // namespace onyx

// An inference session: model -> prepared plan (immutable) -> per-run state.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/framework/logging.h"
#include "core/framework/profiler.h"
#include "core/framework/thread_pool.h"
#include "core/framework/value.h"
#include "core/graph/graph.h"
#include "core/session/options.h"
#include "providers/provider.h"

namespace onyx {

class ExecutionPlan;
class LimitedAllocator;

class Session {
 public:
  static Status Create(const SessionOptions& options, const std::string& path, std::unique_ptr<Session>* out);
  // Does now the once-per-process work the first session would otherwise pay
  // for (registering ONNX's operator schemas: ~10-20 ms of one core), as
  // onnxruntime's environment does when it is made. Thread-safe, idempotent.
  static void PrepareProcess();
  static Status CreateFromBytes(const SessionOptions& options, const void* data, size_t size,
                                std::unique_ptr<Session>* out);
  ~Session();

  // Graph inputs that must be fed (initializers excluded).
  const std::vector<ValueInfo>& inputs() const { return inputs_; }
  const std::vector<ValueInfo>& outputs() const { return model_.graph->outputs; }
  // Graph inputs that have an initializer: a feed may replace them.
  const std::vector<ValueInfo>& overridable_initializers() const { return overridable_; }
  const Model& model() const { return model_; }
  const std::vector<std::string>& provider_names() const { return provider_names_; }
  const SessionOptions& options() const { return options_; }
  // Which provider runs each node, in execution order (see ExecutionPlan).
  std::vector<std::pair<const std::string*, const Node*>> NodeAssignments() const;

  // Writes the profile (Chrome-trace JSON) and stops profiling; FAIL when
  // profiling was not enabled. Thread-safe with Run.
  Status EndProfiling(std::string* path) const;
  // Wall-clock ns since the epoch when profiling started (0 when disabled).
  int64_t profiling_start_time_ns() const { return profiler_.start_time_ns(); }

  // Thread-safe. `feeds[i]` is the value for `input_names[i]`; `output_names`
  // empty means all outputs. On success `outputs` holds one value per name.
  // `bound_outputs` (null, or one entry per wanted output) holds caller
  // buffers (IOBinding): a non-null entry's output is written into it in
  // place (copied in when it is not produced by a node), and the run fails
  // with INVALID_ARGUMENT when the output's type or shape differs from it.
  // `output_devices` (null, or one entry per wanted output) says where an
  // output without a buffer is returned (IOBinding's bind_output to a
  // device, onnxruntime's BindOutputToDevice): in host memory, or in the
  // memory of a device provider of this session (CheckOutputDevice), with
  // the shape the run computes. An output a device kernel makes stays there
  // (its copy to the host is skipped); one made on the host is copied over.
  Status Run(const RunOptions* run_options, const std::vector<std::string>& input_names,
             const std::vector<const Value*>& feeds, const std::vector<std::string>& output_names,
             std::vector<Value>* outputs, const std::vector<std::shared_ptr<Tensor>>* bound_outputs = nullptr,
             const std::vector<MemoryInfo>* output_devices = nullptr) const;
  // OK when outputs may be returned in `memory` (host memory, or the device
  // of one of this session's device providers); else INVALID_ARGUMENT
  // naming `output` and why.
  Status CheckOutputDevice(const std::string& output, const MemoryInfo& memory) const;
  // Run by position, for callers that resolved names once (the C API's
  // SessionRunTensors): `feed_indices[i]` numbers inputs() then
  // overridable_initializers(); `output_indices` numbers outputs(), null
  // meaning all of them in order (then output_count must equal their count).
  // Otherwise as Run.
  Status RunIndexed(const RunOptions* run_options, const size_t* feed_indices, const Value* const* feeds,
                    size_t feed_count, const size_t* output_indices, size_t output_count, std::vector<Value>* outputs,
                    const std::vector<std::shared_ptr<Tensor>>* bound_outputs = nullptr,
                    const std::vector<MemoryInfo>* output_devices = nullptr) const;
  // The session's intra-op pool (run_async schedules whole runs on it).
  ThreadPool* thread_pool() const { return thread_pool_.get(); }
  // Node names in the order a run executes them.
  std::vector<std::string> ExecutionOrder() const;

 private:
  Session() = default;
  // Create and CreateFromBytes: `load` parses the model into the new session,
  // reading external data from `sources`; the model's ort_config applies
  // when ORT_LOAD_CONFIG_FROM_MODEL=1; then Initialize.
  static Status CreateWith(const SessionOptions& options,
                           const std::function<Status(Model*, const ExternalFiles*)>& load,
                           std::unique_ptr<Session>* out);
  Status Initialize(const SessionOptions& options, Profiler::Clock::time_point load_start);
  Status ApplyUserInitializers(const SessionOptions& options);
  // kSessionMemoryLimitKey in bytes (0 when unset); INVALID_ARGUMENT naming
  // the key when it is not a positive integer.
  static Status MemoryLimit(const SessionOptions& options, size_t* out);
  // session.disable_cpu_ep_fallback = "1": fails when a node runs on the CPU
  // provider without the caller having asked for it (or asked for both).
  Status CheckCpuFallback(const SessionOptions& options) const;
  void ApplyFreeDimensionOverrides(const SessionOptions& options);
  // The device provider whose memory `memory` names; null for host memory
  // or a device this session has no provider for.
  const ExecutionProvider* DeviceProvider(const MemoryInfo& memory) const;
  // Parses the run's kRunArenaShrinkKey entry: *shrink_cpu is set when the
  // session's CPU arena is named; unknown devices and ids are errors.
  Status ArenasToShrink(const RunOptions* run_options, bool* shrink_cpu) const;

  // Names and slots resolved once, so a run does no name lookups: one entry
  // per inputs() then overridable_initializers(), and per outputs().
  struct FeedSlot {
    int decl = -1;  // index in model_.graph->inputs; -1 when the graph no longer has it
    int slot = -1;
  };
  void IndexInputsAndOutputs();
  const std::string& FeedName(size_t index) const {
    return index < inputs_.size() ? inputs_[index].name : overridable_[index - inputs_.size()].name;
  }

  SessionOptions options_;
  std::unique_ptr<Logger> logger_;
  Model model_;
  std::vector<ValueInfo> inputs_;
  std::vector<ValueInfo> overridable_;
  std::vector<std::unique_ptr<ExecutionProvider>> providers_;
  std::vector<std::string> provider_names_;
  bool has_device_ = false;  // a provider runs kernels on a device (feeds may live there)
  std::shared_ptr<ThreadPool> thread_pool_;  // the session's own, or a global one
  // Runs independent nodes at once (execution_mode ORT_PARALLEL); else null.
  std::shared_ptr<ThreadPool> inter_op_pool_;
  // session.force_spinning_stop: the pools spin only while a run is in
  // flight; RunningScope counts them.
  bool force_spinning_stop_ = false;
  bool denormal_as_zero_ = false;  // session.set_denormal_as_zero
  mutable std::mutex running_mu_;
  mutable int running_ = 0;
  class RunningScope {
   public:
    explicit RunningScope(const Session& s);
    ~RunningScope();

   private:
    const Session& s_;
  };
  // The CPU allocator the plan uses; null when it has no cache (arena off).
  Allocator* cpu_arena_ = nullptr;
  // The plan's CPU allocator when kSessionMemoryLimitKey is set (see
  // LimitedAllocator for why it is released, not deleted).
  LimitedAllocator* limited_alloc_ = nullptr;
  std::unique_ptr<ExecutionPlan> plan_;
  std::vector<FeedSlot> feed_slots_;
  std::unordered_map<std::string, size_t> feed_index_;
  std::vector<int> output_slots_;
  std::unordered_map<std::string, size_t> output_index_;
  mutable Profiler profiler_;
  mutable std::mutex profile_mu_;
};

}  // namespace onyx

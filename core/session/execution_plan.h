// A graph prepared for execution: kernels created once, values numbered into
// slots, and for each node the slots it frees afterwards. Immutable after
// Build(), so one plan serves concurrent runs; each run owns its slot array.
// By job: execution_plan.cc (Build: node order, kernels, slots, releases),
// execution_plan_mem_pattern.{h,cc} (memory patterns),
// execution_plan_executor.cc (Execute, profiling), execution_plan_run_context.{h,cc}
// (the KernelContext of a run).
#pragma once

#include <atomic>
#include <deque>
#include <functional>

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "core/framework/profiler.h"
#include "core/framework/thread_pool.h"
#include "core/graph/graph.h"
#include "core/session/options.h"
#include "providers/provider.h"
#include "providers/subgraph.h"

namespace onyx {

// How the plan orders and frees values (from SessionOptions).
struct PlanOptions {
  // Free each intermediate after its last reader (enable_mem_reuse); off keeps
  // every intermediate until the run ends.
  bool release_intermediates = true;
  // 0 graph order, 1 priority-based (shape computations first), 2 memory
  // efficient (greedy: the ready node that leaves the least live memory).
  int execution_order = 0;
  // Allocates the CPU provider's outputs instead of its own allocator (a
  // shared arena, or the uncached allocator); null keeps the provider's.
  Allocator* cpu_allocator = nullptr;
  // Memory pattern (enable_mem_pattern): after a run, later runs fed the same
  // input types and shapes take all intermediates from one block laid out
  // from the first run's allocations.
  bool mem_pattern = true;
  // Called with the name of each constant of the planned graph the moment its
  // last reader's kernel has packed a copy of its own and released it, and
  // with the data-less tensor (same type and dims) the plan keeps in its
  // place, so the caller swaps its copy for that one and the original and all
  // packed copies never coexist. Not passed on to subgraphs' plans.
  std::function<void(const std::string&, const std::shared_ptr<Tensor>&)> on_constant_released;
  // execution_mode ORT_PARALLEL: a node runs as soon as the nodes it reads
  // from are done, independent ones at once on the inter-op pool given to
  // Execute; intermediates are freed when their last reader (in whatever
  // order they ran) is done. Needs mem_pattern off (patterns are laid out
  // from the sequential order). Subgraphs always run sequentially.
  bool parallel = false;
  // KernelInfo::allow_winograd_f4 of every kernel ("session.conv.winograd_f4").
  bool winograd_f4 = true;
};

// The planned layout of one run's intermediates (execution_plan_mem_pattern.h).
struct MemPattern;
// One run's side of the memory pattern: recording or replaying.
class MemPatternRun;

class ExecutionPlan {
 public:
  static Status Build(const Graph& graph, const std::vector<ExecutionProvider*>& providers,
                      const PlanOptions& options, std::unique_ptr<ExecutionPlan>* out);

  // The slot of value `name` in host memory (a device kernel's output gets
  // a slot of its own, "name@Provider", copied here where the host reads it).
  int SlotOf(const std::string& name) const {
    auto it = slot_of_.find(name);
    return it == slot_of_.end() ? -1 : it->second;
  }
  bool IsNodeOutput(int slot) const { return is_node_output_[slot]; }
  // For a device slot holding a graph output that a copy step moves to its
  // host slot: that host slot, whose caller-bound device buffer (IOBinding)
  // the producing kernel then writes directly; -1 otherwise.
  int PresetAlias(int slot) const {
    return slot < static_cast<int>(preset_alias_.size()) ? preset_alias_[slot] : -1;
  }
  // For the host slot of a graph output a device kernel produces: its device
  // slot, which a run asked to leave the output on the device reads (the
  // output's copy to the host is then skipped, or, where a host node reads
  // the value too, the device version is kept to the end of the run); -1
  // otherwise.
  int DeviceTwin(int slot) const {
    return slot < static_cast<int>(device_twin_.size()) ? device_twin_[slot] : -1;
  }

  // Runs all nodes. `values` has one entry per slot; feeds are already placed.
  // Constants are filled here. Graph-output slots keep their values on return.
  // `presets` (null, or one entry per slot) holds caller-bound output buffers:
  // the node producing such a slot writes into it directly, and fails when it
  // would produce another shape or type. `profiler` is null unless profiling
  // is on; then each node is an event.
  // `outer` is the context of the node running this plan as a subgraph (null
  // for the session's graph): names of enclosing graphs resolve through it,
  // and its terminate flag stops this plan too.
  // Memory patterns recorded by runs so far: a caller seeing this grow across
  // a run knows later runs with those shapes take their intermediates from one
  // block, so what the arena cached for this run can go back to the system.
  uint64_t PatternsRecorded() const { return patterns_recorded_.load(); }
  // `inter_op`: the pool a parallel plan (PlanOptions::parallel) runs
  // independent nodes on, the caller's thread taking part; null (or a
  // sequential plan) runs the nodes one by one in plan order.
  // `on_device` (null, or one flag per slot): graph outputs the caller wants
  // in device memory (IOBinding's bind_output to a device): the step copying
  // such an output to the host is skipped and its host slot gets the device
  // value instead.
  Status Execute(std::vector<Value>& values, const std::vector<std::shared_ptr<Tensor>>* presets,
                 const RunOptions* run_options, ThreadPool* threads, Profiler* profiler,
                 const KernelContext* outer = nullptr, ThreadPool* inter_op = nullptr,
                 const std::vector<char>* on_device = nullptr) const;
  size_t num_slots() const { return slot_names_.size(); }
  const std::string& slot_name(int slot) const { return slot_names_[slot]; }
  // Node names in execution order (for tests and the profiler).
  std::vector<std::string> NodeOrder() const;
  // (provider name, node) for each node, in execution order; the pointers
  // live as long as the plan.
  std::vector<std::pair<const std::string*, const Node*>> NodeAssignments() const;

 private:
  struct Step {
    const Node* node = nullptr;
    // Prepared subgraphs of the node's graph attributes; declared before the
    // kernel, which points at them, so they outlive it.
    std::vector<std::unique_ptr<SubgraphRunner>> subgraphs;
    std::unique_ptr<OpKernel> kernel;
    Allocator* allocator = nullptr;
    const std::string* provider = nullptr;
    std::vector<int> inputs;   // -1 for omitted
    std::vector<int> outputs;  // -1 for omitted
    std::vector<int> release;  // slots no longer needed after this step
    // Per output: where it is allocated when not `allocator` (a device
    // kernel's host outputs); empty when all use `allocator`.
    std::vector<Allocator*> output_allocators;
    // Per output: the input whose bytes it may view (KernelContext::
    // OutputView), or -1; empty when none may.
    std::vector<int> views;
    // Per output: the input whose bytes it may be written over (KernelContext::
    // OutputInPlace), or -1; empty when none may.
    std::vector<int> in_place;
    // A copy step whose only job is moving a graph output to the host
    // (DevicePlacement::Finish): skipped for outputs wanted on the device.
    bool output_copy = false;
  };
  friend class DevicePlacement;  // execution_plan_placement.cc: copies between devices
  // Runs one step: the terminate flag, its inputs, the kernel (exceptions
  // become statuses naming the node), its outputs, its profile event.
  Status RunStep(const Step& step, std::vector<Value>& values, const std::vector<std::shared_ptr<Tensor>>* presets,
                 const RunOptions* run_options, ThreadPool* threads, Profiler* profiler, const KernelContext* outer,
                 MemPatternRun* pattern, const std::vector<char>* on_device = nullptr) const;
  // Execute for a parallel plan (execution_plan_parallel.cc).
  Status ExecuteParallel(std::vector<Value>& values, const std::vector<std::shared_ptr<Tensor>>* presets,
                         const RunOptions* run_options, ThreadPool* threads, Profiler* profiler,
                         const KernelContext* outer, ThreadPool* inter_op) const;
  // One parallel run's shared state (execution_plan_parallel.cc).
  struct ParallelRun;
  // Runs ready steps of `run` until none is left; the caller's thread
  // (`is_caller`) then waits until the run is finished.
  static void DrainParallel(const std::shared_ptr<ParallelRun>& run, bool is_caller);
  // Queues helpers for ready steps (run->mu held).
  static void SpawnHelpers(const std::shared_ptr<ParallelRun>& run);
  // Runs step `i` of `run`, frees what no step reads any more; the steps it
  // made ready go to `now_ready`.
  Status RunParallelStep(ParallelRun& run, int i, std::vector<int>* now_ready) const;
  // Decides which of the views the kernels asked for (KernelInfo::
  // AllowOutputView) are safe, fills Step::views and view_root_, and lets
  // each viewed buffer live as long as its last view is read (`last_use`).
  void PlanViews(const Graph& graph, std::vector<int>* last_use);
  // Decides which of the in-place writes the kernels asked for (KernelInfo::
  // AllowOutputInPlace) are safe in a sequential plan (`keep`: graph inputs,
  // outputs, constants), fills Step::in_place, makes such an output a view of
  // its input's bytes (view_root_) and lets those bytes live as long as the
  // output is read (`last_use`).
  void PlanInPlace(const std::unordered_set<int>& keep, std::vector<int>* last_use);
  // The dependency DAG of a parallel plan, from the steps' slots.
  void BuildDependencies(const std::unordered_set<int>& keep, bool release_intermediates);
  void RecordNode(Profiler* profiler, const Step& step, const std::vector<Value>& values,
                  Profiler::Clock::time_point start, Profiler::Clock::time_point end) const;
  std::string DescribeInputs(const Step& step, const std::vector<Value>& values) const;
  // Decides which slots may come from a pattern block (`keep`: slots never
  // released) and with which allocator.
  void PrepareMemPattern(const Graph& graph, const std::unordered_set<int>& keep);

  std::vector<std::string> slot_names_;
  std::unordered_map<std::string, int> slot_of_;
  std::vector<bool> is_node_output_;
  std::vector<std::pair<int, std::shared_ptr<Tensor>>> constants_;
  std::vector<Step> steps_;
  // The copy steps' nodes (names and ops for errors and profiles).
  std::deque<Node> copy_nodes_;
  std::vector<int> preset_alias_;  // see PresetAlias; empty without device providers
  std::vector<int> device_twin_;   // see DeviceTwin; empty without device providers
  // Per slot: the slot whose buffer it may view (itself when it has its own
  // bytes). Views of views lead back to the slot that owns the bytes.
  std::vector<int> view_root_;
  // Providers whose kernels run on a device: synchronized at the end of a run.
  std::vector<ExecutionProvider*> device_providers_;

  // Parallel plans only: per step, the steps that read its outputs, how many
  // steps it waits for, and the distinct slots it reads; per slot, how many
  // steps read it and whether it is freed after the last of them (graph
  // inputs, outputs and constants never are).
  bool parallel_ = false;
  std::vector<std::vector<int>> successors_;
  std::vector<int> predecessor_count_;
  std::vector<std::vector<int>> reads_;
  std::vector<int> reader_count_;
  std::vector<bool> releasable_;

  // Memory pattern state. Patterns are keyed by the fed inputs' types and
  // shapes; a run takes (or records) one under pattern_mu_ and then works on
  // its own copy of the pointers, so concurrent runs never share mutable state.
  friend class MemPatternRun;
  std::vector<int> input_slots_;
  // The allocator every pattern-eligible output uses; null turns patterns off.
  Allocator* pattern_allocator_ = nullptr;
  // Per slot: the step after which it is released (the last step if never).
  std::vector<int> slot_end_;
  mutable std::mutex pattern_mu_;
  // Per slot: may come from the pattern block. Replaced (never changed in
  // place) when a slot turns out to be shared past its release.
  mutable std::shared_ptr<const std::vector<bool>> pattern_eligible_;
  mutable uint64_t pattern_generation_ = 0;  // bumped with each change of pattern_eligible_
  mutable std::map<std::vector<int64_t>, std::shared_ptr<const MemPattern>> patterns_;
  // How many patterns runs have recorded so far (PatternsRecorded).
  mutable std::atomic<uint64_t> patterns_recorded_{0};
};

}  // namespace onyx

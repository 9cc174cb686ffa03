// Session and run options as the engine sees them (the C API copies into these).
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/framework/allocator.h"
#include "core/framework/tensor.h"

namespace onyx {

class ThreadPool;

struct ProviderRequest {
  std::string name;
  std::map<std::string, std::string> options;
};

struct SessionOptions {
  int intra_op_threads = 0;  // 0 = one per core
  int inter_op_threads = 0;
  int graph_optimization_level = 99;
  int execution_mode = 0;  // 0 sequential, 1 parallel
  int log_severity = -1;  // -1: the process default (SetDefaultLogSeverity)
  int log_verbosity = 0;
  std::string log_id;
  std::map<std::string, std::string> config;
  std::vector<ProviderRequest> providers;  // priority order; CPU is appended if absent
  // Free intermediates after their last reader (off: keep them to the run's end).
  bool enable_mem_reuse = true;
  // 0 default (graph order), 1 priority-based, 2 memory-efficient (see PlanOptions).
  int execution_order = 0;
  // When set, the graph as optimized is saved there as ONNX at session creation.
  std::string optimized_model_filepath;
  bool enable_profiling = false;
  std::string profile_file_prefix = "onnxruntime_profile_";
  // Plan intermediates of repeated runs with the same input shapes into one block.
  bool enable_mem_pattern = true;
  // Cache freed CPU buffers for reuse; off allocates and frees each one.
  bool enable_cpu_mem_arena = true;
  // Recorded: every CPU kernel is deterministic for a given thread count.
  bool use_deterministic_compute = false;
  // Free dimensions fixed at load, by dim_param name and by denotation.
  std::map<std::string, int64_t> free_dim_overrides_by_name;
  std::map<std::string, int64_t> free_dim_overrides_by_denotation;
  // Caller-supplied initializers replacing the model's of the same name.
  std::vector<std::pair<std::string, std::shared_ptr<Tensor>>> initializers;
  // A shared CPU allocator (registered with the environment) to use instead
  // of the process default; null for the default.
  std::shared_ptr<Allocator> cpu_allocator;
  // Contents of external data files by the location a model's tensors name
  // (add_external_initializers_from_files_in_memory): read there instead of
  // from disk. Borrowed: the caller keeps each buffer alive while sessions
  // created with these options live.
  std::map<std::string, std::pair<const void*, size_t>> external_files_in_memory;
  // false: run on `shared_thread_pool` (the environment's global pool)
  // instead of a pool of the session's own; the thread counts are then unused.
  bool use_per_session_threads = true;
  std::shared_ptr<ThreadPool> shared_thread_pool;
  // Set (from any thread) to cancel session creations using these options or
  // their copies, which share it: they stop at their next stage.
  std::shared_ptr<std::atomic<bool>> load_cancel = std::make_shared<std::atomic<bool>>(false);
};

// Initializer values by name (a LoRA adapter's parameters).
using NamedTensors = std::vector<std::pair<std::string, std::shared_ptr<Tensor>>>;

struct RunOptions {
  std::string tag;
  int log_severity = -1;  // -1: the session's
  int log_verbosity = 0;
  std::atomic<bool> terminate{false};
  // String-keyed run settings (onnxruntime's run config entries). Keys the
  // engine implements are read at each run (see kRunArenaShrinkKey); others are
  // stored and read back, as onnxruntime does with keys it does not know.
  std::map<std::string, std::string> config;
  // LoRA adapters active for runs with these options: each replaces the
  // model's initializers of the same names for those runs only.
  std::vector<std::shared_ptr<const NamedTensors>> active_adapters;
};

// "cpu:0" (';'-separated device:id list): after the run, return the named
// arenas' idle memory to the system (onnxruntime's run config key).
constexpr const char* kRunArenaShrinkKey = "memory.enable_memory_arena_shrinkage";

// A positive number of bytes: the most the CPU buffers of a session's runs
// (outputs, intermediates, memory-pattern blocks; all runs in flight
// together) may hold at once. A run that would go beyond it fails with FAIL
// naming the key; the session stays usable. Unset: no limit.
constexpr const char* kSessionMemoryLimitKey = "session.memory_limit_bytes";

}  // namespace onyx

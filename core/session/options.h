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
};

struct RunOptions {
  std::string tag;
  int log_severity = -1;  // -1: the session's
  int log_verbosity = 0;
  std::atomic<bool> terminate{false};
  // String-keyed run settings (onnxruntime's run config entries). Keys the
  // engine implements are read at each run (see kRunArenaShrinkKey); others are
  // stored and read back, as onnxruntime does with keys it does not know.
  std::map<std::string, std::string> config;
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

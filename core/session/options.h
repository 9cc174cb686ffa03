// Session and run options as the engine sees them (the C API copies into these).
#pragma once

#include <atomic>
#include <map>
#include <string>
#include <utility>
#include <vector>

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
  int log_severity = 2;
  std::string log_id;
  std::map<std::string, std::string> config;
  std::vector<ProviderRequest> providers;  // priority order; CPU is appended if absent
  // When set, the graph as optimized is saved there as ONNX at session creation.
  std::string optimized_model_filepath;
  bool enable_profiling = false;
  std::string profile_file_prefix = "onnxruntime_profile_";
};

struct RunOptions {
  std::string tag;
  int log_severity = 2;
  std::atomic<bool> terminate{false};
};

}  // namespace onyx

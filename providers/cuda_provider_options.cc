#include "providers/cuda_provider_options.h"

#include <cerrno>
#include <cstdlib>
#include <limits>

namespace onyx {
namespace {

constexpr const char* kProvider = "CUDAExecutionProvider";

Status BadValue(const std::string& key, const std::string& value, const char* expected) {
  return MakeError(ErrorCode::kInvalidArgument, kProvider, " option '", key, "' has invalid value '", value,
                   "': expected ", expected);
}

bool ParseUnsigned(const std::string& v, unsigned long long max, unsigned long long* out) {
  if (v.empty() || v[0] < '0' || v[0] > '9') return false;
  errno = 0;
  char* end = nullptr;
  unsigned long long n = std::strtoull(v.c_str(), &end, 10);
  if (errno == ERANGE || !end || *end != '\0' || n > max) return false;
  *out = n;
  return true;
}

bool ParseBool(const std::string& v, bool* out) {
  if (v == "1" || v == "true" || v == "True") return *out = true, true;
  if (v == "0" || v == "false" || v == "False") return *out = false, true;
  return false;
}

// Named choices, also accepted by their position (onnxruntime takes both).
bool ParseChoice(const std::string& v, std::initializer_list<const char*> names, int* out) {
  int i = 0;
  for (const char* n : names) {
    if (v == n || v == std::to_string(i)) return *out = i, true;
    ++i;
  }
  return false;
}

}  // namespace

Status ParseCudaProviderOptions(const std::map<std::string, std::string>& options, CudaProviderOptions* out) {
  CudaProviderOptions o;
  for (const auto& kv : options) {
    const std::string& k = kv.first;
    const std::string& v = kv.second;
    unsigned long long n = 0;
    if (k == "device_id") {
      if (!ParseUnsigned(v, 1023, &n)) return BadValue(k, v, "a device number from 0");
      o.device_id = static_cast<int>(n);
    } else if (k == "gpu_mem_limit") {
      if (!ParseUnsigned(v, std::numeric_limits<size_t>::max(), &n))
        return BadValue(k, v, "a number of bytes (0 or the largest size_t: no limit)");
      o.gpu_mem_limit = n == std::numeric_limits<size_t>::max() ? 0 : static_cast<size_t>(n);
    } else if (k == "arena_extend_strategy") {
      if (!ParseChoice(v, {"kNextPowerOfTwo", "kSameAsRequested"}, &o.arena_extend_strategy))
        return BadValue(k, v, "kNextPowerOfTwo (0) or kSameAsRequested (1)");
    } else if (k == "cudnn_conv_algo_search") {
      if (!ParseChoice(v, {"EXHAUSTIVE", "HEURISTIC", "DEFAULT"}, &o.cudnn_conv_algo_search))
        return BadValue(k, v, "EXHAUSTIVE (0), HEURISTIC (1) or DEFAULT (2)");
    } else if (k == "do_copy_in_default_stream") {
      if (!ParseBool(v, &o.do_copy_in_default_stream)) return BadValue(k, v, "0 or 1");
      if (!o.do_copy_in_default_stream)
        return MakeError(ErrorCode::kNotImplemented, kProvider, " option 'do_copy_in_default_stream'=0 is not "
                         "supported: copies run on the session's one compute stream; use 1");
    } else if (k == "user_compute_stream") {
      if (!ParseUnsigned(v, std::numeric_limits<uintptr_t>::max(), &n) || n == 0)
        return BadValue(k, v, "the address of a cudaStream_t as a decimal number (not 0)");
      o.user_compute_stream = static_cast<uintptr_t>(n);
      o.has_user_compute_stream = true;
    } else if (k == "use_tf32") {
      if (!ParseBool(v, &o.use_tf32)) return BadValue(k, v, "0 or 1");
    } else if (k == "enable_cuda_graph") {
      if (!ParseBool(v, &o.enable_cuda_graph)) return BadValue(k, v, "0 or 1");
      if (o.enable_cuda_graph)
        return MakeError(ErrorCode::kNotImplemented, kProvider, " option 'enable_cuda_graph'=1 is not supported "
                         "yet: runs launch their kernels one by one; use 0");
    } else {
      return MakeError(ErrorCode::kInvalidArgument, kProvider, " option '", k, "' is not supported. Supported: "
                       "device_id, gpu_mem_limit, arena_extend_strategy, cudnn_conv_algo_search, "
                       "do_copy_in_default_stream, user_compute_stream, use_tf32, enable_cuda_graph");
    }
  }
  *out = o;
  return Status::OK();
}

}  // namespace onyx

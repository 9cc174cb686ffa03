// CUDAExecutionProvider's options (onnxruntime's names and values), parsed
// in the main library so a bad option is reported the same way whether or
// not the provider library loads. Plain data: it crosses into the provider
// library (providers/cuda_provider_abi.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

#include "core/framework/status.h"

namespace onyx {

struct CudaProviderOptions {
  int device_id = 0;
  // Most bytes the device arena may hold (in use and cached); 0 = no limit.
  size_t gpu_mem_limit = 0;
  // 0 kNextPowerOfTwo (round blocks up), 1 kSameAsRequested.
  int arena_extend_strategy = 0;
  // 0 EXHAUSTIVE (benchmark every algorithm once per shape), 1 HEURISTIC, 2 DEFAULT.
  int cudnn_conv_algo_search = 0;
  // Copies run on the session's compute stream (the only value implemented).
  bool do_copy_in_default_stream = true;
  // A cudaStream_t the caller owns, used instead of the session's own stream.
  uintptr_t user_compute_stream = 0;
  bool has_user_compute_stream = false;
  // TF32 tensor cores for float MatMul/Gemm/Conv (changes results in the 1e-3 range).
  bool use_tf32 = false;
  bool enable_cuda_graph = false;
};

// Fills `out` from `options`; INVALID_ARGUMENT naming the option and the
// accepted values for a bad value or an unknown key, NOT_IMPLEMENTED naming
// it for a value this build parses but does not act on.
Status ParseCudaProviderOptions(const std::map<std::string, std::string>& options, CudaProviderOptions* out);

}  // namespace onyx

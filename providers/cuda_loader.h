// Finds and loads libonyxruntime_providers_cuda.so at run time, so the main
// library has no link to CUDA and runs where CUDA is absent.
#pragma once

#include <memory>
#include <string>

#include "providers/cuda_provider_options.h"
#include "providers/provider.h"

namespace onyx {

constexpr const char* kCudaProviderLibrary = "libonyxruntime_providers_cuda.so";
// A path to the provider library, used instead of the one beside
// libonyxruntime.so.
constexpr const char* kCudaProviderPathEnv = "ONYX_CUDA_PROVIDER_PATH";

// Whether a session can use CUDA here: the library loads, its entry matches
// this build and a device answers. Decided once per process. `why` (may be
// null) gets the reason when not: which file failed to load and dlerror()'s
// text, or what the CUDA runtime said.
bool CudaProviderUsable(std::string* why);
// Creates a CUDA provider (CudaProviderUsable must hold).
Status CreateCudaProvider(const CudaProviderOptions& options, std::unique_ptr<ExecutionProvider>* out);

}  // namespace onyx

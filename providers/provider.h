// An execution provider: kernels, allocator and data transfer for one device.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/framework/allocator.h"
#include "providers/kernel.h"

namespace onyx {

class ExecutionProvider {
 public:
  virtual ~ExecutionProvider() = default;
  virtual const std::string& Name() const = 0;
  virtual const KernelRegistry& Kernels() const = 0;
  virtual Allocator* GetAllocator() const = 0;
};

constexpr const char* kCpuProviderName = "CPUExecutionProvider";
constexpr const char* kCudaProviderName = "CUDAExecutionProvider";

// Providers this build can use here, in default priority order.
const std::vector<std::string>& AvailableProviders();
// Every provider name known to the API (available or not).
const std::vector<std::string>& AllProviders();
// OK when `name` is a provider this build can create; INVALID_ARGUMENT naming
// it (unknown, or known but not available here) otherwise.
Status CheckProviderAvailable(const std::string& name);
// Creates the provider called `name`; INVALID_ARGUMENT naming it when unknown
// or not available in this build.
Status CreateProvider(const std::string& name, std::unique_ptr<ExecutionProvider>* out);

}  // namespace onyx

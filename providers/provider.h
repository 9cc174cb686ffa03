// An execution provider: kernels, allocator and data transfer for one device.
#pragma once

#include <functional>
#include <map>
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

  // The device its kernels' tensors live on. Host providers keep kCpu and
  // none of the calls below is made on them.
  virtual DeviceType Device() const { return DeviceType::kCpu; }
  // Whether its kernel `def` reads input `i` (writes output `i`) in host
  // memory: shape, axes and index lists a kernel needs before launching.
  virtual bool InputOnHost(const KernelDef& def, int i) const {
    (void)def;
    (void)i;
    return false;
  }
  virtual bool OutputOnHost(const KernelDef& def, int i) const {
    (void)def;
    (void)i;
    return false;
  }
  // Copies `src` into `dst` (same type and element count), each of them in
  // host memory or on this provider's device. The copy is ordered with this
  // provider's kernels; a copy into host memory has finished on return.
  virtual Status CopyTensor(const Tensor& src, Tensor* dst) const {
    (void)src;
    (void)dst;
    return MakeError(ErrorCode::kNotImplemented, Name(), " has no data transfer");
  }
  // Host memory this provider copies into and out of fastest (CUDA: pinned),
  // used for the host side of its device-to-host copies; null: the session's
  // CPU allocator.
  virtual Allocator* GetHostAllocator() const { return nullptr; }
  // Called on the running thread before a run's first step (a device
  // provider makes its device current there).
  virtual Status OnRunStart() const { return Status::OK(); }
  // Waits until the work its kernels queued has finished (end of a run whose
  // outputs stay on the device).
  virtual Status Synchronize() const { return Status::OK(); }
};

constexpr const char* kCpuProviderName = "CPUExecutionProvider";
constexpr const char* kCudaProviderName = "CUDAExecutionProvider";

using ProviderOptions = std::map<std::string, std::string>;

// Providers this build can use here, in default priority order. The CUDA
// provider is listed only when its library loads and a device answers.
const std::vector<std::string>& AvailableProviders();
// Every provider name known to the API (available or not).
const std::vector<std::string>& AllProviders();
// OK when `name` is a provider this build can create; INVALID_ARGUMENT naming
// it (unknown, or known but not available here, with the reason) otherwise.
Status CheckProviderAvailable(const std::string& name);
// Creates the provider called `name` with its provider options;
// INVALID_ARGUMENT naming it when unknown or not available, and naming the
// option when an option is unknown or its value is bad. The CPU provider
// takes no options.
Status CreateProvider(const std::string& name, const ProviderOptions& options, std::unique_ptr<ExecutionProvider>* out);
inline Status CreateProvider(const std::string& name, std::unique_ptr<ExecutionProvider>* out) {
  return CreateProvider(name, ProviderOptions(), out);
}

// Tests only: lets sessions create provider `name` with `make` (a fake device
// provider in the unit tests; not listed by AvailableProviders()). Call
// before creating sessions.
void RegisterProviderForTesting(const std::string& name,
                                std::function<std::unique_ptr<ExecutionProvider>(const ProviderOptions&)> make);

}  // namespace onyx

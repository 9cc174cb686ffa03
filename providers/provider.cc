#include "providers/provider.h"

#include <mutex>

#include "providers/cpu/cpu_provider.h"
#include "providers/cuda_loader.h"
#include "providers/cuda_provider_options.h"

namespace onyx {
namespace {

using Factory = std::function<std::unique_ptr<ExecutionProvider>(const ProviderOptions&)>;

std::mutex& RegistryMutex() {
  static std::mutex* mu = new std::mutex();
  return *mu;
}

std::vector<std::pair<std::string, Factory>>& TestProviders() {
  static auto* list = new std::vector<std::pair<std::string, Factory>>();
  return *list;
}

const std::vector<std::string>& Available() {
  // CUDA first, as onnxruntime lists it: a session given this list prefers it.
  static std::vector<std::string>* names = [] {
    auto* v = new std::vector<std::string>();
    if (CudaProviderUsable(nullptr)) v->push_back(kCudaProviderName);
    v->push_back(kCpuProviderName);
    return v;
  }();
  return *names;
}

}  // namespace

const std::vector<std::string>& AvailableProviders() {
  std::lock_guard<std::mutex> lock(RegistryMutex());
  return Available();
}

const std::vector<std::string>& AllProviders() {
  // Same spelling as onnxruntime, so provider lists written for it parse here.
  static const std::vector<std::string> names = {
      "TensorrtExecutionProvider", kCudaProviderName, "MIGraphXExecutionProvider",
      "ROCMExecutionProvider", "OpenVINOExecutionProvider", "DnnlExecutionProvider",
      "CoreMLExecutionProvider", "XnnpackExecutionProvider", "QNNExecutionProvider",
      "AzureExecutionProvider", kCpuProviderName};
  return names;
}

void RegisterProviderForTesting(const std::string& name, Factory make) {
  std::lock_guard<std::mutex> lock(RegistryMutex());
  // Not added to AvailableProviders(): other tests in the process read it.
  TestProviders().emplace_back(name, std::move(make));
}

Status CreateProvider(const std::string& name, const ProviderOptions& options,
                      std::unique_ptr<ExecutionProvider>* out) {
  ONYX_RETURN_IF_ERROR(CheckProviderAvailable(name));
  {
    std::lock_guard<std::mutex> lock(RegistryMutex());
    for (const auto& kv : TestProviders())
      if (kv.first == name) {
        *out = kv.second(options);
        return Status::OK();
      }
  }
  if (name == kCudaProviderName) {
    CudaProviderOptions parsed;
    ONYX_RETURN_IF_ERROR(ParseCudaProviderOptions(options, &parsed));
    return CreateCudaProvider(parsed, out);
  }
  if (!options.empty())
    return MakeError(ErrorCode::kInvalidArgument, "provider option '", options.begin()->first, "' of ", name,
                     " is not supported: ", name, " takes no options");
  *out = CreateCpuProvider();
  return Status::OK();
}

Status CheckProviderAvailable(const std::string& name) {
  // Without asking about CUDA: that loads its library and wakes the driver.
  if (name == kCpuProviderName) return Status::OK();
  {
    std::lock_guard<std::mutex> lock(RegistryMutex());
    for (const auto& kv : TestProviders())
      if (kv.first == name) return Status::OK();
  }
  std::string avail;
  for (const auto& n : AvailableProviders()) {
    if (n == name) return Status::OK();
    avail += (avail.empty() ? "" : ", ") + n;
  }
  bool known = false;
  for (const auto& n : AllProviders()) known = known || n == name;
  std::string why;
  if (name == kCudaProviderName && !CudaProviderUsable(&why))
    return MakeError(ErrorCode::kInvalidArgument, "execution provider '", name, "' is not available: ", why,
                     ". Available providers: ", avail);
  return MakeError(ErrorCode::kInvalidArgument, known ? "execution provider '" : "unknown execution provider '", name,
                   known ? "' is not available in this build" : "'", ". Available providers: ", avail);
}

}  // namespace onyx

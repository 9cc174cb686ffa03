#include "providers/provider.h"

#include "providers/cpu/cpu_provider.h"

namespace onyx {

const std::vector<std::string>& AvailableProviders() {
  static const std::vector<std::string> names = {kCpuProviderName};
  return names;
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

Status CreateProvider(const std::string& name, std::unique_ptr<ExecutionProvider>* out) {
  ONYX_RETURN_IF_ERROR(CheckProviderAvailable(name));
  *out = CreateCpuProvider();
  return Status::OK();
}

Status CheckProviderAvailable(const std::string& name) {
  for (const auto& n : AvailableProviders())
    if (n == name) return Status::OK();
  std::string avail;
  for (const auto& n : AvailableProviders()) avail += (avail.empty() ? "" : ", ") + n;
  bool known = false;
  for (const auto& n : AllProviders()) known = known || n == name;
  return MakeError(ErrorCode::kInvalidArgument, known ? "execution provider '" : "unknown execution provider '", name,
                   known ? "' is not available in this build" : "'", ". Available providers: ", avail);
}

}  // namespace onyx

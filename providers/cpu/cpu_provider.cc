#include "providers/cpu/cpu_provider.h"

namespace onyx {
namespace {

class CpuProvider final : public ExecutionProvider {
 public:
  const std::string& Name() const override {
    static const std::string name = kCpuProviderName;
    return name;
  }
  const KernelRegistry& Kernels() const override {
    // Built once per process; read-only afterwards, so shared by all sessions.
    static const KernelRegistry* registry = [] {
      auto* r = new KernelRegistry();
      for (const KernelDef& def : StaticCpuKernelDefs()) r->Register(def);
      return r;
    }();
    return *registry;
  }
  Allocator* GetAllocator() const override { return GetCpuAllocator(); }
};

}  // namespace

std::unique_ptr<ExecutionProvider> CreateCpuProvider() { return std::make_unique<CpuProvider>(); }

}  // namespace onyx

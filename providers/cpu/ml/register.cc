#include "providers/cpu/cpu_provider.h"

namespace onyx {

void RegisterZipMap(KernelRegistry& r);  // zipmap.cc

// Operators of the ai.onnx.ml domain.
void RegisterCpuMlKernels(KernelRegistry& r) { RegisterZipMap(r); }

}  // namespace onyx

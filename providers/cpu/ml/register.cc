#include "providers/cpu/cpu_provider.h"

namespace onyx {

void RegisterLinearClassifier(KernelRegistry& r);  // linear_classifier.cc
void RegisterNormalizer(KernelRegistry& r);        // normalizer.cc
void RegisterZipMap(KernelRegistry& r);            // zipmap.cc

// Operators of the ai.onnx.ml domain.
void RegisterCpuMlKernels(KernelRegistry& r) {
  RegisterLinearClassifier(r);
  RegisterNormalizer(r);
  RegisterZipMap(r);
}

}  // namespace onyx

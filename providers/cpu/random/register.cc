#include "providers/cpu/cpu_provider.h"

namespace onyx {

void RegisterRandomTensor(KernelRegistry& r);  // random_tensor.cc (RandomNormal, RandomUniform, *Like)
void RegisterBernoulli(KernelRegistry& r);     // bernoulli.cc
void RegisterMultinomial(KernelRegistry& r);   // multinomial.cc

void RegisterCpuRandomKernels(KernelRegistry& r) {
  RegisterRandomTensor(r);
  RegisterBernoulli(r);
  RegisterMultinomial(r);
}

}  // namespace onyx

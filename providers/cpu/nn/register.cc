#include "providers/cpu/cpu_provider.h"

namespace onyx {

void RegisterConv(KernelRegistry& r);           // conv.cc (Conv, com.microsoft FusedConv)
void RegisterPool(KernelRegistry& r);           // pool.cc
void RegisterBatchNorm(KernelRegistry& r);      // batch_norm.cc
void RegisterLayerNorm(KernelRegistry& r);      // layer_norm.cc

void RegisterCpuNnKernels(KernelRegistry& r) {
  RegisterConv(r);
  RegisterPool(r);
  RegisterBatchNorm(r);
  RegisterLayerNorm(r);
}

}  // namespace onyx

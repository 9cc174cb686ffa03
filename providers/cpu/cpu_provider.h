#pragma once

#include <memory>

#include "providers/provider.h"

namespace onyx {

std::unique_ptr<ExecutionProvider> CreateCpuProvider();

// One register function per operator family; each lists its operators' files.
void RegisterCpuMathKernels(KernelRegistry& r);
void RegisterCpuNnKernels(KernelRegistry& r);
void RegisterCpuTensorKernels(KernelRegistry& r);
void RegisterCpuReductionKernels(KernelRegistry& r);
void RegisterCpuRandomKernels(KernelRegistry& r);
void RegisterCpuSequenceKernels(KernelRegistry& r);
void RegisterCpuMlKernels(KernelRegistry& r);

}  // namespace onyx

#include "providers/cpu/cpu_provider.h"

namespace onyx {

void RegisterReduce(KernelRegistry& r);  // reduce.cc (ReduceMean, ReduceSum, ReduceMax, ReduceMin, ReduceProd, ...)

void RegisterCpuReductionKernels(KernelRegistry& r) { RegisterReduce(r); }

}  // namespace onyx

#include "providers/cpu/cpu_provider.h"

namespace onyx {

void RegisterReduce(KernelRegistry& r);  // reduce.cc (ReduceMean, ReduceSum, ReduceMax, ReduceMin, ReduceProd, ...)

void RegisterArgReduce(KernelRegistry& r);  // arg_reduce.cc (ArgMax, ArgMin)

void RegisterCpuReductionKernels(KernelRegistry& r) {
  RegisterReduce(r);
  RegisterArgReduce(r);
}

}  // namespace onyx

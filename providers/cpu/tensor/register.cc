#include "providers/cpu/cpu_provider.h"

namespace onyx {

void RegisterCast(KernelRegistry& r);            // cast.cc
void RegisterConcat(KernelRegistry& r);          // concat.cc
void RegisterConstant(KernelRegistry& r);        // constant.cc (Constant, ConstantOfShape)
void RegisterExpand(KernelRegistry& r);          // expand.cc
void RegisterGather(KernelRegistry& r);          // gather.cc
void RegisterReshapeLike(KernelRegistry& r);     // reshape.cc (Reshape, Flatten, Squeeze, Unsqueeze, Identity, Dropout)
void RegisterShape(KernelRegistry& r);           // shape.cc (Shape, Size)
void RegisterSlice(KernelRegistry& r);           // slice.cc
void RegisterTranspose(KernelRegistry& r);       // transpose.cc

void RegisterCpuTensorKernels(KernelRegistry& r) {
  RegisterCast(r);
  RegisterConcat(r);
  RegisterConstant(r);
  RegisterExpand(r);
  RegisterGather(r);
  RegisterReshapeLike(r);
  RegisterShape(r);
  RegisterSlice(r);
  RegisterTranspose(r);
}

}  // namespace onyx

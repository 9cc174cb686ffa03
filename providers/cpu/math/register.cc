#include "providers/cpu/cpu_provider.h"

namespace onyx {

void RegisterElementwiseBinary(KernelRegistry& r);  // elementwise_binary.cc
void RegisterElementwiseUnary(KernelRegistry& r);   // elementwise_unary.cc
void RegisterClip(KernelRegistry& r);               // clip.cc
void RegisterWhere(KernelRegistry& r);              // where.cc
void RegisterSoftmax(KernelRegistry& r);            // softmax.cc
void RegisterGemm(KernelRegistry& r);               // gemm.cc
void RegisterMatMul(KernelRegistry& r);             // matmul.cc

void RegisterCpuMathKernels(KernelRegistry& r) {
  RegisterElementwiseBinary(r);
  RegisterElementwiseUnary(r);
  RegisterClip(r);
  RegisterWhere(r);
  RegisterSoftmax(r);
  RegisterGemm(r);
  RegisterMatMul(r);
}

}  // namespace onyx

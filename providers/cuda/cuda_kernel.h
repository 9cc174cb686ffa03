// How CUDA kernels register and what they see: the session's stream and
// library handles (CudaEnv), owned by the provider that created them.
#pragma once

#include <cuda_runtime.h>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "providers/cuda/cuda_common.h"
#include "providers/cuda/cuda_libs.h"
#include "providers/kernel.h"

namespace onyx {
namespace cuda {

struct CudaEnv {
  cudaStream_t stream = nullptr;
  cublasHandle_t cublas = nullptr;
  const Cublas* blas = nullptr;
  bool use_tf32 = false;
  int device_id = 0;
  // cuDNN, when it loaded (null otherwise; cudnn_error says why): kernels
  // that need it decline at creation then, and the CPU runs their nodes.
  cudnnHandle_t cudnn = nullptr;
  const Cudnn* dnn = nullptr;
  std::string cudnn_error;
  // A cuDNN handle must not be used by two threads at once (concurrent runs
  // of one session): its calls hold this.
  std::mutex* cudnn_mu = nullptr;
  int conv_algo_search = 0;  // CudaProviderOptions::cudnn_conv_algo_search
  Allocator* alloc = nullptr;  // device arena (kernel scratch)
};

class CudaKernel : public OpKernel {
 public:
  explicit CudaKernel(const CudaEnv& env) : env_(env) {}
  Status Init(const KernelInfo&) { return Status::OK(); }

 protected:
  cudaStream_t stream() const { return env_.stream; }
  // The error of the last launch on this thread, naming the kernel.
  static Status LaunchStatus(const char* what) { return CudaStatus(cudaGetLastError(), what); }
  const CudaEnv& env_;
};

using CudaKernelCreateFn = std::function<Status(const KernelInfo&, const CudaEnv&, std::unique_ptr<OpKernel>*)>;

struct CudaKernelDef {
  KernelDef def;  // its `create` is filled by the provider (binding the env)
  CudaKernelCreateFn create;
  std::vector<int> host_inputs;   // read in host memory (shapes, axes)
  std::vector<int> host_outputs;  // written in host memory
};

// Filled at static initialization by ONYX_REGISTER_CUDA_KERNEL.
std::vector<CudaKernelDef>& StaticCudaKernelDefs();

template <typename K>
CudaKernelDef MakeCudaKernelDef(const char* domain, const char* op, int since, int end, std::vector<ElemType> types,
                                std::vector<int> host_inputs = {}, std::vector<int> host_outputs = {}) {
  CudaKernelDef d;
  d.def.domain = domain;
  d.def.op_type = op;
  d.def.since_version = since;
  d.def.end_version = end;
  d.def.types = std::move(types);
  d.host_inputs = std::move(host_inputs);
  d.host_outputs = std::move(host_outputs);
  d.create = [](const KernelInfo& info, const CudaEnv& env, std::unique_ptr<OpKernel>* out) -> Status {
    auto k = std::make_unique<K>(env);
    ONYX_RETURN_IF_ERROR(k->Init(info));
    *out = std::move(k);
    return Status::OK();
  };
  return d;
}

// `axis` counted from the end when negative, checked against `rank` (one
// more allowed with `inclusive`, as Flatten's).
inline Status NormalizeAxis(int64_t axis, int64_t rank, bool inclusive, int64_t* out) {
  const int64_t a = axis < 0 ? axis + rank : axis;
  ONYX_CHECK_ARG(a >= 0 && (a < rank || (inclusive && a == rank)), "axis ", axis, " is out of range for rank ", rank);
  *out = a;
  return Status::OK();
}

// A kernel with an `axis` attribute (default kDefault).
template <int kDefault>
class AxisKernel : public CudaKernel {
 public:
  using CudaKernel::CudaKernel;
  Status Init(const KernelInfo& info) {
    axis_ = info.AttrInt("axis", kDefault);
    return Status::OK();
  }

 protected:
  // The axis for an input of rank `rank` (`inclusive`: rank itself allowed).
  Status Axis(int64_t rank, int64_t* out, bool inclusive = false) const {
    return NormalizeAxis(axis_, rank, inclusive, out);
  }
  int64_t axis_ = kDefault;
};

// Element types of the registrations (input 0), shared by the kernel files.
inline std::vector<ElemType> FloatTypes() { return {ElemType::kFloat, ElemType::kFloat16, ElemType::kBFloat16}; }
inline std::vector<ElemType> ArithTypes() {
  return {ElemType::kFloat, ElemType::kFloat16, ElemType::kBFloat16, ElemType::kDouble, ElemType::kInt32,
          ElemType::kInt64};
}
// Every fixed-size type: for kernels that only move data.
inline std::vector<ElemType> MovableTypes() {
  return {ElemType::kFloat, ElemType::kFloat16, ElemType::kBFloat16, ElemType::kDouble, ElemType::kInt32,
          ElemType::kInt64, ElemType::kInt8, ElemType::kUint8, ElemType::kBool, ElemType::kInt16,
          ElemType::kUint16, ElemType::kUint32, ElemType::kUint64};
}

struct CudaKernelRegistrar {
  explicit CudaKernelRegistrar(CudaKernelDef def) { StaticCudaKernelDefs().push_back(std::move(def)); }
};

}  // namespace cuda
}  // namespace onyx

// One statement at the bottom of a CUDA kernel's file, as ONYX_REGISTER_KERNEL:
// kernel class (constructed from a CudaEnv), domain, op, since, end, element
// types of input 0, then optionally the host-memory inputs and outputs.
#define ONYX_REGISTER_CUDA_KERNEL(Kernel, ...)                                                              \
  static const ::onyx::cuda::CudaKernelRegistrar ONYX_KERNEL_CAT(onyx_cuda_kernel_registrar_, __COUNTER__)( \
      ::onyx::cuda::MakeCudaKernelDef<Kernel>(__VA_ARGS__))

// CUDAExecutionProvider: one stream, one cuBLAS handle and the device arena
// per session; the library's one exported entry (OnyxCudaProviderGetApi).
#include <dlfcn.h>

#include <cstring>
#include <map>
#include <mutex>

#include "providers/cuda/cuda_allocator.h"
#include "providers/cuda/cuda_kernel.h"
#include "providers/cuda_provider_abi.h"

namespace onyx {
namespace cuda {

std::vector<CudaKernelDef>& StaticCudaKernelDefs() {
  static auto* defs = new std::vector<CudaKernelDef>();
  return *defs;
}

namespace {

class CudaProvider final : public ExecutionProvider {
 public:
  explicit CudaProvider(const CudaProviderOptions& o) : options_(o) {}
  ~CudaProvider() override {
    cudaSetDevice(env_.device_id);
    if (env_.stream) cudaStreamSynchronize(env_.stream);
    if (env_.cublas) env_.blas->cublasDestroy_v2(env_.cublas);
    if (env_.cudnn) env_.dnn->cudnnDestroy(env_.cudnn);
    if (own_stream_ && env_.stream) cudaStreamDestroy(env_.stream);
    if (arena_) arena_->Retire();
    if (pinned_) pinned_->Retire();
  }

  Status Init() {
    env_.device_id = options_.device_id;
    env_.use_tf32 = options_.use_tf32;
    ONYX_CUDA_RETURN_IF_ERROR(cudaSetDevice(env_.device_id));
    ONYX_RETURN_IF_ERROR(GetCublas(&env_.blas));
    if (options_.has_user_compute_stream) {
      env_.stream = reinterpret_cast<cudaStream_t>(options_.user_compute_stream);
    } else {
      ONYX_CUDA_RETURN_IF_ERROR(cudaStreamCreateWithFlags(&env_.stream, cudaStreamNonBlocking));
      own_stream_ = true;
    }
    ONYX_RETURN_IF_ERROR(CublasStatus(env_.blas->cublasCreate_v2(&env_.cublas), "cublasCreate"));
    ONYX_RETURN_IF_ERROR(CublasStatus(env_.blas->cublasSetStream_v2(env_.cublas, env_.stream), "cublasSetStream"));
    // TF32 only when asked: it changes float results around 1e-3.
    ONYX_RETURN_IF_ERROR(CublasStatus(
        env_.blas->cublasSetMathMode(env_.cublas, options_.use_tf32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH),
        "cublasSetMathMode"));
    arena_ = new CudaArena(env_.device_id, options_.gpu_mem_limit, options_.arena_extend_strategy);
    env_.alloc = arena_;
    pinned_ = new CudaArena(env_.device_id, 0, options_.arena_extend_strategy, /*pinned_host=*/true);
    env_.conv_algo_search = options_.cudnn_conv_algo_search;
    env_.cudnn_mu = &cudnn_mu_;
    Status dnn = GetCudnn(&env_.dnn);
    if (dnn.ok()) dnn = CudnnStatus(env_.dnn->cudnnCreate(&env_.cudnn), "cudnnCreate");
    if (dnn.ok()) dnn = CudnnStatus(env_.dnn->cudnnSetStream(env_.cudnn, env_.stream), "cudnnSetStream");
    if (!dnn.ok()) {
      if (env_.cudnn) env_.dnn->cudnnDestroy(env_.cudnn);
      env_.cudnn = nullptr;
      env_.dnn = nullptr;
      env_.cudnn_error = dnn.message();
    }
    for (const CudaKernelDef& cd : StaticCudaKernelDefs()) {
      KernelDef d = cd.def;
      const CudaEnv* env = &env_;
      CudaKernelCreateFn make = cd.create;
      d.create = [env, make](const KernelInfo& info, std::unique_ptr<OpKernel>* out) { return make(info, *env, out); };
      registry_.Register(std::move(d));
    }
    // Host-memory inputs and outputs by definition (addresses are stable now).
    for (const KernelDef* d : registry_.Defs())
      for (const CudaKernelDef& cd : StaticCudaKernelDefs())
        if (cd.def.op_type == d->op_type && cd.def.domain == d->domain && cd.def.since_version == d->since_version &&
            cd.def.types == d->types)
          host_io_[d] = {cd.host_inputs, cd.host_outputs};
    return Status::OK();
  }

  const std::string& Name() const override {
    static const std::string name = kCudaProviderName;
    return name;
  }
  const KernelRegistry& Kernels() const override { return registry_; }
  Allocator* GetAllocator() const override { return env_.alloc; }
  Allocator* GetHostAllocator() const override { return pinned_; }
  DeviceType Device() const override { return DeviceType::kCuda; }
  bool InputOnHost(const KernelDef& def, int i) const override { return Has(def, i, true); }
  bool OutputOnHost(const KernelDef& def, int i) const override { return Has(def, i, false); }

  Status CopyTensor(const Tensor& src, Tensor* dst) const override {
    const size_t n = src.bytes();
    if (dst->bytes() != n || dst->type() != src.type())
      return MakeError(ErrorCode::kInvalidArgument, "copy between tensors of different types or sizes (",
                       ElemTypeName(src.type()), ShapeToString(src.dims()), " into ", ElemTypeName(dst->type()),
                       ShapeToString(dst->dims()), ")");
    if (n == 0) return Status::OK();
    const bool from_dev = src.location().device == DeviceType::kCuda;
    const bool to_dev = dst->location().device == DeviceType::kCuda;
    ONYX_CUDA_RETURN_IF_ERROR(cudaSetDevice(env_.device_id));
    if (from_dev && to_dev) {
      ONYX_CUDA_RETURN_IF_ERROR(
          cudaMemcpyAsync(dst->raw(), src.raw(), n, cudaMemcpyDeviceToDevice, env_.stream));
      return Status::OK();
    }
    if (!from_dev && !to_dev) {
      std::memcpy(dst->raw(), src.raw(), n);
      return Status::OK();
    }
    // Host memory of any kind goes straight to cudaMemcpyAsync. Pinned blocks
    // (our host arena's: the outputs of device-to-host copies) move by DMA as
    // they are; pageable ones (the caller's numpy inputs) the driver stages in
    // pieces, overlapping its host copy with the DMA. On an H200, ResNet-50's
    // 19 MB batch-32 input cost a run 2.6 ms that way and 3.6 ms through a
    // staging buffer of ours (a whole host memcpy, then the DMA).
    ONYX_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(dst->raw(), src.raw(), n,
                                              to_dev ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost, env_.stream));
    // A copy into host memory has finished on return (the CPU reads it next).
    if (!to_dev) ONYX_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(env_.stream));
    return Status::OK();
  }

  Status OnRunStart() const override {
    // Kernels launch on the running thread: its current device must be ours.
    ONYX_CUDA_RETURN_IF_ERROR(cudaSetDevice(env_.device_id));
    return Status::OK();
  }

  Status Synchronize() const override {
    ONYX_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(env_.stream));
    return Status::OK();
  }

 private:
  bool Has(const KernelDef& def, int i, bool input) const {
    auto it = host_io_.find(&def);
    if (it == host_io_.end()) return false;
    const std::vector<int>& v = input ? it->second.first : it->second.second;
    for (int x : v)
      if (x == i) return true;
    return false;
  }

  CudaProviderOptions options_;
  CudaEnv env_;
  bool own_stream_ = false;
  CudaArena* arena_ = nullptr;   // never deleted (see CudaArena)
  CudaArena* pinned_ = nullptr;  // host side of device-to-host copies; never deleted either
  std::mutex cudnn_mu_;
  KernelRegistry registry_;
  std::map<const KernelDef*, std::pair<std::vector<int>, std::vector<int>>> host_io_;
};

Status DeviceCount(int* count) {
  *count = 0;
  cudaError_t e = cudaGetDeviceCount(count);
  if (e != cudaSuccess) {
    *count = 0;
    (void)cudaGetLastError();
    // The runtime says "driver version is insufficient" also when there is
    // no driver at all: say which.
    void* driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    const char* derr = driver ? nullptr : dlerror();
    std::string hint = driver ? std::string() : StrCat("; the NVIDIA driver library libcuda.so.1 cannot be loaded (",
                                                       derr ? derr : "unknown error", ")");
    if (driver) dlclose(driver);
    return MakeError(ErrorCode::kEpFail, "cudaGetDeviceCount failed: ", cudaGetErrorName(e), " (",
                     cudaGetErrorString(e), ")", hint);
  }
  return Status::OK();
}

Status Create(const CudaProviderOptions& options, std::unique_ptr<ExecutionProvider>* out) {
  auto p = std::make_unique<CudaProvider>(options);
  ONYX_RETURN_IF_ERROR(p->Init());
  *out = std::move(p);
  return Status::OK();
}

const CudaProviderApi kApi = {kCudaProviderAbi, &DeviceCount, &Create};

}  // namespace
}  // namespace cuda
}  // namespace onyx

extern "C" __attribute__((visibility("default"))) const onyx::CudaProviderApi* OnyxCudaProviderGetApi(uint64_t abi) {
  return abi == onyx::kCudaProviderAbi ? &onyx::cuda::kApi : nullptr;
}

#include "providers/cuda/cuda_allocator.h"

#include <tuple>

#include "providers/cuda/cuda_common.h"

namespace onyx {
namespace cuda {

CudaArena::CudaArena(int device_id, size_t limit, int extend_strategy, bool pinned_host)
    : limit_(limit), extend_strategy_(extend_strategy), pinned_host_(pinned_host) {
  info_.name = pinned_host ? "CudaPinned" : "Cuda";
  info_.device = pinned_host ? DeviceType::kCpu : DeviceType::kCuda;
  info_.device_id = pinned_host ? 0 : device_id;
  info_.mem_type = pinned_host ? -1 : 0;  // OrtMemTypeCPUOutput, as onnxruntime's CudaPinned
  info_.alloc_type = 1;
  info_.vendor_id = 0x10DE;
  device_id_ = device_id;
}

cudaError_t CudaArena::Raw(void** p, size_t n) const {
  return pinned_host_ ? cudaMallocHost(p, n) : cudaMalloc(p, n);
}

void CudaArena::Release(void* p) const {
  if (pinned_host_)
    cudaFreeHost(p);
  else
    cudaFree(p);
}

size_t CudaArena::Round(size_t bytes) const {
  size_t n = (bytes + 255) & ~size_t{255};
  if (extend_strategy_ != 0 || n <= 256) return n;
  // kNextPowerOfTwo up to 1 MiB, then whole MiBs: fewer distinct sizes, so
  // blocks are reused across shapes without doubling large tensors.
  if (n <= (size_t{1} << 20)) {
    size_t p = 256;
    while (p < n) p <<= 1;
    return p;
  }
  return (n + (size_t{1} << 20) - 1) & ~((size_t{1} << 20) - 1);
}

void* CudaArena::Alloc(size_t bytes) {
  if (bytes == 0) return nullptr;
  const size_t n = Round(bytes);
  std::lock_guard<std::mutex> lock(mu_);
  auto it = cache_.find(n);
  if (it != cache_.end() && !it->second.empty()) {
    void* p = it->second.back();
    it->second.pop_back();
    return p;
  }
  if (limit_ && held_ + n > limit_) TrimLocked();
  if (limit_ && held_ + n > limit_)
    ONYX_THROW(ErrorCode::kFail, "CUDA arena: allocating ", n, " bytes would exceed gpu_mem_limit=", limit_,
               " (", held_, " bytes in use on device ", device_id_, ")");
  cudaSetDevice(device_id_);
  void* p = nullptr;
  cudaError_t e = Raw(&p, n);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    TrimLocked();
    e = Raw(&p, n);
  }
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    ONYX_THROW(ErrorCode::kFail, "CUDA out of ", pinned_host_ ? "pinned host memory" : "memory", " allocating ", n,
               " bytes for device ", device_id_, " (", held_, " bytes held by the arena): ", cudaGetErrorString(e));
  }
  size_of_[p] = n;
  held_ += n;
  return p;
}

void CudaArena::Free(void* p) {
  if (!p) return;
  std::lock_guard<std::mutex> lock(mu_);
  auto it = size_of_.find(p);
  if (it == size_of_.end()) return;
  if (retired_) {
    cudaSetDevice(device_id_);
    Release(p);
    held_ -= it->second;
    size_of_.erase(it);
    return;
  }
  cache_[it->second].push_back(p);
}

void CudaArena::Retire() {
  std::lock_guard<std::mutex> lock(mu_);
  TrimLocked();
  retired_ = true;
}

void CudaArena::TrimLocked() {
  // Kernels still queued may use these blocks: wait for the device first.
  cudaSetDevice(device_id_);
  cudaDeviceSynchronize();
  for (auto& kv : cache_) {
    for (void* p : kv.second) {
      Release(p);
      size_of_.erase(p);
      held_ -= kv.first;
    }
  }
  cache_.clear();
}

void CudaArena::Trim() {
  std::lock_guard<std::mutex> lock(mu_);
  TrimLocked();
}

}  // namespace cuda
}  // namespace onyx

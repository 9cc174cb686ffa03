// Device memory: a caching arena over cudaMalloc, one per session, so a
// block freed by one session's stream is never handed to another stream's
// kernels while the first may still read it. Never deleted: tensors handed to
// the caller may outlive the session; Retire() (session end) frees the cache
// and makes later Frees return blocks to CUDA at once.
//
// The same arena over cudaMallocHost (`pinned_host`) holds the host side of
// the session's device-to-host copies ("CudaPinned", CPU memory): its graph
// outputs and the inputs of CPU nodes are copied there straight by DMA, with
// no pass through a staging buffer, and are read in place like any host
// tensor.
#pragma once

#include <map>
#include <mutex>
#include <unordered_map>
#include <vector>

#include <cuda_runtime.h>

#include "core/framework/allocator.h"

namespace onyx {
namespace cuda {

class CudaArena final : public Allocator {
 public:
  CudaArena(int device_id, size_t limit, int extend_strategy, bool pinned_host = false);
  // Throws OnyxException (FAIL, naming the size and gpu_mem_limit) when
  // neither the cache nor cudaMalloc can serve it.
  void* Alloc(size_t bytes) override;
  void Free(void* p) override;
  const MemoryInfo& Info() const override { return info_; }
  void Trim() override;
  void Retire();

 private:
  size_t Round(size_t bytes) const;
  void TrimLocked();
  cudaError_t Raw(void** p, size_t n) const;  // cudaMalloc or cudaMallocHost
  void Release(void* p) const;                // cudaFree or cudaFreeHost
  MemoryInfo info_;
  int device_id_ = 0;
  size_t limit_;  // 0: none
  int extend_strategy_;
  bool pinned_host_;
  std::mutex mu_;
  std::map<size_t, std::vector<void*>> cache_;  // size -> idle blocks
  std::unordered_map<void*, size_t> size_of_;   // every block held, in use or idle
  size_t held_ = 0;
  bool retired_ = false;
};

}  // namespace cuda
}  // namespace onyx

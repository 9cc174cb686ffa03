// Memory allocation. Every buffer the engine owns comes from an Allocator,
// so a device provider can supply its own (CUDA device memory, arenas).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <map>
#include <vector>

namespace onyx {

enum class DeviceType : int { kCpu = 0, kCuda = 1 };

struct MemoryInfo {
  std::string name = "Cpu";
  DeviceType device = DeviceType::kCpu;
  int device_id = 0;
  int mem_type = 0;    // 0 default, matches OnyxMemType
  int alloc_type = 0;  // 0 device allocator, 1 arena
  // As onnxruntime's CreateMemoryInfo_V2 records them: PCI vendor id (0x10DE
  // for NVIDIA), device memory type (0 default, 5 host accessible) and the
  // requested alignment (0 = the allocator's).
  int vendor_id = 0;
  int device_mem_type = 0;
  size_t alignment = 0;
  bool operator==(const MemoryInfo& o) const {
    return name == o.name && device == o.device && device_id == o.device_id && mem_type == o.mem_type;
  }
};

class Allocator {
 public:
  virtual ~Allocator() = default;
  // Returns nullptr only for size 0; throws OnyxException when out of memory.
  virtual void* Alloc(size_t bytes) = 0;
  virtual void Free(void* p) = 0;
  virtual const MemoryInfo& Info() const = 0;
  // Returns memory held idle for reuse to the system (no-op without a cache).
  virtual void Trim() {}
};

// 64-byte aligned host memory; thread-safe.
//
// Freed blocks of at least `min_cached_bytes` are kept in per-size-class free
// lists and handed out again instead of going back to malloc: glibc serves such
// sizes with mmap/munmap, so without the cache every run of a model re-faulted
// (and the kernel re-zeroed) all of its large intermediates, which cost as much
// system time as the kernels' own work. Runs of one model request the same
// sizes each time, so the cache settles at about the run's peak working set;
// `max_cached_total` bounds what is kept idle beyond that. A miss never grows
// the footprint (in use + idle) past the most ever in use at once: idle blocks
// of other sizes are released first, largest first, so a first run, whose
// tensors come in many sizes, peaks at its working set and not at the sum of
// every size it touched. `max_total_bytes`
// (0 = none) caps everything the allocator holds, in use and idle: beyond it
// Alloc trims the cache, then fails (an arena's max_mem).
class CpuAllocator final : public Allocator {
 public:
  explicit CpuAllocator(size_t min_cached_bytes = size_t{64} << 10, size_t max_cached_total = size_t{1} << 30,
                        size_t max_total_bytes = 0);
  ~CpuAllocator() override;
  void* Alloc(size_t bytes) override;
  void Free(void* p) override;
  const MemoryInfo& Info() const override { return info_; }

  // Returns every idle cached block to the system.
  void Trim() override;
  // Bytes held idle in the cache (headers included).
  size_t CachedBytes() const;
  // Bytes handed out and not yet freed (headers and rounding included).
  size_t InUseBytes() const;

 private:
  void TrimLocked();
  // Releases idle blocks, largest first, until the footprint plus `incoming`
  // fits under the peak in use (or the cache is empty).
  void EvictForLocked(size_t incoming);
  // Larger blocks are rare and would pin too much memory while idle. Below
  // it come big outputs, which a caller holds across runs and gives back
  // between them (GPT-2's logits for 8 x 128 tokens are 206 MB: released to
  // the system they cost 50,000 page faults, about 8% of each run); the
  // cache never holds more than the peak in use, so keeping them costs no
  // memory the run did not already take.
  static constexpr size_t kMaxCachedBlock = size_t{1} << 30;
  MemoryInfo info_;
  size_t min_cached_;
  size_t max_cached_total_;
  mutable std::mutex mu_;
  std::map<uint32_t, std::vector<void*>> cache_;  // by size class, ascending
  size_t cached_total_ = 0;
  size_t max_total_;
  size_t in_use_ = 0;
  size_t peak_in_use_ = 0;
};

// The process-wide CPU allocator (never destroyed, so buffers may outlive sessions).
Allocator* GetCpuAllocator();
// The same without a cache: every buffer goes back to the system when freed
// (sessions with enable_cpu_mem_arena off).
Allocator* GetUncachedCpuAllocator();

}  // namespace onyx

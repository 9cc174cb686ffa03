// Memory allocation. Every buffer the engine owns comes from an Allocator,
// so a device provider can supply its own (CUDA device memory, arenas).
#pragma once

#include <cstddef>
#include <memory>
#include <string>

namespace onyx {

enum class DeviceType : int { kCpu = 0, kCuda = 1 };

struct MemoryInfo {
  std::string name = "Cpu";
  DeviceType device = DeviceType::kCpu;
  int device_id = 0;
  int mem_type = 0;    // 0 default, matches OnyxMemType
  int alloc_type = 0;  // 0 device allocator, 1 arena
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
};

// 64-byte aligned host memory; thread-safe.
class CpuAllocator final : public Allocator {
 public:
  void* Alloc(size_t bytes) override;
  void Free(void* p) override;
  const MemoryInfo& Info() const override { return info_; }

 private:
  MemoryInfo info_;
};

// The process-wide CPU allocator (never destroyed, so buffers may outlive sessions).
Allocator* GetCpuAllocator();

}  // namespace onyx

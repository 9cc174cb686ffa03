#include "core/framework/allocator.h"

#include <cstdlib>

#include "core/framework/status.h"

namespace onyx {

void* CpuAllocator::Alloc(size_t bytes) {
  if (bytes == 0) return nullptr;
  constexpr size_t kAlign = 64;
  size_t rounded = (bytes + kAlign - 1) / kAlign * kAlign;
  void* p = std::aligned_alloc(kAlign, rounded);
  if (!p) ONYX_THROW(ErrorCode::kFail, "CPU allocator: out of memory allocating ", bytes, " bytes");
  return p;
}

void CpuAllocator::Free(void* p) { std::free(p); }

Allocator* GetCpuAllocator() {
  static CpuAllocator* alloc = new CpuAllocator();
  return alloc;
}

}  // namespace onyx

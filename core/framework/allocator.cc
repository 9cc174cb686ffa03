#include "core/framework/allocator.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <utility>
#include <vector>

#include <sys/mman.h>
#include <unistd.h>

#include "core/framework/status.h"

namespace onyx {

namespace {

constexpr size_t kAlign = 64;
// Each block starts with one alignment unit that remembers its size class, so
// Free (which gets no size) knows where a block may be cached.
constexpr size_t kHeader = kAlign;
constexpr uint32_t kUncached = UINT32_MAX;

// Size classes: 8 steps per power of two, so rounding wastes at most 12.5%.
// Class c (c >= 0) holds blocks of ClassBytes(c) payload bytes.
constexpr size_t kStepsLog2 = 3;

size_t ClassBytes(uint32_t c) {
  const size_t octave = c >> kStepsLog2, step = c & ((1u << kStepsLog2) - 1);
  const size_t base = size_t{1} << (octave + kStepsLog2);
  return base + step * (base >> kStepsLog2);
}

uint32_t ClassOf(size_t bytes) {
  // Smallest class whose size is >= bytes.
  size_t octave = 0;
  while ((size_t{1} << (octave + kStepsLog2 + 1)) < bytes) ++octave;
  uint32_t c = static_cast<uint32_t>(octave << kStepsLog2);
  while (ClassBytes(c) < bytes) ++c;
  return c;
}

struct Header {
  uint32_t size_class;
  size_t block_bytes;  // what the block counts against the limit (header included)
};

// Blocks from this size on are mapped from the system directly, not taken
// from malloc: glibc raises its own mmap threshold (up to 32 MiB) each time
// it unmaps a block, so after a session's creation frees its unpacked
// weights, intermediates of a few MiB come from the brk heap, where freed
// ones between longer-lived outputs cannot go back to the system (GPT-2
// prefill at batch 8: ~80 MB more resident than its live tensors). A mapped
// block leaves nothing behind when it is unmapped. Sanitizer builds keep
// malloc so AddressSanitizer still guards every tensor.
#if defined(__SANITIZE_ADDRESS__)
constexpr size_t kMapFrom = SIZE_MAX;
#else
constexpr size_t kMapFrom = size_t{1} << 20;
#endif

size_t PageRounded(size_t bytes) {
  static const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return (bytes + page - 1) / page * page;
}

void* SystemAlloc(size_t block_bytes) {
  if (block_bytes >= kMapFrom) {
    void* p = mmap(nullptr, PageRounded(block_bytes), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? nullptr : p;
  }
  return std::aligned_alloc(kAlign, block_bytes);
}

// Gives back a block SystemAlloc made for `block_bytes`.
void SystemFree(void* block, size_t block_bytes) {
  if (block_bytes >= kMapFrom) munmap(block, PageRounded(block_bytes));
  else std::free(block);
}

size_t BlockBytes(const void* block) {
  Header h;
  std::memcpy(&h, block, sizeof(h));
  return h.block_bytes;
}

}  // namespace

CpuAllocator::CpuAllocator(size_t min_cached_bytes, size_t max_cached_total, size_t max_total_bytes)
    : min_cached_(min_cached_bytes), max_cached_total_(max_cached_total), max_total_(max_total_bytes) {}

CpuAllocator::~CpuAllocator() { Trim(); }

void* CpuAllocator::Alloc(size_t bytes) {
  if (bytes == 0) return nullptr;
  // Beyond this the rounding below would wrap around to a small block.
  if (bytes > (SIZE_MAX >> 1))
    ONYX_THROW(ErrorCode::kFail, "CPU allocator: cannot allocate ", bytes, " bytes");
  const bool cacheable = bytes >= min_cached_ && bytes <= kMaxCachedBlock;
  const uint32_t c = cacheable ? ClassOf(bytes) : kUncached;
  const size_t payload = cacheable ? ClassBytes(c) : (bytes + kAlign - 1) / kAlign * kAlign;
  const size_t block_bytes = payload + kHeader;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (cacheable) {
      auto it = cache_.find(c);
      if (it != cache_.end() && !it->second.empty()) {
        void* block = it->second.back();
        it->second.pop_back();
        cached_total_ -= block_bytes;
        in_use_ += block_bytes;
        peak_in_use_ = std::max(peak_in_use_, in_use_);
        return static_cast<char*>(block) + kHeader;
      }
    }
    if (max_total_ != 0 && in_use_ + cached_total_ + block_bytes > max_total_) {
      // Idle cached blocks give way before the limit is declared reached.
      TrimLocked();
      if (in_use_ + block_bytes > max_total_)
        ONYX_THROW(ErrorCode::kFail, "CPU allocator: cannot allocate ", bytes, " bytes: the allocator's limit (max_mem) of ",
                   max_total_, " bytes would be exceeded (", in_use_, " bytes in use)");
    }
    EvictForLocked(block_bytes);
    in_use_ += block_bytes;
    peak_in_use_ = std::max(peak_in_use_, in_use_);
  }
  void* block = SystemAlloc(block_bytes);
  if (!block) {
    std::lock_guard<std::mutex> lock(mu_);
    in_use_ -= block_bytes;
    ONYX_THROW(ErrorCode::kFail, "CPU allocator: out of memory allocating ", bytes, " bytes");
  }
  Header h{c, block_bytes};
  std::memcpy(block, &h, sizeof(h));
  return static_cast<char*>(block) + kHeader;
}

void CpuAllocator::Free(void* p) {
  if (p == nullptr) return;
  void* block = static_cast<char*>(p) - kHeader;
  Header h;
  std::memcpy(&h, block, sizeof(h));
  {
    std::lock_guard<std::mutex> lock(mu_);
    in_use_ -= h.block_bytes;
    if (h.size_class != kUncached && cached_total_ + h.block_bytes <= max_cached_total_) {
      cache_[h.size_class].push_back(block);
      cached_total_ += h.block_bytes;
      return;
    }
  }
  SystemFree(block, h.block_bytes);
}

void CpuAllocator::EvictForLocked(size_t incoming) {
  const size_t allowed = std::max(peak_in_use_, in_use_ + incoming);
  if (cached_total_ == 0 || in_use_ + cached_total_ + incoming <= allowed) return;
  std::vector<std::pair<void*, size_t>> release;
  for (auto it = cache_.rbegin(); it != cache_.rend() && in_use_ + cached_total_ + incoming > allowed; ++it) {
    std::vector<void*>& blocks = it->second;
    while (!blocks.empty() && in_use_ + cached_total_ + incoming > allowed) {
      const size_t bytes = BlockBytes(blocks.back());
      cached_total_ -= bytes;
      release.emplace_back(blocks.back(), bytes);
      blocks.pop_back();
    }
  }
  for (const auto& b : release) SystemFree(b.first, b.second);
}

void CpuAllocator::Trim() {
  std::lock_guard<std::mutex> lock(mu_);
  TrimLocked();
}

void CpuAllocator::TrimLocked() {
  for (auto& kv : cache_)
    for (void* block : kv.second) SystemFree(block, BlockBytes(block));
  cache_.clear();
  cached_total_ = 0;
}

size_t CpuAllocator::CachedBytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return cached_total_;
}

size_t CpuAllocator::InUseBytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return in_use_;
}

Allocator* GetCpuAllocator() {
  static CpuAllocator* alloc = new CpuAllocator();
  return alloc;
}

Allocator* GetUncachedCpuAllocator() {
  // min_cached_bytes beyond any block: nothing is ever kept for reuse.
  static CpuAllocator* alloc = new CpuAllocator(SIZE_MAX, 0);
  return alloc;
}

}  // namespace onyx

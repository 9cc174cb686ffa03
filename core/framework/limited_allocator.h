// A byte budget over another allocator (the session config entry
// "session.memory_limit_bytes"); apart from allocator.h so that the many
// files including that one do not depend on it.
#pragma once

#include <cstddef>
#include <mutex>
#include <unordered_map>

#include "core/framework/allocator.h"

namespace onyx {

// Alloc throws (FAIL, naming the limit and the
// request) when the buffers handed out and not yet freed would exceed it.
//
// Tensors keep a raw pointer to the allocator that made their buffer, and a
// run's outputs may outlive the session, so the owner never deletes one:
// it calls Release(), and the object deletes itself once its last buffer is
// freed (at once when none is out).
class LimitedAllocator final : public Allocator {
 public:
  static LimitedAllocator* Create(Allocator* inner, size_t limit_bytes) { return new LimitedAllocator(inner, limit_bytes); }
  void* Alloc(size_t bytes) override;
  void Free(void* p) override;
  const MemoryInfo& Info() const override { return inner_->Info(); }
  void Trim() override { inner_->Trim(); }
  // The owner is done with it; see the class comment.
  void Release();
  size_t InUseBytes() const;
  size_t limit() const { return limit_; }

 private:
  LimitedAllocator(Allocator* inner, size_t limit_bytes) : inner_(inner), limit_(limit_bytes) {}
  ~LimitedAllocator() override = default;
  Allocator* inner_;
  size_t limit_;
  mutable std::mutex mu_;
  std::unordered_map<void*, size_t> sizes_;
  size_t in_use_ = 0;
  bool released_ = false;
};

}  // namespace onyx

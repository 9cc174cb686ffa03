#include "core/framework/limited_allocator.h"

#include "core/framework/status.h"

namespace onyx {

void* LimitedAllocator::Alloc(size_t bytes) {
  if (bytes == 0) return nullptr;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (bytes > limit_ || in_use_ > limit_ - bytes)
      ONYX_THROW(ErrorCode::kFail, "cannot allocate ", bytes, " bytes: the session's memory limit (session config entry "
                 "'session.memory_limit_bytes') of ", limit_, " bytes would be exceeded (", in_use_, " bytes in use)");
    in_use_ += bytes;
  }
  void* p = nullptr;
  try {
    p = inner_->Alloc(bytes);
  } catch (...) {
    std::lock_guard<std::mutex> lock(mu_);
    in_use_ -= bytes;
    throw;
  }
  std::lock_guard<std::mutex> lock(mu_);
  sizes_[p] = bytes;
  return p;
}

void LimitedAllocator::Free(void* p) {
  if (p == nullptr) return;
  bool done = false;
  {
    // Forgotten before the inner allocator may hand the address out again.
    std::lock_guard<std::mutex> lock(mu_);
    auto it = sizes_.find(p);
    if (it != sizes_.end()) {
      in_use_ -= it->second;
      sizes_.erase(it);
    }
    done = released_ && sizes_.empty();
  }
  inner_->Free(p);
  if (done) delete this;
}

void LimitedAllocator::Release() {
  bool done = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    released_ = true;
    done = sizes_.empty();
  }
  if (done) delete this;
}

size_t LimitedAllocator::InUseBytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return in_use_;
}

}  // namespace onyx

// A dense tensor: element type, shape and a buffer that is either owned
// (through an Allocator) or borrowed from the caller (zero copy).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/framework/allocator.h"
#include "core/framework/data_type.h"

namespace onyx {

using Dims = std::vector<int64_t>;

// Number of elements of a shape (1 for a scalar); -1 if a dim is negative.
int64_t ShapeSize(const Dims& dims);
// "[1,3,224,224]"
std::string ShapeToString(const Dims& dims);

class Tensor {
 public:
  Tensor() = default;
  // Allocates storage from `alloc`; strings are default-constructed, other
  // types are left uninitialised.
  Tensor(ElemType type, Dims dims, Allocator* alloc = GetCpuAllocator());
  // Borrows `data`; the caller keeps it alive and valid for the tensor's life.
  Tensor(ElemType type, Dims dims, void* data, const MemoryInfo& info);
  // Uses `data`, kept alive by `owner` (e.g. a mapped file or a moved string).
  Tensor(ElemType type, Dims dims, std::shared_ptr<void> owner, void* data, const MemoryInfo& info);

  Tensor(Tensor&&) noexcept = default;
  Tensor& operator=(Tensor&&) noexcept = default;
  Tensor(const Tensor&) = delete;
  Tensor& operator=(const Tensor&) = delete;

  // Deep copy into memory owned by `alloc` (CPU only).
  Tensor Clone(Allocator* alloc = GetCpuAllocator()) const;

  ElemType type() const { return type_; }
  const Dims& dims() const { return dims_; }
  size_t rank() const { return dims_.size(); }
  int64_t size() const { return size_; }
  size_t bytes() const { return StorageBytes(type_, static_cast<size_t>(size_)); }
  bool owns_data() const { return buffer_ != nullptr; }
  const MemoryInfo& location() const { return location_; }

  void* raw() { return data_; }
  const void* raw() const { return data_; }
  template <typename T>
  T* data() { return static_cast<T*>(data_); }
  template <typename T>
  const T* data() const { return static_cast<const T*>(data_); }

  // Changes the shape without touching the data; sizes must match.
  void Reshape(Dims dims);
  // Another tensor of shape `dims` (same element count) over the same bytes:
  // it shares ownership of an owned buffer, and borrows what this tensor
  // borrows (valid as long as the lender's memory). Writes through either
  // show in both.
  Tensor View(Dims dims) const;

 private:
  ElemType type_ = ElemType::kUndefined;
  Dims dims_;
  int64_t size_ = 0;
  void* data_ = nullptr;
  std::shared_ptr<void> buffer_;  // null when borrowed
  MemoryInfo location_;
};

}  // namespace onyx

#include "core/framework/tensor.h"

#include <cstdint>
#include <cstring>
#include <new>

#include "core/framework/status.h"

namespace onyx {

int64_t ShapeSize(const Dims& dims) {
  int64_t n = 1;
  bool overflow = false, empty = false;
  for (int64_t d : dims) {
    if (d < 0) return -1;
    empty = empty || d == 0;
    if (!overflow && __builtin_mul_overflow(n, d, &n)) overflow = true;
  }
  // A zero dim anywhere makes the product 0, whatever came before it.
  if (empty) return 0;
  return overflow ? -1 : n;
}

std::string ShapeToString(const Dims& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) s += ",";
    s += std::to_string(dims[i]);
  }
  return s + "]";
}

Tensor::Tensor(ElemType type, Dims dims, Allocator* alloc)
    : type_(type), dims_(std::move(dims)), size_(ShapeSize(dims_)), location_(alloc->Info()) {
  if (size_ < 0)
    ONYX_THROW(ErrorCode::kInvalidArgument, "negative dimension or too many elements in shape ", ShapeToString(dims_));
  // 16 bytes is the widest element (complex128); beyond this bytes() wraps.
  if (static_cast<uint64_t>(size_) > (SIZE_MAX >> 5))
    ONYX_THROW(ErrorCode::kFail, "cannot allocate a tensor of shape ", ShapeToString(dims_), ": too many elements");
  size_t nbytes = StorageBytes(type_, static_cast<size_t>(size_));
  if (type_ != ElemType::kString && ElemSize(type_) == 0 && StorageBytes(type_, 2) == 0)
    ONYX_THROW(ErrorCode::kInvalidArgument, "unsupported tensor element type ", static_cast<int>(type_));
  // Keep a non-null owner even for empty tensors so owns_data() stays meaningful.
  void* p = alloc->Alloc(nbytes == 0 ? 1 : nbytes);
  if (type_ == ElemType::kString) {
    auto* s = static_cast<std::string*>(p);
    for (int64_t i = 0; i < size_; ++i) new (s + i) std::string();
    int64_t n = size_;
    buffer_ = std::shared_ptr<void>(p, [alloc, n](void* q) {
      auto* str = static_cast<std::string*>(q);
      for (int64_t i = 0; i < n; ++i) str[i].~basic_string();
      alloc->Free(q);
    });
  } else {
    buffer_ = std::shared_ptr<void>(p, [alloc](void* q) { alloc->Free(q); });
  }
  data_ = p;
}

Tensor::Tensor(ElemType type, Dims dims, void* data, const MemoryInfo& info)
    : type_(type), dims_(std::move(dims)), size_(ShapeSize(dims_)), data_(data), location_(info) {
  if (size_ < 0)
    ONYX_THROW(ErrorCode::kInvalidArgument, "negative dimension or too many elements in shape ", ShapeToString(dims_));
}

Tensor::Tensor(ElemType type, Dims dims, std::shared_ptr<void> owner, void* data, const MemoryInfo& info)
    : Tensor(type, std::move(dims), data, info) {
  buffer_ = std::move(owner);
}

Tensor Tensor::Clone(Allocator* alloc) const {
  Tensor t(type_, dims_, alloc);
  if (type_ == ElemType::kString) {
    const auto* src = data<std::string>();
    auto* dst = t.data<std::string>();
    for (int64_t i = 0; i < size_; ++i) dst[i] = src[i];
  } else if (bytes() > 0) {
    std::memcpy(t.data_, data_, bytes());
  }
  return t;
}

void Tensor::Reshape(Dims dims) {
  if (ShapeSize(dims) != size_)
    ONYX_THROW(ErrorCode::kInvalidArgument, "cannot reshape ", ShapeToString(dims_), " to ", ShapeToString(dims));
  dims_ = std::move(dims);
}

Tensor Tensor::View(Dims dims) const {
  if (ShapeSize(dims) != size_)
    ONYX_THROW(ErrorCode::kInvalidArgument, "cannot view ", ShapeToString(dims_), " as ", ShapeToString(dims));
  return Tensor(type_, std::move(dims), buffer_, data_, location_);
}

}  // namespace onyx

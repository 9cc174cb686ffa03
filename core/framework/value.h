// A runtime value: a tensor today; sequence, map, optional and sparse tensor
// have their slot in Kind so the C ABI and bindings need not change shape.
#pragma once

#include <memory>
#include <vector>

#include "core/framework/tensor.h"

namespace onyx {

class Value {
 public:
  enum class Kind { kNone = 0, kTensor = 1, kSequence = 2, kMap = 3, kOptional = 4, kSparseTensor = 5 };

  Value() = default;
  explicit Value(Tensor t) : kind_(Kind::kTensor), tensor_(std::make_shared<Tensor>(std::move(t))) {}
  explicit Value(std::shared_ptr<Tensor> t) : kind_(Kind::kTensor), tensor_(std::move(t)) {}

  static Value Sequence(std::vector<Value> items) {
    Value v;
    v.kind_ = Kind::kSequence;
    v.items_ = std::make_shared<std::vector<Value>>(std::move(items));
    return v;
  }

  Kind kind() const { return kind_; }
  bool IsTensor() const { return kind_ == Kind::kTensor; }
  bool HasValue() const { return kind_ != Kind::kNone; }

  Tensor& tensor() { return *tensor_; }
  const Tensor& tensor() const { return *tensor_; }
  const std::shared_ptr<Tensor>& tensor_ptr() const { return tensor_; }
  const std::vector<Value>& items() const { return *items_; }

 private:
  Kind kind_ = Kind::kNone;
  std::shared_ptr<Tensor> tensor_;
  std::shared_ptr<std::vector<Value>> items_;
};

}  // namespace onyx

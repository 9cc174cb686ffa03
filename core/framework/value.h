// A runtime value: a tensor, a sequence of values, a map (a keys tensor and a
// values tensor of one length, as onnxruntime's C API presents maps) or an
// optional (empty or holding one value) or a sparse tensor. Copies share the underlying data.
#pragma once

#include <memory>
#include <vector>

#include "core/framework/sparse_tensor.h"
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

  // Keys and values: 1-D tensors of the same length.
  static Value Map(std::shared_ptr<Tensor> keys, std::shared_ptr<Tensor> values) {
    Value v;
    v.kind_ = Kind::kMap;
    std::vector<Value> kv;
    kv.emplace_back(std::move(keys));
    kv.emplace_back(std::move(values));
    v.items_ = std::make_shared<std::vector<Value>>(std::move(kv));
    return v;
  }
  // An optional holding `inner`, or empty when `inner` has no value.
  static Value Optional(Value inner) {
    Value v;
    v.kind_ = Kind::kOptional;
    std::vector<Value> items;
    if (inner.HasValue()) items.push_back(std::move(inner));
    v.items_ = std::make_shared<std::vector<Value>>(std::move(items));
    return v;
  }

  // A sparse tensor (checked by MakeSparseTensor).
  static Value Sparse(std::shared_ptr<SparseTensor> s) {
    Value v;
    v.kind_ = Kind::kSparseTensor;
    v.sparse_ = std::move(s);
    return v;
  }

  Kind kind() const { return kind_; }
  bool IsTensor() const { return kind_ == Kind::kTensor; }
  bool HasValue() const { return kind_ != Kind::kNone; }

  Tensor& tensor() { return *tensor_; }
  const Tensor& tensor() const { return *tensor_; }
  const std::shared_ptr<Tensor>& tensor_ptr() const { return tensor_; }
  // Sequence elements; for a map {keys, values}; for an optional zero or one item.
  const std::vector<Value>& items() const { return *items_; }
  bool IsSequence() const { return kind_ == Kind::kSequence; }
  bool IsSparse() const { return kind_ == Kind::kSparseTensor; }
  const SparseTensor& sparse() const { return *sparse_; }

 private:
  Kind kind_ = Kind::kNone;
  std::shared_ptr<Tensor> tensor_;
  std::shared_ptr<std::vector<Value>> items_;
  std::shared_ptr<SparseTensor> sparse_;
};

}  // namespace onyx

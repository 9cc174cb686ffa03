// Runs one CPU kernel on given tensors, without a session: for kernel unit tests.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "providers/cpu/cpu_provider.h"

namespace onyx {
namespace testing {

// The one KernelContext test double, shared by every kernel test: inputs are
// values of any kind (tensors, sequences, maps, optionals; a Value without a
// value is an omitted input), outputs are kept as values, and `pool` (may be
// null) is the thread pool kernels see, so parallel paths can run too. Made
// from tensors, it holds tensors only, as constant folding's context does: no
// non-tensor inputs, and non-tensor outputs are refused (KernelContext's defaults).
class TestKernelContext final : public KernelContext {
 public:
  TestKernelContext(std::vector<Value> inputs, size_t num_outputs, ThreadPool* pool = nullptr)
      : inputs_(std::move(inputs)), outputs_(num_outputs), pool_(pool) {}
  // Tensor inputs (null = omitted), borrowed: they must outlive the context.
  TestKernelContext(const std::vector<const Tensor*>& inputs, size_t num_outputs, ThreadPool* pool = nullptr)
      : TestKernelContext(Borrow(inputs), num_outputs, pool) {
    tensors_only_ = true;
  }

  int InputCount() const override { return static_cast<int>(inputs_.size()); }
  const Tensor* Input(int i) const override {
    const Value* v = Held(i);
    return v && v->IsTensor() ? &v->tensor() : nullptr;
  }
  const Value* InputValue(int i) const override { return tensors_only_ ? nullptr : Held(i); }
  int OutputCount() const override { return static_cast<int>(outputs_.size()); }
  Tensor* Output(int i, const Dims& dims, ElemType type) override {
    auto t = std::make_shared<Tensor>(type, dims);
    outputs_.at(i) = Value(t);
    return t.get();
  }
  Status SetOutputValue(int i, Value v) override {
    if (tensors_only_) return KernelContext::SetOutputValue(i, std::move(v));
    outputs_.at(i) = std::move(v);
    return Status::OK();
  }
  ThreadPool* threads() const override { return pool_; }
  bool terminate_requested() const override { return false; }

  std::vector<Value>& outputs() { return outputs_; }
  // Output `i` moved out as a tensor; null when it is not one (or was not made).
  std::unique_ptr<Tensor> TakeTensor(size_t i) {
    if (!outputs_.at(i).IsTensor()) return nullptr;
    return std::make_unique<Tensor>(std::move(outputs_[i].tensor()));
  }

 private:
  const Value* Held(int i) const {
    return i >= 0 && i < InputCount() && inputs_[i].HasValue() ? &inputs_[i] : nullptr;
  }
  static std::vector<Value> Borrow(const std::vector<const Tensor*>& tensors) {
    std::vector<Value> v;
    for (const Tensor* t : tensors)
      // Aliasing constructor with no owner: the value points at the caller's tensor.
      v.push_back(t ? Value(std::shared_ptr<Tensor>(std::shared_ptr<Tensor>(), const_cast<Tensor*>(t))) : Value());
    return v;
  }

  std::vector<Value> inputs_;
  std::vector<Value> outputs_;
  ThreadPool* pool_;
  bool tensors_only_ = false;
};

// The CPU kernel for `node`, found and created once (as a session does) and
// run as often as wanted. `types` are the declared input types (TypeInfo() for
// unknown). When the node names no inputs they are "in0", "in1", ... ("" where
// `present` says false); when it names no outputs it has one, "out0".
class TestKernel {
 public:
  explicit TestKernel(Node node, std::vector<TypeInfo> types = {}, const std::vector<bool>& present = {})
      : node_(std::move(node)), types_(std::move(types)) {
    if (node_.inputs.empty())
      for (size_t i = 0; i < types_.size(); ++i)
        node_.inputs.push_back(i >= present.size() || present[i] ? "in" + std::to_string(i) : "");
    if (node_.outputs.empty()) node_.outputs = {"out0"};
    if (node_.name.empty()) node_.name = "test_" + node_.op_type;
    std::string why;
    const KernelDef* def = CpuKernels().Find(node_, types_, &why);
    if (!def) {
      created_ = MakeError(ErrorCode::kNotImplemented, node_.Describe(), ": ", why);
      return;
    }
    KernelInfo info(node_, graph_, types_);
    created_ = def->create(info, &kernel_);
  }

  const Status& created() const { return created_; }
  const Node& node() const { return node_; }
  Status Run(TestKernelContext& ctx) const {
    ONYX_RETURN_IF_ERROR(created_);
    return kernel_->Compute(ctx);
  }

 private:
  static const KernelRegistry& CpuKernels() {
    static const std::unique_ptr<ExecutionProvider> cpu = CreateCpuProvider();
    return cpu->Kernels();
  }

  Node node_;
  std::vector<TypeInfo> types_;
  Graph graph_;
  Status created_;
  std::unique_ptr<OpKernel> kernel_;
};

// Finds the CPU kernel for `node` (its since_version set to the opset to test),
// creates it and runs it, on `pool` when given. Node input names are set to
// "in0", "in1", ... ("" for null inputs) and outputs to "out0", ... when left
// empty.
inline Status RunCpuKernel(Node node, const std::vector<const Tensor*>& inputs, size_t num_outputs,
                           std::vector<std::unique_ptr<Tensor>>* outputs, ThreadPool* pool = nullptr) {
  if (node.outputs.empty())
    for (size_t i = 0; i < num_outputs; ++i) node.outputs.push_back("out" + std::to_string(i));
  std::vector<TypeInfo> types;
  std::vector<bool> present;
  for (const Tensor* t : inputs) {
    types.push_back(t ? TypeInfo::Tensor(t->type()) : TypeInfo());
    present.push_back(t != nullptr);
  }
  TestKernel kernel(std::move(node), std::move(types), present);
  TestKernelContext ctx(inputs, num_outputs, pool);
  ONYX_RETURN_IF_ERROR(kernel.Run(ctx));
  outputs->clear();
  for (size_t i = 0; i < num_outputs; ++i) outputs->push_back(ctx.TakeTensor(i));
  return Status::OK();
}

// Nodes and attributes for kernel tests.
inline Node MakeNode(const std::string& op, int opset) {
  Node n;
  n.op_type = op;
  n.since_version = opset;
  return n;
}

inline void SetInt(Node& n, const std::string& k, int64_t v) {
  Attribute a;
  a.type = Attribute::Type::kInt;
  a.i = v;
  n.attrs[k] = a;
}

inline void SetFloat(Node& n, const std::string& k, float v) {
  Attribute a;
  a.type = Attribute::Type::kFloat;
  a.f = v;
  n.attrs[k] = a;
}

inline void SetInts(Node& n, const std::string& k, std::vector<int64_t> v) {
  Attribute a;
  a.type = Attribute::Type::kInts;
  a.ints = std::move(v);
  n.attrs[k] = a;
}

// Runs a one-output kernel, failing the test (and returning an empty tensor)
// on error.
inline Tensor Run1(const Node& n, const std::vector<const Tensor*>& in) {
  std::vector<std::unique_ptr<Tensor>> out;
  Status s = RunCpuKernel(n, in, 1, &out);
  EXPECT_TRUE(s.ok()) << s.message();
  if (!s.ok() || !out[0]) return Tensor();
  return std::move(*out[0]);
}

template <typename T>
Tensor MakeTensor(const Dims& dims, const std::vector<T>& values) {
  Tensor t(ElemTypeOf<T>::value, dims);
  for (size_t i = 0; i < values.size(); ++i) t.data<T>()[i] = values[i];
  return t;
}

template <typename T>
std::vector<T> ToVector(const Tensor& t) {
  return std::vector<T>(t.data<T>(), t.data<T>() + t.size());
}

}  // namespace testing
}  // namespace onyx

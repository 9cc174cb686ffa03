// Runs one CPU kernel on given tensors, without a session: for kernel unit tests.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "providers/cpu/cpu_provider.h"

namespace onyx {
namespace testing {

class TestKernelContext final : public KernelContext {
 public:
  TestKernelContext(std::vector<const Tensor*> inputs, size_t num_outputs)
      : inputs_(std::move(inputs)), outputs_(num_outputs) {}
  int InputCount() const override { return static_cast<int>(inputs_.size()); }
  const Tensor* Input(int i) const override {
    return i < static_cast<int>(inputs_.size()) ? inputs_[i] : nullptr;
  }
  int OutputCount() const override { return static_cast<int>(outputs_.size()); }
  Tensor* Output(int i, const Dims& dims, ElemType type) override {
    outputs_.at(i) = std::make_unique<Tensor>(type, dims);
    return outputs_[i].get();
  }
  ThreadPool* threads() const override { return nullptr; }
  bool terminate_requested() const override { return false; }
  std::vector<std::unique_ptr<Tensor>>& outputs() { return outputs_; }

 private:
  std::vector<const Tensor*> inputs_;
  std::vector<std::unique_ptr<Tensor>> outputs_;
};

// Finds the CPU kernel for `node` (its since_version set to the opset to test),
// creates it and runs it. Node input names are set to "in0", "in1", ... ("" for
// null inputs) and outputs to "out0", ... when left empty.
inline Status RunCpuKernel(Node node, const std::vector<const Tensor*>& inputs, size_t num_outputs,
                           std::vector<std::unique_ptr<Tensor>>* outputs) {
  if (node.inputs.empty())
    for (size_t i = 0; i < inputs.size(); ++i) node.inputs.push_back(inputs[i] ? "in" + std::to_string(i) : "");
  if (node.outputs.empty())
    for (size_t i = 0; i < num_outputs; ++i) node.outputs.push_back("out" + std::to_string(i));
  if (node.name.empty()) node.name = "test_" + node.op_type;
  std::vector<TypeInfo> types;
  for (const Tensor* t : inputs) types.push_back(t ? TypeInfo::Tensor(t->type()) : TypeInfo());
  auto provider = CreateCpuProvider();
  std::string why;
  const KernelDef* def = provider->Kernels().Find(node, types, &why);
  if (!def) return MakeError(ErrorCode::kNotImplemented, node.Describe(), ": ", why);
  Graph graph;
  KernelInfo info(node, graph, types);
  std::unique_ptr<OpKernel> kernel;
  ONYX_RETURN_IF_ERROR(def->create(info, &kernel));
  TestKernelContext ctx(inputs, num_outputs);
  ONYX_RETURN_IF_ERROR(kernel->Compute(ctx));
  *outputs = std::move(ctx.outputs());
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

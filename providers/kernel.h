// The interface between the session and operator kernels.
#pragma once

#include <climits>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/framework/status.h"
#include "core/framework/tensor.h"
#include "core/framework/thread_pool.h"
#include "core/framework/value.h"
#include "core/graph/graph.h"
#include "providers/type_sets.h"

namespace onyx {

class SubgraphRunner;  // providers/subgraph.h

// What a kernel sees when it is created (once per node, at session load).
class KernelInfo {
 public:
  KernelInfo(const Node& node, const Graph& graph, std::vector<TypeInfo> input_types)
      : node_(node), graph_(graph), input_types_(std::move(input_types)) {}

  const Node& node() const { return node_; }
  int opset() const { return node_.since_version; }
  int InputCount() const { return static_cast<int>(node_.inputs.size()); }
  bool HasInput(int i) const { return i < InputCount() && !node_.inputs[i].empty(); }
  // The initializer feeding input `i`, or null when it is not a constant
  // (for pre-packing weights). Overridable initializers are not constants.
  const Tensor* ConstantInput(int i) const;
  // Declared or inferred type of input `i` (kind kUnknown when not known).
  const TypeInfo& InputType(int i) const;
  // Said by a kernel that copied constant input `i` into a form of its own
  // at creation (packed weights) and will never read that input's data again:
  // once every reader of the initializer has said so, the session frees its
  // data (the tensor the kernel is then given at run time keeps its type and
  // dims, but raw() is null). Only meaningful when ConstantInput(i) is not null.
  void ReleaseConstantInput(int i) const {
    if (ConstantInput(i) != nullptr) released_.push_back(i);
  }
  const std::vector<int>& ReleasedConstantInputs() const { return released_; }
  // Said by a kernel whose output `output` may be input `input`'s bytes under
  // another shape (Reshape, Squeeze, Identity, ...): the plan then decides,
  // once, whether that is safe for this node (KernelContext::OutputView).
  void AllowOutputView(int output, int input) const { views_.emplace_back(output, input); }
  // (output, input) pairs said by AllowOutputView.
  const std::vector<std::pair<int, int>>& OutputViews() const { return views_; }
  // Said by a kernel that can write output `output` over input `input`'s
  // bytes (same type and shape), reading each input element before it writes
  // that element (FusedConv's sum Z): the plan allows it, once, where no one
  // reads the input after this node (KernelContext::OutputInPlace).
  void AllowOutputInPlace(int output, int input) const { in_place_.emplace_back(output, input); }
  // (output, input) pairs said by AllowOutputInPlace.
  const std::vector<std::pair<int, int>>& OutputsInPlace() const { return in_place_; }

  int64_t AttrInt(const std::string& k, int64_t d) const { return node_.AttrInt(k, d); }
  float AttrFloat(const std::string& k, float d) const { return node_.AttrFloat(k, d); }
  std::string AttrString(const std::string& k, const std::string& d) const { return node_.AttrString(k, d); }
  std::vector<int64_t> AttrInts(const std::string& k) const { return node_.AttrInts(k); }
  const Attribute* Attr(const std::string& k) const { return node_.Attr(k); }

  // Graph inputs that are also initializers may be overridden at Run time.
  bool constants_may_be_overridden = false;
  // Float 3x3 convs may take Winograd F(4x4, 3x3) where it wins
  // (providers/cpu/nn/winograd_conv.h: a few 1e-6 of the output's range
  // from the direct conv); session config "session.conv.winograd_f4".
  bool allow_winograd_f4 = true;

  // The prepared subgraph of graph attribute `attr` (If, Loop, Scan), or null.
  // The session builds these before creating the kernel and keeps them alive
  // as long as the kernel.
  const SubgraphRunner* Subgraph(const std::string& attr) const {
    auto it = subgraphs_.find(attr);
    return it == subgraphs_.end() ? nullptr : it->second;
  }
  void SetSubgraph(const std::string& attr, const SubgraphRunner* runner) { subgraphs_[attr] = runner; }

 private:
  const Node& node_;
  const Graph& graph_;
  std::vector<TypeInfo> input_types_;
  std::map<std::string, const SubgraphRunner*> subgraphs_;
  mutable std::vector<int> released_;
  mutable std::vector<std::pair<int, int>> views_;
  mutable std::vector<std::pair<int, int>> in_place_;
};

// What a kernel sees on each run. Not shared between concurrent runs.
class KernelContext {
 public:
  virtual ~KernelContext() = default;
  virtual int InputCount() const = 0;
  // Null when the input is omitted (optional) or beyond the count.
  virtual const Tensor* Input(int i) const = 0;
  virtual int OutputCount() const = 0;
  // Allocates output `i`; returns null when that output is omitted by the node.
  virtual Tensor* Output(int i, const Dims& dims, ElemType type) = 0;
  // Makes output `out` a view of input `in`'s bytes with shape `dims` (the
  // same element count) and returns it, or returns null when this node's
  // plan did not allow it (KernelInfo::AllowOutputView and the plan's safety
  // rules) or the output is omitted: the kernel then calls Output() and
  // copies. A view is read-only for everyone: nothing may write through it.
  virtual const Tensor* OutputView(int out, int in, const Dims& dims) {
    (void)out;
    (void)in;
    (void)dims;
    return nullptr;
  }
  // Output `out` written over input `in`'s bytes (`in` has `dims` and the
  // output's type), or null when this node's plan did not allow it
  // (KernelInfo::AllowOutputInPlace: `in` is an intermediate nothing reads
  // after this node, not viewed, not a graph input, output or constant), the
  // input's tensor is shared (a sequence holds it), its shape or type differ,
  // or the output is omitted or bound by the caller: the kernel then calls
  // Output(). The kernel must read each input element before writing the
  // output element at the same place.
  virtual Tensor* OutputInPlace(int out, int in, const Dims& dims, ElemType type) {
    (void)out;
    (void)in;
    (void)dims;
    (void)type;
    return nullptr;
  }
  virtual ThreadPool* threads() const = 0;
  virtual bool terminate_requested() const = 0;

  // The value named `name` in the graph running this node or, for a node of
  // a subgraph, in an enclosing graph: what a subgraph reads from outer
  // scopes. Null when no such value is live (contexts of tests, folding).
  virtual const Value* OuterValue(const std::string& name) const {
    (void)name;
    return nullptr;
  }

  // Non-tensor values (sequences, maps, optionals), for the kernels that take
  // or make them. Contexts that hold tensors only (constant folding, tests)
  // keep these defaults: no such inputs, and such outputs are refused.
  virtual const Value* InputValue(int i) const {
    (void)i;
    return nullptr;
  }
  virtual Status SetOutputValue(int i, Value v) {
    (void)i;
    (void)v;
    return MakeError(ErrorCode::kNotImplemented, "this context holds tensor values only");
  }

  // Input `i`, or an INVALID_ARGUMENT error naming it when it is missing.
  Status RequiredInput(int i, const Tensor** out) const {
    *out = Input(i);
    if (*out != nullptr) return Status::OK();
    ONYX_CHECK_ARG(InputValue(i) == nullptr, "input ", i, " must be a tensor, not a sequence, map or optional");
    return MakeError(ErrorCode::kInvalidArgument, "input ", i, " is required but missing");
  }
};

class OpKernel {
 public:
  virtual ~OpKernel() = default;
  // Must be safe to call from many threads at once: keep per-run state local.
  virtual Status Compute(KernelContext& ctx) const = 0;
};

// Last opset of an open-ended since range.
constexpr int kMaxVersion = INT_MAX;

using KernelCreateFn = std::function<Status(const KernelInfo&, std::unique_ptr<OpKernel>*)>;

struct KernelDef {
  std::string op_type;
  std::string domain;  // "" = ai.onnx
  int since_version = 1;
  int end_version = INT_MAX;  // inclusive
  // Element types accepted on input `type_input`; empty accepts any.
  std::vector<ElemType> types;
  int type_input = 0;
  KernelCreateFn create;
};

class KernelRegistry {
 public:
  void Register(KernelDef def);
  // The kernel for `node`, or null with `why` saying what did not match.
  // `type` is the element type of the constrained input (kUndefined if unknown).
  const KernelDef* Find(const Node& node, const std::vector<TypeInfo>& input_types, std::string* why) const;
  size_t size() const;
  // Every definition, ordered by (domain, op) then registration order.
  std::vector<const KernelDef*> Defs() const;

 private:
  std::map<std::pair<std::string, std::string>, std::vector<KernelDef>> defs_;
};

// One kernel class, built with `args` then Init(info), as a KernelDef for
// (domain, op, since..end, types). Used through ONYX_REGISTER_KERNEL.
template <typename K, typename... Args>
KernelDef MakeKernelDef(const char* domain, const char* op, int since, int end, std::vector<ElemType> types,
                        Args... args) {
  KernelDef d;
  d.domain = domain;
  d.op_type = op;
  d.since_version = since;
  d.end_version = end;
  d.types = std::move(types);
  d.create = [args...](const KernelInfo& info, std::unique_ptr<OpKernel>* out) -> Status {
    auto k = std::make_unique<K>(args...);
    ONYX_RETURN_IF_ERROR(k->Init(info));
    *out = std::move(k);
    return Status::OK();
  };
  return d;
}

// The CPU kernels' definitions, collected at static initialization by
// ONYX_REGISTER_KERNEL; the CPU provider builds its registry from them.
std::vector<KernelDef>& StaticCpuKernelDefs();

struct CpuKernelRegistrar {
  explicit CpuKernelRegistrar(KernelDef def) { StaticCpuKernelDefs().push_back(std::move(def)); }
};

}  // namespace onyx

#define ONYX_KERNEL_CAT2(a, b) a##b
#define ONYX_KERNEL_CAT(a, b) ONYX_KERNEL_CAT2(a, b)

// Registers a CPU kernel, one statement at the bottom of its file:
//   ONYX_REGISTER_KERNEL(NormalizerKernel, "ai.onnx.ml", "Normalizer", 1, kMaxVersion, ml::FeatureTypes());
// Arguments: kernel class, domain ("" = ai.onnx), op, since and last opset
// (inclusive), the element types accepted on input 0 (AnyType() for any), then
// any constructor arguments of the kernel. A class name with a comma needs an
// alias (`using X = K<a, b>;`). The library is linked whole (CMakeLists.txt),
// so these initializers are never dropped.
#define ONYX_REGISTER_KERNEL(Kernel, ...)                                                    \
  static const ::onyx::CpuKernelRegistrar ONYX_KERNEL_CAT(onyx_kernel_registrar_, __COUNTER__)( \
      ::onyx::MakeKernelDef<Kernel>(__VA_ARGS__))

namespace onyx {

}  // namespace onyx

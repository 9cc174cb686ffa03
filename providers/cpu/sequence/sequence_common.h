// Shared by the sequence and optional kernels: reading non-tensor inputs and
// position scalars, with messages that name the node and the input at fault.
#pragma once

#include <string>
#include <vector>

#include "providers/kernel.h"

namespace onyx {
namespace sequence {

// Base of the kernels here: keeps the node's description and input names
// for error messages ("node 'at' (SequenceAt): input 1 ('pos')").
class NodeKernel : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    node_ = info.node().Describe();
    input_names_ = info.node().inputs;
    return Status::OK();
  }

 protected:
  const std::string& node() const { return node_; }
  std::string InputName(int i) const;

  // Input i, which may be any kind of value; an error naming it when it is
  // missing. Contexts that hold tensors only (constant folding) have no
  // Value for a tensor: NOT_IMPLEMENTED there, so such nodes are not folded.
  Status AnyInput(const KernelContext& ctx, int i, const Value** out) const;
  // Input i, which must be a sequence.
  Status SequenceInput(const KernelContext& ctx, int i, const Value** out) const;
  // Input i, which must be a tensor.
  Status TensorInput(const KernelContext& ctx, int i, const Tensor** out) const;
  // The position in optional input i (a scalar of int32 or int64; a
  // one-element 1-D tensor is accepted too), or `dflt` when it is omitted.
  Status PositionInput(const KernelContext& ctx, int i, int64_t dflt, int64_t* out) const;
  // Maps `pos` (negative counts from the back) into [0, n) or, with
  // `allow_end`, [0, n]; INVALID_ARGUMENT when it is outside the ONNX range.
  Status NormalizePosition(int64_t pos, int64_t n, bool allow_end, int64_t* out) const;

 private:
  std::string node_;
  std::vector<std::string> input_names_;
};

// "tensor(float)", "seq of 3", "map", "optional": for messages about values.
std::string KindName(const Value& v);

// Copies `src` into `dst` (same type and element count).
void CopyTensorData(const Tensor& src, Tensor* dst);

// Writes a copy of `src` to output i. Tensor outputs of a node are always
// its own memory, so a caller never receives (and may not write through) a
// buffer that a sequence, an initializer or a feed still holds.
Status OutputCopyOf(KernelContext& ctx, int i, const Tensor& src);

}  // namespace sequence
}  // namespace onyx

// Tensor plumbing shared by the control-flow kernels.
#pragma once

#include <vector>

#include "providers/kernel.h"

namespace onyx {
namespace controlflow {

// Writes `v` as output `i` of `ctx`: tensors are copied into the context's
// output (so bound buffers and memory planning apply, and the output never
// aliases a subgraph's initializer); other values are handed over.
Status SetOutput(KernelContext& ctx, int i, const Value& v, const std::string& what);

// A scalar tensor.
Value Int64Scalar(int64_t v);
Value BoolScalar(bool v);
// The one element of a bool or numeric tensor as bool (INVALID_ARGUMENT unless it has exactly one).
Status ScalarBool(const Tensor* t, const std::string& what, bool* out);
Status ScalarInt64(const Tensor* t, const std::string& what, int64_t* out);

// Slice `index` of `x` along `axis`, without that axis.
Status SliceAlongAxis(const Tensor& x, int64_t axis, int64_t index, Tensor* out);
// Stacks equally shaped tensors along a new axis `axis` (0..rank), written
// into `out` (already allocated with the stacked shape). `reverse` stacks the
// parts last to first.
Status StackAlongAxis(const std::vector<std::shared_ptr<Tensor>>& parts, int64_t axis, bool reverse,
                      ThreadPool* threads, Tensor* out);

}  // namespace controlflow
}  // namespace onyx

// Expands ai.onnx.preview.training's Gradient operator into its backward pass:
// reverse-mode differentiation written out as ordinary ONNX nodes, so every
// provider runs it with the kernels it already has.
#pragma once

#include <vector>

#include "core/graph/graph.h"

namespace onyx {

// An operator the session rewrites into others before any provider sees it.
// Supported-operator lists report these beside the kernels.
struct RewrittenOperator {
  const char* domain;
  const char* op_type;
  int since_version;
  int end_version;  // inclusive
};
const std::vector<RewrittenOperator>& GraphRewrittenOperators();

// Replaces every Gradient node of the root graph with nodes computing, for each
// name in its `xs`, the gradient of sum(y) with respect to it, evaluated where
// the node's inputs say (the forward nodes between xs/zs and y are reused when
// the inputs are those very values, cloned onto the inputs otherwise). Types
// and shapes must have been inferred. Differentiated operators: Add, Sub, Mul,
// Div, Pow, Sum, Neg, Abs, Identity, Relu, LeakyRelu, Sigmoid, Tanh, Exp, Log,
// Sqrt, Reciprocal, Sin, Cos, Erf, MatMul, Gemm, Softmax, LogSoftmax,
// ReduceSum, ReduceMean, Reshape, Flatten, Squeeze, Unsqueeze, Expand,
// Transpose, Cast, Where. Any other operator on a path from xs to y is
// NOT_IMPLEMENTED naming node and gradient; y depending on a graph input that
// is neither in xs nor zs is INVALID_GRAPH. `expanded` (may be null) receives
// the number of Gradient nodes replaced.
Status ExpandGradients(Model& model, int* expanded);

}  // namespace onyx

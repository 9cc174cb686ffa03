// 16-bit floats computed through float: kernels whose math runs in float
// (GEMM-based MatMul and Conv) widen their float16/bfloat16 inputs once and
// round the float result once, as onnxruntime's CPU kernels do.
#pragma once

#include <initializer_list>
#include <utility>

#include "core/framework/tensor.h"
#include "providers/kernel.h"

namespace onyx {

// A float copy of a float16 or bfloat16 tensor `t` (H is its element type).
template <typename H>
Tensor WidenToFloat(const Tensor& t) {
  Tensor f(ElemType::kFloat, t.dims());
  const H* src = t.data<H>();
  float* dst = f.data<float>();
  for (int64_t i = 0; i < t.size(); ++i) dst[i] = static_cast<float>(src[i]);
  return f;
}

// Rounds the float tensor `f` into `out` (same shape, element type H).
template <typename H>
void NarrowFromFloat(const Tensor& f, Tensor* out) {
  const float* src = f.data<float>();
  H* dst = out->data<H>();
  for (int64_t i = 0; i < out->size(); ++i) dst[i] = H(src[i]);
}

inline bool IsHalfType(ElemType t) { return t == ElemType::kFloat16 || t == ElemType::kBFloat16; }

// Runs `kernel`'s float code for float16/bfloat16 data: kernel.Compute sees
// a view of `ctx` whose 16-bit float input tensors read as float (widened
// once, on first use). Each pair {o, i} of `typed_like` says output o has
// input i's type: when that is a 16-bit float, the kernel (seeing float)
// asks for output o in float, and it is made in float and rounded once into
// the real output of the 16-bit type. Other outputs (indices, float
// statistics) pass through. For kernels whose math is written for
// float/double (pools, normalizations, Gemm, ArgMax), so 16-bit data
// accumulates in float. A kernel calls it from Compute when its input 0 is
// a 16-bit float; the view's inputs no longer are.
Status ComputeThroughFloat(const OpKernel& kernel, KernelContext& ctx,
                           std::initializer_list<std::pair<int, int>> typed_like);

}  // namespace onyx

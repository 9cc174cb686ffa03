// 16-bit floats computed through float: kernels whose math runs in float
// (GEMM-based MatMul and Conv) widen their float16/bfloat16 inputs once and
// round the float result once, as onnxruntime's CPU kernels do.
#pragma once

#include "core/framework/tensor.h"

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

}  // namespace onyx

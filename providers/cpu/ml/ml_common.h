// Shared by the ai.onnx.ml kernels: reading their numeric inputs as float
// rows, and the score transforms (post_transform) classifiers apply.
#pragma once

#include <cmath>
#include <string>

#include "providers/kernel.h"

namespace onyx {
namespace ml {

enum class PostTransform { kNone, kSoftmax, kLogistic, kSoftmaxZero, kProbit };

// The `post_transform` attribute; INVALID_GRAPH naming `node` when unknown.
Status ParsePostTransform(const std::string& s, const std::string& node, PostTransform* out);

// Element types the ml kernels take as numeric features (T1 in the spec).
inline std::vector<ElemType> FeatureTypes() {
  return {ElemType::kFloat, ElemType::kDouble, ElemType::kInt64, ElemType::kInt32};
}

// Copies `x` (one of FeatureTypes) into `out` as float, the type the ml
// operators compute in.
Status ToFloat(const Tensor& x, const std::string& node, std::vector<float>* out);

inline float Logistic(float v) {
  // exp of a non-positive number only, so large |v| never overflows.
  const float e = std::exp(-std::fabs(v));
  return v < 0 ? e / (1.f + e) : 1.f / (1.f + e);
}

// sqrt(2) * erfinv(2p - 1), with the closed-form erfinv approximation
// (a = 0.147) that onnxruntime and onnx's reference both use, so scores agree.
float Probit(float p);

// Applies `t` in place to one row of `n` scores.
void TransformRow(PostTransform t, float* row, int64_t n);

}  // namespace ml
}  // namespace onyx

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

// The values of a float, double or float16 tensor as double.
Status TensorToDoubles(const Tensor& t, const std::string& what, std::vector<double>* out);

// A list of reals given either as attribute `name` (floats) or as tensor
// attribute `name`_as_tensor (float or double; the TreeEnsemble* and
// LabelEncoder opset-3+ spelling, for double precision). Empty when neither
// is given; INVALID_GRAPH naming `node` when both are.
Status ReadReals(const KernelInfo& info, const std::string& name, const std::string& node, std::vector<double>* out);

// A classifier's labels: exactly one of the attributes `ints_name`
// (classlabels_ints or classlabels_int64s) and classlabels_strings, non-empty.
// Fills one of `ints` and `strings`; INVALID_GRAPH naming the node otherwise.
Status ReadClassLabels(const KernelInfo& info, const char* ints_name, const std::string& node,
                       std::vector<int64_t>* ints, std::vector<std::string>* strings);

// Input 0 as a [N, F] matrix of T (a copy unless it already is T): N = 1
// for a 1-D input. `types` names what the input may be, for the message.
template <typename T>
Status FeatureMatrix(const Tensor& x, const std::string& node, std::vector<T>* storage, const T** data, int64_t* n,
                     int64_t* f);

}  // namespace ml
}  // namespace onyx

#include "providers/cpu/ml/ml_common.h"

#include <algorithm>

namespace onyx {
namespace ml {

Status ParsePostTransform(const std::string& s, const std::string& node, PostTransform* out) {
  if (s == "NONE") *out = PostTransform::kNone;
  else if (s == "SOFTMAX") *out = PostTransform::kSoftmax;
  else if (s == "LOGISTIC") *out = PostTransform::kLogistic;
  else if (s == "SOFTMAX_ZERO") *out = PostTransform::kSoftmaxZero;
  else if (s == "PROBIT") *out = PostTransform::kProbit;
  else
    return MakeError(ErrorCode::kInvalidGraph, node, ": attribute post_transform '", s,
                     "' is not one of NONE, SOFTMAX, LOGISTIC, SOFTMAX_ZERO, PROBIT");
  return Status::OK();
}

Status ToFloat(const Tensor& x, const std::string& node, std::vector<float>* out) {
  const int64_t n = x.size();
  out->resize(static_cast<size_t>(n));
  float* y = out->data();
  switch (x.type()) {
    case ElemType::kFloat: std::copy(x.data<float>(), x.data<float>() + n, y); break;
    case ElemType::kDouble: for (int64_t i = 0; i < n; ++i) y[i] = static_cast<float>(x.data<double>()[i]); break;
    case ElemType::kInt64: for (int64_t i = 0; i < n; ++i) y[i] = static_cast<float>(x.data<int64_t>()[i]); break;
    case ElemType::kInt32: for (int64_t i = 0; i < n; ++i) y[i] = static_cast<float>(x.data<int32_t>()[i]); break;
    default:
      return MakeError(ErrorCode::kInvalidArgument, node, ": input 0 must be float, double, int64 or int32, got ",
                       ElemTypeName(x.type()));
  }
  return Status::OK();
}

float Probit(float p) {
  const float x = 2.f * p - 1.f;
  const float sign = x < 0 ? -1.f : 1.f;
  // p = 0 or 1 gives -inf or +inf, the limits (onnxruntime writes them too).
  const float one_minus_sq = (1.f - x) * (1.f + x);
  constexpr float kA = 0.147f;
  constexpr float kTwoOverPiA = 2.f / (3.14159265358979f * kA);
  const float ln = std::log(one_minus_sq);
  const float v = kTwoOverPiA + 0.5f * ln;
  return 1.41421356f * sign * std::sqrt(std::sqrt(v * v - ln / kA) - v);
}

void TransformRow(PostTransform t, float* row, int64_t n) {
  if (n <= 0) return;
  switch (t) {
    case PostTransform::kNone:
      return;
    case PostTransform::kLogistic:
      for (int64_t i = 0; i < n; ++i) row[i] = Logistic(row[i]);
      return;
    case PostTransform::kProbit:
      for (int64_t i = 0; i < n; ++i) row[i] = Probit(row[i]);
      return;
    case PostTransform::kSoftmax: {
      const float mx = *std::max_element(row, row + n);
      float sum = 0.f;
      for (int64_t i = 0; i < n; ++i) sum += row[i] = std::exp(row[i] - mx);
      for (int64_t i = 0; i < n; ++i) row[i] /= sum;
      return;
    }
    case PostTransform::kSoftmaxZero: {
      // Softmax over the non-zero scores; a zero score stays (almost) zero.
      const float mx = *std::max_element(row, row + n);
      const float exp_neg_max = std::exp(-mx);
      float sum = 0.f;
      for (int64_t i = 0; i < n; ++i) {
        row[i] = std::fabs(row[i]) > 1e-7f ? std::exp(row[i] - mx) : row[i] * exp_neg_max;
        sum += row[i];
      }
      // All zero: onnx's reference writes 0.5 everywhere (onnxruntime divides by zero).
      for (int64_t i = 0; i < n; ++i) row[i] = sum == 0.f ? 0.5f : row[i] / sum;
      return;
    }
  }
}

Status TensorToDoubles(const Tensor& t, const std::string& what, std::vector<double>* out) {
  const int64_t n = t.size();
  out->resize(static_cast<size_t>(n));
  switch (t.type()) {
    case ElemType::kFloat: for (int64_t i = 0; i < n; ++i) (*out)[i] = t.data<float>()[i]; break;
    case ElemType::kDouble: for (int64_t i = 0; i < n; ++i) (*out)[i] = t.data<double>()[i]; break;
    case ElemType::kFloat16: for (int64_t i = 0; i < n; ++i) (*out)[i] = static_cast<float>(t.data<Float16>()[i]); break;
    default:
      return MakeError(ErrorCode::kInvalidGraph, what, " must be a float, double or float16 tensor, got ",
                       ElemTypeName(t.type()));
  }
  return Status::OK();
}

Status ReadReals(const KernelInfo& info, const std::string& name, const std::string& node, std::vector<double>* out) {
  out->clear();
  const Attribute* floats = info.Attr(name);
  const Attribute* tensor = info.Attr(name + "_as_tensor");
  const bool has_floats = floats != nullptr && !floats->floats.empty();
  const bool has_tensor = tensor != nullptr && tensor->t != nullptr;
  ONYX_CHECK(!(has_floats && has_tensor), ErrorCode::kInvalidGraph, node, ": attributes ", name, " and ", name,
             "_as_tensor are both given; give one");
  if (has_floats) out->assign(floats->floats.begin(), floats->floats.end());
  if (has_tensor) return TensorToDoubles(*tensor->t, StrCat(node, ": attribute ", name, "_as_tensor"), out);
  return Status::OK();
}

template <typename T>
Status FeatureMatrix(const Tensor& x, const std::string& node, std::vector<T>* storage, const T** data, int64_t* n,
                     int64_t* f) {
  ONYX_CHECK_ARG(x.rank() == 1 || x.rank() == 2, node, ": input 0 must have shape [N, F] or [F], got ",
                 ShapeToString(x.dims()));
  *n = x.rank() == 2 ? x.dims()[0] : 1;
  *f = x.dims().back();
  if (x.type() == ElemTypeOf<T>::value) {
    *data = x.data<T>();
    return Status::OK();
  }
  const int64_t size = x.size();
  storage->resize(static_cast<size_t>(size));
  T* y = storage->data();
  switch (x.type()) {
    case ElemType::kFloat: for (int64_t i = 0; i < size; ++i) y[i] = static_cast<T>(x.data<float>()[i]); break;
    case ElemType::kDouble: for (int64_t i = 0; i < size; ++i) y[i] = static_cast<T>(x.data<double>()[i]); break;
    case ElemType::kFloat16:
      for (int64_t i = 0; i < size; ++i) y[i] = static_cast<T>(static_cast<float>(x.data<Float16>()[i]));
      break;
    case ElemType::kInt64: for (int64_t i = 0; i < size; ++i) y[i] = static_cast<T>(x.data<int64_t>()[i]); break;
    case ElemType::kInt32: for (int64_t i = 0; i < size; ++i) y[i] = static_cast<T>(x.data<int32_t>()[i]); break;
    default:
      return MakeError(ErrorCode::kInvalidArgument, node, ": input 0 must be float, double, int64 or int32, got ",
                       ElemTypeName(x.type()));
  }
  *data = y;
  return Status::OK();
}

template Status FeatureMatrix<float>(const Tensor&, const std::string&, std::vector<float>*, const float**, int64_t*,
                                     int64_t*);
template Status FeatureMatrix<double>(const Tensor&, const std::string&, std::vector<double>*, const double**,
                                      int64_t*, int64_t*);

Status ReadClassLabels(const KernelInfo& info, const char* ints_name, const std::string& node,
                       std::vector<int64_t>* ints, std::vector<std::string>* strings) {
  const Attribute* i = info.Attr(ints_name);
  const Attribute* s = info.Attr("classlabels_strings");
  const bool has_ints = i != nullptr && !i->ints.empty();
  const bool has_strs = s != nullptr && !s->strings.empty();
  ONYX_CHECK(has_ints != has_strs, ErrorCode::kInvalidGraph, node, ": exactly one of the attributes ", ints_name,
             " and classlabels_strings must be given");
  if (has_ints) *ints = i->ints;
  else *strings = s->strings;
  return Status::OK();
}

}  // namespace ml
}  // namespace onyx

// ai.onnx.ml feature transforms (opset 1), the per-column steps of
// converted preprocessing pipelines:
//   ArrayFeatureExtractor  columns of the last axis picked by index (any type)
//   Binarizer              x > threshold ? 1 : 0, the input's type
//   FeatureVectorizer      inputs' columns side by side, each cut or padded
//   Imputer                a replaced value (NaN by default for floats) -> per-column values
//   Scaler                 (x - offset) * scale, float out
//   LinearRegressor        X * coefficients^T + intercepts, float out
//   OneHotEncoder          one 0/1 column per category, float out
#include <algorithm>
#include <cmath>
#include <string>
#include <unordered_map>
#include <vector>

#include "providers/cpu/common/dispatch.h"
#include "providers/cpu/common/float_to_int.h"
#include "providers/cpu/ml/ml_common.h"
#include "providers/kernel.h"

namespace onyx {
namespace {

using MlNumericTypeSet = TypeSet<float, double, int64_t, int32_t>;

// One value per column or one for all: the entry for column c.
template <typename V>
const V& PerColumn(const std::vector<V>& v, int64_t c) {
  return v.size() == 1 ? v[0] : v[static_cast<size_t>(c)];
}

class ArrayFeatureExtractorKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    node_ = info.node().Describe();
    return Status::OK();
  }

  Status Compute(KernelContext& ctx) const override {
    const Tensor* X = nullptr;
    const Tensor* I = nullptr;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &X));
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(1, &I));
    ONYX_CHECK_ARG(I->type() == ElemType::kInt64, node_, ": input 1 (Y, the indices) must be int64, got ",
                   ElemTypeName(I->type()));
    ONYX_CHECK_ARG(X->rank() >= 1, node_, ": input 0 (X) must have at least one dimension");
    const int64_t cols = X->dims().back();
    const int64_t k = I->size();
    ONYX_CHECK_ARG(k > 0, node_, ": input 1 (Y) holds no index");
    const int64_t* idx = I->data<int64_t>();
    for (int64_t j = 0; j < k; ++j)
      ONYX_CHECK_ARG(idx[j] >= 0 && idx[j] < cols, node_, ": input 1 (Y) index ", idx[j], " at position ", j,
                     " is outside the ", cols, " columns of input 0 (X, shape ", ShapeToString(X->dims()), ")");
    // A 1-D input gives one row of k, as onnxruntime does.
    Dims out = X->rank() == 1 ? Dims{1, k} : X->dims();
    out.back() = k;
    const int64_t rows = cols > 0 ? X->size() / cols : 0;
    return DispatchOver(JoinTypeSets<MlNumericTypeSet, TypeSet<std::string>>::type{}, X->type(), node_.c_str(),
                        [&](auto tag) -> Status {
                          using T = typename decltype(tag)::type;
                          Tensor* Y = ctx.Output(0, out, X->type());
                          if (Y == nullptr) return Status::OK();
                          const T* x = X->data<T>();
                          T* y = Y->data<T>();
                          for (int64_t r = 0; r < rows; ++r)
                            for (int64_t j = 0; j < k; ++j) y[r * k + j] = x[r * cols + idx[j]];
                          return Status::OK();
                        });
  }

 private:
  std::string node_;
};

class BinarizerKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    node_ = info.node().Describe();
    threshold_ = info.AttrFloat("threshold", 0.f);
    return Status::OK();
  }

  Status Compute(KernelContext& ctx) const override {
    const Tensor* X = nullptr;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &X));
    return DispatchOver(MlNumericTypeSet{}, X->type(), node_.c_str(), [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      Tensor* Y = ctx.Output(0, X->dims(), X->type());
      if (Y == nullptr) return Status::OK();
      const T* x = X->data<T>();
      T* y = Y->data<T>();
      // Compared in the input's type widened to double: int64 and double keep their precision.
      for (int64_t i = 0; i < X->size(); ++i)
        y[i] = static_cast<double>(x[i]) > static_cast<double>(threshold_) ? T(1) : T(0);
      return Status::OK();
    });
  }

 private:
  std::string node_;
  float threshold_ = 0.f;
};

class FeatureVectorizerKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    node_ = info.node().Describe();
    dims_ = info.AttrInts("inputdimensions");
    ONYX_CHECK(static_cast<int>(dims_.size()) == info.InputCount(), ErrorCode::kInvalidGraph, node_,
               ": attribute inputdimensions has ", dims_.size(), " entries for ", info.InputCount(), " inputs");
    for (size_t i = 0; i < dims_.size(); ++i)
      ONYX_CHECK(dims_[i] >= 0, ErrorCode::kInvalidGraph, node_, ": inputdimensions[", i, "] is negative");
    return Status::OK();
  }

  Status Compute(KernelContext& ctx) const override {
    int64_t total = 0;
    for (int64_t d : dims_) total += d;
    int64_t rows = -1;
    std::vector<const Tensor*> xs(dims_.size());
    for (size_t i = 0; i < dims_.size(); ++i) {
      ONYX_RETURN_IF_ERROR(ctx.RequiredInput(static_cast<int>(i), &xs[i]));
      const Tensor& x = *xs[i];
      ONYX_CHECK_ARG(x.rank() >= 1, node_, ": input ", i, " must have at least one dimension");
      const int64_t n = x.rank() == 1 ? 1 : x.dims()[0];
      ONYX_CHECK_ARG(rows < 0 || n == rows, node_, ": input ", i, " has ", n, " rows (shape ",
                     ShapeToString(x.dims()), ") but input 0 has ", rows);
      rows = n;
    }
    Tensor* Y = ctx.Output(0, {rows, total}, ElemType::kFloat);
    if (Y == nullptr) return Status::OK();
    float* y = Y->data<float>();
    std::fill(y, y + Y->size(), 0.f);
    int64_t offset = 0;
    for (size_t i = 0; i < dims_.size(); ++i) {
      std::vector<float> v;
      ONYX_RETURN_IF_ERROR(ml::ToFloat(*xs[i], StrCat(node_, " input ", i), &v));
      const int64_t cols = rows > 0 ? xs[i]->size() / rows : 0;
      const int64_t take = std::min(cols, dims_[i]);
      for (int64_t r = 0; r < rows; ++r)
        std::copy(v.data() + r * cols, v.data() + r * cols + take, y + r * total + offset);
      offset += dims_[i];
    }
    return Status::OK();
  }

 private:
  std::string node_;
  std::vector<int64_t> dims_;
};

class ImputerKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    node_ = info.node().Describe();
    if (const Attribute* a = info.Attr("imputed_value_floats")) floats_ = a->floats;
    if (const Attribute* a = info.Attr("imputed_value_int64s")) ints_ = a->ints;
    ONYX_CHECK(floats_.empty() != ints_.empty(), ErrorCode::kInvalidGraph, node_,
               ": exactly one of the attributes imputed_value_floats and imputed_value_int64s must be given");
    replaced_float_ = info.AttrFloat("replaced_value_float", 0.f);
    replaced_int_ = info.AttrInt("replaced_value_int64", 0);
    return Status::OK();
  }

  Status Compute(KernelContext& ctx) const override {
    const Tensor* X = nullptr;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &X));
    ONYX_CHECK_ARG(X->rank() >= 1, node_, ": input 0 must have at least one dimension");
    const int64_t cols = X->dims().back();
    const bool is_float = X->type() == ElemType::kFloat || X->type() == ElemType::kDouble;
    ONYX_CHECK_ARG(is_float ? !floats_.empty() : !ints_.empty(), node_, ": input 0 is ", ElemTypeName(X->type()),
                   " but the imputed values are ", floats_.empty() ? "int64s" : "floats");
    const size_t n_values = is_float ? floats_.size() : ints_.size();
    ONYX_CHECK_ARG(n_values == 1 || static_cast<int64_t>(n_values) == cols, node_, ": input 0 has ", cols,
                   " columns (shape ", ShapeToString(X->dims()), ") but there are ", n_values, " imputed values");
    return DispatchOver(MlNumericTypeSet{}, X->type(), node_.c_str(), [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      Tensor* Y = ctx.Output(0, X->dims(), X->type());
      if (Y == nullptr) return Status::OK();
      const T* x = X->data<T>();
      T* y = Y->data<T>();
      for (int64_t i = 0; i < X->size(); ++i) {
        const int64_t c = cols > 0 ? i % cols : 0;
        bool replace;
        if constexpr (std::is_floating_point<T>::value)
          replace = std::isnan(replaced_float_) ? std::isnan(x[i]) : x[i] == static_cast<T>(replaced_float_);
        else
          replace = static_cast<int64_t>(x[i]) == replaced_int_;
        if (!replace) y[i] = x[i];
        else if constexpr (std::is_floating_point<T>::value) y[i] = static_cast<T>(PerColumn(floats_, c));
        else y[i] = static_cast<T>(PerColumn(ints_, c));
      }
      return Status::OK();
    });
  }

 private:
  std::string node_;
  std::vector<float> floats_;
  std::vector<int64_t> ints_;
  float replaced_float_ = 0.f;
  int64_t replaced_int_ = 0;
};

class ScalerKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    node_ = info.node().Describe();
    if (const Attribute* a = info.Attr("offset")) offset_ = a->floats;
    if (const Attribute* a = info.Attr("scale")) scale_ = a->floats;
    if (offset_.empty()) offset_ = {0.f};
    if (scale_.empty()) scale_ = {1.f};
    return Status::OK();
  }

  Status Compute(KernelContext& ctx) const override {
    const Tensor* X = nullptr;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &X));
    ONYX_CHECK_ARG(X->rank() >= 1, node_, ": input 0 must have at least one dimension");
    const int64_t cols = X->dims().back();
    for (const auto* v : {&offset_, &scale_})
      ONYX_CHECK_ARG(v->size() == 1 || static_cast<int64_t>(v->size()) == cols, node_, ": input 0 has ", cols,
                     " columns (shape ", ShapeToString(X->dims()), ") but attribute ",
                     v == &offset_ ? "offset" : "scale", " has ", v->size(), " values (1 or one per column)");
    std::vector<float> x;
    ONYX_RETURN_IF_ERROR(ml::ToFloat(*X, node_, &x));
    Tensor* Y = ctx.Output(0, X->dims(), ElemType::kFloat);
    if (Y == nullptr) return Status::OK();
    float* y = Y->data<float>();
    for (int64_t i = 0; i < X->size(); ++i) {
      const int64_t c = i % cols;
      y[i] = (x[i] - PerColumn(offset_, c)) * PerColumn(scale_, c);
    }
    return Status::OK();
  }

 private:
  std::string node_;
  std::vector<float> offset_, scale_;
};

class LinearRegressorKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    node_ = info.node().Describe();
    if (const Attribute* a = info.Attr("coefficients")) coef_ = a->floats;
    if (const Attribute* a = info.Attr("intercepts")) intercepts_ = a->floats;
    targets_ = info.AttrInt("targets", 1);
    ONYX_CHECK(targets_ > 0, ErrorCode::kInvalidGraph, node_, ": attribute targets must be positive, got ", targets_);
    ONYX_CHECK(!coef_.empty() && coef_.size() % targets_ == 0, ErrorCode::kInvalidGraph, node_, ": ", coef_.size(),
               " coefficients do not split into ", targets_, " targets");
    ONYX_CHECK(intercepts_.empty() || static_cast<int64_t>(intercepts_.size()) == targets_, ErrorCode::kInvalidGraph,
               node_, ": ", intercepts_.size(), " intercepts for ", targets_, " targets");
    return ml::ParsePostTransform(info.AttrString("post_transform", "NONE"), node_, &post_);
  }

  Status Compute(KernelContext& ctx) const override {
    const Tensor* X = nullptr;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &X));
    ONYX_CHECK_ARG(X->rank() == 1 || X->rank() == 2, node_, ": input 0 must have shape [N, F] or [F], got ",
                   ShapeToString(X->dims()));
    const int64_t n = X->rank() == 2 ? X->dims()[0] : 1;
    const int64_t f = X->dims().back();
    const int64_t per = static_cast<int64_t>(coef_.size()) / targets_;
    ONYX_CHECK_ARG(f == per, node_, ": input 0 has ", f, " features (shape ", ShapeToString(X->dims()),
                   ") but the coefficients are for ", per);
    std::vector<float> x;
    ONYX_RETURN_IF_ERROR(ml::ToFloat(*X, node_, &x));
    Tensor* Y = ctx.Output(0, {n, targets_}, ElemType::kFloat);
    if (Y == nullptr) return Status::OK();
    float* y = Y->data<float>();
    for (int64_t r = 0; r < n; ++r) {
      for (int64_t t = 0; t < targets_; ++t) {
        float s = intercepts_.empty() ? 0.f : intercepts_[t];
        for (int64_t k = 0; k < f; ++k) s += x[r * f + k] * coef_[t * f + k];
        y[r * targets_ + t] = s;
      }
      ml::TransformRow(post_, y + r * targets_, targets_);
    }
    return Status::OK();
  }

 private:
  std::string node_;
  std::vector<float> coef_, intercepts_;
  int64_t targets_ = 1;
  ml::PostTransform post_ = ml::PostTransform::kNone;
};

class OneHotEncoderKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    node_ = info.node().Describe();
    const Attribute* ints = info.Attr("cats_int64s");
    const Attribute* strs = info.Attr("cats_strings");
    const bool has_ints = ints != nullptr && !ints->ints.empty();
    const bool has_strs = strs != nullptr && !strs->strings.empty();
    ONYX_CHECK(has_ints != has_strs, ErrorCode::kInvalidGraph, node_,
               ": exactly one of the attributes cats_int64s and cats_strings must be given");
    if (has_ints)
      for (size_t i = 0; i < ints->ints.size(); ++i) int_cats_.emplace(ints->ints[i], static_cast<int64_t>(i));
    else
      for (size_t i = 0; i < strs->strings.size(); ++i) str_cats_.emplace(strs->strings[i], static_cast<int64_t>(i));
    n_cats_ = has_ints ? static_cast<int64_t>(ints->ints.size()) : static_cast<int64_t>(strs->strings.size());
    zeros_ = info.AttrInt("zeros", 1) != 0;
    return Status::OK();
  }

  Status Compute(KernelContext& ctx) const override {
    const Tensor* X = nullptr;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &X));
    const bool strings = X->type() == ElemType::kString;
    ONYX_CHECK_ARG(strings == !str_cats_.empty(), node_, ": input 0 is ", ElemTypeName(X->type()),
                   " but the categories are ", str_cats_.empty() ? "int64s (cats_int64s)" : "strings (cats_strings)");
    Dims out = X->dims();
    out.push_back(n_cats_);
    std::vector<int64_t> col(static_cast<size_t>(X->size()), -1);
    if (strings) {
      for (int64_t i = 0; i < X->size(); ++i) {
        auto it = str_cats_.find(X->data<std::string>()[i]);
        if (it != str_cats_.end()) col[i] = it->second;
        else ONYX_CHECK_ARG(zeros_, node_, ": input 0 value '", X->data<std::string>()[i], "' at ", i,
                            " is not a category and attribute zeros is 0");
      }
    } else {
      ONYX_RETURN_IF_ERROR(DispatchOver(MlNumericTypeSet{}, X->type(), node_.c_str(), [&](auto tag) -> Status {
        using T = typename decltype(tag)::type;
        for (int64_t i = 0; i < X->size(); ++i) {
          const T x = X->data<T>()[i];
          int64_t v = 0;  // NaN and out-of-range floats: defined (INT64_MIN), matching no category
          if constexpr (std::is_floating_point<T>::value) v = FloatToInt<int64_t>(x);
          else v = static_cast<int64_t>(x);
          auto it = int_cats_.find(v);
          if (it != int_cats_.end()) col[i] = it->second;
          else ONYX_CHECK_ARG(zeros_, node_, ": input 0 value ", v, " at ", i,
                              " is not a category and attribute zeros is 0");
        }
        return Status::OK();
      }));
    }
    Tensor* Y = ctx.Output(0, out, ElemType::kFloat);
    if (Y == nullptr) return Status::OK();
    float* y = Y->data<float>();
    std::fill(y, y + Y->size(), 0.f);
    for (int64_t i = 0; i < X->size(); ++i)
      if (col[i] >= 0) y[i * n_cats_ + col[i]] = 1.f;
    return Status::OK();
  }

 private:
  std::string node_;
  std::unordered_map<int64_t, int64_t> int_cats_;
  std::unordered_map<std::string, int64_t> str_cats_;
  int64_t n_cats_ = 0;
  bool zeros_ = true;
};

}  // namespace

ONYX_REGISTER_KERNEL(ArrayFeatureExtractorKernel, "ai.onnx.ml", "ArrayFeatureExtractor", 1, kMaxVersion,
                     JoinTypeSets<MlNumericTypeSet, TypeSet<std::string>>::type::ElemTypes());
ONYX_REGISTER_KERNEL(BinarizerKernel, "ai.onnx.ml", "Binarizer", 1, kMaxVersion, MlNumericTypeSet::ElemTypes());
ONYX_REGISTER_KERNEL(FeatureVectorizerKernel, "ai.onnx.ml", "FeatureVectorizer", 1, kMaxVersion,
                     MlNumericTypeSet::ElemTypes());
ONYX_REGISTER_KERNEL(ImputerKernel, "ai.onnx.ml", "Imputer", 1, kMaxVersion, MlNumericTypeSet::ElemTypes());
ONYX_REGISTER_KERNEL(ScalerKernel, "ai.onnx.ml", "Scaler", 1, kMaxVersion, MlNumericTypeSet::ElemTypes());
ONYX_REGISTER_KERNEL(LinearRegressorKernel, "ai.onnx.ml", "LinearRegressor", 1, kMaxVersion,
                     MlNumericTypeSet::ElemTypes());
ONYX_REGISTER_KERNEL(OneHotEncoderKernel, "ai.onnx.ml", "OneHotEncoder", 1, kMaxVersion,
                     JoinTypeSets<MlNumericTypeSet, TypeSet<std::string>>::type::ElemTypes());

}  // namespace onyx

// ai.onnx.ml SVMClassifier and SVMRegressor (opset 1), as libsvm/liblinear
// models converted by skl2onnx (SVC, NuSVC, SVR, OneClassSVM).
//
// Kernels: LINEAR x.y, POLY (gamma x.y + coef0)^degree, RBF
// exp(-gamma |x-y|^2), SIGMOID tanh(gamma x.y + coef0), computed in float
// with pair sums in double, as onnxruntime does. SVC classifies by one-vs-one
// votes; with prob_a/prob_b it turns the pairwise scores into class
// probabilities (Platt scaling + libsvm's multiclass coupling). A binary SVC
// without probabilities writes [-s, s] for its one score s, as onnxruntime.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "providers/cpu/ml/ml_common.h"
#include "providers/kernel.h"

namespace onyx {
namespace {

enum class SvmKernel { kLinear, kPoly, kRbf, kSigmoid };

struct SvmParams {
  SvmKernel kernel = SvmKernel::kLinear;
  float gamma = 0.f, coef0 = 0.f;
  float degree = 0.f;

  Status Read(const KernelInfo& info, const std::string& node) {
    const std::string k = info.AttrString("kernel_type", "LINEAR");
    if (k == "LINEAR") kernel = SvmKernel::kLinear;
    else if (k == "POLY") kernel = SvmKernel::kPoly;
    else if (k == "RBF") kernel = SvmKernel::kRbf;
    else if (k == "SIGMOID") kernel = SvmKernel::kSigmoid;
    else return MakeError(ErrorCode::kInvalidGraph, node, ": attribute kernel_type '", k,
                          "' is not one of LINEAR, POLY, RBF, SIGMOID");
    if (const Attribute* p = info.Attr("kernel_params"); p != nullptr && !p->floats.empty()) {
      ONYX_CHECK(p->floats.size() == 3, ErrorCode::kInvalidGraph, node,
                 ": attribute kernel_params must hold gamma, coef0 and degree, got ", p->floats.size(), " values");
      gamma = p->floats[0];
      coef0 = p->floats[1];
      degree = p->floats[2];
    }
    return Status::OK();
  }

  float Apply(const float* a, const float* b, int64_t f) const {
    if (kernel == SvmKernel::kRbf) {
      float s = 0.f;
      for (int64_t k = 0; k < f; ++k) {
        const float d = a[k] - b[k];
        s += d * d;
      }
      return std::exp(-gamma * s);
    }
    float s = 0.f;
    for (int64_t k = 0; k < f; ++k) s += a[k] * b[k];
    if (kernel == SvmKernel::kPoly) return std::pow(gamma * s + coef0, degree);
    if (kernel == SvmKernel::kSigmoid) return std::tanh(gamma * s + coef0);
    return s;
  }
};

// libsvm's coupling of pairwise probabilities r (k x k) into k class probabilities.
void MulticlassProbability(int64_t k, const std::vector<double>& r, float* out) {
  std::vector<double> q(static_cast<size_t>(k * k)), qp(static_cast<size_t>(k)), p(static_cast<size_t>(k));
  const int64_t max_iter = std::max<int64_t>(100, k);
  const double eps = 0.005 / static_cast<double>(k);
  for (int64_t t = 0; t < k; ++t) {
    p[t] = 1.0 / static_cast<double>(k);
    q[t * k + t] = 0;
    for (int64_t j = 0; j < t; ++j) {
      q[t * k + t] += r[j * k + t] * r[j * k + t];
      q[t * k + j] = q[j * k + t];
    }
    for (int64_t j = t + 1; j < k; ++j) {
      q[t * k + t] += r[j * k + t] * r[j * k + t];
      q[t * k + j] = -r[j * k + t] * r[t * k + j];
    }
  }
  for (int64_t it = 0; it < max_iter; ++it) {
    double pqp = 0;
    for (int64_t t = 0; t < k; ++t) {
      qp[t] = 0;
      for (int64_t j = 0; j < k; ++j) qp[t] += q[t * k + j] * p[j];
      pqp += p[t] * qp[t];
    }
    double max_error = 0;
    for (int64_t t = 0; t < k; ++t) max_error = std::max(max_error, std::fabs(qp[t] - pqp));
    if (max_error < eps) break;
    for (int64_t t = 0; t < k; ++t) {
      const double diff = (-qp[t] + pqp) / q[t * k + t];
      p[t] += diff;
      pqp = (pqp + diff * (diff * q[t * k + t] + 2 * qp[t])) / (1 + diff) / (1 + diff);
      for (int64_t j = 0; j < k; ++j) {
        qp[j] = (qp[j] + diff * q[t * k + j]) / (1 + diff);
        p[j] /= (1 + diff);
      }
    }
  }
  for (int64_t t = 0; t < k; ++t) out[t] = static_cast<float>(p[t]);
}

// Input 0 as [N, F] floats, F the model's feature count (both SVM kernels).
Status ReadSvmRows(const Tensor& X, const std::string& node, int64_t features, std::vector<float>* storage,
                   const float** x, int64_t* n) {
  int64_t f = 0;
  ONYX_RETURN_IF_ERROR(ml::FeatureMatrix<float>(X, node, storage, x, n, &f));
  ONYX_CHECK_ARG(f == features, node, ": input 0 has ", f, " features (shape ", ShapeToString(X.dims()),
                 ") but the model has ", features);
  return Status::OK();
}

class SVMClassifierKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    node_ = info.node().Describe();
    ONYX_RETURN_IF_ERROR(params_.Read(info, node_));
    ONYX_RETURN_IF_ERROR(ml::ReadClassLabels(info, "classlabels_ints", node_, &int_labels_, &string_labels_));
    classes_ = static_cast<int64_t>(int_labels_.empty() ? string_labels_.size() : int_labels_.size());
    auto floats = [&](const char* name) {
      const Attribute* a = info.Attr(name);
      return a ? a->floats : std::vector<float>{};
    };
    coef_ = floats("coefficients");
    rho_ = floats("rho");
    prob_a_ = floats("prob_a");
    prob_b_ = floats("prob_b");
    sv_ = floats("support_vectors");
    per_class_ = info.AttrInts("vectors_per_class");
    ONYX_RETURN_IF_ERROR(ml::ParsePostTransform(info.AttrString("post_transform", "NONE"), node_, &post_));
    ONYX_CHECK(!coef_.empty(), ErrorCode::kInvalidGraph, node_, ": attribute coefficients is required");
    ONYX_CHECK(!rho_.empty(), ErrorCode::kInvalidGraph, node_, ": attribute rho is required");
    ONYX_CHECK(prob_a_.size() == prob_b_.size(), ErrorCode::kInvalidGraph, node_, ": prob_a has ", prob_a_.size(),
               " values but prob_b has ", prob_b_.size());
    vectors_ = 0;
    for (int64_t v : per_class_) {
      ONYX_CHECK(v >= 0, ErrorCode::kInvalidGraph, node_, ": vectors_per_class holds a negative count");
      starts_.push_back(vectors_);
      vectors_ += v;
    }
    const int64_t pairs = classes_ * (classes_ - 1) / 2;
    if (vectors_ > 0) {
      svc_ = true;
      ONYX_CHECK(static_cast<int64_t>(per_class_.size()) == classes_, ErrorCode::kInvalidGraph, node_,
                 ": vectors_per_class has ", per_class_.size(), " entries for ", classes_, " classes");
      ONYX_CHECK(static_cast<int64_t>(sv_.size()) % vectors_ == 0 && !sv_.empty(), ErrorCode::kInvalidGraph, node_,
                 ": ", sv_.size(), " support vector values do not split into ", vectors_, " vectors");
      features_ = static_cast<int64_t>(sv_.size()) / vectors_;
      ONYX_CHECK(static_cast<int64_t>(coef_.size()) >= (classes_ - 1) * vectors_, ErrorCode::kInvalidGraph, node_,
                 ": ", coef_.size(), " coefficients, expected ", (classes_ - 1) * vectors_);
      ONYX_CHECK(static_cast<int64_t>(rho_.size()) >= pairs, ErrorCode::kInvalidGraph, node_, ": ", rho_.size(),
                 " rho values for ", pairs, " class pairs");
      ONYX_CHECK(prob_a_.empty() || static_cast<int64_t>(prob_a_.size()) >= pairs, ErrorCode::kInvalidGraph, node_,
                 ": ", prob_a_.size(), " prob_a values for ", pairs, " class pairs");
    } else {
      ONYX_CHECK(static_cast<int64_t>(coef_.size()) % classes_ == 0, ErrorCode::kInvalidGraph, node_, ": ",
                 coef_.size(), " coefficients do not split into ", classes_, " classes");
      features_ = static_cast<int64_t>(coef_.size()) / classes_;
      params_.kernel = SvmKernel::kLinear;
    }
    all_positive_ = std::all_of(coef_.begin(), coef_.end(), [](float v) { return v >= 0.f; });
    return Status::OK();
  }

  Status Compute(KernelContext& ctx) const override {
    const Tensor* X = nullptr;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &X));
    int64_t n = 0;
    const float* x = nullptr;
    std::vector<float> storage;
    ONYX_RETURN_IF_ERROR(ReadSvmRows(*X, node_, features_, &storage, &x, &n));
    const bool proba = svc_ && !prob_a_.empty();
    const int64_t pairs = classes_ * (classes_ - 1) / 2;
    int64_t width = classes_;
    if (svc_ && !proba) width = classes_ > 2 ? pairs : 2;
    const bool strings = !string_labels_.empty();
    Tensor* Y = ctx.Output(0, {n}, strings ? ElemType::kString : ElemType::kInt64);
    Tensor* Z = ctx.Output(1, {n, width}, ElemType::kFloat);
    std::vector<float> kern(static_cast<size_t>(vectors_)), scores(static_cast<size_t>(std::max(pairs, classes_)));
    std::vector<int64_t> votes(static_cast<size_t>(classes_));
    std::vector<double> r(static_cast<size_t>(classes_ * classes_));
    std::vector<float> z(static_cast<size_t>(std::max<int64_t>(width, 2)));
    for (int64_t row = 0; row < n; ++row) {
      const float* xr = x + row * features_;
      int64_t best = 0;
      float max_weight = 0.f;
      int64_t n_scores = classes_;
      if (!svc_) {
        for (int64_t c = 0; c < classes_; ++c) scores[c] = params_.Apply(xr, coef_.data() + c * features_, features_) + rho_[0];
        best = std::max_element(scores.begin(), scores.begin() + classes_) - scores.begin();
        max_weight = scores[best];
      } else {
        for (int64_t v = 0; v < vectors_; ++v) kern[v] = params_.Apply(xr, sv_.data() + v * features_, features_);
        std::fill(votes.begin(), votes.end(), 0);
        int64_t idx = 0;
        for (int64_t i = 0; i < classes_; ++i) {
          for (int64_t j = i + 1; j < classes_; ++j, ++idx) {
            double s = 0;
            const float* ci = coef_.data() + (j - 1) * vectors_ + starts_[i];
            for (int64_t m = 0; m < per_class_[i]; ++m) s += ci[m] * kern[starts_[i] + m];
            const float* cj = coef_.data() + i * vectors_ + starts_[j];
            for (int64_t m = 0; m < per_class_[j]; ++m) s += cj[m] * kern[starts_[j] + m];
            s += rho_[idx];
            scores[idx] = static_cast<float>(s);
            ++votes[s > 0 ? i : j];
          }
        }
        best = std::max_element(votes.begin(), votes.end()) - votes.begin();
        n_scores = pairs;
        if (proba) {
          std::fill(r.begin(), r.end(), 0.0);
          for (int64_t i = 0, p = 0; i < classes_; ++i) {
            for (int64_t j = i + 1; j < classes_; ++j, ++p) {
              float v = 1.f - ml::Logistic(scores[p] * prob_a_[p] + prob_b_[p]);
              v = std::min(std::max(v, 1.0e-7f), 1.f - 1.0e-7f);
              r[i * classes_ + j] = v;
              r[j * classes_ + i] = 1.f - v;
            }
          }
          MulticlassProbability(classes_, r, scores.data());
          n_scores = classes_;
        }
      }
      // The label.
      int64_t label = best;
      if (pairs == 1 && !proba) {
        if (all_positive_ && max_weight >= 0.5f) label = 1;
        else if (max_weight > 0.f && !all_positive_) label = 1;
      }
      if (Y != nullptr) {
        if (strings) Y->data<std::string>()[row] = string_labels_[label];
        else Y->data<int64_t>()[row] = int_labels_[label];
      }
      if (Z == nullptr) continue;
      float* zr = Z->data<float>() + row * width;
      if (n_scores == 1) {
        // One pairwise score for two classes.
        const float s = scores[0];
        if (post_ == ml::PostTransform::kProbit) {
          zr[0] = ml::Probit(s);
          zr[1] = 0.f;
        } else if (post_ == ml::PostTransform::kNone) {
          zr[0] = -s;
          zr[1] = s;
        } else {
          zr[0] = 1.f - s;
          zr[1] = s;
        }
      } else {
        std::copy(scores.begin(), scores.begin() + n_scores, zr);
        ml::TransformRow(post_, zr, n_scores);
      }
    }
    return Status::OK();
  }

 private:
  std::string node_;
  SvmParams params_;
  std::vector<int64_t> int_labels_;
  std::vector<std::string> string_labels_;
  int64_t classes_ = 0, vectors_ = 0, features_ = 0;
  std::vector<float> coef_, rho_, prob_a_, prob_b_, sv_;
  std::vector<int64_t> per_class_, starts_;
  ml::PostTransform post_ = ml::PostTransform::kNone;
  bool svc_ = false, all_positive_ = true;
};

class SVMRegressorKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    node_ = info.node().Describe();
    ONYX_RETURN_IF_ERROR(params_.Read(info, node_));
    auto floats = [&](const char* name) {
      const Attribute* a = info.Attr(name);
      return a ? a->floats : std::vector<float>{};
    };
    coef_ = floats("coefficients");
    rho_ = floats("rho");
    sv_ = floats("support_vectors");
    supports_ = info.AttrInt("n_supports", 0);
    one_class_ = info.AttrInt("one_class", 0) != 0;
    ONYX_RETURN_IF_ERROR(ml::ParsePostTransform(info.AttrString("post_transform", "NONE"), node_, &post_));
    ONYX_CHECK(!coef_.empty() && !rho_.empty(), ErrorCode::kInvalidGraph, node_,
               ": attributes coefficients and rho are required");
    if (supports_ > 0) {
      ONYX_CHECK(static_cast<int64_t>(sv_.size()) % supports_ == 0 && !sv_.empty(), ErrorCode::kInvalidGraph, node_,
                 ": ", sv_.size(), " support vector values do not split into n_supports ", supports_, " vectors");
      ONYX_CHECK(static_cast<int64_t>(coef_.size()) >= supports_, ErrorCode::kInvalidGraph, node_, ": ",
                 coef_.size(), " coefficients for ", supports_, " support vectors");
      features_ = static_cast<int64_t>(sv_.size()) / supports_;
    } else {
      features_ = static_cast<int64_t>(coef_.size());
      params_.kernel = SvmKernel::kLinear;
    }
    return Status::OK();
  }

  Status Compute(KernelContext& ctx) const override {
    const Tensor* X = nullptr;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &X));
    int64_t n = 0;
    const float* x = nullptr;
    std::vector<float> storage;
    ONYX_RETURN_IF_ERROR(ReadSvmRows(*X, node_, features_, &storage, &x, &n));
    Tensor* Y = ctx.Output(0, {n, 1}, ElemType::kFloat);
    if (Y == nullptr) return Status::OK();
    for (int64_t r = 0; r < n; ++r) {
      const float* xr = x + r * features_;
      double s = 0;
      if (supports_ > 0) {
        for (int64_t j = 0; j < supports_; ++j) s += coef_[j] * params_.Apply(xr, sv_.data() + j * features_, features_);
      } else {
        s = params_.Apply(xr, coef_.data(), features_);
      }
      s += rho_[0];
      float v = static_cast<float>(s);
      if (one_class_) v = v > 0.f ? 1.f : -1.f;
      else if (post_ == ml::PostTransform::kProbit) v = ml::Probit(v);
      Y->data<float>()[r] = v;
    }
    return Status::OK();
  }

 private:
  std::string node_;
  SvmParams params_;
  std::vector<float> coef_, rho_, sv_;
  int64_t supports_ = 0, features_ = 0;
  bool one_class_ = false;
  ml::PostTransform post_ = ml::PostTransform::kNone;
};

}  // namespace

ONYX_REGISTER_KERNEL(SVMClassifierKernel, "ai.onnx.ml", "SVMClassifier", 1, kMaxVersion, ml::FeatureTypes());
ONYX_REGISTER_KERNEL(SVMRegressorKernel, "ai.onnx.ml", "SVMRegressor", 1, kMaxVersion, ml::FeatureTypes());

}  // namespace onyx

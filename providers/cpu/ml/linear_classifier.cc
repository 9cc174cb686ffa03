// ai.onnx.ml LinearClassifier (opset 1): scores = X * coefficients^T +
// intercepts for E classes, a post_transform, and the label of the best raw
// score; skl2onnx emits it for LogisticRegression, LinearSVC and the like.
//
// Binary models have one row of coefficients and two labels. The spec says
// nothing of their scores; we write what onnxruntime writes, [1 - p, p] with
// p the transformed score for LOGISTIC and PROBIT and the raw score
// otherwise, so converted models keep the outputs they were checked against.
// (onnx's reference writes [-s, s] and applies the transform to both.)
#include <algorithm>
#include <climits>

#include "providers/kernel.h"
#include "providers/cpu/ml/ml_common.h"

namespace onyx {
namespace {

class LinearClassifierKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    node_ = info.node().Describe();
    ONYX_RETURN_IF_ERROR(ml::ReadClassLabels(info, "classlabels_ints", node_, &int_labels_, &string_labels_));
    const int64_t n_labels = static_cast<int64_t>(int_labels_.empty() ? string_labels_.size() : int_labels_.size());
    const Attribute* coef = info.Attr("coefficients");
    ONYX_CHECK(coef != nullptr && !coef->floats.empty(), ErrorCode::kInvalidGraph, node_,
               ": attribute 'coefficients' is required");
    coefficients_ = coef->floats;
    if (const Attribute* b = info.Attr("intercepts")) intercepts_ = b->floats;
    ONYX_RETURN_IF_ERROR(ml::ParsePostTransform(info.AttrString("post_transform", "NONE"), node_, &post_));
    // multi_class (OvR or multinomial) is how the model was trained; it does
    // not change how scores are computed.
    n_labels_ = n_labels;
    if (!intercepts_.empty()) {
      classes_ = static_cast<int64_t>(intercepts_.size());
      ONYX_CHECK(coefficients_.size() % intercepts_.size() == 0, ErrorCode::kInvalidGraph, node_, ": ",
                 coefficients_.size(), " coefficients do not split into ", classes_, " classes (one per intercept)");
      ONYX_RETURN_IF_ERROR(CheckClasses(classes_, ErrorCode::kInvalidGraph));
    }
    return Status::OK();
  }

  Status Compute(KernelContext& ctx) const override {
    const Tensor* X = ctx.Input(0);
    ONYX_CHECK_ARG(X != nullptr, node_, ": input 0 must be a tensor");
    ONYX_CHECK_ARG(X->rank() == 1 || X->rank() == 2, node_, ": input 0 must have shape [N, F] or [F], got ",
                   ShapeToString(X->dims()));
    const int64_t n = X->rank() == 2 ? X->dims()[0] : 1;
    const int64_t f = X->dims().back();
    const int64_t n_coef = static_cast<int64_t>(coefficients_.size());
    int64_t classes = classes_;
    if (classes < 0) {
      // Without intercepts the number of features says how many rows there are.
      ONYX_CHECK_ARG(f > 0 && n_coef % f == 0, node_, ": input 0 has ", f, " features (shape ",
                     ShapeToString(X->dims()), "), which does not divide the ", n_coef, " coefficients");
      classes = n_coef / f;
      ONYX_RETURN_IF_ERROR(CheckClasses(classes, ErrorCode::kInvalidArgument));
    }
    ONYX_CHECK_ARG(n_coef == classes * f, node_, ": input 0 has ", f, " features (shape ", ShapeToString(X->dims()),
                   ") but the ", n_coef, " coefficients are for ", n_coef / classes, " features");
    std::vector<float> x;
    ONYX_RETURN_IF_ERROR(ml::ToFloat(*X, node_, &x));
    const bool binary = classes == 1;
    const int64_t out_classes = binary ? 2 : classes;
    const bool strings = !string_labels_.empty();
    Tensor* Y = ctx.Output(0, {n}, strings ? ElemType::kString : ElemType::kInt64);
    Tensor* Z = ctx.Output(1, {n, out_classes}, ElemType::kFloat);
    std::vector<float> scores(static_cast<size_t>(classes));
    for (int64_t r = 0; r < n; ++r) {
      const float* xr = x.data() + r * f;
      for (int64_t c = 0; c < classes; ++c) {
        float s = intercepts_.empty() ? 0.f : intercepts_[c];
        const float* w = coefficients_.data() + c * f;
        for (int64_t k = 0; k < f; ++k) s += xr[k] * w[k];
        scores[c] = s;
      }
      // Every transform is monotonic, so the best raw score names the label.
      int64_t best = 0;
      if (binary) {
        best = scores[0] > 0.f ? 1 : 0;
      } else {
        for (int64_t c = 1; c < classes; ++c)
          if (scores[c] > scores[best]) best = c;
      }
      if (Y != nullptr) {
        if (strings) Y->data<std::string>()[r] = string_labels_[best];
        else Y->data<int64_t>()[r] = int_labels_[best];
      }
      if (Z == nullptr) continue;
      float* z = Z->data<float>() + r * out_classes;
      if (binary) {
        float p = scores[0];
        if (post_ == ml::PostTransform::kLogistic) p = ml::Logistic(p);
        else if (post_ == ml::PostTransform::kProbit) p = ml::Probit(p);
        z[0] = 1.f - p;
        z[1] = p;
      } else {
        std::copy(scores.begin(), scores.end(), z);
        ml::TransformRow(post_, z, classes);
      }
    }
    return Status::OK();
  }

 private:
  // Rows of coefficients match the labels, or a binary model has one row and two labels.
  Status CheckClasses(int64_t classes, ErrorCode code) const {
    ONYX_CHECK(classes == n_labels_ || (classes == 1 && n_labels_ == 2), code, node_, ": ", n_labels_,
               " class labels for ", classes, " rows of coefficients (a binary model has 1 row and 2 labels)");
    return Status::OK();
  }

  std::string node_;
  std::vector<int64_t> int_labels_;
  std::vector<std::string> string_labels_;
  std::vector<float> coefficients_;
  std::vector<float> intercepts_;
  int64_t n_labels_ = 0;
  int64_t classes_ = -1;  // rows of coefficients; -1: known once the features are
  ml::PostTransform post_ = ml::PostTransform::kNone;
};

}  // namespace

ONYX_REGISTER_KERNEL(LinearClassifierKernel, "ai.onnx.ml", "LinearClassifier", 1, kMaxVersion, ml::FeatureTypes());

}  // namespace onyx

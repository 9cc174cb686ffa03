// ai.onnx.ml Normalizer (opset 1): divides each row of [N, C] (or the one
// row of [C]) by its max (the largest value, as the spec's max(X) says, not
// the largest magnitude), its L1 norm or its L2 norm. A row whose divisor is
// zero is left as it is, as onnxruntime does.
#include <algorithm>
#include <climits>
#include <cmath>

#include "providers/kernel.h"
#include "providers/cpu/ml/ml_common.h"

namespace onyx {
namespace {

class NormalizerKernel final : public OpKernel {
 public:
  enum class Norm { kMax, kL1, kL2 };

  Status Init(const KernelInfo& info) {
    node_ = info.node().Describe();
    const std::string norm = info.AttrString("norm", "MAX");
    if (norm == "MAX") norm_ = Norm::kMax;
    else if (norm == "L1") norm_ = Norm::kL1;
    else if (norm == "L2") norm_ = Norm::kL2;
    else return MakeError(ErrorCode::kInvalidGraph, node_, ": attribute norm '", norm, "' is not one of MAX, L1, L2");
    return Status::OK();
  }

  Status Compute(KernelContext& ctx) const override {
    const Tensor* X = ctx.Input(0);
    ONYX_CHECK_ARG(X != nullptr, node_, ": input 0 must be a tensor");
    ONYX_CHECK_ARG(X->rank() == 1 || X->rank() == 2, node_, ": input 0 must have shape [N, C] or [C], got ",
                   ShapeToString(X->dims()));
    std::vector<float> x;
    ONYX_RETURN_IF_ERROR(ml::ToFloat(*X, node_, &x));
    Tensor* Y = ctx.Output(0, X->dims(), ElemType::kFloat);
    if (Y == nullptr) return Status::OK();
    const int64_t cols = X->dims().back();
    const int64_t rows = cols > 0 ? X->size() / cols : 0;
    float* y = Y->data<float>();
    for (int64_t r = 0; r < rows; ++r) {
      const float* xr = x.data() + r * cols;
      float* yr = y + r * cols;
      float d = 0.f;
      if (norm_ == Norm::kMax) {
        d = xr[0];
        for (int64_t c = 1; c < cols; ++c) d = std::max(d, xr[c]);
      } else if (norm_ == Norm::kL1) {
        for (int64_t c = 0; c < cols; ++c) d += std::fabs(xr[c]);
      } else {
        for (int64_t c = 0; c < cols; ++c) d += xr[c] * xr[c];
        d = std::sqrt(d);
      }
      for (int64_t c = 0; c < cols; ++c) yr[c] = d != 0.f ? xr[c] / d : xr[c];
    }
    return Status::OK();
  }

 private:
  std::string node_;
  Norm norm_ = Norm::kMax;
};

}  // namespace

ONYX_REGISTER_KERNEL(NormalizerKernel, "ai.onnx.ml", "Normalizer", 1, kMaxVersion, ml::FeatureTypes());

}  // namespace onyx

// LayerNormalization (opset 17): each row (the dims from `axis` on, which are
// contiguous) is normalized to zero mean and unit variance, then scaled and shifted.
// The same kernel runs onnxruntime's SimplifiedLayerNormalization (RMS norm,
// which it registers in the default domain, version 1, and its optimizer and
// LLaMA-style exporters write): inputs X, scale; outputs Y, inv_std_var;
//   Y = X / sqrt(mean(X^2) + epsilon) * scale   (no mean subtracted, no bias).
#include <algorithm>
#include <cmath>
#include <type_traits>
#include <vector>

#include "providers/cpu/common/dispatch.h"
#include "providers/cpu/common/half_float.h"
#include "providers/cpu/common/fast_math.h"
#include "providers/kernel.h"

namespace onyx {
namespace {

// `t` broadcast (unidirectionally, right-aligned) to `shape`, flattened.
// Returns false when it does not broadcast.
template <typename T>
bool ExpandTo(const Tensor& t, const Dims& shape, std::vector<T>* out) {
  const Dims& td = t.dims();
  if (td.size() > shape.size()) {
    // Leading 1s beyond the target rank are harmless.
    for (size_t i = 0; i + shape.size() < td.size(); ++i)
      if (td[i] != 1) return false;
  }
  const size_t r = shape.size();
  std::vector<int64_t> stride(r, 0);
  int64_t s = 1;
  for (size_t i = r; i-- > 0;) {
    const size_t back = r - 1 - i;
    const int64_t d = back < td.size() ? td[td.size() - 1 - back] : 1;
    if (d != 1 && d != shape[i]) return false;
    stride[i] = d == 1 ? 0 : s;
    s *= d;
  }
  const int64_t n = ShapeSize(shape);
  out->resize(n);
  const T* src = t.data<T>();
  for (int64_t i = 0; i < n; ++i) {
    int64_t rem = i, off = 0;
    for (size_t j = r; j-- > 0;) {
      off += (rem % shape[j]) * stride[j];
      rem /= shape[j];
    }
    (*out)[i] = src[off];
  }
  return true;
}

// True when `a` and `b` are the same shape up to leading 1s.
bool SameShapeIgnoringLeadingOnes(const Dims& a, const Dims& b) {
  auto strip = [](const Dims& d) {
    size_t i = 0;
    while (i < d.size() && d[i] == 1) ++i;
    return Dims(d.begin() + i, d.end());
  };
  return strip(a) == strip(b);
}

class LayerNormKernel final : public OpKernel {
 public:
  explicit LayerNormKernel(bool simplified = false) : simplified_(simplified) {}

  Status Init(const KernelInfo& info) {
    axis_ = info.AttrInt("axis", -1);
    epsilon_ = info.AttrFloat("epsilon", 1e-5f);
    ONYX_CHECK(epsilon_ >= 0.f, ErrorCode::kInvalidGraph, op(), ": attribute epsilon must be >= 0, got ", epsilon_);
    const int64_t stash = info.AttrInt("stash_type", 1);
    ONYX_CHECK(stash == 1, ErrorCode::kNotImplemented, op(), ": stash_type ", stash,
               " is not implemented (only 1, float)");
    return Status::OK();
  }

  Status Compute(KernelContext& ctx) const override {
    // float16/bfloat16 run the float code, accumulating in float.
    if (const Tensor* in0 = ctx.Input(0); in0 != nullptr && IsHalfType(in0->type()))
      return ComputeThroughFloat(*this, ctx, {{0, 0}});
    const Tensor* x = nullptr;
    const Tensor* scale = nullptr;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &x));
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(1, &scale));
    const Tensor* bias = simplified_ ? nullptr : ctx.Input(2);
    const Dims& xd = x->dims();
    const int64_t rank = static_cast<int64_t>(xd.size());
    ONYX_CHECK_ARG(axis_ >= -rank && axis_ < rank, op(), ": attribute axis ", axis_, " is out of range for input X ",
                   ShapeToString(xd));
    ONYX_CHECK_ARG(scale->type() == x->type() && (bias == nullptr || bias->type() == x->type()), op(),
                   ": inputs X, Scale", simplified_ ? "" : " and B", " must have the same element type, got ",
                   ElemTypeName(x->type()), " and ", ElemTypeName(scale->type()));
    const size_t axis = static_cast<size_t>(axis_ < 0 ? axis_ + rank : axis_);
    const Dims norm_shape(xd.begin() + axis, xd.end());
    const int64_t cols = ShapeSize(norm_shape);
    const int64_t rows = ShapeSize(Dims(xd.begin(), xd.begin() + axis));

    Dims stat_dims(xd.begin(), xd.begin() + axis);
    stat_dims.resize(xd.size(), 1);
    Tensor* y = ctx.Output(0, xd, x->type());
    // Simplified: outputs Y, inv_std_var.
    const int mean_at = simplified_ ? -1 : 1, inv_at = simplified_ ? 1 : 2;
    Tensor* mean_out = mean_at > 0 && ctx.OutputCount() > mean_at ? ctx.Output(mean_at, stat_dims, ElemType::kFloat)
                                                                  : nullptr;
    Tensor* inv_out = ctx.OutputCount() > inv_at ? ctx.Output(inv_at, stat_dims, ElemType::kFloat) : nullptr;

    return DispatchFloat(x->type(), op(), [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      // Usually Scale and B already have the normalized shape; otherwise expand them once.
      std::vector<T> scale_buf, bias_buf;
      const T* sv = scale->data<T>();
      const T* bv = bias ? bias->data<T>() : nullptr;
      if (!SameShapeIgnoringLeadingOnes(scale->dims(), norm_shape)) {
        ONYX_CHECK_ARG(ExpandTo<T>(*scale, norm_shape, &scale_buf), op(), ": input Scale ",
                       ShapeToString(scale->dims()), " does not broadcast to ", ShapeToString(norm_shape),
                       " (input X ", ShapeToString(xd), ", axis ", axis_, ")");
        sv = scale_buf.data();
      }
      if (bias && !SameShapeIgnoringLeadingOnes(bias->dims(), norm_shape)) {
        ONYX_CHECK_ARG(ExpandTo<T>(*bias, norm_shape, &bias_buf), "LayerNormalization: input B ",
                       ShapeToString(bias->dims()), " does not broadcast to ", ShapeToString(norm_shape),
                       " (input X ", ShapeToString(xd), ", axis ", axis_, ")");
        bv = bias_buf.data();
      }
      if (y == nullptr) return Status::OK();
      const T* xv = x->data<T>();
      T* yv = y->data<T>();
      float* mv = mean_out ? mean_out->data<float>() : nullptr;
      float* iv = inv_out ? inv_out->data<float>() : nullptr;
      const T eps = static_cast<T>(epsilon_);
      ThreadPool::For(ctx.threads(), rows, std::max<int64_t>(1, 16384 / std::max<int64_t>(cols, 1)), [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
          const T* src = xv + r * cols;
          T* dst = yv + r * cols;
          if constexpr (std::is_same<T, float>::value) {
            // The same two passes and the normalization in SIMD, with the
            // unfused graph's roundings (fastmath::NormStats, NormalizeRow).
            const fastmath::RowNorm st = fastmath::NormStats(src, cols, eps, simplified_);
            fastmath::NormalizeRow(src, st, simplified_, sv, bv, dst, cols);
            if (mv) mv[r] = st.mean;
            if (iv) iv[r] = 1.f / st.sd;
            continue;
          }
          // Two passes (mean, then squared deviations) avoid the cancellation
          // of E[x^2] - E[x]^2 on rows with a large mean.
          T sum = 0;
          if (!simplified_)
            for (int64_t i = 0; i < cols; ++i) sum += src[i];
          const T mean = sum / static_cast<T>(cols);  // 0 when simplified
          T sq = 0;
          for (int64_t i = 0; i < cols; ++i) sq += (src[i] - mean) * (src[i] - mean);
          const T inv = T(1) / std::sqrt(sq / static_cast<T>(cols) + eps);
          if (bv) {
            for (int64_t i = 0; i < cols; ++i) dst[i] = (src[i] - mean) * inv * sv[i] + bv[i];
          } else {
            for (int64_t i = 0; i < cols; ++i) dst[i] = (src[i] - mean) * inv * sv[i];
          }
          if (mv) mv[r] = static_cast<float>(mean);
          if (iv) iv[r] = static_cast<float>(inv);
        }
      });
      return Status::OK();
    });
  }

 private:
  const char* op() const { return simplified_ ? "SimplifiedLayerNormalization" : "LayerNormalization"; }

  bool simplified_ = false;
  int64_t axis_ = -1;
  float epsilon_ = 1e-5f;
};

}  // namespace

ONYX_REGISTER_KERNEL(LayerNormKernel, "", "LayerNormalization", 17, kMaxVersion, FloatOrHalfTypes());
// Before opset 17 LayerNormalization is onnxruntime's own default-domain op
// (version 1, the same inputs and attributes), which its optimizer and ours
// (core/optimizer/layer_norm_fusion.cc) write into older models.
ONYX_REGISTER_KERNEL(LayerNormKernel, "", "LayerNormalization", 1, 16, FloatOrHalfTypes());
ONYX_REGISTER_KERNEL(LayerNormKernel, "", "SimplifiedLayerNormalization", 1, kMaxVersion, FloatOrHalfTypes(), true);

}  // namespace onyx

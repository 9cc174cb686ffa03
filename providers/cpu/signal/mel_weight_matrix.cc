// MelWeightMatrix (opset 17): [dft_length/2 + 1, num_mel_bins] triangular
// filters, evenly spaced on the mel scale (mel = 2595 log10(1 + hz/700))
// between lower_edge_hertz and upper_edge_hertz, each rising from 0 at its
// left edge to 1 at its centre and falling to 0 at its right edge, with the
// edges snapped to spectrogram bins as floor((dft_length + 1) * hz / sample_rate).
// The formula is the reference's; output_datatype picks the element type.
#include <cmath>
#include <cstdint>
#include <vector>

#include "providers/cpu/common/dispatch.h"
#include "providers/cpu/common/indexing.h"
#include "providers/kernel.h"

namespace onyx {

namespace {

using MelOutTypeSet = NumericOrHalfTypeSet;

// A one-value float input of type float, double, float16 or bfloat16.
Status ReadHertz(const Tensor& t, const char* what, double* out) {
  ONYX_CHECK_ARG(t.size() == 1 && t.rank() <= 1, "MelWeightMatrix: ", what, " must be a scalar, got shape ",
                 ShapeToString(t.dims()));
  return DispatchOver(FloatOrHalfTypeSet{}, t.type(), "MelWeightMatrix", [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    // The reference computes the mel edges in the inputs' own precision.
    *out = static_cast<double>(static_cast<float>(t.data<T>()[0]));
    return Status::OK();
  });
}

class MelWeightMatrixKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    const int64_t dt = info.AttrInt("output_datatype", 1);
    ONYX_CHECK_ARG(IsKnownElemType(static_cast<int32_t>(dt)), "MelWeightMatrix: attribute output_datatype ", dt,
                   " is not a type");
    out_type_ = static_cast<ElemType>(dt);
    return Status::OK();
  }

  Status Compute(KernelContext& ctx) const override {
    const Tensor* t[5] = {};
    for (int i = 0; i < 5; ++i) ONYX_RETURN_IF_ERROR(ctx.RequiredInput(i, &t[i]));
    int64_t mels = 0, dft_length = 0, rate = 0;
    ONYX_RETURN_IF_ERROR(ReadIndexScalar(*t[0], "MelWeightMatrix", "input 0 (num_mel_bins)", &mels));
    ONYX_RETURN_IF_ERROR(ReadIndexScalar(*t[1], "MelWeightMatrix", "input 1 (dft_length)", &dft_length));
    ONYX_RETURN_IF_ERROR(ReadIndexScalar(*t[2], "MelWeightMatrix", "input 2 (sample_rate)", &rate));
    double lo = 0, hi = 0;
    ONYX_RETURN_IF_ERROR(ReadHertz(*t[3], "input 3 (lower_edge_hertz)", &lo));
    ONYX_RETURN_IF_ERROR(ReadHertz(*t[4], "input 4 (upper_edge_hertz)", &hi));
    ONYX_CHECK_ARG(mels > 0, "MelWeightMatrix: input 0 (num_mel_bins) must be positive, got ", mels);
    ONYX_CHECK_ARG(dft_length > 0, "MelWeightMatrix: input 1 (dft_length) must be positive, got ", dft_length);
    ONYX_CHECK_ARG(rate > 0, "MelWeightMatrix: input 2 (sample_rate) must be positive, got ", rate);
    ONYX_CHECK_ARG(lo >= 0 && lo <= hi && hi <= rate / 2.0, "MelWeightMatrix: inputs 3 (lower_edge_hertz) ", lo,
                   " and 4 (upper_edge_hertz) ", hi, " must satisfy 0 <= lower <= upper <= sample_rate / 2 (",
                   rate / 2.0, ")");
    const int64_t spec_bins = dft_length / 2 + 1;
    // Edges in float, as the reference takes them from float inputs.
    const float low_mel = static_cast<float>(2595.0f * std::log1p(static_cast<float>(lo) / 700.0f) / std::log(10.0f));
    const float high_mel = static_cast<float>(2595.0f * std::log1p(static_cast<float>(hi) / 700.0f) / std::log(10.0f));
    const float step = (high_mel - low_mel) / static_cast<float>(mels + 2);
    // The scratch below is as long as the output is wide: the output's
    // allocation (under the session's memory limit) goes first.
    Tensor* Y = ctx.Output(0, {spec_bins, mels}, out_type_);
    std::vector<int64_t> edge(static_cast<size_t>(mels + 2));
    for (int64_t i = 0; i < mels + 2; ++i) {
      const double mel = static_cast<double>(i) * static_cast<double>(step) + static_cast<double>(low_mel);
      const double hz = 700.0 * std::expm1(mel / 2595.0 * std::log(10.0));
      const double e = std::floor(static_cast<double>(dft_length + 1) * hz / static_cast<double>(rate));
      // Edges past the spectrum (float rounding at the top) are clamped, before
      // converting (hostile frequencies give inf or NaN here).
      edge[i] = !(e > 0) ? 0 : e >= static_cast<double>(spec_bins - 1) ? spec_bins - 1 : static_cast<int64_t>(e);
    }
    std::vector<double> w(static_cast<size_t>(spec_bins * mels), 0.0);
    for (int64_t i = 0; i < mels; ++i) {
      const int64_t left = edge[i], centre = edge[i + 1], right = edge[i + 2];
      if (centre == left) {
        w[centre * mels + i] = 1.0;
      } else {
        for (int64_t j = left; j <= centre; ++j)
          w[j * mels + i] = static_cast<double>(j - left) / static_cast<double>(centre - left);
      }
      for (int64_t j = centre; j < right; ++j)
        w[j * mels + i] = static_cast<double>(right - j) / static_cast<double>(right - centre);
    }
    if (Y == nullptr) return Status::OK();
    return DispatchOver(MelOutTypeSet{}, out_type_, "MelWeightMatrix", [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      T* y = Y->data<T>();
      for (size_t k = 0; k < w.size(); ++k) y[k] = static_cast<T>(w[k]);
      return Status::OK();
    });
  }

 private:
  ElemType out_type_ = ElemType::kFloat;
};

}  // namespace

ONYX_REGISTER_KERNEL(MelWeightMatrixKernel, "", "MelWeightMatrix", 17, kMaxVersion, std::vector<ElemType>{
                     ElemType::kInt32, ElemType::kInt64});

}  // namespace onyx

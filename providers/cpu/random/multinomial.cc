// Multinomial: for each row of input [batch, classes] (unnormalised log
// probabilities), `sample_size` class indices drawn with probabilities
// softmax(row). Sample j of row b uses word b * sample_size + j of the range
// reserved for the run.
#include <algorithm>
#include <climits>
#include <cmath>

#include "providers/cpu/random/random_common.h"

namespace onyx {
namespace {

using namespace random_kernels;

constexpr const char* kOp = "Multinomial";

// A row can be sampled when it has no NaN or +inf and at least one finite
// logit; *why says which rule a row breaks.
template <typename T>
bool RowIsValid(const T* x, int64_t classes, std::string* why) {
  bool any_finite = false;
  for (int64_t c = 0; c < classes; ++c) {
    double v = ToDouble(x[c]);
    if (std::isnan(v)) { *why = StrCat("holds NaN at class ", c); return false; }
    if (v == std::numeric_limits<double>::infinity()) { *why = StrCat("holds +inf at class ", c); return false; }
    if (std::isfinite(v)) any_finite = true;
  }
  if (!any_finite) *why = "has no class with a finite logit (all are -inf)";
  return any_finite;
}

template <typename T, typename I>
void Sample(const RandomStream& s, uint64_t base, const T* x, int64_t batch, int64_t classes, int64_t samples, I* y,
            ThreadPool* pool) {
  int64_t min_rows = std::max<int64_t>(1, (1 << 14) / (classes + samples));
  ThreadPool::For(pool, batch, min_rows, [&](int64_t rb, int64_t re) {
    std::vector<double> cdf(static_cast<size_t>(classes));
    for (int64_t b = rb; b < re; ++b) {
      const T* row = x + b * classes;
      double mx = -std::numeric_limits<double>::infinity();
      for (int64_t c = 0; c < classes; ++c) mx = std::max(mx, ToDouble(row[c]));
      double total = 0;
      int64_t last_nonzero = 0;
      for (int64_t c = 0; c < classes; ++c) {
        double p = std::exp(ToDouble(row[c]) - mx);  // exp(-inf) = 0: never drawn
        if (p > 0) last_nonzero = c;
        total += p;
        cdf[static_cast<size_t>(c)] = total;
      }
      uint64_t first = static_cast<uint64_t>(b) * static_cast<uint64_t>(samples);
      uint64_t cached = UINT64_MAX, w[2];
      for (int64_t j = 0; j < samples; ++j) {
        uint64_t word = first + static_cast<uint64_t>(j);
        if (word / 2 != cached) {
          cached = word / 2;
          s.Block(base + cached, w);
        }
        double r = UnitDouble(w[word % 2]) * total;
        // The first class whose cumulative weight exceeds r; zero-weight
        // classes repeat their predecessor's sum, so they are never first.
        int64_t c = std::upper_bound(cdf.begin(), cdf.end(), r) - cdf.begin();
        if (c >= classes) c = last_nonzero;  // r rounded up to the total
        y[b * samples + j] = static_cast<I>(c);
      }
    }
  });
}

class MultinomialKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    samples_ = info.AttrInt("sample_size", 1);
    ONYX_CHECK(samples_ >= 1, ErrorCode::kInvalidGraph, kOp, ": attribute 'sample_size' must be at least 1, got ",
               samples_);
    bool has = false;
    ONYX_RETURN_IF_ERROR(ReadDtype(info, kOp, {ElemType::kInt32, ElemType::kInt64}, &has, &dtype_));
    if (!has) dtype_ = ElemType::kInt32;
    return MakeStream(info, kOp, &stream_);
  }

  Status Compute(KernelContext& ctx) const override {
    const Tensor* X = nullptr;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &X));
    ONYX_CHECK_ARG(X->rank() == 2, kOp, ": input 0 must be 2-D [batch_size, class_size], got shape ",
                   ShapeToString(X->dims()));
    const int64_t batch = X->dims()[0], classes = X->dims()[1];
    ONYX_CHECK_ARG(classes >= 1, kOp, ": input 0 has shape ", ShapeToString(X->dims()),
                   ": there must be at least one class");
    int64_t total_samples;
    ONYX_CHECK_ARG(!__builtin_mul_overflow(batch, samples_, &total_samples), kOp, ": batch_size ", batch,
                   " times sample_size ", samples_, " overflows");
    return DispatchReal(X->type(), kOp, [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      const T* x = X->data<T>();
      std::string why;
      for (int64_t b = 0; b < batch; ++b)
        ONYX_CHECK_ARG(RowIsValid(x + b * classes, classes, &why), kOp, ": row ", b, " of input 0 ", why);
      Tensor* Y = ctx.Output(0, {batch, samples_}, dtype_);
      if (Y == nullptr || total_samples == 0) return Status::OK();
      const uint64_t base = stream_->Reserve(static_cast<uint64_t>(total_samples));
      if (dtype_ == ElemType::kInt32)
        Sample<T, int32_t>(*stream_, base, x, batch, classes, samples_, Y->data<int32_t>(), ctx.threads());
      else
        Sample<T, int64_t>(*stream_, base, x, batch, classes, samples_, Y->data<int64_t>(), ctx.threads());
      return Status::OK();
    });
  }

 private:
  int64_t samples_ = 1;
  ElemType dtype_ = ElemType::kInt32;
  std::unique_ptr<RandomStream> stream_;
};

}  // namespace

ONYX_REGISTER_KERNEL(MultinomialKernel, "", kOp, 7, kMaxVersion, RealTypes());

}  // namespace onyx

// RandomNormal, RandomUniform and their *Like forms: a tensor of the shape
// given by the `shape` attribute (or by the input) filled from the kernel's
// stream. Element j uses word j of the range reserved for the run, so the
// values do not depend on how the fill is split across threads.
#include <climits>
#include <cmath>

#include "providers/cpu/random/random_common.h"

namespace onyx {
namespace {

using namespace random_kernels;

// Blocks (two elements each) per parallel chunk: large enough that the pool's
// overhead is small next to Philox and Box-Muller.
constexpr int64_t kMinBlocksPerChunk = 1 << 13;

template <typename T>
void FillUniform(const RandomStream& s, uint64_t base, double low, double high, T* y, int64_t n, ThreadPool* pool) {
  const double range = high - low;
  auto put = [&](int64_t j, uint64_t w) {
    T v = FromDouble<T>(low + range * UnitDouble(w));
    // Rounding to T can reach `high`; the interval is half-open.
    if (range > 0 && ToDouble(v) >= high) v = StepDown(v);
    y[j] = v;
  };
  ThreadPool::For(pool, (n + 1) / 2, kMinBlocksPerChunk, [&](int64_t b, int64_t e) {
    uint64_t w[2];
    for (int64_t k = b; k < e; ++k) {
      s.Block(base + static_cast<uint64_t>(k), w);
      put(2 * k, w[0]);
      if (2 * k + 1 < n) put(2 * k + 1, w[1]);
    }
  });
}

template <typename T>
void FillNormal(const RandomStream& s, uint64_t base, double mean, double scale, T* y, int64_t n, ThreadPool* pool) {
  ThreadPool::For(pool, (n + 1) / 2, kMinBlocksPerChunk, [&](int64_t b, int64_t e) {
    uint64_t w[2];
    for (int64_t k = b; k < e; ++k) {
      s.Block(base + static_cast<uint64_t>(k), w);
      double z0, z1;
      StandardNormalPair(w[0], w[1], &z0, &z1);
      y[2 * k] = FromDouble<T>(mean + scale * z0);
      if (2 * k + 1 < n) y[2 * k + 1] = FromDouble<T>(mean + scale * z1);
    }
  });
}

template <bool kNormal, bool kLike>
class RandomTensorKernel final : public OpKernel {
 public:
  static constexpr const char* kOp = kNormal ? (kLike ? "RandomNormalLike" : "RandomNormal")
                                             : (kLike ? "RandomUniformLike" : "RandomUniform");

  Status Init(const KernelInfo& info) {
    if (kNormal) {
      a_ = info.AttrFloat("mean", 0.0f);
      b_ = info.AttrFloat("scale", 1.0f);
      ONYX_CHECK(std::isfinite(a_) && std::isfinite(b_), ErrorCode::kInvalidGraph, kOp,
                 ": attributes 'mean' and 'scale' must be finite, got mean=", a_, " scale=", b_);
      ONYX_CHECK(b_ >= 0, ErrorCode::kInvalidGraph, kOp,
                 ": attribute 'scale' is the standard deviation and must not be negative, got ", b_);
    } else {
      a_ = info.AttrFloat("low", 0.0f);
      b_ = info.AttrFloat("high", 1.0f);
      ONYX_CHECK(std::isfinite(a_) && std::isfinite(b_), ErrorCode::kInvalidGraph, kOp,
                 ": attributes 'low' and 'high' must be finite, got low=", a_, " high=", b_);
      ONYX_CHECK(a_ <= b_, ErrorCode::kInvalidGraph, kOp, ": attribute 'low' (", a_,
                 ") must not be greater than 'high' (", b_, ")");
    }
    ONYX_RETURN_IF_ERROR(ReadDtype(info, kOp, RealTypes(), &has_dtype_, &dtype_));
    if (!kLike) {
      if (!has_dtype_) dtype_ = ElemType::kFloat;
      const Attribute* s = info.Attr("shape");
      ONYX_CHECK(s != nullptr, ErrorCode::kInvalidGraph, kOp, ": attribute 'shape' is required");
      ONYX_CHECK(s->type == Attribute::Type::kInts, ErrorCode::kInvalidGraph, kOp,
                 ": attribute 'shape' must be a list of ints");
      int64_t n = 1;
      for (int64_t d : s->ints) {
        ONYX_CHECK(d >= 0, ErrorCode::kInvalidGraph, kOp, ": attribute 'shape' ", ShapeToString(s->ints),
                   " has a negative dimension");
        ONYX_CHECK(!__builtin_mul_overflow(n, d, &n), ErrorCode::kInvalidGraph, kOp, ": attribute 'shape' ",
                   ShapeToString(s->ints), " has too many elements");
      }
      shape_ = s->ints;
    } else if (!has_dtype_) {
      // The output takes the input's type: refuse a non-real one now when the
      // model says what it is, rather than at the first run.
      const TypeInfo& in = info.InputType(0);
      if (in.kind == TypeInfo::Kind::kTensor && in.elem != ElemType::kUndefined)
        ONYX_RETURN_IF_ERROR(CheckLikeType(in.elem, ErrorCode::kInvalidGraph));
    }
    return MakeStream(info, kOp, &stream_);
  }

  Status Compute(KernelContext& ctx) const override {
    Dims dims = shape_;
    ElemType type = dtype_;
    if (kLike) {
      const Tensor* X = nullptr;
      ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &X));
      dims = X->dims();
      if (!has_dtype_) {
        type = X->type();
        ONYX_RETURN_IF_ERROR(CheckLikeType(type, ErrorCode::kInvalidArgument));
      }
    }
    Tensor* Y = ctx.Output(0, dims, type);
    if (Y == nullptr || Y->size() == 0) return Status::OK();
    const int64_t n = Y->size();
    const uint64_t base = stream_->Reserve(static_cast<uint64_t>(n));
    return DispatchReal(type, kOp, [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      if (kNormal) FillNormal<T>(*stream_, base, a_, b_, Y->data<T>(), n, ctx.threads());
      else FillUniform<T>(*stream_, base, a_, b_, Y->data<T>(), n, ctx.threads());
      return Status::OK();
    });
  }

 private:
  Status CheckLikeType(ElemType t, ErrorCode code) const {
    ONYX_CHECK(Contains(RealTypes(), t), code, kOp, ": the output takes the input's type ", ElemTypeName(t),
                   " when attribute 'dtype' is absent, but it must be ", TypeList(RealTypes()),
                   "; set 'dtype' to choose one");
    return Status::OK();
  }

  double a_ = 0, b_ = 1;  // mean and scale, or low and high
  bool has_dtype_ = false;
  ElemType dtype_ = ElemType::kFloat;
  Dims shape_;
  std::unique_ptr<RandomStream> stream_;
};

using RandomNormalKernel = RandomTensorKernel<true, false>;
using RandomUniformKernel = RandomTensorKernel<false, false>;
using RandomNormalLikeKernel = RandomTensorKernel<true, true>;
using RandomUniformLikeKernel = RandomTensorKernel<false, true>;

}  // namespace

ONYX_REGISTER_KERNEL(RandomNormalKernel, "", RandomNormalKernel::kOp, 1, kMaxVersion, AnyType());
ONYX_REGISTER_KERNEL(RandomUniformKernel, "", RandomUniformKernel::kOp, 1, kMaxVersion, AnyType());
ONYX_REGISTER_KERNEL(RandomNormalLikeKernel, "", RandomNormalLikeKernel::kOp, 1, kMaxVersion, AnyType());
ONYX_REGISTER_KERNEL(RandomUniformLikeKernel, "", RandomUniformLikeKernel::kOp, 1, kMaxVersion, AnyType());

}  // namespace onyx

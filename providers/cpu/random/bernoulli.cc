// Bernoulli: y = 1 with probability p, else 0, for each element p of the
// input. Probabilities outside [0, 1] saturate (p < 0 never, p > 1 always);
// NaN gives 0.
#include <climits>

#include "providers/cpu/random/random_common.h"

namespace onyx {
namespace {

using namespace random_kernels;

constexpr const char* kOp = "Bernoulli";
constexpr int64_t kMinBlocksPerChunk = 1 << 14;

const std::vector<ElemType>& OutputTypes() {
  static const std::vector<ElemType> k = {
      ElemType::kUint8,   ElemType::kUint16,  ElemType::kUint32,   ElemType::kUint64, ElemType::kInt8,
      ElemType::kInt16,   ElemType::kInt32,   ElemType::kInt64,    ElemType::kBFloat16, ElemType::kFloat16,
      ElemType::kFloat,   ElemType::kDouble,  ElemType::kBool};
  return k;
}

template <typename F>
Status DispatchOutput(ElemType t, F&& fn) {
  switch (t) {
    case ElemType::kUint8: return fn(TypeTag<uint8_t>{});
    case ElemType::kUint16: return fn(TypeTag<uint16_t>{});
    case ElemType::kUint32: return fn(TypeTag<uint32_t>{});
    case ElemType::kUint64: return fn(TypeTag<uint64_t>{});
    case ElemType::kInt8: return fn(TypeTag<int8_t>{});
    case ElemType::kInt16: return fn(TypeTag<int16_t>{});
    case ElemType::kInt32: return fn(TypeTag<int32_t>{});
    case ElemType::kInt64: return fn(TypeTag<int64_t>{});
    case ElemType::kBool: return fn(TypeTag<bool>{});
    default: return DispatchReal(t, kOp, std::forward<F>(fn));
  }
}

template <typename P, typename Y>
void Draw(const RandomStream& s, uint64_t base, const P* p, Y* y, int64_t n, ThreadPool* pool) {
  const Y one = FromDouble<Y>(1.0), zero = FromDouble<Y>(0.0);
  ThreadPool::For(pool, (n + 1) / 2, kMinBlocksPerChunk, [&](int64_t b, int64_t e) {
    uint64_t w[2];
    for (int64_t k = b; k < e; ++k) {
      s.Block(base + static_cast<uint64_t>(k), w);
      for (int64_t h = 0; h < 2 && 2 * k + h < n; ++h) {
        int64_t j = 2 * k + h;
        y[j] = UnitDouble(w[h]) < ToDouble(p[j]) ? one : zero;
      }
    }
  });
}

class BernoulliKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    ONYX_RETURN_IF_ERROR(ReadDtype(info, kOp, OutputTypes(), &has_dtype_, &dtype_));
    const TypeInfo& in = info.InputType(0);
    if (!has_dtype_ && in.kind == TypeInfo::Kind::kTensor && in.elem != ElemType::kUndefined)
      ONYX_CHECK(Contains(RealTypes(), in.elem), ErrorCode::kInvalidGraph, kOp, ": input 0 is ",
                 ElemTypeName(in.elem), "; it must be ", TypeList(RealTypes()));
    return MakeStream(info, kOp, &stream_);
  }

  Status Compute(KernelContext& ctx) const override {
    const Tensor* X = nullptr;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &X));
    ONYX_CHECK_ARG(Contains(RealTypes(), X->type()), kOp, ": input 0 (the probabilities) is ",
                   ElemTypeName(X->type()), "; it must be ", TypeList(RealTypes()));
    const ElemType out_type = has_dtype_ ? dtype_ : X->type();
    Tensor* out = ctx.Output(0, X->dims(), out_type);
    if (out == nullptr || out->size() == 0) return Status::OK();
    const int64_t n = out->size();
    const uint64_t base = stream_->Reserve(static_cast<uint64_t>(n));
    return DispatchReal(X->type(), kOp, [&](auto ptag) -> Status {
      using P = typename decltype(ptag)::type;
      return DispatchOutput(out_type, [&](auto ytag) -> Status {
        using Y = typename decltype(ytag)::type;
        Draw<P, Y>(*stream_, base, X->data<P>(), out->data<Y>(), n, ctx.threads());
        return Status::OK();
      });
    });
  }

 private:
  bool has_dtype_ = false;
  ElemType dtype_ = ElemType::kFloat;
  std::unique_ptr<RandomStream> stream_;
};

}  // namespace

ONYX_REGISTER_KERNEL(BernoulliKernel, "", kOp, 15, kMaxVersion, RealTypes());

}  // namespace onyx

// More elementwise unary operators: the inverse and hyperbolic trigonometric
// functions and Tan, the float classifiers IsNaN and IsInf, and BitwiseNot.
// (elementwise_unary.cc holds the older ones.)
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "providers/cpu/common/broadcast.h"
#include "providers/cpu/common/dispatch.h"
#include "providers/cpu/common/narrow_float.h"
#include "providers/kernel.h"

namespace onyx {

namespace {

constexpr int64_t kCheapGrain = 1 << 16;
constexpr int64_t kCostlyGrain = 1 << 12;

// ---------------------------------------------------------------------------
// Trigonometric functions: float, double and the 16-bit floats (through float).

enum class TrigOp { kAcos, kAcosh, kAsin, kAsinh, kAtan, kAtanh, kTan, kSinh, kCosh };

template <typename C>
C ApplyTrig(TrigOp op, C v) {
  switch (op) {
    case TrigOp::kAcos: return std::acos(v);
    case TrigOp::kAcosh: return std::acosh(v);
    case TrigOp::kAsin: return std::asin(v);
    case TrigOp::kAsinh: return std::asinh(v);
    case TrigOp::kAtan: return std::atan(v);
    case TrigOp::kAtanh: return std::atanh(v);
    case TrigOp::kTan: return std::tan(v);
    case TrigOp::kSinh: return std::sinh(v);
    case TrigOp::kCosh: return std::cosh(v);
  }
  return v;
}

template <typename T, TrigOp kOp>
void RunTrig(const T* x, T* y, int64_t n, ThreadPool* pool) {
  using C = typename CalcType<T>::type;
  ThreadPool::For(pool, n, kCostlyGrain, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) y[i] = static_cast<T>(ApplyTrig<C>(kOp, static_cast<C>(x[i])));
  });
}

class TrigKernel final : public OpKernel {
 public:
  TrigKernel(TrigOp op, const char* name) : op_(op), name_(name) {}
  Status Init(const KernelInfo&) { return Status::OK(); }

  Status Compute(KernelContext& ctx) const override {
    const Tensor* X = nullptr;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &X));
    return DispatchOver(FloatOrHalfTypeSet{}, X->type(), name_, [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      Tensor* Y = ctx.Output(0, X->dims(), X->type());
      if (Y == nullptr) return Status::OK();
      const T* x = X->data<T>();
      T* y = Y->data<T>();
      // The switch picks an instantiation so the inner loop has no branch.
      switch (op_) {
        case TrigOp::kAcos: RunTrig<T, TrigOp::kAcos>(x, y, X->size(), ctx.threads()); break;
        case TrigOp::kAcosh: RunTrig<T, TrigOp::kAcosh>(x, y, X->size(), ctx.threads()); break;
        case TrigOp::kAsin: RunTrig<T, TrigOp::kAsin>(x, y, X->size(), ctx.threads()); break;
        case TrigOp::kAsinh: RunTrig<T, TrigOp::kAsinh>(x, y, X->size(), ctx.threads()); break;
        case TrigOp::kAtan: RunTrig<T, TrigOp::kAtan>(x, y, X->size(), ctx.threads()); break;
        case TrigOp::kAtanh: RunTrig<T, TrigOp::kAtanh>(x, y, X->size(), ctx.threads()); break;
        case TrigOp::kTan: RunTrig<T, TrigOp::kTan>(x, y, X->size(), ctx.threads()); break;
        case TrigOp::kSinh: RunTrig<T, TrigOp::kSinh>(x, y, X->size(), ctx.threads()); break;
        case TrigOp::kCosh: RunTrig<T, TrigOp::kCosh>(x, y, X->size(), ctx.threads()); break;
      }
      return Status::OK();
    });
  }

 private:
  TrigOp op_;
  const char* name_;
};

// ---------------------------------------------------------------------------
// IsNaN / IsInf: the ordinary floats directly, float8 codes by decoding them.

template <typename Fmt>
struct Float8Code {
  uint8_t bits;
};

// double stays double (1e300 is finite); the rest widen to float exactly.
template <typename T>
typename CalcType<T>::type AsFloatForClassify(const T& v) {
  return static_cast<typename CalcType<T>::type>(v);
}
template <typename Fmt>
float AsFloatForClassify(const Float8Code<Fmt>& v) {
  return minifloat::DecodeMini<Fmt>(v.bits);
}

template <typename F>
Status DispatchClassifiable(ElemType t, const char* what, F&& fn) {
  switch (t) {
    case ElemType::kFloat: return fn(TypeTag<float>{});
    case ElemType::kDouble: return fn(TypeTag<double>{});
    case ElemType::kFloat16: return fn(TypeTag<Float16>{});
    case ElemType::kBFloat16: return fn(TypeTag<BFloat16>{});
    case ElemType::kFloat8E4M3FN: return fn(TypeTag<Float8Code<minifloat::E4M3FN>>{});
    case ElemType::kFloat8E4M3FNUZ: return fn(TypeTag<Float8Code<minifloat::E4M3FNUZ>>{});
    case ElemType::kFloat8E5M2: return fn(TypeTag<Float8Code<minifloat::E5M2>>{});
    case ElemType::kFloat8E5M2FNUZ: return fn(TypeTag<Float8Code<minifloat::E5M2FNUZ>>{});
    default: return UnsupportedType(what, t);
  }
}

std::vector<ElemType> ClassifiableTypes() {
  return {ElemType::kFloat,        ElemType::kDouble,         ElemType::kFloat16,    ElemType::kBFloat16,
          ElemType::kFloat8E4M3FN, ElemType::kFloat8E4M3FNUZ, ElemType::kFloat8E5M2, ElemType::kFloat8E5M2FNUZ};
}

class IsNaNKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo&) { return Status::OK(); }
  Status Compute(KernelContext& ctx) const override {
    const Tensor* X = nullptr;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &X));
    return DispatchClassifiable(X->type(), "IsNaN", [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      Tensor* Y = ctx.Output(0, X->dims(), ElemType::kBool);
      if (Y == nullptr) return Status::OK();
      const T* x = X->data<T>();
      bool* y = Y->data<bool>();
      ThreadPool::For(ctx.threads(), X->size(), kCheapGrain, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) y[i] = std::isnan(AsFloatForClassify(x[i]));
      });
      return Status::OK();
    });
  }
};

class IsInfKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    pos_ = info.AttrInt("detect_positive", 1) != 0;
    neg_ = info.AttrInt("detect_negative", 1) != 0;
    return Status::OK();
  }
  Status Compute(KernelContext& ctx) const override {
    const Tensor* X = nullptr;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &X));
    return DispatchClassifiable(X->type(), "IsInf", [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      Tensor* Y = ctx.Output(0, X->dims(), ElemType::kBool);
      if (Y == nullptr) return Status::OK();
      const T* x = X->data<T>();
      bool* y = Y->data<bool>();
      const bool pos = pos_, neg = neg_;
      ThreadPool::For(ctx.threads(), X->size(), kCheapGrain, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) {
          const auto v = AsFloatForClassify(x[i]);
          y[i] = std::isinf(v) && (v > 0 ? pos : neg);
        }
      });
      return Status::OK();
    });
  }

 private:
  bool pos_ = true;
  bool neg_ = true;
};

// ---------------------------------------------------------------------------
// BitwiseNot over every integer type.

using IntegerTypeSet = TypeSet<int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t>;

class BitwiseNotKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo&) { return Status::OK(); }
  Status Compute(KernelContext& ctx) const override {
    const Tensor* X = nullptr;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &X));
    return DispatchOver(IntegerTypeSet{}, X->type(), "BitwiseNot", [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      Tensor* Y = ctx.Output(0, X->dims(), X->type());
      if (Y == nullptr) return Status::OK();
      const T* x = X->data<T>();
      T* y = Y->data<T>();
      ThreadPool::For(ctx.threads(), X->size(), kCheapGrain, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) y[i] = static_cast<T>(~x[i]);
      });
      return Status::OK();
    });
  }
};

}  // namespace

ONYX_REGISTER_KERNEL(TrigKernel, "", "Acos", 7, kMaxVersion, FloatOrHalfTypes(), TrigOp::kAcos, "Acos");
ONYX_REGISTER_KERNEL(TrigKernel, "", "Asin", 7, kMaxVersion, FloatOrHalfTypes(), TrigOp::kAsin, "Asin");
ONYX_REGISTER_KERNEL(TrigKernel, "", "Atan", 7, kMaxVersion, FloatOrHalfTypes(), TrigOp::kAtan, "Atan");
ONYX_REGISTER_KERNEL(TrigKernel, "", "Tan", 7, kMaxVersion, FloatOrHalfTypes(), TrigOp::kTan, "Tan");
ONYX_REGISTER_KERNEL(TrigKernel, "", "Acosh", 9, kMaxVersion, FloatOrHalfTypes(), TrigOp::kAcosh, "Acosh");
ONYX_REGISTER_KERNEL(TrigKernel, "", "Asinh", 9, kMaxVersion, FloatOrHalfTypes(), TrigOp::kAsinh, "Asinh");
ONYX_REGISTER_KERNEL(TrigKernel, "", "Atanh", 9, kMaxVersion, FloatOrHalfTypes(), TrigOp::kAtanh, "Atanh");
ONYX_REGISTER_KERNEL(TrigKernel, "", "Sinh", 9, kMaxVersion, FloatOrHalfTypes(), TrigOp::kSinh, "Sinh");
ONYX_REGISTER_KERNEL(TrigKernel, "", "Cosh", 9, kMaxVersion, FloatOrHalfTypes(), TrigOp::kCosh, "Cosh");
ONYX_REGISTER_KERNEL(IsNaNKernel, "", "IsNaN", 9, kMaxVersion, ClassifiableTypes());
ONYX_REGISTER_KERNEL(IsInfKernel, "", "IsInf", 10, kMaxVersion, ClassifiableTypes());
ONYX_REGISTER_KERNEL(BitwiseNotKernel, "", "BitwiseNot", 18, kMaxVersion, IntegerTypeSet::ElemTypes());

}  // namespace onyx

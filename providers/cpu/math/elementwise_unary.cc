#include <climits>
#include <cmath>
#include <string>
#include <type_traits>
#include <vector>

#include "providers/cpu/common/broadcast.h"
#include "providers/cpu/common/dispatch.h"
#include "providers/cpu/common/fast_math.h"
#include "providers/kernel.h"

namespace onyx {

namespace {

enum class UnOp { kRelu, kErf, kTanh, kSqrt, kSigmoid, kExp, kLog, kNeg, kAbs, kReciprocal, kFloor, kCeil, kSin,
                  kCos, kNot, kLeakyRelu, kElu, kSelu, kHardSigmoid, kSoftplus, kGelu, kGeluTanh, kSign, kRound };

// Which element types an operator takes: the dispatch below instantiates only those.
enum class Domain { kFloat, kSigned, kNumeric, kBool };

struct UnaryParams {
  float alpha = 0.f;
  float beta = 0.f;
  float gamma = 0.f;
};

template <typename T, typename Op>
void RunUnary(const T* x, T* y, int64_t n, ThreadPool* pool, int64_t grain, const Op& op) {
  using C = typename CalcType<T>::type;
  ThreadPool::For(pool, n, grain, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) y[i] = static_cast<T>(op(static_cast<C>(x[i])));
  });
}

// Float exp/tanh/erf/gelu use the SIMD array forms (several times faster than
// what the compiler makes of the scalar loop); returns false for other cases.
template <typename T>
bool RunFloatArray(UnOp op, const T* x, T* y, int64_t n, ThreadPool* pool, int64_t grain) {
  if constexpr (std::is_same<T, float>::value) {
    void (*fn)(const float*, float*, int64_t) = nullptr;
    switch (op) {
      case UnOp::kExp: fn = fastmath::ExpArray; break;
      case UnOp::kTanh: fn = fastmath::TanhArray; break;
      case UnOp::kErf: fn = fastmath::ErfArray; break;
      case UnOp::kGelu: fn = fastmath::GeluArray; break;
      default: return false;
    }
    ThreadPool::For(pool, n, grain, [&](int64_t b, int64_t e) { fn(x + b, y + b, e - b); });
    return true;
  } else {
    return false;
  }
}

// Numpy's rounding: halves go to the even neighbour.
template <typename C>
C RoundHalfEven(C v) {
  C r = std::nearbyint(v);  // default rounding mode is to-nearest-even
  return r;
}

template <typename T>
Status ComputeTyped(UnOp op, const UnaryParams& p, const T* x, T* y, int64_t n, ThreadPool* pool) {
  using C = typename CalcType<T>::type;
  constexpr int64_t kCheap = 1 << 16;
  constexpr int64_t kCostly = 1 << 12;
  if (RunFloatArray(op, x, y, n, pool, kCostly)) return Status::OK();
  if constexpr (std::is_same<T, bool>::value) {
    RunUnary(x, y, n, pool, kCheap, [](bool v) { return !v; });
    return Status::OK();
  } else {
    switch (op) {
      case UnOp::kRelu: RunUnary(x, y, n, pool, kCheap, [](C v) { return v > C(0) ? v : C(0); }); break;
      case UnOp::kNeg: RunUnary(x, y, n, pool, kCheap, [](C v) { return static_cast<C>(-v); }); break;
      case UnOp::kAbs:
        if constexpr (std::is_unsigned<C>::value)
          RunUnary(x, y, n, pool, kCheap, [](C v) { return v; });
        else
          RunUnary(x, y, n, pool, kCheap, [](C v) { return v < C(0) ? static_cast<C>(-v) : v; });
        break;
      case UnOp::kSign:
        RunUnary(x, y, n, pool, kCheap, [](C v) { return static_cast<C>(v > C(0) ? 1 : (v < C(0) ? -1 : 0)); });
        break;
      default:
        if constexpr (std::is_floating_point<C>::value) {
          const C alpha = static_cast<C>(p.alpha), beta = static_cast<C>(p.beta), gamma = static_cast<C>(p.gamma);
          switch (op) {
            case UnOp::kErf: RunUnary(x, y, n, pool, kCostly, [](C v) { return fastmath::ErfOf(v); }); break;
            case UnOp::kTanh: RunUnary(x, y, n, pool, kCostly, [](C v) { return fastmath::TanhOf(v); }); break;
            case UnOp::kSqrt: RunUnary(x, y, n, pool, kCheap, [](C v) { return std::sqrt(v); }); break;
            case UnOp::kExp: RunUnary(x, y, n, pool, kCostly, [](C v) { return fastmath::ExpOf(v); }); break;
            case UnOp::kLog: RunUnary(x, y, n, pool, kCostly, [](C v) { return std::log(v); }); break;
            case UnOp::kSin: RunUnary(x, y, n, pool, kCostly, [](C v) { return std::sin(v); }); break;
            case UnOp::kCos: RunUnary(x, y, n, pool, kCostly, [](C v) { return std::cos(v); }); break;
            case UnOp::kFloor: RunUnary(x, y, n, pool, kCheap, [](C v) { return std::floor(v); }); break;
            case UnOp::kCeil: RunUnary(x, y, n, pool, kCheap, [](C v) { return std::ceil(v); }); break;
            case UnOp::kRound: RunUnary(x, y, n, pool, kCheap, [](C v) { return RoundHalfEven(v); }); break;
            case UnOp::kReciprocal: RunUnary(x, y, n, pool, kCheap, [](C v) { return C(1) / v; }); break;
            case UnOp::kSigmoid:
              // Split by sign so exp never overflows.
              RunUnary(x, y, n, pool, kCostly, [](C v) {
                if (v >= C(0)) return C(1) / (C(1) + fastmath::ExpOf(-v));
                C e = fastmath::ExpOf(v);
                return e / (C(1) + e);
              });
              break;
            case UnOp::kLeakyRelu:
              RunUnary(x, y, n, pool, kCheap, [alpha](C v) { return v >= C(0) ? v : v * alpha; });
              break;
            case UnOp::kElu:
              RunUnary(x, y, n, pool, kCostly, [alpha](C v) { return v >= C(0) ? v : alpha * (fastmath::ExpOf(v) - C(1)); });
              break;
            case UnOp::kSelu:
              RunUnary(x, y, n, pool, kCostly, [alpha, gamma](C v) {
                return v > C(0) ? gamma * v : gamma * (alpha * fastmath::ExpOf(v) - alpha);
              });
              break;
            case UnOp::kHardSigmoid:
              RunUnary(x, y, n, pool, kCheap, [alpha, beta](C v) {
                C r = alpha * v + beta;
                return r < C(0) ? C(0) : (r > C(1) ? C(1) : r);
              });
              break;
            case UnOp::kSoftplus:
              RunUnary(x, y, n, pool, kCostly, [](C v) {
                return v > C(0) ? v + std::log1p(fastmath::ExpOf(-v)) : std::log1p(fastmath::ExpOf(v));
              });
              break;
            case UnOp::kGelu:
              RunUnary(x, y, n, pool, kCostly, [](C v) {
                return C(0.5) * v * (C(1) + fastmath::ErfOf(v * static_cast<C>(0.70710678118654752440)));
              });
              break;
            case UnOp::kGeluTanh:
              RunUnary(x, y, n, pool, kCostly, [](C v) {
                const C k = static_cast<C>(0.79788456080286535588);  // sqrt(2/pi)
                return C(0.5) * v * (C(1) + fastmath::TanhOf(k * (v + C(0.044715) * v * v * v)));
              });
              break;
            default: return MakeError(ErrorCode::kFail, "unary operator not handled");
          }
        } else {
          return MakeError(ErrorCode::kFail, "unary operator not handled for an integer type");
        }
    }
    return Status::OK();
  }
}

class UnaryKernel final : public OpKernel {
 public:
  UnaryKernel(UnOp op, Domain dom, const char* name) : op_(op), dom_(dom), name_(name) {}

  Status Init(const KernelInfo& info) {
    switch (op_) {
      case UnOp::kLeakyRelu: p_.alpha = info.AttrFloat("alpha", 0.01f); break;
      case UnOp::kElu: p_.alpha = info.AttrFloat("alpha", 1.0f); break;
      case UnOp::kSelu:
        p_.alpha = info.AttrFloat("alpha", 1.67326319217681884765625f);
        p_.gamma = info.AttrFloat("gamma", 1.05070102214813232421875f);
        break;
      case UnOp::kHardSigmoid:
        p_.alpha = info.AttrFloat("alpha", 0.2f);
        p_.beta = info.AttrFloat("beta", 0.5f);
        break;
      case UnOp::kGelu: {
        std::string approx = info.AttrString("approximate", "none");
        if (approx == "tanh") {
          op_ = UnOp::kGeluTanh;
        } else if (approx != "none") {
          return MakeError(ErrorCode::kInvalidGraph, "Gelu: attribute approximate must be 'none' or 'tanh', got '",
                           approx, "'");
        }
        break;
      }
      default: break;
    }
    return Status::OK();
  }

  Status Compute(KernelContext& ctx) const override {
    const Tensor* X = nullptr;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &X));
    auto run = [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      Tensor* Y = ctx.Output(0, X->dims(), X->type());
      if (Y == nullptr) return Status::OK();
      return ComputeTyped<T>(op_, p_, X->data<T>(), Y->data<T>(), X->size(), ctx.threads());
    };
    switch (dom_) {
      case Domain::kBool:
        ONYX_CHECK_ARG(X->type() == ElemType::kBool, name_, ": input 0 must be bool, got ", ElemTypeName(X->type()));
        return run(TypeTag<bool>{});
      case Domain::kFloat:
        if (X->type() == ElemType::kFloat16) return run(TypeTag<Float16>{});
        if (X->type() == ElemType::kBFloat16) return run(TypeTag<BFloat16>{});
        return DispatchFloat(X->type(), name_, run);
      case Domain::kSigned:
        if (X->type() != ElemType::kFloat16 && X->type() != ElemType::kBFloat16 && X->type() != ElemType::kFloat &&
            X->type() != ElemType::kDouble && X->type() != ElemType::kInt8 && X->type() != ElemType::kInt16 &&
            X->type() != ElemType::kInt32 && X->type() != ElemType::kInt64)
          return UnsupportedType(name_, X->type());
        return DispatchNumericOrHalf(X->type(), name_, run);
      case Domain::kNumeric: return DispatchNumericOrHalf(X->type(), name_, run);
    }
    return Status::OK();
  }

 private:
  UnOp op_;
  Domain dom_;
  const char* name_;
  UnaryParams p_;
};

}  // namespace

// Each op's Domain picks both its registered types and its run-time dispatch.
ONYX_REGISTER_KERNEL(UnaryKernel, "", "Relu", 1, kMaxVersion, SignedTypes(), UnOp::kRelu, Domain::kSigned, "Relu");
ONYX_REGISTER_KERNEL(UnaryKernel, "", "Erf", 9, kMaxVersion, FloatOrHalfTypes(), UnOp::kErf, Domain::kFloat, "Erf");
ONYX_REGISTER_KERNEL(UnaryKernel, "", "Tanh", 1, kMaxVersion, FloatOrHalfTypes(), UnOp::kTanh, Domain::kFloat, "Tanh");
ONYX_REGISTER_KERNEL(UnaryKernel, "", "Sqrt", 1, kMaxVersion, FloatOrHalfTypes(), UnOp::kSqrt, Domain::kFloat, "Sqrt");
ONYX_REGISTER_KERNEL(UnaryKernel, "", "Sigmoid", 1, kMaxVersion, FloatOrHalfTypes(), UnOp::kSigmoid, Domain::kFloat, "Sigmoid");
ONYX_REGISTER_KERNEL(UnaryKernel, "", "Exp", 1, kMaxVersion, FloatOrHalfTypes(), UnOp::kExp, Domain::kFloat, "Exp");
ONYX_REGISTER_KERNEL(UnaryKernel, "", "Log", 1, kMaxVersion, FloatOrHalfTypes(), UnOp::kLog, Domain::kFloat, "Log");
ONYX_REGISTER_KERNEL(UnaryKernel, "", "Neg", 1, kMaxVersion, SignedTypes(), UnOp::kNeg, Domain::kSigned, "Neg");
ONYX_REGISTER_KERNEL(UnaryKernel, "", "Abs", 1, kMaxVersion, NumericOrHalfTypes(), UnOp::kAbs, Domain::kNumeric, "Abs");
ONYX_REGISTER_KERNEL(UnaryKernel, "", "Sign", 9, kMaxVersion, NumericOrHalfTypes(), UnOp::kSign, Domain::kNumeric, "Sign");
ONYX_REGISTER_KERNEL(UnaryKernel, "", "Reciprocal", 1, kMaxVersion, FloatOrHalfTypes(), UnOp::kReciprocal, Domain::kFloat, "Reciprocal");
ONYX_REGISTER_KERNEL(UnaryKernel, "", "Floor", 1, kMaxVersion, FloatOrHalfTypes(), UnOp::kFloor, Domain::kFloat, "Floor");
ONYX_REGISTER_KERNEL(UnaryKernel, "", "Ceil", 1, kMaxVersion, FloatOrHalfTypes(), UnOp::kCeil, Domain::kFloat, "Ceil");
ONYX_REGISTER_KERNEL(UnaryKernel, "", "Round", 11, kMaxVersion, FloatOrHalfTypes(), UnOp::kRound, Domain::kFloat, "Round");
ONYX_REGISTER_KERNEL(UnaryKernel, "", "Sin", 7, kMaxVersion, FloatOrHalfTypes(), UnOp::kSin, Domain::kFloat, "Sin");
ONYX_REGISTER_KERNEL(UnaryKernel, "", "Cos", 7, kMaxVersion, FloatOrHalfTypes(), UnOp::kCos, Domain::kFloat, "Cos");
ONYX_REGISTER_KERNEL(UnaryKernel, "", "Not", 1, kMaxVersion, BoolTypes(), UnOp::kNot, Domain::kBool, "Not");
ONYX_REGISTER_KERNEL(UnaryKernel, "", "LeakyRelu", 1, kMaxVersion, FloatOrHalfTypes(), UnOp::kLeakyRelu, Domain::kFloat, "LeakyRelu");
ONYX_REGISTER_KERNEL(UnaryKernel, "", "Elu", 1, kMaxVersion, FloatOrHalfTypes(), UnOp::kElu, Domain::kFloat, "Elu");
ONYX_REGISTER_KERNEL(UnaryKernel, "", "Selu", 1, kMaxVersion, FloatOrHalfTypes(), UnOp::kSelu, Domain::kFloat, "Selu");
ONYX_REGISTER_KERNEL(UnaryKernel, "", "HardSigmoid", 1, kMaxVersion, FloatOrHalfTypes(), UnOp::kHardSigmoid, Domain::kFloat, "HardSigmoid");
ONYX_REGISTER_KERNEL(UnaryKernel, "", "Softplus", 1, kMaxVersion, FloatOrHalfTypes(), UnOp::kSoftplus, Domain::kFloat, "Softplus");
ONYX_REGISTER_KERNEL(UnaryKernel, "", "Gelu", 20, kMaxVersion, FloatOrHalfTypes(), UnOp::kGelu, Domain::kFloat, "Gelu");

}  // namespace onyx

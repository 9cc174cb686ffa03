#include <climits>
#include <cmath>
#include <string>
#include <type_traits>
#include <vector>

#include "providers/cpu/common/broadcast.h"
#include "providers/cpu/common/dispatch.h"
#include "providers/cpu/common/float_to_int.h"
#include "providers/cpu/math/broadcast_binary.h"
#include "providers/kernel.h"

namespace onyx {

namespace {

enum class BinOp { kAdd, kSub, kMul, kDiv, kMod, kMax, kMin, kEqual, kGreater, kLess, kGreaterEq, kLessEq,
                   kAnd, kOr, kXor };

// The operator computes in CalcType (float for the 16-bit floats).
template <typename TA, typename TB, typename TOut, typename Op>
void RunBroadcastBinary(const BroadcastPlan& plan, ThreadPool* pool, const TA* a, const TB* b, TOut* out,
                        const Op& op) {
  BroadcastBinaryLoopAs<typename CalcType<TA>::type, typename CalcType<TB>::type>(plan, pool, a, b, out, op);
}

// Integer division as C (and ONNX) define it, without the INT_MIN / -1 trap.
template <typename T>
T IntDiv(T a, T b) {
  if constexpr (std::is_signed<T>::value) {
    if (b == -1) return static_cast<T>(0 - static_cast<std::make_unsigned_t<T>>(a));
  }
  return static_cast<T>(a / b);
}

template <typename T>
T IntRem(T a, T b) {
  if constexpr (std::is_signed<T>::value) {
    if (b == -1) return 0;
  }
  return static_cast<T>(a % b);
}

// Mod with fmod=0: the result takes the sign of the divisor (Python's %).
template <typename T>
T FloorMod(T a, T b) {
  if constexpr (std::is_floating_point<T>::value) {
    T r = std::fmod(a, b);
    if (r != 0 && ((r < 0) != (b < 0))) r += b;
    return r;
  } else {
    T r = IntRem(a, b);
    if constexpr (std::is_signed<T>::value) {
      if (r != 0 && ((r < 0) != (b < 0))) r = static_cast<T>(r + b);
    }
    return r;
  }
}

template <typename C>
C MaxOf(C a, C b) {
  if constexpr (std::is_floating_point<C>::value) {
    if (std::isnan(a) || std::isnan(b)) return a + b;  // NaN propagates, as in numpy.maximum
  }
  return a < b ? b : a;
}

template <typename C>
C MinOf(C a, C b) {
  if constexpr (std::is_floating_point<C>::value) {
    if (std::isnan(a) || std::isnan(b)) return a + b;
  }
  return b < a ? b : a;
}

template <typename T>
bool HasZero(const Tensor& t) {
  const T* p = t.data<T>();
  for (int64_t i = 0; i < t.size(); ++i)
    if (p[i] == T(0)) return true;
  return false;
}

const char* OpName(BinOp op) {
  switch (op) {
    case BinOp::kAdd: return "Add";
    case BinOp::kSub: return "Sub";
    case BinOp::kMul: return "Mul";
    case BinOp::kDiv: return "Div";
    case BinOp::kMod: return "Mod";
    case BinOp::kMax: return "Max";
    case BinOp::kMin: return "Min";
    case BinOp::kEqual: return "Equal";
    case BinOp::kGreater: return "Greater";
    case BinOp::kLess: return "Less";
    case BinOp::kGreaterEq: return "GreaterOrEqual";
    case BinOp::kLessEq: return "LessOrEqual";
    case BinOp::kAnd: return "And";
    case BinOp::kOr: return "Or";
    case BinOp::kXor: return "Xor";
  }
  return "?";
}

// Shape B takes part in the broadcast with. Before opset 7 a node could ask for
// the legacy broadcast (attributes broadcast=1, axis): B's dims line up with
// A's starting at `axis`.
Status LegacyBroadcastDims(const char* name, bool legacy, int64_t axis, bool has_axis, const Dims& a,
                           const Dims& b, Dims* out) {
  if (!legacy) {
    *out = b;
    return Status::OK();
  }
  const int64_t ra = static_cast<int64_t>(a.size()), rb = static_cast<int64_t>(b.size());
  int64_t ax = has_axis ? axis : ra - rb;
  if (ax < 0) ax += ra;
  ONYX_CHECK_ARG(ax >= 0 && ax + rb <= ra, name, ": legacy broadcast of input 1 shape ", ShapeToString(b),
                 " at axis ", axis, " does not fit input 0 shape ", ShapeToString(a));
  Dims r(static_cast<size_t>(ra), 1);
  for (int64_t k = 0; k < rb; ++k) r[ax + k] = b[k];
  *out = std::move(r);
  return Status::OK();
}

class BinaryKernel final : public OpKernel {
 public:
  explicit BinaryKernel(BinOp op) : op_(op) {}

  Status Init(const KernelInfo& info) {
    if (info.opset() < 7) {
      legacy_ = info.AttrInt("broadcast", 0) != 0;
      has_axis_ = info.Attr("axis") != nullptr;
      axis_ = info.AttrInt("axis", 0);
    }
    if (op_ == BinOp::kMod) {
      int64_t f = info.AttrInt("fmod", 0);
      ONYX_CHECK(f == 0 || f == 1, ErrorCode::kInvalidGraph, "Mod: attribute fmod must be 0 or 1, got ", f);
      fmod_ = f == 1;
    }
    return Status::OK();
  }

  Status Compute(KernelContext& ctx) const override {
    const char* name = OpName(op_);
    const Tensor* A = nullptr;
    const Tensor* B = nullptr;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &A));
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(1, &B));
    ONYX_CHECK_ARG(A->type() == B->type(), name, ": input 0 has type ", ElemTypeName(A->type()),
                   " but input 1 has type ", ElemTypeName(B->type()));
    Dims bdims, out_dims;
    ONYX_RETURN_IF_ERROR(LegacyBroadcastDims(name, legacy_, axis_, has_axis_, A->dims(), B->dims(), &bdims));
    ONYX_RETURN_IF_ERROR(BroadcastShapes(A->dims(), bdims, &out_dims, name));
    BroadcastPlan plan;
    ONYX_RETURN_IF_ERROR(plan.Init({A->dims(), bdims}, out_dims, name));
    switch (op_) {
      case BinOp::kAnd:
      case BinOp::kOr:
      case BinOp::kXor: return Logical(ctx, *A, *B, out_dims, plan);
      case BinOp::kEqual:
      case BinOp::kGreater:
      case BinOp::kLess:
      case BinOp::kGreaterEq:
      case BinOp::kLessEq: return Compare(ctx, *A, *B, out_dims, plan);
      default: return Arith(ctx, *A, *B, out_dims, plan);
    }
  }

 private:
  Status Arith(KernelContext& ctx, const Tensor& A, const Tensor& B, const Dims& out_dims,
               const BroadcastPlan& plan) const {
    const char* name = OpName(op_);
    return DispatchNumericOrHalf(A.type(), name, [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      using C = typename CalcType<T>::type;
      if constexpr (std::is_integral<T>::value) {
        if ((op_ == BinOp::kDiv || op_ == BinOp::kMod) && HasZero<T>(B))
          return MakeError(ErrorCode::kInvalidArgument, name, ": integer division by zero (input 1 of shape ",
                           ShapeToString(B.dims()), " holds a 0)");
      }
      Tensor* Y = ctx.Output(0, out_dims, A.type());
      if (Y == nullptr) return Status::OK();
      const T* a = A.data<T>();
      const T* b = B.data<T>();
      T* y = Y->data<T>();
      ThreadPool* pool = ctx.threads();
      switch (op_) {
        case BinOp::kAdd: RunBroadcastBinary(plan, pool, a, b, y, [](C x, C z) { return x + z; }); break;
        case BinOp::kSub: RunBroadcastBinary(plan, pool, a, b, y, [](C x, C z) { return x - z; }); break;
        case BinOp::kMul: RunBroadcastBinary(plan, pool, a, b, y, [](C x, C z) { return x * z; }); break;
        case BinOp::kDiv:
          if constexpr (std::is_integral<C>::value)
            RunBroadcastBinary(plan, pool, a, b, y, [](C x, C z) { return IntDiv(x, z); });
          else
            RunBroadcastBinary(plan, pool, a, b, y, [](C x, C z) { return x / z; });
          break;
        case BinOp::kMod:
          if (fmod_) {
            if constexpr (std::is_integral<C>::value)
              RunBroadcastBinary(plan, pool, a, b, y, [](C x, C z) { return IntRem(x, z); });
            else
              RunBroadcastBinary(plan, pool, a, b, y, [](C x, C z) { return static_cast<C>(std::fmod(x, z)); });
          } else {
            RunBroadcastBinary(plan, pool, a, b, y, [](C x, C z) { return FloorMod(x, z); });
          }
          break;
        case BinOp::kMax: RunBroadcastBinary(plan, pool, a, b, y, [](C x, C z) { return MaxOf(x, z); }); break;
        case BinOp::kMin: RunBroadcastBinary(plan, pool, a, b, y, [](C x, C z) { return MinOf(x, z); }); break;
        default: return MakeError(ErrorCode::kFail, name, ": not an arithmetic operator");
      }
      return Status::OK();
    });
  }

  template <typename T>
  Status CompareTyped(KernelContext& ctx, const Tensor& A, const Tensor& B, const Dims& out_dims,
                      const BroadcastPlan& plan) const {
    using C = typename CalcType<T>::type;
    Tensor* Y = ctx.Output(0, out_dims, ElemType::kBool);
    if (Y == nullptr) return Status::OK();
    const T* a = A.data<T>();
    const T* b = B.data<T>();
    bool* y = Y->data<bool>();
    ThreadPool* pool = ctx.threads();
    switch (op_) {
      case BinOp::kEqual: RunBroadcastBinary(plan, pool, a, b, y, [](const C& x, const C& z) { return x == z; }); break;
      case BinOp::kGreater: RunBroadcastBinary(plan, pool, a, b, y, [](const C& x, const C& z) { return x > z; }); break;
      case BinOp::kLess: RunBroadcastBinary(plan, pool, a, b, y, [](const C& x, const C& z) { return x < z; }); break;
      case BinOp::kGreaterEq: RunBroadcastBinary(plan, pool, a, b, y, [](const C& x, const C& z) { return x >= z; }); break;
      case BinOp::kLessEq: RunBroadcastBinary(plan, pool, a, b, y, [](const C& x, const C& z) { return x <= z; }); break;
      default: return MakeError(ErrorCode::kFail, OpName(op_), ": not a comparison");
    }
    return Status::OK();
  }

  Status Compare(KernelContext& ctx, const Tensor& A, const Tensor& B, const Dims& out_dims,
                 const BroadcastPlan& plan) const {
    if (A.type() == ElemType::kBool) return CompareTyped<bool>(ctx, A, B, out_dims, plan);
    if (A.type() == ElemType::kString) {
      ONYX_CHECK_ARG(op_ == BinOp::kEqual, OpName(op_), ": string inputs are only supported by Equal");
      return CompareTyped<std::string>(ctx, A, B, out_dims, plan);
    }
    return DispatchNumericOrHalf(A.type(), OpName(op_), [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      return CompareTyped<T>(ctx, A, B, out_dims, plan);
    });
  }

  Status Logical(KernelContext& ctx, const Tensor& A, const Tensor& B, const Dims& out_dims,
                 const BroadcastPlan& plan) const {
    ONYX_CHECK_ARG(A.type() == ElemType::kBool, OpName(op_), ": inputs must be bool, got ", ElemTypeName(A.type()));
    Tensor* Y = ctx.Output(0, out_dims, ElemType::kBool);
    if (Y == nullptr) return Status::OK();
    const bool* a = A.data<bool>();
    const bool* b = B.data<bool>();
    bool* y = Y->data<bool>();
    ThreadPool* pool = ctx.threads();
    switch (op_) {
      case BinOp::kAnd: RunBroadcastBinary(plan, pool, a, b, y, [](bool x, bool z) { return x && z; }); break;
      case BinOp::kOr: RunBroadcastBinary(plan, pool, a, b, y, [](bool x, bool z) { return x || z; }); break;
      default: RunBroadcastBinary(plan, pool, a, b, y, [](bool x, bool z) { return x != z; }); break;
    }
    return Status::OK();
  }

  BinOp op_;
  bool legacy_ = false;
  bool has_axis_ = false;
  int64_t axis_ = 0;
  bool fmod_ = false;
};

template <typename T>
T IntPow(T base, int64_t e) {
  T r = 1;
  while (e > 0) {
    if (e & 1) r = static_cast<T>(r * base);
    base = static_cast<T>(base * base);
    e >>= 1;
  }
  return r;
}

// Pow's exponent may have another type than its base (T1): the exponent is
// read as double, which is exact for every exponent that matters.
class PowKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    if (info.opset() < 7) {
      legacy_ = info.AttrInt("broadcast", 0) != 0;
      has_axis_ = info.Attr("axis") != nullptr;
      axis_ = info.AttrInt("axis", 0);
    }
    return Status::OK();
  }

  Status Compute(KernelContext& ctx) const override {
    const Tensor* A = nullptr;
    const Tensor* B = nullptr;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &A));
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(1, &B));
    Dims bdims, out_dims;
    ONYX_RETURN_IF_ERROR(LegacyBroadcastDims("Pow", legacy_, axis_, has_axis_, A->dims(), B->dims(), &bdims));
    ONYX_RETURN_IF_ERROR(BroadcastShapes(A->dims(), bdims, &out_dims, "Pow"));
    BroadcastPlan plan;
    ONYX_RETURN_IF_ERROR(plan.Init({A->dims(), bdims}, out_dims, "Pow"));
    std::vector<double> expo(static_cast<size_t>(B->size()));
    ONYX_RETURN_IF_ERROR(DispatchNumericOrHalf(B->type(), "Pow (exponent)", [&](auto tag) -> Status {
      using T1 = typename decltype(tag)::type;
      const T1* p = B->data<T1>();
      for (size_t i = 0; i < expo.size(); ++i) expo[i] = static_cast<double>(static_cast<typename CalcType<T1>::type>(p[i]));
      return Status::OK();
    }));
    return DispatchNumericOrHalf(A->type(), "Pow", [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      using C = typename CalcType<T>::type;
      Tensor* Y = ctx.Output(0, out_dims, A->type());
      if (Y == nullptr) return Status::OK();
      const T* a = A->data<T>();
      T* y = Y->data<T>();
      ThreadPool* pool = ctx.threads();
      if constexpr (std::is_floating_point<C>::value) {
        if (expo.size() == 1) {
          const double e = expo[0];
          if (e == 2.0) {
            RunBroadcastBinary(plan, pool, a, expo.data(), y, [](C x, double) { return x * x; });
            return Status::OK();
          }
          if (e == 0.5) {
            RunBroadcastBinary(plan, pool, a, expo.data(), y, [](C x, double) { return std::sqrt(x); });
            return Status::OK();
          }
          if (e == 1.0) {
            RunBroadcastBinary(plan, pool, a, expo.data(), y, [](C x, double) { return x; });
            return Status::OK();
          }
          if (e == 3.0) {
            RunBroadcastBinary(plan, pool, a, expo.data(), y, [](C x, double) { return x * x * x; });
            return Status::OK();
          }
        }
        RunBroadcastBinary(plan, pool, a, expo.data(), y,
                           [](C x, double e) { return static_cast<C>(std::pow(x, static_cast<C>(e))); });
      } else {
        RunBroadcastBinary(plan, pool, a, expo.data(), y, [](C x, double e) {
          if (e >= 0 && e == std::floor(e) && e < 64) return IntPow(x, static_cast<int64_t>(e));
          return FloatToInt<C>(std::pow(static_cast<double>(x), e));
        });
      }
      return Status::OK();
    });
  }

 private:
  bool legacy_ = false;
  bool has_axis_ = false;
  int64_t axis_ = 0;
};

enum class VarOp { kMax, kMin, kSum, kMean };

// Max, Min, Sum, Mean over any number of inputs, all broadcast together: the
// first two inputs are combined into the output, then each further input is
// folded into it in place.
class VariadicKernel final : public OpKernel {
 public:
  VariadicKernel(VarOp op, const char* name) : op_(op), name_(name) {}
  Status Init(const KernelInfo&) { return Status::OK(); }

  Status Compute(KernelContext& ctx) const override {
    const int n = ctx.InputCount();
    ONYX_CHECK_ARG(n >= 1, name_, ": needs at least one input");
    std::vector<const Tensor*> ins(n);
    std::vector<Dims> shapes(n);
    for (int i = 0; i < n; ++i) {
      ONYX_RETURN_IF_ERROR(ctx.RequiredInput(i, &ins[i]));
      ONYX_CHECK_ARG(ins[i]->type() == ins[0]->type(), name_, ": input ", i, " has type ",
                     ElemTypeName(ins[i]->type()), " but input 0 has type ", ElemTypeName(ins[0]->type()));
      shapes[i] = ins[i]->dims();
    }
    Dims out_dims;
    ONYX_RETURN_IF_ERROR(BroadcastShapes(shapes, &out_dims, name_));
    return DispatchNumericOrHalf(ins[0]->type(), name_, [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      using C = typename CalcType<T>::type;
      if (op_ == VarOp::kMean && !std::is_floating_point<C>::value)
        return MakeError(ErrorCode::kNotImplemented, name_, ": element type ", ElemTypeName(ins[0]->type()),
                         " is not supported");
      Tensor* Y = ctx.Output(0, out_dims, ins[0]->type());
      if (Y == nullptr) return Status::OK();
      T* y = Y->data<T>();
      ThreadPool* pool = ctx.threads();
      auto fold = [&](const T* a, const Dims& adims, const T* b, const Dims& bdims) -> Status {
        BroadcastPlan plan;
        ONYX_RETURN_IF_ERROR(plan.Init({adims, bdims}, out_dims, name_));
        switch (op_) {
          case VarOp::kMax: RunBroadcastBinary(plan, pool, a, b, y, [](C x, C z) { return MaxOf(x, z); }); break;
          case VarOp::kMin: RunBroadcastBinary(plan, pool, a, b, y, [](C x, C z) { return MinOf(x, z); }); break;
          default: RunBroadcastBinary(plan, pool, a, b, y, [](C x, C z) { return x + z; }); break;
        }
        return Status::OK();
      };
      if (n == 1) {
        const T* x = ins[0]->data<T>();
        for (int64_t i = 0; i < Y->size(); ++i) y[i] = x[i];
      } else {
        ONYX_RETURN_IF_ERROR(fold(ins[0]->data<T>(), shapes[0], ins[1]->data<T>(), shapes[1]));
        for (int i = 2; i < n; ++i) ONYX_RETURN_IF_ERROR(fold(y, out_dims, ins[i]->data<T>(), shapes[i]));
      }
      if (op_ == VarOp::kMean && n > 1) {
        const C inv = static_cast<C>(1) / static_cast<C>(n);
        for (int64_t i = 0; i < Y->size(); ++i) y[i] = static_cast<T>(static_cast<C>(y[i]) * inv);
      }
      return Status::OK();
    });
  }

 private:
  VarOp op_;
  const char* name_;
};

std::vector<ElemType> ComparableTypes() {
  std::vector<ElemType> v = NumericOrHalfTypes();
  v.push_back(ElemType::kBool);
  v.push_back(ElemType::kString);
  return v;
}

}  // namespace

ONYX_REGISTER_KERNEL(BinaryKernel, "", "Add", 1, kMaxVersion, NumericOrHalfTypes(), BinOp::kAdd);
ONYX_REGISTER_KERNEL(BinaryKernel, "", "Sub", 1, kMaxVersion, NumericOrHalfTypes(), BinOp::kSub);
ONYX_REGISTER_KERNEL(BinaryKernel, "", "Mul", 1, kMaxVersion, NumericOrHalfTypes(), BinOp::kMul);
ONYX_REGISTER_KERNEL(BinaryKernel, "", "Div", 1, kMaxVersion, NumericOrHalfTypes(), BinOp::kDiv);
ONYX_REGISTER_KERNEL(BinaryKernel, "", "Greater", 1, kMaxVersion, NumericOrHalfTypes(), BinOp::kGreater);
ONYX_REGISTER_KERNEL(BinaryKernel, "", "Less", 1, kMaxVersion, NumericOrHalfTypes(), BinOp::kLess);
ONYX_REGISTER_KERNEL(BinaryKernel, "", "GreaterOrEqual", 12, kMaxVersion, NumericOrHalfTypes(), BinOp::kGreaterEq);
ONYX_REGISTER_KERNEL(BinaryKernel, "", "LessOrEqual", 12, kMaxVersion, NumericOrHalfTypes(), BinOp::kLessEq);
ONYX_REGISTER_KERNEL(BinaryKernel, "", "Equal", 1, kMaxVersion, ComparableTypes(), BinOp::kEqual);
ONYX_REGISTER_KERNEL(BinaryKernel, "", "And", 1, kMaxVersion, BoolTypes(), BinOp::kAnd);
ONYX_REGISTER_KERNEL(BinaryKernel, "", "Or", 1, kMaxVersion, BoolTypes(), BinOp::kOr);
ONYX_REGISTER_KERNEL(BinaryKernel, "", "Xor", 1, kMaxVersion, BoolTypes(), BinOp::kXor);
ONYX_REGISTER_KERNEL(BinaryKernel, "", "Mod", 10, kMaxVersion, NumericOrHalfTypes(), BinOp::kMod);
ONYX_REGISTER_KERNEL(PowKernel, "", "Pow", 1, kMaxVersion,
                     {ElemType::kFloat, ElemType::kDouble, ElemType::kInt32, ElemType::kInt64, ElemType::kFloat16,
                      ElemType::kBFloat16});
ONYX_REGISTER_KERNEL(VariadicKernel, "", "Max", 1, kMaxVersion, NumericOrHalfTypes(), VarOp::kMax, "Max");
ONYX_REGISTER_KERNEL(VariadicKernel, "", "Min", 1, kMaxVersion, NumericOrHalfTypes(), VarOp::kMin, "Min");
ONYX_REGISTER_KERNEL(VariadicKernel, "", "Sum", 1, kMaxVersion, NumericOrHalfTypes(), VarOp::kSum, "Sum");
ONYX_REGISTER_KERNEL(VariadicKernel, "", "Mean", 1, kMaxVersion, FloatOrHalfTypes(), VarOp::kMean, "Mean");

}  // namespace onyx

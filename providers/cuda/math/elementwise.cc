// Element-wise arithmetic with broadcasting (Add, Sub, Mul, Div, Pow; Max,
// Min, Sum and Mean of 1 to N inputs), comparisons (Equal, Less,
// LessOrEqual, Greater, GreaterOrEqual) and activations (Relu, Sigmoid, Tanh,
// Exp, Log, Sqrt, Neg, Abs, Erf, Reciprocal, Gelu).
#include "providers/cuda/common/launch.h"
#include "providers/cuda/cuda_kernel.h"

namespace onyx {
namespace cuda {
namespace {

// Inputs 0 and 1 of one element type, their broadcast shape and index map.
Status BinaryInputs(KernelContext& ctx, const Tensor** a, const Tensor** b, Dims* out, IndexMap* map) {
  ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, a));
  ONYX_RETURN_IF_ERROR(ctx.RequiredInput(1, b));
  ONYX_CHECK_ARG((*a)->type() == (*b)->type(), "inputs have different element types (", ElemTypeName((*a)->type()),
                 ", ", ElemTypeName((*b)->type()), ")");
  ONYX_RETURN_IF_ERROR(BroadcastShape((*a)->dims(), (*b)->dims(), out));
  return BroadcastMap(*out, {(*a)->dims(), (*b)->dims()}, map);
}

template <BinaryOp kOp>
class BinaryKernel final : public CudaKernel {
 public:
  using CudaKernel::CudaKernel;
  Status Compute(KernelContext& ctx) const override {
    const Tensor *a, *b;
    Dims out;
    IndexMap map;
    ONYX_RETURN_IF_ERROR(BinaryInputs(ctx, &a, &b, &out, &map));
    Tensor* y = ctx.Output(0, out, a->type());
    return LaunchBinary(kOp, a->type(), map, y->size(), a->raw(), b->raw(), y->raw(), stream());
  }
};

// Pow (opset 12 on lets the exponent's type differ: then the CPU runs it).
class PowKernel final : public CudaKernel {
 public:
  using CudaKernel::CudaKernel;
  Status Init(const KernelInfo& info) {
    const TypeInfo &base = info.InputType(0), &exp = info.InputType(1);
    if (exp.kind != TypeInfo::Kind::kTensor || exp.elem != base.elem)
      return MakeError(ErrorCode::kNotImplemented, "Pow with an exponent of another type runs on the CPU");
    return Status::OK();
  }
  Status Compute(KernelContext& ctx) const override { return pow_.Compute(ctx); }

 private:
  BinaryKernel<BinaryOp::kPow> pow_{env_};
};

// Max, Min, Sum and Mean of 1 to N inputs of one type, broadcast together
// (multidirectionally): folded pairwise into Y, in input order (Mean then
// divides by N). One input is copied.
template <BinaryOp kOp, bool kMean = false>
class VariadicKernel final : public CudaKernel {
 public:
  using CudaKernel::CudaKernel;
  Status Init(const KernelInfo& info) {
    op_ = info.node().op_type;
    return Status::OK();
  }
  Status Compute(KernelContext& ctx) const override {
    const int count = ctx.InputCount();
    ONYX_CHECK_ARG(count >= 1, op_, " needs at least one input");
    std::vector<const Tensor*> xs(count);
    Dims out;
    for (int i = 0; i < count; ++i) {
      ONYX_RETURN_IF_ERROR(ctx.RequiredInput(i, &xs[i]));
      ONYX_CHECK_ARG(xs[i]->type() == xs[0]->type(), op_, " input ", i, " is ", ElemTypeName(xs[i]->type()),
                     " but input 0 is ", ElemTypeName(xs[0]->type()));
      if (i == 0) {
        out = xs[0]->dims();
      } else {
        Dims joined;  // (BroadcastShape fills its output first: not `out` itself)
        ONYX_RETURN_IF_ERROR(BroadcastShape(out, xs[i]->dims(), &joined));
        out = std::move(joined);
      }
    }
    const ElemType t = xs[0]->type();
    Tensor* y = ctx.Output(0, out, t);
    if (y->size() == 0) return Status::OK();
    if (count == 1) {
      ONYX_CUDA_RETURN_IF_ERROR(
          cudaMemcpyAsync(y->raw(), xs[0]->raw(), y->bytes(), cudaMemcpyDeviceToDevice, stream()));
      return Status::OK();
    }
    IndexMap map;
    ONYX_RETURN_IF_ERROR(BroadcastMap(out, {xs[0]->dims(), xs[1]->dims()}, &map));
    ONYX_RETURN_IF_ERROR(LaunchBinary(kOp, t, map, y->size(), xs[0]->raw(), xs[1]->raw(), y->raw(), stream()));
    // Y has the output's shape from here on: each element reads its own
    // value before writing it, so Y can be operand 0 in place.
    for (int i = 2; i < count; ++i) {
      ONYX_RETURN_IF_ERROR(BroadcastMap(out, {out, xs[i]->dims()}, &map));
      ONYX_RETURN_IF_ERROR(LaunchBinary(kOp, t, map, y->size(), y->raw(), xs[i]->raw(), y->raw(), stream()));
    }
    if (kMean) return LaunchDivide(t, y->size(), static_cast<double>(count), y->raw(), y->raw(), stream());
    return Status::OK();
  }

 private:
  std::string op_;
};

// Comparisons: bool output, inputs of one arithmetic type, broadcasting.
template <CompareOp kOp>
class CompareKernel final : public CudaKernel {
 public:
  using CudaKernel::CudaKernel;
  Status Compute(KernelContext& ctx) const override {
    const Tensor *a, *b;
    Dims out;
    IndexMap map;
    ONYX_RETURN_IF_ERROR(BinaryInputs(ctx, &a, &b, &out, &map));
    Tensor* y = ctx.Output(0, out, ElemType::kBool);
    return LaunchCompare(kOp, a->type(), map, y->size(), a->raw(), b->raw(), y->data<bool>(), stream());
  }
};

template <UnaryOp kOp>
class UnaryKernel final : public CudaKernel {
 public:
  using CudaKernel::CudaKernel;
  Status Init(const KernelInfo& info) {
    // Gelu's approximate="tanh" (opset 20).
    tanh_ = kOp == UnaryOp::kGelu && info.AttrString("approximate", "none") == "tanh";
    return Status::OK();
  }
  Status Compute(KernelContext& ctx) const override {
    const Tensor* x;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &x));
    Tensor* y = ctx.Output(0, x->dims(), x->type());
    return LaunchUnary(tanh_ ? UnaryOp::kGeluTanh : kOp, x->type(), x->size(), x->raw(), y->raw(), stream());
  }

 private:
  bool tanh_ = false;
};

using Add = BinaryKernel<BinaryOp::kAdd>;
using Sub = BinaryKernel<BinaryOp::kSub>;
using Mul = BinaryKernel<BinaryOp::kMul>;
using Div = BinaryKernel<BinaryOp::kDiv>;
using Pow = BinaryKernel<BinaryOp::kPow>;
// The float types and double (Sum, Mean; Max and Min before opset 12).
std::vector<ElemType> RealTypes() {
  return {ElemType::kFloat, ElemType::kFloat16, ElemType::kBFloat16, ElemType::kDouble};
}

using Max = VariadicKernel<BinaryOp::kMax>;
using Min = VariadicKernel<BinaryOp::kMin>;
using Sum = VariadicKernel<BinaryOp::kAdd>;
using Mean = VariadicKernel<BinaryOp::kAdd, true>;
using Equal = CompareKernel<CompareOp::kEqual>;
using Less = CompareKernel<CompareOp::kLess>;
using LessOrEqual = CompareKernel<CompareOp::kLessOrEqual>;
using Greater = CompareKernel<CompareOp::kGreater>;
using GreaterOrEqual = CompareKernel<CompareOp::kGreaterOrEqual>;
using Relu = UnaryKernel<UnaryOp::kRelu>;
using Sigmoid = UnaryKernel<UnaryOp::kSigmoid>;
using Tanh = UnaryKernel<UnaryOp::kTanh>;
using Exp = UnaryKernel<UnaryOp::kExp>;
using Log = UnaryKernel<UnaryOp::kLog>;
using Sqrt = UnaryKernel<UnaryOp::kSqrt>;
using Neg = UnaryKernel<UnaryOp::kNeg>;
using Abs = UnaryKernel<UnaryOp::kAbs>;
using Erf = UnaryKernel<UnaryOp::kErf>;
using Gelu = UnaryKernel<UnaryOp::kGelu>;
using Reciprocal = UnaryKernel<UnaryOp::kReciprocal>;

}  // namespace

ONYX_REGISTER_CUDA_KERNEL(Add, "", "Add", 7, kMaxVersion, ArithTypes());
ONYX_REGISTER_CUDA_KERNEL(Sub, "", "Sub", 7, kMaxVersion, ArithTypes());
ONYX_REGISTER_CUDA_KERNEL(Mul, "", "Mul", 7, kMaxVersion, ArithTypes());
ONYX_REGISTER_CUDA_KERNEL(Div, "", "Div", 7, kMaxVersion, ArithTypes());
ONYX_REGISTER_CUDA_KERNEL(Pow, "", "Pow", 7, 11, FloatTypes());
ONYX_REGISTER_CUDA_KERNEL(PowKernel, "", "Pow", 12, kMaxVersion, FloatTypes());
ONYX_REGISTER_CUDA_KERNEL(Equal, "", "Equal", 11, kMaxVersion, ArithTypes());
ONYX_REGISTER_CUDA_KERNEL(Less, "", "Less", 9, kMaxVersion, ArithTypes());
ONYX_REGISTER_CUDA_KERNEL(LessOrEqual, "", "LessOrEqual", 12, kMaxVersion, ArithTypes());
ONYX_REGISTER_CUDA_KERNEL(Greater, "", "Greater", 9, kMaxVersion, ArithTypes());
ONYX_REGISTER_CUDA_KERNEL(GreaterOrEqual, "", "GreaterOrEqual", 12, kMaxVersion, ArithTypes());
ONYX_REGISTER_CUDA_KERNEL(Max, "", "Max", 6, 11, RealTypes());
ONYX_REGISTER_CUDA_KERNEL(Max, "", "Max", 12, kMaxVersion, ArithTypes());
ONYX_REGISTER_CUDA_KERNEL(Min, "", "Min", 6, 11, RealTypes());
ONYX_REGISTER_CUDA_KERNEL(Min, "", "Min", 12, kMaxVersion, ArithTypes());
ONYX_REGISTER_CUDA_KERNEL(Sum, "", "Sum", 6, kMaxVersion, RealTypes());
ONYX_REGISTER_CUDA_KERNEL(Mean, "", "Mean", 6, kMaxVersion, RealTypes());
ONYX_REGISTER_CUDA_KERNEL(Relu, "", "Relu", 6, kMaxVersion, FloatTypes());
ONYX_REGISTER_CUDA_KERNEL(Sigmoid, "", "Sigmoid", 6, kMaxVersion, FloatTypes());
ONYX_REGISTER_CUDA_KERNEL(Tanh, "", "Tanh", 6, kMaxVersion, FloatTypes());
ONYX_REGISTER_CUDA_KERNEL(Exp, "", "Exp", 6, kMaxVersion, FloatTypes());
ONYX_REGISTER_CUDA_KERNEL(Log, "", "Log", 6, kMaxVersion, FloatTypes());
ONYX_REGISTER_CUDA_KERNEL(Sqrt, "", "Sqrt", 6, kMaxVersion, FloatTypes());
ONYX_REGISTER_CUDA_KERNEL(Neg, "", "Neg", 6, kMaxVersion, FloatTypes());
ONYX_REGISTER_CUDA_KERNEL(Abs, "", "Abs", 6, kMaxVersion, FloatTypes());
ONYX_REGISTER_CUDA_KERNEL(Erf, "", "Erf", 9, kMaxVersion, FloatTypes());
ONYX_REGISTER_CUDA_KERNEL(Reciprocal, "", "Reciprocal", 6, kMaxVersion, FloatTypes());
ONYX_REGISTER_CUDA_KERNEL(Gelu, "", "Gelu", 20, kMaxVersion, FloatTypes());
ONYX_REGISTER_CUDA_KERNEL(Gelu, "com.microsoft", "Gelu", 1, kMaxVersion, FloatTypes());

}  // namespace cuda
}  // namespace onyx

// Element-wise arithmetic with broadcasting (Add, Sub, Mul, Div, Pow, Max,
// Min) and activations (Relu, Sigmoid, Tanh, Exp, Log, Sqrt, Neg, Abs, Erf,
// Reciprocal, Gelu).
#include "providers/cuda/common/launch.h"
#include "providers/cuda/cuda_kernel.h"

namespace onyx {
namespace cuda {
namespace {

template <BinaryOp kOp>
class BinaryKernel final : public CudaKernel {
 public:
  using CudaKernel::CudaKernel;
  Status Compute(KernelContext& ctx) const override {
    const Tensor *a, *b;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &a));
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(1, &b));
    ONYX_CHECK_ARG(a->type() == b->type(), "inputs have different element types (", ElemTypeName(a->type()), ", ",
                   ElemTypeName(b->type()), ")");
    Dims out;
    ONYX_RETURN_IF_ERROR(BroadcastShape(a->dims(), b->dims(), &out));
    IndexMap map;
    ONYX_RETURN_IF_ERROR(BroadcastMap(out, {a->dims(), b->dims()}, &map));
    Tensor* y = ctx.Output(0, out, a->type());
    return LaunchBinary(kOp, a->type(), map, y->size(), a->raw(), b->raw(), y->raw(), stream());
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
using Max = BinaryKernel<BinaryOp::kMax>;
using Min = BinaryKernel<BinaryOp::kMin>;
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
ONYX_REGISTER_CUDA_KERNEL(Max, "", "Max", 12, kMaxVersion, ArithTypes());
ONYX_REGISTER_CUDA_KERNEL(Min, "", "Min", 12, kMaxVersion, ArithTypes());
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

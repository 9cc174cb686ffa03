// Softmax, LogSoftmax and LayerNormalization: block-per-row kernels over the
// normalized axis (common/launch_impl.cu).
#include "providers/cuda/common/launch.h"
#include "providers/cuda/cuda_kernel.h"

namespace onyx {
namespace cuda {
namespace {

int64_t Prod(const Dims& d, size_t from, size_t to) {
  int64_t p = 1;
  for (size_t i = from; i < to; ++i) p *= d[i];
  return p;
}

template <bool kLog>
class SoftmaxKernel final : public CudaKernel {
 public:
  using CudaKernel::CudaKernel;
  Status Init(const KernelInfo& info) {
    // Before opset 13 the input is flattened to 2-D at `axis` (default 1).
    opset13_ = info.opset() >= 13;
    axis_ = info.AttrInt("axis", opset13_ ? -1 : 1);
    return Status::OK();
  }
  Status Compute(KernelContext& ctx) const override {
    const Tensor* x;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &x));
    const int64_t r = static_cast<int64_t>(x->rank());
    int64_t axis = 0;
    ONYX_RETURN_IF_ERROR(NormalizeAxis(axis_, r == 0 ? 1 : r, false, &axis));
    const Dims& d = x->dims();
    Tensor* y = ctx.Output(0, d, x->type());
    if (r == 0) return LaunchSoftmax(x->type(), 1, 1, 1, kLog, x->raw(), y->raw(), stream());
    const size_t ax = static_cast<size_t>(axis);
    if (!opset13_)
      return LaunchSoftmax(x->type(), Prod(d, 0, ax), Prod(d, ax, d.size()), 1, kLog, x->raw(), y->raw(), stream());
    return LaunchSoftmax(x->type(), Prod(d, 0, ax), d[ax], Prod(d, ax + 1, d.size()), kLog, x->raw(), y->raw(),
                         stream());
  }

 private:
  bool opset13_ = true;
  int64_t axis_ = -1;
};

class LayerNorm final : public AxisKernel<-1> {
 public:
  using AxisKernel::AxisKernel;
  Status Init(const KernelInfo& info) {
    epsilon_ = info.AttrFloat("epsilon", 1e-5f);
    return AxisKernel::Init(info);
  }
  Status Compute(KernelContext& ctx) const override {
    const Tensor *x, *scale;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &x));
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(1, &scale));
    const Tensor* bias = ctx.Input(2);
    const int64_t r = static_cast<int64_t>(x->rank());
    int64_t axis = 0;
    ONYX_RETURN_IF_ERROR(Axis(r, &axis));
    const Dims& d = x->dims();
    const int64_t rows = Prod(d, 0, static_cast<size_t>(axis)), cols = Prod(d, static_cast<size_t>(axis), d.size());
    ONYX_CHECK_ARG(scale->size() == cols && scale->type() == x->type(), "Scale ", ShapeToString(scale->dims()),
                   " must have the ", cols, " elements of the normalized dimensions of X ", ShapeToString(d));
    ONYX_CHECK_ARG(!bias || (bias->size() == cols && bias->type() == x->type()), "B ",
                   ShapeToString(bias ? bias->dims() : Dims()), " must have the ", cols,
                   " elements of the normalized dimensions of X ", ShapeToString(d));
    Tensor* y = ctx.Output(0, d, x->type());
    Dims stat_dims = d;
    for (size_t i = static_cast<size_t>(axis); i < stat_dims.size(); ++i) stat_dims[i] = 1;
    // Mean and InvStdDev are float here (the stash type's default).
    Tensor* mean = ctx.Output(1, stat_dims, ElemType::kFloat);
    Tensor* inv = ctx.Output(2, stat_dims, ElemType::kFloat);
    return LaunchLayerNorm(x->type(), rows, cols, epsilon_, x->raw(), scale->raw(), bias ? bias->raw() : nullptr,
                           y->raw(), mean ? mean->data<float>() : nullptr, inv ? inv->data<float>() : nullptr,
                           stream());
  }

 private:
  float epsilon_ = 1e-5f;
};

using Softmax = SoftmaxKernel<false>;
using LogSoftmax = SoftmaxKernel<true>;

}  // namespace

ONYX_REGISTER_CUDA_KERNEL(Softmax, "", "Softmax", 1, kMaxVersion, FloatTypes());
ONYX_REGISTER_CUDA_KERNEL(LogSoftmax, "", "LogSoftmax", 1, kMaxVersion, FloatTypes());
ONYX_REGISTER_CUDA_KERNEL(LayerNorm, "", "LayerNormalization", 17, kMaxVersion, FloatTypes());

}  // namespace cuda
}  // namespace onyx

namespace onyx {
namespace cuda {
namespace {

// Inference BatchNormalization (training_mode 0, one output); the
// statistics must have X's element type (else the CPU runs it).
class BatchNorm final : public CudaKernel {
 public:
  using CudaKernel::CudaKernel;
  Status Init(const KernelInfo& info) {
    epsilon_ = info.AttrFloat("epsilon", 1e-5f);
    if (info.AttrInt("training_mode", 0) != 0 || info.node().outputs.size() > 1)
      return MakeError(ErrorCode::kNotImplemented, "BatchNormalization in training mode runs on the CPU");
    for (int i = 1; i < 5; ++i)
      if (info.InputType(i).kind == TypeInfo::Kind::kTensor && info.InputType(i).elem != info.InputType(0).elem)
        return MakeError(ErrorCode::kNotImplemented, "BatchNormalization with statistics of another type runs on the CPU");
    return Status::OK();
  }
  Status Compute(KernelContext& ctx) const override {
    const Tensor *x, *scale, *bias, *mean, *var;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &x));
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(1, &scale));
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(2, &bias));
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(3, &mean));
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(4, &var));
    ONYX_CHECK_ARG(x->rank() >= 2, "BatchNormalization input X ", ShapeToString(x->dims()), " needs a channel dimension");
    const int64_t c = x->dims()[1];
    for (const Tensor* t : {scale, bias, mean, var})
      ONYX_CHECK_ARG(t->size() == c && t->type() == x->type(), "BatchNormalization: scale, B, mean and var must have ",
                     c, " values of X's type; got ", ElemTypeName(t->type()), ShapeToString(t->dims()));
    int64_t spatial = 1;
    for (size_t i = 2; i < x->rank(); ++i) spatial *= x->dims()[i];
    Tensor* y = ctx.Output(0, x->dims(), x->type());
    return LaunchBatchNorm(x->type(), x->dims()[0], c, spatial, epsilon_, x->raw(), scale->raw(), bias->raw(),
                           mean->raw(), var->raw(), y->raw(), stream());
  }

 private:
  float epsilon_ = 1e-5f;
};

}  // namespace

ONYX_REGISTER_CUDA_KERNEL(BatchNorm, "", "BatchNormalization", 9, kMaxVersion,
                          {ElemType::kFloat, ElemType::kFloat16, ElemType::kBFloat16});

}  // namespace cuda
}  // namespace onyx

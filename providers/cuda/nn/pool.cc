// MaxPool and AveragePool on our own kernel (pool_impl.cu: every attribute,
// MaxPool's Indices too); GlobalMaxPool and GlobalAveragePool on cuDNN
// (declined, so run on the CPU, when cuDNN is not loaded).
#include "providers/cpu/nn/pool_geometry.h"
#include "providers/cuda/nn/cudnn_descriptors.h"
#include "providers/cuda/nn/pool_launch.h"

namespace onyx {
namespace cuda {
namespace {

class PoolKernel final : public CudaKernel {
 public:
  using CudaKernel::CudaKernel;
  Status Init(const KernelInfo& info) {
    op_ = info.node().op_type;
    global_ = op_.rfind("Global", 0) == 0;
    max_ = op_.find("Max") != std::string::npos;
    if (global_) {
      if (!env_.dnn) return MakeError(ErrorCode::kNotImplemented, op_, " needs cuDNN: ", env_.cudnn_error);
      return Status::OK();
    }
    return pool::ParseAttrs(info, op_.c_str(), &attrs_);
  }

  Status Compute(KernelContext& ctx) const override {
    const Tensor* x;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &x));
    return global_ ? ComputeGlobal(ctx, *x) : ComputeWindowed(ctx, *x);
  }

 private:
  // Our kernel: any window, pads, dilations, ceil_mode; MaxPool's Indices.
  Status ComputeWindowed(KernelContext& ctx, const Tensor& x) const {
    const size_t nd = attrs_.kernel.size();
    const Dims& xd = x.dims();
    ONYX_CHECK_ARG(xd.size() == nd + 2, op_, ": input X ", ShapeToString(xd), " must have rank ", nd + 2,
                   " to match kernel_shape ", ShapeToString(attrs_.kernel));
    PoolGeometry g;
    g.include_pad = attrs_.count_include_pad != 0;
    g.column_major = attrs_.storage_order == 1;
    Dims ydims = {xd[0], xd[1]};
    for (size_t j = 0; j < nd; ++j) {
      const size_t a = 3 - nd + j;
      ONYX_RETURN_IF_ERROR(pool::AxisExtent(attrs_, op_.c_str(), xd, j, &g.out[a], &g.pb[a], &g.pe[a]));
      g.in[a] = xd[2 + j];
      g.k[a] = attrs_.kernel[j];
      g.s[a] = attrs_.strides[j];
      g.d[a] = attrs_.dilations[j];
      ydims.push_back(g.out[a]);
    }
    Tensor* y = ctx.Output(0, ydims, x.type());
    Tensor* indices = max_ && ctx.OutputCount() > 1 ? ctx.Output(1, ydims, ElemType::kInt64) : nullptr;
    if (y == nullptr || y->size() == 0) return Status::OK();
    return LaunchPool(max_, x.type(), g, xd[0] * xd[1], x.raw(), y->raw(),
                      indices ? indices->data<int64_t>() : nullptr, stream());
  }

  // cuDNN's pooling over each whole plane.
  Status ComputeGlobal(KernelContext& ctx, const Tensor& x) const {
    cudnnDataType_t dt;
    ONYX_CHECK(CudnnType(x.type(), &dt), ErrorCode::kNotImplemented, "no cuDNN pooling for ", ElemTypeName(x.type()));
    ONYX_CHECK_ARG(x.rank() >= 3 && x.rank() <= 5, op_, ": input ", ShapeToString(x.dims()),
                   " must have 1 to 3 spatial dimensions");
    const size_t nd = x.rank() - 2;
    Dims ydims(x.rank(), 1);
    ydims[0] = x.dims()[0];
    ydims[1] = x.dims()[1];
    Tensor* y = ctx.Output(0, ydims, x.type());
    if (y->size() == 0) return Status::OK();
    std::vector<int> wi(x.dims().begin() + 2, x.dims().end()), pi(nd, 0), si(nd, 1);
    if (nd == 1) wi.push_back(1), pi.push_back(0), si.push_back(1);
    const Cudnn* dnn = env_.dnn;
    TensorDesc xd(dnn), yd(dnn);
    PoolDesc pd(dnn);
    ONYX_RETURN_IF_ERROR(xd.Set(dt, x.dims()));
    ONYX_RETURN_IF_ERROR(yd.Set(dt, ydims));
    ONYX_RETURN_IF_ERROR(pd.Set(max_ ? CUDNN_POOLING_MAX : CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING, wi, pi, si));
    float one = 1.f, zero = 0.f;
    double one_d = 1.0, zero_d = 0.0;
    const bool dbl = x.type() == ElemType::kDouble;
    std::lock_guard<std::mutex> dnn_lock(*env_.cudnn_mu);
    return CudnnStatus(dnn->cudnnPoolingForward(env_.cudnn, pd.get(), dbl ? static_cast<const void*>(&one_d) : &one,
                                                xd.get(), x.raw(), dbl ? static_cast<const void*>(&zero_d) : &zero,
                                                yd.get(), y->raw()),
                       "cudnnPoolingForward");
  }

  std::string op_;
  bool global_ = false, max_ = false;
  pool::Attrs attrs_;
};

std::vector<ElemType> PoolTypes() { return {ElemType::kFloat, ElemType::kFloat16, ElemType::kDouble}; }

}  // namespace

ONYX_REGISTER_CUDA_KERNEL(PoolKernel, "", "MaxPool", 1, kMaxVersion, PoolTypes());
ONYX_REGISTER_CUDA_KERNEL(PoolKernel, "", "AveragePool", 1, kMaxVersion, PoolTypes());
ONYX_REGISTER_CUDA_KERNEL(PoolKernel, "", "GlobalMaxPool", 1, kMaxVersion, PoolTypes());
ONYX_REGISTER_CUDA_KERNEL(PoolKernel, "", "GlobalAveragePool", 1, kMaxVersion, PoolTypes());

}  // namespace cuda
}  // namespace onyx

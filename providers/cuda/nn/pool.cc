// MaxPool, AveragePool, GlobalMaxPool, GlobalAveragePool on cuDNN. Declined
// at creation (run on the CPU): MaxPool's Indices output, ceil_mode,
// dilations, SAME auto-padding, asymmetric pads, and no cuDNN.
#include "providers/cuda/nn/cudnn_descriptors.h"

namespace onyx {
namespace cuda {
namespace {

class PoolKernel final : public CudaKernel {
 public:
  using CudaKernel::CudaKernel;
  Status Init(const KernelInfo& info) {
    const std::string op = info.node().op_type;
    if (!env_.dnn) return MakeError(ErrorCode::kNotImplemented, op, " needs cuDNN: ", env_.cudnn_error);
    global_ = op.rfind("Global", 0) == 0;
    max_ = op.find("Max") != std::string::npos;
    if (global_) return Status::OK();
    const std::string pad = info.AttrString("auto_pad", "NOTSET");
    if (pad != "NOTSET" && pad != "VALID" && !pad.empty())
      return MakeError(ErrorCode::kNotImplemented, op, " with auto_pad ", pad, " runs on the CPU");
    if (info.node().outputs.size() > 1 && !info.node().outputs[1].empty())
      return MakeError(ErrorCode::kNotImplemented, op, " with an Indices output runs on the CPU");
    if (info.AttrInt("ceil_mode", 0) != 0)
      return MakeError(ErrorCode::kNotImplemented, op, " with ceil_mode runs on the CPU");
    for (int64_t d : info.AttrInts("dilations"))
      if (d != 1) return MakeError(ErrorCode::kNotImplemented, op, " with dilations runs on the CPU");
    kernel_ = info.AttrInts("kernel_shape");
    strides_ = info.AttrInts("strides");
    if (pad == "NOTSET" || pad.empty()) pads_ = info.AttrInts("pads");
    for (size_t i = 0; i < pads_.size() / 2; ++i)
      if (pads_[i] != pads_[i + pads_.size() / 2])
        return MakeError(ErrorCode::kNotImplemented, op, " with asymmetric pads runs on the CPU");
    ONYX_CHECK(!kernel_.empty(), ErrorCode::kInvalidGraph, op, ": attribute kernel_shape is required");
    include_pad_ = info.AttrInt("count_include_pad", 0) != 0;
    return Status::OK();
  }

  Status Compute(KernelContext& ctx) const override {
    const Tensor* x;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &x));
    cudnnDataType_t dt;
    ONYX_CHECK(CudnnType(x->type(), &dt), ErrorCode::kNotImplemented, "no cuDNN pooling for ",
               ElemTypeName(x->type()));
    ONYX_CHECK_ARG(x->rank() >= 3 && x->rank() <= 5, "pooling input ", ShapeToString(x->dims()),
                   " must have 1 to 3 spatial dimensions");
    const size_t nd = x->rank() - 2;
    std::vector<int64_t> k = kernel_, s = strides_, p = pads_;
    if (global_) k.assign(x->dims().begin() + 2, x->dims().end());
    ONYX_CHECK_ARG(k.size() == nd, "kernel_shape ", ShapeToString(k), " does not fit input ", ShapeToString(x->dims()));
    if (s.empty()) s.assign(nd, 1);
    if (p.empty()) p.assign(2 * nd, 0);
    ONYX_CHECK_ARG(s.size() == nd && p.size() == 2 * nd, "strides or pads do not fit input ",
                   ShapeToString(x->dims()));
    Dims ydims = {x->dims()[0], x->dims()[1]};
    for (size_t j = 0; j < nd; ++j) {
      const int64_t span = x->dims()[2 + j] + 2 * p[j] - k[j];
      ONYX_CHECK_ARG(span >= 0 && s[j] > 0, "pooling window ", ShapeToString(k), " is larger than the padded input ",
                     ShapeToString(x->dims()));
      ydims.push_back(span / s[j] + 1);
    }
    Tensor* y = ctx.Output(0, ydims, x->type());
    if (y->size() == 0) return Status::OK();
    std::vector<int> wi(k.begin(), k.end()), pi(p.begin(), p.begin() + nd), si(s.begin(), s.end());
    if (nd == 1) wi.push_back(1), pi.push_back(0), si.push_back(1);
    const Cudnn* dnn = env_.dnn;
    TensorDesc xd(dnn), yd(dnn);
    PoolDesc pd(dnn);
    ONYX_RETURN_IF_ERROR(xd.Set(dt, x->dims()));
    ONYX_RETURN_IF_ERROR(yd.Set(dt, ydims));
    const cudnnPoolingMode_t mode = max_ ? CUDNN_POOLING_MAX
                                    : include_pad_ ? CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING
                                                   : CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING;
    ONYX_RETURN_IF_ERROR(pd.Set(mode, wi, pi, si));
    float one = 1.f, zero = 0.f;
    double one_d = 1.0, zero_d = 0.0;
    const bool dbl = x->type() == ElemType::kDouble;
    std::lock_guard<std::mutex> dnn_lock(*env_.cudnn_mu);
    return CudnnStatus(dnn->cudnnPoolingForward(env_.cudnn, pd.get(), dbl ? static_cast<const void*>(&one_d) : &one,
                                                xd.get(), x->raw(), dbl ? static_cast<const void*>(&zero_d) : &zero,
                                                yd.get(), y->raw()),
                       "cudnnPoolingForward");
  }

 private:
  bool global_ = false, max_ = false, include_pad_ = false;
  std::vector<int64_t> kernel_, strides_, pads_;
};

std::vector<ElemType> PoolTypes() { return {ElemType::kFloat, ElemType::kFloat16, ElemType::kDouble}; }

}  // namespace

ONYX_REGISTER_CUDA_KERNEL(PoolKernel, "", "MaxPool", 1, kMaxVersion, PoolTypes());
ONYX_REGISTER_CUDA_KERNEL(PoolKernel, "", "AveragePool", 1, kMaxVersion, PoolTypes());
ONYX_REGISTER_CUDA_KERNEL(PoolKernel, "", "GlobalMaxPool", 1, kMaxVersion, PoolTypes());
ONYX_REGISTER_CUDA_KERNEL(PoolKernel, "", "GlobalAveragePool", 1, kMaxVersion, PoolTypes());

}  // namespace cuda
}  // namespace onyx

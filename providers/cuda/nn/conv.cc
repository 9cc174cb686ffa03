// Conv and FusedConv (com.microsoft: + Z, + Relu) on cuDNN. Declines at
// creation (the CPU then runs the node) what cuDNN's symmetric-padding
// convolution cannot express: SAME auto-padding, asymmetric pads, FusedConv
// activations other than Relu, or no cuDNN library.
#include <map>
#include <mutex>

#include "providers/cpu/nn/conv_geometry.h"
#include "providers/cuda/common/launch.h"
#include "providers/cuda/nn/cudnn_descriptors.h"

namespace onyx {
namespace cuda {
namespace {

// Largest workspace an algorithm may use (and the search may try): a
// quarter of the device memory free when the shape is first searched,
// between 256 MiB and 2 GiB. At batch 32 the fast 3x3 algorithms (Winograd,
// FFT tiling) need more than 256 MiB for ResNet-50's early layers.
size_t WorkspaceLimit() {
  constexpr size_t kFloor = size_t{256} << 20, kCeiling = size_t{2} << 30;
  size_t free_bytes = 0, total = 0;
  if (cudaMemGetInfo(&free_bytes, &total) != cudaSuccess) {
    cudaGetLastError();  // clear it: the search below reports its own errors
    return kFloor;
  }
  const size_t quarter = free_bytes / 4;
  return quarter < kFloor ? kFloor : quarter > kCeiling ? kCeiling : quarter;
}

class ConvKernel final : public CudaKernel {
 public:
  using CudaKernel::CudaKernel;
  Status Init(const KernelInfo& info) {
    const std::string op = info.node().op_type;
    if (!env_.dnn) return MakeError(ErrorCode::kNotImplemented, op, " needs cuDNN: ", env_.cudnn_error);
    ONYX_RETURN_IF_ERROR(conv::ParseAttrs(info, op, &attrs_));
    if (attrs_.auto_pad == conv::AutoPad::kSameUpper || attrs_.auto_pad == conv::AutoPad::kSameLower)
      return MakeError(ErrorCode::kNotImplemented, op, " with SAME auto-padding runs on the CPU");
    ONYX_RETURN_IF_ERROR(conv::CheckPadsCount(attrs_.pads, op));
    const size_t half = attrs_.pads.size() / 2;
    for (size_t i = 0; i < half; ++i)
      if (attrs_.pads[i] != attrs_.pads[i + half])
        return MakeError(ErrorCode::kNotImplemented, op, " with asymmetric pads runs on the CPU");
    if (op == "FusedConv") {
      const std::string act = info.AttrString("activation", "");
      if (!act.empty() && act != "Relu")
        return MakeError(ErrorCode::kNotImplemented, "FusedConv activation ", act, " runs on the CPU");
      relu_ = act == "Relu";
    }
    return Status::OK();
  }

  Status Compute(KernelContext& ctx) const override {
    const Tensor *x, *w;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &x));
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(1, &w));
    const Tensor* b = ctx.Input(2);
    const Tensor* z = ctx.Input(3);
    cudnnDataType_t dt;
    ONYX_CHECK(CudnnType(x->type(), &dt), ErrorCode::kNotImplemented, "no cuDNN Conv for ", ElemTypeName(x->type()));
    ONYX_CHECK_ARG(x->rank() >= 3 && x->rank() <= 5 && w->rank() == x->rank(), "Conv input X ",
                   ShapeToString(x->dims()), " and weight W ", ShapeToString(w->dims()),
                   " must both have 1 to 3 spatial dimensions");
    const int64_t n = x->dims()[0], c = x->dims()[1], m = w->dims()[0];
    ONYX_CHECK_ARG(c == w->dims()[1] * attrs_.group && m % attrs_.group == 0, "Conv: X ", ShapeToString(x->dims()),
                   " has ", c, " channels but W ", ShapeToString(w->dims()), " with group ", attrs_.group, " takes ",
                   w->dims()[1] * attrs_.group);
    conv::Geom g;
    ONYX_RETURN_IF_ERROR(conv::ResolveConv({"Conv", "input X", "weight W"}, x->dims(), w->dims(), attrs_, &g));
    Dims ydims = {n, m};
    ydims.insert(ydims.end(), g.out.begin(), g.out.end());
    if (z)
      ONYX_CHECK_ARG(z->dims() == ydims && z->type() == x->type(), "FusedConv input Z ", ShapeToString(z->dims()),
                     " must match the output ", ShapeToString(ydims));
    if (b)
      ONYX_CHECK_ARG(b->size() == m && b->type() == x->type(), "Conv bias B ", ShapeToString(b->dims()), " must have ",
                     m, " values");
    Tensor* y = ctx.Output(0, ydims, x->type());
    if (y->size() == 0) return Status::OK();
    std::vector<int> pads(g.pb.begin(), g.pb.end()), strides(g.s.begin(), g.s.end()), dil(g.d.begin(), g.d.end());
    if (g.nd == 1) pads.push_back(0), strides.push_back(1), dil.push_back(1);
    const Cudnn* dnn = env_.dnn;
    TensorDesc xd(dnn), yd(dnn);
    FilterDesc wd(dnn);
    ConvDesc cd(dnn);
    ONYX_RETURN_IF_ERROR(xd.Set(dt, x->dims()));
    ONYX_RETURN_IF_ERROR(yd.Set(dt, ydims));
    ONYX_RETURN_IF_ERROR(wd.Set(dt, w->dims()));
    // FP32 convolutions use TF32 tensor cores only with use_tf32 (cuDNN's
    // default math would allow them).
    const cudnnMathType_t math = x->type() == ElemType::kFloat16 ? CUDNN_TENSOR_OP_MATH
                                 : env_.use_tf32                 ? CUDNN_DEFAULT_MATH
                                                                 : CUDNN_FMA_MATH;
    ONYX_RETURN_IF_ERROR(cd.Set(pads, strides, dil, static_cast<int>(attrs_.group),
                                x->type() == ElemType::kDouble ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT, math));
    std::lock_guard<std::mutex> dnn_lock(*env_.cudnn_mu);
    Choice choice;
    ONYX_RETURN_IF_ERROR(Choose(*x, *w, xd, wd, cd, yd, y, &choice));
    std::shared_ptr<Tensor> ws;
    if (choice.workspace > 0) ws = std::make_shared<Tensor>(ElemType::kUint8, Dims{int64_t(choice.workspace)}, env_.alloc);
    float one = 1.f, zero = 0.f;
    double one_d = 1.0, zero_d = 0.0;
    const bool dbl = x->type() == ElemType::kDouble;
    const void* alpha = dbl ? static_cast<const void*>(&one_d) : &one;
    const void* beta_zero = dbl ? static_cast<const void*>(&zero_d) : &zero;
    ONYX_RETURN_IF_ERROR(CudnnStatus(
        dnn->cudnnConvolutionForward(env_.cudnn, alpha, xd.get(), x->raw(), wd.get(), w->raw(), cd.get(), choice.algo,
                                     ws ? ws->raw() : nullptr, choice.workspace, beta_zero, yd.get(), y->raw()),
        "cudnnConvolutionForward"));
    // Bias, FusedConv's Z and Relu in one pass over Y.
    return LaunchConvEpilogue(y->type(), y->size(), m, y->size() / (n * m), b ? b->raw() : nullptr,
                              z ? z->raw() : nullptr, relu_, y->raw(), stream());
  }

 private:
  struct Choice {
    cudnnConvolutionFwdAlgo_t algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM;
    size_t workspace = 0;
  };

  // The algorithm for these shapes: searched once per input shape (the
  // session's cudnn_conv_algo_search), then reused.
  Status Choose(const Tensor& x, const Tensor& w, const TensorDesc& xd, const FilterDesc& wd, const ConvDesc& cd,
                const TensorDesc& yd, Tensor* y, Choice* out) const {
    // X's and W's shapes and the type (W may be a graph input of any shape).
    Dims key = x.dims();
    key.insert(key.end(), w.dims().begin(), w.dims().end());
    key.push_back(static_cast<int64_t>(x.type()));
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = chosen_.find(key);
      if (it != chosen_.end()) {
        *out = it->second;
        return Status::OK();
      }
    }
    const Cudnn* dnn = env_.dnn;
    Choice c;
    const size_t limit = WorkspaceLimit();
    if (env_.conv_algo_search == 0) {
      std::shared_ptr<Tensor> ws = std::make_shared<Tensor>(ElemType::kUint8, Dims{int64_t(limit)}, env_.alloc);
      cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
      int found = 0;
      ONYX_RETURN_IF_ERROR(CudnnStatus(
          dnn->cudnnFindConvolutionForwardAlgorithmEx(env_.cudnn, xd.get(), x.raw(), wd.get(), w.raw(), cd.get(),
                                                      yd.get(), y->raw(), CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &found,
                                                      perf, ws->raw(), limit),
          "cudnnFindConvolutionForwardAlgorithmEx"));
      for (int i = 0; i < found; ++i)
        if (perf[i].status == CUDNN_STATUS_SUCCESS && perf[i].memory <= limit) {
          c.algo = perf[i].algo;
          break;
        }
    } else if (env_.conv_algo_search == 1) {
      cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
      int found = 0;
      ONYX_RETURN_IF_ERROR(CudnnStatus(
          dnn->cudnnGetConvolutionForwardAlgorithm_v7(env_.cudnn, xd.get(), wd.get(), cd.get(), yd.get(),
                                                      CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &found, perf),
          "cudnnGetConvolutionForwardAlgorithm_v7"));
      for (int i = 0; i < found; ++i)
        if (perf[i].status == CUDNN_STATUS_SUCCESS && perf[i].memory <= limit) {
          c.algo = perf[i].algo;
          break;
        }
    }
    ONYX_RETURN_IF_ERROR(CudnnStatus(dnn->cudnnGetConvolutionForwardWorkspaceSize(env_.cudnn, xd.get(), wd.get(),
                                                                                 cd.get(), yd.get(), c.algo,
                                                                                 &c.workspace),
                                     "cudnnGetConvolutionForwardWorkspaceSize"));
    std::lock_guard<std::mutex> lock(mu_);
    chosen_[key] = c;
    *out = c;
    return Status::OK();
  }

  conv::Attrs attrs_;
  bool relu_ = false;
  mutable std::mutex mu_;
  mutable std::map<Dims, Choice> chosen_;
};

std::vector<ElemType> ConvTypes() { return {ElemType::kFloat, ElemType::kFloat16, ElemType::kDouble}; }

}  // namespace

ONYX_REGISTER_CUDA_KERNEL(ConvKernel, "", "Conv", 1, kMaxVersion, ConvTypes());
ONYX_REGISTER_CUDA_KERNEL(ConvKernel, "com.microsoft", "FusedConv", 1, kMaxVersion, ConvTypes());

}  // namespace cuda
}  // namespace onyx

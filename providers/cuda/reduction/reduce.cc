// The ONNX Reduce* operators over any set of axes: one kernel class for all
// (the ReduceOp is a template argument), axes as an attribute or, from the
// opset that made it one, as a host input; keepdims, noop_with_empty_axes.
// ReduceMean over one contiguous run of axes ([outer, reduced, inner]) takes
// its fast kernel; everything else the ReduceMap kernels (launch_reduce.cu).
#include "providers/cuda/common/launch.h"
#include "providers/cuda/cuda_kernel.h"

namespace onyx {
namespace cuda {
namespace {

template <ReduceOp kOp>
class Reduce final : public CudaKernel {
 public:
  using CudaKernel::CudaKernel;
  Status Init(const KernelInfo& info) {
    axes_ = info.AttrInts("axes");
    keepdims_ = info.AttrInt("keepdims", 1) != 0;
    noop_empty_ = info.AttrInt("noop_with_empty_axes", 0) != 0;
    return Status::OK();
  }
  Status Compute(KernelContext& ctx) const override {
    const Tensor* x;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &x));
    if (!ReduceSupported(kOp, x->type()))
      return MakeError(ErrorCode::kNotImplemented, "no CUDA kernel for element type ", ElemTypeName(x->type()));
    const int64_t r = static_cast<int64_t>(x->rank());
    std::vector<int64_t> axes = axes_;
    if (const Tensor* t = ctx.Input(1)) {
      ONYX_CHECK_ARG(t->type() == ElemType::kInt64 && t->rank() <= 1, "input 'axes' must be a 1-D int64 tensor, got ",
                     ElemTypeName(t->type()), ShapeToString(t->dims()));
      axes.assign(t->data<int64_t>(), t->data<int64_t>() + t->size());
    }
    std::vector<bool> reduce(r, axes.empty() && !noop_empty_);
    for (int64_t a : axes) {
      ONYX_CHECK_ARG(a >= -r && a < r, "axis ", a, " is out of range for rank ", r);
      reduce[a < 0 ? a + r : a] = true;
    }
    // One contiguous run of reduced axes is [outer, reduced, inner]. (Axes
    // of size 1 reduce nothing and do not break a run.)
    int64_t first = -1, last = -1;
    bool contiguous = true;
    for (int64_t d = 0; d < r; ++d)
      if (reduce[d] && x->dims()[d] != 1) {
        if (first < 0) first = d;
        for (int64_t k = last + 1; first < d && k < d; ++k) contiguous = contiguous && x->dims()[k] == 1;
        last = d;
      }
    Dims out;
    int64_t outer = 1, red = 1, inner = 1;
    for (int64_t d = 0; d < r; ++d) {
      const int64_t n = x->dims()[d];
      if (reduce[d]) red *= n;
      else if (first < 0 || d < first) outer *= n;
      else inner *= n;
      if (!reduce[d]) out.push_back(n);
      else if (keepdims_) out.push_back(1);
    }
    Tensor* y = ctx.Output(0, out, x->type());
    if (kOp == ReduceOp::kMean && contiguous && red > 0 && x->type() != ElemType::kDouble)
      return LaunchReduceMean(x->type(), outer, red, inner, x->raw(), y->raw(), stream());
    ReduceMap map;
    ONYX_RETURN_IF_ERROR(MakeReduceMap(x->dims(), reduce, &map));
    return LaunchReduce(kOp, x->type(), map, x->raw(), y->raw(), stream());
  }

 private:
  std::vector<int64_t> axes_;
  bool keepdims_ = true, noop_empty_ = false;
};

// Float types and double; Sum, Max and Min also int32 and int64.
std::vector<ElemType> RealTypes() {
  return {ElemType::kFloat, ElemType::kFloat16, ElemType::kBFloat16, ElemType::kDouble};
}

}  // namespace

// The opset that turned `axes` into input 1 (read on the host): 13 for
// ReduceSum, 18 for the others.
#define ONYX_REGISTER_CUDA_REDUCE(op, kind, types, axes_input_since)                                          \
  ONYX_REGISTER_CUDA_KERNEL(Reduce<ReduceOp::kind>, "", op, 1, axes_input_since - 1, types);                   \
  ONYX_REGISTER_CUDA_KERNEL(Reduce<ReduceOp::kind>, "", op, axes_input_since, kMaxVersion, types, {1})

ONYX_REGISTER_CUDA_REDUCE("ReduceSum", kSum, ArithTypes(), 13);
ONYX_REGISTER_CUDA_REDUCE("ReduceMean", kMean, RealTypes(), 18);
ONYX_REGISTER_CUDA_REDUCE("ReduceMax", kMax, ArithTypes(), 18);
ONYX_REGISTER_CUDA_REDUCE("ReduceMin", kMin, ArithTypes(), 18);
ONYX_REGISTER_CUDA_REDUCE("ReduceProd", kProd, RealTypes(), 18);
ONYX_REGISTER_CUDA_REDUCE("ReduceSumSquare", kSumSquare, RealTypes(), 18);
ONYX_REGISTER_CUDA_REDUCE("ReduceL1", kL1, RealTypes(), 18);
ONYX_REGISTER_CUDA_REDUCE("ReduceL2", kL2, RealTypes(), 18);
ONYX_REGISTER_CUDA_REDUCE("ReduceLogSum", kLogSum, RealTypes(), 18);
ONYX_REGISTER_CUDA_REDUCE("ReduceLogSumExp", kLogSumExp, RealTypes(), 18);

#undef ONYX_REGISTER_CUDA_REDUCE

}  // namespace cuda
}  // namespace onyx

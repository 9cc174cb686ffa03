// ReduceMean over any set of axes (one contiguous run: [outer, reduced, inner]).
#include "providers/cuda/common/launch.h"
#include "providers/cuda/cuda_kernel.h"

namespace onyx {
namespace cuda {
namespace {

class ReduceMean final : public CudaKernel {
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
    const int64_t r = static_cast<int64_t>(x->rank());
    std::vector<int64_t> axes = axes_;
    if (const Tensor* t = ctx.Input(1)) axes.assign(t->data<int64_t>(), t->data<int64_t>() + t->size());
    std::vector<bool> reduce(r, axes.empty() && !noop_empty_);
    for (int64_t a : axes) {
      ONYX_CHECK_ARG(a >= -r && a < r, "axis ", a, " is out of range for rank ", r);
      reduce[a < 0 ? a + r : a] = true;
    }
    // One contiguous run of reduced axes is [outer, reduced, inner]: the
    // fast kernel. Any other set goes through the strided one. (Axes of
    // size 1 reduce nothing and do not break a run.)
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
    if (!contiguous) {
      ReduceMap map;
      ONYX_RETURN_IF_ERROR(MakeReduceMap(x->dims(), reduce, &map));
      return LaunchReduceMeanAxes(x->type(), map, x->raw(), y->raw(), stream());
    }
    return LaunchReduceMean(x->type(), outer, red, inner, x->raw(), y->raw(), stream());
  }

 private:
  std::vector<int64_t> axes_;
  bool keepdims_ = true, noop_empty_ = false;
};

}  // namespace

ONYX_REGISTER_CUDA_KERNEL(ReduceMean, "", "ReduceMean", 1, 17, FloatTypes());
ONYX_REGISTER_CUDA_KERNEL(ReduceMean, "", "ReduceMean", 18, kMaxVersion, FloatTypes(), {1});

}  // namespace cuda
}  // namespace onyx

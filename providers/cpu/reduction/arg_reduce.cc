// ArgMax / ArgMin: the index of the largest / smallest element along one axis.
#include <cmath>

#include "providers/cpu/common/dispatch.h"
#include "providers/cpu/common/half_float.h"
#include "providers/kernel.h"

namespace onyx {
namespace {

template <typename T>
bool IsNan(T v) {
  if constexpr (std::is_floating_point<T>::value) return std::isnan(v);
  else return false;
}

class ArgReduceKernel final : public OpKernel {
 public:
  explicit ArgReduceKernel(bool is_max) : is_max_(is_max) {}

  Status Init(const KernelInfo& info) {
    axis_ = info.AttrInt("axis", 0);
    keepdims_ = info.AttrInt("keepdims", 1) != 0;
    select_last_ = info.AttrInt("select_last_index", 0) != 0;
    return Status::OK();
  }

  Status Compute(KernelContext& ctx) const override {
    // float16/bfloat16 run the float code, accumulating in float.
    if (const Tensor* in0 = ctx.Input(0); in0 != nullptr && IsHalfType(in0->type()))
      return ComputeThroughFloat(*this, ctx, {});
    const Tensor* x;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &x));
    const int64_t rank = static_cast<int64_t>(x->rank());
    const char* name = is_max_ ? "ArgMax" : "ArgMin";
    ONYX_CHECK_ARG(rank >= 1, name, ": the input must have rank >= 1");
    ONYX_CHECK_ARG(axis_ >= -rank && axis_ < rank, name, ": axis ", axis_, " is out of range for input shape ",
                   ShapeToString(x->dims()));
    const size_t axis = static_cast<size_t>(axis_ < 0 ? axis_ + rank : axis_);
    const Dims& in = x->dims();
    ONYX_CHECK_ARG(in[axis] > 0, name, ": cannot reduce an empty axis (input shape ", ShapeToString(in), ")");
    Dims out_dims;
    int64_t outer = 1, inner = 1;
    for (size_t i = 0; i < in.size(); ++i) {
      if (i < axis) outer *= in[i];
      if (i > axis) inner *= in[i];
      if (i != axis) out_dims.push_back(in[i]);
      else if (keepdims_) out_dims.push_back(1);
    }
    const int64_t n = in[axis];
    Tensor* y = ctx.Output(0, out_dims, ElemType::kInt64);
    int64_t* out = y->data<int64_t>();
    return DispatchNumeric(x->type(), name, [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* data = x->data<T>();
      for (int64_t o = 0; o < outer; ++o) {
        for (int64_t i = 0; i < inner; ++i) {
          const T* p = data + o * n * inner + i;
          int64_t best = 0;
          for (int64_t k = 1; k < n; ++k) {
            const T v = p[k * inner], b = p[best * inner];
            // NaN wins over numbers (as numpy's argmax/argmin); ties keep the
            // first index unless select_last_index asks for the last.
            if (IsNan(b) && !(select_last_ && IsNan(v))) continue;
            const bool better = IsNan(v) || (is_max_ ? v > b : v < b) || (select_last_ && v == b);
            if (better) best = k;
          }
          out[o * inner + i] = best;
        }
      }
      return Status::OK();
    });
  }

 private:
  bool is_max_;
  int64_t axis_ = 0;
  bool keepdims_ = true;
  bool select_last_ = false;
};

}  // namespace

ONYX_REGISTER_KERNEL(ArgReduceKernel, "", "ArgMax", 1, kMaxVersion, NumericOrHalfTypes(), /*is_max=*/true);
ONYX_REGISTER_KERNEL(ArgReduceKernel, "", "ArgMin", 1, kMaxVersion, NumericOrHalfTypes(), /*is_max=*/false);

}  // namespace onyx

// Compress (opset 9+; negative axis from 11): keeps the slices along axis (or
// the elements of the flattened input, without axis) whose condition is true.
// A condition shorter than the axis counts as false past its end.
#include <algorithm>
#include <string>
#include <vector>

#include "providers/cpu/common/indexing.h"
#include "providers/kernel.h"

namespace onyx {

namespace {

class CompressKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    has_axis_ = info.Attr("axis") != nullptr;
    axis_ = info.AttrInt("axis", 0);
    return Status::OK();
  }

  Status Compute(KernelContext& ctx) const override {
    const Tensor* X = nullptr;
    const Tensor* Cond = nullptr;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &X));
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(1, &Cond));
    ONYX_CHECK_ARG(Cond->type() == ElemType::kBool, "Compress: input 1 (condition) must be bool, got ",
                   ElemTypeName(Cond->type()));
    ONYX_CHECK_ARG(Cond->rank() == 1, "Compress: input 1 (condition) must be 1-D, got shape ",
                   ShapeToString(Cond->dims()));
    const int64_t rank = static_cast<int64_t>(X->rank());
    int64_t axis = 0, outer = 1, dim = X->size(), inner = 1;
    if (has_axis_) {
      ONYX_CHECK_ARG(rank >= 1, "Compress: input 0 (input) must have rank >= 1 with attribute axis, got a scalar");
      ONYX_RETURN_IF_ERROR(NormalizeAxis(axis_, rank, "Compress", "attribute axis", &axis));
      outer = DimProduct(X->dims(), 0, axis);
      dim = X->dims()[axis];
      inner = DimProduct(X->dims(), axis + 1, rank);
    }
    const bool* c = Cond->data<bool>();
    std::vector<int64_t> keep;
    for (int64_t i = 0; i < Cond->size(); ++i) {
      if (!c[i]) continue;
      ONYX_CHECK_ARG(i < dim, "Compress: input 1 (condition) is true at position ", i, " beyond the ", dim,
                     " entries of ", has_axis_ ? "the axis" : "the flattened input", " of input 0 (input) shape ",
                     ShapeToString(X->dims()));
      keep.push_back(i);
    }
    const int64_t kept = static_cast<int64_t>(keep.size());
    Dims out;
    if (has_axis_) {
      out = X->dims();
      out[axis] = kept;
    } else {
      out = {kept};
    }
    Tensor* Y = ctx.Output(0, out, X->type());
    if (Y == nullptr || Y->size() == 0) return Status::OK();
    return DispatchByStorage(X->type(), "Compress", [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      const T* x = X->data<T>();
      T* y = Y->data<T>();
      ThreadPool::For(ctx.threads(), outer, std::max<int64_t>(1, (1 << 14) / std::max<int64_t>(1, kept * inner)),
                      [&](int64_t b, int64_t e) {
                        for (int64_t o = b; o < e; ++o)
                          for (int64_t j = 0; j < kept; ++j) {
                            const T* src = x + (o * dim + keep[j]) * inner;
                            std::copy(src, src + inner, y + (o * kept + j) * inner);
                          }
                      });
      return Status::OK();
    });
  }

 private:
  bool has_axis_ = false;
  int64_t axis_ = 0;
};

}  // namespace

ONYX_REGISTER_KERNEL(CompressKernel, "", "Compress", 9, kMaxVersion, MovableTypes());

}  // namespace onyx

// MaxUnpool (opsets 9, 11+; 11 adds no semantics, 22 widens types). X and
// indices I share a shape [N, C, spatial...]; Y starts as zeros of the
// inferred shape (in-1)*stride - pads + kernel per spatial dim and gets
// Y.flat[I[i]] = X[i]. With an output_shape input the result is that shape,
// the inferred block in its leading corner (the ONNX reference and the
// backend tests index I against the inferred shape).
#include <algorithm>
#include <string>
#include <vector>

#include "providers/cpu/common/dispatch.h"
#include "providers/kernel.h"

namespace onyx {
namespace {

class MaxUnpoolKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    const std::string who = info.node().Describe();
    kernel_shape_ = info.AttrInts("kernel_shape");
    ONYX_CHECK(!kernel_shape_.empty(), ErrorCode::kInvalidGraph, who, ": attribute kernel_shape is required");
    strides_ = info.AttrInts("strides");
    pads_ = info.AttrInts("pads");
    for (int64_t v : kernel_shape_) ONYX_CHECK(v > 0, ErrorCode::kInvalidGraph, who, ": kernel_shape must be positive");
    for (int64_t v : strides_) ONYX_CHECK(v > 0, ErrorCode::kInvalidGraph, who, ": strides must be positive");
    for (int64_t v : pads_) ONYX_CHECK(v >= 0, ErrorCode::kInvalidGraph, who, ": pads must be non-negative");
    return Status::OK();
  }

  Status Compute(KernelContext& ctx) const override {
    const Tensor *x = nullptr, *ind = nullptr;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &x));
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(1, &ind));
    const Tensor* oshape = ctx.InputCount() > 2 ? ctx.Input(2) : nullptr;
    const Dims& xd = x->dims();
    const size_t nd = kernel_shape_.size();
    ONYX_CHECK_ARG(xd.size() == nd + 2, "MaxUnpool: input 'X' ", ShapeToString(xd), " must have rank ", nd + 2,
                   " (N, C and one dim per kernel_shape entry)");
    ONYX_CHECK_ARG(ind->dims() == xd && ind->type() == ElemType::kInt64, "MaxUnpool: input 'I' ",
                   ShapeToString(ind->dims()), " must be int64 with the shape of input 'X' ", ShapeToString(xd));
    ONYX_CHECK_ARG(strides_.empty() || strides_.size() == nd, "MaxUnpool: attribute strides needs ", nd, " values");
    ONYX_CHECK_ARG(pads_.empty() || pads_.size() == 2 * nd, "MaxUnpool: attribute pads needs ", 2 * nd, " values");
    Dims inf{xd[0], xd[1]};
    for (size_t j = 0; j < nd; ++j) {
      const int64_t s = strides_.empty() ? 1 : strides_[j];
      const int64_t p = pads_.empty() ? 0 : pads_[j] + pads_[j + nd];
      const int64_t v = (xd[j + 2] - 1) * s - p + kernel_shape_[j];
      ONYX_CHECK_ARG(v >= 0, "MaxUnpool: input 'X' ", ShapeToString(xd), " gives a negative output size");
      inf.push_back(v);
    }
    Dims yd = inf;
    if (oshape != nullptr) {
      ONYX_CHECK_ARG(oshape->type() == ElemType::kInt64 && oshape->rank() == 1 &&
                         oshape->dims()[0] == static_cast<int64_t>(xd.size()),
                     "MaxUnpool: input 'output_shape' ", ShapeToString(oshape->dims()), " must be int64 [", xd.size(), "]");
      yd.assign(oshape->data<int64_t>(), oshape->data<int64_t>() + xd.size());
      for (size_t j = 0; j < yd.size(); ++j)
        ONYX_CHECK_ARG(yd[j] >= inf[j], "MaxUnpool: input 'output_shape' ", ShapeToString(yd),
                       " is smaller than the unpooled shape ", ShapeToString(inf));
    }
    int64_t inf_size = 1;
    for (int64_t v : inf) inf_size *= v;
    const int64_t* iv = ind->data<int64_t>();
    for (int64_t i = 0; i < ind->size(); ++i)
      ONYX_CHECK_ARG(iv[i] >= 0 && iv[i] < inf_size, "MaxUnpool: input 'I' value ", iv[i], " at ", i,
                     " is outside [0, ", inf_size, ") (the unpooled shape ", ShapeToString(inf), ")");
    Tensor* y = ctx.Output(0, yd, x->type());
    if (y == nullptr || y->size() == 0) return Status::OK();
    return DispatchOver(FloatOrHalfTypeSet{}, x->type(), "MaxUnpool", [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      const T* xv = x->data<T>();
      T* yv = y->data<T>();
      std::fill(yv, yv + y->size(), T(0.f));
      if (yd == inf) {
        for (int64_t i = 0; i < x->size(); ++i) yv[iv[i]] = xv[i];
        return Status::OK();
      }
      std::vector<T> tmp(static_cast<size_t>(inf_size), T(0.f));
      for (int64_t i = 0; i < x->size(); ++i) tmp[iv[i]] = xv[i];
      // Copy the inferred block into the leading corner of Y, one last-dim row at a time.
      const size_t r = inf.size();
      const int64_t row = inf[r - 1];
      std::vector<int64_t> c(r - 1, 0);
      for (int64_t src = 0; src < inf_size && row > 0; src += row) {
        int64_t dst = 0;
        for (size_t j = 0; j + 1 < r; ++j) dst = dst * yd[j] + c[j];
        std::copy(tmp.begin() + src, tmp.begin() + src + row, yv + dst * yd[r - 1]);
        for (size_t j = r - 1; j-- > 0;) {
          if (++c[j] < inf[j]) break;
          c[j] = 0;
        }
      }
      return Status::OK();
    });
  }

 private:
  std::vector<int64_t> kernel_shape_, strides_, pads_;
};

}  // namespace

ONYX_REGISTER_KERNEL(MaxUnpoolKernel, "", "MaxUnpool", 9, kMaxVersion, FloatOrHalfTypes());

}  // namespace onyx

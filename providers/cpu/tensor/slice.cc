#include <algorithm>
#include <climits>
#include <string>
#include <vector>

#include "providers/cpu/common/broadcast.h"
#include "providers/cpu/common/dispatch.h"
#include "providers/kernel.h"

namespace onyx {

namespace {

Status ReadIndexInput(const Tensor& t, int index, std::vector<int64_t>* out) {
  ONYX_CHECK_ARG(t.rank() == 1, "Slice: input ", index, " must be 1-D, got shape ", ShapeToString(t.dims()));
  if (t.type() == ElemType::kInt64) {
    out->assign(t.data<int64_t>(), t.data<int64_t>() + t.size());
  } else if (t.type() == ElemType::kInt32) {
    out->assign(t.data<int32_t>(), t.data<int32_t>() + t.size());
  } else {
    return MakeError(ErrorCode::kInvalidArgument, "Slice: input ", index, " must be int32 or int64, got ",
                     ElemTypeName(t.type()));
  }
  return Status::OK();
}

class SliceKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    from_attrs_ = info.opset() < 10;
    if (from_attrs_) {
      ONYX_CHECK(info.Attr("starts") && info.Attr("ends"), ErrorCode::kInvalidGraph,
                 "Slice: attributes 'starts' and 'ends' are required before opset 10");
      starts_ = info.AttrInts("starts");
      ends_ = info.AttrInts("ends");
      has_axes_ = info.Attr("axes") != nullptr;
      axes_ = info.AttrInts("axes");
    }
    return Status::OK();
  }

  Status Compute(KernelContext& ctx) const override {
    const Tensor* X = nullptr;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &X));
    std::vector<int64_t> starts = starts_, ends = ends_, axes = axes_, steps;
    bool has_axes = has_axes_;
    if (!from_attrs_) {
      const Tensor* t = nullptr;
      ONYX_RETURN_IF_ERROR(ctx.RequiredInput(1, &t));
      ONYX_RETURN_IF_ERROR(ReadIndexInput(*t, 1, &starts));
      ONYX_RETURN_IF_ERROR(ctx.RequiredInput(2, &t));
      ONYX_RETURN_IF_ERROR(ReadIndexInput(*t, 2, &ends));
      if ((t = ctx.Input(3)) != nullptr) {
        has_axes = true;
        ONYX_RETURN_IF_ERROR(ReadIndexInput(*t, 3, &axes));
      }
      if ((t = ctx.Input(4)) != nullptr) ONYX_RETURN_IF_ERROR(ReadIndexInput(*t, 4, &steps));
    }
    const Dims& in = X->dims();
    const int64_t rank = static_cast<int64_t>(in.size());
    const size_t n = starts.size();
    ONYX_CHECK_ARG(ends.size() == n, "Slice: starts has ", n, " values but ends has ", ends.size());
    if (!has_axes) {
      axes.resize(n);
      for (size_t i = 0; i < n; ++i) axes[i] = static_cast<int64_t>(i);
    }
    ONYX_CHECK_ARG(axes.size() == n, "Slice: starts has ", n, " values but axes has ", axes.size());
    if (steps.empty()) steps.assign(n, 1);
    ONYX_CHECK_ARG(steps.size() == n, "Slice: starts has ", n, " values but steps has ", steps.size());

    Dims out = in;
    std::vector<int64_t> start(in.size(), 0), step(in.size(), 1);
    std::vector<bool> seen(in.size(), false);
    for (size_t i = 0; i < n; ++i) {
      int64_t a = axes[i];
      ONYX_CHECK_ARG(a >= -rank && a < rank, "Slice: axis ", a, " is out of range for input 0 of shape ",
                     ShapeToString(in));
      if (a < 0) a += rank;
      ONYX_CHECK_ARG(!seen[a], "Slice: axis ", axes[i], " is repeated");
      seen[a] = true;
      ONYX_CHECK_ARG(steps[i] != 0, "Slice: step for axis ", axes[i], " is 0");
      const int64_t d = in[a];
      // A step longer than the dim selects at most one element either way;
      // capping it keeps the arithmetic below from overflowing.
      const int64_t cap = std::max<int64_t>(d, 1);
      const int64_t s = steps[i] > 0 ? std::min(steps[i], cap) : std::max(steps[i], -cap);
      int64_t b = starts[i], e = ends[i];
      if (b < 0) b = b < -d ? -1 : b + d;
      if (e < 0) e = e < -d ? -1 : e + d;
      int64_t cnt;
      if (s > 0) {
        b = std::min(std::max<int64_t>(b, 0), d);
        e = std::min(std::max<int64_t>(e, 0), d);
        cnt = e > b ? (e - b + s - 1) / s : 0;
      } else {
        b = std::min(std::max<int64_t>(b, -1), d - 1);
        e = std::min(std::max<int64_t>(e, -1), d - 1);
        cnt = b > e ? (b - e + (-s) - 1) / (-s) : 0;
      }
      out[a] = cnt;
      start[a] = cnt > 0 ? b : 0;
      step[a] = s;
    }
    Dims strides(in.size());
    int64_t acc = 1, offset = 0;
    for (size_t k = in.size(); k-- > 0;) {
      strides[k] = acc * step[k];
      offset += start[k] * acc;
      acc *= in[k];
    }
    return DispatchAll(X->type(), "Slice", [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      Tensor* Y = ctx.Output(0, out, X->type());
      if (Y == nullptr || Y->size() == 0) return Status::OK();
      CopyStrided(X->data<T>(), offset, out, strides, Y->data<T>(), ctx.threads());
      return Status::OK();
    });
  }

 private:
  bool from_attrs_ = false;
  bool has_axes_ = false;
  std::vector<int64_t> starts_, ends_, axes_;
};

}  // namespace

ONYX_REGISTER_KERNEL(SliceKernel, "", "Slice", 1, kMaxVersion, AnyType());

}  // namespace onyx

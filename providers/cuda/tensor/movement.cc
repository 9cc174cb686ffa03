// Data movement: Transpose, Expand, Slice (one strided-copy kernel), Gather,
// Concat and Split (2-D device copies), Where, Cast.
#include <algorithm>

#include "providers/cuda/common/launch.h"
#include "providers/cuda/cuda_kernel.h"

namespace onyx {
namespace cuda {
namespace {

std::vector<int64_t> HostInts(const Tensor* t) {
  std::vector<int64_t> v;
  if (!t) return v;
  if (t->type() == ElemType::kInt32) v.assign(t->data<int32_t>(), t->data<int32_t>() + t->size());
  else v.assign(t->data<int64_t>(), t->data<int64_t>() + t->size());
  return v;
}

class Transpose final : public CudaKernel {
 public:
  using CudaKernel::CudaKernel;
  Status Init(const KernelInfo& info) {
    perm_ = info.AttrInts("perm");
    return Status::OK();
  }
  Status Compute(KernelContext& ctx) const override {
    const Tensor* x;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &x));
    const size_t r = x->rank();
    std::vector<int64_t> perm = perm_;
    if (perm.empty())
      for (size_t i = 0; i < r; ++i) perm.push_back(static_cast<int64_t>(r - 1 - i));
    ONYX_CHECK_ARG(perm.size() == r, "perm has ", perm.size(), " entries for an input of rank ", r);
    ONYX_CHECK_ARG(r <= static_cast<size_t>(kMaxRank), "rank ", r, " is above ", kMaxRank);
    std::vector<int64_t> in_strides = Strides(x->dims());
    Dims out(r);
    IndexMap map;
    map.rank = static_cast<int>(r);
    std::vector<bool> seen(r, false);
    for (size_t i = 0; i < r; ++i) {
      const int64_t p = perm[i] < 0 ? perm[i] + static_cast<int64_t>(r) : perm[i];
      ONYX_CHECK_ARG(p >= 0 && p < static_cast<int64_t>(r) && !seen[p], "perm ", ShapeToString(perm),
                     " is not a permutation of 0..", r - 1);
      seen[p] = true;
      out[i] = x->dims()[p];
      map.dims[i] = out[i];
      map.strides[0][i] = in_strides[p];
    }
    Tensor* y = ctx.Output(0, out, x->type());
    return LaunchStridedCopy(ElemSize(x->type()), map, y->size(), x->raw(), y->raw(), stream());
  }

 private:
  std::vector<int64_t> perm_;
};

class Expand final : public CudaKernel {
 public:
  using CudaKernel::CudaKernel;
  Status Compute(KernelContext& ctx) const override {
    const Tensor *x, *shape;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &x));
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(1, &shape));
    Dims out;
    ONYX_RETURN_IF_ERROR(BroadcastShape(x->dims(), HostInts(shape), &out));
    IndexMap map;
    ONYX_RETURN_IF_ERROR(BroadcastMap(out, {x->dims()}, &map));
    Tensor* y = ctx.Output(0, out, x->type());
    return LaunchStridedCopy(ElemSize(x->type()), map, y->size(), x->raw(), y->raw(), stream());
  }
};

class Slice final : public CudaKernel {
 public:
  using CudaKernel::CudaKernel;
  Status Init(const KernelInfo& info) {
    // Before opset 10, starts/ends/axes are attributes.
    attrs_ = info.opset() < 10;
    starts_ = info.AttrInts("starts");
    ends_ = info.AttrInts("ends");
    axes_ = info.AttrInts("axes");
    return Status::OK();
  }
  Status Compute(KernelContext& ctx) const override {
    const Tensor* x;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &x));
    std::vector<int64_t> starts = starts_, ends = ends_, axes = axes_, steps;
    if (!attrs_) {
      starts = HostInts(ctx.Input(1));
      ends = HostInts(ctx.Input(2));
      axes = HostInts(ctx.Input(3));
      steps = HostInts(ctx.Input(4));
    }
    const int64_t r = static_cast<int64_t>(x->rank());
    ONYX_CHECK_ARG(starts.size() == ends.size(), "starts and ends have different lengths");
    if (axes.empty())
      for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
    if (steps.empty()) steps.assign(starts.size(), 1);
    ONYX_CHECK_ARG(axes.size() == starts.size() && steps.size() == starts.size(),
                   "starts, ends, axes and steps must have the same length");
    ONYX_CHECK_ARG(r <= kMaxRank, "rank ", r, " is above ", kMaxRank);
    std::vector<int64_t> in_strides = Strides(x->dims());
    Dims out = x->dims();
    IndexMap map;
    map.rank = static_cast<int>(r);
    for (int64_t d = 0; d < r; ++d) map.strides[0][d] = in_strides[d];
    for (size_t i = 0; i < axes.size(); ++i) {
      int64_t a = axes[i] < 0 ? axes[i] + r : axes[i];
      ONYX_CHECK_ARG(a >= 0 && a < r, "axis ", axes[i], " is out of range for rank ", r);
      const int64_t dim = x->dims()[a], step = steps[i];
      ONYX_CHECK_ARG(step != 0, "step of axis ", a, " is 0");
      int64_t s = starts[i] < 0 ? starts[i] + dim : starts[i], e = ends[i] < 0 ? ends[i] + dim : ends[i];
      if (step > 0) {
        s = s < 0 ? 0 : (s > dim ? dim : s);
        e = e < 0 ? 0 : (e > dim ? dim : e);
        out[a] = e > s ? (e - s + step - 1) / step : 0;
      } else {
        s = s < 0 ? 0 : (s > dim - 1 ? dim - 1 : s);
        e = e < -1 ? -1 : (e > dim - 1 ? dim - 1 : e);
        out[a] = s > e ? (s - e - step - 1) / -step : 0;
      }
      map.offset += s * in_strides[a];
      map.strides[0][a] = in_strides[a] * step;
    }
    for (int64_t d = 0; d < r; ++d) map.dims[d] = out[d];
    Tensor* y = ctx.Output(0, out, x->type());
    return LaunchStridedCopy(ElemSize(x->type()), map, y->size(), x->raw(), y->raw(), stream());
  }

 private:
  bool attrs_ = false;
  std::vector<int64_t> starts_, ends_, axes_;
};

class Gather final : public AxisKernel<0> {
 public:
  using AxisKernel::AxisKernel;
  Status Compute(KernelContext& ctx) const override {
    const Tensor *x, *idx;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &x));
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(1, &idx));
    ONYX_CHECK_ARG(idx->type() == ElemType::kInt64 || idx->type() == ElemType::kInt32,
                   "indices must be int32 or int64, got ", ElemTypeName(idx->type()));
    const int64_t r = static_cast<int64_t>(x->rank());
    int64_t axis = 0;
    ONYX_RETURN_IF_ERROR(Axis(r, &axis));
    Dims out(x->dims().begin(), x->dims().begin() + axis);
    out.insert(out.end(), idx->dims().begin(), idx->dims().end());
    out.insert(out.end(), x->dims().begin() + axis + 1, x->dims().end());
    int64_t outer = 1, inner = 1;
    for (int64_t i = 0; i < axis; ++i) outer *= x->dims()[i];
    for (int64_t i = axis + 1; i < r; ++i) inner *= x->dims()[i];
    Tensor* y = ctx.Output(0, out, x->type());
    return LaunchGather(ElemSize(x->type()), outer, x->dims()[axis], inner, x->raw(), idx->type(), idx->raw(),
                        idx->size(), y->raw(), stream());
  }

};

class Concat final : public AxisKernel<0> {
 public:
  using AxisKernel::AxisKernel;
  Status Compute(KernelContext& ctx) const override {
    const Tensor* first;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &first));
    const int64_t r = static_cast<int64_t>(first->rank());
    int64_t axis = 0;
    ONYX_RETURN_IF_ERROR(Axis(r, &axis));
    Dims out = first->dims();
    out[axis] = 0;
    for (int i = 0; i < ctx.InputCount(); ++i) {
      const Tensor* t;
      ONYX_RETURN_IF_ERROR(ctx.RequiredInput(i, &t));
      ONYX_CHECK_ARG(t->rank() == first->rank() && t->type() == first->type(), "input ", i, " ",
                     ElemTypeName(t->type()), ShapeToString(t->dims()), " does not match input 0 ",
                     ElemTypeName(first->type()), ShapeToString(first->dims()));
      for (int64_t d = 0; d < r; ++d)
        ONYX_CHECK_ARG(d == axis || t->dims()[d] == first->dims()[d], "input ", i, " ", ShapeToString(t->dims()),
                       " differs from input 0 ", ShapeToString(first->dims()), " outside axis ", axis);
      out[axis] += t->dims()[axis];
    }
    Tensor* y = ctx.Output(0, out, first->type());
    if (y->size() == 0) return Status::OK();
    int64_t outer = 1, inner = ElemSize(first->type());
    for (int64_t d = 0; d < axis; ++d) outer *= out[d];
    for (int64_t d = axis + 1; d < r; ++d) inner *= out[d];
    const size_t pitch = static_cast<size_t>(out[axis] * inner);
    size_t at = 0;
    for (int i = 0; i < ctx.InputCount(); ++i) {
      const Tensor* t = ctx.Input(i);
      const size_t width = static_cast<size_t>(t->dims()[axis] * inner);
      if (width > 0)
        ONYX_CUDA_RETURN_IF_ERROR(cudaMemcpy2DAsync(static_cast<char*>(y->raw()) + at, pitch, t->raw(), width, width,
                                                    static_cast<size_t>(outer), cudaMemcpyDeviceToDevice, stream()));
      at += width;
    }
    return Status::OK();
  }

};

// Split along an axis: sizes from input 1 (opset 13 on, host memory), the
// `split` attribute (before 13), or equal parts (num_outputs, opset 18: the
// last part may be smaller).
class Split final : public AxisKernel<0> {
 public:
  using AxisKernel::AxisKernel;
  Status Init(const KernelInfo& info) {
    split_ = info.AttrInts("split");
    return AxisKernel::Init(info);
  }
  Status Compute(KernelContext& ctx) const override {
    const Tensor* x;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &x));
    const int64_t r = static_cast<int64_t>(x->rank());
    int64_t axis = 0;
    ONYX_RETURN_IF_ERROR(Axis(r, &axis));
    const int64_t dim = x->dims()[axis], n_out = ctx.OutputCount();
    std::vector<int64_t> sizes = ctx.Input(1) ? HostInts(ctx.Input(1)) : split_;
    if (sizes.empty()) {
      const int64_t part = (dim + n_out - 1) / n_out;
      for (int64_t i = 0; i < n_out; ++i) sizes.push_back(std::max<int64_t>(0, std::min(part, dim - i * part)));
    }
    int64_t total = 0;
    for (int64_t v : sizes) {
      ONYX_CHECK_ARG(v >= 0, "split sizes ", ShapeToString(sizes), " has a negative size");
      total += v;
    }
    ONYX_CHECK_ARG(static_cast<int64_t>(sizes.size()) == n_out && total == dim, "split sizes ", ShapeToString(sizes),
                   " do not cut axis ", axis, " of size ", dim, " into ", n_out, " outputs");
    int64_t outer = 1, inner = ElemSize(x->type());
    for (int64_t d = 0; d < axis; ++d) outer *= x->dims()[d];
    for (int64_t d = axis + 1; d < r; ++d) inner *= x->dims()[d];
    const size_t pitch = static_cast<size_t>(dim * inner);
    size_t at = 0;
    for (int64_t i = 0; i < n_out; ++i) {
      Dims od = x->dims();
      od[axis] = sizes[i];
      Tensor* y = ctx.Output(static_cast<int>(i), od, x->type());
      const size_t width = static_cast<size_t>(sizes[i] * inner);
      if (y && width > 0 && outer > 0)
        ONYX_CUDA_RETURN_IF_ERROR(cudaMemcpy2DAsync(y->raw(), width, static_cast<const char*>(x->raw()) + at, pitch,
                                                    width, static_cast<size_t>(outer), cudaMemcpyDeviceToDevice,
                                                    stream()));
      at += width;
    }
    return Status::OK();
  }

 private:
  std::vector<int64_t> split_;
};

class Where final : public CudaKernel {
 public:
  using CudaKernel::CudaKernel;
  Status Compute(KernelContext& ctx) const override {
    const Tensor *c, *a, *b;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &c));
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(1, &a));
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(2, &b));
    ONYX_CHECK_ARG(c->type() == ElemType::kBool, "condition must be bool, got ", ElemTypeName(c->type()));
    Dims ab, out;
    ONYX_RETURN_IF_ERROR(BroadcastShape(a->dims(), b->dims(), &ab));
    ONYX_RETURN_IF_ERROR(BroadcastShape(c->dims(), ab, &out));
    IndexMap map;
    ONYX_RETURN_IF_ERROR(BroadcastMap(out, {c->dims(), a->dims(), b->dims()}, &map));
    Tensor* y = ctx.Output(0, out, a->type());
    return LaunchWhere(ElemSize(a->type()), map, y->size(), c->data<bool>(), a->raw(), b->raw(), y->raw(), stream());
  }
};

class Cast final : public CudaKernel {
 public:
  using CudaKernel::CudaKernel;
  Status Init(const KernelInfo& info) {
    to_ = static_cast<ElemType>(info.AttrInt("to", 0));
    if (!CastSupported(to_))
      return MakeError(ErrorCode::kNotImplemented, "Cast to ", ElemTypeName(to_), " has no CUDA kernel");
    return Status::OK();
  }
  Status Compute(KernelContext& ctx) const override {
    const Tensor* x;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &x));
    Tensor* y = ctx.Output(0, x->dims(), to_);
    if (x->type() == to_) {
      if (x->bytes() == 0) return Status::OK();
      return CudaStatus(cudaMemcpyAsync(y->raw(), x->raw(), x->bytes(), cudaMemcpyDeviceToDevice, stream()),
                        "cudaMemcpyAsync");
    }
    return LaunchCast(x->type(), to_, x->size(), x->raw(), y->raw(), stream());
  }

 private:
  ElemType to_ = ElemType::kUndefined;
};

std::vector<ElemType> CastTypes() {
  return {ElemType::kFloat, ElemType::kFloat16, ElemType::kDouble, ElemType::kInt32, ElemType::kInt64,
          ElemType::kInt8, ElemType::kUint8, ElemType::kBool};
}

}  // namespace

ONYX_REGISTER_CUDA_KERNEL(Transpose, "", "Transpose", 1, kMaxVersion, MovableTypes());
ONYX_REGISTER_CUDA_KERNEL(Expand, "", "Expand", 8, kMaxVersion, MovableTypes(), {1});
ONYX_REGISTER_CUDA_KERNEL(Slice, "", "Slice", 1, 9, MovableTypes());
ONYX_REGISTER_CUDA_KERNEL(Slice, "", "Slice", 10, kMaxVersion, MovableTypes(), {1, 2, 3, 4});
ONYX_REGISTER_CUDA_KERNEL(Gather, "", "Gather", 1, kMaxVersion, MovableTypes());
ONYX_REGISTER_CUDA_KERNEL(Concat, "", "Concat", 4, kMaxVersion, MovableTypes());
ONYX_REGISTER_CUDA_KERNEL(Split, "", "Split", 2, 12, MovableTypes());
ONYX_REGISTER_CUDA_KERNEL(Split, "", "Split", 13, kMaxVersion, MovableTypes(), {1});
// Where's type constraint is on X (input 1); registered for any, checked at run time.
ONYX_REGISTER_CUDA_KERNEL(Where, "", "Where", 9, kMaxVersion, {});
ONYX_REGISTER_CUDA_KERNEL(Cast, "", "Cast", 6, kMaxVersion, CastTypes());

}  // namespace cuda
}  // namespace onyx

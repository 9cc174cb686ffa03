// Shape-only operators: Reshape, Flatten, Squeeze, Unsqueeze, Identity (a
// device-to-device copy under the new shape) and Shape (dims, written in host
// memory without reading the data).
#include <cstring>

#include "providers/cuda/cuda_kernel.h"

namespace onyx {
namespace cuda {
namespace {

Status CopyAs(const Tensor& x, const Dims& dims, KernelContext& ctx, cudaStream_t s) {
  ONYX_CHECK_ARG(ShapeSize(dims) == x.size(), "cannot give ", ShapeToString(x.dims()), " the shape ",
                 ShapeToString(dims), " (", x.size(), " elements vs ", ShapeSize(dims), ")");
  Tensor* y = ctx.Output(0, dims, x.type());
  if (x.bytes() == 0 || y->raw() == x.raw()) return Status::OK();
  return CudaStatus(cudaMemcpyAsync(y->raw(), x.raw(), x.bytes(), cudaMemcpyDeviceToDevice, s), "cudaMemcpyAsync");
}

// Axes from input 1 (host memory) or the `axes` attribute, normalized to rank `r`.
Status Axes(KernelContext& ctx, const std::vector<int64_t>& attr, int64_t r, std::vector<int64_t>* out) {
  const Tensor* t = ctx.Input(1);
  std::vector<int64_t> axes = attr;
  if (t) axes.assign(t->data<int64_t>(), t->data<int64_t>() + t->size());
  for (int64_t& a : axes) {
    ONYX_CHECK_ARG(a >= -r && a < r, "axis ", a, " is out of range for rank ", r);
    if (a < 0) a += r;
  }
  *out = axes;
  return Status::OK();
}

class Reshape final : public CudaKernel {
 public:
  using CudaKernel::CudaKernel;
  Status Init(const KernelInfo& info) {
    allow_zero_ = info.AttrInt("allowzero", 0) != 0;
    return Status::OK();
  }
  Status Compute(KernelContext& ctx) const override {
    const Tensor *x, *shape;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &x));
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(1, &shape));
    Dims dims(shape->data<int64_t>(), shape->data<int64_t>() + shape->size());
    int infer = -1;
    int64_t known = 1;
    for (size_t i = 0; i < dims.size(); ++i) {
      if (dims[i] == 0 && !allow_zero_) {
        ONYX_CHECK_ARG(i < x->rank(), "shape element ", i, " is 0 but the input has rank ", x->rank());
        dims[i] = x->dims()[i];
      }
      if (dims[i] == -1) {
        ONYX_CHECK_ARG(infer < 0, "shape ", ShapeToString(dims), " has more than one -1");
        infer = static_cast<int>(i);
      } else {
        ONYX_CHECK_ARG(dims[i] >= 0, "shape element ", i, " is ", dims[i]);
        known *= dims[i];
      }
    }
    if (infer >= 0) {
      ONYX_CHECK_ARG(known > 0 && x->size() % known == 0, "cannot reshape ", ShapeToString(x->dims()), " to ",
                     ShapeToString(dims));
      dims[infer] = x->size() / known;
    }
    return CopyAs(*x, dims, ctx, stream());
  }

 private:
  bool allow_zero_ = false;
};

class Flatten final : public AxisKernel<1> {
 public:
  using AxisKernel::AxisKernel;
  Status Compute(KernelContext& ctx) const override {
    const Tensor* x;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &x));
    int64_t axis = 0;
    ONYX_RETURN_IF_ERROR(Axis(static_cast<int64_t>(x->rank()), &axis, true));
    int64_t outer = 1;
    for (int64_t i = 0; i < axis; ++i) outer *= x->dims()[i];
    return CopyAs(*x, {outer, outer == 0 ? 0 : x->size() / outer}, ctx, stream());
  }
};

// Squeeze and Unsqueeze: axes from the attribute (before opset 13) or input 1.
class AxesKernel : public CudaKernel {
 public:
  using CudaKernel::CudaKernel;
  Status Init(const KernelInfo& info) {
    axes_ = info.AttrInts("axes");
    return Status::OK();
  }

 protected:
  std::vector<int64_t> axes_;
};

class Squeeze final : public AxesKernel {
 public:
  using AxesKernel::AxesKernel;
  Status Compute(KernelContext& ctx) const override {
    const Tensor* x;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &x));
    std::vector<int64_t> axes;
    ONYX_RETURN_IF_ERROR(Axes(ctx, axes_, static_cast<int64_t>(x->rank()), &axes));
    Dims dims;
    for (size_t i = 0; i < x->rank(); ++i) {
      bool listed = false;
      for (int64_t a : axes) listed = listed || a == static_cast<int64_t>(i);
      if (listed) ONYX_CHECK_ARG(x->dims()[i] == 1, "cannot squeeze axis ", i, " of size ", x->dims()[i]);
      if (listed || (axes.empty() && x->dims()[i] == 1)) continue;
      dims.push_back(x->dims()[i]);
    }
    return CopyAs(*x, dims, ctx, stream());
  }
};

class Unsqueeze final : public AxesKernel {
 public:
  using AxesKernel::AxesKernel;
  Status Compute(KernelContext& ctx) const override {
    const Tensor* x;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &x));
    const int64_t r = static_cast<int64_t>(x->rank());
    std::vector<int64_t> axes;
    const Tensor* t = ctx.Input(1);
    ONYX_RETURN_IF_ERROR(Axes(ctx, axes_, r + static_cast<int64_t>(t ? t->size() : axes_.size()), &axes));
    Dims dims(static_cast<size_t>(r) + axes.size(), 0);
    for (int64_t a : axes) {
      ONYX_CHECK_ARG(dims[a] == 0, "axis ", a, " is listed twice");
      dims[a] = 1;
    }
    size_t j = 0;
    for (auto& d : dims)
      if (d == 0) d = x->dims()[j++];
      else d = 1;
    return CopyAs(*x, dims, ctx, stream());
  }
};

class Identity final : public CudaKernel {
 public:
  using CudaKernel::CudaKernel;
  Status Compute(KernelContext& ctx) const override {
    const Tensor* x;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &x));
    return CopyAs(*x, x->dims(), ctx, stream());
  }
};

class Shape final : public CudaKernel {
 public:
  using CudaKernel::CudaKernel;
  Status Init(const KernelInfo& info) {
    start_ = info.AttrInt("start", 0);
    end_ = info.AttrInt("end", INT64_MAX);
    return Status::OK();
  }
  Status Compute(KernelContext& ctx) const override {
    const Tensor* x;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &x));
    const int64_t r = static_cast<int64_t>(x->rank());
    auto clamp = [r](int64_t v) { return v < 0 ? (v + r < 0 ? 0 : v + r) : (v > r ? r : v); };
    const int64_t b = clamp(start_), e = clamp(end_);
    Tensor* y = ctx.Output(0, {e > b ? e - b : 0}, ElemType::kInt64);  // host memory (registration)
    for (int64_t i = b; i < e; ++i) y->data<int64_t>()[i - b] = x->dims()[i];
    return Status::OK();
  }

 private:
  int64_t start_ = 0, end_ = INT64_MAX;
};

}  // namespace

ONYX_REGISTER_CUDA_KERNEL(Reshape, "", "Reshape", 5, kMaxVersion, MovableTypes(), {1});
ONYX_REGISTER_CUDA_KERNEL(Flatten, "", "Flatten", 1, kMaxVersion, MovableTypes());
ONYX_REGISTER_CUDA_KERNEL(Squeeze, "", "Squeeze", 1, 12, MovableTypes());
ONYX_REGISTER_CUDA_KERNEL(Squeeze, "", "Squeeze", 13, kMaxVersion, MovableTypes(), {1});
ONYX_REGISTER_CUDA_KERNEL(Unsqueeze, "", "Unsqueeze", 1, 12, MovableTypes());
ONYX_REGISTER_CUDA_KERNEL(Unsqueeze, "", "Unsqueeze", 13, kMaxVersion, MovableTypes(), {1});
ONYX_REGISTER_CUDA_KERNEL(Identity, "", "Identity", 1, kMaxVersion, MovableTypes());
ONYX_REGISTER_CUDA_KERNEL(Shape, "", "Shape", 1, kMaxVersion, {}, {}, {0});

}  // namespace cuda
}  // namespace onyx

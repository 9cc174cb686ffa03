#include <algorithm>
#include <climits>
#include <cstring>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "core/framework/random.h"
#include "providers/cpu/common/broadcast.h"
#include "providers/cpu/common/dispatch.h"
#include "providers/kernel.h"

namespace onyx {

namespace {

// Output `out_index` as input 0 under `dims`: a view of its bytes where the
// plan allows one (KernelInfo::AllowOutputView, said in each kernel's Init),
// else a copy.
Status ViewOrCopy(KernelContext& ctx, int out_index, const Tensor& x, const Dims& dims) {
  if (ctx.OutputView(out_index, 0, dims) != nullptr) return Status::OK();
  Tensor* y = ctx.Output(out_index, dims, x.type());
  if (y == nullptr) return Status::OK();
  if (x.type() == ElemType::kString) {
    const auto* s = x.data<std::string>();
    auto* d = y->data<std::string>();
    for (int64_t i = 0; i < x.size(); ++i) d[i] = s[i];
  } else if (x.bytes() > 0) {
    const auto* s = static_cast<const char*>(x.raw());
    auto* d = static_cast<char*>(y->raw());
    const int64_t n = static_cast<int64_t>(x.bytes());
    ThreadPool::For(ctx.threads(), n, 1 << 20, [&](int64_t b, int64_t e) {
      std::memcpy(d + b, s + b, static_cast<size_t>(e - b));
    });
  }
  return Status::OK();
}

Status ReadInt64s(const Tensor& t, const char* op, int index, std::vector<int64_t>* out) {
  ONYX_CHECK_ARG(t.rank() <= 1, op, ": input ", index, " must be 1-D, got shape ", ShapeToString(t.dims()));
  if (t.type() == ElemType::kInt64) {
    out->assign(t.data<int64_t>(), t.data<int64_t>() + t.size());
  } else if (t.type() == ElemType::kInt32) {
    out->assign(t.data<int32_t>(), t.data<int32_t>() + t.size());
  } else {
    return MakeError(ErrorCode::kInvalidArgument, op, ": input ", index, " must be int64, got ",
                     ElemTypeName(t.type()));
  }
  return Status::OK();
}

// Axes normalized to [0, rank), each at most once.
Status NormalizeAxes(const std::vector<int64_t>& axes, int64_t rank, const char* op, std::vector<int64_t>* out) {
  out->clear();
  for (int64_t a : axes) {
    ONYX_CHECK_ARG(a >= -rank && a < rank, op, ": axis ", a, " is out of range for rank ", rank);
    int64_t n = a < 0 ? a + rank : a;
    ONYX_CHECK_ARG(std::find(out->begin(), out->end(), n) == out->end(), op, ": axis ", a, " is repeated");
    out->push_back(n);
  }
  return Status::OK();
}

class ReshapeKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    from_attr_ = info.opset() < 5;
    if (from_attr_) shape_attr_ = info.AttrInts("shape");
    allow_zero_ = info.opset() >= 14 && info.AttrInt("allowzero", 0) != 0;
    info.AllowOutputView(0, 0);
    return Status::OK();
  }

  Status Compute(KernelContext& ctx) const override {
    const Tensor* X = nullptr;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &X));
    std::vector<int64_t> shape = shape_attr_;
    if (!from_attr_) {
      const Tensor* S = nullptr;
      ONYX_RETURN_IF_ERROR(ctx.RequiredInput(1, &S));
      ONYX_CHECK_ARG(S->type() == ElemType::kInt64, "Reshape: input 1 (shape) must be int64, got ",
                     ElemTypeName(S->type()));
      ONYX_RETURN_IF_ERROR(ReadInt64s(*S, "Reshape", 1, &shape));
    }
    Dims out(shape.size());
    int64_t infer = -1, known = 1;
    for (size_t i = 0; i < shape.size(); ++i) {
      int64_t d = shape[i];
      if (d == -1) {
        ONYX_CHECK_ARG(infer < 0, "Reshape: shape ", ShapeToString(shape), " has more than one -1");
        infer = static_cast<int64_t>(i);
        continue;
      }
      if (d == 0 && !allow_zero_) {
        ONYX_CHECK_ARG(i < X->rank(), "Reshape: shape ", ShapeToString(shape), " copies dimension ", i,
                       " (0) but input 0 has shape ", ShapeToString(X->dims()));
        d = X->dims()[i];
      }
      ONYX_CHECK_ARG(d >= 0, "Reshape: shape ", ShapeToString(shape), " holds invalid dimension ", d);
      out[i] = d;
      ONYX_CHECK_ARG(!__builtin_mul_overflow(known, d, &known), "Reshape: cannot reshape input 0 of shape ",
                     ShapeToString(X->dims()), " to ", ShapeToString(shape), ": too many elements");
    }
    if (infer >= 0) {
      ONYX_CHECK_ARG(known != 0 && X->size() % known == 0, "Reshape: cannot reshape input 0 of shape ",
                     ShapeToString(X->dims()), " to ", ShapeToString(shape));
      out[infer] = X->size() / known;
    }
    ONYX_CHECK_ARG(ShapeSize(out) == X->size(), "Reshape: cannot reshape input 0 of shape ",
                   ShapeToString(X->dims()), " (", X->size(), " elements) to ", ShapeToString(shape));
    return ViewOrCopy(ctx, 0, *X, out);
  }

 private:
  bool from_attr_ = false;
  bool allow_zero_ = false;
  std::vector<int64_t> shape_attr_;
};

class FlattenKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    axis_ = info.AttrInt("axis", 1);
    info.AllowOutputView(0, 0);
    return Status::OK();
  }

  Status Compute(KernelContext& ctx) const override {
    const Tensor* X = nullptr;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &X));
    const int64_t rank = static_cast<int64_t>(X->rank());
    const int64_t axis = axis_ < 0 ? axis_ + rank : axis_;
    ONYX_CHECK_ARG(axis >= 0 && axis <= rank, "Flatten: attribute axis ", axis_, " is out of range for input 0 of shape ",
                   ShapeToString(X->dims()));
    int64_t a = 1, b = 1;
    for (int64_t k = 0; k < rank; ++k) (k < axis ? a : b) *= X->dims()[k];
    return ViewOrCopy(ctx, 0, *X, {a, b});
  }

 private:
  int64_t axis_ = 1;
};

// Squeeze and Unsqueeze take axes as an attribute before opset 13 and as an
// (optional, for Squeeze) input from 13.
class SqueezeKernel final : public OpKernel {
 public:
  explicit SqueezeKernel(bool unsqueeze) : unsqueeze_(unsqueeze) {}

  Status Init(const KernelInfo& info) {
    from_input_ = info.opset() >= 13;
    if (!from_input_) {
      has_attr_ = info.Attr("axes") != nullptr;
      axes_ = info.AttrInts("axes");
    }
    info.AllowOutputView(0, 0);
    return Status::OK();
  }

  Status Compute(KernelContext& ctx) const override {
    const char* name = unsqueeze_ ? "Unsqueeze" : "Squeeze";
    const Tensor* X = nullptr;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &X));
    std::vector<int64_t> axes = axes_;
    bool has = has_attr_;
    if (from_input_) {
      const Tensor* A = ctx.Input(1);
      has = A != nullptr;
      if (A) ONYX_RETURN_IF_ERROR(ReadInt64s(*A, name, 1, &axes));
    }
    const Dims& in = X->dims();
    const int64_t rank = static_cast<int64_t>(in.size());
    Dims out;
    if (unsqueeze_) {
      ONYX_CHECK_ARG(has, "Unsqueeze: axes are required");
      const int64_t out_rank = rank + static_cast<int64_t>(axes.size());
      std::vector<int64_t> norm;
      ONYX_RETURN_IF_ERROR(NormalizeAxes(axes, out_rank, name, &norm));
      std::vector<bool> inserted(static_cast<size_t>(out_rank), false);
      for (int64_t a : norm) inserted[a] = true;
      size_t j = 0;
      for (int64_t k = 0; k < out_rank; ++k) out.push_back(inserted[k] ? 1 : in[j++]);
    } else {
      std::vector<int64_t> norm;
      ONYX_RETURN_IF_ERROR(NormalizeAxes(axes, rank, name, &norm));
      for (int64_t a : norm)
        ONYX_CHECK_ARG(in[a] == 1, "Squeeze: cannot squeeze axis ", a, " of input 0 shape ", ShapeToString(in),
                       ": its dimension is not 1");
      for (int64_t k = 0; k < rank; ++k) {
        bool drop = has && !norm.empty() ? std::find(norm.begin(), norm.end(), k) != norm.end() : in[k] == 1;
        if (!drop) out.push_back(in[k]);
      }
    }
    return ViewOrCopy(ctx, 0, *X, out);
  }

 private:
  bool unsqueeze_;
  bool from_input_ = false;
  bool has_attr_ = false;
  std::vector<int64_t> axes_;
};

class IdentityKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    info.AllowOutputView(0, 0);
    return Status::OK();
  }
  Status Compute(KernelContext& ctx) const override {
    // Sequences and optionals are immutable: the output shares them.
    const Value* v = ctx.InputValue(0);
    if (v != nullptr && !v->IsTensor()) return ctx.SetOutputValue(0, *v);
    const Tensor* X = nullptr;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &X));
    return ViewOrCopy(ctx, 0, *X, X->dims());
  }
};

// Dropout. Inference (no training_mode, or false, or ratio 0): the output is
// the input and the mask is all ones. Training (opset 12+): each element is
// kept with probability 1 - ratio (a uniform draw >= ratio) and scaled by
// 1 / (1 - ratio); the mask says which were kept. Draws come from the
// kernel's own stream, seeded by the `seed` attribute or, without one, like
// the random operators (providers/cpu/random/: the global seed and the node).
class DropoutKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    opset_ = info.opset();
    const Node& n = info.node();
    int64_t seed = 0;
    if (const Attribute* a = info.Attr("seed")) {
      ONYX_CHECK(a->type == Attribute::Type::kInt, ErrorCode::kInvalidGraph, "Dropout: attribute 'seed' must be ",
                 "an int");
      seed = NodeSeed(a->i, "Dropout");
    } else {
      seed = NodeSeed(NextKernelSeed(), n.outputs.empty() ? n.name : n.outputs[0]);
    }
    stream_ = std::make_unique<RandomStream>(seed);
    info.AllowOutputView(0, 0);  // inference: Y is X
    return Status::OK();
  }

  Status Compute(KernelContext& ctx) const override {
    const Tensor* X = nullptr;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &X));
    double ratio = 0.5;
    bool training = false;
    if (opset_ >= 12) {
      const Tensor* training_t = ctx.Input(2);
      if (training_t != nullptr) {
        ONYX_CHECK_ARG(training_t->type() == ElemType::kBool && training_t->size() == 1,
                       "Dropout: input 2 (training_mode) must be a bool scalar");
        training = training_t->data<bool>()[0];
      }
      const Tensor* r = ctx.Input(1);
      if (r != nullptr) {
        ONYX_CHECK_ARG(r->size() == 1 && r->rank() <= 1, "Dropout: input 1 (ratio) must be a scalar, got shape ",
                       ShapeToString(r->dims()));
        ONYX_RETURN_IF_ERROR(DispatchOver(FloatOrHalfTypeSet{}, r->type(), "Dropout", [&](auto tag) -> Status {
          using R = typename decltype(tag)::type;
          if constexpr (std::is_same<R, double>::value) {
            ratio = r->data<double>()[0];
          } else {
            ratio = static_cast<double>(static_cast<float>(r->data<R>()[0]));
          }
          return Status::OK();
        }));
      }
      if (training)
        ONYX_CHECK_ARG(ratio >= 0.0 && ratio < 1.0, "Dropout: input 1 (ratio) must be in [0, 1) in training, got ",
                       ratio);
    }
    if (training && ratio > 0.0) return Train(ctx, *X, ratio);
    ONYX_RETURN_IF_ERROR(ViewOrCopy(ctx, 0, *X, X->dims()));
    if (ctx.OutputCount() < 2) return Status::OK();
    if (opset_ >= 10) {
      Tensor* mask = ctx.Output(1, X->dims(), ElemType::kBool);
      if (mask != nullptr) std::fill(mask->data<bool>(), mask->data<bool>() + mask->size(), true);
      return Status::OK();
    }
    // Before opset 10 the mask has the input's type.
    return DispatchNumericOrHalf(X->type(), "Dropout", [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      using C = typename CalcType<T>::type;
      Tensor* mask = ctx.Output(1, X->dims(), X->type());
      if (mask != nullptr) std::fill(mask->data<T>(), mask->data<T>() + mask->size(), static_cast<T>(C(1)));
      return Status::OK();
    });
  }

 private:
  Status Train(KernelContext& ctx, const Tensor& X, double ratio) const {
    const int64_t n = X.size();
    Tensor* Y = ctx.Output(0, X.dims(), X.type());
    Tensor* M = ctx.OutputCount() > 1 ? ctx.Output(1, X.dims(), ElemType::kBool) : nullptr;
    if (n == 0) return Status::OK();
    const uint64_t base = stream_->Reserve(static_cast<uint64_t>(n));
    const double scale = 1.0 / (1.0 - ratio);
    return DispatchOver(FloatOrHalfTypeSet{}, X.type(), "Dropout", [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      const T* x = X.data<T>();
      T* y = Y ? Y->data<T>() : nullptr;
      bool* m = M ? M->data<bool>() : nullptr;
      // Word j of the reserved range decides element j, whatever the chunking.
      ThreadPool::For(ctx.threads(), (n + 1) / 2, 1 << 14, [&](int64_t b, int64_t e) {
        uint64_t w[2];
        for (int64_t k = b; k < e; ++k) {
          stream_->Block(base + static_cast<uint64_t>(k), w);
          for (int64_t h = 0; h < 2 && 2 * k + h < n; ++h) {
            const int64_t j = 2 * k + h;
            const bool keep = UnitDouble(w[h]) >= ratio;
            if (m) m[j] = keep;
            if (y == nullptr) continue;
            if constexpr (std::is_same<T, double>::value) {
              y[j] = keep ? x[j] * scale : 0.0;
            } else {  // float and the 16-bit floats, scaled in float
              y[j] = keep ? T(static_cast<float>(x[j]) * static_cast<float>(scale)) : T(0.0f);
            }
          }
        }
      });
      return Status::OK();
    });
  }

  int opset_ = 0;
  std::unique_ptr<RandomStream> stream_;
};

}  // namespace

ONYX_REGISTER_KERNEL(ReshapeKernel, "", "Reshape", 1, kMaxVersion, AnyType());
ONYX_REGISTER_KERNEL(FlattenKernel, "", "Flatten", 1, kMaxVersion, AnyType());
ONYX_REGISTER_KERNEL(SqueezeKernel, "", "Squeeze", 1, kMaxVersion, AnyType(), /*unsqueeze=*/false);
ONYX_REGISTER_KERNEL(SqueezeKernel, "", "Unsqueeze", 1, kMaxVersion, AnyType(), /*unsqueeze=*/true);
ONYX_REGISTER_KERNEL(IdentityKernel, "", "Identity", 1, kMaxVersion, AnyType());
ONYX_REGISTER_KERNEL(DropoutKernel, "", "Dropout", 1, kMaxVersion, AnyType());

}  // namespace onyx

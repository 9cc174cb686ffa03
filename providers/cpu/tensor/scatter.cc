// ScatterElements (opset 11+; reductions add from 16, mul/max/min from 18),
// Scatter (opset 9-10, the same without reductions) and ScatterND (opset 11+,
// the same reductions). The output starts as a copy of data; updates are
// applied in index order, so with reduction "none" the last duplicate wins.
#include <algorithm>
#include <string>
#include <type_traits>
#include <vector>

#include "providers/cpu/common/broadcast.h"
#include "providers/cpu/common/indexing.h"
#include "providers/kernel.h"

namespace onyx {

namespace {

enum class Reduction { kNone, kAdd, kMul, kMax, kMin };

Status ParseReduction(const KernelInfo& info, const char* op, Reduction* out) {
  const std::string r = info.AttrString("reduction", "none");
  const int v = info.opset();
  if (r == "none") {
    *out = Reduction::kNone;
  } else if (r == "add" && v >= 16) {
    *out = Reduction::kAdd;
  } else if (r == "mul" && v >= 16) {
    *out = Reduction::kMul;
  } else if (r == "max" && v >= 18) {
    *out = Reduction::kMax;
  } else if (r == "min" && v >= 18) {
    *out = Reduction::kMin;
  } else {
    return MakeError(ErrorCode::kInvalidArgument, op, ": attribute reduction '", r, "' is not supported at opset ", v);
  }
  return Status::OK();
}

// The types reductions compute on; "none" only moves elements.
using ScatterReduceTypeSet = JoinTypeSets<NumericOrHalfTypeSet, TypeSet<bool>>::type;

template <typename T>
struct Reducer {
  using C = typename CalcType<T>::type;
  Reduction r;
  void operator()(T& dst, const T& src) const {
    const C a = static_cast<C>(dst), b = static_cast<C>(src);
    switch (r) {
      case Reduction::kNone: dst = src; break;
      case Reduction::kAdd: dst = static_cast<T>(static_cast<C>(a + b)); break;
      case Reduction::kMul: dst = static_cast<T>(static_cast<C>(a * b)); break;
      case Reduction::kMax: dst = static_cast<T>(std::max(a, b)); break;
      case Reduction::kMin: dst = static_cast<T>(std::min(a, b)); break;
    }
  }
};
template <>
struct Reducer<bool> {
  Reduction r;
  void operator()(bool& dst, const bool& src) const {
    switch (r) {
      case Reduction::kNone: dst = src; break;
      case Reduction::kAdd: case Reduction::kMax: dst = dst || src; break;
      case Reduction::kMul: case Reduction::kMin: dst = dst && src; break;
    }
  }
};

// Copies data to the output, then calls apply(y, u) with the element type:
// storage types for "none", arithmetic ones otherwise.
template <typename F>
Status ScatterDispatch(Reduction red, const Tensor& X, Tensor* Y, ThreadPool* threads, const char* op, F&& apply) {
  auto run = [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    const T* x = X.data<T>();
    T* y = Y->data<T>();
    ThreadPool::For(threads, X.size(), 1 << 16, [&](int64_t b, int64_t e) { std::copy(x + b, x + e, y + b); });
    apply(tag);
    return Status::OK();
  };
  if (red == Reduction::kNone) return DispatchByStorage(X.type(), op, run);
  return DispatchOver(ScatterReduceTypeSet{}, X.type(), op, run);
}

class ScatterElementsKernel final : public OpKernel {
 public:
  explicit ScatterElementsKernel(const char* op) : op_(op) {}
  Status Init(const KernelInfo& info) {
    axis_ = info.AttrInt("axis", 0);
    return ParseReduction(info, op_, &red_);
  }

  Status Compute(KernelContext& ctx) const override {
    const Tensor* X = nullptr;
    const Tensor* Ind = nullptr;
    const Tensor* U = nullptr;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &X));
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(1, &Ind));
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(2, &U));
    const int64_t rank = static_cast<int64_t>(X->rank());
    ONYX_CHECK_ARG(rank >= 1, op_, ": input 0 (data) must have rank >= 1, got a scalar");
    ONYX_CHECK_ARG(static_cast<int64_t>(Ind->rank()) == rank, op_, ": input 1 (indices) shape ",
                   ShapeToString(Ind->dims()), " must have the rank of input 0 (data) shape ", ShapeToString(X->dims()));
    ONYX_CHECK_ARG(U->dims() == Ind->dims(), op_, ": input 2 (updates) shape ", ShapeToString(U->dims()),
                   " differs from input 1 (indices) shape ", ShapeToString(Ind->dims()));
    ONYX_CHECK_ARG(U->type() == X->type(), op_, ": input 2 (updates) has type ", ElemTypeName(U->type()),
                   " but input 0 (data) has type ", ElemTypeName(X->type()));
    int64_t axis = 0;
    ONYX_RETURN_IF_ERROR(NormalizeAxis(axis_, rank, op_, "attribute axis", &axis));
    ONYX_RETURN_IF_ERROR(CheckIndicesWithinData(Ind->dims(), X->dims(), axis, op_));
    std::vector<int64_t> idx;
    ONYX_RETURN_IF_ERROR(ReadIndexTensor(*Ind, op_, "input 1 (indices)", &idx));
    ONYX_RETURN_IF_ERROR(NormalizeIndexValues(&idx, X->dims(), axis, op_));
    Tensor* Y = ctx.Output(0, X->dims(), X->type());
    if (Y == nullptr || Y->size() == 0) return Status::OK();
    const Dims xs = RowMajorStrides(X->dims());
    const Dims& id = Ind->dims();
    const int64_t n = Ind->size();
    const Reduction red = red_;
    return ScatterDispatch(red, *X, Y, ctx.threads(), op_, [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* u = U->data<T>();
      T* y = Y->data<T>();
      std::vector<int64_t> c(static_cast<size_t>(rank), 0);
      for (int64_t i = 0; i < n; ++i) {
        int64_t off = 0;
        for (int64_t d = 0; d < rank; ++d) off += (d == axis ? idx[i] : c[d]) * xs[d];
        if constexpr (std::is_same_v<T, std::string> || std::is_same_v<T, Bytes16>) {
          y[off] = u[i];
        } else {
          Reducer<T>{red}(y[off], u[i]);
        }
        for (int64_t d = rank - 1; d >= 0; --d) {
          if (++c[d] < id[d]) break;
          c[d] = 0;
        }
      }
    });
  }

 private:
  const char* op_;
  int64_t axis_ = 0;
  Reduction red_ = Reduction::kNone;
};

class ScatterNDKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) { return ParseReduction(info, "ScatterND", &red_); }

  Status Compute(KernelContext& ctx) const override {
    const Tensor* X = nullptr;
    const Tensor* Ind = nullptr;
    const Tensor* U = nullptr;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &X));
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(1, &Ind));
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(2, &U));
    const int64_t r = static_cast<int64_t>(X->rank());
    const int64_t q = static_cast<int64_t>(Ind->rank());
    ONYX_CHECK_ARG(r >= 1, "ScatterND: input 0 (data) must have rank >= 1, got a scalar");
    ONYX_CHECK_ARG(q >= 1, "ScatterND: input 1 (indices) must have rank >= 1, got a scalar");
    const int64_t k = Ind->dims()[q - 1];
    ONYX_CHECK_ARG(k >= 1 && k <= r, "ScatterND: last dim of input 1 (indices) shape ", ShapeToString(Ind->dims()),
                   " must be in [1, ", r, "] for input 0 (data) shape ", ShapeToString(X->dims()));
    Dims want(Ind->dims().begin(), Ind->dims().end() - 1);
    want.insert(want.end(), X->dims().begin() + k, X->dims().end());
    ONYX_CHECK_ARG(U->dims() == want, "ScatterND: input 2 (updates) shape ", ShapeToString(U->dims()),
                   " must be ", ShapeToString(want), " for input 0 (data) shape ", ShapeToString(X->dims()),
                   " and input 1 (indices) shape ", ShapeToString(Ind->dims()));
    ONYX_CHECK_ARG(U->type() == X->type(), "ScatterND: input 2 (updates) has type ", ElemTypeName(U->type()),
                   " but input 0 (data) has type ", ElemTypeName(X->type()));
    std::vector<int64_t> idx;
    ONYX_RETURN_IF_ERROR(ReadIndexTensor(*Ind, "ScatterND", "input 1 (indices)", &idx));
    const Dims xs = RowMajorStrides(X->dims());
    const int64_t tuples = k == 0 ? 0 : static_cast<int64_t>(idx.size()) / k;
    const int64_t slice = DimProduct(X->dims(), k, r);
    std::vector<int64_t> offs(static_cast<size_t>(tuples));
    for (int64_t t = 0; t < tuples; ++t) {
      int64_t off = 0;
      for (int64_t j = 0; j < k; ++j) {
        int64_t v = idx[t * k + j];
        const int64_t dim = X->dims()[j];
        ONYX_CHECK_ARG(v >= -dim && v < dim, "ScatterND: input 1 (indices) value ", v, " is out of range [", -dim,
                       ", ", dim, ") for dim ", j, " of input 0 (data) shape ", ShapeToString(X->dims()));
        if (v < 0) v += dim;
        off += v * xs[j];
      }
      offs[t] = off;
    }
    Tensor* Y = ctx.Output(0, X->dims(), X->type());
    if (Y == nullptr || Y->size() == 0) return Status::OK();
    const Reduction red = red_;
    return ScatterDispatch(red, *X, Y, ctx.threads(), "ScatterND", [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* u = U->data<T>();
      T* y = Y->data<T>();
      for (int64_t t = 0; t < tuples; ++t) {
        T* dst = y + offs[t];
        const T* src = u + t * slice;
        if constexpr (std::is_same_v<T, std::string> || std::is_same_v<T, Bytes16>) {
          std::copy(src, src + slice, dst);
        } else {
          const Reducer<T> f{red};
          for (int64_t j = 0; j < slice; ++j) f(dst[j], src[j]);
        }
      }
    });
  }

 private:
  Reduction red_ = Reduction::kNone;
};

}  // namespace

ONYX_REGISTER_KERNEL(ScatterElementsKernel, "", "ScatterElements", 11, kMaxVersion, MovableTypes(), "ScatterElements");
ONYX_REGISTER_KERNEL(ScatterElementsKernel, "", "Scatter", 9, 10, MovableTypes(), "Scatter");
ONYX_REGISTER_KERNEL(ScatterNDKernel, "", "ScatterND", 11, kMaxVersion, MovableTypes());

}  // namespace onyx

// GatherElements (opset 11+) and GatherND (opset 11+, batch_dims from 12).
#include <algorithm>
#include <string>
#include <vector>

#include "providers/cpu/common/indexing.h"
#include "providers/kernel.h"

namespace onyx {

namespace {

class GatherElementsKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    axis_ = info.AttrInt("axis", 0);
    return Status::OK();
  }

  Status Compute(KernelContext& ctx) const override {
    const Tensor* X = nullptr;
    const Tensor* Ind = nullptr;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &X));
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(1, &Ind));
    const int64_t rank = static_cast<int64_t>(X->rank());
    ONYX_CHECK_ARG(rank >= 1, "GatherElements: input 0 (data) must have rank >= 1, got a scalar");
    ONYX_CHECK_ARG(static_cast<int64_t>(Ind->rank()) == rank, "GatherElements: input 1 (indices) has shape ",
                   ShapeToString(Ind->dims()), " whose rank differs from input 0 (data) shape ",
                   ShapeToString(X->dims()));
    int64_t axis = 0;
    ONYX_RETURN_IF_ERROR(NormalizeAxis(axis_, rank, "GatherElements", "attribute axis", &axis));
    ONYX_RETURN_IF_ERROR(CheckIndicesWithinData(Ind->dims(), X->dims(), axis, "GatherElements"));
    // Check every index before writing anything.
    std::vector<int64_t> idx;
    ONYX_RETURN_IF_ERROR(ReadIndexTensor(*Ind, "GatherElements", "input 1 (indices)", &idx));
    ONYX_RETURN_IF_ERROR(NormalizeIndexValues(&idx, X->dims(), axis, "GatherElements"));
    Tensor* Y = ctx.Output(0, Ind->dims(), X->type());
    if (Y == nullptr || Y->size() == 0) return Status::OK();
    const Dims& od = Ind->dims();
    const Dims xs = RowMajorStrides(X->dims());
    const int64_t inner = od[rank - 1];
    const int64_t rows = Y->size() / inner;
    return DispatchByStorage(X->type(), "GatherElements", [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      const T* x = X->data<T>();
      T* y = Y->data<T>();
      ThreadPool::For(ctx.threads(), rows, std::max<int64_t>(1, (1 << 14) / inner), [&](int64_t b, int64_t e) {
        for (int64_t r = b; r < e; ++r) {
          // Offset of the row in data, axis dim left out (it comes from the index).
          int64_t rem = r, base = 0;
          for (int64_t d = rank - 2; d >= 0; --d) {
            const int64_t c = rem % od[d];
            rem /= od[d];
            if (d != axis) base += c * xs[d];
          }
          const int64_t* ip = idx.data() + r * inner;
          T* yp = y + r * inner;
          if (axis == rank - 1) {
            for (int64_t j = 0; j < inner; ++j) yp[j] = x[base + ip[j]];
          } else {
            const int64_t sa = xs[axis], sl = xs[rank - 1];
            for (int64_t j = 0; j < inner; ++j) yp[j] = x[base + j * sl + ip[j] * sa];
          }
        }
      });
      return Status::OK();
    });
  }

 private:
  int64_t axis_ = 0;
};

class GatherNDKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    batch_dims_ = info.AttrInt("batch_dims", 0);
    return Status::OK();
  }

  Status Compute(KernelContext& ctx) const override {
    const Tensor* X = nullptr;
    const Tensor* Ind = nullptr;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &X));
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(1, &Ind));
    const int64_t r = static_cast<int64_t>(X->rank());
    const int64_t q = static_cast<int64_t>(Ind->rank());
    const int64_t b = batch_dims_;
    ONYX_CHECK_ARG(r >= 1, "GatherND: input 0 (data) must have rank >= 1, got a scalar");
    ONYX_CHECK_ARG(q >= 1, "GatherND: input 1 (indices) must have rank >= 1, got a scalar");
    ONYX_CHECK_ARG(b >= 0 && b < std::min(r, q), "GatherND: attribute batch_dims ", b,
                   " must be in [0, min(rank(data), rank(indices))) = [0, ", std::min(r, q), ")");
    for (int64_t d = 0; d < b; ++d)
      ONYX_CHECK_ARG(X->dims()[d] == Ind->dims()[d], "GatherND: batch dim ", d, " of input 1 (indices) shape ",
                     ShapeToString(Ind->dims()), " differs from input 0 (data) shape ", ShapeToString(X->dims()));
    const int64_t m = Ind->dims()[q - 1];
    ONYX_CHECK_ARG(m >= 1 && m <= r - b, "GatherND: last dim of input 1 (indices) shape ", ShapeToString(Ind->dims()),
                   " must be in [1, ", r - b, "] for input 0 (data) shape ", ShapeToString(X->dims()),
                   " and batch_dims ", b);
    std::vector<int64_t> idx;
    ONYX_RETURN_IF_ERROR(ReadIndexTensor(*Ind, "GatherND", "input 1 (indices)", &idx));
    const Dims xs = RowMajorStrides(X->dims());
    const int64_t batches = DimProduct(X->dims(), 0, b);
    const int64_t tuples = static_cast<int64_t>(idx.size()) / m;  // over all batches
    const int64_t per_batch = batches == 0 ? 0 : tuples / batches;
    const int64_t slice = DimProduct(X->dims(), b + m, r);
    const int64_t batch_stride = b == 0 ? 0 : xs[b - 1];
    // Element offset in data of each index tuple, checked before any write.
    std::vector<int64_t> offs(static_cast<size_t>(tuples));
    for (int64_t t = 0; t < tuples; ++t) {
      int64_t off = per_batch == 0 ? 0 : (t / per_batch) * batch_stride;
      for (int64_t k = 0; k < m; ++k) {
        int64_t v = idx[t * m + k];
        const int64_t dim = X->dims()[b + k];
        ONYX_CHECK_ARG(v >= -dim && v < dim, "GatherND: input 1 (indices) value ", v, " is out of range [", -dim,
                       ", ", dim, ") for dim ", b + k, " of input 0 (data) shape ", ShapeToString(X->dims()));
        if (v < 0) v += dim;
        off += v * xs[b + k];
      }
      offs[t] = off;
    }
    Dims out(Ind->dims().begin(), Ind->dims().end() - 1);
    out.insert(out.end(), X->dims().begin() + b + m, X->dims().end());
    Tensor* Y = ctx.Output(0, out, X->type());
    if (Y == nullptr || Y->size() == 0) return Status::OK();
    return DispatchByStorage(X->type(), "GatherND", [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      const T* x = X->data<T>();
      T* y = Y->data<T>();
      ThreadPool::For(ctx.threads(), tuples, std::max<int64_t>(1, (1 << 14) / std::max<int64_t>(1, slice)),
                      [&](int64_t s, int64_t e) {
                        for (int64_t t = s; t < e; ++t) std::copy(x + offs[t], x + offs[t] + slice, y + t * slice);
                      });
      return Status::OK();
    });
  }

 private:
  int64_t batch_dims_ = 0;
};

}  // namespace

ONYX_REGISTER_KERNEL(GatherElementsKernel, "", "GatherElements", 11, kMaxVersion, MovableTypes());
ONYX_REGISTER_KERNEL(GatherNDKernel, "", "GatherND", 11, kMaxVersion, MovableTypes());

}  // namespace onyx

// TopK: k as attribute (opset 1-9) or input (10+); largest/sorted from 11.
// Ties keep the lower index first; NaN ranks above every number. The output
// is always sorted (sorted=0 leaves the order free).
#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <type_traits>
#include <vector>

#include "providers/cpu/common/broadcast.h"
#include "providers/cpu/common/indexing.h"
#include "providers/kernel.h"

namespace onyx {

namespace {

template <typename C>
bool LessNanLast(C a, C b) {
  if constexpr (std::is_floating_point_v<C>) {
    if (std::isnan(a)) return false;
    if (std::isnan(b)) return true;
  }
  return a < b;
}

class TopKKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    opset_ = info.opset();
    axis_ = info.AttrInt("axis", -1);
    k_attr_ = info.AttrInt("k", -1);
    largest_ = info.AttrInt("largest", 1) != 0;
    return Status::OK();
  }

  Status Compute(KernelContext& ctx) const override {
    const Tensor* X = nullptr;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &X));
    const int64_t rank = static_cast<int64_t>(X->rank());
    ONYX_CHECK_ARG(rank >= 1, "TopK: input 0 (X) must have rank >= 1, got a scalar");
    int64_t axis = 0;
    ONYX_RETURN_IF_ERROR(NormalizeAxis(axis_, rank, "TopK", "attribute axis", &axis));
    int64_t k = k_attr_;
    if (opset_ >= 10) {
      const Tensor* K = nullptr;
      ONYX_RETURN_IF_ERROR(ctx.RequiredInput(1, &K));
      ONYX_RETURN_IF_ERROR(ReadIndexScalar(*K, "TopK", "input 1 (K)", &k));
    }
    const int64_t dim = X->dims()[axis];
    ONYX_CHECK_ARG(k >= 0 && k <= dim, "TopK: k ", k, " is out of range [0, ", dim, "] for axis ", axis,
                   " of input 0 (X) shape ", ShapeToString(X->dims()));
    Dims out = X->dims();
    out[axis] = k;
    Tensor* V = ctx.Output(0, out, X->type());
    Tensor* I = ctx.Output(1, out, ElemType::kInt64);
    if (ShapeSize(out) == 0) return Status::OK();
    const int64_t outer = DimProduct(X->dims(), 0, axis);
    const int64_t inner = DimProduct(X->dims(), axis + 1, rank);
    const bool largest = largest_;
    return DispatchNumericOrHalf(X->type(), "TopK", [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      using C = typename CalcType<T>::type;
      const T* x = X->data<T>();
      T* v = V ? V->data<T>() : nullptr;
      int64_t* ind = I ? I->data<int64_t>() : nullptr;
      ThreadPool::For(ctx.threads(), outer * inner, std::max<int64_t>(1, (1 << 12) / std::max<int64_t>(1, dim)),
                      [&](int64_t b, int64_t e) {
                        std::vector<int64_t> order(static_cast<size_t>(dim));
                        std::vector<C> vals(static_cast<size_t>(dim));
                        for (int64_t lane = b; lane < e; ++lane) {
                          const int64_t o = lane / inner, j = lane % inner;
                          const T* xp = x + o * dim * inner + j;
                          for (int64_t a = 0; a < dim; ++a) vals[a] = static_cast<C>(xp[a * inner]);
                          std::iota(order.begin(), order.end(), 0);
                          auto before = [&](int64_t p, int64_t q) {
                            const C a = vals[p], c = vals[q];
                            const bool lt = largest ? LessNanLast(c, a) : LessNanLast(a, c);
                            const bool gt = largest ? LessNanLast(a, c) : LessNanLast(c, a);
                            return lt || (!gt && p < q);
                          };
                          std::partial_sort(order.begin(), order.begin() + k, order.end(), before);
                          for (int64_t a = 0; a < k; ++a) {
                            const int64_t dst = (o * k + a) * inner + j;
                            if (v) v[dst] = xp[order[a] * inner];
                            if (ind) ind[dst] = order[a];
                          }
                        }
                      });
      return Status::OK();
    });
  }

 private:
  int opset_ = 0;
  int64_t axis_ = -1;
  int64_t k_attr_ = -1;
  bool largest_ = true;
};

}  // namespace

ONYX_REGISTER_KERNEL(TopKKernel, "", "TopK", 1, kMaxVersion, NumericOrHalfTypes());

}  // namespace onyx

// Unique (opset 11+): the distinct elements (or, with axis, the distinct
// slices along axis), sorted or in order of first occurrence, with the index
// of each first occurrence, the inverse map and the counts.
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

using UniqueTypeSet = JoinTypeSets<NumericOrHalfTypeSet, TypeSet<bool, std::string>>::type;

template <typename T>
struct Key {
  using type = typename CalcType<T>::type;
};
template <>
struct Key<std::string> {
  using type = const std::string&;
};

class UniqueKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    has_axis_ = info.Attr("axis") != nullptr;
    axis_ = info.AttrInt("axis", 0);
    sorted_ = info.AttrInt("sorted", 1) != 0;
    return Status::OK();
  }

  Status Compute(KernelContext& ctx) const override {
    const Tensor* X = nullptr;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &X));
    const int64_t rank = static_cast<int64_t>(X->rank());
    int64_t axis = 0, outer = 1, n = X->size(), inner = 1;
    if (has_axis_) {
      ONYX_CHECK_ARG(rank >= 1, "Unique: input 0 (X) must have rank >= 1 with attribute axis, got a scalar");
      ONYX_RETURN_IF_ERROR(NormalizeAxis(axis_, rank, "Unique", "attribute axis", &axis));
      outer = DimProduct(X->dims(), 0, axis);
      n = X->dims()[axis];
      inner = DimProduct(X->dims(), axis + 1, rank);
    }
    return DispatchOver(UniqueTypeSet{}, X->type(), "Unique", [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      using K = typename Key<T>::type;
      const T* x = X->data<T>();
      // Item i is the slice x[o, i, j] for all (o, j), compared in (o, j) order.
      auto at = [&](int64_t i, int64_t e) -> K {
        const int64_t o = e / inner, j = e % inner;
        return static_cast<K>(x[(o * n + i) * inner + j]);
      };
      const int64_t item = outer * inner;
      auto less = [&](K a, K b) {
        if constexpr (std::is_floating_point_v<std::decay_t<K>>) {
          if (std::isnan(a)) return false;  // NaN sorts last, like numpy
          if (std::isnan(b)) return true;
        }
        return a < b;
      };
      auto cmp = [&](int64_t p, int64_t q) -> int {
        for (int64_t e = 0; e < item; ++e) {
          K a = at(p, e), b = at(q, e);
          if (less(a, b)) return -1;
          if (less(b, a)) return 1;
        }
        return 0;
      };
      std::vector<int64_t> order(static_cast<size_t>(n));
      std::iota(order.begin(), order.end(), 0);
      std::stable_sort(order.begin(), order.end(), [&](int64_t p, int64_t q) { return cmp(p, q) < 0; });
      // Groups of equal items in sorted order; each group's first member is its
      // first occurrence (the sort is stable).
      std::vector<int64_t> first, counts, group_of(static_cast<size_t>(n));
      for (int64_t r = 0; r < n; ++r) {
        if (r == 0 || cmp(order[r - 1], order[r]) != 0) {
          first.push_back(order[r]);
          counts.push_back(0);
        }
        group_of[order[r]] = static_cast<int64_t>(first.size()) - 1;
        ++counts.back();
      }
      const int64_t u = static_cast<int64_t>(first.size());
      std::vector<int64_t> rank_of(static_cast<size_t>(u));  // group -> output position
      std::iota(rank_of.begin(), rank_of.end(), 0);
      if (!sorted_) {
        std::vector<int64_t> g(static_cast<size_t>(u));
        std::iota(g.begin(), g.end(), 0);
        std::sort(g.begin(), g.end(), [&](int64_t a, int64_t b) { return first[a] < first[b]; });
        for (int64_t p = 0; p < u; ++p) rank_of[g[p]] = p;
      }
      std::vector<int64_t> out_first(static_cast<size_t>(u)), out_counts(static_cast<size_t>(u));
      for (int64_t gi = 0; gi < u; ++gi) {
        out_first[rank_of[gi]] = first[gi];
        out_counts[rank_of[gi]] = counts[gi];
      }
      Dims yd;
      if (has_axis_) {
        yd = X->dims();
        yd[axis] = u;
      } else {
        yd = {u};
      }
      if (Tensor* Y = ctx.Output(0, yd, X->type())) {
        T* y = Y->data<T>();
        for (int64_t o = 0; o < outer; ++o)
          for (int64_t p = 0; p < u; ++p)
            std::copy(x + (o * n + out_first[p]) * inner, x + (o * n + out_first[p] + 1) * inner,
                      y + (o * u + p) * inner);
      }
      if (Tensor* I = ctx.Output(1, {u}, ElemType::kInt64)) std::copy(out_first.begin(), out_first.end(), I->data<int64_t>());
      if (Tensor* Inv = ctx.Output(2, {n}, ElemType::kInt64)) {
        int64_t* p = Inv->data<int64_t>();
        for (int64_t i = 0; i < n; ++i) p[i] = rank_of[group_of[i]];
      }
      if (Tensor* C = ctx.Output(3, {u}, ElemType::kInt64)) std::copy(out_counts.begin(), out_counts.end(), C->data<int64_t>());
      return Status::OK();
    });
  }

 private:
  bool has_axis_ = false;
  int64_t axis_ = 0;
  bool sorted_ = true;
};

}  // namespace

ONYX_REGISTER_KERNEL(UniqueKernel, "", "Unique", 11, kMaxVersion, UniqueTypeSet::ElemTypes());

}  // namespace onyx

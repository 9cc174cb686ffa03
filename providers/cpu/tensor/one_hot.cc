// OneHot (opset 9+; from 11 negative indices count from the end of depth):
// output[..., i, ...] = on_value where i == indices[...], off_value elsewhere;
// indices outside the range give an all-off row.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "providers/cpu/common/broadcast.h"
#include "providers/cpu/common/indexing.h"
#include "providers/kernel.h"

namespace onyx {

namespace {

// Matches no position, even after negative indices are wrapped.
constexpr int64_t kNoIndex = std::numeric_limits<int64_t>::min();

// Reads any real-typed tensor as int64 values. An index that is not a whole
// number becomes kNoIndex, which OneHot treats as out of range; a depth is cast
// (truncated), as the spec says, and must be finite.
Status ReadAsInt64(const Tensor& t, const char* input, bool is_depth, std::vector<int64_t>* out) {
  out->resize(static_cast<size_t>(t.size()));
  return DispatchNumericOrHalf(t.type(), "OneHot", [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    using C = typename CalcType<T>::type;
    const T* p = t.data<T>();
    for (int64_t i = 0; i < t.size(); ++i) {
      const C v = static_cast<C>(p[i]);
      if constexpr (std::is_floating_point_v<C>) {
        // A non-integral index equals no position (onnxruntime and the reference agree).
        const bool finite = std::isfinite(v) && std::fabs(v) < 9.2e18;
        ONYX_CHECK_ARG(finite || !is_depth, "OneHot: ", input, " must be finite, got ", v);
        (*out)[i] = finite && (is_depth || std::trunc(v) == v) ? static_cast<int64_t>(v) : kNoIndex;
      } else {
        ONYX_CHECK_ARG(!std::is_unsigned_v<C> || static_cast<uint64_t>(v) <= static_cast<uint64_t>(INT64_MAX),
                       "OneHot: ", input, " value is out of the int64 range");
        (*out)[i] = static_cast<int64_t>(v);
      }
    }
    return Status::OK();
  });
}

class OneHotKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    opset_ = info.opset();
    axis_ = info.AttrInt("axis", -1);
    return Status::OK();
  }

  Status Compute(KernelContext& ctx) const override {
    const Tensor* I = nullptr;
    const Tensor* D = nullptr;
    const Tensor* V = nullptr;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &I));
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(1, &D));
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(2, &V));
    ONYX_CHECK_ARG(D->size() == 1 && D->rank() <= 1, "OneHot: input 1 (depth) must be a scalar or 1-element tensor, got shape ",
                   ShapeToString(D->dims()));
    ONYX_CHECK_ARG(V->size() == 2 && V->rank() == 1, "OneHot: input 2 (values) must be [off_value, on_value] of shape [2], got shape ",
                   ShapeToString(V->dims()));
    std::vector<int64_t> depth_v, idx;
    ONYX_RETURN_IF_ERROR(ReadAsInt64(*D, "input 1 (depth)", true, &depth_v));
    const int64_t depth = depth_v[0];
    ONYX_CHECK_ARG(depth >= 1, "OneHot: input 1 (depth) must be >= 1, got ", depth);
    ONYX_RETURN_IF_ERROR(ReadAsInt64(*I, "input 0 (indices)", false, &idx));
    const int64_t rank = static_cast<int64_t>(I->rank());
    int64_t axis = 0;
    ONYX_RETURN_IF_ERROR(NormalizeAxis(axis_, rank + 1, "OneHot", "attribute axis", &axis));
    Dims out(I->dims().begin(), I->dims().begin() + axis);
    out.push_back(depth);
    out.insert(out.end(), I->dims().begin() + axis, I->dims().end());
    ONYX_CHECK_ARG(ShapeFits(out), "OneHot: input 1 (depth) ", depth, " makes the output shape ", ShapeToString(out),
                   " too large");
    const bool wrap = opset_ >= 11;
    for (auto& v : idx) {
      if (wrap && v < 0 && v >= -depth) v += depth;
      if (v < 0 || v >= depth) v = -1;
    }
    Tensor* Y = ctx.Output(0, out, V->type());
    if (Y == nullptr || Y->size() == 0) return Status::OK();
    const int64_t outer = DimProduct(I->dims(), 0, axis);
    const int64_t inner = DimProduct(I->dims(), axis, rank);
    return DispatchByStorage(V->type(), "OneHot", [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      const T off = V->data<T>()[0], on = V->data<T>()[1];
      T* y = Y->data<T>();
      ThreadPool::For(ctx.threads(), outer, std::max<int64_t>(1, (1 << 14) / std::max<int64_t>(1, depth * inner)),
                      [&](int64_t b, int64_t e) {
                        for (int64_t o = b; o < e; ++o) {
                          T* yp = y + o * depth * inner;
                          std::fill(yp, yp + depth * inner, off);
                          for (int64_t j = 0; j < inner; ++j) {
                            const int64_t v = idx[o * inner + j];
                            if (v >= 0) yp[v * inner + j] = on;
                          }
                        }
                      });
      return Status::OK();
    });
  }

 private:
  int opset_ = 0;
  int64_t axis_ = -1;
};

}  // namespace

ONYX_REGISTER_KERNEL(OneHotKernel, "", "OneHot", 9, kMaxVersion, NumericOrHalfTypes());

}  // namespace onyx

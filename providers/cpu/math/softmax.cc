#include <climits>
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include "providers/cpu/common/broadcast.h"
#include "providers/cpu/common/dispatch.h"
#include "providers/cpu/common/fast_math.h"
#include "providers/kernel.h"

namespace onyx {

namespace {

// A value computed in C, rounded to the storage type T and back. For 16-bit
// floats Softmax rounds each step (x - max, exp, the sum) to T, as ONNX's
// op-by-op semantics in T (and its reference) do; float and double pass through.
template <typename T, typename C>
inline C InT(C v) {
  if constexpr (std::is_same<T, C>::value) return v;
  else return static_cast<C>(static_cast<T>(v));
}

// Softmax over `n` values that are `stride` apart, for `inner` interleaved
// rows at once (stride == inner). Subtracting the row max keeps exp in range.
template <typename T, bool kLog>
void SoftmaxBlock(const T* x, T* y, int64_t n, int64_t inner) {
  using C = typename CalcType<T>::type;
  if constexpr (std::is_same<T, float>::value) {
    // The common case (attention scores, a classifier's last axis): SIMD max
    // and exp with vector sums, for Softmax and LogSoftmax alike.
    if (inner == 1) {
      if (kLog) fastmath::LogSoftmaxArray(x, y, n);
      else fastmath::SoftmaxArray(x, y, n);
      return;
    }
  }
  if (inner == 1) {
    C m = static_cast<C>(x[0]);
    for (int64_t i = 1; i < n; ++i) {
      C v = static_cast<C>(x[i]);
      m = v > m ? v : m;
    }
    C s = 0;
    if (kLog) {
      for (int64_t i = 0; i < n; ++i) s += fastmath::ExpOf(static_cast<C>(x[i]) - m);
      const C ls = std::log(s) + m;
      for (int64_t i = 0; i < n; ++i) y[i] = static_cast<T>(static_cast<C>(x[i]) - ls);
    } else {
      for (int64_t i = 0; i < n; ++i) {
        const C e = InT<T>(fastmath::ExpOf(InT<T>(static_cast<C>(x[i]) - m)));
        y[i] = static_cast<T>(e);
        s += e;
      }
      if constexpr (std::is_same<T, C>::value) {
        const C inv = C(1) / s;
        for (int64_t i = 0; i < n; ++i) y[i] = static_cast<T>(y[i] * inv);
      } else {
        s = InT<T>(s);
        for (int64_t i = 0; i < n; ++i) y[i] = static_cast<T>(static_cast<C>(y[i]) / s);
      }
    }
    return;
  }
  // Softmax along a non-last axis: walk the axis, vectorized across the rows.
  std::vector<C> m(static_cast<size_t>(inner), -std::numeric_limits<C>::infinity());
  std::vector<C> s(static_cast<size_t>(inner), C(0));
  for (int64_t i = 0; i < n; ++i) {
    const T* r = x + i * inner;
    for (int64_t j = 0; j < inner; ++j) {
      C v = static_cast<C>(r[j]);
      m[j] = v > m[j] ? v : m[j];
    }
  }
  for (int64_t i = 0; i < n; ++i) {
    const T* r = x + i * inner;
    for (int64_t j = 0; j < inner; ++j) s[j] += InT<T>(fastmath::ExpOf(InT<T>(static_cast<C>(r[j]) - m[j])));
  }
  if (!kLog)
    for (int64_t j = 0; j < inner; ++j) s[j] = InT<T>(s[j]);
  for (int64_t i = 0; i < n; ++i) {
    const T* r = x + i * inner;
    T* o = y + i * inner;
    for (int64_t j = 0; j < inner; ++j) {
      C v = static_cast<C>(r[j]) - m[j];
      o[j] = static_cast<T>(kLog ? v - std::log(s[j]) : InT<T>(fastmath::ExpOf(InT<T>(v))) / s[j]);
    }
  }
}

template <bool kLog>
class SoftmaxKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    legacy_ = info.opset() < 13;
    axis_ = info.AttrInt("axis", legacy_ ? 1 : -1);
    return Status::OK();
  }

  Status Compute(KernelContext& ctx) const override {
    const char* name = kLog ? "LogSoftmax" : "Softmax";
    const Tensor* X = nullptr;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &X));
    const int64_t rank = static_cast<int64_t>(X->rank());
    int64_t axis = axis_ < 0 ? axis_ + rank : axis_;
    // A scalar has one "row" of one element.
    if (rank == 0 && (axis_ == 0 || axis_ == -1)) axis = 0;
    ONYX_CHECK_ARG(rank == 0 || (axis >= 0 && axis < rank), name, ": attribute axis ", axis_,
                   " is out of range for input 0 of shape ", ShapeToString(X->dims()));
    const Dims& d = X->dims();
    int64_t outer = 1, n = 1, inner = 1;
    for (int64_t k = 0; k < rank; ++k) {
      if (k < axis) outer *= d[k];
      else if (k == axis || legacy_) n *= d[k];
      else inner *= d[k];
    }
    return DispatchFloatOrHalf(X->type(), name, [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      Tensor* Y = ctx.Output(0, X->dims(), X->type());
      if (Y == nullptr || X->size() == 0) return Status::OK();
      const T* x = X->data<T>();
      T* y = Y->data<T>();
      const int64_t block = n * inner;
      const int64_t grain = std::max<int64_t>(1, (1 << 14) / std::max<int64_t>(1, block));
      ThreadPool::For(ctx.threads(), outer, grain, [&](int64_t b, int64_t e) {
        for (int64_t o = b; o < e; ++o) SoftmaxBlock<T, kLog>(x + o * block, y + o * block, n, inner);
      });
      return Status::OK();
    });
  }

 private:
  template <typename F>
  static Status DispatchFloatOrHalf(ElemType t, const char* what, F&& fn) {
    return DispatchOver(FloatOrHalfTypeSet{}, t, what, fn);
  }

  bool legacy_ = false;
  int64_t axis_ = -1;
};

using LogSoftmaxKernel = SoftmaxKernel<true>;

}  // namespace

// Opset 13 changed what `axis` means (Init reads the opset), not the types.
ONYX_REGISTER_KERNEL(SoftmaxKernel<false>, "", "Softmax", 1, 12, FloatOrHalfTypes());
ONYX_REGISTER_KERNEL(SoftmaxKernel<false>, "", "Softmax", 13, kMaxVersion, FloatOrHalfTypes());
ONYX_REGISTER_KERNEL(LogSoftmaxKernel, "", "LogSoftmax", 1, 12, FloatOrHalfTypes());
ONYX_REGISTER_KERNEL(LogSoftmaxKernel, "", "LogSoftmax", 13, kMaxVersion, FloatOrHalfTypes());

}  // namespace onyx

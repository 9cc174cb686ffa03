#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "providers/cpu/common/broadcast.h"
#include "providers/cpu/common/dispatch.h"
#include "providers/cpu/common/fast_math.h"
#include "providers/cpu/common/float_to_int.h"
#include "providers/kernel.h"

namespace onyx {

namespace {

enum class ROp { kSum, kMean, kMax, kMin, kProd, kSumSquare, kL1, kL2, kLogSumExp };

template <typename C>
struct Reducer {
  ROp op;
  C Init() const {
    switch (op) {
      case ROp::kProd: return C(1);
      case ROp::kMax:
        return std::numeric_limits<C>::has_infinity ? -std::numeric_limits<C>::infinity()
                                                    : std::numeric_limits<C>::lowest();
      case ROp::kMin:
        return std::numeric_limits<C>::has_infinity ? std::numeric_limits<C>::infinity()
                                                    : std::numeric_limits<C>::max();
      default: return C(0);
    }
  }
};

// Reduces `r` rows of `k2` contiguous values (row stride k2) into acc[k2].
// With k2 == 1 it reduces one contiguous row; the partial sums let the
// compiler keep several lanes in flight for the common Sum/Mean case.
template <typename T, typename C, typename Pre, typename Comb>
void ReduceBlock(const T* x, int64_t r, int64_t k2, C* acc, C init, const C* shift, const Pre& pre,
                 const Comb& comb) {
  if (k2 == 1) {
    const C sh = shift ? shift[0] : C(0);
    constexpr int kLanes = 8;
    C part[kLanes];
    for (int l = 0; l < kLanes; ++l) part[l] = init;
    int64_t i = 0;
    for (; i + kLanes <= r; i += kLanes)
      for (int l = 0; l < kLanes; ++l) part[l] = comb(part[l], pre(static_cast<C>(x[i + l]), sh));
    C a = init;
    for (int l = 0; l < kLanes; ++l) a = comb(a, part[l]);
    for (; i < r; ++i) a = comb(a, pre(static_cast<C>(x[i]), sh));
    acc[0] = a;
    return;
  }
  for (int64_t j = 0; j < k2; ++j) acc[j] = init;
  for (int64_t i = 0; i < r; ++i) {
    const T* row = x + i * k2;
    if (shift) {
      for (int64_t j = 0; j < k2; ++j) acc[j] = comb(acc[j], pre(static_cast<C>(row[j]), shift[j]));
    } else {
      for (int64_t j = 0; j < k2; ++j) acc[j] = comb(acc[j], pre(static_cast<C>(row[j]), C(0)));
    }
  }
}

// x viewed as [k, r, k2], reduced over r into out[k, k2].
template <typename T, typename C>
void ReduceCore(ROp op, const T* x, int64_t k, int64_t r, int64_t k2, C* out, const C* shift, ThreadPool* pool) {
  const C init = Reducer<C>{op}.Init();
  auto add = [](C a, C b) { return static_cast<C>(a + b); };
  auto id = [](C v, C) { return v; };
  auto run = [&](const auto& pre, const auto& comb) {
    const int64_t grain = std::max<int64_t>(1, (1 << 15) / std::max<int64_t>(1, r * k2));
    ThreadPool::For(pool, k, grain, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i)
        ReduceBlock(x + i * r * k2, r, k2, out + i * k2, init, shift ? shift + i * k2 : nullptr, pre, comb);
    });
  };
  switch (op) {
    case ROp::kSum:
    case ROp::kMean:
      if constexpr (std::is_same<T, float>::value && std::is_same<C, float>::value) {
        if (k2 == 1) {
          // Rows of contiguous floats: fast_math's SIMD sum, whose order of
          // additions LayerNormalization's kernel shares (a fused LayerNorm
          // gives the bits of the ReduceMean graph it replaced).
          const int64_t grain = std::max<int64_t>(1, (1 << 15) / std::max<int64_t>(1, r));
          ThreadPool::For(pool, k, grain, [&](int64_t b, int64_t e) {
            for (int64_t i = b; i < e; ++i) out[i] = fastmath::SumArray(x + i * r, r);
          });
          break;
        }
      }
      run(id, add);
      break;
    case ROp::kSumSquare:
    case ROp::kL2: run([](C v, C) { return static_cast<C>(v * v); }, add); break;
    case ROp::kL1: run([](C v, C) { return v < C(0) ? static_cast<C>(-v) : v; }, add); break;
    case ROp::kProd: run(id, [](C a, C b) { return static_cast<C>(a * b); }); break;
    case ROp::kMax: run(id, [](C a, C b) { return a < b ? b : a; }); break;
    case ROp::kMin: run(id, [](C a, C b) { return b < a ? b : a; }); break;
    case ROp::kLogSumExp:
      if constexpr (std::is_floating_point<C>::value) {
        run([](C v, C m) { return std::exp(v - m); }, add);
      } else {
        run([](C v, C m) { return FromFloat<C>(std::exp(static_cast<double>(v - m))); }, add);
      }
      break;
  }
}

const char* OpName(ROp op) {
  switch (op) {
    case ROp::kSum: return "ReduceSum";
    case ROp::kMean: return "ReduceMean";
    case ROp::kMax: return "ReduceMax";
    case ROp::kMin: return "ReduceMin";
    case ROp::kProd: return "ReduceProd";
    case ROp::kSumSquare: return "ReduceSumSquare";
    case ROp::kL1: return "ReduceL1";
    case ROp::kL2: return "ReduceL2";
    case ROp::kLogSumExp: return "ReduceLogSumExp";
  }
  return "Reduce";
}

class ReduceKernel final : public OpKernel {
 public:
  ReduceKernel(ROp op, int input_axes_since) : op_(op), input_axes_since_(input_axes_since) {}

  Status Init(const KernelInfo& info) {
    keepdims_ = info.AttrInt("keepdims", 1) != 0;
    axes_from_input_ = info.opset() >= input_axes_since_;
    if (!axes_from_input_) axes_ = info.AttrInts("axes");
    noop_empty_ = info.AttrInt("noop_with_empty_axes", 0) != 0;
    return Status::OK();
  }

  Status Compute(KernelContext& ctx) const override {
    const char* name = OpName(op_);
    const Tensor* X = nullptr;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &X));
    std::vector<int64_t> axes = axes_;
    if (axes_from_input_) {
      const Tensor* A = ctx.Input(1);
      if (A != nullptr) {
        ONYX_CHECK_ARG(A->type() == ElemType::kInt64 && A->rank() <= 1, name, ": input 1 (axes) must be a 1-D int64 ",
                       "tensor, got ", ElemTypeName(A->type()), " of shape ", ShapeToString(A->dims()));
        axes.assign(A->data<int64_t>(), A->data<int64_t>() + A->size());
      }
    }
    const Dims& in = X->dims();
    const int64_t rank = static_cast<int64_t>(in.size());
    std::vector<bool> red(in.size(), axes.empty());
    if (axes.empty() && noop_empty_) red.assign(in.size(), false);
    for (int64_t a : axes) {
      ONYX_CHECK_ARG(a >= -rank && a < rank, name, ": axis ", a, " is out of range for input 0 of shape ",
                     ShapeToString(in));
      red[a < 0 ? a + rank : a] = true;
    }
    Dims out_dims;
    for (int64_t k = 0; k < rank; ++k) {
      if (!red[k]) out_dims.push_back(in[k]);
      else if (keepdims_) out_dims.push_back(1);
    }
    // Groups of adjacent kept/reduced dims, size-1 dims dropped.
    std::vector<int64_t> gsize;
    std::vector<bool> gred;
    for (int64_t k = 0; k < rank; ++k) {
      if (in[k] == 1) continue;
      if (!gsize.empty() && gred.back() == red[k]) {
        gsize.back() *= in[k];
      } else {
        gsize.push_back(in[k]);
        gred.push_back(red[k]);
      }
    }
    int red_groups = 0;
    for (bool b : gred) red_groups += b ? 1 : 0;
    int64_t reduce_count = 1;
    for (int64_t k = 0; k < rank; ++k)
      if (red[k]) reduce_count *= in[k];

    // bool (ReduceMax/ReduceMin, opset 20+) reduces its bytes as uint8: max
    // is any, min is all; the empty set gives false and true.
    const bool is_bool = X->type() == ElemType::kBool;
    ONYX_CHECK(!is_bool || op_ == ROp::kMax || op_ == ROp::kMin, ErrorCode::kNotImplemented, name,
               ": element type bool is not supported");
    auto body = [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      using C = typename CalcType<T>::type;
      Tensor* Y = ctx.Output(0, out_dims, X->type());
      if (Y == nullptr || Y->size() == 0) return Status::OK();
      const T* x = X->data<T>();
      std::vector<T> permuted;
      int64_t k = 1, r = 1, k2 = 1;
      if (red_groups <= 1) {
        bool after = false;
        for (size_t g = 0; g < gsize.size(); ++g) {
          if (gred[g]) {
            r = gsize[g];
            after = true;
          } else {
            (after ? k2 : k) *= gsize[g];
          }
        }
        if (X->size() == 0) r = 0;
      } else {
        // Several separate reduced groups: move the reduced dims last first.
        Dims pd, ps;
        Dims strides(in.size());
        int64_t acc = 1;
        for (size_t q = in.size(); q-- > 0;) {
          strides[q] = acc;
          acc *= in[q];
        }
        for (int pass = 0; pass < 2; ++pass)
          for (int64_t q = 0; q < rank; ++q)
            if (red[q] == (pass == 1)) {
              pd.push_back(in[q]);
              ps.push_back(strides[q]);
              (pass == 1 ? r : k) *= in[q];
            }
        permuted.resize(static_cast<size_t>(X->size()));
        CopyStrided(x, 0, pd, ps, permuted.data(), ctx.threads());
        x = permuted.data();
      }
      std::vector<C> res(static_cast<size_t>(k * k2));
      std::vector<C> shift;
      if (op_ == ROp::kLogSumExp) {
        shift.resize(res.size());
        ReduceCore<T, C>(ROp::kMax, x, k, r, k2, shift.data(), nullptr, ctx.threads());
        for (C& m : shift)
          if (!std::isfinite(static_cast<double>(m))) m = C(0);
      }
      ReduceCore<T, C>(op_, x, k, r, k2, res.data(), shift.empty() ? nullptr : shift.data(), ctx.threads());
      T* y = Y->data<T>();
      for (size_t i = 0; i < res.size(); ++i) {
        C v = res[i];
        switch (op_) {
          case ROp::kMean:
            if constexpr (std::is_integral<C>::value)
              v = reduce_count == 0 ? C(0) : static_cast<C>(v / static_cast<C>(reduce_count));
            else
              v = v / static_cast<C>(reduce_count);
            break;
          case ROp::kL2: v = FromFloat<C>(std::sqrt(static_cast<double>(v))); break;
          case ROp::kLogSumExp: v = FromFloat<C>(std::log(static_cast<double>(v)) + static_cast<double>(shift[i])); break;
          default: break;
        }
        y[i] = is_bool ? static_cast<T>(v != C(0)) : static_cast<T>(v);
      }
      return Status::OK();
    };
    if (is_bool) return body(TypeTag<uint8_t>{});
    return DispatchNumericOrHalf(X->type(), name, body);
  }

 private:
  ROp op_;
  int input_axes_since_;
  bool keepdims_ = true;
  bool axes_from_input_ = false;
  bool noop_empty_ = false;
  std::vector<int64_t> axes_;
};

}  // namespace

// The last argument: the opset from which `axes` is an input, not an attribute.
ONYX_REGISTER_KERNEL(ReduceKernel, "", "ReduceSum", 1, kMaxVersion, NumericOrHalfTypes(), ROp::kSum, 13);
ONYX_REGISTER_KERNEL(ReduceKernel, "", "ReduceMean", 1, kMaxVersion, NumericOrHalfTypes(), ROp::kMean, 18);
ONYX_REGISTER_KERNEL(ReduceKernel, "", "ReduceMax", 1, kMaxVersion, NumericOrHalfTypes(), ROp::kMax, 18);
ONYX_REGISTER_KERNEL(ReduceKernel, "", "ReduceMin", 1, kMaxVersion, NumericOrHalfTypes(), ROp::kMin, 18);
ONYX_REGISTER_KERNEL(ReduceKernel, "", "ReduceMax", 20, kMaxVersion, BoolTypes(), ROp::kMax, 18);
ONYX_REGISTER_KERNEL(ReduceKernel, "", "ReduceMin", 20, kMaxVersion, BoolTypes(), ROp::kMin, 18);
ONYX_REGISTER_KERNEL(ReduceKernel, "", "ReduceProd", 1, kMaxVersion, NumericOrHalfTypes(), ROp::kProd, 18);
ONYX_REGISTER_KERNEL(ReduceKernel, "", "ReduceSumSquare", 1, kMaxVersion, NumericOrHalfTypes(), ROp::kSumSquare, 18);
ONYX_REGISTER_KERNEL(ReduceKernel, "", "ReduceL1", 1, kMaxVersion, NumericOrHalfTypes(), ROp::kL1, 18);
ONYX_REGISTER_KERNEL(ReduceKernel, "", "ReduceL2", 1, kMaxVersion, NumericOrHalfTypes(), ROp::kL2, 18);
ONYX_REGISTER_KERNEL(ReduceKernel, "", "ReduceLogSumExp", 1, kMaxVersion, NumericOrHalfTypes(), ROp::kLogSumExp, 18);

}  // namespace onyx

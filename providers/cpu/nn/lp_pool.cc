// LpPool and GlobalLpPool: y = (sum of |x|^p over the window) ^ (1/p) on
// X [N, C, D1, ...], any number of spatial dims. Padding contributes nothing.
// LpPool reads kernel_shape, strides, pads, auto_pad, dilations and ceil_mode
// (the last two from opset 18); p is a float attribute in opset 1 and an int
// from opset 2.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "providers/cpu/common/broadcast.h"
#include "providers/cpu/common/dispatch.h"
#include "providers/kernel.h"

namespace onyx {
namespace {

double ReadP(const KernelInfo& info) {
  const Attribute* a = info.Attr("p");
  if (a == nullptr) return 2.0;
  return a->type == Attribute::Type::kFloat ? static_cast<double>(a->f) : static_cast<double>(a->i);
}

template <typename T>
double PowAbs(T v, double p) {
  const double a = std::fabs(static_cast<double>(static_cast<typename CalcType<T>::type>(v)));
  return p == 2.0 ? a * a : (p == 1.0 ? a : std::pow(a, p));
}

double Root(double s, double p) { return p == 2.0 ? std::sqrt(s) : (p == 1.0 ? s : std::pow(s, 1.0 / p)); }

class GlobalLpPoolKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    p_ = ReadP(info);
    ONYX_CHECK(p_ > 0, ErrorCode::kInvalidGraph, "GlobalLpPool: attribute p must be positive, got ", p_);
    return Status::OK();
  }

  Status Compute(KernelContext& ctx) const override {
    const Tensor* X = nullptr;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &X));
    const Dims& d = X->dims();
    ONYX_CHECK_ARG(d.size() >= 2, "GlobalLpPool: input 0 (X) must have rank >= 2 ([N, C, ...]), got shape ",
                   ShapeToString(d));
    Dims out_dims(d.size(), 1);
    out_dims[0] = d[0];
    out_dims[1] = d[1];
    int64_t inner = 1;
    for (size_t k = 2; k < d.size(); ++k) inner *= d[k];
    const double p = p_;
    return DispatchOver(FloatOrHalfTypeSet{}, X->type(), "GlobalLpPool", [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      using C = typename CalcType<T>::type;
      Tensor* Y = ctx.Output(0, out_dims, X->type());
      if (Y == nullptr || Y->size() == 0) return Status::OK();
      const T* x = X->data<T>();
      T* y = Y->data<T>();
      ThreadPool::For(ctx.threads(), d[0] * d[1], std::max<int64_t>(1, (1 << 14) / std::max<int64_t>(1, inner)),
                      [&](int64_t b, int64_t e) {
        for (int64_t nc = b; nc < e; ++nc) {
          double s = 0;
          for (int64_t i = 0; i < inner; ++i) s += PowAbs(x[nc * inner + i], p);
          y[nc] = static_cast<T>(static_cast<C>(Root(s, p)));
        }
      });
      return Status::OK();
    });
  }

 private:
  double p_ = 2.0;
};

class LpPoolKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    p_ = ReadP(info);
    ONYX_CHECK(p_ > 0, ErrorCode::kInvalidGraph, "LpPool: attribute p must be positive, got ", p_);
    kernel_ = info.AttrInts("kernel_shape");
    ONYX_CHECK(!kernel_.empty(), ErrorCode::kInvalidGraph, "LpPool: attribute kernel_shape is required");
    const size_t nd = kernel_.size();
    strides_ = info.AttrInts("strides");
    dilations_ = info.AttrInts("dilations");
    pads_ = info.AttrInts("pads");
    if (strides_.empty()) strides_.assign(nd, 1);
    if (dilations_.empty()) dilations_.assign(nd, 1);
    if (pads_.empty()) pads_.assign(2 * nd, 0);
    ONYX_CHECK(strides_.size() == nd && dilations_.size() == nd && pads_.size() == 2 * nd, ErrorCode::kInvalidGraph,
               "LpPool: strides, dilations and pads must match kernel_shape's ", nd, " spatial dims");
    for (size_t k = 0; k < nd; ++k)
      ONYX_CHECK(kernel_[k] > 0 && strides_[k] > 0 && dilations_[k] > 0 && pads_[k] >= 0 && pads_[k + nd] >= 0,
                 ErrorCode::kInvalidGraph, "LpPool: kernel_shape, strides and dilations must be positive and pads "
                 "non-negative");
    auto_pad_ = info.AttrString("auto_pad", "NOTSET");
    ONYX_CHECK(auto_pad_ == "NOTSET" || auto_pad_ == "VALID" || auto_pad_ == "SAME_UPPER" || auto_pad_ == "SAME_LOWER",
               ErrorCode::kInvalidGraph, "LpPool: unknown auto_pad '", auto_pad_, "'");
    ceil_mode_ = info.AttrInt("ceil_mode", 0) != 0;
    return Status::OK();
  }

  Status Compute(KernelContext& ctx) const override {
    const Tensor* X = nullptr;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &X));
    const Dims& d = X->dims();
    const size_t nd = kernel_.size();
    ONYX_CHECK_ARG(d.size() == nd + 2, "LpPool: input 0 (X) of shape ", ShapeToString(d), " must have ", nd,
                   " spatial dims after [N, C] (kernel_shape has ", nd, ")");
    // Per spatial dim: output size and the padding before it.
    Dims out_dims = {d[0], d[1]};
    std::vector<int64_t> pad_begin(nd);
    for (size_t k = 0; k < nd; ++k) {
      const int64_t in = d[k + 2], ek = dilations_[k] * (kernel_[k] - 1) + 1, s = strides_[k];
      int64_t pb = pads_[k], pe = pads_[k + nd];
      if (auto_pad_ == "VALID") {
        pb = pe = 0;
      } else if (auto_pad_ == "SAME_UPPER" || auto_pad_ == "SAME_LOWER") {
        const int64_t o = (in + s - 1) / s;
        const int64_t total = std::max<int64_t>(0, (o - 1) * s + ek - in);
        pb = auto_pad_ == "SAME_UPPER" ? total / 2 : total - total / 2;
        pe = total - pb;
      }
      const int64_t span = in + pb + pe - ek;
      ONYX_CHECK_ARG(span >= 0, "LpPool: input 0 (X) of shape ", ShapeToString(d),
                     " is smaller than the (dilated, padded) kernel along spatial dim ", k);
      int64_t o = (ceil_mode_ ? (span + s - 1) / s : span / s) + 1;
      // A window that would start in the end padding is dropped.
      if (ceil_mode_ && (o - 1) * s >= in + pb) --o;
      out_dims.push_back(o);
      pad_begin[k] = pb;
    }
    const double p = p_;
    return DispatchOver(FloatOrHalfTypeSet{}, X->type(), "LpPool", [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      using C = typename CalcType<T>::type;
      Tensor* Y = ctx.Output(0, out_dims, X->type());
      if (Y == nullptr || Y->size() == 0) return Status::OK();
      const T* x = X->data<T>();
      T* y = Y->data<T>();
      int64_t in_plane = 1, out_plane = 1, taps = 1;
      for (size_t k = 0; k < nd; ++k) {
        in_plane *= d[k + 2];
        out_plane *= out_dims[k + 2];
        taps *= kernel_[k];
      }
      ThreadPool::For(ctx.threads(), d[0] * d[1] * out_plane,
                      std::max<int64_t>(1, (1 << 14) / std::max<int64_t>(1, taps)), [&](int64_t b, int64_t e) {
        std::vector<int64_t> opos(nd), tap(nd);
        for (int64_t oi = b; oi < e; ++oi) {
          const int64_t plane = oi / out_plane;
          int64_t r = oi % out_plane;
          for (size_t k = nd; k-- > 0;) {
            opos[k] = r % out_dims[k + 2];
            r /= out_dims[k + 2];
          }
          const T* xp = x + plane * in_plane;
          double acc = 0;
          std::fill(tap.begin(), tap.end(), 0);
          for (int64_t t = 0; t < taps; ++t) {
            int64_t off = 0;
            bool inside = true;
            for (size_t k = 0; k < nd && inside; ++k) {
              const int64_t pos = opos[k] * strides_[k] - pad_begin[k] + tap[k] * dilations_[k];
              inside = pos >= 0 && pos < d[k + 2];
              off = off * d[k + 2] + pos;
            }
            if (inside) acc += PowAbs(xp[off], p);
            for (size_t k = nd; k-- > 0;) {  // odometer over the kernel taps
              if (++tap[k] < kernel_[k]) break;
              tap[k] = 0;
            }
          }
          y[oi] = static_cast<T>(static_cast<C>(Root(acc, p)));
        }
      });
      return Status::OK();
    });
  }

 private:
  double p_ = 2.0;
  std::vector<int64_t> kernel_, strides_, dilations_, pads_;
  std::string auto_pad_;
  bool ceil_mode_ = false;
};

}  // namespace

ONYX_REGISTER_KERNEL(GlobalLpPoolKernel, "", "GlobalLpPool", 1, kMaxVersion, FloatOrHalfTypes());
ONYX_REGISTER_KERNEL(LpPoolKernel, "", "LpPool", 1, kMaxVersion, FloatOrHalfTypes());

}  // namespace onyx

// LpPool (opsets 1, 2 (p becomes an int), 11 (pads/auto_pad), 18+ (ceil_mode,
// dilations)) and GlobalLpPool (1, 2+): y = (sum over the window of |x|^p)^(1/p);
// padded positions add nothing. Windows follow MaxPool's geometry.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "providers/cpu/common/dispatch.h"
#include "providers/kernel.h"

namespace onyx {
namespace {

class LpPoolKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    const std::string who = info.node().Describe();
    global_ = info.node().op_type == "GlobalLpPool";
    const Attribute* pa = info.Attr("p");
    p_ = 2.0;
    if (pa != nullptr) p_ = pa->type == Attribute::Type::kFloat ? static_cast<double>(pa->f) : static_cast<double>(pa->i);
    ONYX_CHECK(p_ > 0, ErrorCode::kInvalidGraph, who, ": attribute p must be positive, got ", p_);
    if (global_) return Status::OK();
    kernel_ = info.AttrInts("kernel_shape");
    ONYX_CHECK(!kernel_.empty(), ErrorCode::kInvalidGraph, who, ": attribute kernel_shape is required");
    strides_ = info.AttrInts("strides");
    pads_ = info.AttrInts("pads");
    dilations_ = info.AttrInts("dilations");
    ceil_ = info.AttrInt("ceil_mode", 0) != 0;
    auto_pad_ = info.AttrString("auto_pad", "NOTSET");
    ONYX_CHECK(auto_pad_ == "NOTSET" || auto_pad_ == "VALID" || auto_pad_ == "SAME_UPPER" || auto_pad_ == "SAME_LOWER",
               ErrorCode::kInvalidGraph, who, ": attribute auto_pad has unknown value '", auto_pad_, "'");
    for (int64_t v : kernel_) ONYX_CHECK(v > 0, ErrorCode::kInvalidGraph, who, ": kernel_shape must be positive");
    for (int64_t v : strides_) ONYX_CHECK(v > 0, ErrorCode::kInvalidGraph, who, ": strides must be positive");
    for (int64_t v : dilations_) ONYX_CHECK(v > 0, ErrorCode::kInvalidGraph, who, ": dilations must be positive");
    for (int64_t v : pads_) ONYX_CHECK(v >= 0, ErrorCode::kInvalidGraph, who, ": pads must be non-negative");
    return Status::OK();
  }

  Status Compute(KernelContext& ctx) const override {
    const Tensor* x = nullptr;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &x));
    const Dims& xd = x->dims();
    const char* op = global_ ? "GlobalLpPool" : "LpPool";
    ONYX_CHECK_ARG(xd.size() >= 3, op, ": input 'X' ", ShapeToString(xd), " must have rank >= 3 (N, C, spatial...)");
    const size_t nd = xd.size() - 2;
    std::vector<int64_t> k(nd), s(nd, 1), d(nd, 1), pb(nd, 0), out(nd);
    if (global_) {
      for (size_t j = 0; j < nd; ++j) k[j] = xd[j + 2], out[j] = 1;
    } else {
      ONYX_CHECK_ARG(kernel_.size() == nd, op, ": attribute kernel_shape has ", kernel_.size(),
                     " values but input 'X' ", ShapeToString(xd), " has ", nd, " spatial dims");
      ONYX_CHECK_ARG(strides_.empty() || strides_.size() == nd, op, ": attribute strides needs ", nd, " values");
      ONYX_CHECK_ARG(dilations_.empty() || dilations_.size() == nd, op, ": attribute dilations needs ", nd, " values");
      ONYX_CHECK_ARG(pads_.empty() || pads_.size() == 2 * nd, op, ": attribute pads needs ", 2 * nd, " values");
      for (size_t j = 0; j < nd; ++j) {
        k[j] = kernel_[j];
        if (!strides_.empty()) s[j] = strides_[j];
        if (!dilations_.empty()) d[j] = dilations_[j];
        const int64_t in = xd[j + 2], keff = (k[j] - 1) * d[j] + 1;
        int64_t o = 0;
        if (auto_pad_ == "SAME_UPPER" || auto_pad_ == "SAME_LOWER") {
          o = (in + s[j] - 1) / s[j];
          const int64_t total = std::max<int64_t>(0, (o - 1) * s[j] + keff - in);
          pb[j] = auto_pad_ == "SAME_UPPER" ? total / 2 : total - total / 2;
        } else {
          const int64_t pe = auto_pad_ == "VALID" || pads_.empty() ? 0 : pads_[j + nd];
          pb[j] = auto_pad_ == "VALID" || pads_.empty() ? 0 : pads_[j];
          const int64_t span = in + pb[j] + pe - keff;
          ONYX_CHECK_ARG(span >= 0, op, ": input 'X' ", ShapeToString(xd), " is smaller than the (dilated, padded) kernel");
          o = (ceil_ ? (span + s[j] - 1) / s[j] : span / s[j]) + 1;
          if (ceil_ && (o - 1) * s[j] >= in + pb[j]) --o;
        }
        out[j] = o;
      }
    }
    Dims yd{xd[0], xd[1]};
    yd.insert(yd.end(), out.begin(), out.end());
    Tensor* y = ctx.Output(0, yd, x->type());
    if (y == nullptr || y->size() == 0) return Status::OK();
    return DispatchFloat(x->type(), op, [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      int64_t in_size = 1, out_size = 1, kvol = 1;
      for (size_t j = 0; j < nd; ++j) in_size *= xd[j + 2], out_size *= out[j], kvol *= k[j];
      const T* xv = x->data<T>();
      T* yv = y->data<T>();
      const double p = p_;
      ThreadPool::For(ctx.threads(), xd[0] * xd[1] * out_size, std::max<int64_t>(1, 4096 / std::max<int64_t>(kvol, 1)),
                      [&](int64_t b0, int64_t b1) {
        std::vector<int64_t> o(nd), kk(nd);
        for (int64_t q = b0; q < b1; ++q) {
          const int64_t plane = q / out_size;
          int64_t rem = q % out_size;
          for (size_t j = nd; j-- > 0;) o[j] = rem % out[j], rem /= out[j];
          const T* src = xv + plane * in_size;
          double acc = 0;
          for (int64_t kr = 0; kr < kvol; ++kr) {
            int64_t r2 = kr, off = 0;
            bool inside = true;
            for (size_t j = nd; j-- > 0;) kk[j] = r2 % k[j], r2 /= k[j];
            for (size_t j = 0; j < nd; ++j) {
              const int64_t i = o[j] * s[j] - pb[j] + kk[j] * d[j];
              inside = inside && i >= 0 && i < xd[j + 2];
              off = off * xd[j + 2] + i;
            }
            if (!inside) continue;
            const double v = std::fabs(static_cast<double>(src[off]));
            acc += p == 2.0 ? v * v : (p == 1.0 ? v : std::pow(v, p));
          }
          yv[q] = static_cast<T>(p == 2.0 ? std::sqrt(acc) : (p == 1.0 ? acc : std::pow(acc, 1.0 / p)));
        }
      });
      return Status::OK();
    });
  }

 private:
  bool global_ = false;
  double p_ = 2.0;
  std::vector<int64_t> kernel_, strides_, pads_, dilations_;
  bool ceil_ = false;
  std::string auto_pad_ = "NOTSET";
};

}  // namespace

ONYX_REGISTER_KERNEL(LpPoolKernel, "", "LpPool", 1, kMaxVersion, FloatTypes());
ONYX_REGISTER_KERNEL(LpPoolKernel, "", "GlobalLpPool", 1, kMaxVersion, FloatTypes());

}  // namespace onyx

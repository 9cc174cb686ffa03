// GridSample: opset 16 (4-D X; modes bilinear/nearest/bicubic) and 20+
// (any spatial rank; modes linear/nearest/cubic). X [N, C, D1..Dk], grid
// [N, O1..Ok, k] whose last axis holds normalized coordinates in reverse
// order (the last spatial dim first); Y [N, C, O1..Ok].
//
// Per output position and spatial dim the coordinate is denormalized
// (align_corners maps -1/1 to the centers of the corner pixels, otherwise to
// their outer edges), moved inside by the padding mode when it falls out
// (border clamps, reflection mirrors), then sampled with 1 (nearest, rounded
// half to even), 2 (linear) or 4 (cubic, a = -0.75) taps per dim. Taps
// outside the input read 0 (zeros), the edge (border) or the mirror image
// (reflection). Coordinates are computed in double.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "providers/cpu/common/dispatch.h"
#include "providers/kernel.h"

namespace onyx {
namespace {

enum class Mode { kNearest, kLinear, kCubic };
enum class Pad { kZeros, kBorder, kReflection };

double Reflect(double x, double lo, double hi) {
  const double rng = hi - lo;
  if (rng <= 0) return lo;
  if (x < lo) {
    const double dx = lo - x;
    const double n = std::trunc(dx / rng);
    const double r = dx - n * rng;
    return std::fmod(n, 2.0) == 0 ? lo + r : hi - r;
  }
  if (x > hi) {
    const double dx = x - hi;
    const double n = std::trunc(dx / rng);
    const double r = dx - n * rng;
    return std::fmod(n, 2.0) == 0 ? hi - r : lo + r;
  }
  return x;
}

void CubicCoeffs(double t, double* c) {
  const double a = -0.75;
  const double x0 = t + 1, x1 = t, x2 = 1 - t, x3 = 2 - t;
  c[0] = ((a * x0 - 5 * a) * x0 + 8 * a) * x0 - 4 * a;
  c[1] = ((a + 2) * x1 - (a + 3)) * x1 * x1 + 1;
  c[2] = ((a + 2) * x2 - (a + 3)) * x2 * x2 + 1;
  c[3] = ((a * x3 - 5 * a) * x3 + 8 * a) * x3 - 4 * a;
}

class GridSampleKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    const std::string who = info.node().Describe();
    opset_ = info.opset();
    const std::string m = info.AttrString("mode", opset_ >= 20 ? "linear" : "bilinear");
    if (m == "nearest") mode_ = Mode::kNearest;
    else if (m == (opset_ >= 20 ? "linear" : "bilinear")) mode_ = Mode::kLinear;
    else if (m == (opset_ >= 20 ? "cubic" : "bicubic")) mode_ = Mode::kCubic;
    else return MakeError(ErrorCode::kInvalidGraph, who, ": attribute mode has unsupported value '", m, "' at opset ", opset_);
    const std::string p = info.AttrString("padding_mode", "zeros");
    if (p == "zeros") pad_ = Pad::kZeros;
    else if (p == "border") pad_ = Pad::kBorder;
    else if (p == "reflection") pad_ = Pad::kReflection;
    else return MakeError(ErrorCode::kInvalidGraph, who, ": attribute padding_mode has unsupported value '", p, "'");
    align_ = info.AttrInt("align_corners", 0) != 0;
    return Status::OK();
  }

  Status Compute(KernelContext& ctx) const override {
    const Tensor* x = nullptr;
    const Tensor* grid = nullptr;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &x));
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(1, &grid));
    const Dims& xd = x->dims();
    const Dims& gd = grid->dims();
    ONYX_CHECK_ARG(xd.size() >= 3, "GridSample: input 'X' ", ShapeToString(xd), " must have rank >= 3");
    if (opset_ < 20)
      ONYX_CHECK_ARG(xd.size() == 4, "GridSample: input 'X' ", ShapeToString(xd), " must be 4-D at opset ", opset_);
    const size_t k = xd.size() - 2;
    ONYX_CHECK_ARG(gd.size() == k + 2 && gd[0] == xd[0] && gd[k + 1] == static_cast<int64_t>(k), "GridSample: input 'grid' ",
                   ShapeToString(gd), " must be [N, spatial..., ", k, "] with N = ", xd[0], " of input 'X' ",
                   ShapeToString(xd));
    for (size_t i = 0; i < k; ++i)
      ONYX_CHECK_ARG(xd[2 + i] > 0 || grid->size() == 0, "GridSample: input 'X' ", ShapeToString(xd),
                     " has an empty spatial dim");
    std::vector<double> g(static_cast<size_t>(grid->size()));
    if (grid->type() == ElemType::kFloat) {
      for (int64_t i = 0; i < grid->size(); ++i) g[i] = grid->data<float>()[i];
    } else if (grid->type() == ElemType::kDouble) {
      for (int64_t i = 0; i < grid->size(); ++i) g[i] = grid->data<double>()[i];
    } else if (grid->type() == ElemType::kFloat16) {
      for (int64_t i = 0; i < grid->size(); ++i) g[i] = static_cast<float>(grid->data<Float16>()[i]);
    } else {
      return MakeError(ErrorCode::kInvalidArgument, "GridSample: input 'grid' has unsupported element type ",
                       ElemTypeName(grid->type()));
    }
    Dims yd{xd[0], xd[1]};
    yd.insert(yd.end(), gd.begin() + 1, gd.begin() + 1 + k);
    Tensor* y = ctx.Output(0, yd, x->type());
    if (y == nullptr || y->size() == 0) return Status::OK();
    return DispatchFloat(x->type(), "GridSample", [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      Run<T>(ctx, *x, g, y);
      return Status::OK();
    });
  }

 private:
  // The input index of tap `i` along a dim of length `d`, or -1 for a zero.
  int64_t TapIndex(int64_t i, int64_t d, double lo, double hi) const {
    if (i >= 0 && i < d) return i;
    switch (pad_) {
      case Pad::kZeros: return -1;
      case Pad::kBorder: return std::min<int64_t>(std::max<int64_t>(i, 0), d - 1);
      case Pad::kReflection: {
        const int64_t r = static_cast<int64_t>(Reflect(static_cast<double>(i), lo, hi));
        return std::min<int64_t>(std::max<int64_t>(r, 0), d - 1);
      }
    }
    return -1;
  }

  template <typename T>
  void Run(KernelContext& ctx, const Tensor& x, const std::vector<double>& g, Tensor* y) const {
    const Dims& xd = x.dims();
    const size_t k = xd.size() - 2;
    const int64_t N = xd[0], C = xd[1];
    int64_t in_size = 1, out_size = 1;
    for (size_t i = 0; i < k; ++i) in_size *= xd[2 + i];
    for (size_t i = 0; i < k; ++i) out_size *= y->dims()[2 + i];
    const int taps = mode_ == Mode::kNearest ? 1 : mode_ == Mode::kLinear ? 2 : 4;
    int64_t combos = 1;
    for (size_t i = 0; i < k; ++i) combos *= taps;
    const T* xv = x.data<T>();
    T* yv = y->data<T>();
    ThreadPool::For(ctx.threads(), N * out_size, std::max<int64_t>(1, 2048 / std::max<int64_t>(C * combos, 1)),
                    [&](int64_t begin, int64_t end) {
      std::vector<int64_t> idx(k * taps);
      std::vector<double> w(k * taps);
      std::vector<int64_t> offs(combos);
      std::vector<double> ws(combos);
      for (int64_t p = begin; p < end; ++p) {
        const int64_t n = p / out_size, o = p % out_size;
        const double* gp = g.data() + p * static_cast<int64_t>(k);
        for (size_t i = 0; i < k; ++i) {
          const int64_t d = xd[2 + i];
          const double nx = gp[k - 1 - i];
          const double lo = align_ ? 0.0 : -0.5, hi = align_ ? d - 1.0 : d - 0.5;
          double c = align_ ? (nx + 1) / 2.0 * (d - 1) : ((nx + 1) * d - 1) / 2.0;
          if (mode_ == Mode::kNearest) c = std::nearbyint(c);
          if (c < lo || c > hi) {
            if (pad_ == Pad::kBorder) c = std::min(std::max(c, 0.0), d - 1.0);
            else if (pad_ == Pad::kReflection) c = Reflect(c, lo, hi);
          }
          if (!std::isfinite(c)) c = -2.0 * d - 4;  // NaN grid: read as outside
          // Far outside is outside: bounded so the conversions below are defined.
          c = std::min(std::max(c, -2.0 * d - 4), 2.0 * d + 4);
          int64_t* ti = &idx[i * taps];
          double* tw = &w[i * taps];
          if (mode_ == Mode::kNearest) {
            ti[0] = TapIndex(static_cast<int64_t>(c), d, lo, hi);
            tw[0] = 1.0;
          } else {
            const double f = std::floor(c);
            const double t = c - f;
            const int64_t base = static_cast<int64_t>(f);
            if (mode_ == Mode::kLinear) {
              ti[0] = TapIndex(base, d, lo, hi);
              ti[1] = TapIndex(base + 1, d, lo, hi);
              tw[0] = 1 - t;
              tw[1] = t;
            } else {
              CubicCoeffs(t, tw);
              for (int j = 0; j < 4; ++j) ti[j] = TapIndex(base - 1 + j, d, lo, hi);
            }
          }
        }
        // Every combination of taps: its offset into the plane (or -1) and weight.
        int64_t nc = 0;
        for (int64_t cb = 0; cb < combos; ++cb) {
          int64_t rem = cb, off = 0;
          double wt = 1.0;
          bool zero = false;
          for (size_t i = 0; i < k; ++i) {
            // dim 0 is the slowest-varying.
            int64_t div = 1;
            for (size_t j = i + 1; j < k; ++j) div *= taps;
            const int tj = static_cast<int>((rem / div) % taps);
            const int64_t ii = idx[i * taps + tj];
            if (ii < 0) zero = true;
            off = off * xd[2 + i] + std::max<int64_t>(ii, 0);
            wt *= w[i * taps + tj];
          }
          if (zero || wt == 0.0) continue;
          offs[nc] = off;
          ws[nc] = wt;
          ++nc;
        }
        for (int64_t c = 0; c < C; ++c) {
          const T* plane = xv + (n * C + c) * in_size;
          double acc = 0;
          for (int64_t j = 0; j < nc; ++j) acc += ws[j] * static_cast<double>(plane[offs[j]]);
          yv[(n * C + c) * out_size + o] = static_cast<T>(acc);
        }
      }
    });
  }

  int opset_ = 0;
  Mode mode_ = Mode::kLinear;
  Pad pad_ = Pad::kZeros;
  bool align_ = false;
};

}  // namespace

ONYX_REGISTER_KERNEL(GridSampleKernel, "", "GridSample", 16, 19, FloatTypes());
ONYX_REGISTER_KERNEL(GridSampleKernel, "", "GridSample", 20, kMaxVersion, FloatTypes());

}  // namespace onyx

// Resize (opsets 10, 11, 13, 18, 19) and Upsample (7, 9).
//
// Every mode is separable, so the kernel resizes one axis at a time: for each
// resized axis it builds a table of (input index, weight) taps per output
// position, then applies it over the tensor viewed as [outer, in, inner].
// Coordinates and weights are computed in double, as the ONNX reference does,
// and the data is carried in float (double for double inputs); 16-bit floats
// are widened to float on the way in and narrowed on the way out.
//
// What changed between versions:
//   Upsample 7-8:  scales attribute; 9-10: scales input. Nearest/linear with
//                  asymmetric coordinates; nearest truncates (ceil when shrinking).
//   Resize 10:     X, scales; the same semantics as Upsample.
//   Resize 11-12:  X, roi, scales, sizes; coordinate_transformation_mode (incl.
//                  tf_half_pixel_for_nn), cubic, nearest_mode, exclude_outside,
//                  extrapolation_value.
//   Resize 13+:    roi and scales optional; tf_half_pixel_for_nn gone.
//   Resize 18+:    antialias, axes, keep_aspect_ratio_policy, half_pixel_symmetric.
#include <algorithm>
#include <cmath>
#include <string>
#include <type_traits>
#include <vector>

#include "providers/cpu/common/dispatch.h"
#include "providers/kernel.h"

namespace onyx {
namespace {

// A source coordinate clamped to [0, in_d - 1] as an index; NaN (a hostile
// roi or scale) reads index 0 instead of converting NaN, which is undefined.
int64_t ClampedIndex(double v, double in_d) {
  if (!(v > 0)) return 0;
  return static_cast<int64_t>(std::min(v, in_d - 1));
}

enum class Mode { kNearest, kLinear, kCubic };
enum class Coord {
  kHalfPixel,
  kHalfPixelSymmetric,
  kPytorchHalfPixel,
  kAlignCorners,
  kAsymmetric,
  kTfHalfPixelForNN,
  kTfCropAndResize
};
enum class Nearest { kRoundPreferFloor, kRoundPreferCeil, kFloor, kCeil, kSimple };
enum class AspectPolicy { kStretch, kNotLarger, kNotSmaller };

// The taps of one resized axis: `taps` (index, weight) pairs per output
// position, indices already clamped into [0, in); `extrap[j]` marks positions
// that take extrapolation_value (tf_crop_and_resize outside the input).
struct AxisTable {
  int axis = 0;
  int64_t in = 0, out = 0;
  int taps = 1;
  std::vector<int64_t> idx;
  std::vector<double> w;
  std::vector<char> extrap;
};

double CubicWeight(double x, double a) {
  x = std::fabs(x);
  if (x <= 1) return ((a + 2) * x - (a + 3)) * x * x + 1;
  if (x < 2) return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a;
  return 0.0;
}

template <typename T>
struct AccOf {
  using type = float;
};
template <>
struct AccOf<double> {
  using type = double;
};

// Reads a 1-D float-ish tensor (roi, scales) as doubles.
Status ReadReals(const Tensor& t, const char* name, std::vector<double>* out) {
  out->resize(static_cast<size_t>(t.size()));
  switch (t.type()) {
    case ElemType::kFloat:
      for (int64_t i = 0; i < t.size(); ++i) (*out)[i] = t.data<float>()[i];
      return Status::OK();
    case ElemType::kDouble:
      for (int64_t i = 0; i < t.size(); ++i) (*out)[i] = t.data<double>()[i];
      return Status::OK();
    case ElemType::kFloat16:
      for (int64_t i = 0; i < t.size(); ++i) (*out)[i] = static_cast<float>(t.data<Float16>()[i]);
      return Status::OK();
    case ElemType::kBFloat16:
      for (int64_t i = 0; i < t.size(); ++i) (*out)[i] = static_cast<float>(t.data<BFloat16>()[i]);
      return Status::OK();
    default:
      return MakeError(ErrorCode::kInvalidArgument, "input '", name, "' has element type ", ElemTypeName(t.type()),
                       "; a float type is required");
  }
}

class ResizeKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    const std::string& op = info.node().op_type;
    upsample_ = op == "Upsample";
    opset_ = info.opset();
    const std::string who = info.node().Describe();
    const bool v11 = !upsample_ && opset_ >= 11;
    const bool v18 = !upsample_ && opset_ >= 18;

    const std::string mode = info.AttrString("mode", "nearest");
    if (mode == "nearest") {
      mode_ = Mode::kNearest;
    } else if (mode == "linear" || (upsample_ && mode == "bilinear")) {
      mode_ = Mode::kLinear;
    } else if (mode == "cubic" && v11) {
      mode_ = Mode::kCubic;
    } else {
      return MakeError(ErrorCode::kInvalidGraph, who, ": attribute mode has unsupported value '", mode, "'");
    }

    coord_ = Coord::kAsymmetric;
    nearest_ = Nearest::kSimple;
    if (v11) {
      const std::string c = info.AttrString("coordinate_transformation_mode", "half_pixel");
      if (c == "half_pixel") coord_ = Coord::kHalfPixel;
      else if (c == "half_pixel_symmetric" && v18) coord_ = Coord::kHalfPixelSymmetric;
      else if (c == "pytorch_half_pixel") coord_ = Coord::kPytorchHalfPixel;
      else if (c == "align_corners") coord_ = Coord::kAlignCorners;
      else if (c == "asymmetric") coord_ = Coord::kAsymmetric;
      else if (c == "tf_half_pixel_for_nn" && opset_ < 13) coord_ = Coord::kTfHalfPixelForNN;
      else if (c == "tf_crop_and_resize") coord_ = Coord::kTfCropAndResize;
      else
        return MakeError(ErrorCode::kInvalidGraph, who, ": attribute coordinate_transformation_mode has unsupported value '",
                         c, "' at opset ", opset_);
      const std::string n = info.AttrString("nearest_mode", "round_prefer_floor");
      if (n == "round_prefer_floor") nearest_ = Nearest::kRoundPreferFloor;
      else if (n == "round_prefer_ceil") nearest_ = Nearest::kRoundPreferCeil;
      else if (n == "floor") nearest_ = Nearest::kFloor;
      else if (n == "ceil") nearest_ = Nearest::kCeil;
      else return MakeError(ErrorCode::kInvalidGraph, who, ": attribute nearest_mode has unsupported value '", n, "'");
      cubic_a_ = info.AttrFloat("cubic_coeff_a", -0.75f);
      exclude_outside_ = info.AttrInt("exclude_outside", 0) != 0;
      extrapolation_ = info.AttrFloat("extrapolation_value", 0.f);
    }
    if (v18) {
      antialias_ = info.AttrInt("antialias", 0) != 0;
      axes_ = info.AttrInts("axes");
      const std::string p = info.AttrString("keep_aspect_ratio_policy", "stretch");
      if (p == "stretch") policy_ = AspectPolicy::kStretch;
      else if (p == "not_larger") policy_ = AspectPolicy::kNotLarger;
      else if (p == "not_smaller") policy_ = AspectPolicy::kNotSmaller;
      else
        return MakeError(ErrorCode::kInvalidGraph, who, ": attribute keep_aspect_ratio_policy has unsupported value '",
                         p, "'");
    }
    if (upsample_ && opset_ < 9) {
      const Attribute* s = info.Attr("scales");
      ONYX_CHECK(s != nullptr, ErrorCode::kInvalidGraph, who, ": attribute scales is required");
      attr_scales_.assign(s->floats.begin(), s->floats.end());
    }
    return Status::OK();
  }

  Status Compute(KernelContext& ctx) const override {
    const Tensor* x = nullptr;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &x));
    const Dims& xd = x->dims();
    const int r = static_cast<int>(xd.size());
    const char* op = upsample_ ? "Upsample" : "Resize";

    // Which axes are resized, in the order given.
    std::vector<int> axes;
    if (axes_.empty()) {
      for (int d = 0; d < r; ++d) axes.push_back(d);
    } else {
      std::vector<char> seen(r, 0);
      for (int64_t a : axes_) {
        ONYX_CHECK_ARG(a >= -r && a < r, op, ": attribute axes value ", a, " is out of range for input 'X' ",
                       ShapeToString(xd));
        const int d = static_cast<int>(a < 0 ? a + r : a);
        ONYX_CHECK_ARG(!seen[d], op, ": attribute axes names axis ", d, " twice");
        seen[d] = 1;
        axes.push_back(d);
      }
    }
    const size_t na = axes.size();

    // scales / sizes / roi, by version.
    std::vector<double> scales, roi;
    std::vector<int64_t> sizes;
    bool have_scales = false, have_sizes = false;
    if (upsample_ && opset_ < 9) {
      scales = attr_scales_;
      have_scales = true;
    } else if (upsample_ || opset_ < 11) {
      const Tensor* s = nullptr;
      ONYX_RETURN_IF_ERROR(ctx.RequiredInput(1, &s));
      ONYX_RETURN_IF_ERROR(ReadReals(*s, "scales", &scales).WithContext(StrCat(op, ": ")));
      have_scales = true;
    } else {
      const Tensor* roi_t = ctx.Input(1);
      const Tensor* s = ctx.Input(2);
      const Tensor* z = ctx.InputCount() > 3 ? ctx.Input(3) : nullptr;
      if (s != nullptr && s->size() > 0) {
        ONYX_RETURN_IF_ERROR(ReadReals(*s, "scales", &scales).WithContext(StrCat(op, ": ")));
        have_scales = true;
      }
      if (z != nullptr && z->size() > 0) {
        ONYX_CHECK_ARG(z->type() == ElemType::kInt64, op, ": input 'sizes' must be int64, got ",
                       ElemTypeName(z->type()));
        sizes.assign(z->data<int64_t>(), z->data<int64_t>() + z->size());
        have_sizes = true;
      }
      if (coord_ == Coord::kTfCropAndResize) {
        ONYX_CHECK_ARG(roi_t != nullptr && roi_t->size() > 0, op,
                       ": input 'roi' is required with coordinate_transformation_mode tf_crop_and_resize");
        ONYX_RETURN_IF_ERROR(ReadReals(*roi_t, "roi", &roi).WithContext(StrCat(op, ": ")));
        ONYX_CHECK_ARG(roi.size() == 2 * na, op, ": input 'roi' has ", roi.size(), " values but ", 2 * na,
                       " are needed (start and end for each of ", na, " axes of input 'X' ", ShapeToString(xd), ")");
      }
      ONYX_CHECK_ARG(!(have_scales && have_sizes), op, ": only one of inputs 'scales' and 'sizes' may be given");
      ONYX_CHECK_ARG(have_scales || have_sizes, op, ": one of inputs 'scales' and 'sizes' must be given");
    }
    if (have_scales) {
      ONYX_CHECK_ARG(scales.size() == na, op, ": input 'scales' has ", scales.size(), " values but input 'X' ",
                     ShapeToString(xd), " needs ", na);
      for (double s : scales)
        ONYX_CHECK_ARG(s > 0 && std::isfinite(s), op, ": input 'scales' has a non-positive or non-finite value ", s);
    } else {
      ONYX_CHECK_ARG(sizes.size() == na, op, ": input 'sizes' has ", sizes.size(), " values but input 'X' ",
                     ShapeToString(xd), " needs ", na);
      for (int64_t s : sizes) ONYX_CHECK_ARG(s >= 0, op, ": input 'sizes' has a negative value ", s);
    }

    // Per-dim scale, output length, and the (real) output width the
    // coordinate formulas use.
    std::vector<double> scale(r, 1.0), width(r), roi_s(r, 0.0), roi_e(r, 1.0);
    Dims yd = xd;
    for (int d = 0; d < r; ++d) width[d] = static_cast<double>(xd[d]);
    if (have_scales) {
      for (size_t i = 0; i < na; ++i) {
        const int d = axes[i];
        scale[d] = scales[i];
        width[d] = scales[i] * static_cast<double>(xd[d]);
        ONYX_CHECK_ARG(width[d] < 9.0e18, op, ": input 'scales' value ", scales[i], " makes axis ", d,
                       " of input 'X' ", ShapeToString(xd), " too large");
        yd[d] = static_cast<int64_t>(std::floor(width[d]));
      }
    } else {
      for (size_t i = 0; i < na; ++i) {
        const int d = axes[i];
        yd[d] = sizes[i];
        width[d] = static_cast<double>(sizes[i]);
        scale[d] = xd[d] == 0 ? 1.0 : static_cast<double>(sizes[i]) / static_cast<double>(xd[d]);
      }
      if (policy_ != AspectPolicy::kStretch && na > 0) {
        double s = scale[axes[0]];
        for (int d : axes) s = policy_ == AspectPolicy::kNotLarger ? std::min(s, scale[d]) : std::max(s, scale[d]);
        for (int d : axes) {
          scale[d] = s;
          width[d] = s * static_cast<double>(xd[d]);
          ONYX_CHECK_ARG(width[d] + 0.5 < 9.0e18, op, ": input 'sizes' with keep_aspect_ratio_policy makes axis ", d,
                         " of input 'X' ", ShapeToString(xd), " too large");
          yd[d] = static_cast<int64_t>(width[d] + 0.5);
        }
      }
    }
    if (!roi.empty()) {
      for (size_t i = 0; i < na; ++i) {
        roi_s[axes[i]] = roi[i];
        roi_e[axes[i]] = roi[na + i];
      }
    }
    for (int d = 0; d < r; ++d)
      ONYX_CHECK_ARG(xd[d] > 0 || yd[d] == 0, op, ": input 'X' ", ShapeToString(xd),
                     " is empty along axis ", d, " which cannot be resized to ", yd[d]);

    Tensor* y = ctx.Output(0, yd, x->type());
    if (y == nullptr || y->size() == 0) return Status::OK();

    std::vector<AxisTable> tables;
    for (int d : axes) {
      const bool identity = std::fabs(scale[d] - 1.0) <= 1e-9 && yd[d] == xd[d] &&
                            (coord_ != Coord::kTfCropAndResize ||
                             (std::fabs(roi_s[d]) <= 1e-9 && std::fabs(roi_e[d] - 1.0) <= 1e-9));
      if (identity) continue;
      tables.push_back(BuildTable(d, xd[d], yd[d], scale[d], width[d], roi_s[d], roi_e[d]));
    }

    return DispatchOver(FloatOrHalfTypeSet{}, x->type(), op, [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      using Acc = typename AccOf<T>::type;
      return Run<T, Acc>(ctx, *x, tables, y);
    });
  }

 private:
  AxisTable BuildTable(int axis, int64_t in, int64_t out, double scale, double width, double roi_s,
                       double roi_e) const {
    AxisTable t;
    t.axis = axis;
    t.in = in;
    t.out = out;
    const bool tf_crop = coord_ == Coord::kTfCropAndResize;
    if (tf_crop) t.extrap.assign(out, 0);
    // Support of the filter and its stretch when antialiasing a downscale.
    double support = 0, s = 1.0;
    int start = 0;
    if (mode_ == Mode::kNearest) {
      t.taps = 1;
    } else {
      support = mode_ == Mode::kLinear ? 1.0 : 2.0;
      if (antialias_) s = std::min(scale, 1.0);
      start = static_cast<int>(std::floor(-support / s)) + 1;
      t.taps = 2 - 2 * start;
    }
    t.idx.resize(out * t.taps);
    t.w.resize(out * t.taps);
    const double in_d = static_cast<double>(in);
    for (int64_t j = 0; j < out; ++j) {
      const double yj = static_cast<double>(j);
      double xo = 0;
      switch (coord_) {
        case Coord::kHalfPixel:
          xo = (yj + 0.5) / scale - 0.5;
          break;
        case Coord::kHalfPixelSymmetric: {
          const double adjustment = static_cast<double>(out) / width;
          const double center = in_d / 2;
          xo = center * (1 - adjustment) + (yj + 0.5) / scale - 0.5;
          break;
        }
        case Coord::kPytorchHalfPixel:
          xo = width == 1 ? -0.5 : (yj + 0.5) / scale - 0.5;
          break;
        case Coord::kAlignCorners:
          xo = width == 1 ? 0.0 : yj * (in_d - 1) / (width - 1);
          break;
        case Coord::kAsymmetric:
          xo = yj / scale;
          break;
        case Coord::kTfHalfPixelForNN:
          xo = (yj + 0.5) / scale;
          break;
        case Coord::kTfCropAndResize:
          xo = width == 1 ? (roi_e - roi_s) * (in_d - 1) / 2 : yj * (roi_e - roi_s) * (in_d - 1) / (width - 1);
          xo += roi_s * (in_d - 1);
          if (xo < 0 || xo > in_d - 1) t.extrap[j] = 1;
          break;
      }
      int64_t* idx = &t.idx[j * t.taps];
      double* w = &t.w[j * t.taps];
      if (!std::isfinite(xo)) xo = 0;  // degenerate roi/scale: any in-range index will do
      const double fl = std::floor(xo);
      const double frac = xo - fl;
      if (mode_ == Mode::kNearest) {
        double n = fl;
        if (frac != 0) {
          switch (nearest_) {
            case Nearest::kRoundPreferFloor: n = frac <= 0.5 ? fl : fl + 1; break;
            case Nearest::kRoundPreferCeil: n = frac < 0.5 ? fl : fl + 1; break;
            case Nearest::kFloor: n = fl; break;
            case Nearest::kCeil: n = fl + 1; break;
            case Nearest::kSimple: n = scale < 1.0 ? fl + 1 : std::trunc(xo); break;
          }
        }
        idx[0] = ClampedIndex(n, in_d);
        w[0] = 1.0;
        continue;
      }
      double sum = 0;
      for (int k = 0; k < t.taps; ++k) {
        const double pos = fl + start + k;
        const double dist = (pos - xo) * s;
        double wk = mode_ == Mode::kLinear ? std::max(0.0, 1.0 - std::fabs(dist)) : CubicWeight(dist, cubic_a_);
        idx[k] = ClampedIndex(pos, in_d);
        if (exclude_outside_ && (pos < 0 || pos > in_d - 1)) wk = 0;
        w[k] = wk;
        sum += wk;
      }
      if ((antialias_ || exclude_outside_) && sum != 0)
        for (int k = 0; k < t.taps; ++k) w[k] /= sum;
    }
    return t;
  }

  template <typename T, typename Acc>
  Status Run(KernelContext& ctx, const Tensor& x, const std::vector<AxisTable>& tables, Tensor* y) const {
    Dims cur = x.dims();
    const int64_t n0 = x.size();
    std::vector<Acc> buf(static_cast<size_t>(n0));
    const T* xv = x.data<T>();
    for (int64_t i = 0; i < n0; ++i) {
      if constexpr (std::is_same<T, float>::value || std::is_same<T, double>::value) buf[i] = xv[i];
      else buf[i] = static_cast<float>(xv[i]);
    }
    const Acc extrap = static_cast<Acc>(extrapolation_);
    for (const AxisTable& t : tables) {
      if (ctx.terminate_requested()) return MakeError(ErrorCode::kFail, "Resize: run terminated on request");
      int64_t outer = 1, inner = 1;
      for (int d = 0; d < t.axis; ++d) outer *= cur[d];
      for (size_t d = t.axis + 1; d < cur.size(); ++d) inner *= cur[d];
      std::vector<Acc> next(static_cast<size_t>(outer * t.out * inner));
      const Acc* src = buf.data();
      Acc* dst = next.data();
      std::vector<Acc> wv(t.w.begin(), t.w.end());
      const int taps = t.taps;
      const int64_t rows = outer * t.out;
      ThreadPool::For(ctx.threads(), rows, std::max<int64_t>(1, 8192 / std::max<int64_t>(inner * taps, 1)),
                      [&](int64_t begin, int64_t end) {
                        for (int64_t row = begin; row < end; ++row) {
                          const int64_t o = row / t.out, j = row % t.out;
                          Acc* out = dst + row * inner;
                          if (!t.extrap.empty() && t.extrap[j]) {
                            std::fill(out, out + inner, extrap);
                            continue;
                          }
                          const int64_t* idx = &t.idx[j * taps];
                          const Acc* w = &wv[j * taps];
                          const Acc* base = src + o * t.in * inner;
                          if (taps == 1) {
                            std::copy(base + idx[0] * inner, base + idx[0] * inner + inner, out);
                            continue;
                          }
                          if (inner == 1) {
                            Acc acc = 0;
                            for (int k = 0; k < taps; ++k) acc += w[k] * base[idx[k]];
                            out[0] = acc;
                            continue;
                          }
                          std::fill(out, out + inner, Acc(0));
                          for (int k = 0; k < taps; ++k) {
                            const Acc wk = w[k];
                            if (wk == Acc(0)) continue;
                            const Acc* s = base + idx[k] * inner;
                            for (int64_t i = 0; i < inner; ++i) out[i] += wk * s[i];
                          }
                        }
                      });
      cur[t.axis] = t.out;
      buf.swap(next);
    }
    T* yv = y->data<T>();
    const int64_t n = y->size();
    for (int64_t i = 0; i < n; ++i) yv[i] = static_cast<T>(buf[i]);
    return Status::OK();
  }

  bool upsample_ = false;
  int opset_ = 0;
  Mode mode_ = Mode::kNearest;
  Coord coord_ = Coord::kHalfPixel;
  Nearest nearest_ = Nearest::kRoundPreferFloor;
  double cubic_a_ = -0.75;
  bool exclude_outside_ = false;
  float extrapolation_ = 0.f;
  bool antialias_ = false;
  std::vector<int64_t> axes_;
  AspectPolicy policy_ = AspectPolicy::kStretch;
  std::vector<double> attr_scales_;  // Upsample 7-8
};

}  // namespace

ONYX_REGISTER_KERNEL(ResizeKernel, "", "Resize", 10, 10, FloatOrHalfTypes());
ONYX_REGISTER_KERNEL(ResizeKernel, "", "Resize", 11, 12, FloatOrHalfTypes());
ONYX_REGISTER_KERNEL(ResizeKernel, "", "Resize", 13, 17, FloatOrHalfTypes());
ONYX_REGISTER_KERNEL(ResizeKernel, "", "Resize", 18, kMaxVersion, FloatOrHalfTypes());
ONYX_REGISTER_KERNEL(ResizeKernel, "", "Upsample", 7, 8, FloatOrHalfTypes());
ONYX_REGISTER_KERNEL(ResizeKernel, "", "Upsample", 9, 10, FloatOrHalfTypes());

}  // namespace onyx

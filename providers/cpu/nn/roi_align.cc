// RoiAlign (opset 10: no coordinate_transformation_mode, i.e. output_half_pixel;
// 16+: half_pixel by default). X [N, C, H, W], rois [R, 4] as (x1, y1, x2, y2),
// batch_indices [R] -> Y [R, C, output_height, output_width]. Each bin takes
// sampling_ratio^2 (or ceil(roi_size / bins) per axis when 0) bilinear samples;
// avg averages them, max takes the largest weighted corner of each sample and
// the largest over samples (what the ONNX reference and onnxruntime do).
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "providers/cpu/common/dispatch.h"
#include "providers/kernel.h"

namespace onyx {
namespace {

struct Sample {
  int64_t pos[4] = {0, 0, 0, 0};
  double w[4] = {0, 0, 0, 0};
};

class RoiAlignKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    const std::string who = info.node().Describe();
    const std::string mode = info.AttrString("mode", "avg");
    ONYX_CHECK(mode == "avg" || mode == "max", ErrorCode::kInvalidGraph, who, ": attribute mode must be avg or max, got '",
               mode, "'");
    max_ = mode == "max";
    oh_ = info.AttrInt("output_height", 1);
    ow_ = info.AttrInt("output_width", 1);
    ONYX_CHECK(oh_ > 0 && ow_ > 0, ErrorCode::kInvalidGraph, who, ": output_height and output_width must be positive");
    sampling_ratio_ = info.AttrInt("sampling_ratio", 0);
    ONYX_CHECK(sampling_ratio_ >= 0, ErrorCode::kInvalidGraph, who, ": attribute sampling_ratio must be >= 0");
    spatial_scale_ = info.AttrFloat("spatial_scale", 1.f);
    if (info.opset() >= 16) {
      const std::string c = info.AttrString("coordinate_transformation_mode", "half_pixel");
      ONYX_CHECK(c == "half_pixel" || c == "output_half_pixel", ErrorCode::kInvalidGraph, who,
                 ": attribute coordinate_transformation_mode must be half_pixel or output_half_pixel, got '", c, "'");
      half_pixel_ = c == "half_pixel";
    }
    return Status::OK();
  }

  Status Compute(KernelContext& ctx) const override {
    const Tensor *x = nullptr, *rois = nullptr, *bi = nullptr;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &x));
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(1, &rois));
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(2, &bi));
    ONYX_CHECK_ARG(x->rank() == 4, "RoiAlign: input 'X' ", ShapeToString(x->dims()), " must be 4-D [N, C, H, W]");
    ONYX_CHECK_ARG(rois->rank() == 2 && rois->dims()[1] == 4, "RoiAlign: input 'rois' ", ShapeToString(rois->dims()),
                   " must be [num_rois, 4]");
    ONYX_CHECK_ARG(rois->type() == x->type(), "RoiAlign: input 'rois' must have the element type of input 'X'");
    ONYX_CHECK_ARG(bi->rank() == 1 && bi->dims()[0] == rois->dims()[0], "RoiAlign: input 'batch_indices' ",
                   ShapeToString(bi->dims()), " must be [", rois->dims()[0], "] to match input 'rois'");
    ONYX_CHECK_ARG(bi->type() == ElemType::kInt64, "RoiAlign: input 'batch_indices' must be int64");
    const int64_t N = x->dims()[0], R = rois->dims()[0];
    for (int64_t r = 0; r < R; ++r) {
      const int64_t b = bi->data<int64_t>()[r];
      ONYX_CHECK_ARG(b >= 0 && b < N, "RoiAlign: input 'batch_indices' value ", b, " at ", r,
                     " is outside [0, ", N, ") (the batch of input 'X' ", ShapeToString(x->dims()), ")");
    }
    for (int64_t r = 0; r < R; ++r) {
      double v[4];
      for (int j = 0; j < 4; ++j)
        v[j] = rois->type() == ElemType::kFloat ? rois->data<float>()[r * 4 + j] : rois->data<double>()[r * 4 + j];
      const double rw = (v[2] - v[0]) * spatial_scale_, rh = (v[3] - v[1]) * spatial_scale_;
      ONYX_CHECK_ARG(std::isfinite(rw) && std::isfinite(rh), "RoiAlign: input 'rois' row ", r, " is not finite");
      const double samples = sampling_ratio_ > 0 ? double(sampling_ratio_) * sampling_ratio_ * oh_ * ow_
                                                 : (std::fabs(rh) + oh_ + 1) * (std::fabs(rw) + ow_ + 1);
      ONYX_CHECK_ARG(samples < double(1 << 28), "RoiAlign: input 'rois' row ", r,
                     " is too large to sample (", rw, " x ", rh, " after spatial_scale)");
    }
    Tensor* y = ctx.Output(0, {R, x->dims()[1], oh_, ow_}, x->type());
    if (y == nullptr || y->size() == 0) return Status::OK();
    return DispatchFloat(x->type(), "RoiAlign", [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      Run<T>(ctx, *x, *rois, *bi, y);
      return Status::OK();
    });
  }

 private:
  template <typename T>
  void Run(KernelContext& ctx, const Tensor& x, const Tensor& rois, const Tensor& bi, Tensor* y) const {
    const int64_t C = x.dims()[1], H = x.dims()[2], W = x.dims()[3], R = rois.dims()[0];
    const T* xv = x.data<T>();
    const T* rv = rois.data<T>();
    const int64_t* bv = bi.data<int64_t>();
    T* yv = y->data<T>();
    // Adaptive sampling takes ceil(roi size / output size) samples per bin: a
    // hostile roi (huge, inf, NaN) would ask for that many (and convert inf).
    for (int64_t r = 0; sampling_ratio_ <= 0 && r < R; ++r) {
      const double h = (rv[r * 4 + 3] - rv[r * 4 + 1]) * spatial_scale_ / oh_;
      const double w = (rv[r * 4 + 2] - rv[r * 4 + 0]) * spatial_scale_ / ow_;
      if (!(h < 65536 && w < 65536))
        ONYX_THROW(ErrorCode::kInvalidArgument, "RoiAlign: roi ", r, " (", rv[r * 4 + 0], ", ", rv[r * 4 + 1], ", ",
                   rv[r * 4 + 2], ", ", rv[r * 4 + 3], ") is too large or not finite for adaptive sampling");
    }
    ThreadPool::For(ctx.threads(), R, 1, [&](int64_t r0, int64_t r1) {
      std::vector<Sample> samples;
      for (int64_t r = r0; r < r1; ++r) {
        const double off = half_pixel_ ? 0.5 : 0.0;
        const double sx = rv[r * 4 + 0] * spatial_scale_ - off, sy = rv[r * 4 + 1] * spatial_scale_ - off;
        const double ex = rv[r * 4 + 2] * spatial_scale_ - off, ey = rv[r * 4 + 3] * spatial_scale_ - off;
        double rw = ex - sx, rh = ey - sy;
        if (!half_pixel_) {
          rw = std::max(rw, 1.0);
          rh = std::max(rh, 1.0);
        }
        const double bh = rh / oh_, bw = rw / ow_;
        const int64_t gh = sampling_ratio_ > 0 ? sampling_ratio_ : static_cast<int64_t>(std::ceil(rh / oh_));
        const int64_t gw = sampling_ratio_ > 0 ? sampling_ratio_ : static_cast<int64_t>(std::ceil(rw / ow_));
        const int64_t gh_n = std::max<int64_t>(gh, 0), gw_n = std::max<int64_t>(gw, 0);
        const double count = static_cast<double>(std::max<int64_t>(gh_n * gw_n, 1));
        samples.assign(static_cast<size_t>(oh_ * ow_ * gh_n * gw_n), Sample{});
        size_t si = 0;
        for (int64_t ph = 0; ph < oh_; ++ph)
          for (int64_t pw = 0; pw < ow_; ++pw)
            for (int64_t iy = 0; iy < gh_n; ++iy) {
              const double yy = sy + ph * bh + (iy + 0.5) * bh / gh_n;
              for (int64_t ix = 0; ix < gw_n; ++ix, ++si) {
                double xx = sx + pw * bw + (ix + 0.5) * bw / gw_n;
                double yc = yy;
                if (!(yc >= -1.0 && yc <= H && xx >= -1.0 && xx <= W)) continue;  // zero weights
                yc = std::max(yc, 0.0);
                xx = std::max(xx, 0.0);
                int64_t yl = static_cast<int64_t>(yc), xl = static_cast<int64_t>(xx), yh, xh;
                if (yl >= H - 1) {
                  yh = yl = H - 1;
                  yc = static_cast<double>(yl);
                } else {
                  yh = yl + 1;
                }
                if (xl >= W - 1) {
                  xh = xl = W - 1;
                  xx = static_cast<double>(xl);
                } else {
                  xh = xl + 1;
                }
                const double ly = yc - yl, lx = xx - xl, hy = 1 - ly, hx = 1 - lx;
                Sample& s = samples[si];
                s.pos[0] = yl * W + xl;
                s.pos[1] = yl * W + xh;
                s.pos[2] = yh * W + xl;
                s.pos[3] = yh * W + xh;
                s.w[0] = hy * hx;
                s.w[1] = hy * lx;
                s.w[2] = ly * hx;
                s.w[3] = ly * lx;
              }
            }
        const int64_t per_bin = gh_n * gw_n;
        for (int64_t c = 0; c < C; ++c) {
          const T* plane = xv + (bv[r] * C + c) * H * W;
          T* out = yv + (r * C + c) * oh_ * ow_;
          for (int64_t b = 0; b < oh_ * ow_; ++b) {
            const Sample* sb = samples.data() + b * per_bin;
            double acc = 0;
            for (int64_t j = 0; j < per_bin; ++j) {
              const Sample& s = sb[j];
              if (!max_) {
                acc += s.w[0] * plane[s.pos[0]] + s.w[1] * plane[s.pos[1]] + s.w[2] * plane[s.pos[2]] +
                       s.w[3] * plane[s.pos[3]];
              } else {
                const double v = std::max(std::max(s.w[0] * plane[s.pos[0]], s.w[1] * plane[s.pos[1]]),
                                          std::max(s.w[2] * plane[s.pos[2]], s.w[3] * plane[s.pos[3]]));
                acc = j == 0 ? v : std::max(acc, v);
              }
            }
            out[b] = static_cast<T>(max_ ? acc : acc / count);
          }
        }
      }
    });
  }

  bool max_ = false;
  int64_t oh_ = 1, ow_ = 1, sampling_ratio_ = 0;
  float spatial_scale_ = 1.f;
  bool half_pixel_ = false;
};

}  // namespace

ONYX_REGISTER_KERNEL(RoiAlignKernel, "", "RoiAlign", 10, 15, FloatTypes());
ONYX_REGISTER_KERNEL(RoiAlignKernel, "", "RoiAlign", 16, kMaxVersion, FloatTypes());

}  // namespace onyx

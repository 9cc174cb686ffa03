// DeformConv (opset 19+, 2-D): a convolution whose kernel taps move by learned
// offsets. For output (i, j) and tap (kh, kw) of offset group g, the input is
// sampled at
//   h = i*stride_h - pad_top  + kh*dilation_h + offset[n, g, kh, kw, 0, i, j]
//   w = j*stride_w - pad_left + kw*dilation_w + offset[n, g, kh, kw, 1, i, j]
// bilinearly (neighbours outside the image read as 0), times mask[n, g, kh,
// kw, i, j] (1 when absent). The sampled values form im2col columns and each
// (image, group) is one GEMM (blas.h), plus the bias. Output sizes are Conv's
// (conv_geometry.h). float16/bfloat16 are computed in float.
#include <algorithm>
#include <cmath>
#include <vector>

#include "providers/cpu/common/dispatch.h"
#include "providers/cpu/common/half_float.h"
#include "providers/cpu/math/blas.h"
#include "providers/cpu/nn/conv_geometry.h"
#include "providers/kernel.h"

namespace onyx {

namespace {

// Bilinear sample of plane `x` ([H, W]) at (h, w), zero outside.
template <typename T>
T Bilinear(const T* x, int64_t H, int64_t W, T h, T w) {
  if (!(h > T(-1) && h < T(H) && w > T(-1) && w < T(W))) return T(0);  // also NaN
  const T hf = std::floor(h), wf = std::floor(w);
  const int64_t h0 = static_cast<int64_t>(hf), w0 = static_cast<int64_t>(wf);
  const T lh = h - hf, lw = w - wf, hh = T(1) - lh, hw = T(1) - lw;
  auto at = [&](int64_t r, int64_t c) { return (r >= 0 && r < H && c >= 0 && c < W) ? x[r * W + c] : T(0); };
  return hh * hw * at(h0, w0) + hh * lw * at(h0, w0 + 1) + lh * hw * at(h0 + 1, w0) + lh * lw * at(h0 + 1, w0 + 1);
}

class DeformConvKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    const char* who = "DeformConv";
    ONYX_RETURN_IF_ERROR(conv::ParseAttrs(info, who, &attrs_));
    ONYX_RETURN_IF_ERROR(conv::CheckAttrValues(attrs_.kernel_shape, 1, who, "kernel_shape"));
    ONYX_RETURN_IF_ERROR(conv::CheckAttrValues(attrs_.strides, 1, who, "strides"));
    ONYX_RETURN_IF_ERROR(conv::CheckAttrValues(attrs_.dilations, 1, who, "dilations"));
    ONYX_RETURN_IF_ERROR(conv::CheckAttrValues(attrs_.pads, 0, who, "pads"));
    ONYX_RETURN_IF_ERROR(conv::CheckPadsCount(attrs_.pads, who));
    offset_group_ = info.AttrInt("offset_group", 1);
    ONYX_CHECK(offset_group_ >= 1, ErrorCode::kInvalidGraph, "DeformConv: attribute offset_group must be >= 1, got ",
               offset_group_);
    return Status::OK();
  }

  Status Compute(KernelContext& ctx) const override {
    const conv::Names nm{"DeformConv", "input 0 (X)", "input 1 (W)"};
    const Tensor* x = nullptr;
    const Tensor* w = nullptr;
    const Tensor* off = nullptr;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &x));
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(1, &w));
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(2, &off));
    const Tensor* bias = ctx.Input(3);
    const Tensor* mask = ctx.Input(4);
    const Dims& xd = x->dims();
    const Dims& wd = w->dims();
    ONYX_CHECK_ARG(xd.size() == 4 && wd.size() == 4, "DeformConv: input 0 (X) ", ShapeToString(xd), " and input 1 (W) ",
                   ShapeToString(wd), " must be 4-D (only 2-D deformable convolution is defined)");
    for (const Tensor* t : {w, off, bias, mask})
      if (t != nullptr)
        ONYX_CHECK_ARG(t->type() == x->type(), "DeformConv: inputs W, offset, B and mask must have the type of X (",
                       ElemTypeName(x->type()), "), got ", ElemTypeName(t->type()));
    const int64_t N = xd[0], C = xd[1], M = wd[0], G = attrs_.group, OG = offset_group_;
    int64_t wc = 0;  // attributes are the model's: their products are checked, not wrapped
    ONYX_CHECK_ARG(G > 0 && OG > 0 && !__builtin_mul_overflow(wd[1], G, &wc) && C == wc, "DeformConv: input 0 (X) ",
                   ShapeToString(xd), " has ", C, " channels but input 1 (W) ", ShapeToString(wd), " and group ", G,
                   " (offset_group ", OG, ") do not match it");
    ONYX_CHECK_ARG(M % G == 0, "DeformConv: input 1 (W) ", ShapeToString(wd), " has ", M,
                   " output channels, not a multiple of group ", G);
    ONYX_CHECK_ARG(C % OG == 0, "DeformConv: input 0 (X) has ", C, " channels, not a multiple of offset_group ", OG);
    conv::Geom g;
    ONYX_RETURN_IF_ERROR(conv::ResolveConv(nm, xd, wd, attrs_, &g));
    const int64_t OH = g.out[0], OW = g.out[1], KH = g.k[0], KW = g.k[1];
    int64_t off_c = 0;
    ONYX_CHECK_ARG(!__builtin_mul_overflow(OG, 2 * KH, &off_c) && !__builtin_mul_overflow(off_c, KW, &off_c),
                   "DeformConv: offset_group ", OG, " times the kernel size is too large");
    const Dims want_off{N, off_c, OH, OW};
    ONYX_CHECK_ARG(off->dims() == want_off, "DeformConv: input 2 (offset) has shape ", ShapeToString(off->dims()),
                   " but must be ", ShapeToString(want_off), " (offset_group * 2 * kH * kW channels over the output)");
    if (mask != nullptr) {
      const Dims want_mask{N, OG * KH * KW, OH, OW};
      ONYX_CHECK_ARG(mask->dims() == want_mask, "DeformConv: input 4 (mask) has shape ", ShapeToString(mask->dims()),
                     " but must be ", ShapeToString(want_mask));
    }
    if (bias != nullptr)
      ONYX_CHECK_ARG(bias->rank() == 1 && bias->dims()[0] == M, "DeformConv: input 3 (B) ",
                     ShapeToString(bias->dims()), " must be [", M, "]");
    Tensor* y = ctx.Output(0, {N, M, OH, OW}, x->type());
    if (y == nullptr || y->size() == 0) return Status::OK();
    if (x->type() == ElemType::kFloat16 || x->type() == ElemType::kBFloat16) {
      return DispatchOver(HalfTypeSet{}, x->type(), "DeformConv", [&](auto tag) -> Status {
        using H = typename decltype(tag)::type;
        Tensor xf = WidenToFloat<H>(*x), wf = WidenToFloat<H>(*w), of = WidenToFloat<H>(*off);
        Tensor bf = bias ? WidenToFloat<H>(*bias) : Tensor(), mf = mask ? WidenToFloat<H>(*mask) : Tensor();
        Tensor yf(ElemType::kFloat, y->dims());
        ONYX_RETURN_IF_ERROR(Run<float>(ctx, xf, wf, of, bias ? &bf : nullptr, mask ? &mf : nullptr, g, &yf));
        NarrowFromFloat<H>(yf, y);
        return Status::OK();
      });
    }
    return DispatchFloat(x->type(), "DeformConv", [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      return Run<T>(ctx, *x, *w, *off, bias, mask, g, y);
    });
  }

 private:
  template <typename T>
  Status Run(KernelContext& ctx, const Tensor& x, const Tensor& w, const Tensor& off, const Tensor* bias,
             const Tensor* mask, const conv::Geom& g, Tensor* y) const {
    const int64_t N = x.dims()[0], C = x.dims()[1], H = x.dims()[2], W = x.dims()[3], M = w.dims()[0];
    const int64_t G = attrs_.group, OG = offset_group_, Cg = C / G, Mg = M / G, Cog = C / OG;
    const int64_t OH = g.out[0], OW = g.out[1], KH = g.k[0], KW = g.k[1], kvol = KH * KW, OS = OH * OW;
    const int64_t Kc = Cg * kvol;
    ONYX_CHECK_ARG(FitsBlasInt(Mg) && FitsBlasInt(Kc) && FitsBlasInt(OS), "DeformConv: input 0 (X) ",
                   ShapeToString(x.dims()), " and input 1 (W) ", ShapeToString(w.dims()), " are too large for one GEMM");
    const T* xv = x.data<T>();
    const T* wv = w.data<T>();
    const T* ov = off.data<T>();
    const T* mv = mask ? mask->data<T>() : nullptr;
    const T* bv = bias ? bias->data<T>() : nullptr;
    T* yv = y->data<T>();
    std::vector<T> cols(static_cast<size_t>(Kc * OS));
    for (int64_t n = 0; n < N; ++n) {
      for (int64_t grp = 0; grp < G; ++grp) {
        if (ctx.terminate_requested()) return MakeError(ErrorCode::kFail, "DeformConv: run terminated on request");
        // Row (c, kh, kw) of the columns: channel grp*Cg + c sampled at the moved taps.
        ThreadPool::For(ctx.threads(), Kc, std::max<int64_t>(1, 4096 / std::max<int64_t>(OS, 1)),
                        [&](int64_t begin, int64_t end) {
          for (int64_t row = begin; row < end; ++row) {
            const int64_t c = grp * Cg + row / kvol, tap = row % kvol, kh = tap / KW, kw = tap % KW;
            const int64_t og = c / Cog;
            const T* plane = xv + (n * C + c) * H * W;
            const T* oh_p = ov + ((n * OG + og) * kvol * 2 + tap * 2) * OS;
            const T* ow_p = oh_p + OS;
            const T* m_p = mv ? mv + ((n * OG + og) * kvol + tap) * OS : nullptr;
            T* dst = cols.data() + row * OS;
            for (int64_t i = 0; i < OH; ++i) {
              const T base_h = static_cast<T>(i * g.s[0] - g.pb[0] + kh * g.d[0]);
              for (int64_t j = 0; j < OW; ++j) {
                const int64_t p = i * OW + j;
                const T base_w = static_cast<T>(j * g.s[1] - g.pb[1] + kw * g.d[1]);
                T v = Bilinear(plane, H, W, base_h + oh_p[p], base_w + ow_p[p]);
                dst[p] = m_p ? v * m_p[p] : v;
              }
            }
          }
        });
        T* yb = yv + (n * M + grp * Mg) * OS;
        BlasGemm<T>(false, false, Mg, OS, Kc, T(1), wv + grp * Mg * Kc, Kc, cols.data(), OS, T(0), yb, OS,
                    ctx.threads());
        if (bv != nullptr)
          for (int64_t m = 0; m < Mg; ++m)
            for (int64_t p = 0; p < OS; ++p) yb[m * OS + p] += bv[grp * Mg + m];
      }
    }
    return Status::OK();
  }

  conv::Attrs attrs_;
  int64_t offset_group_ = 1;
};

}  // namespace

ONYX_REGISTER_KERNEL(DeformConvKernel, "", "DeformConv", 19, kMaxVersion, FloatOrHalfTypes());

}  // namespace onyx

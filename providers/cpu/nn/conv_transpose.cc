// ConvTranspose (NCHW, any number of spatial dims): per (image, group) one
// GEMM makes the column matrix cols[Mg*kvol, in_size] = W_g^T x X_g, and
// col2im scatters it into Y, which starts as the bias.
//
// Output shape and leading pads, per spatial dim (keff = (k-1)*d + 1):
//   output_shape given: out = output_shape; total = s*(in-1) + output_padding
//     + keff - out, clamped at 0; the leading pad is total/2, or total - total/2
//     for SAME_LOWER (what the ONNX reference and the backend tests do).
//   SAME_UPPER/SAME_LOWER: out = in*s, pads split as above.
//   VALID: no pads; NOTSET: out = s*(in-1) + output_padding + keff - pads.
#include <algorithm>
#include <string>
#include <vector>

#include "providers/cpu/common/dispatch.h"
#include "providers/cpu/math/blas.h"
#include "providers/cpu/nn/conv_geometry.h"
#include "providers/kernel.h"

namespace onyx {
namespace {

using conv::AutoPad;
using conv::Geom;
using conv::ValidRange;

// Adds rows [row_begin, row_end) of cols ([Mg*kvol, in_size]) into the Mg
// output planes at y ([Mg, out_size]). Rows of one output channel must be in
// one call so no two threads write the same plane.
template <typename T>
void Col2Im(const T* cols, const Geom& g, int64_t m_begin, int64_t m_end, T* y) {
  const size_t nd = g.nd;
  const int64_t iw_n = g.in[nd - 1], ow_n = g.out[nd - 1], sw = g.s[nd - 1];
  const int64_t outer = g.in_size / std::max<int64_t>(iw_n, 1);
  std::vector<int64_t> kk(nd), i(nd);
  for (int64_t m = m_begin; m < m_end; ++m) {
    T* plane = y + m * g.out_size;
    for (int64_t kr = 0; kr < g.kvol; ++kr) {
      const T* src = cols + (m * g.kvol + kr) * g.in_size;
      conv::KernelTaps(kr, g, &kk);
      const int64_t off_w = kk[nd - 1] * g.d[nd - 1] - g.pb[nd - 1];
      int64_t lo, hi;
      ValidRange(off_w, sw, ow_n, iw_n, &lo, &hi);
      std::fill(i.begin(), i.end(), 0);
      for (int64_t oi = 0; oi < outer; ++oi, src += iw_n) {
        int64_t out_off = 0;
        if (conv::TapRowOffset(g, i, kk, g.out, &out_off) && lo < hi) {
          T* dst = plane + out_off * ow_n + off_w;
          if (sw == 1) {
            for (int64_t w = lo; w < hi; ++w) dst[w] += src[w];
          } else {
            for (int64_t w = lo; w < hi; ++w) dst[w * sw] += src[w];
          }
        }
        conv::NextRowIndex(nd, g.in, &i);
      }
    }
  }
}

class ConvTransposeKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    const std::string who = info.node().Describe();
    ONYX_RETURN_IF_ERROR(conv::ParseAttrs(info, who, &attrs_));
    output_padding_ = info.AttrInts("output_padding");
    output_shape_ = info.AttrInts("output_shape");
    ONYX_RETURN_IF_ERROR(conv::CheckAttrValues(attrs_.strides, 1, who, "strides"));
    ONYX_RETURN_IF_ERROR(conv::CheckAttrValues(attrs_.dilations, 1, who, "dilations"));
    ONYX_RETURN_IF_ERROR(conv::CheckAttrValues(output_padding_, 0, who, "output_padding"));
    ONYX_RETURN_IF_ERROR(conv::CheckAttrValues(output_shape_, 0, who, "output_shape"));
    return conv::CheckPadsCount(attrs_.pads, who);
  }

  Status Compute(KernelContext& ctx) const override {
    const Tensor* x = nullptr;
    const Tensor* w = nullptr;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &x));
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(1, &w));
    const Tensor* bias = ctx.Input(2);
    const Dims& xd = x->dims();
    const Dims& wd = w->dims();
    ONYX_CHECK_ARG(xd.size() >= 3, "ConvTranspose: input 'X' ", ShapeToString(xd),
                   " must have rank >= 3 (N, C, spatial...)");
    ONYX_CHECK_ARG(wd.size() == xd.size(), "ConvTranspose: input 'W' ", ShapeToString(wd),
                   " must have the rank of input 'X' ", ShapeToString(xd));
    ONYX_CHECK_ARG(w->type() == x->type() && (bias == nullptr || bias->type() == x->type()),
                   "ConvTranspose: inputs 'X', 'W' and 'B' must have the same element type");
    const int64_t N = xd[0], C = xd[1];
    ONYX_CHECK_ARG(C == wd[0], "ConvTranspose: input 'X' ", ShapeToString(xd), " has ", C,
                   " channels but input 'W' ", ShapeToString(wd), " expects ", wd[0]);
    ONYX_CHECK_ARG(C % attrs_.group == 0, "ConvTranspose: input 'X' ", ShapeToString(xd), " has ", C,
                   " channels, not a multiple of group ", attrs_.group);
    const int64_t Mg = wd[1], M = Mg * attrs_.group;
    if (bias != nullptr)
      ONYX_CHECK_ARG(bias->rank() == 1 && bias->dims()[0] == M, "ConvTranspose: input 'B' ",
                     ShapeToString(bias->dims()), " must be [", M, "] (output channels of input 'W' ",
                     ShapeToString(wd), " times group ", attrs_.group, ")");
    Geom g;
    ONYX_RETURN_IF_ERROR(Resolve(xd, wd, &g));
    Dims yd{N, M};
    yd.insert(yd.end(), g.out.begin(), g.out.end());
    Tensor* y = ctx.Output(0, yd, x->type());
    if (y == nullptr || y->size() == 0) return Status::OK();
    return DispatchFloat(x->type(), "ConvTranspose", [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      return Run<T>(ctx, *x, *w, bias, g, y);
    });
  }

 private:
  Status Resolve(const Dims& xd, const Dims& wd, Geom* g) const {
    const size_t nd = xd.size() - 2;
    const conv::Names names{"ConvTranspose", "input 'X'", "input 'W'"};
    std::vector<int64_t> pads, opad, oshape;
    ONYX_RETURN_IF_ERROR(
        conv::ResolveCommon(names, xd, wd, attrs_, g, &pads));
    ONYX_RETURN_IF_ERROR(conv::SizedAttr(names, xd, output_padding_, nd, 0, "output_padding", &opad));
    if (!output_shape_.empty()) {
      // Some exporters write the whole shape (N, C, spatial...).
      if (output_shape_.size() == nd + 2) oshape.assign(output_shape_.begin() + 2, output_shape_.end());
      else ONYX_RETURN_IF_ERROR(conv::SizedAttr(names, xd, output_shape_, nd, 0, "output_shape", &oshape));
    }
    for (size_t j = 0; j < nd; ++j) {
      const int64_t in = g->in[j], s = g->s[j], keff = (g->k[j] - 1) * g->d[j] + 1;
      const int64_t natural = s * (in - 1) + opad[j] + keff;
      int64_t out = 0, pb = 0;
      if (!oshape.empty() || attrs_.auto_pad == AutoPad::kSameUpper || attrs_.auto_pad == AutoPad::kSameLower) {
        out = !oshape.empty() ? oshape[j] : in * s;
        const int64_t total = std::max<int64_t>(0, natural - out);
        pb = attrs_.auto_pad == AutoPad::kSameLower ? total - total / 2 : total / 2;
      } else if (attrs_.auto_pad == AutoPad::kValid) {
        out = natural;
      } else {
        pb = pads[j];
        out = natural - pads[j] - pads[j + nd];
      }
      ONYX_CHECK_ARG(out >= 0, "ConvTranspose: input 'X' ", ShapeToString(xd), " with input 'W' ",
                     ShapeToString(wd), " and these pads gives a negative output size along spatial dim ", j);
      g->SetDim(j, out, pb);
    }
    return Status::OK();
  }

  template <typename T>
  Status Run(KernelContext& ctx, const Tensor& x, const Tensor& w, const Tensor* bias, const Geom& g,
             Tensor* y) const {
    const int64_t N = x.dims()[0], C = x.dims()[1], Mg = w.dims()[1], M = Mg * attrs_.group, Cg = C / attrs_.group;
    const int64_t rows = Mg * g.kvol, IS = g.in_size, OS = g.out_size;
    ONYX_CHECK_ARG(FitsBlasInt(rows) && FitsBlasInt(IS) && FitsBlasInt(Cg), "ConvTranspose: input 'X' ",
                   ShapeToString(x.dims()), " and input 'W' ", ShapeToString(w.dims()),
                   " are too large for one GEMM");
    const T* xv = x.data<T>();
    const T* wv = w.data<T>();
    const T* bv = bias ? bias->data<T>() : nullptr;
    T* yv = y->data<T>();

    // Y starts as the bias.
    ThreadPool::For(ctx.threads(), N * M, std::max<int64_t>(1, 16384 / std::max<int64_t>(OS, 1)),
                    [&](int64_t begin, int64_t end) {
                      for (int64_t p = begin; p < end; ++p)
                        std::fill(yv + p * OS, yv + (p + 1) * OS, bv ? bv[p % M] : T(0));
                    });
    // `pool`: null inside work already spread over the pool.
    auto gemm = [&](int64_t n, int64_t grp, T* cols, ThreadPool* pool) {
      BlasGemm<T>(true, false, rows, IS, Cg, T(1), wv + grp * Cg * rows, rows, xv + (n * C + grp * Cg) * IS, IS,
                  T(0), cols, IS, pool);
    };
    auto block = [&](int64_t n, int64_t grp) { return yv + (n * M + grp * Mg) * OS; };

    const double work = static_cast<double>(rows) * IS * Cg;
    const int64_t units = N * attrs_.group;
    if (work <= kBlasSingleThreadWork && units > 1) {
      const int64_t min_chunk = std::max<int64_t>(1, static_cast<int64_t>(65536.0 / std::max(work, 1.0)));
      ThreadPool::For(ctx.threads(), units, min_chunk, [&](int64_t begin, int64_t end) {
        std::vector<T> cols(static_cast<size_t>(rows * IS));
        for (int64_t u = begin; u < end; ++u) {
          const int64_t n = u / attrs_.group, grp = u % attrs_.group;
          gemm(n, grp, cols.data(), nullptr);
          Col2Im<T>(cols.data(), g, 0, Mg, block(n, grp));
        }
      });
      return Status::OK();
    }
    std::vector<T> cols(static_cast<size_t>(rows * IS));
    for (int64_t n = 0; n < N; ++n) {
      for (int64_t grp = 0; grp < attrs_.group; ++grp) {
        if (ctx.terminate_requested()) return MakeError(ErrorCode::kFail, "ConvTranspose: run terminated on request");
        gemm(n, grp, cols.data(), ctx.threads());
        T* yb = block(n, grp);
        ThreadPool::For(ctx.threads(), Mg, std::max<int64_t>(1, 16384 / std::max<int64_t>(g.kvol * IS, 1)),
                        [&](int64_t begin, int64_t end) { Col2Im<T>(cols.data(), g, begin, end, yb); });
      }
    }
    return Status::OK();
  }

  conv::Attrs attrs_;
  std::vector<int64_t> output_padding_, output_shape_;
};

}  // namespace

ONYX_REGISTER_KERNEL(ConvTransposeKernel, "", "ConvTranspose", 1, kMaxVersion, FloatTypes());

}  // namespace onyx

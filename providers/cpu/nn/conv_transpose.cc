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
#include "providers/kernel.h"

namespace onyx {
namespace {

enum class AutoPad { kNotSet, kSameUpper, kSameLower, kValid };

int64_t CeilDiv(int64_t x, int64_t y) { return x >= 0 ? (x + y - 1) / y : -((-x) / y); }

// Indices i in [lo, hi) of [0, n) for which i*stride + off lies in [0, limit).
void ValidRange(int64_t off, int64_t stride, int64_t limit, int64_t n, int64_t* lo, int64_t* hi) {
  *lo = std::min(n, std::max<int64_t>(0, CeilDiv(-off, stride)));
  *hi = std::max(*lo, std::min(n, CeilDiv(limit - off, stride)));
}

struct Geom {
  size_t nd = 0;
  std::vector<int64_t> in, out, k, s, d, pb;
  int64_t in_size = 1, out_size = 1, kvol = 1;
};

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
      int64_t rem = kr;
      for (size_t j = nd; j-- > 0;) {
        kk[j] = rem % g.k[j];
        rem /= g.k[j];
      }
      const int64_t off_w = kk[nd - 1] * g.d[nd - 1] - g.pb[nd - 1];
      int64_t lo, hi;
      ValidRange(off_w, sw, ow_n, iw_n, &lo, &hi);
      std::fill(i.begin(), i.end(), 0);
      for (int64_t oi = 0; oi < outer; ++oi, src += iw_n) {
        bool inside = true;
        int64_t out_off = 0;
        for (size_t j = 0; j + 1 < nd; ++j) {
          const int64_t oj = i[j] * g.s[j] - g.pb[j] + kk[j] * g.d[j];
          inside = inside && oj >= 0 && oj < g.out[j];
          out_off = out_off * g.out[j] + oj;
        }
        if (inside && lo < hi) {
          T* dst = plane + out_off * ow_n + off_w;
          if (sw == 1) {
            for (int64_t w = lo; w < hi; ++w) dst[w] += src[w];
          } else {
            for (int64_t w = lo; w < hi; ++w) dst[w * sw] += src[w];
          }
        }
        for (size_t j = nd - 1; j-- > 0;) {
          if (++i[j] < g.in[j]) break;
          i[j] = 0;
        }
      }
    }
  }
}

class ConvTransposeKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    const std::string who = info.node().Describe();
    const std::string ap = info.AttrString("auto_pad", "NOTSET");
    if (ap == "NOTSET" || ap.empty()) auto_pad_ = AutoPad::kNotSet;
    else if (ap == "SAME_UPPER") auto_pad_ = AutoPad::kSameUpper;
    else if (ap == "SAME_LOWER") auto_pad_ = AutoPad::kSameLower;
    else if (ap == "VALID") auto_pad_ = AutoPad::kValid;
    else return MakeError(ErrorCode::kInvalidGraph, who, ": attribute auto_pad has unknown value '", ap, "'");
    group_ = info.AttrInt("group", 1);
    ONYX_CHECK(group_ >= 1, ErrorCode::kInvalidGraph, who, ": attribute group must be >= 1, got ", group_);
    kernel_shape_ = info.AttrInts("kernel_shape");
    strides_ = info.AttrInts("strides");
    dilations_ = info.AttrInts("dilations");
    pads_ = info.AttrInts("pads");
    output_padding_ = info.AttrInts("output_padding");
    output_shape_ = info.AttrInts("output_shape");
    for (int64_t v : strides_)
      ONYX_CHECK(v > 0, ErrorCode::kInvalidGraph, who, ": attribute strides has a non-positive value ", v);
    for (int64_t v : dilations_)
      ONYX_CHECK(v > 0, ErrorCode::kInvalidGraph, who, ": attribute dilations has a non-positive value ", v);
    for (int64_t v : output_padding_)
      ONYX_CHECK(v >= 0, ErrorCode::kInvalidGraph, who, ": attribute output_padding has a negative value ", v);
    for (int64_t v : output_shape_)
      ONYX_CHECK(v >= 0, ErrorCode::kInvalidGraph, who, ": attribute output_shape has a negative value ", v);
    ONYX_CHECK(pads_.size() % 2 == 0, ErrorCode::kInvalidGraph, who, ": attribute pads has ", pads_.size(),
               " values; it needs two per spatial dim");
    return Status::OK();
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
    ONYX_CHECK_ARG(C % group_ == 0, "ConvTranspose: input 'X' ", ShapeToString(xd), " has ", C,
                   " channels, not a multiple of group ", group_);
    const int64_t Mg = wd[1], M = Mg * group_;
    if (bias != nullptr)
      ONYX_CHECK_ARG(bias->rank() == 1 && bias->dims()[0] == M, "ConvTranspose: input 'B' ",
                     ShapeToString(bias->dims()), " must be [", M, "] (output channels of input 'W' ",
                     ShapeToString(wd), " times group ", group_, ")");
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
    auto sized = [&](const std::vector<int64_t>& v, size_t n, int64_t dflt, const char* name,
                     std::vector<int64_t>* out) -> Status {
      if (v.empty()) {
        out->assign(n, dflt);
        return Status::OK();
      }
      ONYX_CHECK_ARG(v.size() == n, "ConvTranspose: attribute ", name, " has ", v.size(), " values but input 'X' ",
                     ShapeToString(xd), " needs ", n);
      *out = v;
      return Status::OK();
    };
    g->nd = nd;
    g->k.assign(wd.begin() + 2, wd.end());
    for (int64_t v : g->k)
      ONYX_CHECK_ARG(v > 0, "ConvTranspose: input 'W' ", ShapeToString(wd), " has an empty kernel dimension");
    if (!kernel_shape_.empty())
      ONYX_CHECK_ARG(kernel_shape_ == g->k, "ConvTranspose: attribute kernel_shape ", ShapeToString(kernel_shape_),
                     " does not match input 'W' ", ShapeToString(wd));
    std::vector<int64_t> pads, opad, oshape;
    ONYX_RETURN_IF_ERROR(sized(strides_, nd, 1, "strides", &g->s));
    ONYX_RETURN_IF_ERROR(sized(dilations_, nd, 1, "dilations", &g->d));
    ONYX_RETURN_IF_ERROR(sized(pads_, 2 * nd, 0, "pads", &pads));
    ONYX_RETURN_IF_ERROR(sized(output_padding_, nd, 0, "output_padding", &opad));
    if (!output_shape_.empty()) {
      // Some exporters write the whole shape (N, C, spatial...).
      if (output_shape_.size() == nd + 2) oshape.assign(output_shape_.begin() + 2, output_shape_.end());
      else ONYX_RETURN_IF_ERROR(sized(output_shape_, nd, 0, "output_shape", &oshape));
    }
    g->in.assign(xd.begin() + 2, xd.end());
    g->out.resize(nd);
    g->pb.resize(nd);
    for (size_t j = 0; j < nd; ++j) {
      const int64_t in = g->in[j], s = g->s[j], keff = (g->k[j] - 1) * g->d[j] + 1;
      const int64_t natural = s * (in - 1) + opad[j] + keff;
      int64_t out = 0, pb = 0;
      if (!oshape.empty() || auto_pad_ == AutoPad::kSameUpper || auto_pad_ == AutoPad::kSameLower) {
        out = !oshape.empty() ? oshape[j] : in * s;
        const int64_t total = std::max<int64_t>(0, natural - out);
        pb = auto_pad_ == AutoPad::kSameLower ? total - total / 2 : total / 2;
      } else if (auto_pad_ == AutoPad::kValid) {
        out = natural;
      } else {
        pb = pads[j];
        out = natural - pads[j] - pads[j + nd];
      }
      ONYX_CHECK_ARG(out >= 0, "ConvTranspose: input 'X' ", ShapeToString(xd), " with input 'W' ",
                     ShapeToString(wd), " and these pads gives a negative output size along spatial dim ", j);
      g->out[j] = out;
      g->pb[j] = pb;
      g->in_size *= in;
      g->out_size *= out;
      g->kvol *= g->k[j];
    }
    return Status::OK();
  }

  template <typename T>
  Status Run(KernelContext& ctx, const Tensor& x, const Tensor& w, const Tensor* bias, const Geom& g,
             Tensor* y) const {
    const int64_t N = x.dims()[0], C = x.dims()[1], Mg = w.dims()[1], M = Mg * group_, Cg = C / group_;
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
    auto gemm = [&](int64_t n, int64_t grp, T* cols) {
      BlasGemm<T>(true, false, rows, IS, Cg, T(1), wv + grp * Cg * rows, rows, xv + (n * C + grp * Cg) * IS, IS,
                  T(0), cols, IS);
    };
    auto block = [&](int64_t n, int64_t grp) { return yv + (n * M + grp * Mg) * OS; };

    const double work = static_cast<double>(rows) * IS * Cg;
    const int64_t units = N * group_;
    if (work <= kBlasSingleThreadWork && units > 1) {
      const int64_t min_chunk = std::max<int64_t>(1, static_cast<int64_t>(65536.0 / std::max(work, 1.0)));
      ThreadPool::For(ctx.threads(), units, min_chunk, [&](int64_t begin, int64_t end) {
        std::vector<T> cols(static_cast<size_t>(rows * IS));
        for (int64_t u = begin; u < end; ++u) {
          const int64_t n = u / group_, grp = u % group_;
          gemm(n, grp, cols.data());
          Col2Im<T>(cols.data(), g, 0, Mg, block(n, grp));
        }
      });
      return Status::OK();
    }
    std::vector<T> cols(static_cast<size_t>(rows * IS));
    for (int64_t n = 0; n < N; ++n) {
      for (int64_t grp = 0; grp < group_; ++grp) {
        if (ctx.terminate_requested()) return MakeError(ErrorCode::kFail, "ConvTranspose: run terminated on request");
        gemm(n, grp, cols.data());
        T* yb = block(n, grp);
        ThreadPool::For(ctx.threads(), Mg, std::max<int64_t>(1, 16384 / std::max<int64_t>(g.kvol * IS, 1)),
                        [&](int64_t begin, int64_t end) { Col2Im<T>(cols.data(), g, begin, end, yb); });
      }
    }
    return Status::OK();
  }

  AutoPad auto_pad_ = AutoPad::kNotSet;
  int64_t group_ = 1;
  std::vector<int64_t> kernel_shape_, strides_, dilations_, pads_, output_padding_, output_shape_;
};

}  // namespace

ONYX_REGISTER_KERNEL(ConvTransposeKernel, "", "ConvTranspose", 1, kMaxVersion, FloatTypes());

}  // namespace onyx

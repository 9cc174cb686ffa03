// Shared by Conv and ConvTranspose: the auto_pad attribute, the resolved
// per-spatial-dim geometry, and the checks that turn the attributes into it
// (kernel from W, strides/dilations/pads sized to the spatial rank). Each op
// computes its own output size and leading pads from these. Messages name the
// op and the inputs the way the caller spells them (`x_name`, `w_name`).
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "providers/kernel.h"

namespace onyx {
namespace conv {

enum class AutoPad { kNotSet, kSameUpper, kSameLower, kValid };

// `who` starts the error message (an op name or a node description).
inline Status ParseAutoPad(const std::string& s, const std::string& who, AutoPad* out) {
  if (s == "NOTSET" || s.empty()) {
    *out = AutoPad::kNotSet;
  } else if (s == "SAME_UPPER") {
    *out = AutoPad::kSameUpper;
  } else if (s == "SAME_LOWER") {
    *out = AutoPad::kSameLower;
  } else if (s == "VALID") {
    *out = AutoPad::kValid;
  } else {
    return MakeError(ErrorCode::kInvalidGraph, who, ": attribute auto_pad has unknown value '", s, "'");
  }
  return Status::OK();
}

// The attributes Conv and ConvTranspose both have.
struct Attrs {
  AutoPad auto_pad = AutoPad::kNotSet;
  int64_t group = 1;
  std::vector<int64_t> kernel_shape, strides, dilations, pads;
};

// Reads Attrs, checking auto_pad and group; the values of the lists are the
// caller's to check (CheckAttrValues, CheckPadsCount), in its own order.
inline Status ParseAttrs(const KernelInfo& info, const std::string& who, Attrs* a) {
  ONYX_RETURN_IF_ERROR(ParseAutoPad(info.AttrString("auto_pad", "NOTSET"), who, &a->auto_pad));
  a->group = info.AttrInt("group", 1);
  ONYX_CHECK(a->group >= 1, ErrorCode::kInvalidGraph, who, ": attribute group must be >= 1, got ", a->group);
  a->kernel_shape = info.AttrInts("kernel_shape");
  a->strides = info.AttrInts("strides");
  a->dilations = info.AttrInts("dilations");
  a->pads = info.AttrInts("pads");
  return Status::OK();
}

// Every value of attribute `name` is >= `min` (1: "non-positive", 0: "negative").
inline Status CheckAttrValues(const std::vector<int64_t>& v, int64_t min, const std::string& who, const char* name) {
  for (int64_t x : v)
    ONYX_CHECK(x >= min, ErrorCode::kInvalidGraph, who, ": attribute ", name, " has a ",
               min > 0 ? "non-positive" : "negative", " value ", x);
  return Status::OK();
}

inline Status CheckPadsCount(const std::vector<int64_t>& pads, const std::string& who) {
  ONYX_CHECK(pads.size() % 2 == 0, ErrorCode::kInvalidGraph, who, ": attribute pads has ", pads.size(),
             " values; it needs two per spatial dim");
  return Status::OK();
}

// Shapes of one convolution with everything resolved to explicit numbers.
struct Geom {
  size_t nd = 0;                              // spatial dims
  std::vector<int64_t> in, out, k, s, d, pb;  // per spatial dim; pb = leading pad
  int64_t in_size = 1, out_size = 1, kvol = 1;

  // Records spatial dim j's output size and leading pad.
  void SetDim(size_t j, int64_t out_j, int64_t pb_j) {
    out[j] = out_j;
    pb[j] = pb_j;
    in_size *= in[j];
    out_size *= out_j;
    kvol *= k[j];
  }
};

// Returns x/y rounded up, for y > 0 and any x.
inline int64_t CeilDiv(int64_t x, int64_t y) { return x >= 0 ? (x + y - 1) / y : -((-x) / y); }

// Indices i in [lo, hi) of [0, n) for which i*stride + off lies in [0, limit).
inline void ValidRange(int64_t off, int64_t stride, int64_t limit, int64_t n, int64_t* lo, int64_t* hi) {
  *lo = std::min(n, std::max<int64_t>(0, CeilDiv(-off, stride)));
  *hi = std::max(*lo, std::min(n, CeilDiv(limit - off, stride)));
}

// The walk shared by Im2Col (Conv) and Col2Im (ConvTranspose): for kernel
// position r in [0, kvol), taps kk per dim; then, over an index `idx` of all
// spatial dims but the last, the positions idx[j]*s[j] - pb[j] + kk[j]*d[j]
// in a grid of extent `limit` (g.in for Im2Col, g.out for Col2Im).
inline void KernelTaps(int64_t r, const Geom& g, std::vector<int64_t>* kk) {
  for (size_t j = g.nd; j-- > 0;) {
    (*kk)[j] = r % g.k[j];
    r /= g.k[j];
  }
}

// The row-major offset of those positions over dims [0, nd - 1) of `limit`;
// false when one falls outside.
inline bool TapRowOffset(const Geom& g, const std::vector<int64_t>& idx, const std::vector<int64_t>& kk,
                         const std::vector<int64_t>& limit, int64_t* off) {
  int64_t o = 0;
  for (size_t j = 0; j + 1 < g.nd; ++j) {
    const int64_t p = idx[j] * g.s[j] - g.pb[j] + kk[j] * g.d[j];
    if (p < 0 || p >= limit[j]) return false;
    o = o * limit[j] + p;
  }
  *off = o;
  return true;
}

// Steps `idx` to the next index over dims [0, nd - 1) of `extent`, row-major.
inline void NextRowIndex(size_t nd, const std::vector<int64_t>& extent, std::vector<int64_t>* idx) {
  for (size_t j = nd - 1; j-- > 0;) {
    if (++(*idx)[j] < extent[j]) break;
    (*idx)[j] = 0;
  }
}

// Names for the messages of one op: "Conv" with "input X"/"weight W", or
// "ConvTranspose" with "input 'X'"/"input 'W'".
struct Names {
  const char* op;
  const char* x;
  const char* w;
};

// `v` with `n` values, or `n` copies of `dflt` when the attribute is absent.
inline Status SizedAttr(const Names& nm, const Dims& xd, const std::vector<int64_t>& v, size_t n, int64_t dflt,
                        const char* name, std::vector<int64_t>* out) {
  if (v.empty()) {
    out->assign(n, dflt);
    return Status::OK();
  }
  ONYX_CHECK_ARG(v.size() == n, nm.op, ": attribute ", name, " has ", v.size(), " values but ", nm.x, " ",
                 ShapeToString(xd), " needs ", n);
  *out = v;
  return Status::OK();
}

// Fills g's nd, in, k (from W, checked against kernel_shape), s, d, and sizes
// out/pb; returns the pads sized to 2*nd. The caller then sets each dim with
// Geom::SetDim.
inline Status ResolveCommon(const Names& nm, const Dims& xd, const Dims& wd, const Attrs& a, Geom* g,
                            std::vector<int64_t>* pads) {
  const size_t nd = xd.size() - 2;
  g->nd = nd;
  g->k.assign(wd.begin() + 2, wd.end());
  for (int64_t v : g->k)
    ONYX_CHECK_ARG(v > 0, nm.op, ": ", nm.w, " ", ShapeToString(wd), " has an empty kernel dimension");
  if (!a.kernel_shape.empty())
    ONYX_CHECK_ARG(a.kernel_shape == g->k, nm.op, ": attribute kernel_shape ", ShapeToString(a.kernel_shape),
                   " does not match ", nm.w, " ", ShapeToString(wd));
  ONYX_RETURN_IF_ERROR(SizedAttr(nm, xd, a.strides, nd, 1, "strides", &g->s));
  ONYX_RETURN_IF_ERROR(SizedAttr(nm, xd, a.dilations, nd, 1, "dilations", &g->d));
  ONYX_RETURN_IF_ERROR(SizedAttr(nm, xd, a.pads, 2 * nd, 0, "pads", pads));
  g->in.assign(xd.begin() + 2, xd.end());
  g->out.resize(nd);
  g->pb.resize(nd);
  return Status::OK();
}

// Conv's geometry (also ConvInteger's, QLinearConv's, DeformConv's): the
// output size of each spatial dim from pads or auto_pad, and its leading pad.
inline Status ResolveConv(const Names& nm, const Dims& xd, const Dims& wd, const Attrs& attrs, Geom* g) {
  const size_t nd = xd.size() - 2;
  std::vector<int64_t> pads;
  ONYX_RETURN_IF_ERROR(ResolveCommon(nm, xd, wd, attrs, g, &pads));
  for (size_t j = 0; j < nd; ++j) {
    const int64_t in = g->in[j], keff = (g->k[j] - 1) * g->d[j] + 1, s = g->s[j];
    int64_t out = 0, pb = 0;
    switch (attrs.auto_pad) {
      case AutoPad::kNotSet:
        pb = pads[j];
        out = in + pads[j] + pads[j + nd] >= keff ? (in + pads[j] + pads[j + nd] - keff) / s + 1 : 0;
        break;
      case AutoPad::kValid:
        out = in >= keff ? (in - keff) / s + 1 : 0;
        break;
      case AutoPad::kSameUpper:
      case AutoPad::kSameLower: {
        out = CeilDiv(in, s);
        const int64_t total = std::max<int64_t>(0, (out - 1) * s + keff - in);
        pb = attrs.auto_pad == AutoPad::kSameUpper ? total / 2 : total - total / 2;
        break;
      }
    }
    ONYX_CHECK_ARG(out > 0 || in == 0, nm.op, ": ", nm.x, " ", ShapeToString(xd),
                   " is smaller than the (dilated, padded) kernel of ", nm.w, " ", ShapeToString(wd));
    g->SetDim(j, out, pb);
  }
  return Status::OK();
}

// Fills rows [row_begin, row_end) of the [C*kvol, out_size] column matrix for
// the channels starting at `x` ([C, in...]); padding reads as `pad`.
template <typename T>
void Im2Col(const T* x, const Geom& g, int64_t row_begin, int64_t row_end, T* col, T pad = T(0)) {
  const size_t nd = g.nd;
  const int64_t ow_n = g.out[nd - 1], iw_n = g.in[nd - 1], sw = g.s[nd - 1];
  const int64_t outer = g.out_size / std::max<int64_t>(ow_n, 1);
  std::vector<int64_t> kk(nd), o(nd);
  for (int64_t row = row_begin; row < row_end; ++row) {
    const T* xc = x + (row / g.kvol) * g.in_size;
    KernelTaps(row % g.kvol, g, &kk);
    const int64_t off_w = kk[nd - 1] * g.d[nd - 1] - g.pb[nd - 1];
    int64_t lo, hi;
    ValidRange(off_w, sw, iw_n, ow_n, &lo, &hi);
    T* dst = col + row * g.out_size;
    std::fill(o.begin(), o.end(), 0);
    for (int64_t oi = 0; oi < outer; ++oi, dst += ow_n) {
      int64_t in_off = 0;
      if (!TapRowOffset(g, o, kk, g.in, &in_off)) {
        std::fill(dst, dst + ow_n, pad);
      } else {
        const T* src = xc + in_off * iw_n + off_w;
        std::fill(dst, dst + lo, pad);
        if (sw == 1) {
          std::copy(src + lo, src + hi, dst + lo);
        } else {
          for (int64_t w = lo; w < hi; ++w) dst[w] = src[w * sw];
        }
        std::fill(dst + hi, dst + ow_n, pad);
      }
      NextRowIndex(nd, g.out, &o);
    }
  }
}

}  // namespace conv
}  // namespace onyx

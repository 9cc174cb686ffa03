// ConvInteger (opset 10+) and QLinearConv (opset 10+): Conv's geometry
// (providers/cpu/nn/conv_geometry.h) over int8/uint8 data less its zero
// points; x's zero point is per tensor, w's per tensor or per output channel.
// Padding reads as the zero point (zero once it is subtracted), as in the
// reference and onnxruntime. The sums come exactly from an integer GEMM per
// (image, group) (int8gemm::Gemm, int8_gemm.h). Where a group has enough
// input and output channels (UsePositionRows) the GEMM's rows are output
// positions (AccumulateByPosition): x goes channels-last once per image, the
// GEMM reads each row's taps where they lie in that copy (GemmArgs::a_rows;
// x's own rows for a 1x1 kernel), and w, B [taps x channels, output
// channels], is packed once at Init when constant, so the packed panels are
// full; with uint8 x and w's zero points 0, x's zero point is a per-channel
// offset the epilogue adds (zx times w's column sums). Otherwise (few
// channels: the first conv of an image net, depthwise) the rows are output
// channels of w over im2col columns of x. ConvInteger returns the sums as
// int32, QLinearConv adds the int32 bias and requantizes each output channel
// with x_scale * w_scale[m] / y_scale in float, as onnxruntime does
// (int8gemm::RequantizeFloat*; why not the reference's double: see
// qlinear_matmul.cc).
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <vector>

#include "providers/cpu/common/transpose_bytes.h"
#include "providers/cpu/math/blas.h"
#include "providers/cpu/nn/conv_geometry.h"
#include "providers/cpu/quantization/int8_gemm.h"
#include "providers/cpu/quantization/qlinear_common.h"
#include "providers/kernel.h"

namespace onyx {

namespace {

using qlinear::Int8TypeSet;

Status ParseConvAttrs(const KernelInfo& info, const char* op, conv::Attrs* a) {
  ONYX_RETURN_IF_ERROR(conv::ParseAttrs(info, op, a));
  ONYX_RETURN_IF_ERROR(conv::CheckAttrValues(a->kernel_shape, 1, op, "kernel_shape"));
  ONYX_RETURN_IF_ERROR(conv::CheckAttrValues(a->strides, 1, op, "strides"));
  ONYX_RETURN_IF_ERROR(conv::CheckAttrValues(a->dilations, 1, op, "dilations"));
  ONYX_RETURN_IF_ERROR(conv::CheckAttrValues(a->pads, 0, op, "pads"));
  return conv::CheckPadsCount(a->pads, op);
}

// x's dims as [N, C, spatial...]: channels-last x is [N, spatial..., C].
Dims ChannelsFirst(const Dims& d, bool channels_last) {
  if (!channels_last || d.size() < 3) return d;
  Dims out{d[0], d.back()};
  out.insert(out.end(), d.begin() + 1, d.end() - 1);
  return out;
}

// Checks x and w against each other and the attributes; fills the geometry
// and the output dims [N, M, out...] ([N, out..., M] channels-last).
Status ResolveShapes(const conv::Names& nm, const conv::Attrs& a, const Tensor& x, const Tensor& w, bool channels_last,
                     conv::Geom* g, Dims* yd) {
  const Dims xd = ChannelsFirst(x.dims(), channels_last);
  const std::string xs = ShapeToString(x.dims());
  const Dims& wd = w.dims();
  ONYX_CHECK_ARG(xd.size() >= 3, nm.op, ": ", nm.x, " ", xs, " must have rank >= 3 (",
                 channels_last ? "N, spatial..., C" : "N, C, spatial...", ")");
  ONYX_CHECK_ARG(wd.size() == xd.size(), nm.op, ": ", nm.w, " ", ShapeToString(wd), " must have the rank of ", nm.x,
                 " ", xs);
  const int64_t C = xd[1], M = wd[0];
  ONYX_CHECK_ARG(C == wd[1] * a.group, nm.op, ": ", nm.x, " ", xs, " has ", C, " channels but ", nm.w, " ",
                 ShapeToString(wd), " expects ", wd[1] * a.group, " (group ", a.group, ")");
  ONYX_CHECK_ARG(M % a.group == 0, nm.op, ": ", nm.w, " ", ShapeToString(wd), " has ", M,
                 " output channels, not a multiple of group ", a.group);
  ONYX_RETURN_IF_ERROR(conv::ResolveConv(nm, xd, wd, a, g));
  *yd = {xd[0]};
  if (!channels_last) yd->push_back(M);
  yd->insert(yd->end(), g->out.begin(), g->out.end());
  if (channels_last) yd->push_back(M);
  return Status::OK();
}

// Receives output channels [m0, m1) and output positions [p0, p1) of image
// n: acc(m, p) = c[(m - m0) * sm + (p - p0) * sp] + off[m - m0] (sp == 1:
// rows of channels; sm == 1: rows of positions), the addition wrapping in
// int32; off may be null (0).
using ConvEpilogue = std::function<void(int64_t n, int64_t m0, int64_t m1, int64_t p0, int64_t p1, const int32_t* c,
                                        int64_t sm, int64_t sp, const int32_t* off)>;

// A 1x1, stride-1, unpadded kernel: x itself is the im2col matrix.
bool IsPointwise(const conv::Geom& g) {
  bool pointwise = true;
  for (size_t j = 0; j < g.nd; ++j)
    pointwise = pointwise && g.k[j] == 1 && g.s[j] == 1 && g.pb[j] == 0 && g.out[j] == g.in[j];
  return pointwise;
}

// Spatial dims the position-row path walks, at most.
constexpr size_t kMaxTapDims = 8;

// Whether a conv with weights of shape `wd` [M, Cg, taps...] in `group`
// groups runs with output positions as the GEMM's rows (see the top of the
// file): the packed panels hold 64 output channels, so a group needs enough
// of them; its taps are read (or copied) Cg bytes at a time, so it needs
// enough input channels too (an image's first conv, 3 channels and 7x7
// taps, measured 1.3x slower this way from [N, C, H, W]). Channels-last x
// with one group of few channels and 2-D taps gathers each row of taps in
// one copy (GatherTaps) where the taps hold 64 values or more: that first
// conv from [N, H, W, C], 1186 -> 880 us at 224x224 (the other path would
// take x back to channel planes first).
bool UsePositionRows(const Dims& wd, int64_t group, bool channels_last) {
  if (wd.size() < 3 || wd.size() - 2 > kMaxTapDims || group < 1 || wd[0] / group < 16) return false;
  if (wd[1] >= 8) return true;
  return channels_last && group == 1 && wd.size() == 4 && wd[1] * wd[2] * wd[3] >= 64;
}

// The channels a group takes in the channels-last copy of x and in the
// packed w: with one group of 8 or more, Cg rounded up to a multiple of 4
// (so each group of 4 values of K lies in one tap and the taps are read in
// place); the added channels of x hold its zero point, which makes their
// products 0 whatever w holds there (0). Fewer channels are gathered as
// they are.
int64_t PaddedChannels(int64_t Cg, int64_t group) { return group == 1 && Cg >= 8 ? (Cg + 3) / 4 * 4 : Cg; }

// w [M, Cg, taps...] of each group as B [kvol * Cp, Mg] (row k = tap * Cp +
// channel, the order of the gathered rows; rows of channels >= Cg are 0),
// packed: the group's [Mg, Cg * kvol] block transposed, its rows then put in
// tap-major order.
void PackConvWeights(const uint8_t* w, bool w_signed, int64_t group, int64_t Mg, int64_t Cg, int64_t Cp,
                     int64_t kvol, std::vector<int8gemm::PackedB>* out) {
  const int64_t K = kvol * Cp;
  std::vector<uint8_t> t(static_cast<size_t>(Cg * kvol * Mg)), b(static_cast<size_t>(K * Mg), 0);
  out->clear();
  for (int64_t grp = 0; grp < group; ++grp) {
    TransposeBytes(w + grp * Mg * Cg * kvol, Mg, Cg * kvol, t.data(), Mg, nullptr);  // t[c * kvol + tap][m]
    for (int64_t c = 0; c < Cg; ++c)
      for (int64_t tap = 0; tap < kvol; ++tap)
        std::memcpy(b.data() + (tap * Cp + c) * Mg, t.data() + (c * kvol + tap) * Mg, static_cast<size_t>(Mg));
    out->push_back(int8gemm::PackedB::Pack(b.data(), w_signed, K, Mg, Mg));
  }
}

// The taps of one output position: Next() walks them in order (the last
// spatial dim fastest), giving the input offset (in positions) each reads, or
// -1 outside the input.
class TapWalk {
 public:
  TapWalk(const conv::Geom& g, int64_t p) : g_(g) {
    for (size_t j = g.nd; j-- > 0;) {
      base_[j] = (p % g.out[j]) * g.s[j] - g.pb[j];
      p /= g.out[j];
      kk_[j] = 0;
    }
  }
  int64_t Next() {
    int64_t off = 0;
    bool inside = true;
    for (size_t j = 0; j < g_.nd; ++j) {
      const int64_t i = base_[j] + kk_[j] * g_.d[j];
      inside = inside && i >= 0 && i < g_.in[j];
      off = off * g_.in[j] + i;
    }
    for (size_t j = g_.nd; j-- > 0;) {
      if (++kk_[j] < g_.k[j]) break;
      kk_[j] = 0;
    }
    return inside ? off : -1;
  }

 private:
  const conv::Geom& g_;
  int64_t base_[kMaxTapDims], kk_[kMaxTapDims];
};

// Rows [p0, p1) of the channels-last im2col of one group: row p holds, tap
// by tap, the group's Cg channels at the input position the tap reads
// (x: channels-last with C channels, from the group's first channel), or
// `pad` outside the input.
void GatherTaps(const uint8_t* x, int64_t C, int64_t Cg, const conv::Geom& g, uint8_t pad, int64_t p0, int64_t p1,
                uint8_t* rows) {
  if (g.nd == 2 && C == Cg && g.d[1] == 1) {
    // A row of taps inside the input is KW * C contiguous bytes of x.
    const int64_t OW = g.out[1], IH = g.in[0], IW = g.in[1], KH = g.k[0], KW = g.k[1], run = KW * C;
    for (int64_t p = p0; p < p1; ++p) {
      uint8_t* dst = rows + p * g.kvol * Cg;
      const int64_t ih0 = (p / OW) * g.s[0] - g.pb[0], iw0 = (p % OW) * g.s[1] - g.pb[1];
      const bool cols_in = iw0 >= 0 && iw0 + KW <= IW;
      for (int64_t kh = 0; kh < KH; ++kh, dst += run) {
        const int64_t ih = ih0 + kh * g.d[0];
        if (ih < 0 || ih >= IH) {
          std::memset(dst, pad, static_cast<size_t>(run));
        } else if (cols_in) {
          std::memcpy(dst, x + (ih * IW + iw0) * C, static_cast<size_t>(run));
        } else {
          for (int64_t kw = 0; kw < KW; ++kw) {
            const int64_t iw = iw0 + kw;
            if (iw >= 0 && iw < IW)
              std::memcpy(dst + kw * C, x + (ih * IW + iw) * C, static_cast<size_t>(C));
            else
              std::memset(dst + kw * C, pad, static_cast<size_t>(C));
          }
        }
      }
    }
    return;
  }
  for (int64_t p = p0; p < p1; ++p) {
    uint8_t* dst = rows + p * g.kvol * Cg;
    TapWalk taps(g, p);
    for (int64_t t = 0; t < g.kvol; ++t, dst += Cg) {
      const int64_t off = taps.Next();
      if (off >= 0)
        std::memcpy(dst, x + off * C, static_cast<size_t>(Cg));
      else
        std::memset(dst, pad, static_cast<size_t>(Cg));
    }
  }
}

// GemmArgs::a_rows of the rows GatherTaps would write, for Cg % 4 == 0:
// for output positions [p0, p1), the address of each tap's Cg channels, or
// of pad_row (Cg bytes of the pad value) outside the input.
void TapAddresses(const uint8_t* x, int64_t C, const conv::Geom& g, const uint8_t* pad_row, int64_t p0, int64_t p1,
                  const uint8_t** out) {
  if (g.nd == 2) {  // the common case, without TapWalk's loops over dims
    const int64_t OW = g.out[1], IH = g.in[0], IW = g.in[1];
    for (int64_t p = p0; p < p1; ++p) {
      const int64_t ih0 = (p / OW) * g.s[0] - g.pb[0], iw0 = (p % OW) * g.s[1] - g.pb[1];
      for (int64_t kh = 0; kh < g.k[0]; ++kh) {
        const int64_t ih = ih0 + kh * g.d[0];
        const bool row_in = ih >= 0 && ih < IH;
        for (int64_t kw = 0; kw < g.k[1]; ++kw) {
          const int64_t iw = iw0 + kw * g.d[1];
          *out++ = row_in && iw >= 0 && iw < IW ? x + (ih * IW + iw) * C : pad_row;
        }
      }
    }
    return;
  }
  for (int64_t p = p0; p < p1; ++p) {
    TapWalk taps(g, p);
    for (int64_t t = 0; t < g.kvol; ++t) {
      const int64_t off = taps.Next();
      *out++ = off >= 0 ? x + off * C : pad_row;
    }
  }
}

// Accumulate (below) with output positions as the GEMM's rows; `packed`: w
// packed by PackConvWeights (null: packed now). Channels-last x is read in
// place when no channels need padding.
Status AccumulateByPosition(KernelContext& ctx, int64_t group, const Tensor& x, bool channels_last, int32_t zx,
                            const Tensor& w, const std::vector<int32_t>& zw, const conv::Geom& g,
                            const std::vector<int8gemm::PackedB>* packed, const ConvEpilogue& emit) {
  const int64_t N = x.dims()[0], C = channels_last ? x.dims().back() : x.dims()[1], M = w.dims()[0];
  const int64_t Cg = C / group, Mg = M / group, OS = g.out_size;
  // Channels per group and in all of the channels-last copy of x (padded:
  // PaddedChannels), values of K per output position.
  const int64_t Cp = PaddedChannels(Cg, group), Ct = Cp * group, Kc = Cp * g.kvol;
  thread_local std::vector<int8gemm::PackedB> packed_now;
  if (packed == nullptr) {
    PackConvWeights(static_cast<const uint8_t*>(w.raw()), w.type() == ElemType::kInt8, group, Mg, Cg, Cp, g.kvol,
                    &packed_now);
    packed = &packed_now;
  }
  const bool pointwise = IsPointwise(g);
  const uint8_t pad = static_cast<uint8_t>(zx);  // zx's own bit pattern in x's type
  const uint8_t* xv = static_cast<const uint8_t*>(x.raw());
  ThreadPool* pool = ctx.threads();
  thread_local std::vector<uint8_t> xt, rows;
  const bool in_place = channels_last && Ct == C;
  if (!in_place) xt.resize(static_cast<size_t>(Ct * g.in_size));
  // The GEMM reads the taps where they lie in x (by address) when each group
  // of 4 values of K lies in one tap; else they are gathered into `rows`.
  // (A 1x1 kernel's rows are x's own: packed from there when they serve
  // several panels of 64 output channels, measured faster than reading them
  // in place.)
  const bool pack_taps = Cp % 4 == 0 && Cp >= 8 && (!pointwise || Mg <= 64);
  if (!pointwise && !pack_taps) rows.resize(static_cast<size_t>(OS * Kc));
  const std::vector<uint8_t> pad_row(static_cast<size_t>(Cp), pad);
  std::vector<int32_t> off(static_cast<size_t>(Mg));
  uint8_t* const rowp = rows.data();
  for (int64_t n = 0; n < N; ++n) {
    if (ctx.terminate_requested()) return MakeError(ErrorCode::kFail, "QLinearConv: run terminated on request");
    const uint8_t* xn = xv + n * C * g.in_size;  // image n, channels-last with Ct channels
    if (!in_place) {
      uint8_t* const xtp = xt.data();
      if (channels_last)
        for (int64_t p = 0; p < g.in_size; ++p) std::memcpy(xtp + p * Ct, xn + p * C, static_cast<size_t>(C));
      else
        TransposeBytes(xn, C, g.in_size, xtp, Ct, pool);
      if (Ct > C)
        for (int64_t p = 0; p < g.in_size; ++p) std::memset(xtp + p * Ct + C, pad, static_cast<size_t>(Ct - C));
      xn = xtp;
    }
    for (int64_t grp = 0; grp < group; ++grp) {
      int8gemm::GemmArgs args;
      args.M = OS;
      args.a = xn + grp * Cp;
      args.lda = Ct;
      if (pack_taps) {
        const uint8_t* xg = xn + grp * Cp;
        args.a_rows = [&, xg](int64_t p0, int64_t p1, const uint8_t** out) {
          TapAddresses(xg, Ct, g, pad_row.data(), p0, p1, out);
        };
        args.a_segments = g.kvol;
      } else if (!pointwise) {
        ThreadPool::For(pool, OS, std::max<int64_t>(1, 16384 / std::max<int64_t>(Kc, 1)),
                        [&](int64_t begin, int64_t end) {
                          GatherTaps(xn + grp * Cp, Ct, Cp, g, pad, begin, end, rowp);
                        });
        args.a = rowp;
        args.lda = Kc;
      }
      args.a_signed = x.type() == ElemType::kInt8;
      args.za = &zx;
      args.zb = zw.data() + grp * Mg;
      args.zb_per_column = true;
      // With uint8 x and int8 w of zero point 0 the zero point of x only
      // takes zx * (column sum of w) from each channel: the epilogue does
      // that (off), and the GEMM has nothing to correct.
      const int8gemm::PackedB& pw = (*packed)[grp];
      bool fold = !args.a_signed && !pw.shifted();
      for (int64_t m = 0; m < Mg && fold; ++m) fold = zw[grp * Mg + m] == 0;
      if (fold) {
        args.za = nullptr;
        for (int64_t m = 0; m < Mg; ++m)
          off[m] = static_cast<int32_t>(0u - static_cast<uint32_t>(zx) * static_cast<uint32_t>(pw.col_sums()[m]));
      }
      const int32_t* offp = fold ? off.data() : nullptr;
      args.epilogue = [&](int64_t p0, int64_t p1, int64_t m0, int64_t m1, const int32_t* c, int64_t ldc) {
        emit(n, grp * Mg + m0, grp * Mg + m1, p0, p1, c, 1, ldc, offp ? offp + m0 : nullptr);
      };
      int8gemm::Gemm(args, (*packed)[grp], pool);
    }
  }
  return Status::OK();
}

// acc[n, m, :] = sum over channels of the group and kernel taps of
// (x - zx) * (w[m] - zw[m]), exact: AccumulateByPosition where
// UsePositionRows, else per (image, group) one int8gemm::Gemm of w [Mg, Kc]
// by the im2col columns of x [Kc, out] (x itself for a 1x1, stride-1,
// unpadded kernel), whose padding reads as zx. `packed`: w as
// ConstantConvWeights packed it (null: packed now where needed);
// `channels_last`: x is [N, spatial..., C] (the output's layout is emit's).
Status Accumulate(KernelContext& ctx, const conv::Names& nm, int64_t group, const Tensor& x, bool channels_last,
                  int32_t zx, const Tensor& w, const std::vector<int32_t>& zw, const conv::Geom& g,
                  const std::vector<int8gemm::PackedB>* packed, const ConvEpilogue& emit) {
  const int64_t N = x.dims()[0], C = channels_last ? x.dims().back() : x.dims()[1], M = w.dims()[0];
  const int64_t Cg = C / group, Mg = M / group, Kc = Cg * g.kvol, OS = g.out_size;
  ONYX_CHECK_ARG(FitsBlasInt(Mg) && FitsBlasInt(Kc) && FitsBlasInt(OS), nm.op, ": ", nm.x, " ",
                 ShapeToString(x.dims()), " and ", nm.w, " ", ShapeToString(w.dims()), " are too large for one GEMM");
  if (N * M * OS == 0) return Status::OK();
  for (const Tensor* t : {&x, &w})
    ONYX_RETURN_IF_ERROR(DispatchOver(Int8TypeSet{}, t->type(), nm.op, [](auto) { return Status::OK(); }));
  if (UsePositionRows(w.dims(), group, channels_last))
    return AccumulateByPosition(ctx, group, x, channels_last, zx, w, zw, g, packed, emit);
  const bool pointwise = IsPointwise(g);
  const bool x_signed = x.type() == ElemType::kInt8;
  const uint8_t pad = static_cast<uint8_t>(zx);  // zx's own bit pattern in x's type
  const uint8_t* xv = static_cast<const uint8_t*>(x.raw());
  // This path reads channel planes: channels-last x goes channels-first once.
  thread_local std::vector<uint8_t> planes;
  if (channels_last) {
    planes.resize(static_cast<size_t>(N * C * g.in_size));
    for (int64_t n = 0; n < N; ++n)
      TransposeBytes(xv + n * C * g.in_size, g.in_size, C, planes.data() + n * C * g.in_size, g.in_size, ctx.threads());
    xv = planes.data();
  }
  const uint8_t* wv = static_cast<const uint8_t*>(w.raw());
  // One (image, group); `pool` (may be null) parallelises inside it.
  auto unit = [&](int64_t u, std::vector<uint8_t>* cols, ThreadPool* pool) {
    const int64_t n = u / group, grp = u % group;
    const uint8_t* src = xv + (n * C + grp * Cg) * g.in_size;
    if (!pointwise) {
      cols->resize(static_cast<size_t>(Kc * OS));
      ThreadPool::For(pool, Kc, std::max<int64_t>(1, 16384 / std::max<int64_t>(OS, 1)),
                      [&](int64_t begin, int64_t end) { conv::Im2Col<uint8_t>(src, g, begin, end, cols->data(), pad); });
      src = cols->data();
    }
    thread_local int8gemm::PackedB packed;  // storage reused across runs
    packed.Repack(src, x_signed, Kc, OS, OS, pool);
    int8gemm::GemmArgs args;
    args.M = Mg;
    args.a = wv + grp * Mg * Kc;
    args.a_signed = w.type() == ElemType::kInt8;
    args.lda = Kc;
    args.za = zw.data() + grp * Mg;
    args.za_per_row = true;
    args.zb = &zx;
    args.epilogue = [&](int64_t m0, int64_t m1, int64_t p0, int64_t p1, const int32_t* c, int64_t ldc) {
      emit(n, grp * Mg + m0, grp * Mg + m1, p0, p1, c, ldc, 1, nullptr);
    };
    int8gemm::Gemm(args, packed, pool);
  };
  const int64_t units = N * group;
  const double work = static_cast<double>(Mg) * OS * Kc;
  if (work <= kBlasSingleThreadWork && units > 1) {
    ThreadPool::For(ctx.threads(), units, std::max<int64_t>(1, static_cast<int64_t>(65536.0 / std::max(work, 1.0))),
                    [&](int64_t begin, int64_t end) {
                      thread_local std::vector<uint8_t> cols;
                      for (int64_t u = begin; u < end; ++u) unit(u, &cols, nullptr);
                    });
  } else {
    thread_local std::vector<uint8_t> cols;
    for (int64_t u = 0; u < units; ++u) {
      if (ctx.terminate_requested()) return MakeError(ErrorCode::kFail, nm.op, ": run terminated on request");
      unit(u, &cols, ctx.threads());
    }
  }
  return Status::OK();
}

// Input `index` (w) packed at Init for AccumulateByPosition when it is a
// constant int8/uint8 tensor whose groups take that path.
class ConstantConvWeights {
 public:
  void Init(const KernelInfo& info, int index, int64_t group, bool channels_last) {
    const Tensor* w = info.ConstantInput(index);
    if (w == nullptr || (w->type() != ElemType::kInt8 && w->type() != ElemType::kUint8) || w->rank() < 3 ||
        group < 1 || w->dims()[0] % group != 0)
      return;
    const Dims& d = w->dims();
    int64_t kvol = 1;
    for (size_t j = 2; j < d.size(); ++j) kvol *= d[j];
    if (!UsePositionRows(d, group, channels_last) || d[0] * d[1] * kvol == 0) return;
    PackConvWeights(static_cast<const uint8_t*>(w->raw()), w->type() == ElemType::kInt8, group, d[0] / group, d[1],
                    PaddedChannels(d[1], group), kvol, &packed_);
    dims_ = d;
    type_ = w->type();
    valid_ = true;
    info.ReleaseConstantInput(index);  // runs read the packed copy only
  }
  // The packed weights when `w` is the constant they came from, else null.
  const std::vector<int8gemm::PackedB>* Get(const Tensor& w) const {
    return valid_ && w.dims() == dims_ && w.type() == type_ ? &packed_ : nullptr;
  }

 private:
  bool valid_ = false;
  Dims dims_;
  ElemType type_ = ElemType::kUndefined;
  std::vector<int8gemm::PackedB> packed_;
};

class ConvIntegerKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    ONYX_RETURN_IF_ERROR(ParseConvAttrs(info, "ConvInteger", &attrs_));
    weights_.Init(info, 1, attrs_.group, false);
    return Status::OK();
  }

  Status Compute(KernelContext& ctx) const override {
    const conv::Names nm{"ConvInteger", "input 0 (x)", "input 1 (w)"};
    const Tensor* x = nullptr;
    const Tensor* w = nullptr;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &x));
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(1, &w));
    conv::Geom g;
    Dims yd;
    ONYX_RETURN_IF_ERROR(ResolveShapes(nm, attrs_, *x, *w, false, &g, &yd));
    std::vector<int32_t> zx, zw;
    ONYX_RETURN_IF_ERROR(qlinear::ReadZeroPoints(ctx.Input(2), x, nm.op, 2, "x_zero_point", -1, "", 1, &zx));
    ONYX_RETURN_IF_ERROR(qlinear::ReadZeroPoints(ctx.Input(3), w, nm.op, 3, "w_zero_point", yd[1],
                                                 " (one per output channel)", yd[1], &zw));
    Tensor* y = ctx.Output(0, yd, ElemType::kInt32);
    if (y == nullptr) return Status::OK();
    int32_t* yv = y->data<int32_t>();
    const int64_t M = yd[1], OS = g.out_size;
    return Accumulate(ctx, nm, attrs_.group, *x, false, zx[0], *w, zw, g, weights_.Get(*w),
                      [&](int64_t n, int64_t m0, int64_t m1, int64_t p0, int64_t p1, const int32_t* c, int64_t sm,
                          int64_t sp, const int32_t* off) {
                        for (int64_t m = m0; m < m1; ++m) {
                          const uint32_t o = off ? static_cast<uint32_t>(off[m - m0]) : 0;
                          for (int64_t p = p0; p < p1; ++p)
                            yv[(n * M + m) * OS + p] =
                                static_cast<int32_t>(static_cast<uint32_t>(c[(m - m0) * sm + (p - p0) * sp]) + o);
                        }
                      });
  }

 private:
  conv::Attrs attrs_;
  ConstantConvWeights weights_;
};

// The ONNX operator, and onnxruntime's com.microsoft one whose attribute
// channels_last=1 makes x [N, spatial..., C] and y [N, out..., M] (what
// optimizer/nhwc_transformer.cc writes between channels-last neighbours).
class QLinearConvKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    ONYX_RETURN_IF_ERROR(ParseConvAttrs(info, "QLinearConv", &attrs_));
    channels_last_ = info.AttrInt("channels_last", 0) != 0;
    weights_.Init(info, 3, attrs_.group, channels_last_);
    return Status::OK();
  }

  Status Compute(KernelContext& ctx) const override {
    const conv::Names nm{"QLinearConv", "input 0 (x)", "input 3 (w)"};
    const Tensor* x = nullptr;
    const Tensor* w = nullptr;
    const Tensor* yz = nullptr;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &x));
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(3, &w));
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(7, &yz));
    conv::Geom g;
    Dims yd;
    ONYX_RETURN_IF_ERROR(ResolveShapes(nm, attrs_, *x, *w, channels_last_, &g, &yd));
    const int64_t M = w->dims()[0];
    const char* per_m = " (one per output channel)";
    std::vector<float> xs, ws, ys;
    std::vector<int32_t> zx, zw, zy;
    ONYX_RETURN_IF_ERROR(qlinear::ReadScales(ctx.Input(1), nm.op, 1, "x_scale", -1, "", 1, false, &xs));
    ONYX_RETURN_IF_ERROR(qlinear::ReadZeroPoints(ctx.Input(2), x, nm.op, 2, "x_zero_point", -1, "", 1, &zx));
    ONYX_RETURN_IF_ERROR(qlinear::ReadScales(ctx.Input(4), nm.op, 4, "w_scale", M, per_m, M, false, &ws));
    ONYX_RETURN_IF_ERROR(qlinear::ReadZeroPoints(ctx.Input(5), w, nm.op, 5, "w_zero_point", M, per_m, M, &zw));
    ONYX_RETURN_IF_ERROR(qlinear::ReadScales(ctx.Input(6), nm.op, 6, "y_scale", -1, "", 1, true, &ys));
    ONYX_RETURN_IF_ERROR(qlinear::ReadZeroPoints(yz, nullptr, nm.op, 7, "y_zero_point", -1, "", 1, &zy));
    ONYX_CHECK_ARG(ctx.Input(1)->type() == ElemType::kFloat && ctx.Input(4)->type() == ElemType::kFloat &&
                       ctx.Input(6)->type() == ElemType::kFloat,
                   "QLinearConv: inputs 1 (x_scale), 4 (w_scale) and 6 (y_scale) must be float");
    const Tensor* bias = ctx.Input(8);
    if (bias != nullptr) {
      ONYX_CHECK_ARG(bias->type() == ElemType::kInt32, "QLinearConv: input 8 (B) must be int32, got ",
                     ElemTypeName(bias->type()));
      ONYX_CHECK_ARG(bias->rank() == 1 && bias->dims()[0] == M, "QLinearConv: input 8 (B) of shape ",
                     ShapeToString(bias->dims()), " must be [", M, "] to match ", nm.w, " ",
                     ShapeToString(w->dims()));
    }
    Tensor* y = ctx.Output(0, yd, yz->type());
    if (y == nullptr || y->size() == 0) return Status::OK();
    std::vector<float> mult(static_cast<size_t>(M));
    for (int64_t m = 0; m < M; ++m) mult[m] = xs[0] * ws[m] / ys[0];
    const int32_t* bv = bias ? bias->data<int32_t>() : nullptr;
    const int64_t OS = g.out_size;
    return DispatchOver(Int8TypeSet{}, yz->type(), nm.op, [&](auto tag) -> Status {
      using TY = typename decltype(tag)::type;
      TY* yv = y->data<TY>();
      const bool cl = channels_last_;
      return Accumulate(ctx, nm, attrs_.group, *x, cl, zx[0], *w, zw, g, weights_.Get(*w),
                        [&](int64_t n, int64_t m0, int64_t m1, int64_t p0, int64_t p1, const int32_t* c, int64_t sm,
                            int64_t sp, const int32_t* off) {
                          // The bias with the epilogue's offsets, wrapping.
                          thread_local std::vector<int32_t> bias;
                          bias.resize(static_cast<size_t>(m1 - m0));
                          for (int64_t m = m0; m < m1; ++m)
                            bias[m - m0] = static_cast<int32_t>(static_cast<uint32_t>(bv ? bv[m] : 0) +
                                                                static_cast<uint32_t>(off ? off[m - m0] : 0));
                          // Rows of channels (sp == 1) or of positions; a block
                          // whose rows are not y's goes in transposed.
                          thread_local std::vector<TY> block;
                          if (sp == 1) {
                            if (!cl) {
                              for (int64_t m = m0; m < m1; ++m)
                                int8gemm::RequantizeFloat<TY>(c + (m - m0) * sm, p1 - p0, bias[m - m0], &mult[m],
                                                              false, zy[0], yv + (n * M + m) * OS + p0);
                              return;
                            }
                            block.resize(static_cast<size_t>((p1 - p0) * (m1 - m0)));
                            for (int64_t m = m0; m < m1; ++m)
                              int8gemm::RequantizeFloat<TY>(c + (m - m0) * sm, p1 - p0, bias[m - m0], &mult[m],
                                                            false, zy[0], block.data() + (m - m0) * (p1 - p0));
                            TransposeBytes(reinterpret_cast<const uint8_t*>(block.data()), m1 - m0, p1 - p0,
                                           reinterpret_cast<uint8_t*>(yv + (n * OS + p0) * M + m0), M, nullptr);
                            return;
                          }
                          if (cl) {
                            int8gemm::RequantizeFloatColumns<TY>(c, sp, p1 - p0, m1 - m0, bias.data(),
                                                                 mult.data() + m0, zy[0],
                                                                 yv + (n * OS + p0) * M + m0, M);
                            return;
                          }
                          block.resize(static_cast<size_t>((p1 - p0) * (m1 - m0)));
                          int8gemm::RequantizeFloatColumns<TY>(c, sp, p1 - p0, m1 - m0, bias.data(), mult.data() + m0,
                                                               zy[0], block.data(), m1 - m0);
                          TransposeBytes(reinterpret_cast<const uint8_t*>(block.data()), p1 - p0, m1 - m0,
                                         reinterpret_cast<uint8_t*>(yv + (n * M + m0) * OS + p0), OS, nullptr);
                        });
    });
  }

 private:
  conv::Attrs attrs_;
  bool channels_last_ = false;
  ConstantConvWeights weights_;
};

}  // namespace

ONYX_REGISTER_KERNEL(ConvIntegerKernel, "", "ConvInteger", 10, kMaxVersion, Int8TypeSet::ElemTypes());
ONYX_REGISTER_KERNEL(QLinearConvKernel, "", "QLinearConv", 10, kMaxVersion, Int8TypeSet::ElemTypes());
ONYX_REGISTER_KERNEL(QLinearConvKernel, "com.microsoft", "QLinearConv", 1, kMaxVersion, Int8TypeSet::ElemTypes());

}  // namespace onyx

// Direct float kernels vectorised per ISA (AVX-512 / AVX2, picked at run
// time like the SGEMM's path; depthwise_conv.cc holds the per-ISA regions):
// the depthwise conv, the conv of few input channels and pooling planes.
//
// Depthwise 2-D convolution (one input channel per group), one plane at a
// time, vectorised along output rows with AVX-512 or AVX2 (chosen at run
// time like the SGEMM's path; the engine itself targets baseline x86-64).
// Taps that fall outside the image are masked lanes, so no padded copy of
// the plane is made; bias and a clamp (Relu, Clip) are applied before the
// row is stored.
#pragma once

#include <cstdint>

namespace onyx {
namespace depthwise {

// One plane's geometry: input H x W, output OH x OW, kernel KH x KW,
// strides, leading pads and dilations.
struct Plane2D {
  int64_t H = 0, W = 0, OH = 0, OW = 0, KH = 1, KW = 1;
  int64_t sh = 1, sw = 1, ph = 0, pw = 0, dh = 1, dw = 1;
};

// Whether Run has a vector path on the active code path (sgemm::ActiveIsa()).
bool Available();

// `count` planes: plane i is out + i * out_stride [OH, OW] = bias[i] (0 when
// bias is null) + the convolution of in + i * in_stride [H, W] with
// w + i * w_stride [KH, KW]; then, with `clamp`, min(max(out, lo), hi).
// Requires Available().
void Run(const Plane2D& g, int64_t count, const float* in, int64_t in_stride, const float* w, int64_t w_stride,
         const float* bias, bool clamp, float lo, float hi, float* out, int64_t out_stride);

}  // namespace depthwise

// The direct 2-D convolution of few input channels (group 1): a network's
// first conv (3 channels, 3x3 or 7x7, stride 2), where a GEMM's K is only
// C*KH*KW and packing its im2col block costs more than the product
// (small_conv_kernel.inc, on the same ISAs as the depthwise kernel). AVX-512:
// per tap, vectors of consecutive output positions (one load each from the
// input row's zero-padded stride phase) times the broadcast weights of a
// few output channels, stored straight into Y's rows; AVX2: vectors of
// output channels times broadcast input elements for a few positions, the
// [positions][channels] tile transposed into Y.
namespace small_conv {

constexpr int64_t kMaxKernel = 16;  // KW at most

struct Geom {
  int64_t C = 0, H = 0, W = 0, M = 0, OH = 0, OW = 0, KH = 1, KW = 1;
  int64_t sh = 1, sw = 1, ph = 0, pw = 0;
};

// Whether Rows has a path for this conv (no dilation) on the active ISA.
bool Applies(const Geom& g);
// Floats Pack writes for M output channels of `taps` = C*KH*KW weights each.
int64_t PackedSize(int64_t M, int64_t taps);
// W [M, C, KH, KW] rearranged for Rows (blocks of output channels, zero-padded).
void Pack(const float* w, int64_t M, int64_t taps, float* packed);
// Output rows [oh_begin, oh_end) of one image: y [M, OH, OW] = bias (null: 0)
// + the convolution of x [C, H, W] with the packed weights; then, with
// `clamp`, min(max(y, lo), hi). Requires Applies(g).
void Rows(const Geom& g, const float* x, const float* packed, const float* bias, bool clamp, float lo, float hi,
          int64_t oh_begin, int64_t oh_end, float* y);

}  // namespace small_conv

// Stride-2 phases: a conv or pool of stride 2 reads input rows and columns
// 2o + a (output o, tap offset a = k*d - p). Split into its four phase
// planes [OH, OW], phase (r, c) holding in(2i + r, 2j + c), the input makes
// every tap one phase read at a fixed offset (o + (a >> 1)) from the output:
// whole planes run as one stream of vectors (depthwise 3x3, MaxPool 3x3) and
// an im2col strip is a masked load per half panel (sgemm::Im2Col2D::phases)
// instead of a deinterleave per tap.
namespace phases {

// Whether, along one axis (input size `in`, output size `out`, stride 2,
// kernel k, leading pad p, dilation d), every tap read that lies inside the
// input falls in [0, out) of its phase, so that [OH, OW] phases hold them all.
bool Fits(int64_t k, int64_t p, int64_t d, int64_t in, int64_t out);
// `count` planes [H, W] (in_stride apart) as phase planes [4][OH][OW] each
// (4*OH*OW apart from out), `fill` where 2i + r or 2j + c is outside the
// plane. Requires depthwise::Available().
void Split(const float* in, int64_t count, int64_t in_stride, int64_t H, int64_t W, int64_t OH, int64_t OW, float fill,
           float* out);
// Phase (0, 0) alone: out + i * OH*OW [OH, OW] = in(2i, 2j), 0 outside (a
// 1x1 conv of stride 2 is the pointwise one of these).
void Evens(const float* in, int64_t count, int64_t in_stride, int64_t H, int64_t W, int64_t OH, int64_t OW,
           float* out);

}  // namespace phases

// Float MaxPool / AveragePool planes (pool.cc), vectorised along output rows
// on the same ISAs: width strides 1 and 2, no width dilation, windows at
// most kMaxTaps wide; the window's rows come from per-output-row tables
// (any height stride, dilation and padding). Taps outside the row read a
// padded row buffer: -inf for max, 0 for sums.
namespace pool_planes {

constexpr int64_t kMaxTaps = 16;

struct Geom {
  int64_t W = 0, OW = 0, KW = 1, sw = 1, pw = 0;  // width
  int64_t H = 0, KH = 1, sh = 1, ph = 0;          // height (the window rows below come from these)
  int64_t OH = 0, dh = 1;                         // output row oh reads input rows
  const int64_t *hstart = nullptr, *hlo = nullptr, *hhi = nullptr;  // hstart[oh] + [hlo, hhi) * dh
  // Averages: output (oh, ow) is the sum over div_rows[oh] * div_cols[ow]
  // (0 when that is 0); null for max and plain sums.
  const float *div_rows = nullptr, *div_cols = nullptr;
};

// Whether Run has a path on the active ISA.
bool Available();
// `count` planes: out + i * out_stride [OH, OW] = the max (`max`) or the sum
// over each window of in + i * in_stride [H, W], divided as Geom says:
// separable (the window's rows combined column by column, then the taps
// along the row; a 2x2 stride-2 window over rows of 2 * OW as one stream
// per plane). Requires Available().
void Run(const Geom& g, bool max, int64_t count, const float* in, int64_t in_stride, float* out, int64_t out_stride);
// GlobalAveragePool: out[p] = the mean of in + p * inner [inner], p in
// [0, planes), inner > 0. Requires Available().
void Means(const float* in, int64_t planes, int64_t inner, float* out);

}  // namespace pool_planes
}  // namespace onyx

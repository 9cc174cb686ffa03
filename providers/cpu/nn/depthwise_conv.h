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
}  // namespace onyx

// The direct float convolution of stride 2 (strided_conv.cc): ResNet's 3x3
// stride-2 convs, on AVX-512 / AVX2 (Conv takes it for kernels of 2 to
// kMaxTaps taps; its 1x1 stride-2 convs keep the GEMM).
//
// Output channels go across the vector lanes (blocks of 64 on AVX-512, 16 on
// AVX2) and a few output positions across the registers: every step of the
// product reads a block of packed weights (whole vectors, contiguous) and
// broadcasts one input element per position, read in place from the image at
// any stride, so there is no im2col, no phase split and no waste on a row of
// the image whose width is not a multiple of the vector (ORT's NCHWc kernel
// has the same shape; here the image stays NCHW). Taps that fall in the
// padding read a zero buffer; a tile skips a tap that lies in the padding
// for all its positions. The input channels go in chunks whose packed
// weights stay in L1, the next chunk's weights and input lines brought into
// L2 while the tiles run; the sums of a range of positions collect in Y^T (a
// per-thread scratch in L2) and go into Y through sgemm::Transpose with the
// bias, Z and clamp.
#pragma once

#include <cstdint>
#include <vector>

#include "core/framework/thread_pool.h"
#include "providers/cpu/math/sgemm.h"

namespace onyx {
namespace strided_conv {

// One image's geometry (2-D, group 1).
struct Geom {
  int64_t C = 0, H = 0, W = 0, M = 0, OH = 0, OW = 0, KH = 1, KW = 1;
  int64_t sh = 1, sw = 1, ph = 0, pw = 0, dh = 1, dw = 1;
  int64_t taps() const { return KH * KW; }
};

constexpr int64_t kMaxTaps = 49;

// Whether the active ISA has the kernel and it takes this conv.
bool Applies(const Geom& g);

// W [M, C, KH, KW] packed for the active ISA's kernel (empty where Applies
// is false for its shape); tied to the ISA active when packed.
struct Packed {
  std::vector<float> w;
  sgemm::Isa isa = sgemm::Isa::kBaseline;
  int64_t M = 0, C = 0, taps = 0, block = 0, chunks = 0;
  bool empty() const { return w.empty(); }
};
Packed Pack(const float* w, int64_t M, int64_t C, int64_t taps);
// Whether `p` is usable now (packed for the active ISA and this shape).
bool Usable(const Packed& p, const Geom& g);

// Y [N, M, OH, OW] = conv(X [N, C, H, W]) with the packed weights, then per
// output channel + bias (null: none), + Z (null: none, else shaped like Y),
// then with `clamp` min(max(., lo), hi). Runs over `pool`. Requires
// Usable(w, g). False (Y not written) where there was no memory for the
// zeros that padding taps read.
bool Run(const Geom& g, int64_t N, const float* x, const Packed& w, const float* bias, const float* z, bool clamp,
         float lo, float hi, float* y, ThreadPool* pool);

}  // namespace strided_conv
}  // namespace onyx

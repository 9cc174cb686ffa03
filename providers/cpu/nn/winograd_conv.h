// Winograd convolution in float, F(2x2, 3x3) and F(4x4, 3x3): 3x3 kernels,
// stride 1, dilation 1, group 1, any pads up to 2, any batch and image size
// (partial tiles at odd edges). Each m x m block of output ("tile", m = 2
// or 4) is read from an (m+2) x (m+2) block of input; per tile and channel
// the input block d becomes V = B^T d B ((m+2)^2 values), each filter g
// becomes U = G g G^T once, and the output block is A^T (sum over c of
// U . V) A: 16 products per 4 outputs (F(2x2, 3x3)) or 36 per 16 (F(4x4,
// 3x3)) per channel pair where the direct conv does 9 per output (2.25x and
// 4x fewer). The sum over channels is one matrix product per position p:
//   Y'[p] [M, tiles] = U[p] [M, C] x V[p] [C, tiles],
// run on the packed SGEMM (sgemm.h) with U[p] packed once, at session
// creation; the input and output transforms are vectorised per ISA (AVX-512,
// AVX2, scalar) like the SGEMM's. The tiles are taken a block at a time (a
// few MiB of V and Y', so that U, read once per block, is read few times),
// one block per thread at a time, or, where all the tiles fit one block
// (small images), one block whose transforms and products are each split
// over the threads; the output transform adds bias and Z and clamps (Relu,
// Clip) as it stores Y.
//
// Accuracy. F(2x2, 3x3)'s transforms have coefficients 0, +-1 and 1/2
// only: its results differ from the direct conv's by a few float roundings
// (2-6e-7 of the output's range on ResNet-like data, as the direct float
// conv's own). F(4x4, 3x3) on Lavin's points 0, +-1, +-2 loses about a
// decimal digit (4e-6 at 64 channels to 1e-5 at 512); on the points 0, 1,
// -1, 2, -1/2 taken here (B^T's largest coefficient 2.5, not 5) 1.6-3.6e-6,
// about 5-10x the direct conv's rounding: tests/python/test_conv_winograd.py
// holds it under 1e-5 of the range against float64 and onnxruntime. TileFor
// takes it where its products' saving is large (images of 28x28 and more);
// session config "session.conv.winograd_f4" = "0" keeps F(2x2, 3x3).
#pragma once

#include <cstdint>
#include <vector>

#include "core/framework/thread_pool.h"
#include "providers/cpu/math/sgemm.h"

namespace onyx {
namespace winograd {

// The filters U[p] = G g G^T, per position p an [M, C] matrix: packed for
// the SGEMM of the ISA active when they were made, or (no SGEMM kernel on
// this path) kept as [positions][M][C] for BlasGemm.
struct Filters {
  int64_t M = 0, C = 0;
  int tile = 2;                       // m: outputs per tile side, 2 or 4
  std::vector<sgemm::Packed> packed;  // positions() of them, or empty
  std::vector<float> raw;             // without `packed`
  bool empty() const { return M == 0; }
  int positions() const { return (tile + 2) * (tile + 2); }
  // Memory held, in bytes.
  size_t bytes() const;
};

// U from W [M, C, 3, 3] for tiles of `tile` x `tile` outputs (2 or 4).
Filters TransformFilters(const float* w, int64_t M, int64_t C, int tile = 2);

// One convolution: x [N, C, H, W] -> y [N, M, OH, OW] with leading pads
// ph, pw (the trailing ones follow from OH, OW).
struct Geom {
  int64_t N = 0, C = 0, H = 0, W = 0, M = 0, OH = 0, OW = 0, ph = 0, pw = 0;
};

// Whether Run handles this 2-D conv: kernel 3x3, stride 1, dilation 1,
// group 1, leading and trailing pads at most 2.
bool Supports(const std::vector<int64_t>& kernel, const std::vector<int64_t>& strides,
              const std::vector<int64_t>& dilations, const std::vector<int64_t>& pads, int64_t group);

// The tile that beats the direct (SGEMM) conv on this shape, by per-layer
// measurements on Zen 5 (see winograd_conv.cc): 4 (F(4x4, 3x3), only with
// `allow_f4`), 2 (F(2x2, 3x3)), or 0 where the direct conv wins. OH, OW 0
// when unknown.
int TileFor(int64_t C, int64_t M, int64_t OH, int64_t OW, bool allow_f4);

// y = clamp(conv(x, U) + bias + z, lo, hi): bias per output channel (or
// null), z shaped like y (or null), clamp only with `clamp`. Runs on `pool`.
void Run(const Geom& g, const Filters& u, const float* x, const float* bias, const float* z, bool clamp, float lo,
         float hi, float* y, ThreadPool* pool);

}  // namespace winograd
}  // namespace onyx

// Winograd F(2x2, 3x3) convolution in float: 3x3 kernels, stride 1,
// dilation 1, group 1, any pads up to 2, any batch and image size (partial
// tiles at odd edges). Each 2x2 block of output ("tile") is read from a 4x4
// block of input; per tile and channel the input block d becomes
// V = B^T d B (16 values), each filter g becomes U = G g G^T once, and the
// output block is A^T (sum over c of U . V) A: 16 products per tile and
// channel pair where the direct conv does 36 (2.25x fewer). The sum over
// channels is one matrix product per position p of the 16:
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
// F(2x2, 3x3)'s transforms have coefficients 0, +-1 and 1/2 only: its
// results differ from the direct conv's by a few float roundings (2-6e-7 of
// the output's range on ResNet-like data; tests/python/test_conv_winograd.py).
// F(4x4, 3x3) would save 4x but its constants (1/4, 1/6, 1/24) lose about a
// decimal digit: 5e-6 (64 channels) to 1.1e-5 (512) in a float32 model of
// it against float64, over the 1e-5 the benchmark allows.
#pragma once

#include <cstdint>
#include <vector>

#include "core/framework/thread_pool.h"
#include "providers/cpu/math/sgemm.h"

namespace onyx {
namespace winograd {

constexpr int kPositions = 16;  // 4x4 transformed values per tile

// The filters U[p] = G g G^T, per position p an [M, C] matrix: packed for
// the SGEMM of the ISA active when they were made, or (no SGEMM kernel on
// this path) kept as [16][M][C] for BlasGemm.
struct Filters {
  int64_t M = 0, C = 0;
  std::vector<sgemm::Packed> packed;  // kPositions of them, or empty
  std::vector<float> raw;             // without `packed`
  bool empty() const { return M == 0; }
  // Memory held, in bytes.
  size_t bytes() const;
};

// U from W [M, C, 3, 3].
Filters TransformFilters(const float* w, int64_t M, int64_t C);

// One convolution: x [N, C, H, W] -> y [N, M, OH, OW] with leading pads
// ph, pw (the trailing ones follow from OH, OW).
struct Geom {
  int64_t N = 0, C = 0, H = 0, W = 0, M = 0, OH = 0, OW = 0, ph = 0, pw = 0;
};

// Whether Run handles this 2-D conv: kernel 3x3, stride 1, dilation 1,
// group 1, leading and trailing pads at most 2.
bool Supports(const std::vector<int64_t>& kernel, const std::vector<int64_t>& strides,
              const std::vector<int64_t>& dilations, const std::vector<int64_t>& pads, int64_t group);

// Whether the Winograd path beats the direct (SGEMM) conv on this shape,
// by per-layer measurements on Zen 5 (see winograd_conv.cc).
bool Wins(int64_t C, int64_t M, int64_t OH, int64_t OW);

// y = clamp(conv(x, U) + bias + z, lo, hi): bias per output channel (or
// null), z shaped like y (or null), clamp only with `clamp`. Runs on `pool`.
void Run(const Geom& g, const Filters& u, const float* x, const float* bias, const float* z, bool clamp, float lo,
         float hi, float* y, ThreadPool* pool);

}  // namespace winograd
}  // namespace onyx

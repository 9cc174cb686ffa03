// Vector types only live inside the per-ISA regions below.
#pragma GCC diagnostic ignored "-Wpsabi"

#include "providers/cpu/nn/strided_conv.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define ONYX_SC_X86 1
#endif

namespace onyx {
namespace strided_conv {

#ifdef ONYX_SC_X86
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx512f,avx512dq,avx512bw,avx512vl,avx2,fma"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx512f,avx512dq,avx512bw,avx512vl,avx2,fma")
#endif
namespace avx512 {
namespace {
#define ONYX_VEC_AVX512
#include "providers/cpu/common/simd_traits.inc"
#undef ONYX_VEC_AVX512
#include "providers/cpu/nn/strided_conv_kernel.inc"
}  // namespace
}  // namespace avx512
#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif

#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2,fma"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx2,fma")
#endif
namespace avx2 {
namespace {
#define ONYX_VEC_AVX2
#include "providers/cpu/common/simd_traits.inc"
#undef ONYX_VEC_AVX2
#include "providers/cpu/nn/strided_conv_kernel.inc"
}  // namespace
}  // namespace avx2
#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif
#endif

namespace {

// Output positions per tile (each ISA's kP).
constexpr int64_t kTile = 6;
#ifdef ONYX_SC_X86
static_assert(avx512::kP == kTile && avx2::kP == kTile, "one tile width");
static_assert(kMaxTaps <= 64, "Pass's pointer table holds 64 taps");
#endif

using BlockFn = void (*)(const float* const*, const int64_t*, int64_t, int, int64_t, int64_t, int64_t, const float*,
                         float*);
struct Kernel {
  BlockFn block_fn = nullptr;
  int64_t block = 0;  // output channels per tile (0: no kernel)
};

Kernel Active() {
#ifdef ONYX_SC_X86
  switch (sgemm::ActiveIsa()) {
    case sgemm::Isa::kAvx512:
      return {&avx512::Block, avx512::kBlock};
    case sgemm::Isa::kAvx2:
      return {&avx2::Block, avx2::kBlock};
    default:
      break;
  }
#endif
  return {};
}

// Input channels per chunk: its packed weights (chunk x taps x block floats)
// in 32 KiB, so they stay in L1 under every tile of a pass.
// The input of one image or band of output rows that stays in L2 (1 MiB on
// Zen 5, 2 MiB on recent Xeons) beside the weights of a chunk and Y^T.
constexpr double kBandBytes = 512.0 * 1024;

int64_t ChunkOf(int64_t taps, int64_t block) { return std::max<int64_t>(1, 8192 / (taps * block)); }

}  // namespace

bool Applies(const Geom& g) {
  if (Active().block_fn == nullptr || g.sh != 2 || g.sw != 2 || g.taps() < 1 || g.taps() > kMaxTaps) return false;
  return g.C >= 1 && g.M >= 1 && g.OH >= 1 && g.OW >= 1 && g.H >= 1 && g.W >= 1 && g.dh >= 1 && g.dw >= 1;
}

Packed Pack(const float* w, int64_t M, int64_t C, int64_t taps) {
  Packed p;
  const Kernel k = Active();
  if (k.block_fn == nullptr || M < 1 || C < 1 || taps < 1 || taps > kMaxTaps) return p;
  p.isa = sgemm::ActiveIsa();
  p.M = M, p.C = C, p.taps = taps, p.block = k.block, p.chunk = ChunkOf(taps, k.block);
  const int64_t blocks = (M + k.block - 1) / k.block;
  p.w.assign(blocks * C * taps * k.block, 0.f);
  // [block][chunk][tap][channel of the chunk][output channel of the block].
  for (int64_t mb = 0; mb < blocks; ++mb)
    for (int64_t c0 = 0; c0 < C; c0 += p.chunk) {
      const int64_t cb = std::min(p.chunk, C - c0);
      float* dst = p.w.data() + (mb * C + c0) * taps * k.block;
      for (int64_t t = 0; t < taps; ++t)
        for (int64_t c = 0; c < cb; ++c)
          for (int64_t m = 0; m < k.block && mb * k.block + m < M; ++m)
            dst[(t * cb + c) * k.block + m] = w[((mb * k.block + m) * C + c0 + c) * taps + t];
    }
  return p;
}

bool Usable(const Packed& p, const Geom& g) {
  return !p.empty() && p.isa == sgemm::ActiveIsa() && p.M == g.M && p.C == g.C && p.taps == g.taps() &&
         p.block == Active().block && Applies(g);
}

// At least `count` zeros that are never written, shared by every run and
// kept to the end (a run on another thread may still read a shorter one):
// calloc maps a long one on the kernel's zero page, so however long it is,
// the padding taps reading it share a few cache lines. Null when out of
// memory (address space).
const float* Zeros(int64_t count) {
  static std::mutex mu;
  static std::vector<std::unique_ptr<float, void (*)(void*)>> kept;
  static int64_t have = 0;
  std::lock_guard<std::mutex> lock(mu);
  if (count > have) {
    float* p = static_cast<float*>(std::calloc(static_cast<size_t>(count), sizeof(float)));
    if (p == nullptr) return nullptr;
    kept.emplace_back(p, &std::free);
    have = count;
  }
  return kept.back().get();
}

bool Run(const Geom& g, int64_t N, const float* x, const Packed& w, const float* bias, const float* z, bool clamp,
         float lo, float hi, float* y, ThreadPool* pool) {
  const Kernel k = Active();
  const int64_t taps = g.taps(), plane = g.H * g.W, OS = g.OH * g.OW, block = k.block;
  const int64_t blocks = (g.M + block - 1) / block;
  // offs[j * taps + t]: where tap t of output position j reads, or -1 (padding).
  std::vector<int64_t> offs(OS * taps);
  bool padded = false;
  for (int64_t oh = 0; oh < g.OH; ++oh)
    for (int64_t ow = 0; ow < g.OW; ++ow)
      for (int64_t kh = 0; kh < g.KH; ++kh)
        for (int64_t kw = 0; kw < g.KW; ++kw) {
          const int64_t ih = oh * g.sh - g.ph + kh * g.dh, iw = ow * g.sw - g.pw + kw * g.dw;
          const bool in = ih >= 0 && ih < g.H && iw >= 0 && iw < g.W;
          offs[(oh * g.OW + ow) * taps + kh * g.KW + kw] = in ? ih * g.W + iw : -1;
          padded = padded || !in;
        }
  const float* zero = padded ? Zeros(g.C * plane) : nullptr;
  if (padded && zero == nullptr) return false;
  // Units: (image, range of positions, group of blocks of output
  // channels). Each unit takes one block over the whole image where the
  // image fits in L2 (its input is read from there once per block), or else
  // a band of output rows over every block (the band's input stays in L2
  // under all the blocks, while each band reads all the weights). 1 image,
  // 1 thread, Zen 5, ResNet-50's 3x3 stride-2 convs (128, 256, 512
  // channels): 1005 / 1035 / 1260 us on the GEMM over phase planes, 922 /
  // 934 / 1141 us here (onnxruntime's NCHWc kernel 876 / 921 / 947).
  const int64_t threads = pool != nullptr ? pool->NumThreads() : 1;
  const double in_bytes = 4.0 * g.C * plane;
  int64_t bands = std::min(g.OH, static_cast<int64_t>(std::ceil(in_bytes / kBandBytes)));
  const bool band_mode = bands > 1;
  int64_t pieces = 1, groups = blocks, per_piece = 0;
  if (band_mode) {
    // Bands of whole rows, a multiple of the threads where images are few.
    if (N * bands < 4 * threads) bands = std::min(g.OH, (bands + threads - 1) / threads * threads);
    pieces = bands, groups = 1;
  } else {
    const int64_t base = N * blocks, tiles = (OS + kTile - 1) / kTile;
    pieces = base % threads == 0 || base >= 4 * threads ? 1 : std::min(tiles, threads);
    per_piece = (tiles + pieces - 1) / pieces * kTile;
  }
  // Positions [j0, j1) of piece i.
  auto range = [&](int64_t i, int64_t* j0, int64_t* j1) {
    if (band_mode) {
      *j0 = g.OH * i / pieces * g.OW, *j1 = g.OH * (i + 1) / pieces * g.OW;
    } else {
      *j0 = std::min(OS, i * per_piece), *j1 = std::min(OS, *j0 + per_piece);
    }
  };
  int64_t longest = 0;
  for (int64_t i = 0; i < pieces; ++i) {
    int64_t j0, j1;
    range(i, &j0, &j1);
    longest = std::max(longest, j1 - j0);
  }
  ThreadPool::For(pool, N * pieces * groups, 1, [&](int64_t begin, int64_t end) {
    thread_local std::vector<float> yt_buf;
    thread_local std::vector<const float*> ptrs;
    thread_local std::vector<int64_t> starts;
    if (static_cast<int64_t>(yt_buf.size()) < longest * block) yt_buf.resize(longest * block);
    int64_t table_n = -1, table_j0 = -1;  // the image and range the pointer table is for
    for (int64_t u = begin; u < end; ++u) {
      const int64_t n = u / (pieces * groups), piece = u / groups % pieces, grp = u % groups;
      int64_t j0, j1;
      range(piece, &j0, &j1);
      if (j0 >= j1) continue;
      const float* xn = x + n * g.C * plane;
      const int64_t ntiles = (j1 - j0 + kTile - 1) / kTile;
      if (table_n != n || table_j0 != j0) {
        // Tiles of as even a size as kTile allows (49 = 5 x 5 + 4 x 6, not 8 x 6 + 1).
        starts.resize(ntiles + 1);
        for (int64_t i = 0; i <= ntiles; ++i) starts[i] = j0 + (j1 - j0) * i / ntiles;
        ptrs.resize((j1 - j0) * taps);
        const float** pt = ptrs.data();
        for (int64_t i = 0; i < ntiles; ++i)
          for (int64_t t = 0; t < taps; ++t)
            for (int64_t j = starts[i]; j < starts[i + 1]; ++j) {
              const int64_t o = offs[j * taps + t];
              *pt++ = o >= 0 ? xn + o : zero;
            }
        table_n = n, table_j0 = j0;
      }
      for (int64_t mb = band_mode ? 0 : grp; mb < (band_mode ? blocks : grp + 1); ++mb) {
        k.block_fn(ptrs.data(), starts.data(), ntiles, static_cast<int>(taps), plane, g.C, w.chunk,
                   w.w.data() + mb * g.C * taps * block, yt_buf.data());
        const int64_t m0 = mb * block, mc = std::min(block, g.M - m0);
        const int64_t at = (n * g.M + m0) * OS + j0;
        sgemm::Epilogue ep;
        ep.bias = bias != nullptr ? bias + m0 : nullptr;
        ep.z = z != nullptr ? z + at : nullptr;
        ep.ldz = OS;
        ep.clamp = clamp;
        ep.lo = lo;
        ep.hi = hi;
        const bool any = ep.bias != nullptr || ep.z != nullptr || clamp;
        sgemm::Transpose(j1 - j0, mc, yt_buf.data(), block, y + at, OS, any ? &ep : nullptr);
      }
    }
  });
  return true;
}

}  // namespace strided_conv
}  // namespace onyx

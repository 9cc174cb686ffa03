// Vector types only live inside the per-ISA regions below.
#pragma GCC diagnostic ignored "-Wpsabi"

#include "providers/cpu/nn/strided_conv.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define ONYX_SC_X86 1
#endif

namespace onyx {
namespace strided_conv {
namespace {
// The input a range of positions reads, brought into L2 ahead of the tiles
// (strided_conv_kernel.inc's Block): per segment (one image's rows), `len`
// floats from `base` in channel 0, a plane further per channel.
struct AheadPlan {
  const float* const* base = nullptr;
  const int64_t* len = nullptr;
  int64_t segs = 0;
};
}  // namespace

#define ONYX_ISA_KERNEL "providers/cpu/nn/strided_conv_kernel.inc"
#include "providers/cpu/common/isa_regions.inc"
#undef ONYX_ISA_KERNEL

namespace {

// Output positions per tile (each ISA's kP).
constexpr int64_t kTile = 6;
#ifdef ONYX_SC_X86
static_assert(avx512::kP == kTile && avx2::kP == kTile, "one tile width");
#endif

using BlockFn = void (*)(const float* const*, const int64_t*, int64_t, const int32_t*, const int32_t*, int, int64_t,
                         int64_t, int64_t, const float*, float*, const AheadPlan*);
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

// The input of one image or band of output rows that stays in L2 (1 MiB on
// Zen 5, 2 MiB on recent Xeons) beside the weights of a chunk and Y^T.
constexpr double kBandBytes = 512.0 * 1024;
// Output positions of one unit at most (its Y^T: 256 KiB at 64 channels).
constexpr int64_t kMaxRangePositions = 1024;

// Chunks of the C input channels: each one's packed weights (channels x
// taps x block floats) in 32 KiB where all the conv's weights (M x C x
// taps) fit in 1 MiB, else in 16 KiB; as even as can be (128 channels of a
// 3x3: 10 chunks of 12 and 13, not 9 x 14 + 2). Larger chunks make fewer
// passes over Y^T and a longer channel loop per tap, but where the weights
// stream from memory (in a model, a large conv's weights are not in any
// cache) the next chunk's prefetch comes in bursts too large per tile.
// ResNet-50's 3x3 stride-2 convs, Zen 5, busy machine, 1 image, 1 thread:
// 128 channels at 56x56 (590 KB of weights), 16 -> 32 KiB chunks, alone
// (best of 200, interleaved) 995 -> 980 us, in the model 972-976 ->
// 948-953 us; 512 at 14x14 (9.4 MB) alone 962 -> 947 us but in the model
// 971-982 -> 1163-1179 us (8 KiB chunks: 1100 us alone at 128 channels).
int64_t ChunksOf(int64_t M, int64_t C, int64_t taps, int64_t block) {
  const int64_t floats = M * C * taps <= (int64_t{1} << 18) ? 8192 : 4096;
  const int64_t most = std::max<int64_t>(1, floats / (taps * block));
  return (C + most - 1) / most;
}

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
  p.M = M, p.C = C, p.taps = taps, p.block = k.block, p.chunks = ChunksOf(M, C, taps, k.block);
  const int64_t blocks = (M + k.block - 1) / k.block;
  p.w.assign(blocks * C * taps * k.block, 0.f);
  // [block][chunk][tap][channel of the chunk][output channel of the block].
  for (int64_t mb = 0; mb < blocks; ++mb)
    for (int64_t ci = 0; ci < p.chunks; ++ci) {
      const int64_t c0 = C * ci / p.chunks, cb = C * (ci + 1) / p.chunks - c0;
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
  // Units: (range of output positions, group of blocks of output channels),
  // positions counted across the batch (image n's position j is n * OS + j).
  // Where an image's input fits in L2, each unit takes one block over a
  // range of whole images (a chunk of weights, in L1, then serves the tiles
  // of all of them: 8 images of 7x7 read the 9.4 MiB of a 512-channel
  // conv's weights once, not 8 times), or over a piece of one image where
  // images are too few for the threads; its input is read once per block.
  // Else each unit takes a band of output rows over every block (the band's
  // input stays in L2 under all the blocks, while each band reads all the
  // weights). ResNet-50's 3x3 stride-2 convs (128, 256, 512 channels),
  // 1 thread, Zen 5 (shared, busy), best of 75 runs: 1 image 971 / 1031 /
  // 1059 us on the GEMM over phase planes, 985 / 959 / 957 us here; 8 images
  // 8.37 / 8.46 / 8.49 ms, 8.36 / 7.99 / 8.09 ms (onnxruntime's NCHWc
  // kernel, 1 image: 876 / 921 / 947 us).
  const int64_t threads = pool != nullptr ? pool->NumThreads() : 1;
  const double in_bytes = 4.0 * g.C * plane;
  const int64_t bands = std::min(g.OH, static_cast<int64_t>(std::ceil(in_bytes / kBandBytes)));
  const bool band_mode = bands > 1;
  std::vector<std::pair<int64_t, int64_t>> ranges;
  int64_t groups = blocks;
  if (band_mode) {
    // Bands of whole rows, a multiple of the threads where images are few.
    const int64_t nb = N * bands < 4 * threads ? std::min(g.OH, (bands + threads - 1) / threads * threads) : bands;
    for (int64_t n = 0; n < N; ++n)
      for (int64_t i = 0; i < nb; ++i) ranges.emplace_back(n * OS + g.OH * i / nb * g.OW, n * OS + g.OH * (i + 1) / nb * g.OW);
    groups = 1;
  } else if (N * blocks % threads != 0 && N * blocks < 4 * threads) {
    // Too few (image, block) units to share evenly: pieces of each image.
    const int64_t tiles = (OS + kTile - 1) / kTile, pieces = std::min(tiles, threads);
    const int64_t per = (tiles + pieces - 1) / pieces * kTile;
    for (int64_t n = 0; n < N; ++n)
      for (int64_t j = 0; j < OS; j += per) ranges.emplace_back(n * OS + j, n * OS + std::min(OS, j + per));
  } else {
    // Whole images per unit: as many as keep two units per thread, and Y^T
    // (positions x block floats) within kMaxRangePositions rows.
    const int64_t cap = std::max<int64_t>(1, kMaxRangePositions / OS);
    const int64_t want = std::max<int64_t>(1, (2 * threads + blocks - 1) / blocks);  // ranges wanted
    const int64_t most = std::max<int64_t>(1, std::min(cap, N / want)), count = (N + most - 1) / most;
    for (int64_t i = 0; i < count; ++i) ranges.emplace_back(N * i / count * OS, N * (i + 1) / count * OS);
  }
  int64_t longest = 0;
  for (const auto& r : ranges) longest = std::max(longest, r.second - r.first);
  const int64_t units = static_cast<int64_t>(ranges.size()) * groups;
  // Whether a range's input is more than L2 keeps between its blocks (whole
  // images of block mode): then every block brings it in again.
  const bool reread = !band_mode && static_cast<double>((longest + OS - 1) / OS) * in_bytes > kBandBytes;
  ThreadPool::For(pool, units, 1, [&](int64_t begin, int64_t end) {
    thread_local std::vector<float> yt_buf;
    thread_local std::vector<const float*> ptrs;
    thread_local std::vector<int64_t> starts, seg_len;
    thread_local std::vector<int32_t> tile_taps, ids;
    thread_local std::vector<const float*> seg_base;
    AheadPlan plan;
    if (static_cast<int64_t>(yt_buf.size()) < longest * block) yt_buf.resize(longest * block);
    int64_t table = -1;  // the range the pointer table is for
    bool fresh = false;  // no block has run over it yet
    for (int64_t u = begin; u < end; ++u) {
      const int64_t r = u / groups, grp = u % groups;
      const int64_t J0 = ranges[r].first, J1 = ranges[r].second;
      const int64_t ntiles = (J1 - J0 + kTile - 1) / kTile;
      if (table != r) {
        // Tiles of as even a size as kTile allows (49 = 5 x 5 + 4 x 6, not 8 x 6 + 1).
        starts.resize(ntiles + 1);
        for (int64_t i = 0; i <= ntiles; ++i) starts[i] = J0 + (J1 - J0) * i / ntiles;
        // Per tile the taps some position reads inside the image (a tile of
        // the first output row skips the row of taps above it).
        ptrs.resize((J1 - J0) * taps);
        tile_taps.resize(ntiles);
        ids.resize(ntiles * taps);
        const float** pt = ptrs.data();
        int32_t* id = ids.data();
        for (int64_t i = 0; i < ntiles; ++i) {
          // Each position's image and its row of offs, divided out once per
          // tile (not per tap: 2 divisions x taps x positions were 2-3% of
          // a 3x3 conv at 1 image).
          const int np = static_cast<int>(starts[i + 1] - starts[i]);
          const float* img[kTile];
          const int64_t* of[kTile];
          for (int p = 0; p < np; ++p) {
            const int64_t J = starts[i] + p;
            img[p] = x + J / OS * g.C * plane;
            of[p] = offs.data() + J % OS * taps;
          }
          tile_taps[i] = 0;
          for (int64_t t = 0; t < taps; ++t) {
            bool live = false;
            for (int p = 0; p < np; ++p) live = live || of[p][t] >= 0;
            if (!live) continue;
            ++tile_taps[i];
            *id++ = static_cast<int32_t>(t);
            for (int p = 0; p < np; ++p) *pt++ = of[p][t] >= 0 ? img[p] + of[p][t] : zero;
          }
        }
        table = r;
        fresh = true;
        // Per image of the range: the input rows its output rows read.
        seg_base.clear();
        seg_len.clear();
        for (int64_t J = J0; J < J1;) {
          const int64_t n = J / OS, j = J % OS, len = std::min(J1 - J, OS - j);
          const int64_t oh0 = j / g.OW, oh1 = (j + len - 1) / g.OW;
          const int64_t ih0 = std::max<int64_t>(0, oh0 * g.sh - g.ph);
          const int64_t ih1 = std::min(g.H, oh1 * g.sh - g.ph + (g.KH - 1) * g.dh + 1);
          if (ih0 < ih1) {
            seg_base.push_back(x + n * g.C * plane + ih0 * g.W);
            seg_len.push_back((ih1 - ih0) * g.W);
          }
          J += len;
        }
        plan.base = seg_base.data(), plan.len = seg_len.data(), plan.segs = static_cast<int64_t>(seg_base.size());
      }
      for (int64_t mb = band_mode ? 0 : grp; mb < (band_mode ? blocks : grp + 1); ++mb) {
        // The first block over a range brings its input into L2 (the later
        // ones find it there, unless it is more than L2 holds).
        const bool first = fresh || reread;
        fresh = false;
        k.block_fn(ptrs.data(), starts.data(), ntiles, tile_taps.data(), ids.data(), static_cast<int>(taps), plane, g.C,
                   w.chunks, w.w.data() + mb * g.C * taps * block, yt_buf.data(), first ? &plan : nullptr);
        // Y^T's rows into Y, image by image, with the epilogue.
        const int64_t m0 = mb * block, mc = std::min(block, g.M - m0);
        for (int64_t J = J0; J < J1;) {
          const int64_t n = J / OS, j = J % OS, len = std::min(J1 - J, OS - j);
          const int64_t at = (n * g.M + m0) * OS + j;
          sgemm::Epilogue ep;
          ep.bias = bias != nullptr ? bias + m0 : nullptr;
          ep.z = z != nullptr ? z + at : nullptr;
          ep.ldz = OS;
          ep.clamp = clamp;
          ep.lo = lo;
          ep.hi = hi;
          const bool any = ep.bias != nullptr || ep.z != nullptr || clamp;
          sgemm::Transpose(len, mc, yt_buf.data() + (J - J0) * block, block, y + at, OS, any ? &ep : nullptr);
          J += len;
        }
      }
    }
  });
  return true;
}

}  // namespace strided_conv
}  // namespace onyx

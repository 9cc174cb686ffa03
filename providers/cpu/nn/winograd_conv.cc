// Vector types only live inside the per-ISA regions below.
#pragma GCC diagnostic ignored "-Wpsabi"

#include "providers/cpu/nn/winograd_conv.h"

#include <algorithm>
#include <cmath>
#include <utility>
#include <cstdint>
#include <vector>

#include "providers/cpu/math/blas.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define ONYX_WINO_X86 1
#endif

namespace onyx {
namespace winograd {

#define ONYX_ISA_KERNEL "providers/cpu/nn/winograd_kernel.inc"
#include "providers/cpu/common/isa_regions.inc"
#undef ONYX_ISA_KERNEL

// The baseline path: one lane.
namespace scalar {
namespace {
struct VecTr {
  using V = float;
  static constexpr int W = 1;
  static inline V Zero() { return 0.f; }
  static inline V Set1(float v) { return v; }
  static inline V Load(const float* p) { return *p; }
  static inline V LoadN(const float* p, int n) { return n > 0 ? *p : 0.f; }
  static inline V LoadZ(const float* p, unsigned bits) { return (bits & 1u) ? *p : 0.f; }
  static inline void Store(float* p, V v) { *p = v; }
  static inline void StoreN(float* p, V v, int n) {
    if (n > 0) *p = v;
  }
  static inline V Add(V a, V b) { return a + b; }
  static inline V Mul(V a, V b) { return a * b; }
  static inline V Fma(V a, V b, V c) { return std::fma(a, b, c); }
  static inline V Max(V a, V b) { return a < b ? b : a; }
  static inline V Min(V a, V b) { return b < a ? b : a; }
  static inline V Sub(V a, V b) { return a - b; }
  static inline V Evens(V a, V) { return a; }
  static inline V Odds(V, V b) { return b; }
  static inline void Zip(V a, V b, V* lo, V* hi) {
    *lo = a;
    *hi = b;
  }
};
#include "providers/cpu/nn/winograd_kernel.inc"
}  // namespace
}  // namespace scalar

namespace {

using InputFn = void (*)(const Geom&, const float*, int64_t, int64_t, float*, int64_t, int64_t, int64_t, int64_t,
                         float*);
using OutputFn = void (*)(const Geom&, const float*, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t,
                          const float*, const float*, bool, float, float, float*, float*);

// Per ISA: the transforms of F(2x2, 3x3) ([0]) and F(4x4, 3x3) ([1]).
struct Kernels {
  int lanes;
  int64_t (*scratch)(int64_t);
  InputFn input[2];
  OutputFn output[2];
};

#define ONYX_WINO_KERNELS(ns)                                                                               \
  Kernels {                                                                                                 \
    ns::W, &ns::ScratchFloats, {&ns::InputTransform<2>, &ns::InputTransform<4>}, {                          \
      &ns::OutputTransform<2>, &ns::OutputTransform<4>                                                      \
    }                                                                                                       \
  }

const Kernels& KernelsFor(fastmath::Isa isa) {
  static const Kernels kScalar = ONYX_WINO_KERNELS(scalar);
#ifdef ONYX_WINO_X86
  static const Kernels kAvx512 = ONYX_WINO_KERNELS(avx512);
  static const Kernels kAvx2 = ONYX_WINO_KERNELS(avx2);
  if (isa == fastmath::Isa::kAvx512) return kAvx512;
  if (isa == fastmath::Isa::kAvx2) return kAvx2;
#endif
  (void)isa;
  return kScalar;
}

// Tiles per block: the block's V (C rows) and Y' (M rows) of P positions
// in about 3 MiB, in whole 16-column half panels of the SGEMM, 16 to 256.
// Each block reads all of U (P x M x C floats, 4 MiB at 256 channels and
// 16 positions), so fewer, larger blocks beat ones whose V and Y' stay in
// L2 (768 KiB: 14x14 at 256 channels 30% slower, 28x28 at 128 15%; 1
// thread, Zen 5).
int64_t BlockTiles(int64_t C, int64_t M, int P) {
  const int64_t fit = (3072 * 1024 / 4) / (P * (C + M));
  return std::min<int64_t>(256, std::max<int64_t>(16, fit / 16 * 16));
}

}  // namespace

size_t Filters::bytes() const {
  size_t b = raw.size() * sizeof(float);
  for (const sgemm::Packed& p : packed) b += p.bytes();
  return b;
}

// F(4x4, 3x3)'s G on the points 0, 1, -1, 2, -1/2 and infinity: row j is
// (1, a, a^2) / prod over the other finite points b of (a - b), the last
// row (0, 0, 1); B^T and A^T are the kernels' Transforms<4>::Bt and At.
constexpr double kG4[6][3] = {{1.0, 0.0, 0.0},
                              {-1.0 / 3, -1.0 / 3, -1.0 / 3},
                              {1.0 / 3, -1.0 / 3, 1.0 / 3},
                              {1.0 / 15, 2.0 / 15, 4.0 / 15},
                              {-16.0 / 15, 8.0 / 15, -4.0 / 15},
                              {0.0, 0.0, 1.0}};

// U = G g G^T of one 3x3 filter g, into u[p] (p = 6i + j), in double.
void Filter4(const float* g, float* u, int64_t stride) {
  double t[6][3];  // G g
  for (int i = 0; i < 6; ++i)
    for (int c = 0; c < 3; ++c) t[i][c] = kG4[i][0] * g[c] + kG4[i][1] * g[3 + c] + kG4[i][2] * g[6 + c];
  for (int i = 0; i < 6; ++i)
    for (int j = 0; j < 6; ++j)
      u[(6 * i + j) * stride] = static_cast<float>(t[i][0] * kG4[j][0] + t[i][1] * kG4[j][1] + t[i][2] * kG4[j][2]);
}

Filters TransformFilters(const float* w, int64_t M, int64_t C, int tile) {
  Filters f;
  f.M = M;
  f.C = C;
  f.tile = tile == 4 ? 4 : 2;
  const int P = f.positions();
  // U = G g G^T with (F(2x2, 3x3)) G = [1 0 0; 1/2 1/2 1/2; 1/2 -1/2 1/2;
  // 0 0 1], in double, G's zeros and ones left out (a full 4x3 product per
  // side was a third of ResNet-50's session creation), or Filter4's.
  // A run of channels at a time into `run`, then P contiguous copies: the
  // P planes of U lie a multiple of 4 KiB apart, and stores to all of them
  // at once fight over one L1 set.
  std::vector<float> u(static_cast<size_t>(P) * M * C);
  const size_t plane = static_cast<size_t>(M) * C;
  constexpr int64_t kRun = 64;
  std::vector<float> run(static_cast<size_t>(P) * kRun);
  for (int64_t m = 0; m < M; ++m) {
    for (int64_t c0 = 0; c0 < C; c0 += kRun) {
      const int64_t n = std::min(kRun, C - c0);
      for (int64_t c = 0; c < n; ++c) {
        const float* g = w + (m * C + c0 + c) * 9;
        if (f.tile == 4) {
          Filter4(g, run.data() + c, kRun);
          continue;
        }
        double t[4][3];  // G g
        for (int j = 0; j < 3; ++j) {
          const double r0 = g[j], r1 = g[3 + j], r2 = g[6 + j];
          t[0][j] = r0;
          t[1][j] = 0.5 * (r0 + r1 + r2);
          t[2][j] = 0.5 * (r0 - r1 + r2);
          t[3][j] = r2;
        }
        for (int i = 0; i < 4; ++i) {
          const double a = t[i][0], b = t[i][1], d = t[i][2];
          run[(4 * i) * kRun + c] = static_cast<float>(a);
          run[(4 * i + 1) * kRun + c] = static_cast<float>(0.5 * (a + b + d));
          run[(4 * i + 2) * kRun + c] = static_cast<float>(0.5 * (a - b + d));
          run[(4 * i + 3) * kRun + c] = static_cast<float>(d);
        }
      }
      for (int p = 0; p < P; ++p)
        std::copy(run.data() + p * kRun, run.data() + p * kRun + n, u.data() + p * plane + m * C + c0);
    }
  }
  for (int p = 0; p < P; ++p) {
    f.packed.push_back(sgemm::PackA(false, M, C, u.data() + p * M * C, C));
    if (f.packed.back().empty()) {
      f.packed.clear();
      break;
    }
  }
  if (f.packed.empty()) f.raw = std::move(u);
  return f;
}

bool Supports(const std::vector<int64_t>& kernel, const std::vector<int64_t>& strides,
              const std::vector<int64_t>& dilations, const std::vector<int64_t>& pads, int64_t group) {
  if (group != 1 || kernel.size() != 2 || kernel[0] != 3 || kernel[1] != 3) return false;
  for (int64_t s : strides)
    if (s != 1) return false;
  for (int64_t d : dilations)
    if (d != 1) return false;
  for (int64_t p : pads)
    if (p < 0 || p > 2) return false;
  return true;
}

// Per-layer times, 1 thread, batch 1, Zen 5, against the direct SGEMM conv
// (bias + Relu): 64 channels at 56x56 0.66 ms vs 1.03, 128 at 28x28 0.58 vs
// 0.97, 256 at 14x14 0.75 vs 1.09, 512 at 7x7 0.95 vs 1.30; 32 at 56x56
// 0.22 vs 0.26, 64 at 14x14 0.061 vs 0.069, 128 at 7x7 0.069 vs 0.078. It
// loses with 16 channels (the products' depth is too short to hide the
// transforms: 16 at 56x56 0.085 vs 0.074), 32 on small images (14x14 0.023
// vs 0.020), tiny images (4x4: 1.2-2x slower) and where U, 16/9 the size
// of W, is read for too few tiles (1024 channels at 7x7: 5.6 ms vs 5.2).
namespace {
bool Wins2(int64_t C, int64_t M, int64_t OH, int64_t OW) {
  const int64_t tiles = ((OH + 1) / 2) * ((OW + 1) / 2);  // per image; 0 when unknown
  if (C < 32 || M < 32) return false;
  if (OH <= 0 || OW <= 0) return C >= 64 && M >= 64 && C * M <= 512 * 512;
  if (tiles < 16 || C * M > 16384 * tiles) return false;
  return (C >= 64 && M >= 64) || tiles >= 196;
}
}  // namespace

// F(4x4, 3x3) where its 36 products per 16 outputs pay: in ResNet-50 (2
// threads, Zen 5, A/B of session.conv.winograd_f4 in one build, per-node
// minima of 10-30 runs) the 56x56 convs (64 channels) took 18-25% less time
// at batch 1 and 8, the 28x28 ones (128) 20% less at batch 8 and the same
// at batch 1 (49 tiles: 36 products of 49 columns), the 14x14 ones (256)
// 4% less at batch 8 and the same at batch 1, for U of 9.4 MiB per conv
// (2.25x F(2x2, 3x3)'s, read once per block of tiles); whole model 5.7%
// less at batch 8 (medians of 4 interleaved rounds), batch 1 within noise.
// With this rule (56x56 and 28x28 only): batch 1 0.998 on the AVX-512
// path; on the AVX2 one (ONYX_CPU_ISA=avx2) batch 8 0.965, batch 1 0.975.
// Not at 7x7 (4 tiles per image; 1.07-3x slower) nor on unknown sizes.
int TileFor(int64_t C, int64_t M, int64_t OH, int64_t OW, bool allow_f4) {
  if (!Wins2(C, M, OH, OW)) return 0;
  if (allow_f4 && C >= 64 && M >= 64 && OH >= 28 && OW >= 28 && C * M <= 256 * 256) return 4;
  return 2;
}

void Run(const Geom& g, const Filters& u, const float* x, const float* bias, const float* z, bool clamp, float lo,
         float hi, float* y, ThreadPool* pool) {
  const Kernels& k = KernelsFor(sgemm::ActiveIsa());
  const bool packed = !u.packed.empty() && sgemm::Usable(&u.packed[0], true, g.M, g.C);
  const int m = u.tile, P = u.positions(), f4 = m == 4 ? 1 : 0;
  const int64_t TH = (g.OH + m - 1) / m, TW = (g.OW + m - 1) / m, T = g.N * TH * TW;
  if (T == 0) return;
  const int64_t threads = pool ? pool->NumThreads() : 1;
  int64_t tb = BlockTiles(g.C, g.M, P);
  int64_t blocks = (T + tb - 1) / tb;
  // Blocks shared evenly: a multiple of the threads, or one block (all the
  // tiles fit one) whose phases are split over the threads instead, so that
  // U is read once, not once per thread.
  if (blocks > 1) blocks = (blocks + threads - 1) / threads * threads;
  // Equal blocks (784 tiles in 4: 196 each, not 3 x 208 + 160); their
  // rows padded to whole 64-byte lines, never 512 floats (sgemm.h: B read
  // in place needs rows that do not share cache sets).
  tb = (T + blocks - 1) / blocks;
  blocks = (T + tb - 1) / tb;
  int64_t ldv = (tb + 15) / 16 * 16;
  if (ldv % 512 == 0) ldv += 16;
  // The P positions' panels are written (input transform) and read (output
  // transform) side by side: 256 bytes past a multiple of 4 KiB apart, so
  // that the P streams fall in different L1 sets (a multiple of 4 KiB, as
  // 64 channels x 96 tiles is, puts all 16 in one set and halves the speed
  // of both transforms).
  auto spread = [](int64_t floats) { return (floats + 1023) / 1024 * 1024 + 64; };
  const int64_t vps = spread(g.C * ldv), yps = spread(g.M * ldv);
  const int64_t v_floats = P * vps, y_floats = P * yps + k.lanes;
  const int64_t scratch_floats = k.scratch(std::min(tb, TW));
  const size_t need = static_cast<size_t>(v_floats + y_floats + scratch_floats);
  // One block's P products, on the calling thread (pool null) or spread over the pool.
  // Each is one task of RunInPlaceB (U pre-packed, V read in place), whose
  // columns waste little at batch 1: 49 tiles (14x14) run as a 32-column
  // tile, a 16-column half tile and EdgeColumns<1>, 16 tiles (7x7) as one
  // half tile; at 2 threads the positions are split 8 and 8. What is left
  // is reading U (4 MiB at 256 channels, 16 at 512) from memory for few
  // columns. Touching U[p + 1]'s first rows into L2 during U[p]'s last
  // ones (a Gemm hint) gained 5-8% at 14x14 but cost 4-30% at 7x7 (two K
  // blocks, where the hint did not even run), unexplained; not taken.
  auto products = [&](const float* v, float* yp, int64_t n, ThreadPool* on) {
    ThreadPool::For(on, P, 1, [&](int64_t p0, int64_t p1) {
      for (int64_t p = p0; p < p1; ++p) {
        const float* vp = v + p * vps;
        float* ypp = yp + p * yps;
        if (packed) {
          sgemm::Gemm(false, false, g.M, n, g.C, 1.f, nullptr, g.C, vp, ldv, 0.f, ypp, ldv, nullptr, &u.packed[p]);
        } else {
          BlasGemm<float>(false, false, g.M, n, g.C, 1.f, u.raw.data() + p * g.M * g.C, g.C, vp, ldv, 0.f, ypp, ldv,
                          nullptr);
        }
      }
    });
  };
  if (blocks == 1 && threads > 1) {
    // Too few tiles to share (a 7x7 image: 16): one block, each phase
    // split over the pool instead (channels, positions, output channels).
    thread_local std::vector<float> shared;
    if (shared.size() < need) shared.resize(need);
    float* v = shared.data();
    float* yp = v + v_floats;
    ThreadPool::For(pool, g.C, 8, [&](int64_t c0, int64_t c1) {
      thread_local std::vector<float> scratch;
      if (scratch.size() < static_cast<size_t>(scratch_floats)) scratch.resize(scratch_floats);
      k.input[f4](g, x, 0, T, v, ldv, vps, c0, c1, scratch.data());
    });
    products(v, yp, T, pool);
    ThreadPool::For(pool, g.M, 8, [&](int64_t m0, int64_t m1) {
      thread_local std::vector<float> scratch;
      if (scratch.size() < static_cast<size_t>(scratch_floats)) scratch.resize(scratch_floats);
      k.output[f4](g, yp, ldv, yps, 0, T, m0, m1, bias, z, clamp, lo, hi, y, scratch.data());
    });
    return;
  }
  ThreadPool::For(pool, blocks, 1, [&](int64_t b0, int64_t b1) {
    thread_local std::vector<float> buf;
    if (buf.size() < need) buf.resize(need);
    float* v = buf.data();
    float* yp = v + v_floats;
    float* scratch = yp + y_floats;
    for (int64_t b = b0; b < b1; ++b) {
      const int64_t t0 = b * tb, t1 = std::min(T, t0 + tb), n = t1 - t0;
      k.input[f4](g, x, t0, t1, v, ldv, vps, 0, g.C, scratch);
      products(v, yp, n, nullptr);
      k.output[f4](g, yp, ldv, yps, t0, t1, 0, g.M, bias, z, clamp, lo, hi, y, scratch);
    }
  });
}

}  // namespace winograd
}  // namespace onyx

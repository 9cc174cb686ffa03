#include "providers/cpu/quantization/int8_gemm.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "providers/cpu/common/fast_math.h"
#include "providers/cpu/common/vector_types.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define ONYX_INT8_X86 1
#endif

namespace onyx {
namespace int8gemm {

namespace {

constexpr int64_t kNr = 64;   // columns per panel of packed B
// Values of K per pass: a 24 KB slice of a panel stays in L1 (48 KB on Zen 4/5,
// 32 KB elsewhere) with a tile's rows of A and accumulators. Measured against
// 256 (1 thread, AVX-512 VNNI): BERT's [128, 768] x [768, 3072] and
// [128, 3072] x [3072, 768] ~2% faster (fewer reloads of the accumulators),
// ResNet-50's QLinearConvs no slower.
constexpr int64_t kKc = 384;
constexpr int64_t kWholePanelBytes = 36 * 1024;  // a panel this small goes in one pass
constexpr int kMaxMr = 6;     // rows per micro-tile, at most

inline int64_t RoundUp4(int64_t k) { return (k + 3) / 4 * 4; }

inline uint32_t Load32(const void* p) {
  uint32_t v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

// A micro-kernel: tile[MR][kNr] (+)= A' x B' over k4 groups of 4 values of
// K. `a`: the tile's packed A, [k4][mr][4] of the path's A type; `b`: the
// panel, [k4][kNr][4] int8.
using KernelFn = void (*)(const void* a, const int8_t* b, int64_t k4, int32_t* tile, bool accumulate);

template <int MR>
void KernelScalar(const void* ap, const int8_t* b, int64_t k4, int32_t* tile, bool accumulate) {
  const uint8_t* a = static_cast<const uint8_t*>(ap);
  uint32_t r[MR][kNr];  // wraps mod 2^32, as vpdpbusd does
  for (int i = 0; i < MR; ++i)
    for (int64_t j = 0; j < kNr; ++j) r[i][j] = accumulate ? static_cast<uint32_t>(tile[i * kNr + j]) : 0;
  for (int64_t k = 0; k < k4; ++k, a += MR * 4, b += kNr * 4) {
    for (int i = 0; i < MR; ++i) {
      const int32_t a0 = a[i * 4], a1 = a[i * 4 + 1], a2 = a[i * 4 + 2], a3 = a[i * 4 + 3];
      for (int64_t j = 0; j < kNr; ++j)
        r[i][j] += static_cast<uint32_t>(a0 * b[j * 4] + a1 * b[j * 4 + 1] + a2 * b[j * 4 + 2] + a3 * b[j * 4 + 3]);
    }
  }
  for (int i = 0; i < MR; ++i)
    for (int64_t j = 0; j < kNr; ++j) tile[i * kNr + j] = static_cast<int32_t>(r[i][j]);
}

#ifdef ONYX_INT8_X86

#define ONYX_INT8_AVX2 __attribute__((target("avx2")))
#define ONYX_INT8_VNNI __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni,avx2")))
#define ONYX_INT8_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx2")))

inline uint64_t Load64(const void* p) {
  uint64_t v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

// vpdpbusd: each int32 lane adds four u8 x s8 products, without saturation.
// MR x 4 zmm accumulators hold the tile.
template <int MR>
ONYX_INT8_VNNI void KernelVnni512(const void* ap, const int8_t* b, int64_t k4, int32_t* tile, bool accumulate) {
  const uint8_t* a = static_cast<const uint8_t*>(ap);
  __m512i r[MR][4];
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 4
    for (int j = 0; j < 4; ++j)
      r[i][j] = accumulate ? _mm512_loadu_si512(tile + i * kNr + j * 16) : _mm512_setzero_si512();
  for (int64_t k = 0; k < k4; ++k, a += MR * 4, b += kNr * 4) {
    const __m512i b0 = _mm512_loadu_si512(b);
    const __m512i b1 = _mm512_loadu_si512(b + 64);
    const __m512i b2 = _mm512_loadu_si512(b + 128);
    const __m512i b3 = _mm512_loadu_si512(b + 192);
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i) {
      const __m512i av = _mm512_set1_epi32(static_cast<int>(Load32(a + i * 4)));
      r[i][0] = _mm512_dpbusd_epi32(r[i][0], av, b0);
      r[i][1] = _mm512_dpbusd_epi32(r[i][1], av, b1);
      r[i][2] = _mm512_dpbusd_epi32(r[i][2], av, b2);
      r[i][3] = _mm512_dpbusd_epi32(r[i][3], av, b3);
    }
  }
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 4
    for (int j = 0; j < 4; ++j) _mm512_storeu_si512(tile + i * kNr + j * 16, r[i][j]);
}

// KernelVnni512 reading A where it lies: `pieces` runs of len4[p] groups of
// 4 values, row i of run p from rows[p * MR + i]; the panel `b` continues
// from run to run.
template <int MR>
ONYX_INT8_VNNI void KernelVnni512Rows(const uint8_t* const* rows, const int64_t* len4, int64_t pieces,
                                      const int8_t* b, int32_t* tile, bool accumulate) {
  __m512i r[MR][4];
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 4
    for (int j = 0; j < 4; ++j)
      r[i][j] = accumulate ? _mm512_loadu_si512(tile + i * kNr + j * 16) : _mm512_setzero_si512();
  for (int64_t p = 0; p < pieces; ++p) {
    const uint8_t* a[MR];
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i) a[i] = rows[p * MR + i];
    const int64_t n = len4[p];
    for (int64_t k = 0; k < n; ++k, b += kNr * 4) {
      const __m512i b0 = _mm512_loadu_si512(b);
      const __m512i b1 = _mm512_loadu_si512(b + 64);
      const __m512i b2 = _mm512_loadu_si512(b + 128);
      const __m512i b3 = _mm512_loadu_si512(b + 192);
#pragma GCC unroll 8
      for (int i = 0; i < MR; ++i) {
        const __m512i av = _mm512_set1_epi32(static_cast<int>(Load32(a[i] + k * 4)));
        r[i][0] = _mm512_dpbusd_epi32(r[i][0], av, b0);
        r[i][1] = _mm512_dpbusd_epi32(r[i][1], av, b1);
        r[i][2] = _mm512_dpbusd_epi32(r[i][2], av, b2);
        r[i][3] = _mm512_dpbusd_epi32(r[i][3], av, b3);
      }
    }
  }
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 4
    for (int j = 0; j < 4; ++j) _mm512_storeu_si512(tile + i * kNr + j * 16, r[i][j]);
}

// AVX2: A packed as int16 ([k4][mr][4]); 16 bytes of the panel (4 columns x
// 4 values of K) widen to int16 and vpmaddwd sums pairs exactly (|u8 x s8|
// <= 32640), leaving two partial sums per column that vphaddd joins. The
// panel goes in chunks of 8 columns: MR x 2 ymm accumulators.
template <int MR>
ONYX_INT8_AVX2 void KernelAvx2(const void* ap, const int8_t* b, int64_t k4, int32_t* tile, bool accumulate) {
  const int16_t* a0 = static_cast<const int16_t*>(ap);
  for (int64_t cc = 0; cc < kNr; cc += 8) {
    __m256i r[MR][2];
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i) r[i][0] = r[i][1] = _mm256_setzero_si256();
    const int16_t* a = a0;
    const int8_t* bp = b + cc * 4;
    for (int64_t k = 0; k < k4; ++k, a += MR * 4, bp += kNr * 4) {
      const __m256i b0 = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(bp)));
      const __m256i b1 = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(bp + 16)));
#pragma GCC unroll 8
      for (int i = 0; i < MR; ++i) {
        const __m256i av = _mm256_set1_epi64x(static_cast<long long>(Load64(a + i * 4)));
        r[i][0] = _mm256_add_epi32(r[i][0], _mm256_madd_epi16(b0, av));
        r[i][1] = _mm256_add_epi32(r[i][1], _mm256_madd_epi16(b1, av));
      }
    }
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i) {
      // hadd gives columns [0 1 4 5 | 2 3 6 7]; the permute puts them in order.
      __m256i s = _mm256_permute4x64_epi64(_mm256_hadd_epi32(r[i][0], r[i][1]), 0xD8);
      int32_t* t = tile + i * kNr + cc;
      if (accumulate) s = _mm256_add_epi32(s, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(t)));
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(t), s);
    }
  }
}

#endif  // ONYX_INT8_X86

// Packs rows [m0, m0 + mr) of A as A' (uint8; int16 when OutT is) in
// [kp/4][mr][4], zero past K; rowsum[i] = sum over k of A'[m0 + i, k] unless
// rowsum is null (the zero point of B' is 0: the sums are not needed).
template <typename OutT>
inline __attribute__((always_inline)) void PackABody(const uint8_t* a, bool a_signed, int64_t lda, int64_t m0, int mr,
                                                    int64_t K, int64_t kp, OutT* out, int32_t* rowsum) {
  const uint8_t flip = a_signed ? 0x80 : 0;
  const int64_t kfull = K & ~int64_t{3};
  for (int i = 0; i < mr; ++i) {
    const uint8_t* row = a + (m0 + i) * lda;
    if (rowsum != nullptr) {
      uint32_t sum = 0;
      for (int64_t k = 0; k < K; ++k) sum += static_cast<uint8_t>(row[k] ^ flip);
      rowsum[i] = static_cast<int32_t>(sum);
    }
    OutT* o = out + i * 4;
    if constexpr (sizeof(OutT) == 1) {
      // Four values of K at a time, as one 32-bit word.
      const uint32_t flip4 = flip * 0x01010101u;
      for (int64_t k = 0; k < kfull; k += 4, o += mr * 4) {
        const uint32_t v = Load32(row + k) ^ flip4;
        std::memcpy(o, &v, sizeof(v));
      }
    } else {
      for (int64_t k = 0; k < kfull; k += 4, o += mr * 4)
        for (int j = 0; j < 4; ++j) o[j] = static_cast<OutT>(static_cast<uint8_t>(row[k + j] ^ flip));
    }
    for (int64_t k = kfull; k < kp; ++k) o[k - kfull] = k < K ? static_cast<OutT>(static_cast<uint8_t>(row[k] ^ flip)) : 0;
  }
}

// tile[i][j] -= za[i] * cb[j] + zb[j] * rs[i] (mod 2^32), the zero points'
// share of rows [0, rows) and columns [0, cols) of a [.][kNr] tile.
inline __attribute__((always_inline)) void CorrectBody(int32_t* tile, int64_t rows, int64_t cols, const uint32_t* za,
                                                      const uint32_t* rs, const uint32_t* cb, const uint32_t* zb) {
  for (int64_t i = 0; i < rows; ++i) {
    uint32_t* r = reinterpret_cast<uint32_t*>(tile + i * kNr);
    const uint32_t zai = za[i], rsi = rs[i];
    for (int64_t j = 0; j < cols; ++j) r[j] -= zai * cb[j] + zb[j] * rsi;
  }
}

// A micro-kernel over A read where it lies (KernelVnni512Rows).
using RowsKernelFn = void (*)(const uint8_t* const* rows, const int64_t* len4, int64_t pieces, const int8_t* b,
                              int32_t* tile, bool accumulate);

// Rows [m0, m0 + mr) of A given by address (GemmArgs::a_rows: `addr`, nseg
// pieces of seg values each, seg % 4 == 0), raw, as [K/4][mr][4].
void PackRowsByAddress(const uint8_t* const* addr, int64_t nseg, int64_t seg, int mr, uint8_t* out) {
  const int64_t step = static_cast<int64_t>(mr) * 4;
  for (int i = 0; i < mr; ++i) {
    uint8_t* dst = out + i * 4;
    for (int64_t s = 0; s < nseg; ++s) {
      const uint8_t* src = addr[i * nseg + s];
      for (int64_t k = 0; k < seg; k += 4, dst += step) std::memcpy(dst, src + k, 4);
    }
  }
}

// A tile of raw bytes ([kp/4][mr][4], PackRowsByAddress) made A':
// each byte ^ flip, in place, or widened into out16 (the int16 paths);
// rowsum[i] (when not null) = the sum of row i.
void FinishPackedA(uint8_t* tile, int mr, int64_t kp, uint8_t flip, int32_t* rowsum, int16_t* out16) {
  const int64_t n = kp * mr;
  if (out16 != nullptr) {
    for (int64_t i = 0; i < n; ++i) out16[i] = static_cast<int16_t>(static_cast<uint8_t>(tile[i] ^ flip));
  } else if (flip != 0) {
    for (int64_t i = 0; i < n; ++i) tile[i] ^= flip;
  }
  if (rowsum == nullptr) return;
  for (int i = 0; i < mr; ++i) {
    uint32_t sum = 0;
    for (int64_t k4 = 0; k4 < kp / 4; ++k4)
      for (int j = 0; j < 4; ++j) sum += static_cast<uint8_t>(tile[(k4 * mr + i) * 4 + j] ^ (out16 ? flip : 0));
    rowsum[i] = static_cast<int32_t>(sum);
  }
}

using PackAFn = void (*)(const uint8_t*, bool, int64_t, int64_t, int, int64_t, int64_t, void*, int32_t*);
using CorrectFn = void (*)(int32_t*, int64_t, int64_t, const uint32_t*, const uint32_t*, const uint32_t*,
                           const uint32_t*);

// Columns [n0, n0 + nn) of B' (B ^ flip) as one panel: out [kp/4][kNr][4],
// every byte written (zero past K and past nn); cs[j] = their column sums.
inline __attribute__((always_inline)) void PackPanelBody(const uint8_t* b, int64_t ldb, int64_t K, int64_t kp, int64_t n0, int64_t nn, uint8_t flip,
               int8_t* out, int32_t* cs) {
  for (int64_t j = 0; j < kNr; ++j) cs[j] = 0;
  for (int64_t k = 0; k < K; ++k) {
    const uint8_t* row = b + k * ldb + n0;
    for (int64_t j = 0; j < nn; ++j) cs[j] += static_cast<int8_t>(row[j] ^ flip);
  }
  for (int64_t k0 = 0; k0 < kp; k0 += 4) {
    int8_t* o = out + k0 * kNr;
    const uint8_t* r0 = b + k0 * ldb + n0;
#ifdef ONYX_INT8_X86
    if (k0 + 4 <= K && nn == kNr) {
      // 4 rows x 16 columns -> 16 columns x 4 rows, by byte then word unpacks (SSE2).
      const __m128i f = _mm_set1_epi8(static_cast<char>(flip));
      for (int64_t j = 0; j < kNr; j += 16) {
        auto row = [&](int64_t i) {
          return _mm_xor_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(r0 + i * ldb + j)), f);
        };
        const __m128i a = row(0), bb = row(1), c = row(2), d = row(3);
        const __m128i ab_lo = _mm_unpacklo_epi8(a, bb), ab_hi = _mm_unpackhi_epi8(a, bb);
        const __m128i cd_lo = _mm_unpacklo_epi8(c, d), cd_hi = _mm_unpackhi_epi8(c, d);
        __m128i* dst = reinterpret_cast<__m128i*>(o + j * 4);
        _mm_storeu_si128(dst, _mm_unpacklo_epi16(ab_lo, cd_lo));
        _mm_storeu_si128(dst + 1, _mm_unpackhi_epi16(ab_lo, cd_lo));
        _mm_storeu_si128(dst + 2, _mm_unpacklo_epi16(ab_hi, cd_hi));
        _mm_storeu_si128(dst + 3, _mm_unpackhi_epi16(ab_hi, cd_hi));
      }
      continue;
    }
#endif
    for (int64_t j = 0; j < kNr; ++j)
      for (int64_t kk = 0; kk < 4; ++kk)
        o[j * 4 + kk] = (j < nn && k0 + kk < K) ? static_cast<int8_t>(r0[kk * ldb + j] ^ flip) : 0;
  }
}

using PackPanelFn = void (*)(const uint8_t*, int64_t, int64_t, int64_t, int64_t, int64_t, uint8_t, int8_t*, int32_t*);

// Per path: the A packing of its A type, B's panel packing and the
// correction, compiled for its instruction set.
#define ONYX_INT8_HELPERS(NAME, ATTR, ATYPE)                                                                     \
  ATTR void PackA##NAME(const uint8_t* a, bool s, int64_t lda, int64_t m0, int mr, int64_t K, int64_t kp,      \
                        void* out, int32_t* rowsum) {                                                         \
    PackABody(a, s, lda, m0, mr, K, kp, static_cast<ATYPE*>(out), rowsum);                                    \
  }                                                                                                           \
  ATTR void Correct##NAME(int32_t* t, int64_t rows, int64_t cols, const uint32_t* za, const uint32_t* rs,     \
                          const uint32_t* cb, const uint32_t* zb) {                                           \
    CorrectBody(t, rows, cols, za, rs, cb, zb);                                                               \
  }                                                                                                           \
  ATTR void PackPanel##NAME(const uint8_t* b, int64_t ldb, int64_t K, int64_t kp, int64_t n0, int64_t nn,     \
                            uint8_t flip, int8_t* out, int32_t* cs) {                                         \
    PackPanelBody(b, ldb, K, kp, n0, nn, flip, out, cs);                                                      \
  }

ONYX_INT8_HELPERS(Base, , uint8_t)
#ifdef ONYX_INT8_X86
ONYX_INT8_HELPERS(Avx2, ONYX_INT8_AVX2, int16_t)
ONYX_INT8_HELPERS(Avx512, ONYX_INT8_AVX512, uint8_t)
#endif

// One path: its micro-kernels by row count (1..mr) and how A is packed.
struct Impl {
  int mr;
  bool a_int16;  // A packed as int16 (else uint8)
  PackAFn pack_a;
  CorrectFn correct;
  PackPanelFn pack_panel;
  KernelFn kernels[kMaxMr + 1];
  RowsKernelFn rows_kernels[kMaxMr + 1];  // null where the path has none
};

const Impl kScalarImpl = {4,           false,
                          PackABase,   CorrectBase,
                          PackPanelBase,
                          {nullptr, KernelScalar<1>, KernelScalar<2>, KernelScalar<3>, KernelScalar<4>},
                          {}};
#ifdef ONYX_INT8_X86
// 4 rows: 8 accumulators, 2 B vectors, A and the products stay in AVX2's
// 16 ymm (GCC spills at 5 and 6 rows, measured ~35% slower).
const Impl kAvx2Impl = {4,         true,
                        PackAAvx2, CorrectAvx2,
                        PackPanelAvx2,
                        {nullptr, KernelAvx2<1>, KernelAvx2<2>, KernelAvx2<3>, KernelAvx2<4>},
                        {}};
const Impl kVnniImpl = {6,
                        false,
                        PackAAvx512,
                        CorrectAvx512,
                        PackPanelAvx512,
                        {nullptr, KernelVnni512<1>, KernelVnni512<2>, KernelVnni512<3>, KernelVnni512<4>,
                         KernelVnni512<5>, KernelVnni512<6>},
                        {nullptr, KernelVnni512Rows<1>, KernelVnni512Rows<2>, KernelVnni512Rows<3>,
                         KernelVnni512Rows<4>, KernelVnni512Rows<5>, KernelVnni512Rows<6>}};
#endif

Path DetectPath() {
#ifdef ONYX_INT8_X86
  const fastmath::Isa isa = fastmath::BestIsa();
  __builtin_cpu_init();
  if (isa == fastmath::Isa::kAvx512 && __builtin_cpu_supports("avx512vnni")) return Path::kAvx512Vnni;
  if (isa >= fastmath::Isa::kAvx2) return Path::kAvx2;
#endif
  return Path::kScalar;
}

std::atomic<Path>& ActivePath() {
  static std::atomic<Path> active{BestPath()};
  return active;
}

const Impl& ImplFor(Path p) {
#ifdef ONYX_INT8_X86
  if (p == Path::kAvx512Vnni) return kVnniImpl;
  if (p == Path::kAvx2) return kAvx2Impl;
#endif
  (void)p;
  return kScalarImpl;
}

}  // namespace

namespace {

using vec::F4;
using vec::I4;
using vec::F8;
using vec::I8;
using vec::F16;
using vec::I16;

// DynamicQuantizeLinear's two passes over W floats at a time (GCC vector
// types: SSE2, AVX2 or AVX-512 code from one template).
template <typename F, typename I>
struct QuantBody {
  static constexpr int W = sizeof(F) / sizeof(float);

  // min, max, and a value that is NaN once some x is inf or NaN. Four
  // accumulators of each, not one chain of dependent min/max/add steps
  // (DynamicQuantizeLinear on BERT's [128, 3072], 1 thread: ~46 -> ~42 us).
  static constexpr int kAcc = 4;
  static inline __attribute__((always_inline)) void Range(const float* x, int64_t n, float* lo, float* hi,
                                                         float* bad) {
    F vlo[kAcc], vhi[kAcc], vbad[kAcc];
    for (int a = 0; a < kAcc; ++a) vlo[a] = vhi[a] = vbad[a] = F{} + 0.f;
    int64_t i = 0;
    for (; i + kAcc * W <= n; i += kAcc * W) {
#pragma GCC unroll 4
      for (int a = 0; a < kAcc; ++a) {
        F v;
        std::memcpy(&v, x + i + a * W, sizeof(v));
        vlo[a] = v < vlo[a] ? v : vlo[a];
        vhi[a] = v > vhi[a] ? v : vhi[a];
        vbad[a] += v - v;
      }
    }
    for (; i + W <= n; i += W) {
      F v;
      std::memcpy(&v, x + i, sizeof(v));
      vlo[0] = v < vlo[0] ? v : vlo[0];
      vhi[0] = v > vhi[0] ? v : vhi[0];
      vbad[0] += v - v;
    }
    float l = 0.f, h = 0.f, b = 0.f;
    for (int a = 0; a < kAcc; ++a)
      for (int k = 0; k < W; ++k) {
        l = vlo[a][k] < l ? vlo[a][k] : l;
        h = vhi[a][k] > h ? vhi[a][k] : h;
        b += vbad[a][k];
      }
    for (; i < n; ++i) {
      l = x[i] < l ? x[i] : l;
      h = x[i] > h ? x[i] : h;
      b += x[i] - x[i];
    }
    *lo = l;
    *hi = h;
    *bad = b;
  }

};

// q[i] = saturate(round_half_even(x[i] / s) + zp) for 8-bit Q, NaN giving
// zp: the quotient clamped to Q's range less zp, then rounded by adding and
// taking away 1.5 * 2^23 (exact there). The loop the compiler vectorizes
// for baseline and AVX2 (its arguments are locals: a store through an 8-bit
// pointer may alias anything).
template <typename Q>
inline __attribute__((always_inline)) void Quantize8Body(const float* __restrict x, int64_t n, float s, int32_t zp,
                                                         Q* __restrict q) {
  const float lo = static_cast<float>(std::numeric_limits<Q>::min() - zp);
  const float hi = static_cast<float>(std::numeric_limits<Q>::max() - zp);
  for (int64_t i = 0; i < n; ++i) {
    float v = x[i] / s;
    v = v == v ? v : 0.f;
    v = v < lo ? lo : (v > hi ? hi : v);
    q[i] = static_cast<Q>(static_cast<int32_t>((v + 12582912.f) - 12582912.f) + zp);
  }
}

// RequantizeFloat over W lanes at a time. Adding and taking away 1.5 * 2^23
// rounds half to even once the value is clamped to the output's range.
template <typename F, typename I, typename Q>
struct RequantBody {
  static constexpr int W = sizeof(F) / sizeof(float);
  typedef uint32_t U __attribute__((vector_size(sizeof(F))));
  typedef Q QV __attribute__((vector_size(W)));

  static inline __attribute__((always_inline)) float One(int32_t a, int32_t bias, float s, float lo, float hi) {
    float v = static_cast<float>(static_cast<int32_t>(static_cast<uint32_t>(a) + static_cast<uint32_t>(bias))) * s;
    v = v != v ? 0.f : v;
    v = v < lo ? lo : (v > hi ? hi : v);
    return (v + 12582912.f) - 12582912.f;
  }

  // bias_vec (may be null): bias_vec[i] is added instead of bias.
  static inline __attribute__((always_inline)) void Run(const int32_t* acc, int64_t n, int32_t bias,
                                                       const int32_t* bias_vec, const float* scale, bool per,
                                                       int32_t zp, Q* out) {
    const float lo = static_cast<float>(static_cast<int32_t>(std::numeric_limits<Q>::min()) - zp);
    const float hi = static_cast<float>(static_cast<int32_t>(std::numeric_limits<Q>::max()) - zp);
    const float s0 = scale[0];
    const U ub = U{} + static_cast<uint32_t>(bias);
    int64_t i = 0;
    for (; i + W <= n; i += W) {
      U a, bv = ub;
      std::memcpy(&a, acc + i, sizeof(a));
      if (bias_vec != nullptr) std::memcpy(&bv, bias_vec + i, sizeof(bv));
      F v = __builtin_convertvector(reinterpret_cast<I>(a + bv), F);
      F s = F{} + s0;
      if (per) std::memcpy(&s, scale + i, sizeof(s));
      v = v * s;
      v = v != v ? F{} : v;
      v = v < lo ? F{} + lo : v;
      v = v > hi ? F{} + hi : v;
      v = (v + 12582912.f) - 12582912.f;
      // In Q's range now: narrowing keeps the value (one vpmovdb / pack).
      const QV q = __builtin_convertvector(__builtin_convertvector(v, I) + zp, QV);
      std::memcpy(out + i, &q, sizeof(q));
    }
    for (; i < n; ++i)
      out[i] = static_cast<Q>(
          static_cast<int32_t>(One(acc[i], bias_vec ? bias_vec[i] : bias, per ? scale[i] : s0, lo, hi)) + zp);
  }
};

void RangeBase(const float* x, int64_t n, float* lo, float* hi, float* bad) { QuantBody<F4, I4>::Range(x, n, lo, hi, bad); }
template <typename Q>
void Quantize8Base(const float* x, int64_t n, float s, int32_t zp, Q* q) {
  Quantize8Body(x, n, s, zp, q);
}
#ifdef ONYX_INT8_X86
ONYX_INT8_AVX2 void RangeAvx2(const float* x, int64_t n, float* lo, float* hi, float* bad) {
  QuantBody<F8, I8>::Range(x, n, lo, hi, bad);
}
template <typename Q>
ONYX_INT8_AVX2 void Quantize8Avx2(const float* x, int64_t n, float s, int32_t zp, Q* q) {
  Quantize8Body(x, n, s, zp, q);
}
ONYX_INT8_AVX512 void RangeAvx512(const float* x, int64_t n, float* lo, float* hi, float* bad) {
  QuantBody<F16, I16>::Range(x, n, lo, hi, bad);
}
// Quantize8Body in intrinsics (what GCC made of the loop took twice the
// instructions): the same division and clamp, the conversion rounding half
// to even (MXCSR's default), NaN lanes masked to 0, a saturating narrow.
template <typename Q>
ONYX_INT8_AVX512 void Quantize8Avx512(const float* x, int64_t n, float s, int32_t zp, Q* q) {
  const __m512 vs = _mm512_set1_ps(s);
  const __m512 vl = _mm512_set1_ps(static_cast<float>(std::numeric_limits<Q>::min() - zp));
  const __m512 vh = _mm512_set1_ps(static_cast<float>(std::numeric_limits<Q>::max() - zp));
  const __m512i vz = _mm512_set1_epi32(zp);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512 v = _mm512_div_ps(_mm512_loadu_ps(x + i), vs);
    const __mmask16 ordered = _mm512_cmp_ps_mask(v, v, _CMP_ORD_Q);
    // The masked forms: GCC 12's plain max/min/narrow pass an uninitialised
    // source that -Wmaybe-uninitialized reports.
    const __m512 lo = _mm512_mask_max_ps(v, 0xFFFF, v, vl);
    const __m512 c = _mm512_mask_min_ps(lo, 0xFFFF, lo, vh);
    const __m512i r = _mm512_add_epi32(_mm512_maskz_cvtps_epi32(ordered, c), vz);  // in Q's range
    const __m128i zero = _mm_setzero_si128();
    const __m128i packed = std::is_same<Q, uint8_t>::value ? _mm512_mask_cvtusepi32_epi8(zero, 0xFFFF, r)
                                                           : _mm512_mask_cvtsepi32_epi8(zero, 0xFFFF, r);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(q + i), packed);
  }
  Quantize8Body(x + i, n - i, s, zp, q + i);
}
#endif

#define ONYX_REQUANT_FN(NAME, ATTR, F, I, Q)                                                                    \
  ATTR void NAME(const int32_t* a, int64_t lda, int64_t rows, int64_t n, int32_t b, const int32_t* bv,         \
                 const float* s, bool p, int32_t z, Q* o, int64_t ldo) {                                       \
    for (int64_t r = 0; r < rows; ++r) RequantBody<F, I, Q>::Run(a + r * lda, n, b, bv, s, p, z, o + r * ldo); \
  }
#define ONYX_REQUANT_PATHS(Q)                                \
  ONYX_REQUANT_FN(RequantBase, , F4, I4, Q)                  \
  ONYX_REQUANT_X86(Q)
#ifdef ONYX_INT8_X86
#define ONYX_REQUANT_X86(Q) ONYX_REQUANT_FN(RequantAvx2, ONYX_INT8_AVX2, F8, I8, Q)
#else
#define ONYX_REQUANT_X86(Q)
#endif
ONYX_REQUANT_PATHS(uint8_t)
ONYX_REQUANT_PATHS(int8_t)
#undef ONYX_REQUANT_PATHS
#undef ONYX_REQUANT_X86
#undef ONYX_REQUANT_FN

#ifdef ONYX_INT8_X86
// RequantBody in AVX-512 intrinsics (the compiled one took half again the
// instructions): the same wrapping sum, float product and clamp; the
// conversion rounds half to even (MXCSR's default), NaN lanes are masked to
// 0 (the zero point), a saturating narrow stores. The masked max/min/narrow
// forms: GCC 12's plain ones pass an uninitialised source that
// -Wmaybe-uninitialized reports.
template <typename Q>
ONYX_INT8_AVX512 void RequantAvx512(const int32_t* a, int64_t lda, int64_t rows, int64_t n, int32_t b,
                                    const int32_t* bv, const float* s, bool p, int32_t z, Q* o, int64_t ldo) {
  const __m512 vl = _mm512_set1_ps(static_cast<float>(static_cast<int32_t>(std::numeric_limits<Q>::min()) - z));
  const __m512 vh = _mm512_set1_ps(static_cast<float>(static_cast<int32_t>(std::numeric_limits<Q>::max()) - z));
  const __m512i vz = _mm512_set1_epi32(z), vb = _mm512_set1_epi32(b);
  const __m512 vs0 = _mm512_set1_ps(s[0]);
  const __m128i zero = _mm_setzero_si128();
  for (int64_t r = 0; r < rows; ++r) {
    const int32_t* ar = a + r * lda;
    Q* out = o + r * ldo;
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
      const __m512i bias = bv != nullptr ? _mm512_loadu_si512(bv + i) : vb;
      const __m512i sum = _mm512_add_epi32(_mm512_loadu_si512(ar + i), bias);  // wraps, as RequantBody
      const __m512 f = _mm512_mul_ps(_mm512_maskz_cvtepi32_ps(0xFFFF, sum), p ? _mm512_loadu_ps(s + i) : vs0);
      const __mmask16 ordered = _mm512_cmp_ps_mask(f, f, _CMP_ORD_Q);
      const __m512 lo = _mm512_mask_max_ps(f, 0xFFFF, f, vl);
      const __m512 c = _mm512_mask_min_ps(lo, 0xFFFF, lo, vh);
      const __m512i q = _mm512_add_epi32(_mm512_maskz_cvtps_epi32(ordered, c), vz);  // in Q's range
      const __m128i packed = std::is_same<Q, uint8_t>::value ? _mm512_mask_cvtusepi32_epi8(zero, 0xFFFF, q)
                                                             : _mm512_mask_cvtsepi32_epi8(zero, 0xFFFF, q);
      _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), packed);
    }
    RequantBody<F16, I16, Q>::Run(ar + i, n - i, b, bv != nullptr ? bv + i : nullptr, p ? s + i : s, p, z, out + i);
  }
}
#endif

}  // namespace

namespace {

// Range of QuantBody over x[0, n) on the widest path.
void RangeOf(const float* x, int64_t n, float* lo, float* hi, float* bad) {
  const fastmath::Isa isa = fastmath::BestIsa();
#ifdef ONYX_INT8_X86
  if (isa == fastmath::Isa::kAvx512) return RangeAvx512(x, n, lo, hi, bad);
  if (isa == fastmath::Isa::kAvx2) return RangeAvx2(x, n, lo, hi, bad);
#endif
  (void)isa;
  RangeBase(x, n, lo, hi, bad);
}

// Values per task of the pool: at least kQuantMinChunk, and about four
// tasks per thread, so that BERT's [128, 768] activations (98304 values)
// split evenly over two threads instead of into three fixed chunks of 2^15.
constexpr int64_t kQuantMinChunk = 1 << 12;
int64_t QuantChunk(int64_t n, ThreadPool* pool) {
  const int64_t threads = pool != nullptr ? pool->NumThreads() : 1;
  if (threads <= 1) return std::max<int64_t>(n, 1);
  const int64_t per = (n + 4 * threads - 1) / (4 * threads);
  return std::max(kQuantMinChunk, (per + 63) / 64 * 64);
}

}  // namespace

int64_t DynamicQuantizeParams(const float* x, int64_t n, float* scale, int32_t* zero_point, ThreadPool* pool) {
  // Per chunk, then combined (min and max are exact in any order; `bad`
  // only tells whether some value is not finite).
  const int64_t chunk = QuantChunk(n, pool);
  const int64_t chunks = std::max<int64_t>(1, (n + chunk - 1) / chunk);
  std::vector<float> los(static_cast<size_t>(chunks)), his(los.size()), bads(los.size());
  ThreadPool::For(pool, chunks, 1, [&](int64_t b, int64_t e) {
    for (int64_t c = b; c < e; ++c) {
      const int64_t i0 = c * chunk, i1 = std::min(n, i0 + chunk);
      RangeOf(x + i0, i1 - i0, &los[c], &his[c], &bads[c]);
    }
  });
  float lo = 0.f, hi = 0.f, bad = 0.f;
  for (int64_t c = 0; c < chunks; ++c) {
    lo = std::min(lo, los[c]);
    hi = std::max(hi, his[c]);
    bad += bads[c];
  }
  if (bad != 0.f) {
    for (int64_t i = 0; i < n; ++i)
      if (!std::isfinite(x[i])) return i;
  }
  const float s = hi == lo ? 1.f : (hi - lo) / 255.f;
  *scale = s;
  *zero_point = static_cast<int32_t>(std::nearbyint(std::max(0.f, std::min(255.f, 0.f - lo / s))));
  return -1;
}

template <typename Q>
void QuantizeFloat8(const float* x, int64_t n, float scale, int32_t zero_point, Q* q) {
  const fastmath::Isa isa = fastmath::BestIsa();
#ifdef ONYX_INT8_X86
  if (isa == fastmath::Isa::kAvx512) return Quantize8Avx512(x, n, scale, zero_point, q);
  if (isa == fastmath::Isa::kAvx2) return Quantize8Avx2(x, n, scale, zero_point, q);
#endif
  (void)isa;
  Quantize8Base(x, n, scale, zero_point, q);
}
template void QuantizeFloat8<uint8_t>(const float*, int64_t, float, int32_t, uint8_t*);
template void QuantizeFloat8<int8_t>(const float*, int64_t, float, int32_t, int8_t*);

void QuantizeU8(const float* x, int64_t n, float scale, int32_t zero_point, uint8_t* q, ThreadPool* pool) {
  ThreadPool::For(pool, n, QuantChunk(n, pool),
                  [&](int64_t b, int64_t e) { QuantizeFloat8(x + b, e - b, scale, zero_point, q + b); });
}

namespace {

template <typename Q>
void RequantizeDispatch(const int32_t* acc, int64_t lda, int64_t rows, int64_t n, int32_t bias,
                        const int32_t* bias_vec, const float* scale, bool scale_per_element, int32_t zero_point,
                        Q* out, int64_t ldo) {
  const fastmath::Isa isa = fastmath::BestIsa();
#ifdef ONYX_INT8_X86
  if (isa == fastmath::Isa::kAvx512)
    return RequantAvx512(acc, lda, rows, n, bias, bias_vec, scale, scale_per_element, zero_point, out, ldo);
  if (isa == fastmath::Isa::kAvx2)
    return RequantAvx2(acc, lda, rows, n, bias, bias_vec, scale, scale_per_element, zero_point, out, ldo);
#endif
  (void)isa;
  RequantBase(acc, lda, rows, n, bias, bias_vec, scale, scale_per_element, zero_point, out, ldo);
}

}  // namespace

template <typename Q>
void RequantizeFloat(const int32_t* acc, int64_t n, int32_t bias, const float* scale, bool scale_per_element,
                     int32_t zero_point, Q* out) {
  RequantizeDispatch(acc, n, 1, n, bias, nullptr, scale, scale_per_element, zero_point, out, n);
}
template <typename Q>
void RequantizeFloatColumns(const int32_t* acc, int64_t lda, int64_t rows, int64_t n, const int32_t* bias,
                            const float* scale, int32_t zero_point, Q* out, int64_t ldo) {
  RequantizeDispatch(acc, lda, rows, n, 0, bias, scale, true, zero_point, out, ldo);
}
template void RequantizeFloat<uint8_t>(const int32_t*, int64_t, int32_t, const float*, bool, int32_t, uint8_t*);
template void RequantizeFloat<int8_t>(const int32_t*, int64_t, int32_t, const float*, bool, int32_t, int8_t*);
template void RequantizeFloatColumns<uint8_t>(const int32_t*, int64_t, int64_t, int64_t, const int32_t*,
                                              const float*, int32_t, uint8_t*, int64_t);
template void RequantizeFloatColumns<int8_t>(const int32_t*, int64_t, int64_t, int64_t, const int32_t*, const float*,
                                             int32_t, int8_t*, int64_t);

namespace {

// ScaleToFloat's row loop: plain C++, which the compiler vectorizes for the
// baseline and AVX2 (neither has FMA, so nothing fuses the two roundings).
inline __attribute__((always_inline)) void ScaleToFloatBody(const int32_t* c, int64_t ldc, int64_t rows,
                                                           int64_t cols, const float* __restrict scale,
                                                           const float* __restrict bias, float* __restrict y,
                                                           int64_t ldy) {
  for (int64_t m = 0; m < rows; ++m) {
    const int32_t* __restrict cr = c + m * ldc;
    float* __restrict yr = y + m * ldy;
    if (bias != nullptr) {
      for (int64_t n = 0; n < cols; ++n) yr[n] = static_cast<float>(cr[n]) * scale[n] + bias[n];
    } else {
      for (int64_t n = 0; n < cols; ++n) yr[n] = static_cast<float>(cr[n]) * scale[n] + 0.f;
    }
  }
}

void ScaleToFloatBase(const int32_t* c, int64_t ldc, int64_t rows, int64_t cols, const float* scale,
                      const float* bias, float* y, int64_t ldy) {
  ScaleToFloatBody(c, ldc, rows, cols, scale, bias, y, ldy);
}

#ifdef ONYX_INT8_X86
ONYX_INT8_AVX2 void ScaleToFloatAvx2(const int32_t* c, int64_t ldc, int64_t rows, int64_t cols, const float* scale,
                                     const float* bias, float* y, int64_t ldy) {
  ScaleToFloatBody(c, ldc, rows, cols, scale, bias, y, ldy);
}

// AVX-512 (whose targets allow FMA): the masked multiply and add are
// builtins the compiler does not contract into one FMA; the mask also
// covers the last partial vector of a row.
ONYX_INT8_AVX512 void ScaleToFloatAvx512(const int32_t* c, int64_t ldc, int64_t rows, int64_t cols,
                                         const float* scale, const float* bias, float* y, int64_t ldy) {
  for (int64_t m = 0; m < rows; ++m) {
    const int32_t* cr = c + m * ldc;
    float* yr = y + m * ldy;
    for (int64_t n = 0; n < cols; n += 16) {
      const __mmask16 k = cols - n >= 16 ? static_cast<__mmask16>(0xFFFF)
                                         : static_cast<__mmask16>((1u << (cols - n)) - 1);
      const __m512 v = _mm512_maskz_cvtepi32_ps(k, _mm512_maskz_loadu_epi32(k, cr + n));
      const __m512 p = _mm512_maskz_mul_ps(k, v, _mm512_maskz_loadu_ps(k, scale + n));
      const __m512 b = bias != nullptr ? _mm512_maskz_loadu_ps(k, bias + n) : _mm512_setzero_ps();
      _mm512_mask_storeu_ps(yr + n, k, _mm512_maskz_add_ps(k, p, b));
    }
  }
}
#endif

}  // namespace

void ScaleToFloat(const int32_t* c, int64_t ldc, int64_t rows, int64_t cols, const float* scale, const float* bias,
                  float* y, int64_t ldy) {
  const fastmath::Isa isa = fastmath::BestIsa();
#ifdef ONYX_INT8_X86
  if (isa == fastmath::Isa::kAvx512) return ScaleToFloatAvx512(c, ldc, rows, cols, scale, bias, y, ldy);
  if (isa == fastmath::Isa::kAvx2) return ScaleToFloatAvx2(c, ldc, rows, cols, scale, bias, y, ldy);
#endif
  (void)isa;
  ScaleToFloatBase(c, ldc, rows, cols, scale, bias, y, ldy);
}

struct Access {
  static const PackedB& Get(const PackedB& b) { return b; }
  static int64_t kp(const PackedB& b) { return b.kp_; }
  static const int8_t* panel(const PackedB& b, int64_t p) { return b.data_.get() + p * b.kp_ * kNr; }
  static const int32_t* col_sums(const PackedB& b) { return b.col_sums_.data(); }
};

Path BestPath() {
  static const Path best = DetectPath();
  return best;
}

const char* PathName(Path path) {
  switch (path) {
    case Path::kAvx512Vnni: return "avx512vnni";
    case Path::kAvx2: return "avx2";
    default: return "scalar";
  }
}

Path SetPathForTesting(Path path) {
  if (static_cast<int>(path) > static_cast<int>(BestPath())) path = BestPath();
  ActivePath().store(path);
  return path;
}

PackedB PackedB::Pack(const void* b, bool b_signed, int64_t K, int64_t N, int64_t ldb, ThreadPool* pool) {
  PackedB p;
  p.Repack(b, b_signed, K, N, ldb, pool);
  return p;
}

void PackedB::Repack(const void* bv, bool b_signed, int64_t K, int64_t N, int64_t ldb, ThreadPool* pool) {
  PackedB& p = *this;
  p.k_ = K;
  p.n_ = N;
  p.kp_ = RoundUp4(K);
  p.shifted_ = !b_signed;
  const int64_t panels = (N + kNr - 1) / kNr;
  p.data_size_ = static_cast<size_t>(panels * p.kp_ * kNr);
  if (p.data_size_ > p.data_capacity_) {
    p.data_.reset(new int8_t[p.data_size_]);  // every byte is written below
    p.data_capacity_ = p.data_size_;
  }
  p.col_sums_.resize(static_cast<size_t>(panels * kNr));
  const uint8_t* b = static_cast<const uint8_t*>(bv);
  const uint8_t flip = b_signed ? 0 : 0x80;
  const int64_t kp = p.kp_;
  int8_t* data = p.data_.get();
  int32_t* sums = p.col_sums_.data();
  const PackPanelFn pack_panel = ImplFor(ActivePath().load(std::memory_order_relaxed)).pack_panel;
  ThreadPool::For(pool, panels, std::max<int64_t>(1, (1 << 16) / std::max<int64_t>(1, K * kNr)),
                  [&](int64_t begin, int64_t end) {
    for (int64_t pi = begin; pi < end; ++pi)
      pack_panel(b, ldb, K, kp, pi * kNr, std::min(kNr, N - pi * kNr), flip, data + pi * kp * kNr, sums + pi * kNr);
  });
}

void Gemm(const GemmArgs& g, const PackedB& b, ThreadPool* pool) {
  const int64_t M = g.M, N = b.N(), K = b.K();
  if (M <= 0 || N <= 0) return;
  const Impl& impl = ImplFor(ActivePath().load(std::memory_order_relaxed));
  const int64_t kp = Access::kp(b), k4 = kp / 4;
  const int MR = impl.mr;
  const int64_t tiles = (M + MR - 1) / MR;
  const size_t esz = impl.a_int16 ? sizeof(int16_t) : sizeof(uint8_t);
  const int64_t tile_stride = kp * MR * static_cast<int64_t>(esz);  // bytes of packed A per tile

  // A', packed per micro-tile, and its row sums.
  // Scratch kept per thread across calls: no page faults for fresh buffers
  // on every run.
  // Lambdas below run on other threads: they use these pointers, never the
  // thread_local names (which would name the other thread's buffers).
  thread_local std::vector<uint8_t> apk_buffer;
  thread_local std::vector<int32_t> rowsum_buffer;
  apk_buffer.resize(static_cast<size_t>(tiles * tile_stride));
  rowsum_buffer.resize(static_cast<size_t>(M));
  uint8_t* const apk = apk_buffer.data();
  int32_t* const rowsum = rowsum_buffer.data();
  const uint8_t* a = static_cast<const uint8_t*>(g.a);
  // The row sums of A' are needed only where some zero point of B' is not 0.
  bool need_rowsum = b.shifted();
  if (g.zb != nullptr)
    for (int64_t n = 0; n < (g.zb_per_column ? N : 1) && !need_rowsum; ++n) need_rowsum = g.zb[n] != 0;
  if (!need_rowsum) std::fill(rowsum, rowsum + M, 0);
  // A by address (GemmArgs::a_rows): read where it lies by the path's rows
  // kernels when A' is A itself (uint8) and its row sums are not needed,
  // else packed from those addresses.
  const bool by_address = static_cast<bool>(g.a_rows);
  const int64_t nseg = by_address ? std::max<int64_t>(g.a_segments, 1) : 1, seg = K / nseg;
  // Pieces shorter than 16 values would reload the rows' addresses every few
  // steps: those are packed (an image's first conv, 3 or 4 channels a tap).
  // A plain matrix goes the same way (as one piece per row, when K is whole
  // groups of 4): no packing pass over A at all.
  const bool plain_direct = !by_address && K % 4 == 0 && K >= 16;
  const bool direct = (by_address ? seg >= 16 : plain_direct) && impl.rows_kernels[1] != nullptr && !g.a_signed &&
                      !need_rowsum;
  if (!direct)
  ThreadPool::For(pool, tiles, std::max<int64_t>(1, (1 << 15) / std::max<int64_t>(1, K * MR)),
                  [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      const int64_t m0 = t * MR;
      const int mr = static_cast<int>(std::min<int64_t>(MR, M - m0));
      int32_t* rs = need_rowsum ? rowsum + m0 : nullptr;
      if (by_address) {
        thread_local std::vector<const uint8_t*> addr;
        thread_local std::vector<uint8_t> raw;
        addr.resize(static_cast<size_t>(mr * nseg));
        g.a_rows(m0, m0 + mr, addr.data());
        uint8_t* dst = apk + t * tile_stride;
        if (impl.a_int16) {
          raw.resize(static_cast<size_t>(kp * mr));
          dst = raw.data();
        }
        PackRowsByAddress(addr.data(), nseg, seg, mr, dst);
        FinishPackedA(dst, mr, kp, g.a_signed ? 0x80 : 0, rs,
                      impl.a_int16 ? reinterpret_cast<int16_t*>(apk + t * tile_stride) : nullptr);
      } else {
        impl.pack_a(a, g.a_signed, g.lda, m0, mr, K, kp, apk + t * tile_stride, rs);
      }
    }
  });

  // Zero points of A' and B', and cb[n] = colsum B'[n] - K zb'[n]; all
  // arithmetic wraps mod 2^32 (unsigned), as the sums themselves do.
  std::vector<uint32_t> zam(static_cast<size_t>(M)), zbn(static_cast<size_t>(N)), cb(static_cast<size_t>(N));
  for (int64_t m = 0; m < M; ++m)
    zam[m] = static_cast<uint32_t>((g.za ? g.za[g.za_per_row ? m : 0] : 0) + (g.a_signed ? 128 : 0));
  const int32_t* cs = Access::col_sums(b);
  for (int64_t n = 0; n < N; ++n) {
    zbn[n] = static_cast<uint32_t>((g.zb ? g.zb[g.zb_per_column ? n : 0] : 0) - (b.shifted() ? 128 : 0));
    cb[n] = static_cast<uint32_t>(cs[n]) - static_cast<uint32_t>(K) * zbn[n];
  }

  // Zero points of 0 on both sides (A' = A, B' = B): nothing to take away.
  bool no_correction = !need_rowsum;
  for (int64_t m = 0; m < M && no_correction; ++m) no_correction = zam[m] == 0;
  // Only A's zero point, one for all rows: its share, -za' cb[n], is the
  // same row for every row, and the accumulators start from it instead of
  // zero (a copy per row in place of a pass that reads and rewrites them).
  bool start_corrected = !no_correction && !need_rowsum && !g.za_per_row;

  // Values of K per pass (in groups of 4): kKc, or all of K where a whole
  // panel stays in L1 anyway (fewer reloads of the accumulators).
  const int64_t kc4 = kp * kNr <= kWholePanelBytes ? std::max<int64_t>(k4, 1) : kKc / 4;
  const int64_t panels = (N + kNr - 1) / kNr;
  // At most 16 tiles a task, in chunks of equal size: M = 128 is 2 x 11
  // tiles, not 16 + 6, whose uneven tasks left one thread idle at the end.
  const int64_t mchunks = (tiles + 15) / 16;
  const int64_t tiles_per_task = (tiles + mchunks - 1) / mchunks;
  const int64_t tasks = panels * mchunks;
  const int64_t task_work = tiles_per_task * MR * kNr * std::max<int64_t>(kp, 1);
  ThreadPool::For(pool, tasks, std::max<int64_t>(1, (1 << 20) / task_work), [&](int64_t begin, int64_t end) {
    thread_local std::vector<int32_t> acc;
    thread_local std::vector<const uint8_t*> addr, piece_rows;
    thread_local std::vector<int64_t> piece_seg, piece_off, piece_len4;
    acc.resize(static_cast<size_t>(tiles_per_task * MR * kNr));
    for (int64_t task = begin; task < end; ++task) {
      const int64_t pi = task / mchunks, t0 = (task % mchunks) * tiles_per_task;
      const int64_t t1 = std::min(tiles, t0 + tiles_per_task);
      const int8_t* panel = Access::panel(b, pi);
      if (k4 == 0) std::fill(acc.begin(), acc.end(), 0);
      if (start_corrected) {
        const int64_t n0 = pi * kNr, nn = std::min(kNr, N - n0);
        int32_t* first = acc.data();
        for (int64_t j = 0; j < kNr; ++j) first[j] = j < nn ? static_cast<int32_t>(0u - zam[0] * cb[n0 + j]) : 0;
        const int64_t rows = std::min(M, t1 * MR) - t0 * MR;
        for (int64_t r = 1; r < rows; ++r) std::memcpy(first + r * kNr, first, kNr * sizeof(int32_t));
      }
      if (direct) {
        const int64_t r0 = t0 * MR, r1 = std::min(M, t1 * MR);
        addr.resize(static_cast<size_t>((r1 - r0) * nseg));
        if (by_address) {
          g.a_rows(r0, r1, addr.data());
        } else {
          for (int64_t m = r0; m < r1; ++m) addr[m - r0] = a + m * g.lda;
        }
      }
      for (int64_t kb = 0; kb < k4; kb += kc4) {
        const int64_t kn = std::min(kc4, k4 - kb);
        if (direct) {
          // The runs of this pass of K: (segment, offset) pieces.
          piece_seg.clear();
          piece_off.clear();
          piece_len4.clear();
          for (int64_t k = kb * 4, kend = (kb + kn) * 4; k < kend;) {
            const int64_t s = k / seg, off = k - s * seg, len = std::min(seg - off, kend - k);
            piece_seg.push_back(s);
            piece_off.push_back(off);
            piece_len4.push_back(len / 4);
            k += len;
          }
          const int64_t pieces = static_cast<int64_t>(piece_off.size());
          piece_rows.resize(static_cast<size_t>(pieces * MR));
          for (int64_t t = t0; t < t1; ++t) {
            const int mr = static_cast<int>(std::min<int64_t>(MR, M - t * MR));
            const uint8_t* const* ta = addr.data() + (t - t0) * MR * nseg;
            for (int64_t p = 0; p < pieces; ++p) {
              for (int i = 0; i < mr; ++i) piece_rows[p * mr + i] = ta[i * nseg + piece_seg[p]] + piece_off[p];
            }
            impl.rows_kernels[mr](piece_rows.data(), piece_len4.data(), pieces, panel + kb * kNr * 4,
                                  acc.data() + (t - t0) * MR * kNr, kb > 0 || start_corrected);
          }
          continue;
        }
        for (int64_t t = t0; t < t1; ++t) {
          const int mr = static_cast<int>(std::min<int64_t>(MR, M - t * MR));
          impl.kernels[mr](apk + t * tile_stride + kb * mr * 4 * static_cast<int64_t>(esz),
                           panel + kb * kNr * 4, kn, acc.data() + (t - t0) * MR * kNr, kb > 0 || start_corrected);
        }
      }
      const int64_t n0 = pi * kNr, n1 = std::min(N, n0 + kNr);
      if (!no_correction && !start_corrected) {
        for (int64_t t = t0; t < t1; ++t) {
          const int64_t m0 = t * MR, m1 = std::min(M, m0 + MR);
          impl.correct(acc.data() + (t - t0) * MR * kNr, m1 - m0, n1 - n0, zam.data() + m0,
                       reinterpret_cast<const uint32_t*>(rowsum) + m0, cb.data() + n0, zbn.data() + n0);
        }
      }
      // The task's tiles lie one after another: rows [t0 * MR, ...) at stride kNr.
      const int64_t m0 = t0 * MR, m1 = std::min(M, t1 * MR);
      if (g.epilogue) {
        g.epilogue(m0, m1, n0, n1, acc.data(), kNr);
      } else {
        for (int64_t m = m0; m < m1; ++m)
          std::memcpy(g.c + m * g.ldc + n0, acc.data() + (m - m0) * kNr,
                      static_cast<size_t>(n1 - n0) * sizeof(int32_t));
      }
    }
  });
}

namespace {

// Packs the `mats` [K, N] matrices of `b` into *out.
void PackAll(const Tensor& b, int64_t K, int64_t N, int64_t mats, ThreadPool* pool, std::vector<PackedB>* out) {
  out->clear();
  const uint8_t* p = static_cast<const uint8_t*>(b.raw());
  for (int64_t i = 0; i < mats; ++i)
    out->push_back(PackedB::Pack(p + i * K * N, b.type() == ElemType::kInt8, K, N, N, pool));
}

}  // namespace

void PackedWeights::Init(const KernelInfo& info, int index) {
  const Tensor* b = info.ConstantInput(index);
  if (b == nullptr || (b->type() != ElemType::kInt8 && b->type() != ElemType::kUint8) || b->rank() == 0) return;
  const Dims& d = b->dims();
  const int64_t K = d.size() == 1 ? d[0] : d[d.size() - 2], N = d.size() == 1 ? 1 : d.back();
  PackAll(*b, K, N, K * N == 0 ? 0 : b->size() / (K * N), nullptr, &packed_);
  packed_at_init_ = true;
  dims_ = d;
  type_ = b->type();
  // Runs read the packed copy only (a constant input never changes).
  info.ReleaseConstantInput(index);
}

const std::vector<PackedB>& PackedWeights::Get(const Tensor& b, int64_t K, int64_t N, int64_t mats, ThreadPool* pool,
                                               std::vector<PackedB>* scratch) const {
  if (packed_at_init_ && b.dims() == dims_ && b.type() == type_ &&
      static_cast<int64_t>(packed_.size()) == mats && (mats == 0 || (packed_[0].K() == K && packed_[0].N() == N)))
    return packed_;
  PackAll(b, K, N, mats, pool, scratch);
  return *scratch;
}

}  // namespace int8gemm
}  // namespace onyx

// TransposeBytes (transpose_bytes.h): blocks of 16 x 16 (SSE2 where x86:
// four rounds of interleaving row i with row i + 8 transpose a block), 16 x 64
// with AVX-512.
#include "providers/cpu/common/transpose_bytes.h"

#include <algorithm>

#include "providers/cpu/common/fast_math.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace onyx {
namespace {

#if defined(__x86_64__) || defined(__i386__)
// TransposeBytes' block on AVX-512: 16 rows of 64 columns, the same rounds
// of interleaving on four 16 x 16 blocks at once (one per 128-bit lane).
__attribute__((target("avx512f,avx512bw"))) void Transpose16x64(const uint8_t* src, int64_t lds, uint8_t* dst,
                                                                 int64_t ldd) {
  __m512i r[16], t[16];
  for (int i = 0; i < 16; ++i) r[i] = _mm512_loadu_si512(src + i * lds);
  for (int round = 0; round < 4; ++round) {
    for (int i = 0; i < 8; ++i) {
      t[2 * i] = _mm512_unpacklo_epi8(r[i], r[i + 8]);
      t[2 * i + 1] = _mm512_unpackhi_epi8(r[i], r[i + 8]);
    }
    for (int i = 0; i < 16; ++i) r[i] = t[i];
  }
  // The masked extracts: GCC 12's plain one passes an uninitialised source
  // that -Wuninitialized reports.
  const __m128i z = _mm_setzero_si128();
  for (int i = 0; i < 16; ++i) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i * ldd), _mm512_mask_extracti32x4_epi32(z, 0xF, r[i], 0));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + (16 + i) * ldd), _mm512_mask_extracti32x4_epi32(z, 0xF, r[i], 1));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + (32 + i) * ldd), _mm512_mask_extracti32x4_epi32(z, 0xF, r[i], 2));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + (48 + i) * ldd), _mm512_mask_extracti32x4_epi32(z, 0xF, r[i], 3));
  }
}

// A block of nr <= 16 rows by nc <= 16 columns (an edge of the matrix, or all
// of one with few rows or columns: an image's 3 channels), the loads and
// stores masked to it; the rows past nr transpose as zeros, unstored.
__attribute__((target("avx512f,avx512bw,avx512vl"))) void TransposeEdge16(const uint8_t* src, int64_t lds,
                                                                           int64_t nr, int64_t nc, uint8_t* dst,
                                                                           int64_t ldd) {
  const __mmask16 cm = static_cast<__mmask16>(nc >= 16 ? 0xFFFFu : (1u << nc) - 1);
  const __mmask16 rm = static_cast<__mmask16>(nr >= 16 ? 0xFFFFu : (1u << nr) - 1);
  __m128i r[16], t[16];
  for (int i = 0; i < 16; ++i) r[i] = i < nr ? _mm_maskz_loadu_epi8(cm, src + i * lds) : _mm_setzero_si128();
  for (int round = 0; round < 4; ++round) {
    for (int i = 0; i < 8; ++i) {
      t[2 * i] = _mm_unpacklo_epi8(r[i], r[i + 8]);
      t[2 * i + 1] = _mm_unpackhi_epi8(r[i], r[i + 8]);
    }
    for (int i = 0; i < 16; ++i) r[i] = t[i];
  }
  for (int j = 0; j < nc; ++j) _mm_mask_storeu_epi8(dst + j * ldd, rm, r[j]);
}
#endif

}  // namespace

void TransposeBytes(const uint8_t* src, int64_t rows, int64_t cols, uint8_t* dst, int64_t ldd, ThreadPool* pool) {
  constexpr int64_t kB = 16;
  const int64_t rblocks = (rows + kB - 1) / kB;
#if defined(__x86_64__) || defined(__i386__)
  const bool avx512 = fastmath::BestIsa() == fastmath::Isa::kAvx512;
#endif
  ThreadPool::For(pool, rblocks, std::max<int64_t>(1, 16384 / std::max<int64_t>(cols * kB, 1)),
                  [&](int64_t begin, int64_t end) {
    for (int64_t rb = begin; rb < end; ++rb) {
      const int64_t r0 = rb * kB, r1 = std::min(rows, r0 + kB);
      int64_t c0 = 0;
#if defined(__x86_64__) || defined(__i386__)
      if (r1 - r0 == kB) {
        if (avx512)
          for (; c0 + 4 * kB <= cols; c0 += 4 * kB) Transpose16x64(src + r0 * cols + c0, cols, dst + c0 * ldd + r0, ldd);
        for (; c0 + kB <= cols; c0 += kB) {
          __m128i r[kB], t[kB];
          for (int i = 0; i < kB; ++i)
            r[i] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + (r0 + i) * cols + c0));
          for (int round = 0; round < 4; ++round) {
            for (int i = 0; i < kB / 2; ++i) {
              t[2 * i] = _mm_unpacklo_epi8(r[i], r[i + kB / 2]);
              t[2 * i + 1] = _mm_unpackhi_epi8(r[i], r[i + kB / 2]);
            }
            for (int i = 0; i < kB; ++i) r[i] = t[i];
          }
          for (int i = 0; i < kB; ++i) _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + (c0 + i) * ldd + r0), r[i]);
        }
      }
      if (avx512) {
        for (; c0 < cols; c0 += kB)
          TransposeEdge16(src + r0 * cols + c0, cols, r1 - r0, std::min(kB, cols - c0), dst + c0 * ldd + r0, ldd);
        continue;
      }
#endif
      for (; c0 < cols; c0 += kB) {
        const int64_t c1 = std::min(cols, c0 + kB);
        for (int64_t r = r0; r < r1; ++r)
          for (int64_t c = c0; c < c1; ++c) dst[c * ldd + r] = src[r * cols + c];
      }
    }
  });
}

}  // namespace onyx

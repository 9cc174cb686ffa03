#include "providers/cpu/quantization/int8_gemm.h"

#include <immintrin.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace onyx {
namespace qlinear {

namespace {

// Columns per block: two 16-lane halves, so each A broadcast feeds two
// accumulators and four rows keep eight vpdpbusd chains in flight.
constexpr int64_t kCols = 32;
constexpr int64_t kRows = 4;

#define ONYX_VNNI __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni")))

// Packs columns [n0, n0 + 32) of B' = B ^ flip as int8 in vpdpbusd order:
// panel[k4][half][lane][t] = B'[4 * k4 + t][n0 + 16 * half + lane], zero
// outside B. Whole 4 x 16 tiles are interleaved with SSE2 byte unpacks.
ONYX_VNNI void PackPanel(const uint8_t* B, int64_t ldb, int64_t K, int64_t N, int64_t n0, uint8_t flip,
                         int8_t* panel) {
  const int64_t k4n = (K + 3) / 4;
  const __m128i fx = _mm_set1_epi8(static_cast<char>(flip));
  for (int64_t k4 = 0; k4 < k4n; ++k4) {
    for (int64_t half = 0; half < 2; ++half) {
      int8_t* dst = panel + (k4 * 2 + half) * 64;
      const int64_t c0 = n0 + 16 * half;
      if (4 * k4 + 3 < K && c0 + 16 <= N) {
        const uint8_t* r = B + 4 * k4 * ldb + c0;
        const __m128i a = _mm_xor_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(r)), fx);
        const __m128i b = _mm_xor_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(r + ldb)), fx);
        const __m128i c = _mm_xor_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(r + 2 * ldb)), fx);
        const __m128i d = _mm_xor_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(r + 3 * ldb)), fx);
        const __m128i ab_lo = _mm_unpacklo_epi8(a, b), ab_hi = _mm_unpackhi_epi8(a, b);
        const __m128i cd_lo = _mm_unpacklo_epi8(c, d), cd_hi = _mm_unpackhi_epi8(c, d);
        _mm_storeu_si128(reinterpret_cast<__m128i*>(dst), _mm_unpacklo_epi16(ab_lo, cd_lo));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + 16), _mm_unpackhi_epi16(ab_lo, cd_lo));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + 32), _mm_unpacklo_epi16(ab_hi, cd_hi));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + 48), _mm_unpackhi_epi16(ab_hi, cd_hi));
        continue;
      }
      for (int64_t lane = 0; lane < 16; ++lane)
        for (int64_t t = 0; t < 4; ++t) {
          const int64_t k = 4 * k4 + t, n = c0 + lane;
          dst[lane * 4 + t] = k < K && n < N ? static_cast<int8_t>(B[k * ldb + n] ^ flip) : 0;
        }
    }
  }
}

// Rows [m0, m0 + 4) of the padded A' (row stride kp bytes, a multiple of 4)
// times one packed panel; rows at or past `store_rows` are not stored.
ONYX_VNNI void PanelRows(const uint8_t* ap, int64_t kp, int64_t m0, const int8_t* panel, int64_t k4n,
                         int32_t* const* out_rows, __mmask16 m_lo, __mmask16 m_hi) {
  __m512i acc[kRows][2];
  for (int r = 0; r < kRows; ++r) acc[r][0] = acc[r][1] = _mm512_setzero_si512();
  const uint8_t* a0 = ap + m0 * kp;
  for (int64_t k4 = 0; k4 < k4n; ++k4) {
    const __m512i b0 = _mm512_loadu_si512(panel + k4 * 128);
    const __m512i b1 = _mm512_loadu_si512(panel + k4 * 128 + 64);
    for (int r = 0; r < kRows; ++r) {
      int32_t word;
      std::memcpy(&word, a0 + r * kp + 4 * k4, 4);
      const __m512i av = _mm512_set1_epi32(word);
      acc[r][0] = _mm512_dpbusd_epi32(acc[r][0], av, b0);
      acc[r][1] = _mm512_dpbusd_epi32(acc[r][1], av, b1);
    }
  }
  for (int r = 0; r < kRows; ++r) {
    if (out_rows[r] == nullptr) continue;
    _mm512_mask_storeu_epi32(out_rows[r], m_lo, acc[r][0]);
    _mm512_mask_storeu_epi32(out_rows[r] + 16, m_hi, acc[r][1]);
  }
}

bool DetectVnni() {
  const char* off = std::getenv("ONYX_DISABLE_VNNI");
  if (off != nullptr && *off != '\0' && std::strcmp(off, "0") != 0) return false;
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512vnni");
}

}  // namespace

bool HasU8S8Gemm() {
  static const bool has = DetectVnni();
  return has;
}

namespace {

// A' padded to whole groups of 4 in K, plus (with_ones) a row of ones whose
// products are B's column sums, plus zero rows up to a multiple of kRows;
// rowsum[m] = sum_k A'[m,k].
std::vector<uint8_t> PadA(int64_t M, int64_t K, const uint8_t* A, int64_t lda, uint8_t a_flip, bool with_ones,
                          int32_t* rowsum, int64_t* rows_p) {
  const int64_t kp = (K + 3) / 4 * 4;
  const int64_t rows = M + (with_ones ? 1 : 0);
  *rows_p = (rows + kRows - 1) / kRows * kRows;
  std::vector<uint8_t> ap(static_cast<size_t>(*rows_p * kp), 0);
  for (int64_t m = 0; m < M; ++m) {
    int32_t sum = 0;
    for (int64_t k = 0; k < K; ++k) {
      const uint8_t v = static_cast<uint8_t>(A[m * lda + k] ^ a_flip);
      ap[m * kp + k] = v;
      sum += v;
    }
    rowsum[m] = sum;
  }
  if (with_ones) std::fill(ap.begin() + M * kp, ap.begin() + M * kp + K, 1);
  return ap;
}

// Rows [0, rows_p) of the padded A' times panel `g`: row m < M goes to C,
// row M (when colsum is given) to colsum.
void PanelAllRows(const uint8_t* ap, int64_t kp, int64_t rows_p, int64_t M, int64_t N, int64_t g,
                  const int8_t* panel, int32_t* C, int32_t* colsum) {
  const int64_t n0 = g * kCols, left = N - n0;
  const __mmask16 m_lo = left >= 16 ? 0xFFFF : static_cast<__mmask16>((1u << left) - 1u);
  const __mmask16 m_hi = left >= 32 ? 0xFFFF : left <= 16 ? 0 : static_cast<__mmask16>((1u << (left - 16)) - 1u);
  for (int64_t m0 = 0; m0 < rows_p; m0 += kRows) {
    int32_t* out_rows[kRows];
    for (int64_t r = 0; r < kRows; ++r) {
      const int64_t m = m0 + r;
      out_rows[r] = m < M ? C + m * N + n0 : (m == M && colsum != nullptr) ? colsum + n0 : nullptr;
    }
    PanelRows(ap, kp, m0, panel, kp / 4, out_rows, m_lo, m_hi);
  }
}

int64_t GroupGrain(int64_t rows_p, int64_t kp) { return std::max<int64_t>(1, (1 << 20) / std::max<int64_t>(1, rows_p * kp * kCols)); }

}  // namespace

void GemmU8S8(ThreadPool* pool, int64_t M, int64_t N, int64_t K, const uint8_t* A, int64_t lda, uint8_t a_flip,
              const uint8_t* B, int64_t ldb, uint8_t b_flip, int32_t* C, int32_t* colsum, int32_t* rowsum) {
  const int64_t kp = (K + 3) / 4 * 4;
  int64_t rows_p = 0;
  const std::vector<uint8_t> ap = PadA(M, K, A, lda, a_flip, true, rowsum, &rows_p);
  const int64_t groups = (N + kCols - 1) / kCols;
  ThreadPool::For(pool, groups, GroupGrain(rows_p, kp), [&](int64_t begin, int64_t end) {
    std::vector<int8_t> panel(static_cast<size_t>(kp / 4 * 128));
    for (int64_t g = begin; g < end; ++g) {
      PackPanel(B, ldb, K, N, g * kCols, b_flip, panel.data());
      PanelAllRows(ap.data(), kp, rows_p, M, N, g, panel.data(), C, colsum);
    }
  });
}

void PackU8S8B(const uint8_t* B, int64_t ldb, int64_t K, int64_t N, uint8_t b_flip, PackedU8S8B* out) {
  const int64_t kp = (K + 3) / 4 * 4, groups = (N + kCols - 1) / kCols, panel_bytes = kp / 4 * 128;
  out->K = K;
  out->N = N;
  out->panels.assign(static_cast<size_t>(groups * panel_bytes), 0);
  out->colsum.assign(static_cast<size_t>(N), 0);
  for (int64_t g = 0; g < groups; ++g) PackPanel(B, ldb, K, N, g * kCols, b_flip, out->panels.data() + g * panel_bytes);
  for (int64_t k = 0; k < K; ++k)
    for (int64_t n = 0; n < N; ++n) out->colsum[n] += static_cast<int8_t>(B[k * ldb + n] ^ b_flip);
}

void GemmU8S8Packed(ThreadPool* pool, int64_t M, const uint8_t* A, int64_t lda, uint8_t a_flip,
                    const PackedU8S8B& B, int32_t* C, int32_t* rowsum) {
  const int64_t K = B.K, N = B.N, kp = (K + 3) / 4 * 4, panel_bytes = kp / 4 * 128;
  int64_t rows_p = 0;
  const std::vector<uint8_t> ap = PadA(M, K, A, lda, a_flip, false, rowsum, &rows_p);
  const int64_t groups = (N + kCols - 1) / kCols;
  ThreadPool::For(pool, groups, GroupGrain(rows_p, kp), [&](int64_t begin, int64_t end) {
    for (int64_t g = begin; g < end; ++g)
      PanelAllRows(ap.data(), kp, rows_p, M, N, g, B.panels.data() + g * panel_bytes, C, nullptr);
  });
}

}  // namespace qlinear
}  // namespace onyx

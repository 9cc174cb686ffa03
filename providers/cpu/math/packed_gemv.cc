// Vector types only live inside the per-ISA regions below.
#pragma GCC diagnostic ignored "-Wpsabi"

#include "providers/cpu/math/packed_gemv.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <vector>

#include "providers/cpu/common/fast_math.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define ONYX_GEMV_X86 1
#endif

namespace onyx {
namespace gemv {

// The AVX-512 path only: on AVX2 (16-column panels) this loop ran 5-30%
// below the blocked GEMM's bandwidth (Zen 5, 1 thread, GPT-2's weights,
// 1 to 8 panels per group), so there BlasGemm keeps sgemm::Gemm.
#ifdef ONYX_GEMV_X86
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
#include "providers/cpu/math/packed_gemv_kernel.inc"
}  // namespace
}  // namespace avx512
#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif
#endif

namespace {

using PanelsFn = void (*)(const float*, const float*, int64_t, int64_t, int64_t, int64_t, int64_t, float, float,
                          float*);

// The kernel for the active ISA and its panel width; null / 0 where none.
struct Kernel {
  PanelsFn panels = nullptr;
  int nr = 0;
  int group = 0;  // panels per group (Panels' unit of work)
};
Kernel Active() {
#ifdef ONYX_GEMV_X86
  if (sgemm::ActiveIsa() == fastmath::Isa::kAvx512) return {&avx512::Panels, avx512::kNr, avx512::kGroup};
#endif
  return {};
}

// The K block depth of sgemm's packed operands (its KStep): K cut into
// equal blocks of at most 256 rows.
constexpr int64_t kPackedKc = 256;
int64_t KStep(int64_t K) {
  const int64_t blocks = (K + kPackedKc - 1) / kPackedKc;
  return blocks <= 1 ? K : (K + blocks - 1) / blocks;
}

// Whether sgemm::PackB lays out op(B) [K, N] as Panels reads it: probed on
// small matrices whose K blocks tell block depths apart.
bool ProbeLayout(int nr) {
  if (nr <= 0 || sgemm::TileCols() != nr) return false;
  for (const int64_t K : {600, 1000, 77}) {
    const int64_t N = nr + 3, n_pad = 2 * nr;
    std::vector<float> b(K * N);
    for (int64_t k = 0; k < K; ++k)
      for (int64_t n = 0; n < N; ++n) b[k * N + n] = static_cast<float>(k * 64 + n);
    const sgemm::Packed p = sgemm::PackB(false, K, N, b.data(), N);
    if (!sgemm::Usable(&p, false, N, K) || p.bytes() < static_cast<size_t>(n_pad * K) * sizeof(float)) return false;
    const int64_t step = KStep(K);
    for (int64_t pc = 0; pc < K; pc += step) {
      const int64_t kc = std::min(step, K - pc);
      for (int64_t k = pc; k < pc + kc; ++k)
        for (int64_t n = 0; n < N; ++n)
          if (p.data()[pc * n_pad + (n / nr) * kc * nr + (k - pc) * nr + n % nr] != b[k * N + n]) return false;
    }
  }
  return true;
}

}  // namespace

bool LayoutMatches() {
  // Per ISA: 0 not probed yet, 1 matches, 2 does not.
  static std::atomic<int> state[3];
  const int isa = static_cast<int>(sgemm::ActiveIsa());
  if (isa < 0 || isa >= 3) return false;
  int s = state[isa].load(std::memory_order_acquire);
  if (s == 0) {
    s = ProbeLayout(Active().nr) ? 1 : 2;
    state[isa].store(s, std::memory_order_release);
  }
  return s == 1;
}

bool Usable(const sgemm::Packed* pb, int64_t K, int64_t N) {
  return Active().panels != nullptr && sgemm::Usable(pb, false, N, K) && LayoutMatches();
}

void Run(const float* x, int64_t incx, const sgemm::Packed& pb, int64_t K, int64_t N, float alpha, float beta,
         float* y, ThreadPool* pool) {
  const Kernel k = Active();
  std::vector<float> gathered;
  if (incx != 1) {
    gathered.resize(K);
    for (int64_t i = 0; i < K; ++i) gathered[i] = x[i * incx];
    x = gathered.data();
  }
  const int64_t panels = (N + k.nr - 1) / k.nr, step = KStep(K);
  // Whole groups of panels, claimed a few at a time (up to four chunks per
  // thread: a thread that starts late, on a busy machine, takes fewer);
  // small products (under 64K multiply-adds, a few microseconds) stay on the
  // calling thread.
  const int threads = pool == nullptr || K * N < 65536 ? 1 : pool->NumThreads();
  const int64_t groups = (panels + k.group - 1) / k.group;
  const int64_t min_chunk = std::max<int64_t>(1, groups / (4 * threads));
  ThreadPool::For(threads > 1 ? pool : nullptr, groups, min_chunk, [&](int64_t begin, int64_t end) {
    k.panels(x, pb.data(), K, step, N, k.group * begin, std::min(panels, k.group * end), alpha, beta, y);
  });
}

}  // namespace gemv
}  // namespace onyx

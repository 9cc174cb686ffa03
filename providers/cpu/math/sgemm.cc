// Vector types only live inside the per-ISA regions below, whose functions
// call each other only; GCC's note about vector-argument ABI changes between
// ISAs cannot apply.
#pragma GCC diagnostic ignored "-Wpsabi"

#include "providers/cpu/math/sgemm.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <utility>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define ONYX_SGEMM_X86 1
#endif

namespace onyx {
namespace sgemm {
namespace {

// One GEMM call's operands; pa / pb are whole packed operands or null.
struct Args {
  bool trans_a, trans_b;
  int64_t M, N, K;
  float alpha, beta;
  const float* A;
  int64_t lda;
  const float* B;
  int64_t ldb;
  float* C;
  int64_t ldc;
  const float* pa;
  const float* pb;
};

// A per-thread packing buffer, grown on demand and kept (at most MC x KC for
// A and KC x NC for B, i.e. 192 KiB and 1 MiB on the AVX-512 path).
class Buffer {
 public:
  ~Buffer() { std::free(p_); }
  float* Get(int64_t n) {
    if (n > n_) {
      std::free(p_);
      const size_t bytes = (static_cast<size_t>(n) * sizeof(float) + 63) / 64 * 64;
      p_ = static_cast<float*>(std::aligned_alloc(64, bytes));
      n_ = n;
    }
    return p_;
  }

 private:
  float* p_ = nullptr;
  int64_t n_ = 0;
};

// What each ISA's instance of sgemm_driver.inc provides.
struct Kernel {
  int mr, nr;
  int64_t kc;
  void (*run_task)(const Args&, int64_t m0, int64_t m1, int64_t n0, int64_t n1);
  void (*pack_whole)(bool left, bool trans, int64_t rows, int64_t K, const float* X, int64_t ld, float* dst);
};

}  // namespace

#ifdef ONYX_SGEMM_X86
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx512f,avx512dq,avx512bw,avx512vl,avx2,fma"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx512f,avx512dq,avx512bw,avx512vl,avx2,fma")
#endif
namespace avx512 {
namespace {
struct Tr {
  using V = __m512;
  static constexpr int W = 16, MR = 12, NR = 32;
  static constexpr int64_t KC = 256, MC = 192, NC = 1024;
  static inline __mmask16 Mask(int n) { return static_cast<__mmask16>(n >= 16 ? 0xFFFF : (1u << n) - 1u); }
  static inline V Zero() { return _mm512_setzero_ps(); }
  static inline V Set1(float v) { return _mm512_set1_ps(v); }
  static inline V Load(const float* p) { return _mm512_loadu_ps(p); }
  static inline V LoadN(const float* p, int n) { return _mm512_maskz_loadu_ps(Mask(n), p); }
  static inline void Store(float* p, V v) { _mm512_storeu_ps(p, v); }
  static inline void StoreN(float* p, V v, int n) { _mm512_mask_storeu_ps(p, Mask(n), v); }
  static inline V Fma(V a, V b, V c) { return _mm512_fmadd_ps(a, b, c); }
  static inline V Mul(V a, V b) { return _mm512_mul_ps(a, b); }
};
#include "providers/cpu/math/sgemm_driver.inc"
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
struct Tr {
  using V = __m256;
  static constexpr int W = 8, MR = 6, NR = 16;
  static constexpr int64_t KC = 256, MC = 144, NC = 1024;
  // Lanes [0, n) set (n clamped to [0, 8]).
  static inline __m256i Mask(int n) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  }
  static inline V Zero() { return _mm256_setzero_ps(); }
  static inline V Set1(float v) { return _mm256_set1_ps(v); }
  static inline V Load(const float* p) { return _mm256_loadu_ps(p); }
  static inline V LoadN(const float* p, int n) { return _mm256_maskload_ps(p, Mask(n)); }
  static inline void Store(float* p, V v) { _mm256_storeu_ps(p, v); }
  static inline void StoreN(float* p, V v, int n) { _mm256_maskstore_ps(p, Mask(n), v); }
  static inline V Fma(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }
  static inline V Mul(V a, V b) { return _mm256_mul_ps(a, b); }
};
#include "providers/cpu/math/sgemm_driver.inc"
}  // namespace
}  // namespace avx2
#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif
#endif

namespace {

const Kernel* KernelFor(Isa isa) {
#ifdef ONYX_SGEMM_X86
  if (isa == Isa::kAvx512) return &avx512::kKernel;
  if (isa == Isa::kAvx2) return &avx2::kKernel;
#endif
  (void)isa;
  return nullptr;
}

std::atomic<Isa>& Active() {
  static std::atomic<Isa> active{fastmath::BestIsa()};
  return active;
}

// Below this many multiply-adds a GEMM runs on the calling thread: handing
// out work costs a few microseconds.
constexpr double kThreadedWork = 65536.0 * 4;

}  // namespace

Isa ActiveIsa() { return Active().load(std::memory_order_relaxed); }

Isa SetIsaForTesting(Isa isa) {
  if (static_cast<int>(isa) > static_cast<int>(fastmath::BestIsa())) isa = fastmath::BestIsa();
  Active().store(isa);
  return isa;
}

bool Available() { return KernelFor(ActiveIsa()) != nullptr; }

bool Preferred(bool trans_b, int64_t M, int64_t N, int64_t K, bool a_packed, bool b_packed) {
  if (!Available()) return false;
  // A pre-packed operand is always taken: its kernel may have released the
  // original (KernelInfo::ReleaseConstantInput), which only this path does not read.
  if (a_packed || b_packed) return true;
  if (static_cast<double>(M) * N * K <= 16.0 * 16 * 16) return false;
  if (M == 1 && trans_b && !b_packed) return false;
  if (ActiveIsa() == Isa::kAvx2) return M <= 2 && !trans_b;
  return true;
}

void Packed::Free::operator()(float* p) const { std::free(p); }

Packed Packed::Pack(bool left, bool trans, int64_t rows, int64_t K, const float* X, int64_t ld) {
  Packed p;
  const Isa isa = ActiveIsa();
  const Kernel* k = KernelFor(isa);
  if (k == nullptr || rows <= 0 || K <= 0) return p;
  const int64_t r = left ? k->mr : k->nr, padded = (rows + r - 1) / r * r;
  p.bytes_ = (static_cast<size_t>(padded * K) * sizeof(float) + 63) / 64 * 64;
  p.data_.reset(static_cast<float*>(std::aligned_alloc(64, p.bytes_)));
  if (p.data_ == nullptr) return Packed();  // callers then read the raw operand
  k->pack_whole(left, trans, rows, K, X, ld, p.data_.get());
  p.isa_ = isa;
  p.left_ = left;
  p.rows_ = rows;
  p.depth_ = K;
  return p;
}

Packed PackA(bool trans_a, int64_t M, int64_t K, const float* A, int64_t lda) {
  return Packed::Pack(true, trans_a, M, K, A, lda);
}

Packed PackB(bool trans_b, int64_t K, int64_t N, const float* B, int64_t ldb) {
  return Packed::Pack(false, trans_b, N, K, B, ldb);
}

bool Usable(const Packed* p, bool left, int64_t rows, int64_t depth) {
  return p != nullptr && !p->empty() && p->isa() == ActiveIsa() && p->left() == left && p->rows() == rows &&
         p->depth() == depth;
}

void Gemm(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, float alpha, const float* A, int64_t lda,
          const float* B, int64_t ldb, float beta, float* C, int64_t ldc, ThreadPool* pool, const Packed* pa,
          const Packed* pb) {
  const Kernel* k = KernelFor(ActiveIsa());
  if (k == nullptr || M <= 0 || N <= 0 || K <= 0) return;
  Args g{trans_a, trans_b, M, N, K, alpha, beta, A, lda, B, ldb, C, ldc,
         Usable(pa, true, M, K) ? pa->data() : nullptr, Usable(pb, false, N, K) ? pb->data() : nullptr};

  // Split C into tm x tn blocks, one per thread. Splitting N makes every task
  // pack its own copy of A (M x K), splitting M one of B (K x N): split the
  // dimension that duplicates the smaller (or an already packed) operand.
  const int threads = pool == nullptr || static_cast<double>(M) * N * K < kThreadedWork ? 1 : pool->NumThreads();
  const int64_t m_panels = (M + k->mr - 1) / k->mr, n_panels = (N + k->nr - 1) / k->nr;
  int64_t tm = 1, tn = 1;
  if (threads > 1) {
    const double dup_a = g.pa ? 0.0 : static_cast<double>(M), dup_b = g.pb ? 0.0 : static_cast<double>(N);
    if (dup_a <= dup_b && n_panels >= 2) {
      tn = std::min<int64_t>(threads, n_panels);
      tm = std::min<int64_t>(threads / tn, m_panels);
    } else {
      tm = std::min<int64_t>(threads, m_panels);
      tn = std::min<int64_t>(threads / tm, n_panels);
    }
  }
  const int64_t m_chunk = (m_panels + tm - 1) / tm * k->mr, n_chunk = (n_panels + tn - 1) / tn * k->nr;
  auto task = [&](int64_t t) {
    const int64_t mi = t / tn, ni = t % tn;
    const int64_t m0 = mi * m_chunk, n0 = ni * n_chunk;
    if (m0 >= M || n0 >= N) return;
    k->run_task(g, m0, std::min(M, m0 + m_chunk), n0, std::min(N, n0 + n_chunk));
  };
  if (tm * tn == 1) {
    task(0);
    return;
  }
  ThreadPool::For(pool, tm * tn, 1, [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) task(t);
  });
}

}  // namespace sgemm
}  // namespace onyx

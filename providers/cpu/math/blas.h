// One typed GEMM for the CPU kernels (Gemm, MatMul, Conv): our packed SGEMM
// (sgemm.h) for float where it beats OpenBLAS (sgemm::Preferred: nearly
// everything on AVX-512, pre-packed weights and one- or two-row products on
// AVX2), OpenBLAS for the rest of float and for double, a plain loop for
// integer types, so each kernel is written once.
#pragma once

#include <cblas.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <string>
#include <type_traits>

#include "core/framework/thread_pool.h"
#include "providers/cpu/math/packed_gemv.h"
#include "providers/cpu/math/sgemm.h"
#include "core/framework/blas_threads.h"

namespace onyx {

// OpenBLAS runs a GEMM on one thread when M*N*K is at or below this
// (SMP_THRESHOLD_MIN * GEMM_MULTITHREAD_THRESHOLD in its interface/gemm.c).
// Below it, a kernel may run several GEMMs in parallel on its own pool without
// the two thread pools competing for the cores.
constexpr double kBlasSingleThreadWork = 65536.0 * 4;

// The SIMD path the CPU kernels run ("avx512 (OpenBLAS SkylakeX)"): our own
// array kernels' instruction set and OpenBLAS's kernel family (math/gemm.cc).
std::string CpuCodePath();
// Holds OpenBLAS's (process-wide) thread count at `threads` for one call:
// callers wanting the count already set run at once and together; one
// wanting another count waits until none is inside a call, then sets it. So
// each session's GEMMs use its own intra-op thread count, whichever session
// was created last.
class BlasThreadsLease {
 public:
  explicit BlasThreadsLease(int threads);
  ~BlasThreadsLease();
  BlasThreadsLease(const BlasThreadsLease&) = delete;
  BlasThreadsLease& operator=(const BlasThreadsLease&) = delete;
};

// BLAS takes int dimensions (OpenBLAS is built without INTERFACE64).
inline bool FitsBlasInt(int64_t v) { return v >= 0 && v <= INT_MAX; }

// Row-major C[M,N] = alpha * op(A) * op(B) + beta * C, where op(A) is [M,K]
// and op(B) is [K,N]; lda/ldb/ldc are the row strides of A, B, C as stored.
// When beta is 0, C is not read (it may hold garbage). Callers check that
// every dimension and stride fits in int. Float runs on `pool` (pass the
// kernel's ctx.threads(); null, from code already running on the pool, runs
// on the calling thread); `packed_a` / `packed_b` are optional pre-packed
// forms of A / B (sgemm::PackA / PackB, e.g. of a constant weight), used when
// they were packed for the code path in use, else the raw operand is read.
template <typename T>
void BlasGemm(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, T alpha, const T* A, int64_t lda,
              const T* B, int64_t ldb, T beta, T* C, int64_t ldc, ThreadPool* pool = nullptr,
              const sgemm::Packed* packed_a = nullptr, const sgemm::Packed* packed_b = nullptr) {
  if (M == 0 || N == 0) return;
  if (K == 0) {
    // Some BLAS builds reject lda < 1 here; the product is empty anyway.
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) C[i * ldc + j] = beta == T(0) ? T(0) : beta * C[i * ldc + j];
    return;
  }
  if constexpr (std::is_same<T, float>::value) {
    // One row against a pre-packed B (a decode step's weights): streamed
    // panel by panel (packed_gemv.h).
    if (M == 1 && gemv::Usable(packed_b, K, N)) {
      gemv::Run(A, trans_a ? lda : 1, *packed_b, K, N, alpha, beta, C, pool);
      return;
    }
    if (sgemm::Preferred(trans_b, M, N, K, sgemm::Usable(packed_a, true, M, K),
                         sgemm::Usable(packed_b, false, N, K))) {
      sgemm::Gemm(trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, pool, packed_a, packed_b);
      return;
    }
  }
  (void)pool;
  (void)packed_a;
  (void)packed_b;
  if constexpr (std::is_same<T, float>::value || std::is_same<T, double>::value) {
    const CBLAS_TRANSPOSE ta = trans_a ? CblasTrans : CblasNoTrans;
    const CBLAS_TRANSPOSE tb = trans_b ? CblasTrans : CblasNoTrans;
    const int lda_i = static_cast<int>(std::max<int64_t>(lda, 1));
    const int ldb_i = static_cast<int>(std::max<int64_t>(ldb, 1));
    const int ldc_i = static_cast<int>(std::max<int64_t>(ldc, 1));
    BlasThreadsLease lease(BlasThreadBudget());
    if constexpr (std::is_same<T, float>::value) {
      cblas_sgemm(CblasRowMajor, ta, tb, static_cast<int>(M), static_cast<int>(N), static_cast<int>(K), alpha, A,
                  lda_i, B, ldb_i, beta, C, ldc_i);
    } else {
      cblas_dgemm(CblasRowMajor, ta, tb, static_cast<int>(M), static_cast<int>(N), static_cast<int>(K), alpha, A,
                  lda_i, B, ldb_i, beta, C, ldc_i);
    }
  } else {
    for (int64_t i = 0; i < M; ++i) {
      T* c = C + i * ldc;
      for (int64_t j = 0; j < N; ++j) c[j] = beta == T(0) ? T(0) : static_cast<T>(beta * c[j]);
      // i-k-j order keeps the innermost loop contiguous in C (and in B when not transposed).
      for (int64_t k = 0; k < K; ++k) {
        const T a = static_cast<T>(alpha * (trans_a ? A[k * lda + i] : A[i * lda + k]));
        if (trans_b) {
          for (int64_t j = 0; j < N; ++j) c[j] = static_cast<T>(c[j] + a * B[j * ldb + k]);
        } else {
          const T* b = B + k * ldb;
          for (int64_t j = 0; j < N; ++j) c[j] = static_cast<T>(c[j] + a * b[j]);
        }
      }
    }
  }
}

}  // namespace onyx

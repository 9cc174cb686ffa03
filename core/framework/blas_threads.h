// The BLAS thread budget of the calling thread (see BlasThreadBudget); apart
// from thread_pool.h so the kernels that never call BLAS do not depend on it.
#pragma once

namespace onyx {

// How many threads a BLAS call made on this thread may use: the running
// session's intra-op thread count on the thread inside its Run, 1 inside a
// ParallelFor chunk (the pool already spreads the work) and on threads no
// run has set it on. OpenBLAS's count is process-wide; the GEMM wrapper sets
// it from this before each call (providers/cpu/math/blas.h).
int BlasThreadBudget();
class ScopedBlasThreadBudget {
 public:
  explicit ScopedBlasThreadBudget(int threads);
  ~ScopedBlasThreadBudget();
  ScopedBlasThreadBudget(const ScopedBlasThreadBudget&) = delete;
  ScopedBlasThreadBudget& operator=(const ScopedBlasThreadBudget&) = delete;

 private:
  int saved_;
};

}  // namespace onyx

// One row times a pre-packed weight (a decode step's MatMul: M = 1 against
// sgemm::PackB's copy of a constant B): y = alpha * x * B + beta * y read
// straight from the NR-column panels, four panels (eight vector
// accumulators) at a time through every K block, each output vector stored
// once. The blocked GEMM runs such a row through its MR-row tiles and adds
// into C once per K block; this streams the panels at 10-15% more memory
// bandwidth on Zen 5 (1 thread, GPT-2's LM head and MLP weights, 33-38 ->
// 38-43 GB/s), which is what a decode step's weights cost. AVX-512 only:
// on AVX2 it streamed slower than the blocked GEMM, which keeps those rows.
//
// It reads sgemm's packed layout (sgemm.h: op(B) [K, N] in NR = 2 vector
// column panels, K cut into equal blocks of at most 256 rows, each block's
// panels kc x NR apart); LayoutMatches() checks that layout once per ISA
// against a probe packed by sgemm::PackB, and Usable() is false where it
// does not match, so a change of sgemm's layout falls back to sgemm::Gemm.
#pragma once

#include <cstdint>

#include "core/framework/thread_pool.h"
#include "providers/cpu/math/sgemm.h"

namespace onyx {
namespace gemv {

// Whether sgemm::PackB's layout on the active ISA is the one Run reads.
bool LayoutMatches();

// Whether Run can take `pb` as op(B) [K, N] now (the AVX-512 path active,
// `pb` packed for it, of these dims, on a layout Run reads).
bool Usable(const sgemm::Packed* pb, int64_t K, int64_t N);

// y[0, N) = alpha * sum_k x[k * incx] * op(B)[k, :] + beta * y (beta == 0
// never reads y), op(B) given packed by `pb` (Usable). Runs on `pool` (null:
// inline), the columns split in whole groups of panels.
void Run(const float* x, int64_t incx, const sgemm::Packed& pb, int64_t K, int64_t N, float alpha, float beta,
         float* y, ThreadPool* pool);

}  // namespace gemv
}  // namespace onyx

// An exact uint8 x int8 -> int32 GEMM on AVX-512 VNNI (vpdpbusd), chosen at
// run time; the integer-arithmetic kernels fall back to SGEMM over exact
// slices (ExactIntGemmCodes) where the CPU lacks it.
#pragma once

#include <cstdint>
#include <vector>

#include "core/framework/thread_pool.h"

namespace onyx {
namespace qlinear {

// True when the CPU has AVX-512 VNNI (and BW/VL) and ONYX_DISABLE_VNNI is unset, empty or 0.
bool HasU8S8Gemm();

// Every sum of K products of uint8 and int8 stays inside int32 up to this K.
constexpr int64_t kU8S8MaxK = 65792;

// C[M,N] = sum_k A'[m,k] * B'[k,n], exact in int32 (K <= kU8S8MaxK), where
// A' = A ^ a_flip (uint8 codes of A, row stride lda; a_flip 0x80 turns int8
// codes into uint8 ones) and B' = B ^ b_flip read as int8 (row stride ldb;
// b_flip 0x80 turns uint8 codes into int8 ones). Also returns, for the zero
// point corrections, colsum[n] = sum_k B'[k,n] and rowsum[m] = sum_k A'[m,k].
// Column blocks run in parallel on `pool`. Only call when HasU8S8Gemm().
void GemmU8S8(ThreadPool* pool, int64_t M, int64_t N, int64_t K, const uint8_t* A, int64_t lda, uint8_t a_flip,
              const uint8_t* B, int64_t ldb, uint8_t b_flip, int32_t* C, int32_t* colsum, int32_t* rowsum);

// B' packed once (a constant weight, at kernel creation) in GemmU8S8's
// layout, with its column sums; as large as B itself.
struct PackedU8S8B {
  int64_t K = 0, N = 0;
  std::vector<int8_t> panels;   // (N / 32 rounded up) panels of ceil(K / 4) * 128 bytes
  std::vector<int32_t> colsum;  // [N]
};
void PackU8S8B(const uint8_t* B, int64_t ldb, int64_t K, int64_t N, uint8_t b_flip, PackedU8S8B* out);

// GemmU8S8 with B' packed beforehand (no colsum: the pack holds it).
void GemmU8S8Packed(ThreadPool* pool, int64_t M, const uint8_t* A, int64_t lda, uint8_t a_flip,
                    const PackedU8S8B& B, int32_t* C, int32_t* rowsum);

}  // namespace qlinear
}  // namespace onyx

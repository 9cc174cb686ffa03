// Batched GEMM on cuBLAS, shared by MatMul/Gemm and the fused kernels that
// multiply (FusedMatMul, FusedGemm, Attention).
#pragma once

#include "providers/cuda/cuda_kernel.h"

namespace onyx {
namespace cuda {

// Row-major Y[b] = alpha op(A[b]) op(B[b]) + beta Y[b] for b < batch;
// A is m x k after op, B is k x n. A stride of 0 repeats one matrix. Float
// runs in strict FP32 unless the session set use_tf32=1; half types
// accumulate in FP32.
Status Gemm(const CudaEnv& env, ElemType t, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha,
            const void* a, int64_t stride_a, const void* b, int64_t stride_b, float beta, void* y, int64_t stride_y,
            int64_t batch);

}  // namespace cuda
}  // namespace onyx

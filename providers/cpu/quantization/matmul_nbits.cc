// onnxruntime's com.microsoft MatMulNBits (version 1): MatMul with B
// quantized blockwise along K to 2, 4 or 8 bits, as onnxruntime's
// MatMulNBitsQuantizer and LLM exporters write it:
//   inputs  A [..., K] (float, float16, bfloat16), B uint8 [N, k_blocks, blob],
//           scales [N * k_blocks] or [N, k_blocks] (A's type),
//           zero_points? uint8 packed [N * ceil(k_blocks * bits / 8)] or A's type [N * k_blocks],
//           g_idx? (refused), bias? [N]
//   attributes K, N, block_size (power of two >= 16), bits (4), accuracy_level (ignored: float throughout)
//   w[k][n] = (code(n, k) - zero_point(n, k / block_size)) * scale(n, k / block_size),
//   codes low bits first in each byte; the zero point defaults to 2^(bits - 1).
//   Y = A x w (+ bias), in float (16-bit A widened once, the result rounded once).
// B is widened a chunk of columns at a time, so no float copy of the whole of
// B is made.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "providers/cpu/common/half_float.h"
#include "providers/cpu/math/blas.h"
#include "providers/kernel.h"

namespace onyx {
namespace {

class MatMulNBitsKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    const char* op = "MatMulNBits";
    const Attribute* k = info.Attr("K");
    const Attribute* n = info.Attr("N");
    const Attribute* bs = info.Attr("block_size");
    ONYX_CHECK(k != nullptr && n != nullptr && bs != nullptr, ErrorCode::kInvalidGraph, op,
               ": attributes K, N and block_size are required");
    K_ = k->i;
    N_ = n->i;
    block_ = bs->i;
    bits_ = info.AttrInt("bits", 4);
    ONYX_CHECK(K_ > 0 && N_ > 0, ErrorCode::kInvalidGraph, op, ": attributes K and N must be > 0, got ", K_, " and ",
               N_);
    ONYX_CHECK(block_ >= 16 && (block_ & (block_ - 1)) == 0, ErrorCode::kInvalidGraph, op,
               ": attribute block_size must be a power of two >= 16, got ", block_);
    ONYX_CHECK(bits_ == 2 || bits_ == 4 || bits_ == 8, ErrorCode::kNotImplemented, op, ": bits=", bits_,
               " is not supported (2, 4 and 8 are)");
    return Status::OK();
  }

  Status Compute(KernelContext& ctx) const override {
    if (const Tensor* in0 = ctx.Input(0); in0 != nullptr && IsHalfType(in0->type()))
      return ComputeThroughFloat(*this, ctx, {{0, 0}});
    const char* op = "MatMulNBits";
    const Tensor* A = nullptr;
    const Tensor* B = nullptr;
    const Tensor* S = nullptr;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &A));
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(1, &B));
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(2, &S));
    const Tensor* Z = ctx.InputCount() > 3 ? ctx.Input(3) : nullptr;
    ONYX_CHECK_ARG(ctx.InputCount() <= 4 || ctx.Input(4) == nullptr, op, ": input 4 (g_idx) is not supported");
    const Tensor* bias = ctx.InputCount() > 5 ? ctx.Input(5) : nullptr;
    const int64_t kb = (K_ + block_ - 1) / block_, blob = block_ * bits_ / 8;
    ONYX_CHECK_ARG(A->type() == ElemType::kFloat, op, ": input 0 (A) must be float, float16 or bfloat16, got ",
                   ElemTypeName(A->type()));
    ONYX_CHECK_ARG(A->rank() >= 1 && A->dims().back() == K_, op, ": input 0 (A) of shape ", ShapeToString(A->dims()),
                   " must end in K = ", K_);
    ONYX_CHECK_ARG(B->type() == ElemType::kUint8 && B->dims() == Dims({N_, kb, blob}), op, ": input 1 (B) of type ",
                   ElemTypeName(B->type()), " and shape ", ShapeToString(B->dims()), " must be uint8 [", N_, ", ", kb,
                   ", ", blob, "] (N, blocks of K, bytes per block)");
    ONYX_CHECK_ARG(S->type() == ElemType::kFloat && S->size() == N_ * kb && S->rank() <= 2, op,
                   ": input 2 (scales) of type ", ElemTypeName(S->type()), " and shape ", ShapeToString(S->dims()),
                   " must hold ", N_ * kb, " values of A's type (N x blocks)");
    const int64_t per = 8 / bits_, zbytes = (kb + per - 1) / per;
    if (Z != nullptr)
      ONYX_CHECK_ARG((Z->type() == ElemType::kUint8 && Z->size() == N_ * zbytes) ||
                         (Z->type() == ElemType::kFloat && Z->size() == N_ * kb),
                     op, ": input 3 (zero_points) of type ", ElemTypeName(Z->type()), " and shape ",
                     ShapeToString(Z->dims()), " must be uint8 with ", N_ * zbytes, " packed values or of A's type with ",
                     N_ * kb);
    if (bias != nullptr)
      ONYX_CHECK_ARG(bias->type() == ElemType::kFloat && bias->size() == N_, op, ": input 5 (bias) of type ",
                     ElemTypeName(bias->type()), " and shape ", ShapeToString(bias->dims()), " must be [", N_, "]");
    ONYX_CHECK_ARG(FitsBlasInt(K_) && FitsBlasInt(N_) && FitsBlasInt(A->size() / K_), op,
                   ": dimensions are too large");

    Dims yd = A->dims();
    yd.back() = N_;
    Tensor* Y = ctx.Output(0, yd, ElemType::kFloat);
    if (Y == nullptr || Y->size() == 0) return Status::OK();
    const int64_t M = A->size() / K_;
    const uint8_t* bv = B->data<uint8_t>();
    const float* sv = S->data<float>();
    const uint8_t* zq = Z != nullptr && Z->type() == ElemType::kUint8 ? Z->data<uint8_t>() : nullptr;
    const float* zf = Z != nullptr && Z->type() == ElemType::kFloat ? Z->data<float>() : nullptr;
    const float* biasv = bias != nullptr ? bias->data<float>() : nullptr;
    const float* av = A->data<float>();
    float* yv = Y->data<float>();
    const int mask = (1 << bits_) - 1;
    const float zdefault = static_cast<float>(1 << (bits_ - 1));
    constexpr int64_t kChunk = 64;  // columns widened at a time
    const int64_t chunks = (N_ + kChunk - 1) / kChunk;
    ThreadPool::For(ctx.threads(), chunks, 1, [&](int64_t begin, int64_t end) {
      std::vector<float> w(static_cast<size_t>(kChunk * K_));  // [columns][K]
      for (int64_t c = begin; c < end; ++c) {
        const int64_t n0 = c * kChunk, nc = std::min(kChunk, N_ - n0);
        for (int64_t j = 0; j < nc; ++j) {
          const int64_t n = n0 + j;
          float* wr = w.data() + j * K_;
          for (int64_t b = 0; b < kb; ++b) {
            const float s = sv[n * kb + b];
            float z = zdefault;
            if (zq != nullptr) z = static_cast<float>((zq[n * zbytes + b / per] >> (bits_ * (b % per))) & mask);
            else if (zf != nullptr) z = zf[n * kb + b];
            const uint8_t* codes = bv + (n * kb + b) * blob;
            const int64_t k0 = b * block_, kn = std::min(block_, K_ - k0);
            for (int64_t i = 0; i < kn; ++i) {
              const int q = (codes[i / per] >> (bits_ * (i % per))) & mask;
              wr[k0 + i] = (static_cast<float>(q) - z) * s;
            }
          }
        }
        float* yc = yv + n0;
        if (biasv != nullptr)
          for (int64_t m = 0; m < M; ++m) std::copy(biasv + n0, biasv + n0 + nc, yc + m * N_);
        BlasGemm<float>(false, true, M, nc, K_, 1.f, av, K_, w.data(), K_, biasv != nullptr ? 1.f : 0.f, yc, N_);
      }
    });
    return Status::OK();
  }

 private:
  int64_t K_ = 0, N_ = 0, block_ = 32, bits_ = 4;
};

}  // namespace

ONYX_REGISTER_KERNEL(MatMulNBitsKernel, "com.microsoft", "MatMulNBits", 1, kMaxVersion,
                     {ElemType::kFloat, ElemType::kFloat16, ElemType::kBFloat16});

}  // namespace onyx

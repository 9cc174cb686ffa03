// Our own single-precision GEMM: packed, cache-blocked (BLIS-style) with FMA
// micro-kernels for AVX-512 (12x32) and AVX2 (6x16), picked at run time.
// OpenBLAS stays behind BlasGemm (blas.h) for double, for baseline CPUs and
// for the shapes where it still wins (blas.h's routing).
//
// Layout: A is packed into MR-row micro-panels, B into NR-column ones, per
// block of K (K cut into equal blocks of at most KC); a task owning a block
// of C packs the A block it needs (MC x KC, kept in L2) and the B block
// (KC x NC), then runs the micro-kernel over MR x NR tiles; where its rows
// of A stay in L2 it packs B one NR-column panel at a time instead, into L1,
// right before the tiles that use it. Under a pre-packed A (or for a single
// row panel) B is not packed at all: the tiles read its rows in place.
// Constant operands (weights) can be
// packed once, up front, and passed to Gemm in place of the raw matrix. A
// convolution's im2col matrix can stand for B (or, transposed, for A) and
// is packed straight from the image; an epilogue (bias, residual, clamp)
// can finish C tile by tile.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "core/framework/thread_pool.h"
#include "providers/cpu/common/fast_math.h"

namespace onyx {
namespace sgemm {

using fastmath::Isa;

// The path Gemm runs now: fastmath::BestIsa() (the CPU, capped by
// ONYX_CPU_ISA) unless a test forced a narrower one.
Isa ActiveIsa();
// Forces `isa` (capped at fastmath::BestIsa()); returns the one in use.
Isa SetIsaForTesting(Isa isa);
// Whether Gemm has a micro-kernel for the active path (not on baseline).
bool Available();
// The active micro-kernel's tile: MR rows by NR columns (NR = 2 vectors);
// 0 x 0 where none.
int TileRows();
int TileCols();

// An operand packed for the micro-kernel of one ISA: op(A) [M,K] in MR-row
// panels (a left operand) or op(B) [K,N] in NR-column panels (a right one),
// zero-padded to whole panels. `rows` counts M (left) or N (right).
class Packed {
 public:
  bool empty() const { return data_ == nullptr; }
  Isa isa() const { return isa_; }
  bool left() const { return left_; }
  int64_t rows() const { return rows_; }
  int64_t depth() const { return depth_; }
  // Memory it holds, in bytes.
  size_t bytes() const { return bytes_; }
  const float* data() const { return data_.get(); }

 private:
  friend Packed PackA(bool, int64_t, int64_t, const float*, int64_t);
  friend Packed PackB(bool, int64_t, int64_t, const float*, int64_t);
  // The operand X (rows x K as op(X) sees it) of either side.
  static Packed Pack(bool left, bool trans, int64_t rows, int64_t K, const float* X, int64_t ld);
  struct Free {
    void operator()(float* p) const;
  };
  std::unique_ptr<float[], Free> data_;
  Isa isa_ = Isa::kBaseline;
  bool left_ = false;
  int64_t rows_ = 0, depth_ = 0;
  size_t bytes_ = 0;
};

// op(A) = trans_a ? A^T : A, A stored row-major with row stride lda; op(A) is
// [M,K]. Empty when the active path has no micro-kernel.
Packed PackA(bool trans_a, int64_t M, int64_t K, const float* A, int64_t lda);
// op(B) [K,N], likewise.
Packed PackB(bool trans_b, int64_t K, int64_t N, const float* B, int64_t ldb);

// A right operand that is never stored: the im2col matrix of a 2-D
// convolution's input, [C*KH*KW, OH*OW], row (c, kh, kw) and column (oh, ow)
// reading x[c, oh*sh - ph + kh*dh, ow*sw - pw + kw*dw] (zero outside the
// image). Gemm packs its blocks straight from `x` ([C, H, W]), so the matrix
// costs no memory and no pass of its own.
constexpr int64_t kMaxPhaseKernel = 7;
struct Im2Col2D {
  const float* x = nullptr;
  int64_t C = 0, H = 0, W = 0, OH = 0, OW = 0, KH = 1, KW = 1;
  int64_t sh = 1, sw = 1, ph = 0, pw = 0, dh = 1, dw = 1;
  // The matrix's transpose [OH*OW, C*KH*KW] stands for A instead of B (the
  // transposed product C^T = X^T W^T, whose micro-tiles run across output
  // channels: no edge waste on small images).
  bool transposed = false;
  // Stride 2 (sh = sw = 2, KH and KW at most kMaxPhaseKernel) with `x` not
  // the image but its four phase planes per channel ([C, 4, OH, OW], phase
  // 2r + c holding x[2i + r, 2j + c], zero outside the image:
  // depthwise_conv.h's phases::Split, whose Fits holds on both axes): an
  // im2col row then reads one phase at a fixed offset per tap, a masked load
  // per half panel, and a 3x3 conv's strips are read in place like a
  // stride-1 "same" conv's (Im2ColInPlace), not gathered from every other
  // element.
  bool phases = false;
};

// What Gemm applies to C once a block of it is complete (on the last K
// block, while the tile is in L1): C = clamp(C + bias[row] + Z, lo, hi).
struct Epilogue {
  const float* bias = nullptr;  // one value per row of C, or null
  const float* z = nullptr;     // [M, N] added element-wise (row stride ldz), or null
  int64_t ldz = 0;
  bool clamp = false;           // then C = min(max(C, lo), hi)
  float lo = 0.f, hi = 0.f;
  // When given, C is scratch and the result is its transpose: each task's
  // block of C, once complete, goes to t_out[j * ldt + i] = C[i, j] and the
  // rest applies there, as Transpose's epilogue (bias per row of t_out, Z
  // shaped like t_out), inside the same task (Conv's transposed product:
  // Y = (Y^T)^T without a pass of its own).
  float* t_out = nullptr;
  int64_t ldt = 0;
};

// Row-major C[M,N] = alpha * op(A) * op(B) + beta * C (BlasGemm's contract:
// beta == 0 never reads C). `pa` / `pb`, when given, non-empty, packed for the
// active ISA and of matching dims, stand for A / B (which are then not read);
// otherwise A / B are packed as the call goes. Runs on `pool` (null: inline).
// `im2col`, when given, is B (B, ldb, trans_b and pb are then ignored; N
// must be OH*OW and K C*KH*KW), or with `transposed` A (A, lda, trans_a and
// pa ignored; M must be OH*OW); `epilogue`, when given, runs on
// C at the end.
// Requires Available(), M, N, K >= 1.
void Gemm(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, float alpha, const float* A, int64_t lda,
          const float* B, int64_t ldb, float beta, float* C, int64_t ldc, ThreadPool* pool,
          const Packed* pa = nullptr, const Packed* pb = nullptr, const Im2Col2D* im2col = nullptr,
          const Epilogue* epilogue = nullptr);

// Whether Gemm runs this call: always with a pre-packed operand usable here
// (the kernel that packed it may have released the original); otherwise where
// it beats OpenBLAS (Haswell kernels, as this workplace and many
// users run it) on this shape, by tests/bench/sgemm_bench.cc on Zen 5. The
// AVX-512 path does by 1.3-4x everywhere except tiny products (under 16^3
// multiply-adds, where both take well under a microsecond and OpenBLAS's
// lighter set-up wins). A single row times a transposed, unpacked B (a
// decode step's attention scores) runs as dot products over B's rows in place
// (RowDot, 3.6-6x OpenBLAS's GEMV on 1x129x64 to 1x50257x768).
// The AVX2 path ties with OpenBLAS's own AVX2 kernels (0.9-1.05x) and loses
// where A must be packed for few columns, so there it is taken only for a
// pre-packed operand, one or two rows (RowStream, 2-3x) or RowDot's case.
bool Preferred(bool trans_b, int64_t M, int64_t N, int64_t K, bool a_packed, bool b_packed);

// dst[c * ldd + r] = src[r * lds + c] for r < rows, c < cols: a product
// computed transposed put back (Conv's transposed product on small images),
// by 8x8 register blocks on the SIMD paths. src and dst must not overlap.
// `ep`, when given, then finishes dst [cols, rows] as Gemm's does C (bias
// per row of dst, Z shaped like dst), a few rows at a time while in cache.
void Transpose(int64_t rows, int64_t cols, const float* src, int64_t lds, float* dst, int64_t ldd,
               const Epilogue* ep = nullptr);

// Whether `p` can stand for the operand of this shape on the active path.
bool Usable(const Packed* p, bool left, int64_t rows, int64_t depth);

}  // namespace sgemm
}  // namespace onyx

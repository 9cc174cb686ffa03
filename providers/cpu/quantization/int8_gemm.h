// Exact integer GEMM for the quantized kernels (MatMulInteger,
// MatMulIntegerToFloat, DynamicQuantizeMatMul, QLinearMatMul, ConvInteger,
// QLinearConv):
//   C[m, n] = sum_k (A[m, k] - za[m]) * (B[k, n] - zb[n])   (int32, wrapping)
// for A and B each int8 or uint8, zero points per tensor or per row of A /
// per column of B. Both operands are first made u8 x s8 (A + 128 for int8 A,
// B - 128 for uint8 B, the zero points shifted alike: exact), the product of
// the raw values is summed by a micro-kernel, and the zero points come in
// through row and column sums:
//   C = sum A'B' - za' * (colsum B' - K zb') - zb' * rowsum A'.
// B is packed once (PackedB) into panels of 64 columns, 4 values of K per
// column together: what vpdpbusd reads. The micro-kernel is chosen at run
// time: AVX-512 VNNI (vpdpbusd), AVX2 (widened to int16, vpmaddwd: exact,
// unlike vpmaddubsw which saturates) or portable C++; fastmath::BestIsa()
// (ONYX_CPU_ISA) caps it.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "core/framework/thread_pool.h"
#include "providers/kernel.h"

namespace onyx {
namespace int8gemm {

enum class Path { kScalar = 0, kAvx2 = 1, kAvx512Vnni = 2 };

// The widest path this CPU runs, capped by ONYX_CPU_ISA (see fast_math.h).
Path BestPath();
// "avx512vnni", "avx2", "scalar".
const char* PathName(Path path);
// Forces the micro-kernels to `path` (capped at BestPath()); returns the one
// in use. For tests; the packed layout is the same on every path.
Path SetPathForTesting(Path path);

// B [K, N] (row stride ldb, int8 or uint8) in the layout the micro-kernels
// read, with its column sums. Immutable once packed: one PackedB built from a
// constant initializer serves concurrent runs.
class PackedB {
 public:
  PackedB() = default;
  // Packs `b`; `pool` (may be null) parallelises over panels of columns.
  static PackedB Pack(const void* b, bool b_signed, int64_t K, int64_t N, int64_t ldb, ThreadPool* pool = nullptr);
  // The same into this object, reusing its storage when large enough.
  void Repack(const void* b, bool b_signed, int64_t K, int64_t N, int64_t ldb, ThreadPool* pool = nullptr);

  int64_t K() const { return k_; }
  int64_t N() const { return n_; }
  // Per column, the sum over K of the stored values (B, less 128 when shifted).
  const int32_t* col_sums() const { return col_sums_.data(); }
  // True when B was uint8 (stored less 128).
  bool shifted() const { return shifted_; }
  // Bytes held.
  size_t bytes() const { return data_size_ + col_sums_.size() * sizeof(int32_t); }

 private:
  friend struct Access;
  int64_t k_ = 0, n_ = 0, kp_ = 0;  // kp_: K rounded up to 4
  bool shifted_ = false;
  std::unique_ptr<int8_t[]> data_;  // [panel][kp_/4][64 columns][4]
  size_t data_size_ = 0, data_capacity_ = 0;
  std::vector<int32_t> col_sums_;  // sum over k of the stored (s8) values, per column
};

// Rows [m0, m1) and columns [n0, n1) of the product, finished:
// C[m, n] = c[(m - m0) * ldc + (n - n0)]. Called on the thread that computed
// them, each element once.
using Epilogue = std::function<void(int64_t m0, int64_t m1, int64_t n0, int64_t n1, const int32_t* c, int64_t ldc)>;

struct GemmArgs {
  int64_t M = 0;
  const void* a = nullptr;  // A [M, K] row-major, row stride lda
  bool a_signed = false;
  int64_t lda = 0;
  const int32_t* za = nullptr;  // null: 0; else one value, or M with za_per_row
  bool za_per_row = false;
  const int32_t* zb = nullptr;  // null: 0; else one value, or N with zb_per_column
  bool zb_per_column = false;
  // Optional, in place of `a`: A's rows by address, each row in a_segments
  // pieces of L = K / a_segments values (L a multiple of 4): a_rows(m0, m1,
  // out) sets out[(m - m0) * a_segments + s] to the address of A[m, s * L]
  // (L bytes) for m in [m0, m1) -- a convolution's taps, read where they lie
  // instead of copied into one matrix. Called from the pool's threads.
  std::function<void(int64_t m0, int64_t m1, const uint8_t** out)> a_rows;
  int64_t a_segments = 1;
  int32_t* c = nullptr;  // C [M, N], row stride ldc; unused when epilogue is set
  int64_t ldc = 0;
  Epilogue epilogue;
};

// C = (A - za) x (B - zb) with B packed; `pool` (may be null) runs blocks of
// C in parallel.
void Gemm(const GemmArgs& args, const PackedB& b, ThreadPool* pool);

// DynamicQuantizeLinear's parameters for x[0, n): the range [min(0, min x),
// max(0, max x)], scale (hi - lo) / 255 (1 when hi == lo, as onnxruntime),
// zero point round_half_even(-lo / scale) within [0, 255]. Returns the flat
// index of the first value that is not finite, or -1 (then sets both).
// `pool` (may be null) splits the pass over x.
int64_t DynamicQuantizeParams(const float* x, int64_t n, float* scale, int32_t* zero_point,
                              ThreadPool* pool = nullptr);
// q[i] = saturate(round_half_even(x[i] / scale) + zero_point) for Q int8 or
// uint8, NaN giving zero_point (QuantizeLinear's float case). Vectorized on
// every path.
template <typename Q>
void QuantizeFloat8(const float* x, int64_t n, float scale, int32_t zero_point, Q* q);
// QuantizeFloat8 to uint8, for the parameters above, split over `pool` (may
// be null).
void QuantizeU8(const float* x, int64_t n, float scale, int32_t zero_point, uint8_t* q, ThreadPool* pool = nullptr);

// onnxruntime's requantization of an integer accumulator (MLAS's
// MlasRequantizeOutput, and the epilogues of its QLinearConv/QGemm kernels),
// in float:
//   out[i] = saturate(round_half_even(float(acc[i] + bias) * scale[i?]) + zero_point)
// with acc + bias wrapping in int32 and the product clamped to
// [min - zp, max - zp] before rounding (the same result as clamping after).
// `scale_per_element`: scale[i], else scale[0]. NaN (from a NaN scale) gives
// the zero point. Vectorized on every path. The ONNX reference computes the
// product in double instead: see qlinear::RequantizeRow for the kernels that
// follow it.
template <typename Q>
void RequantizeFloat(const int32_t* acc, int64_t n, int32_t bias, const float* scale, bool scale_per_element,
                     int32_t zero_point, Q* out);

// The same for `rows` rows of n columns (acc row stride lda, out row stride
// ldo) with bias[j] (null: 0) and scale[j] per column: outputs whose columns
// are channels.
template <typename Q>
void RequantizeFloatColumns(const int32_t* acc, int64_t lda, int64_t rows, int64_t n, const int32_t* bias,
                            const float* scale, int32_t zero_point, Q* out, int64_t ldo);

// The float epilogue of MatMulIntegerToFloat / DynamicQuantizeMatMul:
//   y[m * ldy + n] = float(c[m * ldc + n]) * scale[n] + (bias ? bias[n] : 0)
// for m < rows, n < cols; the product rounded, then the sum (never one fused
// multiply-add: the values of a Cast, a Mul and an Add). Vectorized on every
// path.
void ScaleToFloat(const int32_t* c, int64_t ldc, int64_t rows, int64_t cols, const float* scale, const float* bias,
                  float* y, int64_t ldy);

// The B input of a matrix-product kernel ([..., K, N] int8 or uint8; 1-D is
// [K, 1]), packed once at Init when it is a constant initializer.
class PackedWeights {
 public:
  // Packs input `index` of the node if it is a constant int8/uint8 tensor,
  // and tells the session it may free the original (ReleaseConstantInput).
  void Init(const KernelInfo& info, int index);
  // The `mats` packed [K, N] matrices of `b`: the ones packed at Init when
  // `b` is that constant, else packed now into *scratch.
  const std::vector<PackedB>& Get(const Tensor& b, int64_t K, int64_t N, int64_t mats, ThreadPool* pool,
                                  std::vector<PackedB>* scratch) const;

 private:
  bool packed_at_init_ = false;
  Dims dims_;
  ElemType type_ = ElemType::kUndefined;
  std::vector<PackedB> packed_;
};

}  // namespace int8gemm
}  // namespace onyx

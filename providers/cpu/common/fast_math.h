// Branch-free float32 exp/tanh/erf, written once as templates over the value
// type so the same formula serves scalar code (float) and explicit SIMD code
// (GCC vector types, see fast_math.cc): the compiler's auto-vectorizer does not
// reliably turn the scalar form into SIMD (with AVX2 enabled it kept branches),
// so the array functions below use vector types directly. Accuracy: exp ~2 ulp
// over [-87, 88]; tanh and erf within 3e-7 absolute. Used for float tensors
// only; double keeps libm.
#pragma once

#include <string>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "providers/cpu/common/float_to_int.h"

namespace onyx {
namespace fastmath {

namespace detail {

// Works for float and for GCC vectors of float (scalar operands broadcast).
template <typename F>
inline __attribute__((always_inline)) F Splat(float v) {
  return F{} + v;
}

template <typename I, typename F>
inline __attribute__((always_inline)) I TruncToInt(F v) {
  if constexpr (std::is_same<F, float>::value) {
    // NaN (exp of NaN) and out-of-range lanes give INT_MIN, as the vector
    // conversion (cvttps2dq) does, without static_cast's undefined behaviour.
    return static_cast<I>(FloatToInt32(v));
  } else {
    return __builtin_convertvector(v, I);
  }
}

template <typename F, typename I>
inline __attribute__((always_inline)) F BitsToFloat(I bits) {
  static_assert(sizeof(F) == sizeof(I), "lane counts differ");
  F f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}

// v << 23: the float exponent field. A NaN input makes v negative, and
// shifting a negative int is undefined in C++17, so the scalar form shifts
// the bits unsigned (vector lanes shift as the hardware does).
template <typename I>
inline __attribute__((always_inline)) I ExponentBits(I v) {
  if constexpr (std::is_integral<I>::value)
    return static_cast<I>(static_cast<uint32_t>(v) << 23);
  else
    return v << 23;
}

// F is float or a vector of float; I the matching int32 type.
// e^x = p * 2^n, |x| < 2^22 * ln2: returns p (in [sqrt(1/2), sqrt(2)]) and
// sets n.
template <typename F, typename I>
inline __attribute__((always_inline)) F ExpReducedT(F x, I* n_out) {
  const F t = x * 1.44269504088896341f;
  // Round to nearest by the 1.5*2^23 trick: no float->int rounding mode needed
  // and no branch on the sign (|t| < 2^22 here).
  const F nf = (t + 12582912.f) - 12582912.f;
  const I n = TruncToInt<I>(nf);
  // Cody-Waite reduction: r = x - n*ln2 in two steps to keep r exact.
  F r = x - nf * 0.693359375f;
  r = r + nf * 2.12194440e-4f;
  // e^r on |r| <= ln2/2: degree 6, a least-squares fit of the relative
  // error on Chebyshev nodes (as accurate in float32 as the degree-7 Taylor
  // series it replaced: both within 1.1e-7 relative over [-87, 88]).
  F p = Splat<F>(1.3859259197488427e-3f);
  p = p * r + 8.374805562198162e-3f;
  p = p * r + 4.166772589087486e-2f;
  p = p * r + 1.6666419804096222e-1f;
  p = p * r + 0.4999999403953552f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  *n_out = n;
  return p;
}

template <typename F, typename I>
inline __attribute__((always_inline)) F ExpT(F x) {
  // Clamped so results stay normal floats: denormal arithmetic is ~100x slower,
  // and e^-87.3 is already below what any caller can distinguish from 0.
  // (Compared so that NaN falls through unchanged.)
  x = x < Splat<F>(-87.33f) ? Splat<F>(-87.33f) : x;
  x = x > Splat<F>(89.f) ? Splat<F>(89.f) : x;
  I n;
  const F p = ExpReducedT<F, I>(x, &n);
  // 2^n as two normal factors, so overflow gives inf and underflow denormals/0.
  const I n1 = n >> 1, n2 = n - n1;
  const F s1 = BitsToFloat<F>(ExponentBits<I>(n1 + 127));
  const F s2 = BitsToFloat<F>(ExponentBits<I>(n2 + 127));
  return p * s1 * s2;
}

template <typename F, typename I>
inline __attribute__((always_inline)) F TanhT(F x) {
  const F zero = Splat<F>(0.f);
  F ax = x < zero ? -x : x;
  ax = ax > Splat<F>(9.1f) ? Splat<F>(9.1f) : ax;  // tanh(9.1) rounds to 1 in float
  // Small |x|: the odd Taylor series avoids the cancellation in 1 - 2/(e^2x + 1).
  const F x2 = ax * ax;
  const F small =
      ax * (1.f + x2 * (-0.333333333f + x2 * (0.133333333f + x2 * (-0.0539682540f + x2 * 0.0218694885f))));
  const F e = ExpT<F, I>(2.f * ax);
  const F big = 1.f - 2.f / (e + 1.f);
  const F r = ax < Splat<F>(0.2f) ? small : big;
  return x < zero ? -r : r;
}

// e^x for x in [-87, 0] (or NaN): ExpT without its clamps and with 2^n as one
// normal factor (n >= -126 there).
template <typename F, typename I>
inline __attribute__((always_inline)) F ExpNonPositiveT(F x) {
  I n;
  const F p = ExpReducedT<F, I>(x, &n);
  return p * BitsToFloat<F>(ExponentBits<I>(n + 127));
}

// erf with absolute error < 2e-7, no division: below |x| = 0.921875,
// x * P(x^2); above, 1 - e^Q(|x|) with Q fitted to log(erfc) on [0.921875,
// 4.1] (erfc(4.1) < 2^-25: 1 - it rounds to 1, so larger |x| clamp to 4.1).
// Both polynomials are least-squares fits on Chebyshev nodes made for this
// file (errors checked in float32 against a 30-digit erf).
template <typename F, typename I>
inline __attribute__((always_inline)) F ErfT(F x) {
  const F zero = Splat<F>(0.f);
  const F ax = x < zero ? -x : x;
  const F x2 = ax * ax;
  F ps = Splat<F>(8.438768418272957e-05f);
  ps = ps * x2 + -0.0008160783909261227f;
  ps = ps * x2 + 0.005202835891395807f;
  ps = ps * x2 + -0.02686024084687233f;
  ps = ps * x2 + 0.11283713579177856f;
  ps = ps * x2 + -0.37612634897232056f;
  ps = ps * x2 + 1.128379225730896f;
  const F small = ax * ps;
  const F axc = ax > Splat<F>(4.1f) ? Splat<F>(4.1f) : ax;
  F q = Splat<F>(-4.286533084041366e-08f);
  q = q * axc + 1.019601768348366e-06f;
  q = q * axc + -9.031125955516472e-06f;
  q = q * axc + 1.8542657926445827e-05f;
  q = q * axc + 0.00034627720015123487f;
  q = q * axc + -0.004109713714569807f;
  q = q * axc + 0.025279242545366287f;
  q = q * axc + -0.10873774439096451f;
  q = q * axc + -0.6328370571136475f;
  q = q * axc + -1.12979257106781f;
  q = q * axc + 0.00023549867910332978f;
  const F big = 1.f - ExpNonPositiveT<F, I>(q);
  const F r = ax < Splat<F>(0.921875f) ? small : big;
  return x < zero ? -r : r;
}

}  // namespace detail

inline float Exp(float x) { return detail::ExpT<float, int32_t>(x); }
inline float Tanh(float x) { return detail::TanhT<float, int32_t>(x); }
inline float Erf(float x) { return detail::ErfT<float, int32_t>(x); }

// Array forms: y[i] = f(x[i]) (y may equal x). They run the same formulas on
// the widest SIMD the CPU offers (AVX-512, AVX2+FMA, else SSE2), picked once at
// run time, so the library itself still targets baseline x86-64. Results may
// differ from the scalar forms in the last bits where FMA is used.
void ExpArray(const float* x, float* y, int64_t n);
void TanhArray(const float* x, float* y, int64_t n);
void ErfArray(const float* x, float* y, int64_t n);
// y = 0.5 * x * (1 + erf(x / sqrt(2))): x divided by float(sqrt(2)), the
// erf as ErfArray's, each step rounded on its own (the bits of the Div, Erf,
// Add, Mul, Mul chain torch.onnx exports).
void GeluArray(const float* x, float* y, int64_t n);
// z = x + b (b may be null: z = x), then y = 0.5 * z * (1 + erf(z / sqrt(2)))
// (BiasGelu), or y = 0.5 * z * (1 + tanh(sqrt(2/pi) * (z + 0.044715 z^3)))
// (FastGelu, computed as z / (1 + exp(-2 * that tanh argument)), the same
// function without tanh's cancellation or its second exp).
void BiasGeluArray(const float* x, const float* b, float* y, int64_t n);
void FastGeluArray(const float* x, const float* b, float* y, int64_t n);
// Sum of x[i], and sum of (x[i] - mean)^2, in several SIMD partial sums (not
// a serial loop's order of additions); 0 for n = 0. SumSquaredDevArray rounds
// each (x[i] - mean)^2 before adding it, in SumArray's order: the bits of
// SumArray over the array of squares (Sub, Pow 2, then ReduceMean's sum).
float SumArray(const float* x, int64_t n);
float SumSquaredDevArray(const float* x, int64_t n, float mean);
// A normalization's last step (y may equal x), every step rounded on its own
// as the separate kernels of the graph it stands for (no FMA):
//   NormalizeArray:    y[i] = ((x[i] - mean) * inv) * scale[i] (+ bias[i])
//   NormalizeDivArray: y[i] = ((x[i] - mean) / std_dev) * scale[i] (+ bias[i])
// bias may be null.
void NormalizeArray(const float* x, float mean, float inv, const float* scale, const float* bias, float* y,
                    int64_t n);
void NormalizeDivArray(const float* x, float mean, float std_dev, const float* scale, const float* bias, float* y,
                       int64_t n);
// One row of LayerNormalization (or, `rms`, SimplifiedLayerNormalization)
// rounded step by step as the operators layer_norm_fusion takes in:
// NormStats is ReduceMean (SumArray, as the Reduce kernel sums a row), Sub,
// Pow 2, ReduceMean, Add epsilon, Sqrt (mean 0 for rms); NormalizeRow then
// divides by sd (LayerNorm's exported Div) or multiplies by 1 / sd (RMSNorm's
// Reciprocal and Mul, as LLaMA exports it), then Mul scale, Add bias. The
// fused graph gives the unfused graph's bits.
struct RowNorm {
  float mean, sd;
};
RowNorm NormStats(const float* x, int64_t n, float epsilon, bool rms);
void NormalizeRow(const float* x, RowNorm st, bool rms, const float* scale, const float* bias, float* y, int64_t n);
// y[i] = exp(x[i] - shift), but 0 where x[i] - shift < -87 (so a softmax built
// on it never makes denormals); returns the sum of the y[i]. shift is the
// max of x (x[i] - shift <= 0: no overflow handling, one scaling by 2^n).
float ExpShiftSumArray(const float* x, float* y, int64_t n, float shift);
// y = softmax(x) over n >= 1 values (y may equal x): MaxArray, then
// ExpShiftSumArray, then the scaling by 1/sum, in one call.
void SoftmaxArray(const float* x, float* y, int64_t n);
// y = log(softmax(x)) = x - max - log(sum of exp(x - max)) over n >= 1 values
// (y may equal x), on the same max and exp-sum code as SoftmaxArray.
void LogSoftmaxArray(const float* x, float* y, int64_t n);
// Largest x[i] (n >= 1); NaN when x[0] is NaN, later NaNs are skipped.
float MaxArray(const float* x, int64_t n);

// Which instruction set the array forms use; tests force each one.
enum class Isa { kBaseline = 0, kAvx2 = 1, kAvx512 = 2 };
// The widest path the CPU runs, capped by the environment variable
// ONYX_CPU_ISA (avx512, avx2 or baseline), read once: one machine can run,
// and CI test, every path narrower than its own. OpenBLAS reads its own
// OPENBLAS_CORETYPE (Haswell for AVX2) once, when it loads: set both.
Isa BestIsa();
// "avx512", "avx2", "baseline".
const char* IsaName(Isa isa);
// Empty, or what is wrong with ONYX_CPU_ISA (an unknown value is ignored by
// the kernels; sessions refuse to start with this message).
std::string IsaRequestError();
// Forces the array forms to `isa` (capped at BestIsa()); returns the one in use.
Isa SetIsaForTesting(Isa isa);

// Generic forms for kernels templated on the compute type.
template <typename C>
inline C ExpOf(C v) {
  if constexpr (std::is_same<C, float>::value) return Exp(v); else return std::exp(v);
}
template <typename C>
inline C TanhOf(C v) {
  if constexpr (std::is_same<C, float>::value) return Tanh(v); else return std::tanh(v);
}
template <typename C>
inline C ErfOf(C v) {
  if constexpr (std::is_same<C, float>::value) return Erf(v); else return std::erf(v);
}

}  // namespace fastmath
}  // namespace onyx

// Vector-typed helpers below are always inlined into the per-ISA wrappers, so
// no vector ever crosses a call boundary between differently compiled code;
// GCC's ABI note about such calls does not apply.
#pragma GCC diagnostic ignored "-Wpsabi"

#include "providers/cpu/common/fast_math.h"

#include <atomic>
#include <cstdlib>
#include <cmath>
#include <limits>
#include <string>

#include "providers/cpu/common/vector_types.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace onyx {
namespace fastmath {
namespace {

using vec::F4;
using vec::I4;
using vec::F8;
using vec::I8;
using vec::F16;
using vec::I16;

template <typename F, typename I>
struct ExpOp {
  static inline __attribute__((always_inline)) F Apply(F v) { return detail::ExpT<F, I>(v); }
};
template <typename F, typename I>
struct TanhOp {
  static inline __attribute__((always_inline)) F Apply(F v) { return detail::TanhT<F, I>(v); }
};
template <typename F, typename I>
struct ErfOp {
  static inline __attribute__((always_inline)) F Apply(F v) { return detail::ErfT<F, I>(v); }
};
// `v` as rounded on its own: GCC (gnu++17, -ffp-contract=fast) would fuse a
// product into a following add as one FMA, one rounding instead of two. The
// fused kernels below that stand for a chain of graph operators round each
// step as the separate kernels do, so that an optimized graph gives the same
// bits as the unoptimized one (an int8 model's DynamicQuantizeLinear turns
// one ulp into a quantization step).
template <typename F>
inline __attribute__((always_inline)) F Rounded(F v) {
#if defined(__clang__)
  // Clang contracts only inside one expression (-ffp-contract=on), and the
  // callers end the expression here. (Its asm constraints would also refuse
  // a 256-bit "v" operand in a template instantiated for an AVX2 wrapper.)
  return v;
#else
  __asm__("" : "+v"(v));
  return v;
#endif
}

// Erf's argument is X / float(sqrt(2)), divided as torch.onnx writes the
// exact GELU (Div, Erf, Add 1, Mul X, Mul 0.5): the same bits as those
// kernels, Erf's being ErfArray. 0.5 * X * g rounds like (X * g) * 0.5.
template <typename F, typename I>
struct GeluOp {
  static inline __attribute__((always_inline)) F Apply(F v) {
    const F e = Rounded(detail::ErfT<F, I>(v / 1.41421356237309504880f));
    return 0.5f * v * (1.f + e);
  }
};

// FastGelu as z * sigmoid(2u) = z / (1 + exp(-2u)), u = sqrt(2/pi) * (z +
// 0.044715 z^3): 0.5 * (1 + tanh(u)) is sigmoid(2u). exp's clamp keeps the
// quotient finite (a large negative z gives z / ~4.5e38, as tiny as the true
// value), a large positive one gives z.
template <typename F, typename I>
struct FastGeluOp {
  static inline __attribute__((always_inline)) F Apply(F v) {
    const F m2u = v * (-1.5957691216057308f + (-0.0713548162726f) * (v * v));  // -2u
    return v / (1.f + detail::ExpT<F, I>(m2u));
  }
};

// Per lane count W: the row's last n % W elements as one vector (lanes past
// the end hold `fill`) and back, touching no memory past the end, and the
// horizontal max and sum of a vector as a tree of shuffles. W = 4 is the
// portable baseline form; 8 and 16 use AVX2 and AVX-512 masked moves. Those
// two are not always_inline: GCC refuses to inline a target-specific
// function into the (baseline) bodies before the bodies are inlined into
// their ISA wrapper; it inlines them there (checked with objdump: the
// wrappers call nothing).
template <int W>
struct Lanes;

template <>
struct Lanes<4> {
  static inline __attribute__((always_inline)) void LoadTail(const float* p, int64_t r, float fill, F4* out) {
    F4 v = detail::Splat<F4>(fill);
    for (int64_t k = 0; k < r; ++k) v[k] = p[k];
    *out = v;
  }
  static inline __attribute__((always_inline)) void StoreTail(float* p, const F4& v, int64_t r) {
    for (int64_t k = 0; k < r; ++k) p[k] = v[k];
  }
  static inline __attribute__((always_inline)) float Max(const F4& v) {
    const float a = v[0] > v[2] ? v[0] : v[2], b = v[1] > v[3] ? v[1] : v[3];
    return a > b ? a : b;
  }
  static inline __attribute__((always_inline)) float Sum(const F4& v) { return (v[0] + v[2]) + (v[1] + v[3]); }
};

#if defined(__x86_64__) || defined(__i386__)
#define ONYX_AVX2 __attribute__((target("avx2,fma")))
#define ONYX_AVX512 __attribute__((target("avx512f,avx512dq,avx512bw,avx512vl,avx2,fma")))

template <>
struct Lanes<8> {
  static inline ONYX_AVX2 __m256i Mask(int64_t r) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(r)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  }
  static inline ONYX_AVX2 void LoadTail(const float* p, int64_t r, float fill, F8* out) {
    const __m256i m = Mask(r);
    *out = (F8)_mm256_blendv_ps(_mm256_set1_ps(fill), _mm256_maskload_ps(p, m), _mm256_castsi256_ps(m));
  }
  static inline ONYX_AVX2 void StoreTail(float* p, const F8& v, int64_t r) {
    _mm256_maskstore_ps(p, Mask(r), (__m256)v);
  }
  static inline ONYX_AVX2 float Max(const F8& v) {
    __m128 m = _mm_max_ps(_mm256_castps256_ps128((__m256)v), _mm256_extractf128_ps((__m256)v, 1));
    m = _mm_max_ps(m, _mm_movehl_ps(m, m));
    return _mm_cvtss_f32(_mm_max_ss(m, _mm_movehdup_ps(m)));
  }
  static inline ONYX_AVX2 float Sum(const F8& v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128((__m256)v), _mm256_extractf128_ps((__m256)v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    return _mm_cvtss_f32(_mm_add_ss(s, _mm_movehdup_ps(s)));
  }
};

template <>
struct Lanes<16> {
  static inline ONYX_AVX512 void LoadTail(const float* p, int64_t r, float fill, F16* out) {
    *out = (F16)_mm512_mask_loadu_ps(_mm512_set1_ps(fill), static_cast<__mmask16>((1u << r) - 1), p);
  }
  static inline ONYX_AVX512 void StoreTail(float* p, const F16& v, int64_t r) {
    _mm512_mask_storeu_ps(p, static_cast<__mmask16>((1u << r) - 1), (__m512)v);
  }
  // Halves by shuffles (GCC 12's _mm512_castps512_ps256 warns of an
  // undefined operand).
  static inline ONYX_AVX512 F8 Low(F16 v) { return __builtin_shufflevector(v, v, 0, 1, 2, 3, 4, 5, 6, 7); }
  static inline ONYX_AVX512 F8 High(F16 v) { return __builtin_shufflevector(v, v, 8, 9, 10, 11, 12, 13, 14, 15); }
  static inline ONYX_AVX512 float Max(const F16& v) {
    const F8 lo = Low(v), hi = High(v), m = hi > lo ? hi : lo;
    return Lanes<8>::Max(m);
  }
  static inline ONYX_AVX512 float Sum(const F16& v) {
    const F8 s = Low(v) + High(v);
    return Lanes<8>::Sum(s);
  }
};
#endif

template <typename F>
using LanesOf = Lanes<static_cast<int>(sizeof(F) / sizeof(float))>;

// LanesOf<F>::LoadTail as a value. Vectors cross the non-inlined Lanes
// functions by pointer and reference only: clang refuses a 512-bit vector
// passed by value into or out of a function whose own target lacks AVX-512
// (these bodies have none until they are inlined into their ISA wrapper).
template <typename F>
inline __attribute__((always_inline)) F Tail(const float* p, int64_t r, float fill) {
  F v;
  LanesOf<F>::LoadTail(p, r, fill, &v);
  return v;
}

// The loop bodies are always_inline so that each ISA wrapper below compiles
// them with its own target flags (GCC inlines baseline code into a wider
// target, never the other way round).
template <template <typename, typename> class Op, typename F, typename I>
inline __attribute__((always_inline)) void MapBody(const float* x, float* y, int64_t n) {
  constexpr int64_t W = sizeof(F) / sizeof(float);
  int64_t i = 0;
  for (; i + W <= n; i += W) {
    F v;
    std::memcpy(&v, x + i, sizeof(v));
    v = Op<F, I>::Apply(v);
    std::memcpy(y + i, &v, sizeof(v));
  }
  if (i < n) {
    // The tail goes through the same vector code so every element gets the
    // same rounding whatever its position.
    LanesOf<F>::StoreTail(y + i, Op<F, I>::Apply(Tail<F>(x + i, n - i, 0.f)), n - i);
  }
}

// y = Op(x + b), b optional: a bias activation's one pass.
template <template <typename, typename> class Op, typename F, typename I>
inline __attribute__((always_inline)) void MapBiasBody(const float* x, const float* b, float* y, int64_t n) {
  constexpr int64_t W = sizeof(F) / sizeof(float);
  int64_t i = 0;
  for (; i + W <= n; i += W) {
    F v;
    std::memcpy(&v, x + i, sizeof(v));
    if (b != nullptr) {
      F w;
      std::memcpy(&w, b + i, sizeof(w));
      v += w;
    }
    v = Op<F, I>::Apply(v);
    std::memcpy(y + i, &v, sizeof(v));
  }
  if (i < n) {
    F v = Tail<F>(x + i, n - i, 0.f);
    if (b != nullptr) v += Tail<F>(b + i, n - i, 0.f);
    LanesOf<F>::StoreTail(y + i, Op<F, I>::Apply(v), n - i);
  }
}

template <int kPow, typename F>
inline __attribute__((always_inline)) F SumTerm(F v, float mean) {
  if constexpr (kPow == 1) {
    return v;
  } else {
    const F d = v - mean;
    return Rounded(d * d);  // as Pow(d, 2) then ReduceMean: no FMA into the sum
  }
}

// Sum of (x[i] - mean)^kPow (kPow 1 or 2) in four vector partial sums: a
// serial sum's chain of dependent adds is 4x slower than its loads.
template <int kPow, typename F>
inline __attribute__((always_inline)) float SumBody(const float* x, int64_t n, float mean) {
  constexpr int64_t W = sizeof(F) / sizeof(float);
  auto term = [mean](F v) { return SumTerm<kPow, F>(v, mean); };
  F a0 = F{}, a1 = F{}, a2 = F{}, a3 = F{};
  int64_t i = 0;
  for (; i + 4 * W <= n; i += 4 * W) {
    F v0, v1, v2, v3;
    std::memcpy(&v0, x + i, sizeof(F));
    std::memcpy(&v1, x + i + W, sizeof(F));
    std::memcpy(&v2, x + i + 2 * W, sizeof(F));
    std::memcpy(&v3, x + i + 3 * W, sizeof(F));
    a0 += term(v0);
    a1 += term(v1);
    a2 += term(v2);
    a3 += term(v3);
  }
  for (; i + W <= n; i += W) {
    F v;
    std::memcpy(&v, x + i, sizeof(F));
    a0 += term(v);
  }
  if (i < n) {
    // Lanes past the end read as `mean`: their term is 0 either way.
    a1 += term(Tail<F>(x + i, n - i, kPow == 1 ? 0.f : mean));
  }
  return LanesOf<F>::Sum((a0 + a1) + (a2 + a3));
}

// y = (x - mean) op s * scale (+ bias), op dividing (kDivide: s is the
// standard deviation, as LayerNorm's Div) or multiplying (s its reciprocal),
// every step rounded as the separate Sub, Div or Mul, Mul and Add kernels do.
template <bool kDivide, typename F>
inline __attribute__((always_inline)) F NormalizeTerm(F v, float mean, float s, F g) {
  const F d = v - mean;
  return Rounded((kDivide ? d / s : d * s) * g);
}

template <bool kDivide, typename F>
inline __attribute__((always_inline)) void NormalizeBody(const float* x, float mean, float s, const float* scale,
                                                         const float* bias, float* y, int64_t n) {
  constexpr int64_t W = sizeof(F) / sizeof(float);
  int64_t i = 0;
  for (; i + W <= n; i += W) {
    F v, g;
    std::memcpy(&v, x + i, sizeof(F));
    std::memcpy(&g, scale + i, sizeof(F));
    v = NormalizeTerm<kDivide>(v, mean, s, g);
    if (bias != nullptr) {
      F b;
      std::memcpy(&b, bias + i, sizeof(F));
      v += b;
    }
    std::memcpy(y + i, &v, sizeof(F));
  }
  if (i < n) {
    const int64_t r = n - i;
    // Lanes past the end compute on fill values and are not stored.
    F v = NormalizeTerm<kDivide>(Tail<F>(x + i, r, mean), mean, s, Tail<F>(scale + i, r, 0.f));
    if (bias != nullptr) v += Tail<F>(bias + i, r, 0.f);
    LanesOf<F>::StoreTail(y + i, v, r);
  }
}

// exp() below this is under 1.7e-38: exp clamps it to the smallest normal
// float, and a softmax that then scales it by 1/sum makes a denormal, which
// slows every later FMA on it by ~100x (masked attention rows are full of
// them). Such terms are 0 at float precision next to the row's max term, 1.
constexpr float kExpFlush = -87.f;

// exp(v - shift), 0 below kExpFlush (and for a -inf fill's lanes).
template <typename F, typename I>
inline __attribute__((always_inline)) F ExpShifted(F v, float shift) {
  v = v - shift;
  return v < detail::Splat<F>(kExpFlush) ? F{} : detail::ExpNonPositiveT<F, I>(v);
}

// Sum of exp(x[i] - shift), also stored to y when kStore. The tail runs
// through the same vector code (lanes past the end read as -inf, so they
// add 0), every element rounded alike whatever its position.
template <typename F, typename I, bool kStore>
inline __attribute__((always_inline)) float ExpShiftSumBody(const float* x, float* y, int64_t n, float shift) {
  constexpr int64_t W = sizeof(F) / sizeof(float);
  F acc0 = F{}, acc1 = F{};
  int64_t i = 0;
  for (; i + 2 * W <= n; i += 2 * W) {
    F v0, v1;
    std::memcpy(&v0, x + i, sizeof(F));
    std::memcpy(&v1, x + i + W, sizeof(F));
    v0 = ExpShifted<F, I>(v0, shift);
    v1 = ExpShifted<F, I>(v1, shift);
    if (kStore) {
      std::memcpy(y + i, &v0, sizeof(F));
      std::memcpy(y + i + W, &v1, sizeof(F));
    }
    acc0 += v0;
    acc1 += v1;
  }
  if (i + W <= n) {
    F v;
    std::memcpy(&v, x + i, sizeof(F));
    v = ExpShifted<F, I>(v, shift);
    if (kStore) std::memcpy(y + i, &v, sizeof(F));
    acc0 += v;
    i += W;
  }
  if (i < n) {
    F v = ExpShifted<F, I>(Tail<F>(x + i, n - i, -std::numeric_limits<float>::infinity()), shift);
    if (kStore) LanesOf<F>::StoreTail(y + i, v, n - i);
    acc1 += v;
  }
  return LanesOf<F>::Sum(acc0 + acc1);
}

template <typename F>
inline __attribute__((always_inline)) float MaxBody(const float* x, int64_t n) {
  constexpr int64_t W = sizeof(F) / sizeof(float);
  // A leading NaN poisons the whole row, as in the scalar loop this replaced;
  // later NaNs never enter the lanes (v > m is false for them).
  if (n > 0 && std::isnan(x[0])) return x[0];
  const float lowest = -std::numeric_limits<float>::infinity();
  // Two chains of compares: one waits on the previous max's latency.
  F m0 = detail::Splat<F>(lowest), m1 = m0;
  int64_t i = 0;
  for (; i + 2 * W <= n; i += 2 * W) {
    F v0, v1;
    std::memcpy(&v0, x + i, sizeof(F));
    std::memcpy(&v1, x + i + W, sizeof(F));
    m0 = v0 > m0 ? v0 : m0;
    m1 = v1 > m1 ? v1 : m1;
  }
  if (i + W <= n) {
    F v;
    std::memcpy(&v, x + i, sizeof(F));
    m0 = v > m0 ? v : m0;
    i += W;
  }
  if (i < n) {
    const F v = Tail<F>(x + i, n - i, lowest);
    m1 = v > m1 ? v : m1;
  }
  return LanesOf<F>::Max(m0 > m1 ? m0 : m1);
}

// y = x * k (the tail masked).
template <typename F>
inline __attribute__((always_inline)) void ScaleBody(const float* x, float k, float* y, int64_t n) {
  constexpr int64_t W = sizeof(F) / sizeof(float);
  int64_t i = 0;
  for (; i + W <= n; i += W) {
    F v;
    std::memcpy(&v, x + i, sizeof(F));
    v *= k;
    std::memcpy(y + i, &v, sizeof(F));
  }
  if (i < n) LanesOf<F>::StoreTail(y + i, Tail<F>(x + i, n - i, 0.f) * k, n - i);
}

// y = x - k (the tail masked).
template <typename F>
inline __attribute__((always_inline)) void SubtractBody(const float* x, float k, float* y, int64_t n) {
  constexpr int64_t W = sizeof(F) / sizeof(float);
  int64_t i = 0;
  for (; i + W <= n; i += W) {
    F v;
    std::memcpy(&v, x + i, sizeof(F));
    v -= k;
    std::memcpy(y + i, &v, sizeof(F));
  }
  if (i < n) LanesOf<F>::StoreTail(y + i, Tail<F>(x + i, n - i, 0.f) - k, n - i);
}

template <typename F, typename I>
inline __attribute__((always_inline)) void SoftmaxBody(const float* x, float* y, int64_t n) {
  const float m = MaxBody<F>(x, n);
  const float inv = 1.f / ExpShiftSumBody<F, I, true>(x, y, n, m);
  ScaleBody<F>(y, inv, y, n);
}

// log softmax: x - (max + log(sum of exp(x - max))); x is read twice and
// never overwritten before the second read (y may equal x).
template <typename F, typename I>
inline __attribute__((always_inline)) void LogSoftmaxBody(const float* x, float* y, int64_t n) {
  const float m = MaxBody<F>(x, n);
  const float s = ExpShiftSumBody<F, I, false>(x, nullptr, n, m);
  SubtractBody<F>(x, m + std::log(s), y, n);
}

struct Table {
  void (*exp)(const float*, float*, int64_t);
  void (*tanh)(const float*, float*, int64_t);
  void (*erf)(const float*, float*, int64_t);
  void (*gelu)(const float*, float*, int64_t);
  float (*exp_shift_sum)(const float*, float*, int64_t, float);
  float (*max)(const float*, int64_t);
  void (*bias_gelu)(const float*, const float*, float*, int64_t);
  void (*fast_gelu)(const float*, const float*, float*, int64_t);
  float (*sum)(const float*, int64_t, float);
  float (*sum_sq_dev)(const float*, int64_t, float);
  void (*normalize)(const float*, float, float, const float*, const float*, float*, int64_t);
  void (*normalize_div)(const float*, float, float, const float*, const float*, float*, int64_t);
  void (*softmax)(const float*, float*, int64_t);
  void (*log_softmax)(const float*, float*, int64_t);
};

#define ONYX_DEFINE_ISA(NAME, ATTR, F, I)                                                                     \
  ATTR void Exp##NAME(const float* x, float* y, int64_t n) { MapBody<ExpOp, F, I>(x, y, n); }               \
  ATTR void Tanh##NAME(const float* x, float* y, int64_t n) { MapBody<TanhOp, F, I>(x, y, n); }             \
  ATTR void Erf##NAME(const float* x, float* y, int64_t n) { MapBody<ErfOp, F, I>(x, y, n); }               \
  ATTR void Gelu##NAME(const float* x, float* y, int64_t n) { MapBody<GeluOp, F, I>(x, y, n); }             \
  ATTR float ExpShiftSum##NAME(const float* x, float* y, int64_t n, float s) {                              \
    return ExpShiftSumBody<F, I, true>(x, y, n, s);                                                            \
  }                                                                                                         \
  ATTR float Max##NAME(const float* x, int64_t n) { return MaxBody<F>(x, n); }                              \
  ATTR void BiasGelu##NAME(const float* x, const float* b, float* y, int64_t n) {                           \
    MapBiasBody<GeluOp, F, I>(x, b, y, n);                                                                  \
  }                                                                                                         \
  ATTR void FastGelu##NAME(const float* x, const float* b, float* y, int64_t n) {                           \
    MapBiasBody<FastGeluOp, F, I>(x, b, y, n);                                                              \
  }                                                                                                         \
  ATTR float Sum##NAME(const float* x, int64_t n, float m) { return SumBody<1, F>(x, n, m); }               \
  ATTR float SumSqDev##NAME(const float* x, int64_t n, float m) { return SumBody<2, F>(x, n, m); }          \
  ATTR void Normalize##NAME(const float* x, float m, float inv, const float* g, const float* b, float* y,    \
                            int64_t n) {                                                                    \
    NormalizeBody<false, F>(x, m, inv, g, b, y, n);                                                         \
  }                                                                                                         \
  ATTR void NormalizeDiv##NAME(const float* x, float m, float sd, const float* g, const float* b, float* y,  \
                               int64_t n) {                                                                 \
    NormalizeBody<true, F>(x, m, sd, g, b, y, n);                                                           \
  }                                                                                                         \
  ATTR void Softmax##NAME(const float* x, float* y, int64_t n) { SoftmaxBody<F, I>(x, y, n); }              \
  ATTR void LogSoftmax##NAME(const float* x, float* y, int64_t n) { LogSoftmaxBody<F, I>(x, y, n); }        \
  const Table k##NAME##Table = {Exp##NAME,         Tanh##NAME,     Erf##NAME,       Gelu##NAME,             \
                                ExpShiftSum##NAME, Max##NAME,      BiasGelu##NAME,  FastGelu##NAME,         \
                                Sum##NAME,         SumSqDev##NAME, Normalize##NAME, NormalizeDiv##NAME,     \
                                Softmax##NAME,     LogSoftmax##NAME};

// Baseline x86-64 has SSE2: 4 lanes. AVX2 gets 8, AVX-512 16.
ONYX_DEFINE_ISA(Base, , F4, I4)
#if defined(__x86_64__) || defined(__i386__)
ONYX_DEFINE_ISA(Avx2, ONYX_AVX2, F8, I8)
ONYX_DEFINE_ISA(Avx512, ONYX_AVX512, F16, I16)
#endif

Isa HardwareIsa() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512vl"))
    return Isa::kAvx512;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return Isa::kAvx2;
#endif
  return Isa::kBaseline;
}

// ONYX_CPU_ISA, read once: the path a user (or CI, to test a narrower path
// on a wider machine) asks for. `valid` is false for a value we do not know.
struct IsaRequest {
  bool set = false, valid = true;
  Isa isa = Isa::kAvx512;
  std::string text;
};

const IsaRequest& Requested() {
  static const IsaRequest req = [] {
    IsaRequest r;
    const char* env = std::getenv("ONYX_CPU_ISA");
    if (env == nullptr || *env == '\0') return r;
    r.set = true;
    r.text = env;
    if (r.text == "avx512") r.isa = Isa::kAvx512;
    else if (r.text == "avx2") r.isa = Isa::kAvx2;
    else if (r.text == "baseline") r.isa = Isa::kBaseline;
    else r.valid = false;
    return r;
  }();
  return req;
}

Isa DetectIsa() {
  const Isa hw = HardwareIsa();
  const IsaRequest& req = Requested();
  if (!req.set || !req.valid) return hw;
  return static_cast<int>(req.isa) < static_cast<int>(hw) ? req.isa : hw;
}

const Table* TableFor(Isa isa) {
#if defined(__x86_64__) || defined(__i386__)
  if (isa == Isa::kAvx512) return &kAvx512Table;
  if (isa == Isa::kAvx2) return &kAvx2Table;
#endif
  return &kBaseTable;
}

std::atomic<const Table*>& Active() {
  static std::atomic<const Table*> active{TableFor(DetectIsa())};
  return active;
}

const Table& T() { return *Active().load(std::memory_order_relaxed); }

}  // namespace

Isa BestIsa() {
  static const Isa best = DetectIsa();
  return best;
}

const char* IsaName(Isa isa) {
  switch (isa) {
    case Isa::kAvx512: return "avx512";
    case Isa::kAvx2: return "avx2";
    default: return "baseline";
  }
}

std::string IsaRequestError() {
  const IsaRequest& req = Requested();
  if (req.valid) return "";
  return "environment variable ONYX_CPU_ISA='" + req.text + "' is not a code path: expected avx512, avx2 or baseline";
}

Isa SetIsaForTesting(Isa isa) {
  if (static_cast<int>(isa) > static_cast<int>(BestIsa())) isa = BestIsa();
  Active().store(TableFor(isa));
  return isa;
}

void ExpArray(const float* x, float* y, int64_t n) { T().exp(x, y, n); }
void TanhArray(const float* x, float* y, int64_t n) { T().tanh(x, y, n); }
void ErfArray(const float* x, float* y, int64_t n) { T().erf(x, y, n); }
void GeluArray(const float* x, float* y, int64_t n) { T().gelu(x, y, n); }
float ExpShiftSumArray(const float* x, float* y, int64_t n, float shift) {
  return T().exp_shift_sum(x, y, n, shift);
}
float MaxArray(const float* x, int64_t n) { return T().max(x, n); }
void BiasGeluArray(const float* x, const float* b, float* y, int64_t n) { T().bias_gelu(x, b, y, n); }
void FastGeluArray(const float* x, const float* b, float* y, int64_t n) { T().fast_gelu(x, b, y, n); }
float SumArray(const float* x, int64_t n) { return T().sum(x, n, 0.f); }
float SumSquaredDevArray(const float* x, int64_t n, float mean) { return T().sum_sq_dev(x, n, mean); }
void SoftmaxArray(const float* x, float* y, int64_t n) { T().softmax(x, y, n); }
void LogSoftmaxArray(const float* x, float* y, int64_t n) { T().log_softmax(x, y, n); }
void NormalizeArray(const float* x, float mean, float inv, const float* scale, const float* bias, float* y,
                    int64_t n) {
  T().normalize(x, mean, inv, scale, bias, y, n);
}
void NormalizeDivArray(const float* x, float mean, float std_dev, const float* scale, const float* bias, float* y,
                       int64_t n) {
  T().normalize_div(x, mean, std_dev, scale, bias, y, n);
}
RowNorm NormStats(const float* x, int64_t n, float epsilon, bool rms) {
  const float mean = rms ? 0.f : SumArray(x, n) / static_cast<float>(n);
  return {mean, std::sqrt(SumSquaredDevArray(x, n, mean) / static_cast<float>(n) + epsilon)};
}
void NormalizeRow(const float* x, RowNorm st, bool rms, const float* scale, const float* bias, float* y, int64_t n) {
  if (rms) NormalizeArray(x, st.mean, 1.f / st.sd, scale, bias, y, n);
  else NormalizeDivArray(x, st.mean, st.sd, scale, bias, y, n);
}

}  // namespace fastmath
}  // namespace onyx

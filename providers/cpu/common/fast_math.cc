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
template <typename F, typename I>
struct GeluOp {
  static inline __attribute__((always_inline)) F Apply(F v) { return 0.5f * v * (1.f + detail::ErfT<F, I>(v * 0.70710678118654752440f)); }
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
    F v = F{};
    std::memcpy(&v, x + i, static_cast<size_t>(n - i) * sizeof(float));
    v = Op<F, I>::Apply(v);
    std::memcpy(y + i, &v, static_cast<size_t>(n - i) * sizeof(float));
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
    F v = F{}, w = F{};
    std::memcpy(&v, x + i, static_cast<size_t>(n - i) * sizeof(float));
    if (b != nullptr) std::memcpy(&w, b + i, static_cast<size_t>(n - i) * sizeof(float));
    v = Op<F, I>::Apply(v + w);
    std::memcpy(y + i, &v, static_cast<size_t>(n - i) * sizeof(float));
  }
}

// Sum of (x[i] - mean)^kPow (kPow 1 or 2) in four vector partial sums: a
// serial sum's chain of dependent adds is 4x slower than its loads.
template <int kPow, typename F>
inline __attribute__((always_inline)) float SumBody(const float* x, int64_t n, float mean) {
  constexpr int64_t W = sizeof(F) / sizeof(float);
  auto term = [mean](F v) {
    if constexpr (kPow == 1) {
      return v;
    } else {
      const F d = v - mean;
      return d * d;
    }
  };
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
  a0 = (a0 + a1) + (a2 + a3);
  float s = 0.f;
  for (int64_t k = 0; k < W; ++k) s += a0[k];
  for (; i < n; ++i) {
    const float d = kPow == 1 ? x[i] : x[i] - mean;
    s += kPow == 1 ? d : d * d;
  }
  return s;
}

template <typename F>
inline __attribute__((always_inline)) void NormalizeBody(const float* x, float mean, float inv, const float* scale,
                                                         const float* bias, float* y, int64_t n) {
  constexpr int64_t W = sizeof(F) / sizeof(float);
  int64_t i = 0;
  for (; i + W <= n; i += W) {
    F v, g;
    std::memcpy(&v, x + i, sizeof(F));
    std::memcpy(&g, scale + i, sizeof(F));
    v = (v - mean) * inv * g;
    if (bias != nullptr) {
      F b;
      std::memcpy(&b, bias + i, sizeof(F));
      v += b;
    }
    std::memcpy(y + i, &v, sizeof(F));
  }
  for (; i < n; ++i) y[i] = (x[i] - mean) * inv * scale[i] + (bias != nullptr ? bias[i] : 0.f);
}

// exp() below this is under 1.7e-38: exp clamps it to the smallest normal
// float, and a softmax that then scales it by 1/sum makes a denormal, which
// slows every later FMA on it by ~100x (masked attention rows are full of
// them). Such terms are 0 at float precision next to the row's max term, 1.
constexpr float kExpFlush = -87.f;

template <typename F, typename I>
inline __attribute__((always_inline)) float ExpShiftSumBody(const float* x, float* y, int64_t n, float shift) {
  constexpr int64_t W = sizeof(F) / sizeof(float);
  F acc = F{};
  int64_t i = 0;
  for (; i + W <= n; i += W) {
    F v;
    std::memcpy(&v, x + i, sizeof(v));
    v = v - shift;
    v = v < detail::Splat<F>(kExpFlush) ? F{} : detail::ExpNonPositiveT<F, I>(v);
    std::memcpy(y + i, &v, sizeof(v));
    acc += v;
  }
  float s = 0.f;
  for (int64_t k = 0; k < W; ++k) s += acc[k];
  for (; i < n; ++i) {
    const float v = x[i] - shift;
    y[i] = v < kExpFlush ? 0.f : detail::ExpNonPositiveT<float, int32_t>(v);
    s += y[i];
  }
  return s;
}

template <typename F>
inline __attribute__((always_inline)) float MaxBody(const float* x, int64_t n) {
  constexpr int64_t W = sizeof(F) / sizeof(float);
  // A leading NaN poisons the whole row, as in the scalar loop this replaced.
  if (n > 0 && std::isnan(x[0])) return x[0];
  const float lowest = -std::numeric_limits<float>::infinity();
  F m = detail::Splat<F>(lowest);
  int64_t i = 0;
  for (; i + W <= n; i += W) {
    F v;
    std::memcpy(&v, x + i, sizeof(v));
    m = v > m ? v : m;
  }
  float r = lowest;
  for (int64_t k = 0; k < W; ++k) r = m[k] > r ? m[k] : r;
  for (; i < n; ++i) r = x[i] > r ? x[i] : r;
  return r;
}

template <typename F, typename I>
inline __attribute__((always_inline)) void SoftmaxBody(const float* x, float* y, int64_t n) {
  constexpr int64_t W = sizeof(F) / sizeof(float);
  const float m = MaxBody<F>(x, n);
  const float inv = 1.f / ExpShiftSumBody<F, I>(x, y, n, m);
  int64_t i = 0;
  for (; i + W <= n; i += W) {
    F v;
    std::memcpy(&v, y + i, sizeof(F));
    v *= inv;
    std::memcpy(y + i, &v, sizeof(F));
  }
  for (; i < n; ++i) y[i] *= inv;
}

#define ONYX_AVX2 __attribute__((target("avx2,fma")))
#define ONYX_AVX512 __attribute__((target("avx512f,avx512dq,avx512bw,avx512vl,avx2,fma")))

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
  void (*softmax)(const float*, float*, int64_t);
};

#define ONYX_DEFINE_ISA(NAME, ATTR, F, I)                                                                     \
  ATTR void Exp##NAME(const float* x, float* y, int64_t n) { MapBody<ExpOp, F, I>(x, y, n); }               \
  ATTR void Tanh##NAME(const float* x, float* y, int64_t n) { MapBody<TanhOp, F, I>(x, y, n); }             \
  ATTR void Erf##NAME(const float* x, float* y, int64_t n) { MapBody<ErfOp, F, I>(x, y, n); }               \
  ATTR void Gelu##NAME(const float* x, float* y, int64_t n) { MapBody<GeluOp, F, I>(x, y, n); }             \
  ATTR float ExpShiftSum##NAME(const float* x, float* y, int64_t n, float s) {                              \
    return ExpShiftSumBody<F, I>(x, y, n, s);                                                               \
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
    NormalizeBody<F>(x, m, inv, g, b, y, n);                                                                \
  }                                                                                                         \
  ATTR void Softmax##NAME(const float* x, float* y, int64_t n) { SoftmaxBody<F, I>(x, y, n); }              \
  const Table k##NAME##Table = {Exp##NAME,         Tanh##NAME,     Erf##NAME,      Gelu##NAME,              \
                                ExpShiftSum##NAME, Max##NAME,      BiasGelu##NAME, FastGelu##NAME,          \
                                Sum##NAME,         SumSqDev##NAME, Normalize##NAME, Softmax##NAME};

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
void NormalizeArray(const float* x, float mean, float inv, const float* scale, const float* bias, float* y,
                    int64_t n) {
  T().normalize(x, mean, inv, scale, bias, y, n);
}

}  // namespace fastmath
}  // namespace onyx

// Branch-free float32 exp/tanh/erf written so the compiler can vectorize the
// loops that call them (libm's scalar calls cannot be). Accuracy: exp ~2 ulp
// over [-87, 88]; tanh and erf within 3e-7 absolute. Used for float tensors only;
// double keeps libm.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace onyx {
namespace fastmath {

inline float Exp(float x) {
  // Clamped so results stay normal floats: denormal arithmetic is ~100x slower,
  // and e^-87.3 is already below what any caller can distinguish from 0.
  x = x < -87.33f ? -87.33f : x;
  x = x > 89.f ? 89.f : x;
  float t = x * 1.44269504088896341f;
  int32_t n = static_cast<int32_t>(t + (t >= 0.f ? 0.5f : -0.5f));
  float nf = static_cast<float>(n);
  // Cody-Waite reduction: r = x - n*ln2 in two steps to keep r exact.
  float r = x - nf * 0.693359375f;
  r = r + nf * 2.12194440e-4f;
  float p = 1.98412698e-4f;  // 1/7!
  p = p * r + 1.38888889e-3f;
  p = p * r + 8.33333333e-3f;
  p = p * r + 4.16666667e-2f;
  p = p * r + 1.66666667e-1f;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  // 2^n as two normal factors, so overflow gives inf and underflow denormals/0.
  int32_t n1 = n / 2, n2 = n - n1;
  int32_t b1 = (n1 + 127) << 23, b2 = (n2 + 127) << 23;
  float s1, s2;
  std::memcpy(&s1, &b1, 4);
  std::memcpy(&s2, &b2, 4);
  return p * s1 * s2;
}

inline float Tanh(float x) {
  float ax = x < 0.f ? -x : x;
  ax = ax > 9.1f ? 9.1f : ax;  // tanh(9.1) rounds to 1 in float
  // Small |x|: the odd Taylor series avoids the cancellation in 1 - 2/(e^2x + 1).
  float x2 = ax * ax;
  float small = ax * (1.f + x2 * (-0.333333333f + x2 * (0.133333333f + x2 * (-0.0539682540f + x2 * 0.0218694885f))));
  float e = Exp(2.f * ax);
  float big = 1.f - 2.f / (e + 1.f);
  float r = ax < 0.2f ? small : big;
  return x < 0.f ? -r : r;
}

inline float Erf(float x) {
  float ax = x < 0.f ? -x : x;
  // Small |x|: Maclaurin series (relative accuracy near 0).
  float x2 = ax * ax;
  float small = ax * (1.12837917f + x2 * (-0.376126389f + x2 * (0.112837917f + x2 * (-0.0268661706f + x2 * 0.00522397762f))));
  // Otherwise erf = 1 - erfc with erfc(z) ~ t*exp(-z^2 + P(t)) (Numerical
  // Recipes' erfcc form, fractional error < 1.2e-7).
  // erf(4) is 1 in float; clamping keeps exp() away from denormals.
  float axc = ax > 4.f ? 4.f : ax;
  float t = 1.f / (1.f + 0.5f * axc);
  float poly = -1.26551223f + t * (1.00002368f + t * (0.37409196f + t * (0.09678418f + t * (-0.18628806f +
               t * (0.27886807f + t * (-1.13520398f + t * (1.48851587f + t * (-0.82215223f + t * 0.17087277f))))))));
  float big = 1.f - t * Exp(-axc * axc + poly);
  float r = ax < 0.25f ? small : big;
  return x < 0.f ? -r : r;
}

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

// Narrow float formats (float8 and float4e2m1): one encoder and one decoder
// for all of them, shared by Cast and the quantization kernels.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

namespace onyx {
namespace minifloat {

// Narrow float formats (float8 and float4e2m1). Each is described by its
// mantissa width, exponent bias, largest finite magnitude code and how it spells
// NaN and infinity; one encoder and one decoder serve them all.

enum class Special { kFN, kFNUZ, kIEEE, kNone };  // e4m3fn, *fnuz, e5m2, e2m1

template <int kMantissa, int kExponent, int kBias, uint32_t kMaxCode, Special kSpecial>
struct MiniFloat {
  static constexpr int kMant = kMantissa;
  static constexpr int kExp = kExponent;
  static constexpr int kBits = 1 + kExponent + kMantissa;
  static constexpr uint32_t kSignBit = 1u << (kBits - 1);
  static constexpr int kBiasV = kBias;
  static constexpr uint32_t kMax = kMaxCode;
  static constexpr Special kSpec = kSpecial;
};

using E4M3FN = MiniFloat<3, 4, 7, 0x7E, Special::kFN>;        // max 448, NaN S.1111.111
using E4M3FNUZ = MiniFloat<3, 4, 8, 0x7F, Special::kFNUZ>;    // max 240, NaN 0x80
using E5M2 = MiniFloat<2, 5, 15, 0x7B, Special::kIEEE>;       // max 57344, inf 0x7C
using E5M2FNUZ = MiniFloat<2, 5, 16, 0x7F, Special::kFNUZ>;   // max 57344, NaN 0x80
using E2M1 = MiniFloat<1, 2, 1, 0x7, Special::kNone>;         // max 6, no NaN or inf

// Round-to-nearest-even encoding of `f`. With `saturate`, out-of-range values
// and infinities become the largest finite value of their sign; without it they
// become infinity (e5m2) or NaN. e2m1 has neither, so it always saturates.
template <typename Fmt>
inline uint8_t EncodeMini(float f, bool saturate) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  // The sign by arithmetic, not a branch: signs of real data are random.
  const uint32_t sign_bits = (u >> 31) << (Fmt::kBits - 1);
  u &= 0x7fffffffu;
  if (u > 0x7f800000u) {
    switch (Fmt::kSpec) {
      case Special::kFN: return static_cast<uint8_t>(sign_bits | 0x7F);
      case Special::kIEEE: return static_cast<uint8_t>(sign_bits | 0x7E);
      case Special::kFNUZ: return 0x80;
      // e2m1 has no NaN. onnx's reference (ml_dtypes) gives the zero of the
      // opposite sign, which is what onnx's Cast tests expect; onnx's float4
      // notes say 6 instead. Follow the tests.
      case Special::kNone: return static_cast<uint8_t>(sign_bits ^ 0x8);
    }
  }
  constexpr int kMinExp = 1 - Fmt::kBiasV;     // exponent of the smallest normal
  constexpr int kDrop = 23 - Fmt::kMant;       // float mantissa bits the format lacks
  constexpr uint32_t kMinNormal = static_cast<uint32_t>(kMinExp + 127) << 23;
  // Normal range: round the float's bits to the format's mantissa width, ties
  // to even; a carry moves into the exponent by itself. Infinity and huge
  // values land above kMax.
  const uint32_t r = u + ((1u << (kDrop - 1)) - 1u) + ((u >> kDrop) & 1u);
  const uint32_t normal = (r >> kDrop) - (static_cast<uint32_t>(127 - Fmt::kBiasV) << Fmt::kMant);
  // Below it: adding 2^(kMinExp + kDrop) puts the format's subnormal spacing
  // at the float's last bit, so the float addition itself rounds to nearest
  // even (the default rounding mode, which the runtime assumes); what is left above the constant counts subnormal units (2^kMant
  // being the smallest normal).
  constexpr uint32_t kMagicBits = static_cast<uint32_t>(kMinExp + kDrop + 127) << 23;
  float a, magic, sum;
  std::memcpy(&a, &u, 4);
  std::memcpy(&magic, &kMagicBits, 4);
  sum = a + magic;
  uint32_t sum_bits;
  std::memcpy(&sum_bits, &sum, 4);
  // Both are computed and one is picked by a mask, not a branch: inputs fall
  // on either side unpredictably (for e2m1, every |x| < 1).
  const uint32_t sub_mask = 0u - static_cast<uint32_t>(u < kMinNormal);
  uint32_t mag = ((sum_bits - kMagicBits) & sub_mask) | (normal & ~sub_mask);
  if (mag > Fmt::kMax) {
    if (saturate || Fmt::kSpec == Special::kNone) {
      mag = Fmt::kMax;
    } else {
      switch (Fmt::kSpec) {
        case Special::kFN: return static_cast<uint8_t>(sign_bits | 0x7F);
        case Special::kIEEE: return static_cast<uint8_t>(sign_bits | 0x7C);
        default: return 0x80;
      }
    }
  }
  if (mag == 0 && Fmt::kSpec == Special::kFNUZ) return 0;  // no negative zero
  return static_cast<uint8_t>(sign_bits | mag);
}

template <typename Fmt>
inline float DecodeMiniSlow(uint32_t code) {
  const bool neg = (code & Fmt::kSignBit) != 0;
  const uint32_t mag = code & (Fmt::kSignBit - 1u);
  const uint32_t exp_mask = (1u << Fmt::kExp) - 1u;
  const uint32_t be = (mag >> Fmt::kMant) & exp_mask;
  const uint32_t m = mag & ((1u << Fmt::kMant) - 1u);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  switch (Fmt::kSpec) {
    case Special::kFNUZ:
      if (code == 0x80) return -nan;  // the sign bit is set, and onnx's reference keeps it
      break;
    case Special::kFN:
      if (mag == 0x7F) return neg ? -nan : nan;
      break;
    case Special::kIEEE:
      if (be == exp_mask) {
        if (m != 0) return neg ? -nan : nan;
        return neg ? -std::numeric_limits<float>::infinity() : std::numeric_limits<float>::infinity();
      }
      break;
    case Special::kNone:
      break;
  }
  float v = be == 0 ? std::ldexp(static_cast<float>(m), 1 - Fmt::kBiasV - Fmt::kMant)
                    : std::ldexp(static_cast<float>((1u << Fmt::kMant) | m), static_cast<int>(be) - Fmt::kBiasV - Fmt::kMant);
  return neg ? -v : v;
}

// Every code of these formats is exactly a float, so decoding is a table.
template <typename Fmt>
struct MiniTable {
  float v[1u << Fmt::kBits];
  MiniTable() {
    for (uint32_t c = 0; c < (1u << Fmt::kBits); ++c) v[c] = DecodeMiniSlow<Fmt>(c);
  }
};

template <typename Fmt>
inline float DecodeMini(uint8_t code) {
  static const MiniTable<Fmt> table;
  return table.v[code];
}

}  // namespace minifloat
}  // namespace onyx

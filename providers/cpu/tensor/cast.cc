#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>

#include "providers/cpu/common/broadcast.h"
#include "providers/cpu/common/dispatch.h"
#include "providers/cpu/common/float_to_int.h"
#include "providers/cpu/common/narrow_float.h"
#include "providers/kernel.h"

namespace onyx {

namespace {

// Narrow float formats (float8 and float4e2m1): providers/cpu/common/narrow_float.h.
using minifloat::DecodeMini;
using minifloat::E2M1;
using minifloat::E4M3FN;
using minifloat::E4M3FNUZ;
using minifloat::E5M2;
using minifloat::E5M2FNUZ;
using minifloat::EncodeMini;

// ---------------------------------------------------------------------------
// Element value types for the formats without an arithmetic type of their own.
// F8 and E8M0 elements are one byte each; IntN (int4, uint4, int2, uint2) and
// F4 are unpacked from (and packed into) several-per-byte storage, low bits first.

template <typename Fmt>
struct F8 {
  uint8_t bits;
};
template <int kBitsN, bool kSignedN>
struct IntN {
  static constexpr int kBits = kBitsN;
  static constexpr bool kSigned = kSignedN;
  using V = typename std::conditional<kSignedN, int8_t, uint8_t>::type;
  V v;  // int4 -8..7, uint4 0..15, int2 -2..1, uint2 0..3
};
using I4 = IntN<4, true>;
using U4 = IntN<4, false>;
using I2 = IntN<2, true>;
using U2 = IntN<2, false>;
struct F4 {
  uint8_t bits;  // e2m1 code in the low nibble
};
// float8e8m0: a biased exponent only. Encoding rounds by Cast's round_mode
// (up, down or nearest, onnx's Cast-24), so the mode is part of the type.
enum class E8M0Round { kUp, kDown, kNearest };
template <E8M0Round kRound>
struct E8M0 {
  uint8_t bits;
};

template <typename T> struct IsF8 : std::false_type {};
template <typename Fmt> struct IsF8<F8<Fmt>> : std::true_type {};
template <typename T> struct IsIntN : std::false_type {};
template <int B, bool S> struct IsIntN<IntN<B, S>> : std::true_type {};
template <typename T> struct IsE8M0 : std::false_type {};
template <E8M0Round R> struct IsE8M0<E8M0<R>> : std::true_type {};
// Bits per element of the packed formats; 0 for the others.
template <typename T> struct PackedBits { static constexpr int value = 0; };
template <int B, bool S> struct PackedBits<IntN<B, S>> { static constexpr int value = B; };
template <> struct PackedBits<F4> { static constexpr int value = 4; };
template <typename T>
constexpr bool kPacked = PackedBits<T>::value != 0;
template <typename T>
constexpr bool kNarrow = IsF8<T>::value || kPacked<T> || IsE8M0<T>::value;

// The value of a narrow element as an ordinary type: float for the float
// formats (exact), int8/uint8 for the packed integers.
template <typename Fmt>
float Widen(F8<Fmt> x) { return DecodeMini<Fmt>(x.bits); }
inline float Widen(F4 x) { return DecodeMini<E2M1>(x.bits); }
template <int B, bool S>
typename IntN<B, S>::V Widen(IntN<B, S> x) { return x.v; }
template <E8M0Round R>
float Widen(E8M0<R> x) {
  return x.bits == 0xFF ? std::numeric_limits<float>::quiet_NaN() : std::ldexp(1.0f, static_cast<int>(x.bits) - 127);
}

// float -> float8e8m0 as onnx's reference does it: the float's exponent field,
// rounded up when bits below it are set (up), or on guard and round/sticky/lsb
// (nearest); the sign is dropped; NaN and infinity give 0xFF (NaN); with
// saturate, rounding never carries the largest exponent into NaN.
template <E8M0Round R>
uint8_t EncodeE8M0(float f, bool saturate) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  uint32_t e = (u >> 23) & 0xFFu;
  if (e == 0xFFu) return 0xFF;
  bool up = false;
  if (R == E8M0Round::kUp) {
    up = (u & 0x7FFFFFu) != 0;
  } else if (R == E8M0Round::kNearest) {
    const bool g = (u & 0x400000u) != 0, r = (u & 0x200000u) != 0, s = (u & 0x1FFFFFu) != 0;
    up = g && (r || s || e > 0);
  }
  if (up && !(saturate && e == 0xFEu)) ++e;
  return static_cast<uint8_t>(e);
}

template <typename T>
constexpr bool kFloating = std::is_floating_point<T>::value || std::is_same<T, Float16>::value ||
                           std::is_same<T, BFloat16>::value;

// float16 straight from double (one rounding, as numpy does); going through
// float first rounds twice and can land one unit off.
uint16_t HalfFromDouble(double d) {
  uint64_t x;
  std::memcpy(&x, &d, 8);
  const uint16_t sign = static_cast<uint16_t>((x >> 48) & 0x8000u);
  uint64_t mant = x & 0xfffffffffffffull;
  const int exp = static_cast<int>((x >> 52) & 0x7ff);
  if (exp == 0x7ff) return static_cast<uint16_t>(sign | 0x7c00u | (mant ? 0x200u : 0u));
  const int e = exp - 1023 + 15;
  if (e >= 0x1f) return static_cast<uint16_t>(sign | 0x7c00u);
  if (e <= 0) {
    if (e < -10) return sign;  // below half the smallest subnormal
    mant |= 1ull << 52;
    const int shift = 43 - e;
    uint64_t h = mant >> shift;
    const uint64_t rem = mant & ((1ull << shift) - 1ull);
    const uint64_t mid = 1ull << (shift - 1);
    if (rem > mid || (rem == mid && (h & 1u))) ++h;
    return static_cast<uint16_t>(sign | h);
  }
  uint64_t h = (static_cast<uint64_t>(e) << 10) | (mant >> 42);
  const uint64_t rem = mant & ((1ull << 42) - 1ull);
  const uint64_t mid = 1ull << 41;
  if (rem > mid || (rem == mid && (h & 1u))) ++h;  // a carry into the exponent is right
  return static_cast<uint16_t>(sign | h);
}

// Low kBits bits of the integer part of a value. Out of range is undefined in
// onnx; like onnx's reference (ml_dtypes, which goes through a 32-bit integer),
// NaN, infinities and magnitudes from 2^31 give 0.
template <int kBits, typename V>
uint8_t LowBits(V v) {
  constexpr uint64_t kMask = (1u << kBits) - 1u;
  if constexpr (kFloating<V>) {
    using C = typename CalcType<V>::type;
    const C c = static_cast<C>(v);
    if (!(std::fabs(c) < C(2147483648.0))) return 0;
    return static_cast<uint8_t>(static_cast<uint64_t>(static_cast<int64_t>(c)) & kMask);
  } else {
    return static_cast<uint8_t>(static_cast<uint64_t>(v) & kMask);
  }
}

template <typename T> struct F8Format;
template <typename Fmt> struct F8Format<F8<Fmt>> { using type = Fmt; };
template <typename T> struct E8M0RoundOf;
template <E8M0Round R> struct E8M0RoundOf<E8M0<R>> { static constexpr E8M0Round value = R; };

// Converts a value of an ordinary type V (never a narrow one) to D.
template <typename D, typename V>
D Narrow(V v, bool saturate) {
  if constexpr (std::is_same<D, V>::value) {
    return v;
  } else if constexpr (IsF8<D>::value || std::is_same<D, F4>::value) {
    // onnx's reference (ml_dtypes) converts double and integers through float
    // first; integers big enough to round there are out of range anyway.
    float f;
    if constexpr (std::is_same<V, bool>::value)
      f = v ? 1.f : 0.f;
    else
      f = static_cast<float>(static_cast<typename CalcType<V>::type>(v));
    if constexpr (std::is_same<D, F4>::value)
      return F4{EncodeMini<E2M1>(f, true)};
    else
      return D{EncodeMini<typename F8Format<D>::type>(f, saturate)};
  } else if constexpr (IsE8M0<D>::value) {
    float f;
    if constexpr (std::is_same<V, bool>::value)
      f = v ? 1.f : 0.f;
    else
      f = static_cast<float>(static_cast<typename CalcType<V>::type>(v));
    return D{EncodeE8M0<E8M0RoundOf<D>::value>(f, saturate)};
  } else if constexpr (IsIntN<D>::value) {
    const int n = LowBits<D::kBits>(v);
    constexpr int kHalf = 1 << (D::kBits - 1);
    return D{static_cast<typename D::V>(D::kSigned && n >= kHalf ? n - 2 * kHalf : n)};
  } else if constexpr (std::is_same<D, bool>::value) {
    using CV = typename CalcType<V>::type;
    return static_cast<CV>(v) != CV(0);
  } else if constexpr (std::is_same<D, Float16>::value && std::is_same<V, double>::value) {
    Float16 h;
    h.bits = HalfFromDouble(v);
    return h;
  } else if constexpr (std::is_same<V, bool>::value) {
    return static_cast<D>(static_cast<typename CalcType<D>::type>(v ? 1 : 0));
  } else {
    using CV = typename CalcType<V>::type;
    using CD = typename CalcType<D>::type;
    if constexpr (std::is_floating_point<CV>::value && std::is_integral<CD>::value)
      return static_cast<D>(FloatToInt<CD>(static_cast<CV>(v)));  // NaN, inf, out of range: defined
    else
      return static_cast<D>(static_cast<CD>(static_cast<CV>(v)));
  }
}

template <typename T> struct IsSignedInt : std::is_signed<T> {};
template <int B, bool S> struct IsSignedInt<IntN<B, S>> : std::integral_constant<bool, S> {};

template <typename T>
constexpr bool kIntegerDest = (std::is_integral<T>::value && !std::is_same<T, bool>::value) || IsIntN<T>::value;

// Any source element to D: narrow sources are widened first (exactly).
template <typename D, typename S>
D Convert(S s, bool saturate) {
  if constexpr (kNarrow<S>) {
    const auto w = Widen(s);
    if constexpr (std::is_same<decltype(w), const float>::value && kIntegerDest<D>) {
      // onnx leaves NaN and infinity to integer undefined. For these formats
      // follow onnx's reference (ml_dtypes): NaN gives 0 and an infinity the
      // integer's limit (packed integers take the low bits of int32's limit).
      if (std::isnan(w)) return Narrow<D>(0, saturate);
      if (std::isinf(w)) {
        using Lim = typename std::conditional<IsIntN<D>::value, int32_t, D>::type;
        return Narrow<D>(w > 0 ? std::numeric_limits<Lim>::max() : std::numeric_limits<Lim>::lowest(), saturate);
      }
    }
    return Narrow<D>(w, saturate);
  } else {
    return Narrow<D>(s, saturate);
  }
}

template <typename S>
S Load(const void* base, int64_t i) {
  if constexpr (kPacked<S>) {
    constexpr int kBits = PackedBits<S>::value, kPer = 8 / kBits;
    const uint8_t byte = static_cast<const uint8_t*>(base)[i / kPer];
    const uint8_t code = static_cast<uint8_t>((byte >> ((i % kPer) * kBits)) & ((1u << kBits) - 1u));
    if constexpr (IsIntN<S>::value) {
      constexpr int kHalf = 1 << (kBits - 1);
      return S{static_cast<typename S::V>(S::kSigned && code >= kHalf ? code - 2 * kHalf : code)};
    } else {
      return F4{code};
    }
  } else {
    return static_cast<const S*>(base)[i];
  }
}

// The packed code of an element (its low bits).
template <typename T>
uint8_t CodeOf(T x) {
  if constexpr (IsIntN<T>::value)
    return static_cast<uint8_t>(static_cast<uint8_t>(x.v) & ((1u << T::kBits) - 1u));
  else
    return x.bits;
}

template <typename T>
std::string ToText(T v) {
  if constexpr (kNarrow<T>) {
    return ToText(Widen(v));
  } else if constexpr (std::is_same<T, bool>::value) {
    return v ? "1" : "0";
  } else if constexpr (std::is_integral<T>::value) {
    return std::to_string(v);
  } else {
    // Shortest form that reads back to the same value, like onnxruntime.
    using C = typename CalcType<T>::type;
    C f = static_cast<C>(v);
    if (std::isnan(f)) return "NaN";
    if (std::isinf(f)) return f < 0 ? "-INF" : "INF";
    char buf[64];
    std::snprintf(buf, sizeof(buf), "%.*g", std::is_same<C, double>::value ? 17 : 9, static_cast<double>(f));
    return buf;
  }
}

template <typename T>
bool FromText(const std::string& s, bool saturate, T* out) {
  const char* p = s.c_str();
  char* end = nullptr;
  errno = 0;
  if constexpr (kIntegerDest<T>) {
    if constexpr (IsSignedInt<T>::value)
      *out = Narrow<T>(static_cast<int64_t>(std::strtoll(p, &end, 10)), saturate);
    else
      *out = Narrow<T>(static_cast<uint64_t>(std::strtoull(p, &end, 10)), saturate);
  } else {
    // strtod reads "NaN", "INF", "-inf" and friends.
    *out = Narrow<T>(std::strtod(p, &end), saturate);
  }
  return end != p && *end == '\0';
}

template <typename S, typename D>
Status CastLoop(const void* src_raw, void* dst_raw, int64_t n, bool saturate, ElemType to, ThreadPool* pool) {
  if constexpr (std::is_same<D, std::string>::value) {
    auto* dst = static_cast<std::string*>(dst_raw);
    for (int64_t i = 0; i < n; ++i) {
      if constexpr (std::is_same<S, std::string>::value)
        dst[i] = static_cast<const std::string*>(src_raw)[i];
      else
        dst[i] = ToText(Load<S>(src_raw, i));
    }
  } else if constexpr (std::is_same<S, std::string>::value) {
    const auto* src = static_cast<const std::string*>(src_raw);
    for (int64_t i = 0; i < n; ++i) {
      D v;
      if (!FromText(src[i], saturate, &v))
        return MakeError(ErrorCode::kInvalidArgument, "Cast: input string '", src[i], "' at index ", i,
                         " is not a number of type ", ElemTypeName(to));
      if constexpr (kPacked<D>) {
        constexpr int kBits = PackedBits<D>::value, kPer = 8 / kBits;
        auto* dst = static_cast<uint8_t*>(dst_raw);
        const int shift = static_cast<int>(i % kPer) * kBits;
        if (shift == 0) dst[i / kPer] = 0;
        dst[i / kPer] = static_cast<uint8_t>(dst[i / kPer] | (CodeOf(v) << shift));
      } else {
        static_cast<D*>(dst_raw)[i] = v;
      }
    }
  } else if constexpr (kPacked<D>) {
    // Whole output bytes per task, so no two threads write the same byte; the
    // unused high bits of the last byte are zero.
    constexpr int kBits = PackedBits<D>::value, kPer = 8 / kBits;
    auto* dst = static_cast<uint8_t*>(dst_raw);
    ThreadPool::For(pool, (n + kPer - 1) / kPer, 1 << 15, [&](int64_t b, int64_t e) {
      for (int64_t j = b; j < e; ++j) {
        uint8_t byte = 0;
        for (int k = 0; k < kPer && j * kPer + k < n; ++k)
          byte = static_cast<uint8_t>(byte | (CodeOf(Convert<D>(Load<S>(src_raw, j * kPer + k), saturate)) << (k * kBits)));
        dst[j] = byte;
      }
    });
  } else {
    auto* dst = static_cast<D*>(dst_raw);
    ThreadPool::For(pool, n, 1 << 16, [&](int64_t b, int64_t e) {
      if constexpr (!kPacked<S>) {
        const S* src = static_cast<const S*>(src_raw) + b;
        for (int64_t i = 0; i < e - b; ++i) dst[b + i] = Convert<D>(src[i], saturate);
      } else {
        for (int64_t i = b; i < e; ++i) dst[i] = Convert<D>(Load<S>(src_raw, i), saturate);
      }
    });
  }
  return Status::OK();
}

#define ONYX_CAST_CASE(E, T) \
  case ElemType::E:          \
    return fn(TypeTag<T>{});

// Every type Cast reads or writes: DispatchAll's plus the narrow formats.
template <typename F>
Status DispatchCast(ElemType t, F&& fn) {
  switch (t) {
    ONYX_CAST_CASE(kFloat8E4M3FN, F8<E4M3FN>)
    ONYX_CAST_CASE(kFloat8E4M3FNUZ, F8<E4M3FNUZ>)
    ONYX_CAST_CASE(kFloat8E5M2, F8<E5M2>)
    ONYX_CAST_CASE(kFloat8E5M2FNUZ, F8<E5M2FNUZ>)
    ONYX_CAST_CASE(kInt4, I4)
    ONYX_CAST_CASE(kUint4, U4)
    ONYX_CAST_CASE(kFloat4E2M1, F4)
    ONYX_CAST_CASE(kInt2, I2)
    ONYX_CAST_CASE(kUint2, U2)
    ONYX_CAST_CASE(kFloat8E8M0, E8M0<E8M0Round::kUp>)  // as a source the mode is unused
    default: return DispatchAll(t, "Cast", fn);
  }
}

// The destination type, with float8e8m0's rounding mode.
template <typename F>
Status DispatchCastTo(ElemType t, E8M0Round round, F&& fn) {
  if (t != ElemType::kFloat8E8M0) return DispatchCast(t, fn);
  switch (round) {
    case E8M0Round::kDown: return fn(TypeTag<E8M0<E8M0Round::kDown>>{});
    case E8M0Round::kNearest: return fn(TypeTag<E8M0<E8M0Round::kNearest>>{});
    default: return fn(TypeTag<E8M0<E8M0Round::kUp>>{});
  }
}

#undef ONYX_CAST_CASE

bool Castable(ElemType t) {
  return t != ElemType::kUndefined && t != ElemType::kComplex64 && t != ElemType::kComplex128 &&
         IsKnownElemType(static_cast<int32_t>(t));
}

class CastKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    const Attribute* a = info.Attr("to");
    ONYX_CHECK(a != nullptr, ErrorCode::kInvalidGraph, "Cast: attribute 'to' is required");
    int64_t to = a->i;
    // Opset 1-5 spelled the type as a string ("FLOAT").
    if (a->type == Attribute::Type::kString) {
      static const std::pair<const char*, ElemType> kNames[] = {
          {"FLOAT", ElemType::kFloat},   {"DOUBLE", ElemType::kDouble}, {"INT8", ElemType::kInt8},
          {"INT16", ElemType::kInt16},   {"INT32", ElemType::kInt32},   {"INT64", ElemType::kInt64},
          {"UINT8", ElemType::kUint8},   {"UINT16", ElemType::kUint16}, {"UINT32", ElemType::kUint32},
          {"UINT64", ElemType::kUint64}, {"BOOL", ElemType::kBool},     {"FLOAT16", ElemType::kFloat16},
          {"STRING", ElemType::kString}};
      to = -1;
      for (const auto& kv : kNames)
        if (a->s == kv.first) to = static_cast<int64_t>(kv.second);
      ONYX_CHECK(to >= 0, ErrorCode::kInvalidGraph, "Cast: attribute 'to' names unknown type '", a->s, "'");
    }
    ONYX_CHECK(to >= 0 && to <= INT32_MAX && IsKnownElemType(static_cast<int32_t>(to)), ErrorCode::kInvalidGraph,
               "Cast: attribute 'to' has invalid value ", to);
    to_ = static_cast<ElemType>(to);
    ONYX_CHECK(Castable(to_), ErrorCode::kNotImplemented, "Cast: casting to ", ElemTypeName(to_),
               " is not supported");
    // Cast-19 added 'saturate' (default 1); it only affects float8 outputs.
    saturate_ = info.AttrInt("saturate", 1) != 0;
    // Cast-24 added 'round_mode' for float8e8m0 outputs.
    const std::string round = info.AttrString("round_mode", "up");
    if (round == "down") round_ = E8M0Round::kDown;
    else if (round == "nearest") round_ = E8M0Round::kNearest;
    else
      ONYX_CHECK(round == "up", ErrorCode::kInvalidGraph, "Cast: attribute 'round_mode' is '", round,
                 "'; it must be 'up', 'down' or 'nearest'");
    return Status::OK();
  }

  Status Compute(KernelContext& ctx) const override {
    const Tensor* X = nullptr;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &X));
    ONYX_CHECK(Castable(X->type()), ErrorCode::kNotImplemented, "Cast: casting from ", ElemTypeName(X->type()),
               " is not supported");
    Tensor* Y = ctx.Output(0, X->dims(), to_);
    if (Y == nullptr || X->size() == 0) return Status::OK();
    if (X->type() == to_) {
      if (to_ == ElemType::kString) {
        const auto* s = X->data<std::string>();
        auto* d = Y->data<std::string>();
        for (int64_t i = 0; i < X->size(); ++i) d[i] = s[i];
      } else {
        std::memcpy(Y->raw(), X->raw(), X->bytes());
        if (to_ == ElemType::kFloat8E5M2 && saturate_) {
          // Saturation applies to the input's infinities too (onnx's table:
          // Inf -> FLT_MAX); NaNs keep their bits.
          auto* d = Y->data<uint8_t>();
          for (int64_t i = 0; i < Y->size(); ++i)
            if ((d[i] & 0x7F) == 0x7C) d[i] = static_cast<uint8_t>(d[i] - 1);
        }
      }
      return Status::OK();
    }
    return DispatchCast(X->type(), [&](auto stag) -> Status {
      using S = typename decltype(stag)::type;
      return DispatchCastTo(to_, round_, [&](auto dtag) -> Status {
        using D = typename decltype(dtag)::type;
        return CastLoop<S, D>(X->raw(), Y->raw(), X->size(), saturate_, to_, ctx.threads());
      });
    });
  }

 private:
  ElemType to_ = ElemType::kFloat;
  bool saturate_ = true;
  E8M0Round round_ = E8M0Round::kUp;
};

}  // namespace

ONYX_REGISTER_KERNEL(CastKernel, "", "Cast", 1, kMaxVersion, AnyType());

}  // namespace onyx

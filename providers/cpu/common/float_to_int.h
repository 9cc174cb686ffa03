// Float to integer conversion defined for every input. static_cast of NaN,
// infinity or a value outside the target's range is undefined behaviour in
// C++ (UBSan: float-cast-overflow), and fuzzed models feed kernels exactly
// those. This gives what x86's truncating conversion (cvttss2si/cvttsd2si)
// gives, which is what static_cast compiled there and onnxruntime return:
// in-range values truncate toward zero; NaN and out-of-range values become
// the "integer indefinite" 0x80000000 (32-bit) or 0x8000000000000000
// (64-bit), except that uint64 gives 0 from 2^64 up; 8- and 16-bit targets
// take the low bits of the 32-bit result, uint32 those of the 64-bit one.
#pragma once

#include <cstdint>
#include <type_traits>

namespace onyx {

template <typename F>
int64_t FloatToInt64(F f) {
  if (!(f >= F(-9223372036854775808.0) && f < F(9223372036854775808.0))) return INT64_MIN;
  return static_cast<int64_t>(f);
}

template <typename F>
int32_t FloatToInt32(F f) {
  if (!(f > F(-2147483649.0) && f < F(2147483648.0))) return INT32_MIN;
  return static_cast<int32_t>(f);
}

template <typename I, typename F>
I FloatToInt(F f) {
  static_assert(std::is_integral<I>::value && std::is_floating_point<F>::value, "float to integer only");
  if constexpr (std::is_same<I, bool>::value) {
    return f != F(0);
  } else if constexpr (std::is_same<I, uint64_t>::value) {
    // x86's sequence for uint64 converts x - 2^63 above 2^63 and flips the
    // top bit back, so 2^64 and beyond (infinity too) give 0.
    if (f >= F(18446744073709551616.0)) return 0;
    if (f >= F(9223372036854775808.0)) return static_cast<uint64_t>(f);
    return static_cast<uint64_t>(FloatToInt64(f));
  } else if constexpr (sizeof(I) == 8 || std::is_same<I, uint32_t>::value) {
    return static_cast<I>(FloatToInt64(f));
  } else {
    return static_cast<I>(FloatToInt32(f));
  }
}

// static_cast<T>(f) for a floating-point T, FloatToInt<T>(f) for an
// integral one: for kernels templated over both.
template <typename T, typename F>
T FromFloat(F f) {
  if constexpr (std::is_integral<T>::value)
    return FloatToInt<T>(f);
  else
    return static_cast<T>(f);
}

}  // namespace onyx

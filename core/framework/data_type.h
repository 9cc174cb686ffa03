// Tensor element types. Values follow onnx.TensorProto.DataType so they can be
// passed through the C ABI and Python unchanged.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

namespace onyx {

enum class ElemType : int32_t {
  kUndefined = 0,
  kFloat = 1,
  kUint8 = 2,
  kInt8 = 3,
  kUint16 = 4,
  kInt16 = 5,
  kInt32 = 6,
  kInt64 = 7,
  kString = 8,
  kBool = 9,
  kFloat16 = 10,
  kDouble = 11,
  kUint32 = 12,
  kUint64 = 13,
  kComplex64 = 14,
  kComplex128 = 15,
  kBFloat16 = 16,
  kFloat8E4M3FN = 17,
  kFloat8E4M3FNUZ = 18,
  kFloat8E5M2 = 19,
  kFloat8E5M2FNUZ = 20,
  kUint4 = 21,
  kInt4 = 22,
  kFloat4E2M1 = 23,
  kFloat8E8M0 = 24,
  kUint2 = 25,
  kInt2 = 26,
};

// Size in bytes of one element; 0 for undefined and for sub-byte types, whose
// storage is computed by StorageBytes.
size_t ElemSize(ElemType t);
// Bits per element of the types packed several to a byte (4 for int4, uint4
// and float4e2m1, 2 for int2 and uint2; low bits first); 0 for the others.
int SubByteBits(ElemType t);
// Bytes needed to hold `count` elements (packs the sub-byte types).
size_t StorageBytes(ElemType t, size_t count);
// ONNX's spelling of the type: "float", "int64", "float16", ...
const char* ElemTypeName(ElemType t);
bool IsKnownElemType(int32_t v);

struct Float16 {
  uint16_t bits = 0;
  Float16() = default;
  explicit Float16(float f) : bits(FromFloat(f)) {}
  operator float() const { return ToFloat(bits); }
  static uint16_t FromFloat(float f);
  static float ToFloat(uint16_t h);
};

struct BFloat16 {
  uint16_t bits = 0;
  BFloat16() = default;
  explicit BFloat16(float f) : bits(FromFloat(f)) {}
  operator float() const {
    uint32_t u = static_cast<uint32_t>(bits) << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
  }
  static uint16_t FromFloat(float f) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    if ((u & 0x7fffffffu) > 0x7f800000u) return 0x7fc0;  // NaN stays NaN
    u += 0x7fffu + ((u >> 16) & 1u);                      // round to nearest even
    return static_cast<uint16_t>(u >> 16);
  }
};

// Maps a C++ type to its ElemType, for template dispatch.
template <typename T>
struct ElemTypeOf;
#define ONYX_ELEM_TYPE_OF(T, E) \
  template <>                   \
  struct ElemTypeOf<T> {        \
    static constexpr ElemType value = ElemType::E; \
  };
ONYX_ELEM_TYPE_OF(float, kFloat)
ONYX_ELEM_TYPE_OF(double, kDouble)
ONYX_ELEM_TYPE_OF(int8_t, kInt8)
ONYX_ELEM_TYPE_OF(int16_t, kInt16)
ONYX_ELEM_TYPE_OF(int32_t, kInt32)
ONYX_ELEM_TYPE_OF(int64_t, kInt64)
ONYX_ELEM_TYPE_OF(uint8_t, kUint8)
ONYX_ELEM_TYPE_OF(uint16_t, kUint16)
ONYX_ELEM_TYPE_OF(uint32_t, kUint32)
ONYX_ELEM_TYPE_OF(uint64_t, kUint64)
ONYX_ELEM_TYPE_OF(bool, kBool)
ONYX_ELEM_TYPE_OF(Float16, kFloat16)
ONYX_ELEM_TYPE_OF(BFloat16, kBFloat16)
ONYX_ELEM_TYPE_OF(std::string, kString)
#undef ONYX_ELEM_TYPE_OF

}  // namespace onyx

#include "core/framework/data_type.h"

namespace onyx {

size_t ElemSize(ElemType t) {
  switch (t) {
    case ElemType::kFloat: case ElemType::kInt32: case ElemType::kUint32: return 4;
    case ElemType::kDouble: case ElemType::kInt64: case ElemType::kUint64:
    case ElemType::kComplex64: return 8;
    case ElemType::kComplex128: return 16;
    case ElemType::kUint8: case ElemType::kInt8: case ElemType::kBool:
    case ElemType::kFloat8E4M3FN: case ElemType::kFloat8E4M3FNUZ:
    case ElemType::kFloat8E5M2: case ElemType::kFloat8E5M2FNUZ: case ElemType::kFloat8E8M0: return 1;
    case ElemType::kUint16: case ElemType::kInt16: case ElemType::kFloat16:
    case ElemType::kBFloat16: return 2;
    case ElemType::kString: return sizeof(std::string);
    default: return 0;
  }
}

int SubByteBits(ElemType t) {
  switch (t) {
    case ElemType::kUint4: case ElemType::kInt4: case ElemType::kFloat4E2M1: return 4;
    case ElemType::kUint2: case ElemType::kInt2: return 2;
    default: return 0;
  }
}

size_t StorageBytes(ElemType t, size_t count) {
  if (const int bits = SubByteBits(t)) {
    const size_t per_byte = static_cast<size_t>(8 / bits);
    return (count + per_byte - 1) / per_byte;
  }
  return ElemSize(t) * count;
}

const char* ElemTypeName(ElemType t) {
  switch (t) {
    case ElemType::kFloat: return "float";
    case ElemType::kUint8: return "uint8";
    case ElemType::kInt8: return "int8";
    case ElemType::kUint16: return "uint16";
    case ElemType::kInt16: return "int16";
    case ElemType::kInt32: return "int32";
    case ElemType::kInt64: return "int64";
    case ElemType::kString: return "string";
    case ElemType::kBool: return "bool";
    case ElemType::kFloat16: return "float16";
    case ElemType::kDouble: return "double";
    case ElemType::kUint32: return "uint32";
    case ElemType::kUint64: return "uint64";
    case ElemType::kComplex64: return "complex64";
    case ElemType::kComplex128: return "complex128";
    case ElemType::kBFloat16: return "bfloat16";
    case ElemType::kFloat8E4M3FN: return "float8e4m3fn";
    case ElemType::kFloat8E4M3FNUZ: return "float8e4m3fnuz";
    case ElemType::kFloat8E5M2: return "float8e5m2";
    case ElemType::kFloat8E5M2FNUZ: return "float8e5m2fnuz";
    case ElemType::kUint4: return "uint4";
    case ElemType::kInt4: return "int4";
    case ElemType::kFloat4E2M1: return "float4e2m1";
    case ElemType::kFloat8E8M0: return "float8e8m0";
    case ElemType::kUint2: return "uint2";
    case ElemType::kInt2: return "int2";
    default: return "undefined";
  }
}

bool IsKnownElemType(int32_t v) { return v >= 1 && v <= 26; }

uint16_t Float16::FromFloat(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t mant = x & 0x007fffffu;
  int32_t exp = static_cast<int32_t>((x >> 23) & 0xff);
  if (exp == 0xff) return static_cast<uint16_t>(sign | 0x7c00u | (mant ? 0x200u : 0u));
  int32_t e = exp - 127 + 15;
  if (e >= 0x1f) return static_cast<uint16_t>(sign | 0x7c00u);  // overflow -> inf
  if (e <= 0) {
    if (e < -10) return static_cast<uint16_t>(sign);  // underflow -> signed zero
    mant |= 0x00800000u;
    uint32_t shift = static_cast<uint32_t>(14 - e);
    uint32_t half = mant >> shift;
    uint32_t rem = mant & ((1u << shift) - 1u);
    uint32_t mid = 1u << (shift - 1);
    if (rem > mid || (rem == mid && (half & 1u))) ++half;
    return static_cast<uint16_t>(sign | half);
  }
  uint32_t half = (static_cast<uint32_t>(e) << 10) | (mant >> 13);
  uint32_t rem = mant & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (half & 1u))) ++half;  // may carry into exp: correct
  return static_cast<uint16_t>(sign | half);
}

float Float16::ToFloat(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  uint32_t bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {
      int e = -1;
      do { ++e; mant <<= 1; } while ((mant & 0x400u) == 0);
      bits = sign | (static_cast<uint32_t>(127 - 15 - e) << 23) | ((mant & 0x3ffu) << 13);
    }
  } else if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else {
    bits = sign | ((exp - 15 + 127) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

}  // namespace onyx

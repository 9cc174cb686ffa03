// Element-type dispatch: call a generic lambda with a typed tag, so kernels are
// written once as templates instead of once per type.
#pragma once

#include <string>

#include "core/framework/data_type.h"
#include "core/framework/status.h"

namespace onyx {

template <typename T>
struct TypeTag {
  using type = T;
};

#define ONYX_DISPATCH_CASE(E, T) \
  case ElemType::E:              \
    return fn(TypeTag<T>{});

inline Status UnsupportedType(const char* what, ElemType t) {
  return MakeError(ErrorCode::kNotImplemented, what, ": element type ", ElemTypeName(t), " is not supported");
}

// float, double
template <typename F>
Status DispatchFloat(ElemType t, const char* what, F&& fn) {
  switch (t) {
    ONYX_DISPATCH_CASE(kFloat, float)
    ONYX_DISPATCH_CASE(kDouble, double)
    default: return UnsupportedType(what, t);
  }
}

// Every real numeric type (no bool, no float16).
template <typename F>
Status DispatchNumeric(ElemType t, const char* what, F&& fn) {
  switch (t) {
    ONYX_DISPATCH_CASE(kFloat, float)
    ONYX_DISPATCH_CASE(kDouble, double)
    ONYX_DISPATCH_CASE(kInt8, int8_t)
    ONYX_DISPATCH_CASE(kInt16, int16_t)
    ONYX_DISPATCH_CASE(kInt32, int32_t)
    ONYX_DISPATCH_CASE(kInt64, int64_t)
    ONYX_DISPATCH_CASE(kUint8, uint8_t)
    ONYX_DISPATCH_CASE(kUint16, uint16_t)
    ONYX_DISPATCH_CASE(kUint32, uint32_t)
    ONYX_DISPATCH_CASE(kUint64, uint64_t)
    default: return UnsupportedType(what, t);
  }
}

// Every fixed-size type plus string: for data movement (copy, gather, concat).
template <typename F>
Status DispatchAll(ElemType t, const char* what, F&& fn) {
  switch (t) {
    ONYX_DISPATCH_CASE(kFloat, float)
    ONYX_DISPATCH_CASE(kDouble, double)
    ONYX_DISPATCH_CASE(kInt8, int8_t)
    ONYX_DISPATCH_CASE(kInt16, int16_t)
    ONYX_DISPATCH_CASE(kInt32, int32_t)
    ONYX_DISPATCH_CASE(kInt64, int64_t)
    ONYX_DISPATCH_CASE(kUint8, uint8_t)
    ONYX_DISPATCH_CASE(kUint16, uint16_t)
    ONYX_DISPATCH_CASE(kUint32, uint32_t)
    ONYX_DISPATCH_CASE(kUint64, uint64_t)
    ONYX_DISPATCH_CASE(kBool, bool)
    ONYX_DISPATCH_CASE(kFloat16, Float16)
    ONYX_DISPATCH_CASE(kBFloat16, BFloat16)
    ONYX_DISPATCH_CASE(kString, std::string)
    default: return UnsupportedType(what, t);
  }
}

#undef ONYX_DISPATCH_CASE

}  // namespace onyx

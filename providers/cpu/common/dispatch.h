// Element-type dispatch: call a generic lambda with a typed tag, so kernels are
// written once as templates instead of once per type. The sets come from
// providers/type_sets.h, the same lists the registrations use.
#pragma once

#include <string>

#include "core/framework/data_type.h"
#include "core/framework/status.h"
#include "providers/type_sets.h"

namespace onyx {

template <typename T>
struct TypeTag {
  using type = T;
};

inline Status UnsupportedType(const char* what, ElemType t) {
  return MakeError(ErrorCode::kNotImplemented, what, ": element type ", ElemTypeName(t), " is not supported");
}

// Calls fn(TypeTag<T>{}) for the T of `set` whose ElemType is `t`; NOT_IMPLEMENTED
// naming `what` when `t` is not in the set.
template <typename... Ts, typename F>
Status DispatchOver(TypeSet<Ts...>, ElemType t, const char* what, F&& fn) {
  Status result;
  const bool found = ((t == ElemTypeOf<Ts>::value ? (result = fn(TypeTag<Ts>{}), true) : false) || ...);
  return found ? result : UnsupportedType(what, t);
}

template <typename F>
Status DispatchFloat(ElemType t, const char* what, F&& fn) {
  return DispatchOver(FloatTypeSet{}, t, what, fn);
}
template <typename F>
Status DispatchNumeric(ElemType t, const char* what, F&& fn) {
  return DispatchOver(NumericTypeSet{}, t, what, fn);
}
template <typename F>
Status DispatchAll(ElemType t, const char* what, F&& fn) {
  return DispatchOver(AllTypeSet{}, t, what, fn);
}

}  // namespace onyx

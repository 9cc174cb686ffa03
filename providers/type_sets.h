// The element-type sets kernels accept, written once: each set is a list of
// C++ types, and both the registration lists (ElemTypes) and the run-time
// dispatch (DispatchOver, providers/cpu/common/dispatch.h) are read from it.
#pragma once

#include <string>
#include <vector>

#include "core/framework/data_type.h"

namespace onyx {

template <typename... Ts>
struct TypeSet {
  // In the order written: error messages list them that way.
  static std::vector<ElemType> ElemTypes() { return {ElemTypeOf<Ts>::value...}; }
};

template <typename A, typename B>
struct JoinTypeSets;
template <typename... As, typename... Bs>
struct JoinTypeSets<TypeSet<As...>, TypeSet<Bs...>> {
  using type = TypeSet<As..., Bs...>;
};

// float, double
using FloatTypeSet = TypeSet<float, double>;
// The 16-bit floats, computed through float.
using HalfTypeSet = TypeSet<Float16, BFloat16>;
// Every real numeric type (no bool, no 16-bit floats).
using NumericTypeSet =
    TypeSet<float, double, int32_t, int64_t, int8_t, int16_t, uint8_t, uint16_t, uint32_t, uint64_t>;
using NumericOrHalfTypeSet = JoinTypeSets<NumericTypeSet, HalfTypeSet>::type;
using FloatOrHalfTypeSet = JoinTypeSets<FloatTypeSet, HalfTypeSet>::type;
// Floats and signed integers (Relu, Neg).
using SignedTypeSet = JoinTypeSets<FloatOrHalfTypeSet, TypeSet<int8_t, int16_t, int32_t, int64_t>>::type;
// The random generators' float types, in the order their messages list them.
using RealTypeSet = JoinTypeSets<HalfTypeSet, FloatTypeSet>::type;
// Every fixed-size type plus string: for data movement (copy, gather, concat).
using AllTypeSet = JoinTypeSets<NumericTypeSet, TypeSet<bool, Float16, BFloat16, std::string>>::type;

inline std::vector<ElemType> FloatTypes() { return FloatTypeSet::ElemTypes(); }
inline std::vector<ElemType> FloatOrHalfTypes() { return FloatOrHalfTypeSet::ElemTypes(); }
inline std::vector<ElemType> NumericTypes() { return NumericTypeSet::ElemTypes(); }
inline std::vector<ElemType> NumericOrHalfTypes() { return NumericOrHalfTypeSet::ElemTypes(); }
inline std::vector<ElemType> SignedTypes() { return SignedTypeSet::ElemTypes(); }
inline std::vector<ElemType> BoolTypes() { return {ElemType::kBool}; }
// No constraint: the kernel takes any type (or decides at run time).
inline std::vector<ElemType> AnyType() { return {}; }

}  // namespace onyx

// Shared by the random kernels: seeding like onnxruntime (attribute `seed`,
// else the process-wide seed), the `dtype` attribute, and conversions.
#pragma once

#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "core/framework/random.h"
#include "providers/cpu/common/dispatch.h"
#include "providers/kernel.h"

namespace onyx {
namespace random_kernels {

// The kernel's own stream: from the node's `seed` attribute when it has one,
// else from NextKernelSeed() (the global seed, or nondeterministic) and the
// node's output name.
inline Status MakeStream(const KernelInfo& info, const char* op, std::unique_ptr<RandomStream>* out) {
  int64_t seed;
  if (const Attribute* a = info.Attr("seed")) {
    ONYX_CHECK(a->type == Attribute::Type::kFloat, ErrorCode::kInvalidGraph, op,
               ": attribute 'seed' must be a float");
    ONYX_CHECK(std::isfinite(a->f), ErrorCode::kInvalidGraph, op, ": attribute 'seed' must be finite, got ", a->f);
    seed = SeedFromAttribute(a->f);
  } else {
    // Output names are unique in a graph, and unlike the node's position
    // they survive optimizer rewrites elsewhere in the graph.
    const Node& n = info.node();
    seed = NodeSeed(NextKernelSeed(), n.outputs.empty() ? n.name : n.outputs[0]);
  }
  *out = std::make_unique<RandomStream>(seed);
  return Status::OK();
}

// "float16, bfloat16, float or double"
inline std::string TypeList(const std::vector<ElemType>& types) {
  std::string s;
  for (size_t i = 0; i < types.size(); ++i) {
    if (i) s += i + 1 == types.size() ? " or " : ", ";
    s += ElemTypeName(types[i]);
  }
  return s;
}

inline bool Contains(const std::vector<ElemType>& types, ElemType t) {
  for (ElemType x : types)
    if (x == t) return true;
  return false;
}

// The output types of RandomNormal/RandomUniform(Like) and Bernoulli's input.
inline const std::vector<ElemType>& RealTypes() {
  static const std::vector<ElemType> k = RealTypeSet::ElemTypes();
  return k;
}

// Reads the `dtype` attribute into *out when present (*has = true), checking
// it is one of `allowed`.
inline Status ReadDtype(const KernelInfo& info, const char* op, const std::vector<ElemType>& allowed, bool* has,
                        ElemType* out) {
  const Attribute* a = info.Attr("dtype");
  *has = a != nullptr;
  if (!a) return Status::OK();
  ONYX_CHECK(a->type == Attribute::Type::kInt, ErrorCode::kInvalidGraph, op, ": attribute 'dtype' must be an int");
  bool known = a->i > 0 && a->i <= std::numeric_limits<int32_t>::max() && IsKnownElemType(static_cast<int32_t>(a->i));
  ElemType t = known ? static_cast<ElemType>(a->i) : ElemType::kUndefined;
  ONYX_CHECK(known && Contains(allowed, t), ErrorCode::kInvalidGraph, op, ": attribute 'dtype' is ",
             known ? std::string(ElemTypeName(t)) : StrCat("the unknown type code ", a->i), "; it must be ",
             TypeList(allowed));
  *out = t;
  return Status::OK();
}

// float, double, float16, bfloat16
template <typename F>
Status DispatchReal(ElemType t, const char* what, F&& fn) {
  return DispatchOver(RealTypeSet{}, t, what, fn);
}

// A value of T from a double (through float for the 16-bit floats).
template <typename T>
T FromDouble(double v) {
  if constexpr (std::is_same<T, Float16>::value || std::is_same<T, BFloat16>::value) {
    return T(static_cast<float>(v));
  } else if constexpr (std::is_same<T, bool>::value) {
    return v != 0.0;
  } else {
    return static_cast<T>(v);
  }
}

template <typename T>
double ToDouble(T v) {
  if constexpr (std::is_same<T, Float16>::value || std::is_same<T, BFloat16>::value) {
    return static_cast<double>(static_cast<float>(v));
  } else {
    return static_cast<double>(v);
  }
}

// The next representable value below `v` (v finite).
template <typename T>
T StepDown(T v) {
  if constexpr (std::is_same<T, Float16>::value || std::is_same<T, BFloat16>::value) {
    // Sign-magnitude bits: towards -inf is one more magnitude step when
    // negative, one fewer when positive; +-0 steps to the smallest negative.
    T r = v;
    if ((v.bits & 0x7fffu) == 0) r.bits = 0x8001u;
    else if (v.bits & 0x8000u) r.bits = static_cast<uint16_t>(v.bits + 1);
    else r.bits = static_cast<uint16_t>(v.bits - 1);
    return r;
  } else {
    return std::nextafter(v, -std::numeric_limits<T>::infinity());
  }
}

}  // namespace random_kernels
}  // namespace onyx

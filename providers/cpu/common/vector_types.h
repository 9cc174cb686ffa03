// GCC vector types for SIMD code written once and compiled per ISA (SSE2,
// AVX2, AVX-512 under __attribute__((target))): W lanes of float or int32.
#pragma once

#include <cstdint>

namespace onyx {
namespace vec {

typedef float F4 __attribute__((vector_size(16)));
typedef int32_t I4 __attribute__((vector_size(16)));
typedef float F8 __attribute__((vector_size(32)));
typedef int32_t I8 __attribute__((vector_size(32)));
typedef float F16 __attribute__((vector_size(64)));
typedef int32_t I16 __attribute__((vector_size(64)));

}  // namespace vec
}  // namespace onyx

// Vector types only live inside the per-ISA regions below.
#pragma GCC diagnostic ignored "-Wpsabi"

#include "providers/cpu/nn/depthwise_conv.h"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "providers/cpu/math/sgemm.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define ONYX_DW_X86 1
#endif

namespace onyx {
namespace depthwise {
namespace {
using Fn = void (*)(const Plane2D&, int64_t, const float*, int64_t, const float*, int64_t, const float*, bool, float,
                   float, float*, int64_t);
}  // namespace

#ifdef ONYX_DW_X86
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx512f,avx512dq,avx512bw,avx512vl,avx2,fma"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx512f,avx512dq,avx512bw,avx512vl,avx2,fma")
#endif
namespace avx512 {
namespace {
#define ONYX_VEC_AVX512
#include "providers/cpu/common/simd_traits.inc"
#undef ONYX_VEC_AVX512
#include "providers/cpu/nn/depthwise_conv_kernel.inc"
}  // namespace
}  // namespace avx512
#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif

#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2,fma"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx2,fma")
#endif
namespace avx2 {
namespace {
#define ONYX_VEC_AVX2
#include "providers/cpu/common/simd_traits.inc"
#undef ONYX_VEC_AVX2
#include "providers/cpu/nn/depthwise_conv_kernel.inc"
}  // namespace
}  // namespace avx2
#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif
#endif

namespace {
Fn Kernel() {
#ifdef ONYX_DW_X86
  switch (sgemm::ActiveIsa()) {
    case sgemm::Isa::kAvx512:
      return &avx512::Planes;
    case sgemm::Isa::kAvx2:
      return &avx2::Planes;
    default:
      break;
  }
#endif
  return nullptr;
}
}  // namespace

bool Available() { return Kernel() != nullptr; }

void Run(const Plane2D& g, int64_t count, const float* in, int64_t in_stride, const float* w, int64_t w_stride,
         const float* bias, bool clamp, float lo, float hi, float* out, int64_t out_stride) {
  Kernel()(g, count, in, in_stride, w, w_stride, bias, clamp, lo, hi, out, out_stride);
}

}  // namespace depthwise
}  // namespace onyx

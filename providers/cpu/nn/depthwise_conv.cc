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
#include "providers/cpu/nn/small_conv_kernel.inc"
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
#include "providers/cpu/nn/small_conv_kernel.inc"
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

namespace small_conv {
namespace {
using RowsFn = void (*)(const Geom&, const float*, const float*, const float*, bool, float, float, int64_t, int64_t,
                        float*);
struct Path {
  RowsFn rows = nullptr;
  int block = 0;
};
Path Active() {
#ifdef ONYX_DW_X86
  switch (sgemm::ActiveIsa()) {
    case sgemm::Isa::kAvx512:
      return {&depthwise::avx512::SmallConvRows, depthwise::avx512::kSmallBlock};
    case sgemm::Isa::kAvx2:
      return {&depthwise::avx2::SmallConvRows, depthwise::avx2::kSmallBlock};
    default:
      break;
  }
#endif
  return {};
}
}  // namespace

bool Applies(const Geom& g) {
  return Active().rows != nullptr && g.KW >= 1 && g.KW <= kMaxKernel && (g.sw == 1 || g.sw == 2) && g.sh >= 1 &&
         g.C >= 1 && g.M >= 1 && g.OW >= 1 && g.OH >= 1;
}

int64_t PackedSize(int64_t M, int64_t taps) {
  const int64_t b = Active().block;
  return b == 0 ? 0 : (M + b - 1) / b * b * taps;
}

void Pack(const float* w, int64_t M, int64_t taps, float* packed) {
  const int64_t b = Active().block;
  for (int64_t mb = 0; mb < M; mb += b)
    for (int64_t t = 0; t < taps; ++t)
      for (int64_t m = 0; m < b; ++m) packed[mb * taps + t * b + m] = mb + m < M ? w[(mb + m) * taps + t] : 0.f;
}

void Rows(const Geom& g, const float* x, const float* packed, const float* bias, bool clamp, float lo, float hi,
          int64_t oh_begin, int64_t oh_end, float* y) {
  Active().rows(g, x, packed, bias, clamp, lo, hi, oh_begin, oh_end, y);
}

}  // namespace small_conv
}  // namespace onyx

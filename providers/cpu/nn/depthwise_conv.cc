// Vector types only live inside the per-ISA regions below.
#pragma GCC diagnostic ignored "-Wpsabi"

#include "providers/cpu/nn/depthwise_conv.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <utility>
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

#define ONYX_ISA_KERNEL "providers/cpu/nn/depthwise_conv_kernel.inc"
#define ONYX_ISA_KERNEL_NAMED "providers/cpu/nn/planes_kernels.inc"
#include "providers/cpu/common/isa_regions.inc"
#undef ONYX_ISA_KERNEL_NAMED
#undef ONYX_ISA_KERNEL

namespace {
// Every kernel of this file for the active ISA (sgemm::ActiveIsa()); all
// null (block 0) where it has none.
struct Kernels {
  Fn depthwise = nullptr;
  void (*small_rows)(const small_conv::Geom&, const float*, const float*, const float*, bool, float, float, int64_t,
                     int64_t, float*) = nullptr;
  int small_block = 0;
  void (*pool)(const pool_planes::Geom&, bool, int64_t, const float*, int64_t, float*, int64_t) = nullptr;
  void (*split)(const float*, int64_t, int64_t, int64_t, int64_t, float, bool, float*) = nullptr;
  void (*means)(const float*, int64_t, int64_t, float*) = nullptr;
};
Kernels Active() {
#ifdef ONYX_DW_X86
  switch (sgemm::ActiveIsa()) {
    case sgemm::Isa::kAvx512:
      return {&avx512::Planes, &avx512::SmallConvRows, avx512::kSmallBlock, &avx512::PoolPlaneRun,
              &avx512::SplitPhases, &avx512::PoolPlaneMeans};
    case sgemm::Isa::kAvx2:
      return {&avx2::Planes,      &avx2::SmallConvRows, avx2::kSmallBlock,
              &avx2::PoolPlaneRun, &avx2::SplitPhases,   &avx2::PoolPlaneMeans};
    default:
      break;
  }
#endif
  return {};
}
}  // namespace

bool Available() { return Active().depthwise != nullptr; }

void Run(const Plane2D& g, int64_t count, const float* in, int64_t in_stride, const float* w, int64_t w_stride,
         const float* bias, bool clamp, float lo, float hi, float* out, int64_t out_stride) {
  Active().depthwise(g, count, in, in_stride, w, w_stride, bias, clamp, lo, hi, out, out_stride);
}

}  // namespace depthwise

namespace small_conv {

bool Applies(const Geom& g) {
  return depthwise::Active().small_rows != nullptr && g.KW >= 1 && g.KW <= kMaxKernel && g.sw >= 1 &&
         g.sh >= 1 && g.C >= 1 && g.M >= 1 && g.OW >= 1 && g.OH >= 1;
}

int64_t PackedSize(int64_t M, int64_t taps) {
  const int64_t b = depthwise::Active().small_block;
  return b == 0 ? 0 : (M + b - 1) / b * b * taps;
}

void Pack(const float* w, int64_t M, int64_t taps, float* packed) {
  const int64_t b = depthwise::Active().small_block;
  for (int64_t mb = 0; mb < M; mb += b)
    for (int64_t t = 0; t < taps; ++t)
      for (int64_t m = 0; m < b; ++m) packed[mb * taps + t * b + m] = mb + m < M ? w[(mb + m) * taps + t] : 0.f;
}

void Rows(const Geom& g, const float* x, const float* packed, const float* bias, bool clamp, float lo, float hi,
          int64_t oh_begin, int64_t oh_end, float* y) {
  depthwise::Active().small_rows(g, x, packed, bias, clamp, lo, hi, oh_begin, oh_end, y);
}

}  // namespace small_conv

namespace phases {

bool Fits(int64_t k, int64_t p, int64_t d, int64_t in, int64_t out) {
  if (in < 1 || out < 1) return false;
  for (int64_t t = 0; t < k; ++t) {
    // Phase r's element i = o + dy is input 2i + r: past `out` (dy > 0) it
    // must lie outside the input.
    const int64_t a = t * d - p, r = a & 1, dy = (a - r) / 2;
    if (dy > 0 && 2 * out + r < in) return false;
  }
  return true;
}

void Split(const float* in, int64_t count, int64_t in_stride, int64_t H, int64_t W, int64_t OH, int64_t OW, float fill,
           float* out) {
  const auto split = depthwise::Active().split;
  for (int64_t i = 0; i < count; ++i) split(in + i * in_stride, H, W, OH, OW, fill, false, out + i * 4 * OH * OW);
}

void Evens(const float* in, int64_t count, int64_t in_stride, int64_t H, int64_t W, int64_t OH, int64_t OW,
           float* out) {
  const auto split = depthwise::Active().split;
  for (int64_t i = 0; i < count; ++i) split(in + i * in_stride, H, W, OH, OW, 0.f, true, out + i * OH * OW);
}

}  // namespace phases

namespace pool_planes {

bool Available() { return depthwise::Active().pool != nullptr; }

void Run(const Geom& g, bool max, int64_t count, const float* in, int64_t in_stride, float* out, int64_t out_stride) {
  depthwise::Active().pool(g, max, count, in, in_stride, out, out_stride);
}

void Means(const float* in, int64_t planes, int64_t inner, float* out) {
  depthwise::Active().means(in, planes, inner, out);
}

}  // namespace pool_planes
}  // namespace onyx

// Byte matrices transposed with SIMD (the layout changes of 8-bit tensors:
// QLinearConv's channels-last copies, Transpose of int8/uint8/bool data).
#pragma once

#include <cstdint>

#include "core/framework/thread_pool.h"

namespace onyx {

// dst[c * ldd + r] = src[r * cols + c] (ldd >= rows): a [rows, cols] byte
// matrix transposed, split over `pool` (may be null) by blocks of rows.
void TransposeBytes(const uint8_t* src, int64_t rows, int64_t cols, uint8_t* dst, int64_t ldd, ThreadPool* pool);

}  // namespace onyx

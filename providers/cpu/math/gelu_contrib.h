// The contrib Gelu family's element-wise pass, for kernels that end in one
// (com.microsoft GemmFastGelu).
#pragma once

#include <cstdint>

#include "core/framework/thread_pool.h"

namespace onyx {

// y[i] = FastGelu(x[i] + bias[i % bias_len]) for i < n (bias may be null);
// y may be x. Instantiated for float, double, Float16 and BFloat16.
template <typename T>
void FastGeluWithBias(const T* x, const T* bias, int64_t bias_len, T* y, int64_t n, ThreadPool* pool);

}  // namespace onyx

// The windowed pooling launcher (pool_impl.cu) and the geometry it takes.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "core/framework/data_type.h"
#include "core/framework/status.h"

namespace onyx {
namespace cuda {

// Spatial axes padded in front to exactly three (size 1, one tap): input and
// output lengths, kernel, stride, dilation, leading and trailing pads.
struct PoolGeometry {
  int64_t in[3] = {1, 1, 1}, out[3] = {1, 1, 1}, k[3] = {1, 1, 1}, s[3] = {1, 1, 1}, d[3] = {1, 1, 1};
  int64_t pb[3] = {0, 0, 0}, pe[3] = {0, 0, 0};
  bool include_pad = false;   // AveragePool's count_include_pad
  bool column_major = false;  // MaxPool's storage_order = 1 (Indices)
};

// y = MaxPool (max) or AveragePool of x over `planes` = N * C planes;
// `indices` (MaxPool only, may be null) gets each maximum's flat index in x.
Status LaunchPool(bool max, ElemType t, const PoolGeometry& g, int64_t planes, const void* x, void* y,
                  int64_t* indices, cudaStream_t s);

}  // namespace cuda
}  // namespace onyx

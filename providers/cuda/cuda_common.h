// What every file of the CUDA provider uses: status from CUDA errors.
#pragma once

#include <cuda_runtime.h>

#include "core/framework/status.h"

namespace onyx {
namespace cuda {

inline Status CudaStatus(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return Status::OK();
  return MakeError(ErrorCode::kEpFail, "CUDA error in ", what, ": ", cudaGetErrorName(e), " (",
                   cudaGetErrorString(e), ")");
}

}  // namespace cuda
}  // namespace onyx

// Returns an EP_FAIL status naming the call when a CUDA runtime call fails.
#define ONYX_CUDA_RETURN_IF_ERROR(expr) ONYX_RETURN_IF_ERROR(::onyx::cuda::CudaStatus((expr), #expr))

// cuBLAS and cuDNN, opened at run time by soname instead of linked: the same
// provider library then runs with the CUDA toolkit's copies (/usr/local/cuda)
// or the nvidia-* pip packages' (torch's site-packages), CUDA 13 or 12 builds.
#pragma once

#include <cublas_v2.h>
#include <cudnn.h>

#include <string>

#include "core/framework/status.h"

namespace onyx {
namespace cuda {

#define ONYX_CUBLAS_FUNCTIONS(X) \
  X(cublasCreate_v2)             \
  X(cublasDestroy_v2)            \
  X(cublasSetStream_v2)          \
  X(cublasSetMathMode)           \
  X(cublasGemmStridedBatchedEx)  \
  X(cublasGetStatusString)

// C++ overloads cuBLAS's inline wrappers over these: the exported C one.
using CublasGemmStridedBatchedExFn = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int,
                                                        int, int, const void*, const void*, cudaDataType, int,
                                                        long long, const void*, cudaDataType, int, long long,
                                                        const void*, void*, cudaDataType, int, long long, int,
                                                        cublasComputeType_t, cublasGemmAlgo_t);


using typename_of_cublasCreate_v2 = decltype(&::cublasCreate_v2);
using typename_of_cublasDestroy_v2 = decltype(&::cublasDestroy_v2);
using typename_of_cublasSetStream_v2 = decltype(&::cublasSetStream_v2);
using typename_of_cublasSetMathMode = decltype(&::cublasSetMathMode);
using typename_of_cublasGemmStridedBatchedEx = CublasGemmStridedBatchedExFn;
using typename_of_cublasGetStatusString = decltype(&::cublasGetStatusString);

struct Cublas {
#define ONYX_CUBLAS_POINTER(name) typename_of_##name name = nullptr;
  ONYX_CUBLAS_FUNCTIONS(ONYX_CUBLAS_POINTER)
#undef ONYX_CUBLAS_POINTER
  std::string path;  // the file it was loaded from
};

#define ONYX_CUDNN_FUNCTIONS(X)               \
  X(cudnnGetVersion)                           \
  X(cudnnGetErrorString)                       \
  X(cudnnCreate)                               \
  X(cudnnDestroy)                              \
  X(cudnnSetStream)                            \
  X(cudnnCreateTensorDescriptor)               \
  X(cudnnSetTensorNdDescriptor)                \
  X(cudnnDestroyTensorDescriptor)              \
  X(cudnnCreateFilterDescriptor)               \
  X(cudnnSetFilterNdDescriptor)                \
  X(cudnnDestroyFilterDescriptor)              \
  X(cudnnCreateConvolutionDescriptor)          \
  X(cudnnSetConvolutionNdDescriptor)           \
  X(cudnnSetConvolutionGroupCount)             \
  X(cudnnSetConvolutionMathType)               \
  X(cudnnDestroyConvolutionDescriptor)         \
  X(cudnnGetConvolutionForwardAlgorithm_v7)    \
  X(cudnnFindConvolutionForwardAlgorithmEx)    \
  X(cudnnGetConvolutionForwardWorkspaceSize)   \
  X(cudnnConvolutionForward)                   \
  X(cudnnCreatePoolingDescriptor)              \
  X(cudnnSetPoolingNdDescriptor)               \
  X(cudnnPoolingForward)                       \
  X(cudnnDestroyPoolingDescriptor)

struct Cudnn {
#define ONYX_CUDNN_POINTER(name) decltype(&::name) name = nullptr;
  ONYX_CUDNN_FUNCTIONS(ONYX_CUDNN_POINTER)
#undef ONYX_CUDNN_POINTER
  std::string path;
};

// Loads cuDNN 9 (libcudnn.so.9, which opens its sub-libraries from its own
// folder) once per process, searching as GetCublas.
Status GetCudnn(const Cudnn** out);
Status CudnnStatus(cudnnStatus_t s, const char* what);

// Loads cuBLAS once per process. Looks, in order, in the folders of
// ONYX_CUDA_LIB_DIRS (':'-separated), the dynamic loader's own search (its
// cache, LD_LIBRARY_PATH), the nvidia/*/lib folders of site-packages found
// beside this library, and /usr/local/cuda/lib64. The error names every file
// tried and dlerror()'s reason for each.
Status GetCublas(const Cublas** out);

Status CublasStatus(cublasStatus_t s, const char* what);

}  // namespace cuda
}  // namespace onyx

// RAII holders of cuDNN descriptors, and the cuDNN data type of an element type.
#pragma once

#include <vector>

#include "providers/cuda/cuda_kernel.h"

namespace onyx {
namespace cuda {

inline bool CudnnType(ElemType t, cudnnDataType_t* out) {
  switch (t) {
    case ElemType::kFloat: *out = CUDNN_DATA_FLOAT; return true;
    case ElemType::kFloat16: *out = CUDNN_DATA_HALF; return true;
    case ElemType::kDouble: *out = CUDNN_DATA_DOUBLE; return true;
    default: return false;
  }
}

// Packed (row-major) tensor descriptor of `dims`, padded to rank 4 with 1s.
class TensorDesc {
 public:
  explicit TensorDesc(const Cudnn* dnn) : dnn_(dnn) {}
  ~TensorDesc() {
    if (d_) dnn_->cudnnDestroyTensorDescriptor(d_);
  }
  Status Set(cudnnDataType_t t, std::vector<int64_t> dims) {
    if (!d_) ONYX_RETURN_IF_ERROR(CudnnStatus(dnn_->cudnnCreateTensorDescriptor(&d_), "cudnnCreateTensorDescriptor"));
    while (dims.size() < 4) dims.push_back(1);
    std::vector<int> d(dims.begin(), dims.end()), s(dims.size(), 1);
    for (int i = static_cast<int>(d.size()) - 2; i >= 0; --i) s[i] = s[i + 1] * d[i + 1];
    return CudnnStatus(dnn_->cudnnSetTensorNdDescriptor(d_, t, static_cast<int>(d.size()), d.data(), s.data()),
                       "cudnnSetTensorNdDescriptor");
  }
  cudnnTensorDescriptor_t get() const { return d_; }

 private:
  const Cudnn* dnn_;
  cudnnTensorDescriptor_t d_ = nullptr;
};

class FilterDesc {
 public:
  explicit FilterDesc(const Cudnn* dnn) : dnn_(dnn) {}
  ~FilterDesc() {
    if (d_) dnn_->cudnnDestroyFilterDescriptor(d_);
  }
  Status Set(cudnnDataType_t t, std::vector<int64_t> dims) {
    ONYX_RETURN_IF_ERROR(CudnnStatus(dnn_->cudnnCreateFilterDescriptor(&d_), "cudnnCreateFilterDescriptor"));
    while (dims.size() < 4) dims.push_back(1);
    std::vector<int> d(dims.begin(), dims.end());
    return CudnnStatus(dnn_->cudnnSetFilterNdDescriptor(d_, t, CUDNN_TENSOR_NCHW, static_cast<int>(d.size()), d.data()),
                       "cudnnSetFilterNdDescriptor");
  }
  cudnnFilterDescriptor_t get() const { return d_; }

 private:
  const Cudnn* dnn_;
  cudnnFilterDescriptor_t d_ = nullptr;
};

class ConvDesc {
 public:
  explicit ConvDesc(const Cudnn* dnn) : dnn_(dnn) {}
  ~ConvDesc() {
    if (d_) dnn_->cudnnDestroyConvolutionDescriptor(d_);
  }
  Status Set(const std::vector<int>& pads, const std::vector<int>& strides, const std::vector<int>& dilations,
             int groups, cudnnDataType_t compute, cudnnMathType_t math) {
    ONYX_RETURN_IF_ERROR(CudnnStatus(dnn_->cudnnCreateConvolutionDescriptor(&d_), "cudnnCreateConvolutionDescriptor"));
    ONYX_RETURN_IF_ERROR(CudnnStatus(
        dnn_->cudnnSetConvolutionNdDescriptor(d_, static_cast<int>(pads.size()), pads.data(), strides.data(),
                                              dilations.data(), CUDNN_CROSS_CORRELATION, compute),
        "cudnnSetConvolutionNdDescriptor"));
    ONYX_RETURN_IF_ERROR(CudnnStatus(dnn_->cudnnSetConvolutionGroupCount(d_, groups), "cudnnSetConvolutionGroupCount"));
    return CudnnStatus(dnn_->cudnnSetConvolutionMathType(d_, math), "cudnnSetConvolutionMathType");
  }
  cudnnConvolutionDescriptor_t get() const { return d_; }

 private:
  const Cudnn* dnn_;
  cudnnConvolutionDescriptor_t d_ = nullptr;
};

class PoolDesc {
 public:
  explicit PoolDesc(const Cudnn* dnn) : dnn_(dnn) {}
  ~PoolDesc() {
    if (d_) dnn_->cudnnDestroyPoolingDescriptor(d_);
  }
  Status Set(cudnnPoolingMode_t mode, const std::vector<int>& window, const std::vector<int>& pads,
             const std::vector<int>& strides) {
    ONYX_RETURN_IF_ERROR(CudnnStatus(dnn_->cudnnCreatePoolingDescriptor(&d_), "cudnnCreatePoolingDescriptor"));
    return CudnnStatus(dnn_->cudnnSetPoolingNdDescriptor(d_, mode, CUDNN_PROPAGATE_NAN, static_cast<int>(window.size()),
                                                         window.data(), pads.data(), strides.data()),
                       "cudnnSetPoolingNdDescriptor");
  }
  cudnnPoolingDescriptor_t get() const { return d_; }

 private:
  const Cudnn* dnn_;
  cudnnPoolingDescriptor_t d_ = nullptr;
};

}  // namespace cuda
}  // namespace onyx

// A sparse tensor as onnxruntime's Python and C APIs present one: a format,
// the dense shape, the non-zero values and the index tensors of the format.
//   COO:          indices int64 [nnz] (linear offsets into the dense tensor)
//                 or [nnz, rank] (coordinates), strictly increasing in
//                 row-major order.
//   CSR:          2-D dense shape; inner indices int64 [nnz] (column of each
//                 value, increasing within a row), outer int64 [rows + 1]
//                 (row starts, non-decreasing, first 0, last nnz).
//   Block sparse: values [blocks, bh, bw], indices int32 [2, blocks] (block
//                 row and column), each block inside the dense shape, no
//                 block given twice.
// Engines without sparse kernels densify (Densify) where a dense value is
// needed.
#pragma once

#include <memory>
#include <vector>

#include "core/framework/status.h"
#include "core/framework/tensor.h"

namespace onyx {

// Values match onnxruntime's OrtSparseFormat.
enum class SparseFormat { kUndefined = 0, kCoo = 1, kCsr = 2, kBlockSparse = 4 };

struct SparseTensor {
  SparseFormat format = SparseFormat::kUndefined;
  Dims dense_dims;
  std::shared_ptr<Tensor> values;
  std::vector<std::shared_ptr<Tensor>> indices;  // COO: 1; CSR: inner, outer; block sparse: 1
};

// Checks every rule above (`what` names the value in messages) and fills *out.
Status MakeSparseTensor(const std::string& what, SparseFormat format, Dims dense_dims, std::shared_ptr<Tensor> values,
                        std::vector<std::shared_ptr<Tensor>> indices, SparseTensor* out);

// The dense tensor `s` stands for (zeros elsewhere; strings empty).
Status Densify(const SparseTensor& s, Tensor* out);

}  // namespace onyx

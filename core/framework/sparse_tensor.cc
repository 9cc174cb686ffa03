#include "core/framework/sparse_tensor.h"

#include <algorithm>
#include <cstring>
#include <string>

namespace onyx {
namespace {

bool IsPacked(ElemType t) {
  return t == ElemType::kInt4 || t == ElemType::kUint4 || t == ElemType::kFloat4E2M1 || t == ElemType::kInt2 ||
         t == ElemType::kUint2;
}

Status RequireIndexType(const std::string& what, const char* which, const Tensor& t, ElemType want) {
  ONYX_CHECK_ARG(t.type() == want, what, ": ", which, " indices must be ", ElemTypeName(want), ", got ",
                 ElemTypeName(t.type()));
  return Status::OK();
}

// Linear offsets of a COO tensor's values, checked in range and increasing.
Status CooOffsets(const std::string& what, const SparseTensor& s, int64_t nnz, std::vector<int64_t>* offsets) {
  const Tensor& idx = *s.indices[0];
  ONYX_RETURN_IF_ERROR(RequireIndexType(what, "COO", idx, ElemType::kInt64));
  const int64_t dense_size = ShapeSize(s.dense_dims);
  const int64_t rank = static_cast<int64_t>(s.dense_dims.size());
  const int64_t* p = idx.data<int64_t>();
  offsets->resize(static_cast<size_t>(nnz));
  if (idx.rank() == 1 && idx.size() == nnz) {
    for (int64_t i = 0; i < nnz; ++i) {
      ONYX_CHECK_ARG(p[i] >= 0 && p[i] < dense_size, what, ": COO index ", p[i], " (value ", i,
                     ") is out of range for dense shape ", ShapeToString(s.dense_dims));
      (*offsets)[i] = p[i];
    }
  } else if (idx.rank() == 2 && idx.dims()[0] == nnz && idx.dims()[1] == rank) {
    for (int64_t i = 0; i < nnz; ++i) {
      int64_t off = 0;
      for (int64_t d = 0; d < rank; ++d) {
        const int64_t c = p[i * rank + d];
        ONYX_CHECK_ARG(c >= 0 && c < s.dense_dims[d], what, ": COO coordinate ", c, " (value ", i, ", axis ", d,
                       ") is out of range for dense shape ", ShapeToString(s.dense_dims));
        off = off * s.dense_dims[d] + c;
      }
      (*offsets)[i] = off;
    }
  } else {
    return MakeError(ErrorCode::kInvalidArgument, what, ": COO indices of shape ", ShapeToString(idx.dims()),
                     " must be [", nnz, "] or [", nnz, ",", rank, "] for ", nnz, " values and dense shape ",
                     ShapeToString(s.dense_dims));
  }
  for (int64_t i = 1; i < nnz; ++i)
    ONYX_CHECK_ARG((*offsets)[i] > (*offsets)[i - 1], what, ": COO indices must be sorted and unique (row-major), ",
                   "but value ", i, " (offset ", (*offsets)[i], ") comes after offset ", (*offsets)[i - 1]);
  return Status::OK();
}

Status CheckCsr(const std::string& what, const SparseTensor& s, int64_t nnz) {
  ONYX_CHECK_ARG(s.dense_dims.size() == 2, what, ": CSR needs a 2-D dense shape, got ", ShapeToString(s.dense_dims));
  const Tensor& inner = *s.indices[0];
  const Tensor& outer = *s.indices[1];
  ONYX_RETURN_IF_ERROR(RequireIndexType(what, "CSR inner", inner, ElemType::kInt64));
  ONYX_RETURN_IF_ERROR(RequireIndexType(what, "CSR outer", outer, ElemType::kInt64));
  const int64_t rows = s.dense_dims[0], cols = s.dense_dims[1];
  ONYX_CHECK_ARG(inner.rank() == 1 && inner.size() == nnz, what, ": CSR inner indices of shape ",
                 ShapeToString(inner.dims()), " must be [", nnz, "] (one per value)");
  ONYX_CHECK_ARG(outer.rank() == 1 && outer.size() == rows + 1, what, ": CSR outer indices of shape ",
                 ShapeToString(outer.dims()), " must be [", rows + 1, "] (rows + 1)");
  const int64_t* in = inner.data<int64_t>();
  const int64_t* out = outer.data<int64_t>();
  ONYX_CHECK_ARG(out[0] == 0 && out[rows] == nnz, what, ": CSR outer indices must start at 0 and end at ", nnz,
                 ", got ", out[0], " and ", out[rows]);
  for (int64_t r = 0; r < rows; ++r) {
    ONYX_CHECK_ARG(out[r] <= out[r + 1], what, ": CSR outer indices must not decrease, but ", out[r + 1],
                   " follows ", out[r], " at row ", r);
    for (int64_t k = out[r]; k < out[r + 1]; ++k) {
      ONYX_CHECK_ARG(in[k] >= 0 && in[k] < cols, what, ": CSR inner index ", in[k], " (value ", k,
                     ") is out of range for ", cols, " columns");
      ONYX_CHECK_ARG(k == out[r] || in[k] > in[k - 1], what, ": CSR inner indices must be sorted and unique within ",
                     "a row, but ", in[k], " follows ", in[k - 1], " in row ", r);
    }
  }
  return Status::OK();
}

Status CheckBlockSparse(const std::string& what, const SparseTensor& s) {
  const Tensor& v = *s.values;
  const Tensor& idx = *s.indices[0];
  ONYX_CHECK_ARG(s.dense_dims.size() == 2, what, ": block sparse needs a 2-D dense shape, got ",
                 ShapeToString(s.dense_dims));
  ONYX_CHECK_ARG(v.rank() == 3, what, ": block sparse values must be [blocks, block_rows, block_cols], got ",
                 ShapeToString(v.dims()));
  ONYX_RETURN_IF_ERROR(RequireIndexType(what, "block sparse", idx, ElemType::kInt32));
  const int64_t blocks = v.dims()[0], bh = v.dims()[1], bw = v.dims()[2];
  ONYX_CHECK_ARG(idx.rank() == 2 && idx.dims()[0] == 2 && idx.dims()[1] == blocks, what,
                 ": block sparse indices of shape ", ShapeToString(idx.dims()), " must be [2, ", blocks, "]");
  ONYX_CHECK_ARG(blocks == 0 || (bh > 0 && bw > 0 && s.dense_dims[0] % bh == 0 && s.dense_dims[1] % bw == 0), what,
                 ": blocks of ", bh, "x", bw, " do not tile dense shape ", ShapeToString(s.dense_dims));
  const int32_t* p = idx.data<int32_t>();
  std::vector<int64_t> seen;
  for (int64_t b = 0; b < blocks; ++b) {
    const int64_t r = p[b], c = p[blocks + b];
    ONYX_CHECK_ARG(r >= 0 && r < s.dense_dims[0] / bh && c >= 0 && c < s.dense_dims[1] / bw, what, ": block ", b,
                   " at (", r, ", ", c, ") is outside dense shape ", ShapeToString(s.dense_dims));
    seen.push_back(r * (s.dense_dims[1] / bw) + c);
  }
  std::sort(seen.begin(), seen.end());
  for (size_t i = 1; i < seen.size(); ++i)
    ONYX_CHECK_ARG(seen[i] != seen[i - 1], what, ": a block is given twice");
  return Status::OK();
}

void CopyElement(ElemType t, const Tensor& src, int64_t from, Tensor* dst, int64_t to) {
  if (t == ElemType::kString) {
    dst->data<std::string>()[to] = src.data<std::string>()[from];
    return;
  }
  const size_t es = ElemSize(t);
  std::memcpy(static_cast<char*>(dst->raw()) + to * es, static_cast<const char*>(src.raw()) + from * es, es);
}

}  // namespace

Status MakeSparseTensor(const std::string& what, SparseFormat format, Dims dense_dims, std::shared_ptr<Tensor> values,
                        std::vector<std::shared_ptr<Tensor>> indices, SparseTensor* out) {
  ONYX_CHECK_ARG(values != nullptr, what, ": values are missing");
  for (int64_t d : dense_dims)
    ONYX_CHECK_ARG(d >= 0, what, ": dense shape ", ShapeToString(dense_dims), " has a negative dimension");
  ONYX_CHECK_ARG(!IsPacked(values->type()), what, ": sparse values of ", ElemTypeName(values->type()),
                 " (packed sub-byte elements) are not supported");
  for (const auto& t : indices) ONYX_CHECK_ARG(t != nullptr, what, ": an index tensor is missing");
  SparseTensor s;
  s.format = format;
  s.dense_dims = std::move(dense_dims);
  s.values = std::move(values);
  s.indices = std::move(indices);
  const size_t want = format == SparseFormat::kCsr ? 2 : 1;
  ONYX_CHECK_ARG(format == SparseFormat::kCoo || format == SparseFormat::kCsr || format == SparseFormat::kBlockSparse,
                 what, ": unknown sparse format ", static_cast<int>(format), " (COO = 1, CSR = 2, block sparse = 4)");
  ONYX_CHECK_ARG(s.indices.size() == want, what, ": this format takes ", want, " index tensor(s), got ",
                 s.indices.size());
  if (format == SparseFormat::kBlockSparse) {
    ONYX_RETURN_IF_ERROR(CheckBlockSparse(what, s));
  } else {
    ONYX_CHECK_ARG(s.values->rank() == 1, what, ": values must be 1-D, got shape ", ShapeToString(s.values->dims()));
    const int64_t nnz = s.values->size();
    ONYX_CHECK_ARG(nnz <= ShapeSize(s.dense_dims), what, ": ", nnz, " values do not fit dense shape ",
                   ShapeToString(s.dense_dims));
    if (format == SparseFormat::kCoo) {
      std::vector<int64_t> offsets;
      ONYX_RETURN_IF_ERROR(CooOffsets(what, s, nnz, &offsets));
    } else {
      ONYX_RETURN_IF_ERROR(CheckCsr(what, s, nnz));
    }
  }
  *out = std::move(s);
  return Status::OK();
}

Status Densify(const SparseTensor& s, Tensor* out) {
  const ElemType t = s.values->type();
  Tensor dense(t, s.dense_dims);
  if (t != ElemType::kString && dense.bytes() > 0) std::memset(dense.raw(), 0, dense.bytes());
  const Tensor& v = *s.values;
  switch (s.format) {
    case SparseFormat::kCoo: {
      std::vector<int64_t> offsets;
      ONYX_RETURN_IF_ERROR(CooOffsets("sparse tensor", s, v.size(), &offsets));
      for (int64_t i = 0; i < v.size(); ++i) CopyElement(t, v, i, &dense, offsets[i]);
      break;
    }
    case SparseFormat::kCsr: {
      const int64_t* in = s.indices[0]->data<int64_t>();
      const int64_t* outer = s.indices[1]->data<int64_t>();
      const int64_t cols = s.dense_dims[1];
      for (int64_t r = 0; r < s.dense_dims[0]; ++r)
        for (int64_t k = outer[r]; k < outer[r + 1]; ++k) CopyElement(t, v, k, &dense, r * cols + in[k]);
      break;
    }
    case SparseFormat::kBlockSparse: {
      const int64_t blocks = v.dims()[0], bh = v.dims()[1], bw = v.dims()[2];
      const int32_t* p = s.indices[0]->data<int32_t>();
      const int64_t cols = s.dense_dims[1];
      for (int64_t b = 0; b < blocks; ++b)
        for (int64_t i = 0; i < bh; ++i)
          for (int64_t j = 0; j < bw; ++j)
            CopyElement(t, v, (b * bh + i) * bw + j, &dense, (p[b] * bh + i) * cols + p[blocks + b] * bw + j);
      break;
    }
    default:
      return MakeError(ErrorCode::kInvalidArgument, "sparse tensor of unknown format ", static_cast<int>(s.format));
  }
  *out = std::move(dense);
  return Status::OK();
}

}  // namespace onyx

// Helpers shared by the index/data-movement kernels (GatherElements, ScatterND,
// Split, Pad, Tile, TopK, Unique, ...): reading small integer inputs, axis
// normalisation and dispatch by storage size for kernels that only move
// elements and never compute with them.
#pragma once

#include <climits>
#include <cstdint>
#include <string>
#include <vector>

#include "core/framework/data_type.h"
#include "core/framework/status.h"
#include "core/framework/tensor.h"
#include "providers/cpu/common/dispatch.h"

namespace onyx {

// A 16-byte element (complex128) moved as a whole.
struct Bytes16 {
  uint64_t lo, hi;
};

// Every element type a data-movement kernel can copy: fixed-size types
// (including complex and the 8-bit floats) and string. Sub-byte types are
// packed two per byte and are not addressable one element at a time.
inline std::vector<ElemType> MovableTypes() {
  return {ElemType::kFloat,         ElemType::kDouble,         ElemType::kFloat16,     ElemType::kBFloat16,
          ElemType::kInt8,          ElemType::kInt16,          ElemType::kInt32,       ElemType::kInt64,
          ElemType::kUint8,         ElemType::kUint16,         ElemType::kUint32,      ElemType::kUint64,
          ElemType::kBool,          ElemType::kString,         ElemType::kComplex64,   ElemType::kComplex128,
          ElemType::kFloat8E4M3FN,  ElemType::kFloat8E4M3FNUZ, ElemType::kFloat8E5M2, ElemType::kFloat8E5M2FNUZ};
}

// Calls fn(TypeTag<S>{}) where S is a type of the same size as `t`'s elements
// (uint8_t, uint16_t, uint32_t, uint64_t, Bytes16) or std::string: for kernels
// that copy elements without looking at their values.
template <typename F>
Status DispatchByStorage(ElemType t, const char* what, F&& fn) {
  if (t == ElemType::kString) return fn(TypeTag<std::string>{});
  switch (ElemSize(t)) {
    case 1: return fn(TypeTag<uint8_t>{});
    case 2: return fn(TypeTag<uint16_t>{});
    case 4: return fn(TypeTag<uint32_t>{});
    case 8: return fn(TypeTag<uint64_t>{});
    case 16: return fn(TypeTag<Bytes16>{});
    default: return UnsupportedType(what, t);
  }
}

// Reads an int32 or int64 tensor (any rank) as int64 values. `op` and `input`
// name the node's operator and the input for errors ("input 1 (split)").
inline Status ReadIndexTensor(const Tensor& t, const char* op, const char* input, std::vector<int64_t>* out) {
  out->resize(static_cast<size_t>(t.size()));
  if (t.type() == ElemType::kInt64) {
    const int64_t* p = t.data<int64_t>();
    for (int64_t i = 0; i < t.size(); ++i) (*out)[i] = p[i];
  } else if (t.type() == ElemType::kInt32) {
    const int32_t* p = t.data<int32_t>();
    for (int64_t i = 0; i < t.size(); ++i) (*out)[i] = p[i];
  } else {
    return MakeError(ErrorCode::kInvalidArgument, op, ": ", input, " must be int32 or int64, got ",
                     ElemTypeName(t.type()));
  }
  return Status::OK();
}

// Reads a scalar or one-element int32/int64 tensor.
inline Status ReadIndexScalar(const Tensor& t, const char* op, const char* input, int64_t* out) {
  ONYX_CHECK_ARG(t.size() == 1 && t.rank() <= 1, op, ": ", input, " must be a scalar or a 1-element tensor, got shape ",
                 ShapeToString(t.dims()));
  std::vector<int64_t> v;
  ONYX_RETURN_IF_ERROR(ReadIndexTensor(t, op, input, &v));
  *out = v[0];
  return Status::OK();
}

// Maps axis in [-rank, rank) to [0, rank); INVALID_ARGUMENT naming `what` otherwise.
inline Status NormalizeAxis(int64_t axis, int64_t rank, const char* op, const char* what, int64_t* out) {
  ONYX_CHECK_ARG(axis >= -rank && axis < rank, op, ": ", what, " ", axis, " is out of range for rank ", rank,
                 " (valid: [", -rank, ", ", rank - 1, "])");
  *out = axis < 0 ? axis + rank : axis;
  return Status::OK();
}

// Checks that the indices shape of an element-wise gather or scatter
// (GatherElements, ScatterElements) fits in the data shape on every dim but
// `axis`; both have the same rank.
inline Status CheckIndicesWithinData(const Dims& ind, const Dims& data, int64_t axis, const char* op) {
  for (int64_t d = 0; d < static_cast<int64_t>(data.size()); ++d)
    ONYX_CHECK_ARG(d == axis || ind[d] <= data[d], op, ": input 1 (indices) shape ", ShapeToString(ind),
                   " exceeds input 0 (data) shape ", ShapeToString(data), " on dim ", d);
  return Status::OK();
}

// Checks that every value of `idx`, an index along `axis` of `data_dims`, is in
// [-dim, dim) and maps the negative ones to [0, dim). `indices` and `data`
// name the two inputs in the error ("input 1 (indices)", "input 0 (data)").
inline Status NormalizeIndexValues(std::vector<int64_t>* idx, const Dims& data_dims, int64_t axis, const char* op,
                                   const char* indices = "input 1 (indices)", const char* data = "input 0 (data)") {
  const int64_t dim = data_dims[axis];
  for (auto& v : *idx) {
    ONYX_CHECK_ARG(v >= -dim && v < dim, op, ": ", indices, " value ", v, " is out of range [", -dim, ", ", dim,
                   ") for axis ", axis, " of ", data, " shape ", ShapeToString(data_dims));
    if (v < 0) v += dim;
  }
  return Status::OK();
}

// Row-major strides of `dims`, in elements.
inline Dims RowMajorStrides(const Dims& dims) {
  Dims s(dims.size());
  int64_t acc = 1;
  for (size_t k = dims.size(); k-- > 0;) {
    s[k] = acc;
    acc *= dims[k];
  }
  return s;
}

// False when the element count of `dims` (all >= 0) overflows int64: an
// output shape built from user values (repeats, pads, depth) is checked with
// this before it is allocated.
inline bool ShapeFits(const Dims& dims) {
  int64_t n = 1;
  for (int64_t d : dims) {
    if (d < 0) return false;
    if (d != 0 && n > INT64_MAX / d) {
      for (int64_t e : dims)
        if (e == 0) return true;
      return false;
    }
    n *= d;
  }
  return true;
}

// Product of dims[begin, end).
inline int64_t DimProduct(const Dims& dims, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t k = begin; k < end && k < dims.size(); ++k) p *= dims[k];
  return p;
}

}  // namespace onyx

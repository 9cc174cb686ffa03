// Shared by the CPU and CUDA MaxPool/AveragePool kernels: the windowed pools'
// attributes, checked once, and the output length and pads of one spatial
// axis (auto_pad, ceil_mode, dilations), so both providers size Y alike.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "providers/kernel.h"

namespace onyx {
namespace pool {

// Spatial dims a windowed pool takes (both providers).
constexpr size_t kMaxSpatialDims = 3;

struct Attrs {
  std::vector<int64_t> kernel, strides, dilations, pads;  // sized to the spatial rank
  std::string auto_pad = "NOTSET";
  int64_t ceil_mode = 0, count_include_pad = 0, storage_order = 0;
};

// Reads and checks the attributes of MaxPool/AveragePool node `op`; missing
// strides, dilations and pads default to 1, 1 and 0.
inline Status ParseAttrs(const KernelInfo& info, const char* op, Attrs* a) {
  a->kernel = info.AttrInts("kernel_shape");
  ONYX_CHECK(!a->kernel.empty(), ErrorCode::kInvalidGraph, op, ": attribute kernel_shape is required");
  ONYX_CHECK(a->kernel.size() <= kMaxSpatialDims, ErrorCode::kNotImplemented, op, ": ", a->kernel.size(),
             " spatial dims are not supported (at most ", kMaxSpatialDims, ")");
  const size_t nd = a->kernel.size();
  for (int64_t v : a->kernel)
    ONYX_CHECK(v > 0, ErrorCode::kInvalidGraph, op, ": attribute kernel_shape has a non-positive value ", v);
  a->strides = info.AttrInts("strides");
  a->dilations = info.AttrInts("dilations");
  a->pads = info.AttrInts("pads");
  if (a->strides.empty()) a->strides.assign(nd, 1);
  if (a->dilations.empty()) a->dilations.assign(nd, 1);
  if (a->pads.empty()) a->pads.assign(2 * nd, 0);
  ONYX_CHECK(a->strides.size() == nd, ErrorCode::kInvalidGraph, op, ": attribute strides has ", a->strides.size(),
             " values but kernel_shape has ", nd);
  ONYX_CHECK(a->dilations.size() == nd, ErrorCode::kInvalidGraph, op, ": attribute dilations has ",
             a->dilations.size(), " values but kernel_shape has ", nd);
  ONYX_CHECK(a->pads.size() == 2 * nd, ErrorCode::kInvalidGraph, op, ": attribute pads has ", a->pads.size(),
             " values but needs ", 2 * nd);
  for (int64_t v : a->strides)
    ONYX_CHECK(v > 0, ErrorCode::kInvalidGraph, op, ": attribute strides has a non-positive value ", v);
  for (int64_t v : a->dilations)
    ONYX_CHECK(v > 0, ErrorCode::kInvalidGraph, op, ": attribute dilations has a non-positive value ", v);
  for (int64_t v : a->pads) ONYX_CHECK(v >= 0, ErrorCode::kInvalidGraph, op, ": attribute pads has a negative value ", v);
  a->auto_pad = info.AttrString("auto_pad", "NOTSET");
  if (a->auto_pad.empty()) a->auto_pad = "NOTSET";
  ONYX_CHECK(a->auto_pad == "NOTSET" || a->auto_pad == "VALID" || a->auto_pad == "SAME_UPPER" ||
                 a->auto_pad == "SAME_LOWER",
             ErrorCode::kInvalidGraph, op, ": attribute auto_pad has unknown value '", a->auto_pad, "'");
  a->ceil_mode = info.AttrInt("ceil_mode", 0);
  ONYX_CHECK(a->ceil_mode == 0 || a->ceil_mode == 1, ErrorCode::kInvalidGraph, op,
             ": attribute ceil_mode must be 0 or 1, got ", a->ceil_mode);
  a->count_include_pad = info.AttrInt("count_include_pad", 0);
  a->storage_order = info.AttrInt("storage_order", 0);
  ONYX_CHECK(a->storage_order == 0 || a->storage_order == 1, ErrorCode::kInvalidGraph, op,
             ": attribute storage_order must be 0 or 1, got ", a->storage_order);
  return Status::OK();
}

// Output length `out` and the leading / trailing pads of spatial axis `j` of
// input X `xd` ([N, C, spatial...]). With ceil_mode the last window must
// start inside the input or the leading pad.
inline Status AxisExtent(const Attrs& a, const char* op, const Dims& xd, size_t j, int64_t* out, int64_t* pb,
                         int64_t* pe) {
  const size_t nd = a.kernel.size();
  const int64_t in = xd[j + 2], s = a.strides[j];
  const int64_t keff = (a.kernel[j] - 1) * a.dilations[j] + 1;
  *pb = a.pads[j];
  *pe = a.pads[j + nd];
  if (a.auto_pad == "VALID") {
    *pb = *pe = 0;
    *out = in >= keff ? (in - keff) / s + 1 : 0;
  } else if (a.auto_pad == "SAME_UPPER" || a.auto_pad == "SAME_LOWER") {
    *out = (in + s - 1) / s;
    const int64_t total = std::max<int64_t>(0, (*out - 1) * s + keff - in);
    *pb = a.auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
    *pe = total - *pb;
  } else {
    const int64_t span = in + *pb + *pe - keff;
    ONYX_CHECK_ARG(span >= 0, op, ": input X ", ShapeToString(xd), " is smaller than the (dilated) kernel ",
                   ShapeToString(a.kernel), " plus pads along spatial dim ", j);
    *out = (a.ceil_mode ? (span + s - 1) / s : span / s) + 1;
    if (a.ceil_mode && (*out - 1) * s >= in + *pb) --*out;
  }
  ONYX_CHECK_ARG(*out > 0 || in == 0, op, ": input X ", ShapeToString(xd), " is smaller than the (dilated) kernel ",
                 ShapeToString(a.kernel), " along spatial dim ", j);
  return Status::OK();
}

}  // namespace pool
}  // namespace onyx

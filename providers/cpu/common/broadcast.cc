#include "providers/cpu/common/broadcast.h"

namespace onyx {

namespace {

std::string ShapesToString(const std::vector<Dims>& shapes) {
  std::string s;
  for (size_t i = 0; i < shapes.size(); ++i) {
    if (i) s += ", ";
    s += ShapeToString(shapes[i]);
  }
  return s;
}

}  // namespace

Status BroadcastShapes(const Dims& a, const Dims& b, Dims* out, const char* op) {
  const size_t rank = std::max(a.size(), b.size());
  Dims r(rank);
  for (size_t k = 0; k < rank; ++k) {
    // Right-aligned: a missing leading dim behaves like 1.
    int64_t da = k < rank - a.size() ? 1 : a[k - (rank - a.size())];
    int64_t db = k < rank - b.size() ? 1 : b[k - (rank - b.size())];
    if (da == db || db == 1) {
      r[k] = da;
    } else if (da == 1) {
      r[k] = db;
    } else {
      return MakeError(ErrorCode::kInvalidArgument, op, ": shapes ", ShapeToString(a), " and ",
                       ShapeToString(b), " cannot be broadcast (dimension ", k, " of the result: ", da,
                       " vs ", db, ")");
    }
  }
  *out = std::move(r);
  return Status::OK();
}

Status BroadcastShapes(const std::vector<Dims>& shapes, Dims* out, const char* op) {
  Dims r;
  for (const Dims& s : shapes) {
    Status st = BroadcastShapes(r, s, &r, op);
    if (!st.ok())
      return MakeError(ErrorCode::kInvalidArgument, op, ": input shapes ", ShapesToString(shapes),
                       " cannot be broadcast together");
  }
  *out = std::move(r);
  return Status::OK();
}

Dims BroadcastStrides(const Dims& in, const Dims& out) {
  Dims strides(out.size(), 0);
  int64_t s = 1;
  const size_t lead = out.size() - in.size();
  for (size_t k = in.size(); k-- > 0;) {
    strides[lead + k] = in[k] == 1 ? 0 : s;
    s *= in[k];
  }
  return strides;
}

Status BroadcastPlan::Init(const std::vector<Dims>& inputs, const Dims& out, const char* op) {
  const size_t n = inputs.size();
  const size_t rank = out.size();
  std::vector<Dims> strides(n);
  for (size_t i = 0; i < n; ++i) {
    const Dims& in = inputs[i];
    bool ok = in.size() <= rank;
    for (size_t k = 0; ok && k < in.size(); ++k) {
      int64_t d = in[k], o = out[rank - in.size() + k];
      ok = d == o || d == 1;
    }
    if (!ok)
      return MakeError(ErrorCode::kInvalidArgument, op, ": input ", i, " of shape ", ShapeToString(in),
                       " cannot be broadcast to shape ", ShapeToString(out));
    strides[i] = BroadcastStrides(in, out);
  }
  inner_step_.assign(n, 0);
  outer_dims_.clear();
  outer_strides_.assign(n, Dims());
  // Bounds every group product below (a fuzzed Expand asked for 2^126 elements).
  if (ShapeSize(out) < 0)
    return MakeError(ErrorCode::kInvalidArgument, op, ": output shape ", ShapeToString(out),
                     " has a negative dimension or more elements than fit in int64");
  if (ShapeSize(out) == 0) {
    inner_ = 0;
    outer_ = 0;
    return Status::OK();
  }
  // Merged groups, innermost first: size and per-input stride.
  std::vector<int64_t> sizes;
  std::vector<Dims> gstrides;
  for (size_t k = rank; k-- > 0;) {
    if (out[k] == 1) continue;
    bool merge = !sizes.empty();
    for (size_t i = 0; merge && i < n; ++i) merge = strides[i][k] == gstrides.back()[i] * sizes.back();
    if (merge) {
      sizes.back() *= out[k];
    } else {
      sizes.push_back(out[k]);
      Dims g(n);
      for (size_t i = 0; i < n; ++i) g[i] = strides[i][k];
      gstrides.push_back(std::move(g));
    }
  }
  if (sizes.empty()) {
    inner_ = 1;
    outer_ = 1;
    return Status::OK();
  }
  inner_ = sizes[0];
  for (size_t i = 0; i < n; ++i) inner_step_[i] = gstrides[0][i];
  outer_ = 1;
  for (size_t g = sizes.size(); g-- > 1;) {
    outer_dims_.push_back(sizes[g]);
    outer_ *= sizes[g];
    for (size_t i = 0; i < n; ++i) outer_strides_[i].push_back(gstrides[g][i]);
  }
  return Status::OK();
}

}  // namespace onyx

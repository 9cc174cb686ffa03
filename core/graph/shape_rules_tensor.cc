// Shape rules: shape-manipulating tensor ops (Reshape, Squeeze, Transpose,
// Concat, Split, Gather, Slice, Expand, Tile, Pad, ...).
#include <algorithm>
#include <climits>
#include <cmath>

#include "core/graph/shape_inference.h"

namespace onyx {
namespace shape_inference {
namespace {

constexpr size_t kMaxData = 4096;  // larger integer tensors are not tracked as data

void SetMaybeShape(InferContext& ctx, size_t o, ElemType e, bool has_shape, const std::vector<Dim>& dims) {
  if (has_shape) ctx.SetTensor(o, e, dims);
  else ctx.SetTensor(o, e);
}


// ---- Reshape ---------------------------------------------------------------

Status Reshape(InferContext& ctx) {
  ElemType e = ctx.InputElem(0);
  if (e == ElemType::kUndefined) return Status::OK();
  IntData shape;
  if (ctx.opset() < 5) {
    const Attribute* a = ctx.node().Attr("shape");
    if (!a) { ctx.SetTensor(0, e); return Status::OK(); }
    for (int64_t v : a->ints) shape.Push(v);
  } else if (const IntData* d = ctx.Data(1)) {
    shape = *d;
  } else {
    SetRankOnly(ctx, 0, e, Len1D(ctx, 1));
    return Status::OK();
  }
  bool allowzero = ctx.opset() >= 14 && ctx.node().AttrInt("allowzero", 0) != 0;
  bool in_shape = ctx.HasShape(0);
  const std::vector<Dim> in = in_shape ? ctx.Dims(0) : std::vector<Dim>{};
  std::vector<Dim> out(shape.size());
  int64_t infer_at = -1;
  bool has_zero = false;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (!shape.known[i]) { out[i] = shape.sym[i]; continue; }
    int64_t v = shape.v[i];
    if (v == -1) {
      if (infer_at >= 0) return ctx.Fail(StrCat("shape ", DimsString(out), " has more than one -1"));
      infer_at = static_cast<int64_t>(i);
    } else if (v < -1) {
      return ctx.Fail(StrCat("shape value ", v, " at index ", i, " is invalid"));
    } else if (v == 0 && !allowzero) {
      if (in_shape && i >= in.size())
        return ctx.Fail(StrCat("shape has 0 at index ", i, " but the input has rank ", in.size(), " (input shapes ",
                               ctx.InputShapes(), ")"));
      out[i] = in_shape ? in[i] : Dim{};
    } else {
      has_zero |= v == 0;
      out[i] = Dim::Of(v);
    }
  }
  if (allowzero && has_zero && infer_at >= 0) return ctx.Fail("shape has both 0 and -1 with allowzero=1");
  auto shape_text = [&]() {
    std::string s = "[";
    for (size_t i = 0; i < shape.size(); ++i) {
      if (i) s += ",";
      s += shape.known[i] ? std::to_string(shape.v[i]) : DimString(shape.sym[i]);
    }
    return s + "]";
  };
  if (in_shape) {
    // Cancel dims that appear on both sides (symbols included) and compare the rest.
    std::vector<Dim> rest_in = in;
    int64_t in_prod = 1, out_prod = 1;
    bool in_known = true, out_known = true;
    for (size_t i = 0; i < out.size(); ++i) {
      if (static_cast<int64_t>(i) == infer_at) continue;
      const Dim& d = out[i];
      if (d.known()) {
        if (__builtin_mul_overflow(out_prod, d.value, &out_prod)) out_known = false;
        continue;
      }
      auto it = d.symbol.empty() ? rest_in.end()
                                 : std::find_if(rest_in.begin(), rest_in.end(),
                                                [&](const Dim& x) { return !x.known() && x.symbol == d.symbol; });
      if (it != rest_in.end()) rest_in.erase(it);
      else out_known = false;
    }
    for (const Dim& d : rest_in) {
      if (!d.known() || __builtin_mul_overflow(in_prod, d.value, &in_prod)) in_known = false;
    }
    if (in_known && out_known) {
      if (infer_at >= 0) {
        if (out_prod == 0 || in_prod % out_prod != 0)
          return ctx.Fail(StrCat("cannot reshape input shapes ", ctx.InputShapes(), " to ", shape_text()));
        out[static_cast<size_t>(infer_at)] = Dim::Of(in_prod / out_prod);
      } else if (in_prod != out_prod) {
        return ctx.Fail(StrCat("cannot reshape input shapes ", ctx.InputShapes(), " to ", shape_text()));
      }
    }
  }
  ctx.SetTensor(0, e, out);
  // Reshape of a tracked integer value (e.g. a scalar to [1]) keeps its data.
  if (const IntData* d = ctx.Data(0)) {
    if (out.size() <= 1) {
      IntData r = *d;
      r.scalar = out.empty();
      ctx.SetOutputData(0, std::move(r));
    }
  }
  return Status::OK();
}

// ---- Squeeze / Unsqueeze ----------------------------------------------------

// Axes from the attribute (before `input_opset`) or input 1; false if not known.
// `present` says whether axes were given at all.
bool AxesOf(InferContext& ctx, int input_opset, std::vector<int64_t>* axes, bool* present) {
  if (ctx.opset() < input_opset) {
    const Attribute* a = ctx.node().Attr("axes");
    *present = a != nullptr;
    if (a) *axes = a->ints;
    return true;
  }
  *present = ctx.HasInput(1);
  if (!*present) return true;
  return ctx.Ints(1, axes);
}

Status Squeeze(InferContext& ctx) {
  ElemType e = ctx.InputElem(0);
  if (e == ElemType::kUndefined) return Status::OK();
  std::vector<int64_t> axes;
  bool present;
  if (!AxesOf(ctx, 13, &axes, &present) || !ctx.HasShape(0)) {
    ctx.SetTensor(0, e);
    return Status::OK();
  }
  const auto& in = ctx.Dims(0);
  int64_t r = static_cast<int64_t>(in.size());
  std::vector<bool> drop(in.size(), false);
  if (!present || axes.empty()) {
    for (size_t i = 0; i < in.size(); ++i) {
      if (!in[i].known()) {  // might be 1: the rank is not known
        ctx.SetTensor(0, e);
        return Status::OK();
      }
      drop[i] = in[i].value == 1;
    }
  } else {
    for (int64_t a : axes) {
      int64_t n;
      if (!NormalizeAxis(a, r, &n))
        return ctx.Fail(StrCat("axis ", a, " is out of range for input shapes ", ctx.InputShapes()));
      if (in[static_cast<size_t>(n)].known() && in[static_cast<size_t>(n)].value != 1)
        return ctx.Fail(StrCat("cannot squeeze axis ", a, " of size ", in[static_cast<size_t>(n)].value,
                               " (input shapes ", ctx.InputShapes(), ")"));
      drop[static_cast<size_t>(n)] = true;
    }
  }
  std::vector<Dim> out;
  for (size_t i = 0; i < in.size(); ++i)
    if (!drop[i]) out.push_back(in[i]);
  ctx.SetTensor(0, e, out);
  const IntData* d = ctx.Data(0);
  if (d && out.empty() && d->size() == 1) {
    IntData s = *d;
    s.scalar = true;
    ctx.SetOutputData(0, std::move(s));
  } else if (d && out.size() == 1) {
    ctx.SetOutputData(0, *d);
  }
  return Status::OK();
}

Status Unsqueeze(InferContext& ctx) {
  ElemType e = ctx.InputElem(0);
  if (e == ElemType::kUndefined) return Status::OK();
  std::vector<int64_t> axes;
  bool present;
  if (!AxesOf(ctx, 13, &axes, &present) || !ctx.HasShape(0)) {
    ctx.SetTensor(0, e);
    return Status::OK();
  }
  if (!present || axes.empty()) return ctx.Fail("axes are required");
  const auto& in = ctx.Dims(0);
  int64_t r = static_cast<int64_t>(in.size() + axes.size());
  std::vector<bool> inserted(static_cast<size_t>(r), false);
  for (int64_t a : axes) {
    int64_t n;
    if (!NormalizeAxis(a, r, &n))
      return ctx.Fail(StrCat("axis ", a, " is out of range for output rank ", r, " (input shapes ", ctx.InputShapes(), ")"));
    if (inserted[static_cast<size_t>(n)]) return ctx.Fail(StrCat("axis ", a, " is repeated"));
    inserted[static_cast<size_t>(n)] = true;
  }
  std::vector<Dim> out;
  size_t j = 0;
  for (size_t i = 0; i < inserted.size(); ++i) out.push_back(inserted[i] ? Dim::Of(1) : in[j++]);
  ctx.SetTensor(0, e, out);
  if (const IntData* d = ctx.Data(0)) {
    if (out.size() == 1) {
      IntData s = *d;
      s.scalar = false;
      ctx.SetOutputData(0, std::move(s));
    }
  }
  return Status::OK();
}

// ---- Transpose / Flatten ---------------------------------------------------

Status Transpose(InferContext& ctx) {
  ElemType e;
  if (!StartShapedRule(ctx, &e)) return Status::OK();
  const auto& in = ctx.Dims(0);
  std::vector<int64_t> perm = ctx.node().AttrInts("perm");
  if (!ctx.node().Attr("perm"))
    for (size_t i = 0; i < in.size(); ++i) perm.push_back(static_cast<int64_t>(in.size() - 1 - i));
  std::vector<bool> seen(in.size(), false);
  bool ok = perm.size() == in.size();
  for (int64_t p : perm) {
    if (!ok) break;
    if (p < 0 || p >= static_cast<int64_t>(in.size()) || seen[static_cast<size_t>(p)]) ok = false;
    else seen[static_cast<size_t>(p)] = true;
  }
  if (!ok) {
    std::string ps = "[";
    for (size_t i = 0; i < perm.size(); ++i) ps += (i ? "," : "") + std::to_string(perm[i]);
    return ctx.Fail(StrCat("perm ", ps, "] is not a permutation of the axes of input shapes ", ctx.InputShapes()));
  }
  std::vector<Dim> out;
  for (int64_t p : perm) out.push_back(in[static_cast<size_t>(p)]);
  ctx.SetTensor(0, e, out);
  return Status::OK();
}

Dim ProductOrSingle(const std::vector<Dim>& d, size_t b, size_t e) {
  if (e == b + 1) return d[b];
  return DimProduct(d, b, e);
}

Status Flatten(InferContext& ctx) {
  ElemType e = ctx.InputElem(0);
  if (e == ElemType::kUndefined) return Status::OK();
  if (!ctx.HasShape(0)) {
    ctx.SetTensor(0, e, {Dim{}, Dim{}});
    return Status::OK();
  }
  const auto& in = ctx.Dims(0);
  int64_t r = static_cast<int64_t>(in.size());
  int64_t axis = ctx.node().AttrInt("axis", 1);
  if (axis < 0) axis += r;
  if (axis < 0 || axis > r)
    return ctx.Fail(StrCat("axis ", ctx.node().AttrInt("axis", 1), " is out of range for input shapes ", ctx.InputShapes()));
  size_t a = static_cast<size_t>(axis);
  ctx.SetTensor(0, e, {ProductOrSingle(in, 0, a), ProductOrSingle(in, a, in.size())});
  return Status::OK();
}

// ---- Concat / Split --------------------------------------------------------

// Concat over inputs first, first + step, ...: every input for Concat; the
// X of each (X, X_scale, X_zero_point) for com.microsoft QLinearConcat.
Status ConcatOf(InferContext& ctx, size_t start, size_t step) {
  ElemType e = ElemType::kUndefined;
  size_t e_at = 0;
  for (size_t i = start; i < ctx.num_inputs(); i += step) {
    ElemType ei = ctx.InputElem(i);
    if (ei == ElemType::kUndefined) continue;
    if (e == ElemType::kUndefined) {
      e = ei;
      e_at = i;
    } else if (e != ei) {
      return ctx.Fail(StrCat("input element types ", ElemTypeName(e), " and ", ElemTypeName(ei),
                             " differ (inputs ", e_at, " and ", i, ")"));
    }
  }
  if (e == ElemType::kUndefined) return Status::OK();
  const Attribute* axis_attr = ctx.node().Attr("axis");
  int64_t rank = -1;
  for (size_t i = start; i < ctx.num_inputs(); i += step) {
    if (!ctx.HasShape(i)) continue;
    int64_t ri = ctx.Rank(i);
    if (rank < 0) rank = ri;
    else if (rank != ri)
      return ctx.Fail(StrCat("inputs have different ranks ", rank, " and ", ri, " (input shapes ", ctx.InputShapes(), ")"));
  }
  if (rank < 0 || !axis_attr) {
    ctx.SetTensor(0, e);
    return Status::OK();
  }
  int64_t axis;
  if (!NormalizeAxis(axis_attr->i, rank, &axis))
    return ctx.Fail(StrCat("axis ", axis_attr->i, " is out of range for input shapes ", ctx.InputShapes()));
  std::vector<Dim> out(static_cast<size_t>(rank));
  bool first = true, all_known = true;
  int64_t sum = 0;
  size_t n_shaped = 0;
  Dim only;
  for (size_t i = start; i < ctx.num_inputs(); i += step) {
    if (!ctx.HasInput(i)) continue;
    if (!ctx.HasShape(i)) { all_known = false; continue; }
    const auto& d = ctx.Dims(i);
    for (size_t k = 0; k < d.size(); ++k) {
      if (static_cast<int64_t>(k) == axis) continue;
      if (first) out[k] = d[k];
      else if (!UnifyDim(out[k], d[k], &out[k]))
        return ctx.Fail(StrCat("dimension ", k, " differs between input shapes ", ctx.InputShapes()));
    }
    first = false;
    ++n_shaped;
    only = d[static_cast<size_t>(axis)];
    if (!only.known() || __builtin_add_overflow(sum, only.value, &sum)) all_known = false;
  }
  out[static_cast<size_t>(axis)] = all_known ? Dim::Of(sum) : (n_shaped == 1 && ctx.num_inputs() == start + 1 ? only : Dim{});
  ctx.SetTensor(0, e, out);
  // Concatenation of tracked 1-D integer values (torch's shape lists).
  if (rank == 1 && step == 1) {
    IntData r;
    for (size_t i = start; i < ctx.num_inputs(); i += step) {
      if (!ctx.HasInput(i)) continue;
      const IntData* d = ctx.Data(i);
      if (!d || r.size() + d->size() > kMaxData) return Status::OK();
      for (size_t k = 0; k < d->size(); ++k) {
        if (d->known[k]) r.Push(d->v[k]);
        else r.PushDim(d->sym[k]);
      }
    }
    ctx.SetOutputData(0, std::move(r));
  }
  return Status::OK();
}

Status Concat(InferContext& ctx) { return ConcatOf(ctx, 0, 1); }

Status Split(InferContext& ctx) {
  ElemType e = ctx.InputElem(0);
  if (e == ElemType::kUndefined) return Status::OK();
  size_t n_out = ctx.num_outputs();
  if (!ctx.HasShape(0)) {
    for (size_t o = 0; o < n_out; ++o) ctx.SetTensor(o, e);
    return Status::OK();
  }
  const auto& in = ctx.Dims(0);
  int64_t axis;
  if (!NormalizeAxis(ctx.node().AttrInt("axis", 0), static_cast<int64_t>(in.size()), &axis))
    return ctx.Fail(StrCat("axis ", ctx.node().AttrInt("axis", 0), " is out of range for input shapes ", ctx.InputShapes()));
  std::vector<int64_t> split;
  bool have_split = false;
  if (ctx.opset() < 13) {
    if (const Attribute* a = ctx.node().Attr("split")) { split = a->ints; have_split = !split.empty(); }
  } else if (ctx.HasInput(1)) {
    if (!ctx.Ints(1, &split)) {
      for (size_t o = 0; o < n_out; ++o) SetRankOnly(ctx, o, e, static_cast<int64_t>(in.size()));
      return Status::OK();
    }
    have_split = true;
  }
  const Dim& d = in[static_cast<size_t>(axis)];
  std::vector<Dim> parts(n_out);
  if (have_split) {
    if (split.size() != n_out) return ctx.Fail(StrCat("split has ", split.size(), " values for ", n_out, " outputs"));
    int64_t sum = 0;
    for (int64_t s : split) {
      if (s < 0) return ctx.Fail(StrCat("split value ", s, " is negative"));
      if (__builtin_add_overflow(sum, s, &sum)) return ctx.Fail("split values overflow");
    }
    if (d.known() && sum != d.value)
      return ctx.Fail(StrCat("split values sum to ", sum, " but axis ", axis, " of input shapes ", ctx.InputShapes(),
                             " has ", d.value));
    for (size_t o = 0; o < n_out; ++o) parts[o] = Dim::Of(split[o]);
  } else if (d.known() && n_out > 0) {
    int64_t n = static_cast<int64_t>(n_out);
    if (ctx.opset() >= 18) {
      int64_t chunk = (d.value + n - 1) / n;
      for (size_t o = 0; o < n_out; ++o) {
        int64_t start = chunk * static_cast<int64_t>(o);
        parts[o] = Dim::Of(std::max<int64_t>(0, std::min(chunk, d.value - start)));
      }
    } else if (d.value % n == 0) {
      for (size_t o = 0; o < n_out; ++o) parts[o] = Dim::Of(d.value / n);
    } else {
      return ctx.Fail(StrCat("axis ", axis, " of input shapes ", ctx.InputShapes(), " cannot be split evenly into ", n,
                             " outputs"));
    }
  }
  for (size_t o = 0; o < n_out; ++o) {
    std::vector<Dim> out = in;
    out[static_cast<size_t>(axis)] = parts[o];
    ctx.SetTensor(o, e, out);
  }
  return Status::OK();
}

// ---- Gather ------------------------------------------------------------------

Status Gather(InferContext& ctx) {
  ElemType e = ctx.InputElem(0);
  if (e == ElemType::kUndefined) return Status::OK();
  if (!ctx.HasShape(0) || !ctx.HasShape(1)) {
    ctx.SetTensor(0, e);
    return Status::OK();
  }
  const auto& data = ctx.Dims(0);
  const auto& idx = ctx.Dims(1);
  int64_t axis;
  if (!NormalizeAxis(ctx.node().AttrInt("axis", 0), static_cast<int64_t>(data.size()), &axis))
    return ctx.Fail(StrCat("axis ", ctx.node().AttrInt("axis", 0), " is out of range for input shapes ", ctx.InputShapes()));
  std::vector<Dim> out(data.begin(), data.begin() + axis);
  out.insert(out.end(), idx.begin(), idx.end());
  out.insert(out.end(), data.begin() + axis + 1, data.end());
  ctx.SetTensor(0, e, out);
  // Gather from a tracked 1-D value: Shape(x)[i].
  const IntData* d = ctx.Data(0);
  std::vector<int64_t> ind;
  if (d && !d->scalar && axis == 0 && idx.size() <= 1 && ctx.Ints(1, &ind)) {
    IntData r;
    r.scalar = idx.empty();
    int64_t n = static_cast<int64_t>(d->size());
    for (int64_t i : ind) {
      if (i < -n || i >= n)
        return ctx.Fail(StrCat("index ", i, " is out of range for a dimension of size ", n));
      size_t k = static_cast<size_t>(i < 0 ? i + n : i);
      if (d->known[k]) r.Push(d->v[k]);
      else r.PushDim(d->sym[k]);
    }
    ctx.SetOutputData(0, std::move(r));
  }
  return Status::OK();
}

Status GatherElements(InferContext& ctx) {
  ElemType e = ctx.InputElem(0);
  if (e == ElemType::kUndefined) return Status::OK();
  SetMaybeShape(ctx, 0, e, ctx.HasShape(1), ctx.Dims(1));
  return Status::OK();
}

Status GatherND(InferContext& ctx) {
  ElemType e = ctx.InputElem(0);
  if (e == ElemType::kUndefined) return Status::OK();
  if (!ctx.HasShape(0) || !ctx.HasShape(1) || ctx.Dims(1).empty() || !ctx.Dims(1).back().known()) {
    ctx.SetTensor(0, e);
    return Status::OK();
  }
  const auto& data = ctx.Dims(0);
  const auto& idx = ctx.Dims(1);
  int64_t b = ctx.node().AttrInt("batch_dims", 0);
  int64_t last = idx.back().value;
  if (b < 0 || b + last > static_cast<int64_t>(data.size()) || b >= static_cast<int64_t>(idx.size()))
    return ctx.Fail(StrCat("indices of input shapes ", ctx.InputShapes(), " do not fit the data (batch_dims ", b, ")"));
  std::vector<Dim> out(idx.begin(), idx.end() - 1);
  out.insert(out.end(), data.begin() + b + last, data.end());
  ctx.SetTensor(0, e, out);
  return Status::OK();
}

// ---- Slice -------------------------------------------------------------------

int64_t Clamp(int64_t v, int64_t lo, int64_t hi) { return std::max(lo, std::min(v, hi)); }

// Elements of one axis of size `dim` that Slice keeps.
int64_t SliceLen(int64_t dim, int64_t start, int64_t end, int64_t step, int64_t* first) {
  if (start < 0) start = start < -dim ? 0 : start + dim;  // keeps INT64_MIN from overflowing
  if (end < 0) end = end < -dim ? -1 : end + dim;
  if (step > 0) {
    start = Clamp(start, 0, dim);
    end = Clamp(end, 0, dim);
  } else {
    start = Clamp(start, 0, dim - 1);
    end = Clamp(end, -1, dim - 1);
  }
  *first = start;
  if (step > 0) return end > start ? (end - start - 1) / step + 1 : 0;
  return start > end ? (start - end - 1) / (-step) + 1 : 0;
}

Status Slice(InferContext& ctx) {
  ElemType e;
  if (!StartShapedRule(ctx, &e)) return Status::OK();
  const auto& in = ctx.Dims(0);
  int64_t r = static_cast<int64_t>(in.size());
  std::vector<int64_t> starts, ends, axes, steps;
  bool have_se, have_axes = true, have_steps = true;
  if (ctx.opset() < 10) {
    starts = ctx.node().AttrInts("starts");
    ends = ctx.node().AttrInts("ends");
    axes = ctx.node().AttrInts("axes");
    have_se = ctx.node().Attr("starts") && ctx.node().Attr("ends");
  } else {
    have_se = ctx.Ints(1, &starts) && ctx.Ints(2, &ends);
    if (ctx.HasInput(3)) have_axes = ctx.Ints(3, &axes);
    if (ctx.HasInput(4)) have_steps = ctx.Ints(4, &steps);
  }
  if (!have_se || !have_axes || !have_steps) {
    std::vector<Dim> out = in;
    if (have_axes && ctx.HasInput(3)) {
      for (int64_t a : axes) {
        int64_t n;
        if (NormalizeAxis(a, r, &n)) out[static_cast<size_t>(n)] = Dim{};
      }
    } else {
      out.assign(in.size(), Dim{});
    }
    ctx.SetTensor(0, e, out);
    return Status::OK();
  }
  if (starts.size() != ends.size())
    return ctx.Fail(StrCat("starts has ", starts.size(), " values but ends has ", ends.size()));
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (axes.size() != starts.size() || steps.size() != starts.size())
    return ctx.Fail(StrCat("starts, ends, axes and steps must have the same length"));
  std::vector<Dim> out = in;
  std::vector<bool> seen(in.size(), false);
  int64_t data_first = 0, data_step = 1, data_len = -1;
  for (size_t i = 0; i < axes.size(); ++i) {
    int64_t a;
    if (!NormalizeAxis(axes[i], r, &a))
      return ctx.Fail(StrCat("axis ", axes[i], " is out of range for input shapes ", ctx.InputShapes()));
    if (seen[static_cast<size_t>(a)]) return ctx.Fail(StrCat("axis ", axes[i], " is repeated"));
    seen[static_cast<size_t>(a)] = true;
    if (steps[i] == 0) return ctx.Fail("steps must not be 0");
    const Dim& d = in[static_cast<size_t>(a)];
    if (d.known()) {
      int64_t first;
      int64_t len = SliceLen(d.value, starts[i], ends[i], steps[i], &first);
      out[static_cast<size_t>(a)] = Dim::Of(len);
      if (a == 0) { data_first = first; data_step = steps[i]; data_len = len; }
    } else if (starts[i] == 0 && steps[i] == 1 && ends[i] >= (INT64_MAX >> 1)) {
      // [0:INT_MAX] of a symbolic dim keeps it.
    } else {
      out[static_cast<size_t>(a)] = Dim{};
    }
  }
  ctx.SetTensor(0, e, out);
  const IntData* d = ctx.Data(0);
  if (d && !d->scalar && r == 1) {
    if (!seen[0]) {
      ctx.SetOutputData(0, *d);
    } else if (data_len >= 0) {
      IntData s;
      for (int64_t k = 0; k < data_len; ++k) {
        size_t idx = static_cast<size_t>(data_first + k * data_step);
        if (idx >= d->size()) return Status::OK();
        if (d->known[idx]) s.Push(d->v[idx]);
        else s.PushDim(d->sym[idx]);
      }
      ctx.SetOutputData(0, std::move(s));
    }
  }
  return Status::OK();
}

// ---- Expand / Tile / Pad -----------------------------------------------------

Status Expand(InferContext& ctx) {
  ElemType e = ctx.InputElem(0);
  if (e == ElemType::kUndefined) return Status::OK();
  const IntData* s = ctx.Data(1);
  if (!s) {
    int64_t n = Len1D(ctx, 1);
    if (n >= 0 && ctx.HasShape(0)) SetRankOnly(ctx, 0, e, std::max<int64_t>(n, ctx.Rank(0)));
    else ctx.SetTensor(0, e);
    return Status::OK();
  }
  std::vector<Dim> shape;
  for (size_t i = 0; i < s->size(); ++i) {
    if (s->known[i] && s->v[i] < 0) return ctx.Fail(StrCat("shape value ", s->v[i], " is negative"));
    shape.push_back(s->AsDim(i));
  }
  if (!ctx.HasShape(0)) {
    SetRankOnly(ctx, 0, e, static_cast<int64_t>(shape.size()));
    return Status::OK();
  }
  std::vector<Dim> out;
  if (!BroadcastShapes(ctx.Dims(0), shape, &out))
    return ctx.Fail(StrCat("cannot broadcast input shapes ", ctx.InputShapes(), " to ", DimsString(shape)));
  ctx.SetTensor(0, e, out);
  return Status::OK();
}

Status Tile(InferContext& ctx) {
  ElemType e;
  if (!StartShapedRule(ctx, &e)) return Status::OK();
  const auto& in = ctx.Dims(0);
  const IntData* rep = ctx.Data(1);
  if (!rep) {
    SetRankOnly(ctx, 0, e, static_cast<int64_t>(in.size()));
    return Status::OK();
  }
  if (rep->size() != in.size())
    return ctx.Fail(StrCat("repeats has ", rep->size(), " values for input shapes ", ctx.InputShapes()));
  std::vector<Dim> out(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    if (!rep->known[i]) continue;
    if (rep->v[i] < 0) return ctx.Fail(StrCat("repeats value ", rep->v[i], " is negative"));
    int64_t p;
    if (rep->v[i] == 1) out[i] = in[i];
    else if (in[i].known() && !__builtin_mul_overflow(in[i].value, rep->v[i], &p)) out[i] = Dim::Of(p);
  }
  ctx.SetTensor(0, e, out);
  return Status::OK();
}

Status Pad(InferContext& ctx) {
  ElemType e;
  if (!StartShapedRule(ctx, &e)) return Status::OK();
  const auto& in = ctx.Dims(0);
  int64_t r = static_cast<int64_t>(in.size());
  std::vector<int64_t> pads, axes;
  bool known;
  if (ctx.opset() < 11) {
    const Attribute* a = ctx.node().Attr("pads");
    if (!a) a = ctx.node().Attr("paddings");
    known = a != nullptr;
    if (a) pads = a->ints;
  } else {
    known = ctx.Ints(1, &pads);
  }
  bool axes_known = true;
  if (ctx.opset() >= 18 && ctx.HasInput(3)) axes_known = ctx.Ints(3, &axes);
  if (!known || !axes_known) {
    SetRankOnly(ctx, 0, e, r);
    return Status::OK();
  }
  if (axes.empty())
    for (int64_t i = 0; i < r; ++i) axes.push_back(i);
  if (pads.size() != 2 * axes.size())
    return ctx.Fail(StrCat("pads has ", pads.size(), " values for ", axes.size(), " axes of input shapes ", ctx.InputShapes()));
  std::vector<Dim> out = in;
  size_t n = axes.size();
  for (size_t i = 0; i < n; ++i) {
    int64_t a;
    if (!NormalizeAxis(axes[i], r, &a))
      return ctx.Fail(StrCat("axis ", axes[i], " is out of range for input shapes ", ctx.InputShapes()));
    Dim& d = out[static_cast<size_t>(a)];
    int64_t add, v;
    if (__builtin_add_overflow(pads[i], pads[i + n], &add)) { d = Dim{}; continue; }
    if (add == 0) continue;
    if (!d.known() || __builtin_add_overflow(d.value, add, &v)) { d = Dim{}; continue; }
    if (v < 0) return ctx.Fail(StrCat("pads make axis ", a, " of input shapes ", ctx.InputShapes(), " negative"));
    d = Dim::Of(v);
  }
  ctx.SetTensor(0, e, out);
  return Status::OK();
}

Status NonZero(InferContext& ctx) {
  ctx.SetTensor(0, ElemType::kInt64, {ctx.HasShape(0) ? Dim::Of(ctx.Rank(0)) : Dim{}, Dim{}});
  return Status::OK();
}

Status TopK(InferContext& ctx) {
  ElemType e = ctx.InputElem(0);
  if (e == ElemType::kUndefined) return Status::OK();
  if (!ctx.HasShape(0)) {
    ctx.SetTensor(0, e);
    ctx.SetTensor(1, ElemType::kInt64);
    return Status::OK();
  }
  std::vector<Dim> out = ctx.Dims(0);
  int64_t axis;
  if (!NormalizeAxis(ctx.node().AttrInt("axis", -1), static_cast<int64_t>(out.size()), &axis))
    return ctx.Fail(StrCat("axis ", ctx.node().AttrInt("axis", -1), " is out of range for input shapes ", ctx.InputShapes()));
  std::vector<int64_t> k;
  if (ctx.opset() < 10) {
    const Attribute* a = ctx.node().Attr("k");
    if (a) k.push_back(a->i);
  } else {
    ctx.Ints(1, &k);
  }
  Dim& d = out[static_cast<size_t>(axis)];
  if (k.size() == 1 && k[0] >= 0) {
    if (d.known() && k[0] > d.value)
      return ctx.Fail(StrCat("k = ", k[0], " exceeds axis ", axis, " of input shapes ", ctx.InputShapes()));
    d = Dim::Of(k[0]);
  } else {
    d = Dim{};
  }
  ctx.SetTensor(0, e, out);
  ctx.SetTensor(1, ElemType::kInt64, out);
  return Status::OK();
}

}  // namespace

void RegisterTensorRules(RuleMap& m) {
  m["Reshape"] = Reshape;
  m["Squeeze"] = Squeeze;
  m["Unsqueeze"] = Unsqueeze;
  m["Transpose"] = Transpose;
  m["Flatten"] = Flatten;
  m["Concat"] = Concat;
  m["com.microsoft:QLinearConcat"] = [](InferContext& c) { return ConcatOf(c, 2, 3); };
  m["Split"] = Split;
  m["Gather"] = Gather;
  m["GatherElements"] = GatherElements;
  m["GatherND"] = GatherND;
  m["Slice"] = Slice;
  m["Expand"] = Expand;
  m["Tile"] = Tile;
  m["Pad"] = Pad;
  m["NonZero"] = NonZero;
  m["TopK"] = TopK;
}

}  // namespace shape_inference
}  // namespace onyx

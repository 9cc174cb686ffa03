// Einsum (opset 12+): numpy's einsum grammar, implicit and explicit output,
// '...' with broadcasting, repeated labels (diagonals), size-1 dims broadcast
// as numpy does. Operands are contracted left to right, each pair as one
// batched GEMM (providers/cpu/math/blas.h): labels both sides still need are
// the batch, labels only they share are summed (K), the rest are M and N.
// A label nothing later needs is summed out of its operand before that.
// float16/bfloat16 are computed in float and rounded once at the end.
#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "providers/cpu/common/dispatch.h"
#include "providers/cpu/math/blas.h"
#include "providers/kernel.h"

namespace onyx {

namespace {

using EinsumTypeSet = NumericOrHalfTypeSet;

// Labels: 'a'-'z' are 0-25, 'A'-'Z' 26-51, the broadcast dims of '...' 52+.
constexpr int kLetters = 52;

int LabelOf(char c) {
  if (c >= 'a' && c <= 'z') return c - 'a';
  if (c >= 'A' && c <= 'Z') return 26 + (c - 'A');
  return -1;
}

// numpy orders an implicit output by character code: capitals first.
int SortKey(int label) { return label < 26 ? 'a' + label : 'A' + (label - 26); }

// One term of the equation: its letters, and where '...' sits (-1 if absent).
struct Term {
  std::vector<int> letters;
  int ellipsis_at = -1;
};

Status ParseTerm(const std::string& eq, const std::string& s, Term* t) {
  for (size_t i = 0; i < s.size();) {
    if (s[i] == '.') {
      ONYX_CHECK_ARG(s.compare(i, 3, "...") == 0, "Einsum: equation '", eq, "': '.' must come as '...' (in term '", s,
                     "')");
      ONYX_CHECK_ARG(t->ellipsis_at < 0, "Einsum: equation '", eq, "': term '", s, "' has more than one '...'");
      t->ellipsis_at = static_cast<int>(t->letters.size());
      i += 3;
      continue;
    }
    const int l = LabelOf(s[i]);
    ONYX_CHECK_ARG(l >= 0, "Einsum: equation '", eq, "': character '", s[i], "' in term '", s,
                   "' is not a letter, '...', ',' or '->'");
    t->letters.push_back(l);
    ++i;
  }
  return Status::OK();
}

struct Equation {
  std::vector<Term> inputs;
  bool explicit_output = false;
  Term output;
};

Status ParseEquation(const std::string& raw, Equation* e) {
  std::string eq;
  for (char c : raw)
    if (c != ' ') eq.push_back(c);
  const size_t arrow = eq.find("->");
  ONYX_CHECK_ARG(arrow == std::string::npos || eq.find("->", arrow + 2) == std::string::npos, "Einsum: equation '",
                 raw, "' has more than one '->'");
  const std::string lhs = eq.substr(0, arrow);
  size_t start = 0;
  while (true) {
    const size_t comma = lhs.find(',', start);
    Term t;
    ONYX_RETURN_IF_ERROR(ParseTerm(raw, lhs.substr(start, comma == std::string::npos ? std::string::npos
                                                                                       : comma - start), &t));
    e->inputs.push_back(std::move(t));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (arrow != std::string::npos) {
    e->explicit_output = true;
    const std::string rhs = eq.substr(arrow + 2);
    ONYX_CHECK_ARG(rhs.find(',') == std::string::npos, "Einsum: equation '", raw, "': the output '", rhs,
                   "' may not hold ','");
    ONYX_RETURN_IF_ERROR(ParseTerm(raw, rhs, &e->output));
    std::array<bool, kLetters> seen{}, in_inputs{};
    bool any_ellipsis = false;
    for (const Term& t : e->inputs) {
      for (int l : t.letters) in_inputs[l] = true;
      any_ellipsis = any_ellipsis || t.ellipsis_at >= 0;
    }
    for (int l : e->output.letters) {
      const char c = static_cast<char>(SortKey(l));
      ONYX_CHECK_ARG(!seen[l], "Einsum: equation '", raw, "': output label '", c, "' appears more than once");
      ONYX_CHECK_ARG(in_inputs[l], "Einsum: equation '", raw, "': output label '", c, "' is in no input term");
      seen[l] = true;
    }
    ONYX_CHECK_ARG(e->output.ellipsis_at < 0 || any_ellipsis, "Einsum: equation '", raw,
                   "': the output has '...' but no input term does");
  }
  return Status::OK();
}

// An intermediate operand: contiguous row-major data, one label per dim. It
// reads `ptr`: its own `data`, or an input it can use as it is (no copy).
template <typename C>
struct Operand {
  std::vector<C> data;
  const C* ptr = nullptr;
  std::vector<int> labels;
  Dims dims;
  void Own() { ptr = data.data(); }
};

// out[idx] = src[sum idx_d * strides[d]] for every index of `dims`, row-major.
template <typename C>
void StridedCopy(const C* src, const Dims& dims, const std::vector<int64_t>& strides, C* out) {
  const int64_t n = ShapeSize(dims);
  if (n == 0) return;
  const size_t r = dims.size();
  if (r == 0) {
    out[0] = src[0];
    return;
  }
  std::vector<int64_t> idx(r, 0);
  int64_t off = 0;
  const int64_t inner = dims[r - 1], inner_stride = strides[r - 1];
  for (int64_t i = 0; i < n; i += inner) {
    const C* s = src + off;
    if (inner_stride == 1) {
      std::copy(s, s + inner, out + i);
    } else {
      for (int64_t j = 0; j < inner; ++j) out[i + j] = s[j * inner_stride];
    }
    for (size_t d = r - 1; d-- > 0;) {
      off += strides[d];
      if (++idx[d] < dims[d]) break;
      off -= strides[d] * dims[d];
      idx[d] = 0;
    }
  }
}

// Row-major strides of `dims`, 0 along dims of size 1 (they broadcast).
Dims BroadcastableStrides(const Dims& dims) {
  Dims s(dims.size(), 0);
  int64_t acc = 1;
  for (size_t d = dims.size(); d-- > 0;) {
    s[d] = dims[d] == 1 ? 0 : acc;
    acc *= dims[d];
  }
  return s;
}

class EinsumKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    const Attribute* a = info.Attr("equation");
    ONYX_CHECK_ARG(a != nullptr, "Einsum: attribute 'equation' is required");
    equation_ = info.AttrString("equation", "");
    ONYX_RETURN_IF_ERROR(ParseEquation(equation_, &eq_));
    ONYX_CHECK_ARG(static_cast<int>(eq_.inputs.size()) == info.InputCount(), "Einsum: equation '", equation_,
                   "' has ", eq_.inputs.size(), " input terms but the node has ", info.InputCount(), " inputs");
    return Status::OK();
  }

  Status Compute(KernelContext& ctx) const override {
    const int n = static_cast<int>(eq_.inputs.size());
    ONYX_CHECK_ARG(ctx.InputCount() == n, "Einsum: equation '", equation_, "' has ", n, " input terms but ",
                   ctx.InputCount(), " inputs were given");
    std::vector<const Tensor*> xs(n);
    for (int i = 0; i < n; ++i) {
      ONYX_RETURN_IF_ERROR(ctx.RequiredInput(i, &xs[i]));
      ONYX_CHECK_ARG(xs[i]->type() == xs[0]->type(), "Einsum: input ", i, " has type ", ElemTypeName(xs[i]->type()),
                     " but input 0 has type ", ElemTypeName(xs[0]->type()));
    }
    return DispatchOver(EinsumTypeSet{}, xs[0]->type(), "Einsum", [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      constexpr bool kHalf = std::is_same<T, Float16>::value || std::is_same<T, BFloat16>::value;
      using C = std::conditional_t<kHalf, float, T>;
      return Run<T, C>(ctx, xs);
    });
  }

 private:
  // Each input's labels per dim ('...' expanded), the broadcast rank of '...',
  // and the size of every label (checked: equal, or 1 broadcast).
  Status LabelDims(const std::vector<const Tensor*>& xs, std::vector<std::vector<int>>* labels, int* ell_rank,
                   std::vector<int64_t>* size) const {
    const int n = static_cast<int>(xs.size());
    *ell_rank = 0;
    for (int i = 0; i < n; ++i) {
      const Term& t = eq_.inputs[i];
      const int64_t r = static_cast<int64_t>(xs[i]->rank()), nl = static_cast<int64_t>(t.letters.size());
      if (t.ellipsis_at < 0) {
        ONYX_CHECK_ARG(r == nl, "Einsum: equation '", equation_, "': input ", i, " has rank ", r, " (shape ",
                       ShapeToString(xs[i]->dims()), ") but its term has ", nl, " labels");
      } else {
        ONYX_CHECK_ARG(r >= nl, "Einsum: equation '", equation_, "': input ", i, " has rank ", r, " (shape ",
                       ShapeToString(xs[i]->dims()), ") but its term has ", nl, " labels besides '...'");
        *ell_rank = std::max<int>(*ell_rank, static_cast<int>(r - nl));
      }
    }
    size->assign(kLetters + *ell_rank, -1);
    labels->resize(n);
    for (int i = 0; i < n; ++i) {
      const Term& t = eq_.inputs[i];
      const Dims& d = xs[i]->dims();
      const int e = static_cast<int>(d.size() - t.letters.size());
      std::vector<int>& ls = (*labels)[i];
      for (int j = 0; j < static_cast<int>(t.letters.size()); ++j) {
        if (j == t.ellipsis_at)
          for (int k = 0; k < e; ++k) ls.push_back(kLetters + *ell_rank - e + k);
        ls.push_back(t.letters[j]);
      }
      if (t.ellipsis_at == static_cast<int>(t.letters.size()))
        for (int k = 0; k < e; ++k) ls.push_back(kLetters + *ell_rank - e + k);
      for (size_t k = 0; k < ls.size(); ++k) {
        int64_t& s = (*size)[ls[k]];
        if (s == -1 || s == 1) {
          s = d[k];
        } else if (d[k] != 1 && d[k] != s) {
          if (ls[k] < kLetters)
            return MakeError(ErrorCode::kInvalidArgument, "Einsum: equation '", equation_, "': label '",
                             static_cast<char>(SortKey(ls[k])), "' has size ", d[k], " in input ", i, " (shape ",
                             ShapeToString(d), ") but size ", s, " elsewhere");
          return MakeError(ErrorCode::kInvalidArgument, "Einsum: equation '", equation_, "': the dims of '...' in input ",
                           i, " (shape ", ShapeToString(d), ") do not broadcast with the other inputs");
        }
      }
    }
    return Status::OK();
  }

  template <typename T, typename C>
  Status Run(KernelContext& ctx, const std::vector<const Tensor*>& xs) const {
    const int n = static_cast<int>(xs.size());
    std::vector<std::vector<int>> in_labels;
    int ell_rank = 0;
    std::vector<int64_t> size;
    ONYX_RETURN_IF_ERROR(LabelDims(xs, &in_labels, &ell_rank, &size));

    // Output labels.
    std::vector<int> out_labels;
    if (eq_.explicit_output) {
      const Term& t = eq_.output;
      for (int j = 0; j <= static_cast<int>(t.letters.size()); ++j) {
        if (j == t.ellipsis_at)
          for (int k = 0; k < ell_rank; ++k) out_labels.push_back(kLetters + k);
        if (j < static_cast<int>(t.letters.size())) out_labels.push_back(t.letters[j]);
      }
      ONYX_CHECK_ARG(t.ellipsis_at >= 0 || ell_rank == 0, "Einsum: equation '", equation_,
                     "': '...' stands for ", ell_rank, " dims in the inputs but the output has no '...'");
    } else {
      std::vector<int> count(kLetters, 0);
      for (const Term& t : eq_.inputs)
        for (int l : t.letters) ++count[l];
      for (int k = 0; k < ell_rank; ++k) out_labels.push_back(kLetters + k);
      std::vector<int> once;
      for (int l = 0; l < kLetters; ++l)
        if (count[l] == 1) once.push_back(l);
      std::sort(once.begin(), once.end(), [](int a, int b) { return SortKey(a) < SortKey(b); });
      out_labels.insert(out_labels.end(), once.begin(), once.end());
    }
    Dims out_dims;
    for (int l : out_labels) out_dims.push_back(size[l]);
    for (int64_t& s : size)
      if (s < 0) s = 1;

    // Operands in the compute type, repeated labels taken along their diagonal.
    std::vector<Operand<C>> ops(n);
    for (int i = 0; i < n; ++i) {
      const Tensor& x = *xs[i];
      const std::vector<int>& ls = in_labels[i];
      Dims strides(ls.size());
      int64_t acc = 1;
      for (size_t d = ls.size(); d-- > 0;) {
        strides[d] = acc;
        acc *= x.dims()[d];
      }
      Operand<C>& o = ops[i];
      std::vector<int64_t> ostrides;
      for (size_t d = 0; d < ls.size(); ++d) {
        auto it = std::find(o.labels.begin(), o.labels.end(), ls[d]);
        if (it == o.labels.end()) {
          o.labels.push_back(ls[d]);
          o.dims.push_back(x.dims()[d]);
          ostrides.push_back(x.dims()[d] == 1 ? 0 : strides[d]);
        } else {
          const size_t p = static_cast<size_t>(it - o.labels.begin());
          ONYX_CHECK_ARG(o.dims[p] == x.dims()[d], "Einsum: equation '", equation_, "': label '",
                         static_cast<char>(SortKey(ls[d])), "' repeats in input ", i, " (shape ",
                         ShapeToString(x.dims()), ") over dims of different sizes");
          ostrides[p] += strides[d];
        }
      }
      const T* src = x.data<T>();
      if constexpr (std::is_same<T, C>::value) {
        if (o.dims == x.dims()) {  // no repeated label: read the input in place
          o.ptr = src;
          continue;
        }
        o.data.resize(static_cast<size_t>(ShapeSize(o.dims)));
        StridedCopy(src, o.dims, ostrides, o.data.data());
      } else {
        o.data.resize(static_cast<size_t>(ShapeSize(o.dims)));
        std::vector<C> wide(static_cast<size_t>(x.size()));
        for (int64_t k = 0; k < x.size(); ++k) wide[k] = static_cast<C>(src[k]);
        StridedCopy(wide.data(), o.dims, ostrides, o.data.data());
      }
      o.Own();
    }

    auto needed_after = [&](int i) {
      std::vector<bool> need(size.size(), false);
      for (int l : out_labels) need[l] = true;
      for (int j = i + 1; j < n; ++j)
        for (int l : ops[j].labels) need[l] = true;
      return need;
    };
    Operand<C> cur = std::move(ops[0]);
    for (int i = 1; i < n; ++i) {
      const std::vector<bool> need = needed_after(i);
      SumOut(&cur, need, ops[i].labels);
      SumOut(&ops[i], need, cur.labels);
      ONYX_RETURN_IF_ERROR(Contract(ctx, cur, ops[i], need, size, &cur));
      ops[i] = Operand<C>();
    }
    SumOut(&cur, needed_after(n - 1), {});

    Tensor* Y = ctx.Output(0, out_dims, xs[0]->type());
    if (Y == nullptr || Y->size() == 0) return Status::OK();
    // cur holds exactly the output labels; permute (and broadcast size-1 dims) into place.
    std::vector<int64_t> strides(out_labels.size(), 0);
    const Dims cs = BroadcastableStrides(cur.dims);
    for (size_t k = 0; k < out_labels.size(); ++k) {
      const size_t p = static_cast<size_t>(std::find(cur.labels.begin(), cur.labels.end(), out_labels[k]) -
                                           cur.labels.begin());
      strides[k] = cs[p];
    }
    if constexpr (std::is_same<T, C>::value) {
      StridedCopy(cur.ptr, out_dims, strides, Y->data<T>());
    } else {
      std::vector<C> tmp(static_cast<size_t>(Y->size()));
      StridedCopy(cur.ptr, out_dims, strides, tmp.data());
      T* y = Y->data<T>();
      for (int64_t k = 0; k < Y->size(); ++k) y[k] = T(tmp[k]);
    }
    return Status::OK();
  }

  // Sums `o` over its labels that are neither needed later nor in `other`.
  template <typename C>
  static void SumOut(Operand<C>* o, const std::vector<bool>& need, const std::vector<int>& other) {
    std::vector<size_t> keep, drop;
    for (size_t d = 0; d < o->labels.size(); ++d) {
      const int l = o->labels[d];
      const bool in_other = std::find(other.begin(), other.end(), l) != other.end();
      (need[l] || in_other ? keep : drop).push_back(d);
    }
    if (drop.empty()) return;
    Dims dims;
    std::vector<int64_t> strides;
    const Dims cs = BroadcastableStrides(o->dims);
    Operand<C> r;
    for (size_t d : keep) {
      dims.push_back(o->dims[d]);
      strides.push_back(cs[d]);
      r.labels.push_back(o->labels[d]);
      r.dims.push_back(o->dims[d]);
    }
    int64_t inner = 1;
    for (size_t d : drop) {
      dims.push_back(o->dims[d]);
      strides.push_back(cs[d]);
      inner *= o->dims[d];
    }
    const int64_t outer = ShapeSize(r.dims);
    r.data.assign(static_cast<size_t>(outer), C(0));
    if (inner > 0 && outer > 0) {
      std::vector<C> perm(static_cast<size_t>(outer * inner));
      StridedCopy(o->ptr, dims, strides, perm.data());
      for (int64_t i = 0; i < outer; ++i) {
        C s = C(0);
        const C* p = perm.data() + i * inner;
        for (int64_t j = 0; j < inner; ++j) s = static_cast<C>(s + p[j]);
        r.data[i] = s;
      }
    }
    r.Own();
    *o = std::move(r);
  }

  // Lays `o` out as the labels `order` (sizes from `size`, size-1 dims
  // broadcast) unless it already is; returns the data to read.
  template <typename C>
  static const C* Arrange(const Operand<C>& o, const std::vector<int>& order, const std::vector<int64_t>& size,
                          std::vector<C>* scratch) {
    bool same = order == o.labels;
    for (size_t k = 0; same && k < order.size(); ++k) same = o.dims[k] == size[order[k]];
    if (same) return o.ptr;
    Dims dims;
    std::vector<int64_t> strides;
    const Dims cs = BroadcastableStrides(o.dims);
    for (int l : order) {
      dims.push_back(size[l]);
      strides.push_back(cs[static_cast<size_t>(std::find(o.labels.begin(), o.labels.end(), l) - o.labels.begin())]);
    }
    scratch->resize(static_cast<size_t>(ShapeSize(dims)));
    StridedCopy(o.ptr, dims, strides, scratch->data());
    return scratch->data();
  }

  // out = a x b as one batched GEMM over [batch, M, K] x [batch, K, N].
  template <typename C>
  Status Contract(KernelContext& ctx, const Operand<C>& a, const Operand<C>& b, const std::vector<bool>& need,
                  const std::vector<int64_t>& size, Operand<C>* out) const {
    std::vector<int> batch, m, k, nn;
    auto in_b = [&](int l) { return std::find(b.labels.begin(), b.labels.end(), l) != b.labels.end(); };
    auto in_a = [&](int l) { return std::find(a.labels.begin(), a.labels.end(), l) != a.labels.end(); };
    for (int l : a.labels) (in_b(l) ? (need[l] ? batch : k) : m).push_back(l);
    for (int l : b.labels)
      if (!in_a(l)) nn.push_back(l);
    auto prod = [&](const std::vector<int>& ls) {
      int64_t p = 1;
      for (int l : ls) p *= size[l];
      return p;
    };
    const int64_t B = prod(batch), M = prod(m), K = prod(k), N = prod(nn);
    ONYX_CHECK_ARG(FitsBlasInt(M) && FitsBlasInt(N) && FitsBlasInt(K), "Einsum: equation '", equation_,
                   "': a contraction of ", M, "x", K, " by ", K, "x", N, " is too large");
    auto cat = [](std::vector<int> x, const std::vector<int>& y, const std::vector<int>& z) {
      x.insert(x.end(), y.begin(), y.end());
      x.insert(x.end(), z.begin(), z.end());
      return x;
    };
    // Take a transposed layout instead of copying when the operand already has it.
    const std::vector<int> a_mk = cat(batch, m, k), a_km = cat(batch, k, m);
    const std::vector<int> b_kn = cat(batch, k, nn), b_nk = cat(batch, nn, k);
    const bool trans_a = a.labels == a_km && a.labels != a_mk;
    const bool trans_b = b.labels == b_nk && b.labels != b_kn;
    std::vector<C> sa, sb;
    const C* pa = Arrange(a, trans_a ? a_km : a_mk, size, &sa);
    const C* pb = Arrange(b, trans_b ? b_nk : b_kn, size, &sb);
    Operand<C> r;
    r.labels = cat(batch, m, nn);
    for (int l : r.labels) r.dims.push_back(size[l]);
    r.data.resize(static_cast<size_t>(B * M * N));
    C* pc = r.data.data();
    // `pool`: null inside work already spread over the pool.
    auto gemm = [&](int64_t bi, ThreadPool* pool) {
      BlasGemm<C>(trans_a, trans_b, M, N, K, C(1), pa + bi * M * K, trans_a ? M : K, pb + bi * K * N,
                  trans_b ? K : N, C(0), pc + bi * M * N, N, pool);
    };
    const double work = static_cast<double>(M) * static_cast<double>(N) * static_cast<double>(K);
    if (B > 1 && work <= kBlasSingleThreadWork) {
      ThreadPool::For(ctx.threads(), B, std::max<int64_t>(1, static_cast<int64_t>(kBlasSingleThreadWork / (work + 1))),
                      [&](int64_t begin, int64_t end) {
                        for (int64_t bi = begin; bi < end; ++bi) gemm(bi, nullptr);
                      });
    } else {
      for (int64_t bi = 0; bi < B; ++bi) gemm(bi, ctx.threads());
    }
    r.Own();
    *out = std::move(r);
    return Status::OK();
  }

  std::string equation_;
  Equation eq_;
};

}  // namespace

ONYX_REGISTER_KERNEL(EinsumKernel, "", "Einsum", 12, kMaxVersion, EinsumTypeSet::ElemTypes());

}  // namespace onyx

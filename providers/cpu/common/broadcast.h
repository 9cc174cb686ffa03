// Numpy-style multidirectional broadcasting, shared by the elementwise kernels
// (and by anything else that needs the output shape of broadcast inputs).
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/framework/data_type.h"
#include "core/framework/status.h"
#include "core/framework/tensor.h"
#include "core/framework/thread_pool.h"
#include "providers/cpu/common/dispatch.h"

namespace onyx {

// Output shape of broadcasting `a` with `b`. On mismatch: INVALID_ARGUMENT
// naming `op` and both shapes.
Status BroadcastShapes(const Dims& a, const Dims& b, Dims* out, const char* op);
// Output shape of broadcasting every shape in `shapes` together.
Status BroadcastShapes(const std::vector<Dims>& shapes, Dims* out, const char* op);

// Strides (in elements) of a tensor of shape `in` read as if it had shape
// `out` (which `in` broadcasts to): right-aligned, 0 on broadcast dims.
Dims BroadcastStrides(const Dims& in, const Dims& out);

// Walks the output of a broadcast in contiguous runs. Adjacent dims are merged
// wherever every input allows it, so the common cases (same shape, scalar,
// bias [N,C]+[C], mask [B,1,1,S] against [B,H,S,S]) become a few long runs in
// which each input either advances by one element or repeats one element.
class BroadcastPlan {
 public:
  // `inputs` are the input shapes; they must broadcast to `out` (checked).
  Status Init(const std::vector<Dims>& inputs, const Dims& out, const char* op);

  int num_inputs() const { return static_cast<int>(inner_step_.size()); }
  int64_t output_size() const { return outer_ * inner_; }
  // Length of one run and, per input, its step inside a run (0 or 1).
  int64_t inner() const { return inner_; }
  int64_t inner_step(int i) const { return inner_step_[i]; }

  // Calls fn(out_offset, in_offsets, len) for each contiguous segment that
  // covers the flat output range [begin, end). in_offsets[i] is the element
  // offset of input i at out_offset; inside the segment input i advances by
  // inner_step(i). Thread-safe: the plan is only read.
  template <typename F>
  void ForEachSegment(int64_t begin, int64_t end, F&& fn) const;

 private:
  int64_t inner_ = 1;
  int64_t outer_ = 1;
  std::vector<int64_t> inner_step_;
  Dims outer_dims_;                       // merged outer dims, outermost first
  std::vector<Dims> outer_strides_;       // [input][dim]
};

template <typename F>
void BroadcastPlan::ForEachSegment(int64_t begin, int64_t end, F&& fn) const {
  if (begin >= end || inner_ == 0) return;
  const int n = num_inputs();
  const int rank = static_cast<int>(outer_dims_.size());
  // Small fixed buffers cover every kernel here (at most 3 inputs); the
  // vectors only back them for variadic ops with many inputs.
  int64_t idx_buf[16];
  int64_t base_buf[8];
  int64_t off_buf[8];
  std::vector<int64_t> idx_vec, base_vec, off_vec;
  int64_t* idx = idx_buf;
  int64_t* base = base_buf;
  int64_t* off = off_buf;
  if (rank > 16) {
    idx_vec.resize(rank);
    idx = idx_vec.data();
  }
  if (n > 8) {
    base_vec.resize(n);
    off_vec.resize(n);
    base = base_vec.data();
    off = off_vec.data();
  }
  int64_t run = begin / inner_;
  int64_t pos = begin - run * inner_;
  {
    int64_t r = run;
    for (int d = rank - 1; d >= 0; --d) {
      idx[d] = r % outer_dims_[d];
      r /= outer_dims_[d];
    }
  }
  for (int i = 0; i < n; ++i) {
    int64_t b = 0;
    for (int d = 0; d < rank; ++d) b += idx[d] * outer_strides_[i][d];
    base[i] = b;
  }
  int64_t cur = begin;
  while (cur < end) {
    int64_t len = std::min(inner_ - pos, end - cur);
    for (int i = 0; i < n; ++i) off[i] = base[i] + pos * inner_step_[i];
    fn(cur, static_cast<const int64_t*>(off), len);
    cur += len;
    pos = 0;
    // Odometer step to the next run; no division in the loop.
    for (int d = rank - 1; d >= 0; --d) {
      for (int i = 0; i < n; ++i) base[i] += outer_strides_[i][d];
      if (++idx[d] < outer_dims_[d]) break;
      for (int i = 0; i < n; ++i) base[i] -= outer_strides_[i][d] * outer_dims_[d];
      idx[d] = 0;
    }
  }
}

// The type arithmetic is done in: 16-bit floats compute in float.
template <typename T>
struct CalcType {
  using type = T;
};
template <>
struct CalcType<Float16> {
  using type = float;
};
template <>
struct CalcType<BFloat16> {
  using type = float;
};

// DispatchNumeric plus float16 and bfloat16 (computed through float).
template <typename F>
Status DispatchNumericOrHalf(ElemType t, const char* what, F&& fn) {
  return DispatchOver(NumericOrHalfTypeSet{}, t, what, fn);
}

// Copies a strided view into contiguous `dst` of shape `dims`: output element
// (i0, i1, ...) reads src[offset + i0*strides[0] + i1*strides[1] + ...].
// Strides may be negative (Slice with negative steps) or 0. Used by Slice and
// Transpose: runs with stride 1 are copied whole, and a view whose innermost
// output dim is strided in the source (a transpose) is copied in square tiles
// so that both sides stay in cache.
template <typename T>
void CopyStrided(const T* src, int64_t offset, const Dims& dims, const Dims& strides, T* dst, ThreadPool* pool);

// Runs plan.ForEachSegment over the whole output, split across `pool`.
template <typename F>
void ParallelForEachSegment(const BroadcastPlan& plan, ThreadPool* pool, F&& fn) {
  // Below this many elements the hand-off costs more than the work.
  constexpr int64_t kMinChunk = 1 << 15;
  ThreadPool::For(pool, plan.output_size(), kMinChunk,
                  [&](int64_t begin, int64_t end) { plan.ForEachSegment(begin, end, fn); });
}

template <typename T>
void CopyStrided(const T* src, int64_t offset, const Dims& dims, const Dims& strides, T* dst, ThreadPool* pool) {
  // Merge dims (innermost first) the way BroadcastPlan does; drop size-1 dims.
  Dims d, s;
  for (size_t k = dims.size(); k-- > 0;) {
    if (dims[k] == 0) return;
    if (dims[k] == 1) continue;
    if (!d.empty() && strides[k] == s.back() * d.back()) {
      d.back() *= dims[k];
    } else {
      d.push_back(dims[k]);
      s.push_back(strides[k]);
    }
  }
  std::reverse(d.begin(), d.end());
  std::reverse(s.begin(), s.end());
  src += offset;
  const int m = static_cast<int>(d.size());
  if (m == 0) {
    dst[0] = src[0];
    return;
  }
  // Tiled path: the innermost output dim is strided in the source but some
  // other dim j is contiguous there.
  int j = -1;
  if (s[m - 1] != 1 && m >= 2) {
    for (int k = m - 2; k >= 0; --k)
      if (s[k] == 1) j = k;
  }
  Dims ostr(m);
  {
    int64_t acc = 1;
    for (int k = m - 1; k >= 0; --k) {
      ostr[k] = acc;
      acc *= d[k];
    }
  }
  // The loops below walk "outer" dims with an odometer: every dim except the
  // innermost, and except j in the tiled case.
  std::vector<int> outer_dims;
  for (int k = 0; k < m - 1; ++k)
    if (k != j) outer_dims.push_back(k);
  int64_t outer = 1;
  for (int k : outer_dims) outer *= d[k];
  const int64_t inner = d[m - 1];
  const int64_t sin = s[m - 1];
  const int64_t work = inner * (j >= 0 ? d[j] : 1);
  ThreadPool::For(pool, outer, std::max<int64_t>(1, (1 << 16) / std::max<int64_t>(1, work)),
                  [&](int64_t begin, int64_t end) {
    const int no = static_cast<int>(outer_dims.size());
    std::vector<int64_t> idx(no, 0);
    int64_t r = begin;
    for (int q = no - 1; q >= 0; --q) {
      idx[q] = r % d[outer_dims[q]];
      r /= d[outer_dims[q]];
    }
    int64_t si = 0, di = 0;
    for (int q = 0; q < no; ++q) {
      si += idx[q] * s[outer_dims[q]];
      di += idx[q] * ostr[outer_dims[q]];
    }
    for (int64_t it = begin; it < end; ++it) {
      const T* sp = src + si;
      T* dp = dst + di;
      if (j >= 0) {
        constexpr int64_t kTile = 32;
        const int64_t dj = d[j], oj = ostr[j];
        for (int64_t a0 = 0; a0 < dj; a0 += kTile) {
          const int64_t a1 = std::min(dj, a0 + kTile);
          for (int64_t b0 = 0; b0 < inner; b0 += kTile) {
            const int64_t b1 = std::min(inner, b0 + kTile);
            for (int64_t a = a0; a < a1; ++a)
              for (int64_t b = b0; b < b1; ++b) dp[a * oj + b] = sp[a + b * sin];
          }
        }
      } else if (sin == 1) {
        std::copy(sp, sp + inner, dp);
      } else {
        for (int64_t b = 0; b < inner; ++b) dp[b] = sp[b * sin];
      }
      for (int q = no - 1; q >= 0; --q) {
        const int k = outer_dims[q];
        si += s[k];
        di += ostr[k];
        if (++idx[q] < d[k]) break;
        si -= s[k] * d[k];
        di -= ostr[k] * d[k];
        idx[q] = 0;
      }
    }
  });
}

}  // namespace onyx

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
  if (t == ElemType::kFloat16) return fn(TypeTag<Float16>{});
  if (t == ElemType::kBFloat16) return fn(TypeTag<BFloat16>{});
  return DispatchNumeric(t, what, fn);
}

// Runs plan.ForEachSegment over the whole output, split across `pool`.
template <typename F>
void ParallelForEachSegment(const BroadcastPlan& plan, ThreadPool* pool, F&& fn) {
  // Below this many elements the hand-off costs more than the work.
  constexpr int64_t kMinChunk = 1 << 15;
  ThreadPool::For(pool, plan.output_size(), kMinChunk,
                  [&](int64_t begin, int64_t end) { plan.ForEachSegment(begin, end, fn); });
}

}  // namespace onyx

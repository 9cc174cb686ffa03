// The broadcasting binary loop of this folder's two-input kernels
// (elementwise_binary.cc, the bitwise operators and BitShift, PRelu): a
// segment walk over a BroadcastPlan, the operator applied per element.
#pragma once

#include <cstdint>

#include "providers/cpu/common/broadcast.h"

namespace onyx {

// One contiguous segment: out[i] = op(CA(a[...]), CB(b[...])), each side either
// advancing (step 1) or repeating (step 0). The four cases are separate loops
// so the common shapes vectorize.
template <typename CA, typename CB, typename TA, typename TB, typename TOut, typename Op>
void BinarySegment(const TA* a, int64_t sa, const TB* b, int64_t sb, TOut* out, int64_t len, const Op& op) {
  if (sa != 0 && sb != 0) {
    for (int64_t i = 0; i < len; ++i) out[i] = static_cast<TOut>(op(static_cast<CA>(a[i]), static_cast<CB>(b[i])));
  } else if (sa != 0) {
    const CB bv = static_cast<CB>(b[0]);
    for (int64_t i = 0; i < len; ++i) out[i] = static_cast<TOut>(op(static_cast<CA>(a[i]), bv));
  } else if (sb != 0) {
    const CA av = static_cast<CA>(a[0]);
    for (int64_t i = 0; i < len; ++i) out[i] = static_cast<TOut>(op(av, static_cast<CB>(b[i])));
  } else {
    const TOut v = static_cast<TOut>(op(static_cast<CA>(a[0]), static_cast<CB>(b[0])));
    for (int64_t i = 0; i < len; ++i) out[i] = v;
  }
}

// Runs out[i] = op(CA(a[...]), CB(b[...])) over the broadcast described by
// `plan` (two inputs), split across `pool`.
template <typename CA, typename CB, typename TA, typename TB, typename TOut, typename Op>
void BroadcastBinaryLoopAs(const BroadcastPlan& plan, ThreadPool* pool, const TA* a, const TB* b, TOut* out,
                           const Op& op) {
  const int64_t sa = plan.inner_step(0), sb = plan.inner_step(1);
  ParallelForEachSegment(plan, pool, [&](int64_t o, const int64_t* off, int64_t len) {
    BinarySegment<CA, CB>(a + off[0], sa, b + off[1], sb, out + o, len, op);
  });
}

// The same with the operator applied to the stored element types.
template <typename TA, typename TB, typename TOut, typename Op>
void BroadcastBinaryLoop(const BroadcastPlan& plan, ThreadPool* pool, const TA* a, const TB* b, TOut* out,
                         const Op& op) {
  BroadcastBinaryLoopAs<TA, TB>(plan, pool, a, b, out, op);
}

}  // namespace onyx

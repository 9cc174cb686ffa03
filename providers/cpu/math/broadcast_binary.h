// A broadcasting binary loop for the kernels of this folder that are not in
// elementwise_binary.cc (bitwise operators, BitShift, PRelu): the same
// segment walk, with the operator applied to the stored element types.
#pragma once

#include <cstdint>

#include "providers/cpu/common/broadcast.h"

namespace onyx {

// Runs out[i] = op(a[...], b[...]) over the broadcast described by `plan`
// (two inputs), split across `pool`. Each segment has each side either
// advancing (step 1) or repeating (step 0); the four cases are separate loops
// so the common shapes vectorize.
template <typename TA, typename TB, typename TOut, typename Op>
void BroadcastBinaryLoop(const BroadcastPlan& plan, ThreadPool* pool, const TA* a, const TB* b, TOut* out,
                         const Op& op) {
  const int64_t sa = plan.inner_step(0), sb = plan.inner_step(1);
  ParallelForEachSegment(plan, pool, [&](int64_t o, const int64_t* off, int64_t len) {
    const TA* pa = a + off[0];
    const TB* pb = b + off[1];
    TOut* po = out + o;
    if (sa != 0 && sb != 0) {
      for (int64_t i = 0; i < len; ++i) po[i] = op(pa[i], pb[i]);
    } else if (sa != 0) {
      const TB bv = pb[0];
      for (int64_t i = 0; i < len; ++i) po[i] = op(pa[i], bv);
    } else if (sb != 0) {
      const TA av = pa[0];
      for (int64_t i = 0; i < len; ++i) po[i] = op(av, pb[i]);
    } else {
      const TOut v = op(pa[0], pb[0]);
      for (int64_t i = 0; i < len; ++i) po[i] = v;
    }
  });
}

}  // namespace onyx

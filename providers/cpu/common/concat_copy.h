// The copy shared by Concat and ConcatFromSequence.
#pragma once

#include <string>
#include <vector>

#include "core/framework/status.h"
#include "core/framework/tensor.h"
#include "core/framework/thread_pool.h"

namespace onyx {

// Writes `ins` one after another along an axis into `y`, whose shape is
// already the concatenated one. `outer` is the product of the dims before the
// axis; every input holds `outer` rows. `what` names the node for errors.
Status ConcatInto(const std::vector<const Tensor*>& ins, int64_t outer, ThreadPool* threads, Tensor* y,
                  const std::string& what);

}  // namespace onyx

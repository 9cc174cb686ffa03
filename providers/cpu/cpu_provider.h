#pragma once

#include <memory>

#include "providers/provider.h"

namespace onyx {

// Its kernels register themselves, one ONYX_REGISTER_KERNEL statement at the
// bottom of each kernel file (providers/kernel.h).
std::unique_ptr<ExecutionProvider> CreateCpuProvider();

}  // namespace onyx

#include "providers/cpu/cpu_provider.h"

namespace onyx {

void RegisterGather(KernelRegistry& r) { (void)r; }

}  // namespace onyx

#include "providers/cpu/cpu_provider.h"

namespace onyx {

void RegisterExpand(KernelRegistry& r) { (void)r; }

}  // namespace onyx

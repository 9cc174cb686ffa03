#include "providers/cpu/cpu_provider.h"

namespace onyx {

void RegisterSlice(KernelRegistry& r) { (void)r; }

}  // namespace onyx

#include "providers/cpu/cpu_provider.h"

namespace onyx {

void RegisterCast(KernelRegistry& r) { (void)r; }

}  // namespace onyx

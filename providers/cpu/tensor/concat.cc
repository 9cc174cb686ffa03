#include "providers/cpu/cpu_provider.h"

namespace onyx {

void RegisterConcat(KernelRegistry& r) { (void)r; }

}  // namespace onyx

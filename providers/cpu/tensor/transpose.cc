#include "providers/cpu/cpu_provider.h"

namespace onyx {

void RegisterTranspose(KernelRegistry& r) { (void)r; }

}  // namespace onyx

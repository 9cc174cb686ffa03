#include "providers/cpu/cpu_provider.h"

namespace onyx {

void RegisterSequenceOps(KernelRegistry& r);         // sequence_ops.cc (SequenceEmpty/Construct/Insert/Erase/At/Length)
void RegisterConcatFromSequence(KernelRegistry& r);  // concat_from_sequence.cc
void RegisterSplitToSequence(KernelRegistry& r);     // split_to_sequence.cc
void RegisterOptionalOps(KernelRegistry& r);         // optional.cc (Optional, OptionalHasElement, OptionalGetElement)

void RegisterCpuSequenceKernels(KernelRegistry& r) {
  RegisterSequenceOps(r);
  RegisterConcatFromSequence(r);
  RegisterSplitToSequence(r);
  RegisterOptionalOps(r);
}

}  // namespace onyx

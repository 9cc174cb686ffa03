// The one entry point of libonyxruntime_providers_cuda.so. The main library
// dlopens it (providers/cuda_loader.cc) and resolves kCudaProviderEntrySymbol
// only. Both sides are built from the same tree by the same compiler and
// exchange C++ objects (ExecutionProvider, Tensor, Status); the ABI stamp,
// made of the layouts they share, refuses a library from another build
// instead of misreading it.
#pragma once

#include <cstdint>
#include <memory>

#include "core/framework/tensor.h"
#include "core/graph/graph.h"
#include "providers/cuda_provider_options.h"
#include "providers/provider.h"

namespace onyx {

// The leading version counts changes the sizes cannot show: 3 added
// ExecutionProvider::GetHostAllocator, 4 KernelContext::OutputInPlace (both
// virtual: every later slot of the vtable moved).
constexpr uint64_t kCudaProviderAbi =
    (uint64_t{4} << 56) ^ (uint64_t{sizeof(Tensor)} << 40) ^ (uint64_t{sizeof(KernelDef)} << 28) ^
    (uint64_t{sizeof(Node)} << 16) ^ (uint64_t{sizeof(MemoryInfo)} << 8) ^ uint64_t{sizeof(CudaProviderOptions)};

struct CudaProviderApi {
  uint64_t abi;
  // Number of CUDA devices the driver reports; an error saying why (no
  // driver, driver too old for this build's runtime) when there are none.
  Status (*DeviceCount)(int* count);
  // A provider for options.device_id: its stream, handles and arena.
  Status (*Create)(const CudaProviderOptions& options, std::unique_ptr<ExecutionProvider>* out);
};

// extern "C" const CudaProviderApi* OnyxCudaProviderGetApi(uint64_t abi):
// null when `abi` differs from the library's kCudaProviderAbi.
constexpr const char* kCudaProviderEntrySymbol = "OnyxCudaProviderGetApi";
using CudaProviderGetApiFn = const CudaProviderApi* (*)(uint64_t abi);

}  // namespace onyx

// What the C API asks about providers and their kernels without holding a
// session. capi/ talks to core/session only; these answer from providers/.
#pragma once

#include <string>
#include <vector>

#include "core/framework/status.h"
#include "core/framework/tensor.h"

namespace onyx {

// Providers this build can use here, in default priority order.
const std::vector<std::string>& AvailableProviderNames();
// Every provider name the API knows (available or not), onnxruntime's spelling.
const std::vector<std::string>& AllProviderNames();
// OK when a session could use provider `name`; INVALID_ARGUMENT naming it
// (unknown, or not available in this build) otherwise. Builds nothing.
Status CheckProviderName(const std::string& name);

// The allocator of CUDA device `device_id` for values made outside sessions
// (one provider per device, made on first use, never destroyed);
// INVALID_ARGUMENT naming why when CUDA is not available here.
Status DeviceAllocator(DeviceType device, int device_id, Allocator** out);
// Copies `src` into `dst` (same type and size), either in host or device
// memory; finished on return.
Status CopyTensorData(const Tensor& src, Tensor* dst);

// The CPU kernels' SIMD path, as "avx512 (OpenBLAS SkylakeX)".
std::string CpuPathDescription();
// INVALID_ARGUMENT when the ONYX_CPU_ISA environment variable names no path
// (avx512, avx2, baseline); sessions refuse to start then.
Status CheckCpuIsaRequest();

struct SupportedOperator {
  std::string domain;  // "" = ai.onnx
  std::string op_type;
  int since_version;
  int end_version;  // inclusive
};
// One entry per kernel definition of provider `name`, read from its registry
// (plus the operators every session rewrites into others: Gradient),
// ordered by (domain, op_type, since_version). INVALID_ARGUMENT as
// CheckProviderName when the provider is not available.
Status SupportedOperators(const std::string& name, std::vector<SupportedOperator>* out);

}  // namespace onyx

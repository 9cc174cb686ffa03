// onnxruntime's LoRA adapter file (".onnx_adapter"): a flatbuffer with file
// identifier "TORT" whose root table Adapter holds format_version,
// adapter_version, model_version and a vector of Parameter tables (name,
// dims, data_type, raw_data aligned to 8). Read and written here without the
// flatbuffers library; every offset is bounds-checked, so a truncated or
// foreign file is an error, never a bad read.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/framework/status.h"
#include "core/framework/tensor.h"

namespace onyx {

struct LoraAdapterData {
  int format_version = 1;
  int adapter_version = 0;
  int model_version = 0;
  std::vector<std::pair<std::string, std::shared_ptr<Tensor>>> parameters;
};

// Parses `size` bytes; the tensors own copies of their data.
Status ParseAdapter(const void* data, size_t size, LoraAdapterData* out);
Status ReadAdapterFile(const std::string& path, LoraAdapterData* out);
// Checks what an adapter file can hold: named numeric tensors (packed
// sub-byte and string tensors have no adapter data type).
Status CheckAdapterParameters(const LoraAdapterData& adapter);
// Serializes `adapter` (numeric tensors only; packed sub-byte and string
// tensors have no adapter data type).
Status SerializeAdapter(const LoraAdapterData& adapter, std::string* out);

}  // namespace onyx

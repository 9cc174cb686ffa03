// LoRA adapters: onnxruntime's adapter file format in and out
// (core/framework/adapter_format), and their activation on run options.
#include <fstream>

#include "capi/src/api_table.h"
#include "capi/src/handles.h"
#include "core/framework/adapter_format.h"

namespace onyx {
namespace capi {
namespace {

OnyxLoraAdapter* NewAdapter(LoraAdapterData data) {
  auto* a = new OnyxLoraAdapter;
  a->format_version = data.format_version;
  a->adapter_version = data.adapter_version;
  a->model_version = data.model_version;
  a->parameters = std::make_shared<const NamedTensors>(std::move(data.parameters));
  return a;
}

OnyxStatus* LoraAdapterCreate(const char* path, OnyxLoraAdapter** out) {
  API_BEGIN
  API_CHECK_NOT_NULL(path);
  API_CHECK_NOT_NULL(out);
  LoraAdapterData data;
  API_RETURN_IF_ERROR(ReadAdapterFile(path, &data));
  *out = NewAdapter(std::move(data));
  API_END
}

OnyxStatus* LoraAdapterCreateFromBytes(const void* bytes, size_t length, OnyxLoraAdapter** out) {
  API_BEGIN
  API_CHECK_NOT_NULL(out);
  if (length > 0) API_CHECK_NOT_NULL(bytes);
  LoraAdapterData data;
  API_RETURN_IF_ERROR(ParseAdapter(bytes, length, &data));
  *out = NewAdapter(std::move(data));
  API_END
}

OnyxStatus* LoraAdapterCreateFromValues(const char* const* names, const OnyxValue* const* values, size_t count,
                                        int adapter_version, int model_version, OnyxLoraAdapter** out) {
  API_BEGIN
  API_CHECK_NOT_NULL(out);
  if (count > 0) {
    API_CHECK_NOT_NULL(names);
    API_CHECK_NOT_NULL(values);
  }
  LoraAdapterData data;
  data.adapter_version = adapter_version;
  data.model_version = model_version;
  for (size_t i = 0; i < count; ++i) {
    if (!names[i] || !values[i])
      return NewStatus(ONYX_INVALID_ARGUMENT, StrCat("LoraAdapterCreateFromValues: entry ", i, " is NULL"));
    if (!values[i]->value.IsTensor())
      return NewStatus(ONYX_INVALID_ARGUMENT, StrCat("adapter parameter '", names[i], "' is not a tensor"));
    if (values[i]->value.tensor().location().device != DeviceType::kCpu)
      return NewStatus(ONYX_INVALID_ARGUMENT, StrCat("adapter parameter '", names[i], "' must be in CPU memory"));
    data.parameters.emplace_back(names[i], values[i]->value.tensor_ptr());
  }
  API_RETURN_IF_ERROR(CheckAdapterParameters(data));
  *out = NewAdapter(std::move(data));
  API_END
}

void LoraAdapterRelease(OnyxLoraAdapter* adapter) { delete adapter; }

OnyxStatus* LoraAdapterGetVersions(const OnyxLoraAdapter* adapter, int* format_version, int* adapter_version,
                                   int* model_version) {
  API_BEGIN
  API_CHECK_NOT_NULL(adapter);
  API_CHECK_NOT_NULL(format_version);
  API_CHECK_NOT_NULL(adapter_version);
  API_CHECK_NOT_NULL(model_version);
  *format_version = adapter->format_version;
  *adapter_version = adapter->adapter_version;
  *model_version = adapter->model_version;
  API_END
}

OnyxStatus* LoraAdapterGetParameterCount(const OnyxLoraAdapter* adapter, size_t* out) {
  API_BEGIN
  API_CHECK_NOT_NULL(adapter);
  API_CHECK_NOT_NULL(out);
  *out = adapter->parameters->size();
  API_END
}

OnyxStatus* LoraAdapterGetParameter(const OnyxLoraAdapter* adapter, size_t index, const char** name,
                                    OnyxValue** value) {
  API_BEGIN
  API_CHECK_NOT_NULL(adapter);
  API_CHECK_NOT_NULL(name);
  API_CHECK_NOT_NULL(value);
  const auto& params = *adapter->parameters;
  if (index >= params.size())
    return NewStatus(ONYX_INVALID_ARGUMENT, StrCat("LoraAdapterGetParameter: index ", index, " is out of range (",
                                                   params.size(), " parameters)"));
  *name = params[index].first.c_str();
  *value = new OnyxValue{Value(params[index].second)};
  API_END
}

OnyxStatus* LoraAdapterSave(const OnyxLoraAdapter* adapter, const char* path) {
  API_BEGIN
  API_CHECK_NOT_NULL(adapter);
  API_CHECK_NOT_NULL(path);
  LoraAdapterData data;
  data.format_version = adapter->format_version;
  data.adapter_version = adapter->adapter_version;
  data.model_version = adapter->model_version;
  data.parameters = *adapter->parameters;
  std::string bytes;
  API_RETURN_IF_ERROR(SerializeAdapter(data, &bytes));
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) return NewStatus(ONYX_INVALID_ARGUMENT, StrCat("cannot create adapter file '", path, "'"));
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  f.close();
  if (!f) return NewStatus(ONYX_FAIL, StrCat("cannot write adapter file '", path, "'"));
  API_END
}

OnyxStatus* RunOptionsAddActiveLoraAdapter(OnyxRunOptions* options, const OnyxLoraAdapter* adapter) {
  API_BEGIN
  API_CHECK_NOT_NULL(options);
  API_CHECK_NOT_NULL(adapter);
  options->options.active_adapters.push_back(adapter->parameters);
  API_END
}

}  // namespace

void FillLoraApi(OnyxApi& a) {
  a.LoraAdapterCreate = LoraAdapterCreate;
  a.LoraAdapterCreateFromBytes = LoraAdapterCreateFromBytes;
  a.LoraAdapterCreateFromValues = LoraAdapterCreateFromValues;
  a.LoraAdapterRelease = LoraAdapterRelease;
  a.LoraAdapterGetVersions = LoraAdapterGetVersions;
  a.LoraAdapterGetParameterCount = LoraAdapterGetParameterCount;
  a.LoraAdapterGetParameter = LoraAdapterGetParameter;
  a.LoraAdapterSave = LoraAdapterSave;
  a.RunOptionsAddActiveLoraAdapter = RunOptionsAddActiveLoraAdapter;
}

}  // namespace capi
}  // namespace onyx

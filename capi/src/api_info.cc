#include <cstring>
#include <map>
#include <memory>
#include <mutex>

#include "capi/src/api_table.h"
#include "capi/src/handles.h"
#include "core/session/providers_query.h"

namespace onyx {
namespace capi {

OnyxTypeInfo* NewTypeInfo(const TypeInfo& t) {
  auto info = std::make_unique<OnyxTypeInfo>();
  info->type_string = t.ToString();
  switch (t.kind) {
    case TypeInfo::Kind::kTensor: info->kind = ONYX_VALUE_TENSOR; break;
    case TypeInfo::Kind::kSequence: info->kind = ONYX_VALUE_SEQUENCE; break;
    case TypeInfo::Kind::kMap: info->kind = ONYX_VALUE_MAP; break;
    case TypeInfo::Kind::kOptional: info->kind = ONYX_VALUE_OPTIONAL; break;
    case TypeInfo::Kind::kSparseTensor: info->kind = ONYX_VALUE_SPARSE_TENSOR; break;
    default: info->kind = ONYX_VALUE_UNKNOWN;
  }
  if (t.kind == TypeInfo::Kind::kTensor || t.kind == TypeInfo::Kind::kSparseTensor) {
    auto ti = std::make_unique<OnyxTensorTypeAndShapeInfo>();
    ti->elem = t.elem;
    ti->has_shape = t.has_shape;
    for (const Dim& d : t.dims) {
      ti->dims.push_back(d.known() ? d.value : -1);
      ti->symbols.push_back(d.symbol);
    }
    info->tensor = std::move(ti);
  }
  return info.release();
}

namespace {

void TypeInfoRelease(OnyxTypeInfo* info) { delete info; }
OnyxStatus* TypeInfoGetKind(const OnyxTypeInfo* info, OnyxValueKind* out) {
  API_BEGIN
  API_CHECK_NOT_NULL(info);
  API_CHECK_NOT_NULL(out);
  *out = info->kind;
  API_END
}
OnyxStatus* TypeInfoGetTypeString(const OnyxTypeInfo* info, const char** out) {
  API_BEGIN
  API_CHECK_NOT_NULL(info);
  API_CHECK_NOT_NULL(out);
  *out = info->type_string.c_str();
  API_END
}
OnyxStatus* TypeInfoGetTensorInfo(const OnyxTypeInfo* info, const OnyxTensorTypeAndShapeInfo** out) {
  API_BEGIN
  API_CHECK_NOT_NULL(info);
  API_CHECK_NOT_NULL(out);
  *out = info->tensor.get();
  API_END
}

void TensorTypeAndShapeInfoRelease(OnyxTensorTypeAndShapeInfo* info) { delete info; }
OnyxStatus* TensorInfoGetElementType(const OnyxTensorTypeAndShapeInfo* info, OnyxElementType* out) {
  API_BEGIN
  API_CHECK_NOT_NULL(info);
  API_CHECK_NOT_NULL(out);
  *out = static_cast<OnyxElementType>(info->elem);
  API_END
}
OnyxStatus* TensorInfoGetDimCount(const OnyxTensorTypeAndShapeInfo* info, size_t* out) {
  API_BEGIN
  API_CHECK_NOT_NULL(info);
  API_CHECK_NOT_NULL(out);
  *out = info->dims.size();
  API_END
}
OnyxStatus* TensorInfoHasShape(const OnyxTensorTypeAndShapeInfo* info, int* out) {
  API_BEGIN
  API_CHECK_NOT_NULL(info);
  API_CHECK_NOT_NULL(out);
  *out = info->has_shape ? 1 : 0;
  API_END
}
OnyxStatus* TensorInfoGetDims(const OnyxTensorTypeAndShapeInfo* info, int64_t* dims, size_t count) {
  API_BEGIN
  API_CHECK_NOT_NULL(info);
  if (count > 0) API_CHECK_NOT_NULL(dims);
  for (size_t i = 0; i < count && i < info->dims.size(); ++i) dims[i] = info->dims[i];
  API_END
}
OnyxStatus* TensorInfoGetSymbolicDims(const OnyxTensorTypeAndShapeInfo* info, const char** names, size_t count) {
  API_BEGIN
  API_CHECK_NOT_NULL(info);
  if (count > 0) API_CHECK_NOT_NULL(names);
  for (size_t i = 0; i < count && i < info->symbols.size(); ++i) names[i] = info->symbols[i].c_str();
  API_END
}
OnyxStatus* TensorInfoGetElementCount(const OnyxTensorTypeAndShapeInfo* info, int64_t* out) {
  API_BEGIN
  API_CHECK_NOT_NULL(info);
  API_CHECK_NOT_NULL(out);
  *out = info->has_shape ? ShapeSize(info->dims) : -1;
  API_END
}

void ModelMetadataRelease(OnyxModelMetadata* md) { delete md; }

template <std::string OnyxModelMetadata::*Field>
OnyxStatus* MetadataString(const OnyxModelMetadata* metadata, const char** out) {
  API_BEGIN
  API_CHECK_NOT_NULL(metadata);
  API_CHECK_NOT_NULL(out);
  *out = (metadata->*Field).c_str();
  API_END
}
OnyxStatus* ModelMetadataGetVersion(const OnyxModelMetadata* metadata, int64_t* out) {
  API_BEGIN
  API_CHECK_NOT_NULL(metadata);
  API_CHECK_NOT_NULL(out);
  *out = metadata->version;
  API_END
}
OnyxStatus* ModelMetadataGetCustomCount(const OnyxModelMetadata* metadata, size_t* out) {
  API_BEGIN
  API_CHECK_NOT_NULL(metadata);
  API_CHECK_NOT_NULL(out);
  *out = metadata->custom.size();
  API_END
}
template <bool Key>
OnyxStatus* ModelMetadataGetCustom(const OnyxModelMetadata* metadata, size_t index, const char** out) {
  API_BEGIN
  API_CHECK_NOT_NULL(metadata);
  API_CHECK_NOT_NULL(out);
  if (index >= metadata->custom.size())
    return NewStatus(ONYX_INVALID_ARGUMENT, StrCat("custom metadata index ", index, " is out of range (",
                                                   metadata->custom.size(), " entries)"));
  *out = Key ? metadata->custom[index].first.c_str() : metadata->custom[index].second.c_str();
  API_END
}
OnyxStatus* ModelMetadataLookupCustom(const OnyxModelMetadata* metadata, const char* key, const char** out) {
  API_BEGIN
  API_CHECK_NOT_NULL(metadata);
  API_CHECK_NOT_NULL(key);
  API_CHECK_NOT_NULL(out);
  *out = nullptr;
  for (const auto& kv : metadata->custom)
    if (kv.first == key) *out = kv.second.c_str();
  API_END
}

template <const std::vector<std::string>& (*List)()>
OnyxStatus* ProviderCount(size_t* out) {
  API_BEGIN
  API_CHECK_NOT_NULL(out);
  *out = List().size();
  API_END
}
template <const std::vector<std::string>& (*List)()>
OnyxStatus* ProviderName(size_t index, const char** out) {
  API_BEGIN
  API_CHECK_NOT_NULL(out);
  if (index >= List().size())
    return NewStatus(ONYX_INVALID_ARGUMENT, StrCat("provider index ", index, " is out of range (", List().size(), ")"));
  *out = List()[index].c_str();
  API_END
}

// The registries are static and immutable, so each provider's list is built
// once and its strings live as long as the process.
Status SupportedList(const char* provider, const std::vector<SupportedOperator>** out) {
  static std::mutex mu;
  static std::map<std::string, std::unique_ptr<std::vector<SupportedOperator>>> lists;
  std::lock_guard<std::mutex> lock(mu);
  auto it = lists.find(provider);
  if (it == lists.end()) {
    auto list = std::make_unique<std::vector<SupportedOperator>>();
    ONYX_RETURN_IF_ERROR(SupportedOperators(provider, list.get()));
    it = lists.emplace(provider, std::move(list)).first;
  }
  *out = it->second.get();
  return Status::OK();
}

OnyxStatus* ProviderGetSupportedOperatorCount(const char* provider, size_t* out) {
  API_BEGIN
  API_CHECK_NOT_NULL(provider);
  API_CHECK_NOT_NULL(out);
  const std::vector<SupportedOperator>* list = nullptr;
  API_RETURN_IF_ERROR(SupportedList(provider, &list));
  *out = list->size();
  API_END
}

OnyxStatus* ProviderGetSupportedOperator(const char* provider, size_t index, const char** domain,
                                         const char** op_type, int* since_version, int* end_version) {
  API_BEGIN
  API_CHECK_NOT_NULL(provider);
  API_CHECK_NOT_NULL(domain);
  API_CHECK_NOT_NULL(op_type);
  API_CHECK_NOT_NULL(since_version);
  API_CHECK_NOT_NULL(end_version);
  const std::vector<SupportedOperator>* list = nullptr;
  API_RETURN_IF_ERROR(SupportedList(provider, &list));
  if (index >= list->size())
    return NewStatus(ONYX_INVALID_ARGUMENT, StrCat("operator index ", index, " is out of range (", list->size(),
                                                   " for ", provider, ")"));
  const SupportedOperator& op = (*list)[index];
  *domain = op.domain.c_str();
  *op_type = op.op_type.c_str();
  *since_version = op.since_version;
  *end_version = op.end_version;
  API_END
}

const char* GetVersionString() { return ONYX_VERSION; }
const char* GetBuildInfoString() {
  // The CPU path is chosen at load (and by ONYX_CPU_ISA), so the text is built once, then.
  static const std::string info = StrCat("Onyx Runtime " ONYX_VERSION " (" ONYX_BUILD_INFO ", BLAS=OpenBLAS, cpu path=",
                                         CpuPathDescription(), ", providers=CPU)");
  return info.c_str();
}

}  // namespace

void FillInfoApi(OnyxApi& a) {
  a.TypeInfoRelease = TypeInfoRelease;
  a.TypeInfoGetKind = TypeInfoGetKind;
  a.TypeInfoGetTypeString = TypeInfoGetTypeString;
  a.TypeInfoGetTensorInfo = TypeInfoGetTensorInfo;
  a.TensorTypeAndShapeInfoRelease = TensorTypeAndShapeInfoRelease;
  a.TensorInfoGetElementType = TensorInfoGetElementType;
  a.TensorInfoGetDimCount = TensorInfoGetDimCount;
  a.TensorInfoHasShape = TensorInfoHasShape;
  a.TensorInfoGetDims = TensorInfoGetDims;
  a.TensorInfoGetSymbolicDims = TensorInfoGetSymbolicDims;
  a.TensorInfoGetElementCount = TensorInfoGetElementCount;
  a.ModelMetadataRelease = ModelMetadataRelease;
  a.ModelMetadataGetProducerName = MetadataString<&OnyxModelMetadata::producer>;
  a.ModelMetadataGetGraphName = MetadataString<&OnyxModelMetadata::graph_name>;
  a.ModelMetadataGetDomain = MetadataString<&OnyxModelMetadata::domain>;
  a.ModelMetadataGetDescription = MetadataString<&OnyxModelMetadata::description>;
  a.ModelMetadataGetGraphDescription = MetadataString<&OnyxModelMetadata::graph_description>;
  a.ModelMetadataGetVersion = ModelMetadataGetVersion;
  a.ModelMetadataGetCustomCount = ModelMetadataGetCustomCount;
  a.ModelMetadataGetCustomKey = ModelMetadataGetCustom<true>;
  a.ModelMetadataGetCustomValue = ModelMetadataGetCustom<false>;
  a.ModelMetadataLookupCustom = ModelMetadataLookupCustom;
  a.GetAvailableProviderCount = ProviderCount<&AvailableProviderNames>;
  a.GetAvailableProviderName = ProviderName<&AvailableProviderNames>;
  a.GetAllProviderCount = ProviderCount<&AllProviderNames>;
  a.GetAllProviderName = ProviderName<&AllProviderNames>;
  a.ProviderGetSupportedOperatorCount = ProviderGetSupportedOperatorCount;
  a.ProviderGetSupportedOperator = ProviderGetSupportedOperator;
  a.GetVersionString = GetVersionString;
  a.GetBuildInfoString = GetBuildInfoString;
}

}  // namespace capi
}  // namespace onyx

#include <cstring>

#include "capi/src/api_table.h"
#include "capi/src/handles.h"

namespace onyx {
namespace capi {

Status CheckTensorArg(const void* data, size_t data_bytes, const int64_t* shape, size_t rank, int type, Dims* dims) {
  ONYX_CHECK_ARG(IsKnownElemType(type), "unknown tensor element type ", type);
  ONYX_CHECK_ARG(rank == 0 || shape != nullptr, "shape is NULL but rank is ", rank);
  dims->assign(shape, shape + rank);
  for (size_t i = 0; i < rank; ++i)
    ONYX_CHECK_ARG(shape[i] >= 0, "dimension ", i, " of shape ", ShapeToString(*dims), " is negative");
  ONYX_CHECK_ARG(type != ONYX_TYPE_STRING, "string tensors cannot wrap caller memory; use ValueCreateTensor and StringTensorFill");
  size_t need = StorageBytes(static_cast<ElemType>(type), static_cast<size_t>(ShapeSize(*dims)));
  ONYX_CHECK_ARG(data_bytes == need, "buffer of ", data_bytes, " bytes does not match shape ", ShapeToString(*dims),
                 " of ", ElemTypeName(static_cast<ElemType>(type)), " (", need, " bytes)");
  ONYX_CHECK_ARG(data != nullptr || need == 0, "data must not be NULL for a non-empty tensor");
  return Status::OK();
}

namespace {

OnyxStatus* MemoryInfoCreate(const char* name, OnyxAllocatorType allocator_type_arg, int device_id,
                             OnyxMemType mem_type_arg, OnyxMemoryInfo** out) {
  const int allocator_type = EnumArg(allocator_type_arg), mem_type = EnumArg(mem_type_arg);
  API_BEGIN
  API_CHECK_NOT_NULL(name);
  API_CHECK_NOT_NULL(out);
  MemoryInfo info;
  std::string n = name;
  if (n == "Cpu" || n == "CPU" || n == "cpu") {
    info.device = DeviceType::kCpu;
    info.name = "Cpu";
  } else if (n == "Cuda" || n == "CUDA" || n == "cuda") {
    info.device = DeviceType::kCuda;
    info.name = "Cuda";
  } else {
    return NewStatus(ONYX_INVALID_ARGUMENT, "MemoryInfoCreate: unknown memory name '" + n + "' (expected \"Cpu\" or \"Cuda\")");
  }
  if (device_id < 0) return NewStatus(ONYX_INVALID_ARGUMENT, StrCat("MemoryInfoCreate: device_id must be >= 0, got ", device_id));
  info.device_id = device_id;
  info.alloc_type = allocator_type;
  info.mem_type = mem_type;
  *out = new OnyxMemoryInfo{info};
  API_END
}
OnyxStatus* MemoryInfoCreateCpu(OnyxAllocatorType allocator_type, OnyxMemType mem_type, OnyxMemoryInfo** out) {
  return MemoryInfoCreate("Cpu", allocator_type, 0, mem_type, out);
}
void MemoryInfoRelease(OnyxMemoryInfo* info) { delete info; }
OnyxStatus* MemoryInfoGetName(const OnyxMemoryInfo* info, const char** out) {
  API_BEGIN
  API_CHECK_NOT_NULL(info);
  API_CHECK_NOT_NULL(out);
  *out = info->info.name.c_str();
  API_END
}
OnyxStatus* MemoryInfoGetDeviceId(const OnyxMemoryInfo* info, int* out) {
  API_BEGIN
  API_CHECK_NOT_NULL(info);
  API_CHECK_NOT_NULL(out);
  *out = info->info.device_id;
  API_END
}
OnyxStatus* MemoryInfoGetMemType(const OnyxMemoryInfo* info, OnyxMemType* out) {
  API_BEGIN
  API_CHECK_NOT_NULL(info);
  API_CHECK_NOT_NULL(out);
  *out = static_cast<OnyxMemType>(info->info.mem_type);
  API_END
}
OnyxStatus* MemoryInfoGetAllocatorType(const OnyxMemoryInfo* info, OnyxAllocatorType* out) {
  API_BEGIN
  API_CHECK_NOT_NULL(info);
  API_CHECK_NOT_NULL(out);
  *out = static_cast<OnyxAllocatorType>(info->info.alloc_type);
  API_END
}

OnyxAllocator* DefaultAllocator() {
  static OnyxAllocator* a = new OnyxAllocator{GetCpuAllocator(), OnyxMemoryInfo{GetCpuAllocator()->Info()}};
  return a;
}
OnyxStatus* GetDefaultAllocator(OnyxAllocator** out) {
  API_BEGIN
  API_CHECK_NOT_NULL(out);
  *out = DefaultAllocator();
  API_END
}
OnyxStatus* AllocatorAlloc(OnyxAllocator* allocator, size_t size, void** out) {
  API_BEGIN
  API_CHECK_NOT_NULL(allocator);
  API_CHECK_NOT_NULL(out);
  *out = allocator->allocator->Alloc(size);
  API_END
}
OnyxStatus* AllocatorFree(OnyxAllocator* allocator, void* p) {
  API_BEGIN
  API_CHECK_NOT_NULL(allocator);
  allocator->allocator->Free(p);
  API_END
}
OnyxStatus* AllocatorGetMemoryInfo(const OnyxAllocator* allocator, const OnyxMemoryInfo** out) {
  API_BEGIN
  API_CHECK_NOT_NULL(allocator);
  API_CHECK_NOT_NULL(out);
  *out = &allocator->info;
  API_END
}

Status CheckShapeAndType(const int64_t* shape, size_t rank, int type, Dims* dims) {
  ONYX_CHECK_ARG(IsKnownElemType(type), "unknown tensor element type ", type);
  ONYX_CHECK_ARG(rank == 0 || shape != nullptr, "shape is NULL but rank is ", rank);
  dims->assign(shape, shape + rank);
  for (size_t i = 0; i < rank; ++i)
    ONYX_CHECK_ARG(shape[i] >= 0, "dimension ", i, " of shape ", ShapeToString(*dims), " is negative");
  return Status::OK();
}

OnyxStatus* ValueCreateTensor(OnyxAllocator* allocator, const int64_t* shape, size_t rank, OnyxElementType type_arg,
                              OnyxValue** out) {
  const int type = EnumArg(type_arg);
  API_BEGIN
  API_CHECK_NOT_NULL(out);
  Dims dims;
  API_RETURN_IF_ERROR(CheckShapeAndType(shape, rank, type, &dims));
  Allocator* a = allocator ? allocator->allocator : GetCpuAllocator();
  Tensor t(static_cast<ElemType>(type), dims, a);
  *out = new OnyxValue{Value(std::move(t))};
  API_END
}

Status CheckBorrowed(const OnyxMemoryInfo* info, void* data, size_t data_bytes, const int64_t* shape, size_t rank,
                     int type, Dims* dims) {
  ONYX_CHECK_ARG(info != nullptr, "memory info must not be NULL");
  ONYX_RETURN_IF_ERROR(CheckTensorArg(data, data_bytes, shape, rank, type, dims));
  ONYX_CHECK_ARG(info->info.device == DeviceType::kCpu, "memory on device '", info->info.name,
                 "' is not supported by this build");
  return Status::OK();
}

OnyxStatus* ValueCreateTensorWithData(const OnyxMemoryInfo* info, void* data, size_t data_bytes, const int64_t* shape,
                                      size_t rank, OnyxElementType type_arg, OnyxValue** out) {
  const int type = EnumArg(type_arg);
  API_BEGIN
  API_CHECK_NOT_NULL(out);
  Dims dims;
  API_RETURN_IF_ERROR(CheckBorrowed(info, data, data_bytes, shape, rank, type, &dims));
  Tensor t(static_cast<ElemType>(type), dims, data, info->info);
  *out = new OnyxValue{Value(std::move(t))};
  API_END
}

OnyxStatus* ValueCreateTensorWithDeleter(const OnyxMemoryInfo* info, void* data, size_t data_bytes,
                                         const int64_t* shape, size_t rank, OnyxElementType type_arg,
                                         OnyxDeleter deleter, void* context, OnyxValue** out) {
  const int type = EnumArg(type_arg);
  // Ownership moves to us on entry, so the deleter runs on every path.
  std::shared_ptr<void> owner;
  try {
    owner = std::shared_ptr<void>(data, [deleter, context](void* p) {
      if (deleter) deleter(context, p);
    });
  } catch (...) {
    if (deleter) deleter(context, data);
    return NewStatus(ONYX_FAIL, "out of memory");
  }
  API_BEGIN
  API_CHECK_NOT_NULL(deleter);
  API_CHECK_NOT_NULL(out);
  Dims dims;
  API_RETURN_IF_ERROR(CheckBorrowed(info, data, data_bytes, shape, rank, type, &dims));
  Tensor t(static_cast<ElemType>(type), dims, owner, data, info->info);
  *out = new OnyxValue{Value(std::move(t))};
  API_END
}

void ValueRelease(OnyxValue* value) { delete value; }

OnyxStatus* ValueGetKind(const OnyxValue* value, OnyxValueKind* out) {
  API_BEGIN
  API_CHECK_NOT_NULL(value);
  API_CHECK_NOT_NULL(out);
  *out = static_cast<OnyxValueKind>(value->value.kind());
  API_END
}

Status RequireTensor(const OnyxValue* value, const char* fn) {
  ONYX_CHECK_ARG(value->value.IsTensor(), fn, ": the value is not a tensor");
  return Status::OK();
}

OnyxStatus* ValueGetTensorTypeAndShape(const OnyxValue* value, OnyxTensorTypeAndShapeInfo** out) {
  API_BEGIN
  API_CHECK_NOT_NULL(value);
  API_CHECK_NOT_NULL(out);
  API_RETURN_IF_ERROR(RequireTensor(value, "ValueGetTensorTypeAndShape"));
  const Tensor& t = value->value.tensor();
  auto info = std::make_unique<OnyxTensorTypeAndShapeInfo>();
  info->elem = t.type();
  info->has_shape = true;
  info->dims = t.dims();
  info->symbols.assign(t.rank(), "");
  *out = info.release();
  API_END
}

OnyxStatus* ValueGetTensorData(OnyxValue* value, void** out) {
  API_BEGIN
  API_CHECK_NOT_NULL(value);
  API_CHECK_NOT_NULL(out);
  API_RETURN_IF_ERROR(RequireTensor(value, "ValueGetTensorData"));
  Tensor& t = value->value.tensor();
  if (t.type() == ElemType::kString)
    return NewStatus(ONYX_INVALID_ARGUMENT, "ValueGetTensorData: string tensors are read with StringTensorGetElement");
  *out = t.raw();
  API_END
}

OnyxStatus* ValueGetTensorMemoryInfo(const OnyxValue* value, const OnyxMemoryInfo** out) {
  API_BEGIN
  API_CHECK_NOT_NULL(value);
  API_CHECK_NOT_NULL(out);
  API_RETURN_IF_ERROR(RequireTensor(value, "ValueGetTensorMemoryInfo"));
  // The OnyxMemoryInfo layout is exactly a MemoryInfo, which lives in the tensor.
  static_assert(sizeof(OnyxMemoryInfo) == sizeof(MemoryInfo), "OnyxMemoryInfo wraps MemoryInfo only");
  *out = reinterpret_cast<const OnyxMemoryInfo*>(&value->value.tensor().location());
  API_END
}

OnyxStatus* StringTensorFill(OnyxValue* value, const char* const* strings, const size_t* lengths, size_t count) {
  API_BEGIN
  API_CHECK_NOT_NULL(value);
  API_RETURN_IF_ERROR(RequireTensor(value, "StringTensorFill"));
  Tensor& t = value->value.tensor();
  if (t.type() != ElemType::kString)
    return NewStatus(ONYX_INVALID_ARGUMENT, StrCat("StringTensorFill: tensor holds ", ElemTypeName(t.type()), ", not string"));
  if (count != static_cast<size_t>(t.size()))
    return NewStatus(ONYX_INVALID_ARGUMENT, StrCat("StringTensorFill: got ", count, " strings for a tensor of shape ",
                                                   ShapeToString(t.dims()), " (", t.size(), " elements)"));
  if (count > 0) API_CHECK_NOT_NULL(strings);
  std::vector<std::string> copy(count);
  for (size_t i = 0; i < count; ++i) {
    if (!strings[i]) return NewStatus(ONYX_INVALID_ARGUMENT, StrCat("StringTensorFill: strings[", i, "] is NULL"));
    copy[i] = lengths ? std::string(strings[i], lengths[i]) : std::string(strings[i]);
  }
  for (size_t i = 0; i < count; ++i) t.data<std::string>()[i] = std::move(copy[i]);
  API_END
}

OnyxStatus* StringTensorGetElement(const OnyxValue* value, size_t index, const char** out, size_t* length) {
  API_BEGIN
  API_CHECK_NOT_NULL(value);
  API_CHECK_NOT_NULL(out);
  API_CHECK_NOT_NULL(length);
  API_RETURN_IF_ERROR(RequireTensor(value, "StringTensorGetElement"));
  const Tensor& t = value->value.tensor();
  if (t.type() != ElemType::kString)
    return NewStatus(ONYX_INVALID_ARGUMENT, StrCat("StringTensorGetElement: tensor holds ", ElemTypeName(t.type()), ", not string"));
  if (index >= static_cast<size_t>(t.size()))
    return NewStatus(ONYX_INVALID_ARGUMENT, StrCat("StringTensorGetElement: index ", index, " is out of range for ", t.size(), " elements"));
  const std::string& s = t.data<std::string>()[index];
  *out = s.data();
  *length = s.size();
  API_END
}

// The type a value has (for ValueGetTypeInfo): tensors with their shape;
// a sequence's element type from its first element.
TypeInfo TypeOfValue(const Value& v) {
  TypeInfo t;
  switch (v.kind()) {
    case Value::Kind::kTensor: {
      std::vector<Dim> dims;
      for (int64_t d : v.tensor().dims()) dims.push_back(Dim::Of(d));
      return TypeInfo::Tensor(v.tensor().type(), std::move(dims));
    }
    case Value::Kind::kSequence:
      t.kind = TypeInfo::Kind::kSequence;
      t.inner = std::make_shared<TypeInfo>(v.items().empty() ? TypeInfo() : TypeOfValue(v.items()[0]));
      if (t.inner->kind == TypeInfo::Kind::kTensor) {
        t.inner->has_shape = false;
        t.inner->dims.clear();
      }
      return t;
    case Value::Kind::kMap:
      t.kind = TypeInfo::Kind::kMap;
      t.map_key = v.items()[0].tensor().type();
      t.inner = std::make_shared<TypeInfo>(TypeInfo::Tensor(v.items()[1].tensor().type()));
      return t;
    case Value::Kind::kOptional:
      t.kind = TypeInfo::Kind::kOptional;
      t.inner = std::make_shared<TypeInfo>(v.items().empty() ? TypeInfo() : TypeOfValue(v.items()[0]));
      return t;
    default:
      return t;
  }
}

OnyxStatus* ValueGetTypeInfo(const OnyxValue* value, OnyxTypeInfo** out) {
  API_BEGIN
  API_CHECK_NOT_NULL(value);
  API_CHECK_NOT_NULL(out);
  *out = NewTypeInfo(TypeOfValue(value->value));
  API_END
}

Status RequireContainer(const OnyxValue* value, const char* fn) {
  const Value::Kind k = value->value.kind();
  ONYX_CHECK_ARG(k == Value::Kind::kSequence || k == Value::Kind::kMap || k == Value::Kind::kOptional, fn,
                 ": the value is not a sequence, map or optional");
  return Status::OK();
}

OnyxStatus* ValueGetElementCount(const OnyxValue* value, size_t* out) {
  API_BEGIN
  API_CHECK_NOT_NULL(value);
  API_CHECK_NOT_NULL(out);
  API_RETURN_IF_ERROR(RequireContainer(value, "ValueGetElementCount"));
  *out = value->value.items().size();
  API_END
}

OnyxStatus* ValueGetElement(const OnyxValue* value, size_t index, OnyxValue** out) {
  API_BEGIN
  API_CHECK_NOT_NULL(value);
  API_CHECK_NOT_NULL(out);
  API_RETURN_IF_ERROR(RequireContainer(value, "ValueGetElement"));
  const auto& items = value->value.items();
  if (index >= items.size())
    return NewStatus(ONYX_INVALID_ARGUMENT,
                     StrCat("ValueGetElement: index ", index, " is out of range (", items.size(), " elements)"));
  *out = new OnyxValue{items[index]};
  API_END
}

OnyxStatus* ValueCreateSequence(const OnyxValue* const* items, size_t count, OnyxValue** out) {
  API_BEGIN
  API_CHECK_NOT_NULL(out);
  if (count > 0) API_CHECK_NOT_NULL(items);
  std::vector<Value> values;
  for (size_t i = 0; i < count; ++i) {
    if (!items[i]) return NewStatus(ONYX_INVALID_ARGUMENT, StrCat("ValueCreateSequence: items[", i, "] is NULL"));
    const Value& v = items[i]->value;
    if (!v.IsTensor() && v.kind() != Value::Kind::kMap)
      return NewStatus(ONYX_INVALID_ARGUMENT, StrCat("ValueCreateSequence: items[", i, "] is not a tensor or a map"));
    if (i > 0) {
      const Value& first = values[0];
      if (v.kind() != first.kind() || (v.IsTensor() && v.tensor().type() != first.tensor().type()))
        return NewStatus(ONYX_INVALID_ARGUMENT,
                         StrCat("ValueCreateSequence: items[", i, "] differs in type from items[0]; a sequence "
                                "holds values of one type"));
    }
    values.push_back(v);
  }
  *out = new OnyxValue{Value::Sequence(std::move(values))};
  API_END
}

OnyxStatus* ValueCreateMap(const OnyxValue* keys, const OnyxValue* values, OnyxValue** out) {
  API_BEGIN
  API_CHECK_NOT_NULL(keys);
  API_CHECK_NOT_NULL(values);
  API_CHECK_NOT_NULL(out);
  if (!keys->value.IsTensor() || !values->value.IsTensor())
    return NewStatus(ONYX_INVALID_ARGUMENT, "ValueCreateMap: keys and values must be tensors");
  const Tensor& k = keys->value.tensor();
  const Tensor& v = values->value.tensor();
  if (k.rank() != 1 || v.rank() != 1 || k.size() != v.size())
    return NewStatus(ONYX_INVALID_ARGUMENT, StrCat("ValueCreateMap: keys ", ShapeToString(k.dims()), " and values ",
                                                   ShapeToString(v.dims()), " must be 1-D of one length"));
  if (k.type() != ElemType::kInt64 && k.type() != ElemType::kString)
    return NewStatus(ONYX_INVALID_ARGUMENT,
                     StrCat("ValueCreateMap: keys must be int64 or string, got ", ElemTypeName(k.type())));
  *out = new OnyxValue{Value::Map(keys->value.tensor_ptr(), values->value.tensor_ptr())};
  API_END
}

OnyxStatus* ValueCreateOptional(const OnyxValue* inner, OnyxValue** out) {
  API_BEGIN
  API_CHECK_NOT_NULL(out);
  *out = new OnyxValue{Value::Optional(inner ? inner->value : Value())};
  API_END
}

}  // namespace

void FillValueApi(OnyxApi& a) {
  a.MemoryInfoCreate = MemoryInfoCreate;
  a.MemoryInfoCreateCpu = MemoryInfoCreateCpu;
  a.MemoryInfoRelease = MemoryInfoRelease;
  a.MemoryInfoGetName = MemoryInfoGetName;
  a.MemoryInfoGetDeviceId = MemoryInfoGetDeviceId;
  a.MemoryInfoGetMemType = MemoryInfoGetMemType;
  a.MemoryInfoGetAllocatorType = MemoryInfoGetAllocatorType;
  a.GetDefaultAllocator = GetDefaultAllocator;
  a.AllocatorAlloc = AllocatorAlloc;
  a.AllocatorFree = AllocatorFree;
  a.AllocatorGetMemoryInfo = AllocatorGetMemoryInfo;
  a.ValueCreateTensor = ValueCreateTensor;
  a.ValueCreateTensorWithData = ValueCreateTensorWithData;
  a.ValueCreateTensorWithDeleter = ValueCreateTensorWithDeleter;
  a.ValueRelease = ValueRelease;
  a.ValueGetKind = ValueGetKind;
  a.ValueGetTensorTypeAndShape = ValueGetTensorTypeAndShape;
  a.ValueGetTensorData = ValueGetTensorData;
  a.ValueGetTensorMemoryInfo = ValueGetTensorMemoryInfo;
  a.StringTensorFill = StringTensorFill;
  a.StringTensorGetElement = StringTensorGetElement;
  a.ValueGetTypeInfo = ValueGetTypeInfo;
  a.ValueGetElementCount = ValueGetElementCount;
  a.ValueGetElement = ValueGetElement;
  a.ValueCreateSequence = ValueCreateSequence;
  a.ValueCreateMap = ValueCreateMap;
  a.ValueCreateOptional = ValueCreateOptional;
}

}  // namespace capi
}  // namespace onyx

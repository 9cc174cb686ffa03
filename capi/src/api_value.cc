#include <algorithm>
#include <cstring>

#include "capi/src/api_table.h"
#include "capi/src/handles.h"
#include "core/session/providers_query.h"

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
    info.vendor_id = 0x10DE;
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
OnyxStatus* MemoryInfoCreateV2(const char* name, int device_type, int vendor_id, int device_id, int device_mem_type,
                               size_t alignment, OnyxAllocatorType allocator_type, OnyxMemoryInfo** out) {
  API_BEGIN
  API_CHECK_NOT_NULL(name);
  API_CHECK_NOT_NULL(out);
  if (device_type < 0 || device_type > 3)
    return NewStatus(ONYX_INVALID_ARGUMENT, StrCat("MemoryInfoCreateV2: device_type must be 0 (CPU), 1 (GPU), 2 (FPGA) or 3 (NPU), got ", device_type));
  if (device_mem_type != 0 && device_mem_type != 5)
    return NewStatus(ONYX_INVALID_ARGUMENT, StrCat("MemoryInfoCreateV2: device_mem_type must be 0 (default) or 5 (host accessible), got ", device_mem_type));
  if (device_id < 0) return NewStatus(ONYX_INVALID_ARGUMENT, StrCat("MemoryInfoCreateV2: device_id must be >= 0, got ", device_id));
  if (alignment & (alignment - 1))
    return NewStatus(ONYX_INVALID_ARGUMENT, StrCat("MemoryInfoCreateV2: alignment must be 0 or a power of two, got ", alignment));
  if (allocator_type != ONYX_DEVICE_ALLOCATOR && allocator_type != ONYX_ARENA_ALLOCATOR)
    return NewStatus(ONYX_INVALID_ARGUMENT, StrCat("MemoryInfoCreateV2: unknown allocator type ", static_cast<int>(allocator_type)));
  MemoryInfo info;
  info.name = name;
  // GPU memory of NVIDIA's vendor id is what this engine calls Cuda; every
  // other device's memory is described but no allocator exists for it.
  info.device = device_type == 0 ? DeviceType::kCpu : DeviceType::kCuda;
  info.device_id = device_id;
  info.vendor_id = vendor_id;
  info.device_mem_type = device_mem_type;
  info.alignment = alignment;
  info.alloc_type = allocator_type;
  // As onnxruntime: host-accessible memory of a CPU is its output memory type.
  info.mem_type = (device_type == 0 && device_mem_type == 5) ? ONYX_MEM_CPU_OUTPUT : ONYX_MEM_DEFAULT;
  *out = new OnyxMemoryInfo{info};
  API_END
}
// One getter per MemoryInfo field: *out = the field, as the C type `T`.
template <typename T, auto Field>
OnyxStatus* MemoryInfoGet(const OnyxMemoryInfo* info, T* out) {
  API_BEGIN
  API_CHECK_NOT_NULL(info);
  API_CHECK_NOT_NULL(out);
  *out = static_cast<T>(info->info.*Field);
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
  if (info->info.device == DeviceType::kCuda) {
    // Caller-owned CUDA memory (a torch tensor's data_ptr): what sessions with
    // CUDAExecutionProvider read and write in place. Refused, with the reason,
    // where CUDA is not usable.
    Status cuda = CheckProviderName("CUDAExecutionProvider");
    if (!cuda.ok())
      return MakeError(ErrorCode::kInvalidArgument, "memory on device 'Cuda' cannot be used here: ", cuda.message());
    return Status::OK();
  }
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

OnyxStatus* ValueCreateTensorOnDevice(const OnyxMemoryInfo* info, const void* host_data, size_t data_bytes,
                                      const int64_t* shape, size_t rank, OnyxElementType type_arg, OnyxValue** out) {
  const int type = EnumArg(type_arg);
  API_BEGIN
  API_CHECK_NOT_NULL(info);
  API_CHECK_NOT_NULL(out);
  Dims dims;
  const size_t need = IsKnownElemType(type) && (rank == 0 || shape)
                          ? StorageBytes(static_cast<ElemType>(type), static_cast<size_t>(std::max<int64_t>(
                                                                          0, ShapeSize(Dims(shape, shape + rank)))))
                          : 0;
  // Without contents, only the shape and type are checked.
  API_RETURN_IF_ERROR(CheckTensorArg(host_data ? host_data : info, host_data ? data_bytes : need, shape, rank, type,
                                     &dims));
  Allocator* alloc = nullptr;
  Status where = DeviceAllocator(info->info.device, info->info.device_id, &alloc);
  if (!where.ok())
    return NewStatus(ONYX_INVALID_ARGUMENT, StrCat("ValueCreateTensorOnDevice: memory '", info->info.name, "' device ",
                                                   info->info.device_id, " cannot be used here: ", where.message()));
  auto t = std::make_shared<Tensor>(static_cast<ElemType>(type), dims, alloc);
  if (host_data) {
    Tensor src(static_cast<ElemType>(type), dims, const_cast<void*>(host_data), GetCpuAllocator()->Info());
    API_RETURN_IF_ERROR(CopyTensorData(src, t.get()));
  }
  *out = new OnyxValue{Value(std::move(t))};
  API_END
}

OnyxStatus* ValueCopyTensorToHost(const OnyxValue* value, void* host_data, size_t data_bytes) {
  API_BEGIN
  API_CHECK_NOT_NULL(value);
  if (!value->value.IsTensor()) return NewStatus(ONYX_INVALID_ARGUMENT, "ValueCopyTensorToHost: the value is not a tensor");
  const Tensor& t = value->value.tensor();
  if (t.type() == ElemType::kString)
    return NewStatus(ONYX_INVALID_ARGUMENT, "ValueCopyTensorToHost: not for string tensors");
  if (data_bytes != t.bytes())
    return NewStatus(ONYX_INVALID_ARGUMENT, StrCat("ValueCopyTensorToHost: buffer of ", data_bytes, " bytes for a ",
                                                   ElemTypeName(t.type()), ShapeToString(t.dims()), " tensor of ",
                                                   t.bytes(), " bytes"));
  if (t.bytes() == 0) return nullptr;
  API_CHECK_NOT_NULL(host_data);
  Tensor dst(t.type(), t.dims(), host_data, GetCpuAllocator()->Info());
  API_RETURN_IF_ERROR(CopyTensorData(t, &dst));
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
  if (value->value.IsSparse()) {
    const SparseTensor& sp = value->value.sparse();
    auto info = std::make_unique<OnyxTensorTypeAndShapeInfo>();
    info->elem = sp.values->type();
    info->has_shape = true;
    info->dims = sp.dense_dims;
    info->symbols.assign(sp.dense_dims.size(), "");
    *out = info.release();
    return nullptr;
  }
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
    case Value::Kind::kSparseTensor: {
      std::vector<Dim> dims;
      for (int64_t d : v.sparse().dense_dims) dims.push_back(Dim::Of(d));
      t = TypeInfo::Tensor(v.sparse().values->type(), std::move(dims));
      t.kind = TypeInfo::Kind::kSparseTensor;
      return t;
    }
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
  ONYX_CHECK_ARG(k == Value::Kind::kSequence || k == Value::Kind::kMap || k == Value::Kind::kOptional ||
                     k == Value::Kind::kSparseTensor,
                 fn, ": the value is not a sequence, map, optional or sparse tensor");
  return Status::OK();
}

OnyxStatus* ValueGetElementCount(const OnyxValue* value, size_t* out) {
  API_BEGIN
  API_CHECK_NOT_NULL(value);
  API_CHECK_NOT_NULL(out);
  API_RETURN_IF_ERROR(RequireContainer(value, "ValueGetElementCount"));
  *out = value->value.IsSparse() ? 1 + value->value.sparse().indices.size() : value->value.items().size();
  API_END
}

OnyxStatus* ValueGetElement(const OnyxValue* value, size_t index, OnyxValue** out) {
  API_BEGIN
  API_CHECK_NOT_NULL(value);
  API_CHECK_NOT_NULL(out);
  API_RETURN_IF_ERROR(RequireContainer(value, "ValueGetElement"));
  if (value->value.IsSparse()) {
    const SparseTensor& sp = value->value.sparse();
    if (index > sp.indices.size())
      return NewStatus(ONYX_INVALID_ARGUMENT, StrCat("ValueGetElement: index ", index, " is out of range (a sparse tensor has ",
                                                     1 + sp.indices.size(), " tensors)"));
    *out = new OnyxValue{Value(index == 0 ? sp.values : sp.indices[index - 1])};
    return nullptr;
  }
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

OnyxStatus* ValueCreateSparseTensor(OnyxSparseFormat format, const int64_t* dense_shape, size_t rank,
                                    const OnyxValue* values, const OnyxValue* const* indices, size_t index_count,
                                    OnyxValue** out) {
  API_BEGIN
  API_CHECK_NOT_NULL(values);
  API_CHECK_NOT_NULL(out);
  if (rank > 0) API_CHECK_NOT_NULL(dense_shape);
  if (index_count > 0) API_CHECK_NOT_NULL(indices);
  if (!values->value.IsTensor())
    return NewStatus(ONYX_INVALID_ARGUMENT, "ValueCreateSparseTensor: values must be a tensor");
  std::vector<std::shared_ptr<Tensor>> idx;
  for (size_t i = 0; i < index_count; ++i) {
    if (!indices[i] || !indices[i]->value.IsTensor())
      return NewStatus(ONYX_INVALID_ARGUMENT, StrCat("ValueCreateSparseTensor: indices[", i, "] is not a tensor"));
    idx.push_back(indices[i]->value.tensor_ptr());
  }
  for (const auto& t : idx)
    if (t->location().device != DeviceType::kCpu)
      return NewStatus(ONYX_INVALID_ARGUMENT, "ValueCreateSparseTensor: index tensors must be in CPU memory");
  if (values->value.tensor().location().device != DeviceType::kCpu)
    return NewStatus(ONYX_INVALID_ARGUMENT, "ValueCreateSparseTensor: values must be in CPU memory");
  auto sp = std::make_shared<SparseTensor>();
  API_RETURN_IF_ERROR(MakeSparseTensor("sparse tensor", static_cast<SparseFormat>(format),
                                       Dims(dense_shape, dense_shape + rank), values->value.tensor_ptr(),
                                       std::move(idx), sp.get()));
  *out = new OnyxValue{Value::Sparse(std::move(sp))};
  API_END
}

OnyxStatus* ValueGetSparseFormat(const OnyxValue* value, OnyxSparseFormat* out) {
  API_BEGIN
  API_CHECK_NOT_NULL(value);
  API_CHECK_NOT_NULL(out);
  if (!value->value.IsSparse())
    return NewStatus(ONYX_INVALID_ARGUMENT, "ValueGetSparseFormat: the value is not a sparse tensor");
  *out = static_cast<OnyxSparseFormat>(value->value.sparse().format);
  API_END
}

}  // namespace

void FillValueApi(OnyxApi& a) {
  a.ValueCreateSparseTensor = ValueCreateSparseTensor;
  a.ValueGetSparseFormat = ValueGetSparseFormat;
  a.MemoryInfoCreateV2 = MemoryInfoCreateV2;
  a.MemoryInfoGetDeviceMemType = MemoryInfoGet<int, &MemoryInfo::device_mem_type>;
  a.MemoryInfoGetVendorId = MemoryInfoGet<int, &MemoryInfo::vendor_id>;
  a.MemoryInfoCreate = MemoryInfoCreate;
  a.MemoryInfoCreateCpu = MemoryInfoCreateCpu;
  a.MemoryInfoRelease = MemoryInfoRelease;
  a.MemoryInfoGetName = MemoryInfoGetName;
  a.MemoryInfoGetDeviceId = MemoryInfoGet<int, &MemoryInfo::device_id>;
  a.MemoryInfoGetMemType = MemoryInfoGet<OnyxMemType, &MemoryInfo::mem_type>;
  a.MemoryInfoGetAllocatorType = MemoryInfoGet<OnyxAllocatorType, &MemoryInfo::alloc_type>;
  a.GetDefaultAllocator = GetDefaultAllocator;
  a.AllocatorAlloc = AllocatorAlloc;
  a.AllocatorFree = AllocatorFree;
  a.AllocatorGetMemoryInfo = AllocatorGetMemoryInfo;
  a.ValueCreateTensor = ValueCreateTensor;
  a.ValueCreateTensorWithData = ValueCreateTensorWithData;
  a.ValueCreateTensorOnDevice = ValueCreateTensorOnDevice;
  a.ValueCopyTensorToHost = ValueCopyTensorToHost;
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

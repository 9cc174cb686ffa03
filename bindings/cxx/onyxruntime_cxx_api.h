// Onyx Runtime C++ API: header-only RAII wrappers over the public C API.
//
// Everything here goes through onyxruntime_c_api.h and nothing else, so it is
// exactly as stable as the C ABI. Rules:
//  - every OnyxStatus* failure becomes an onyx::Exception carrying its code;
//  - wrappers own their handle and are move-only; where a deep copy makes sense
//    it is an explicit Clone();
//  - a few getters hand back borrowed (non-owning) wrappers; their comment says
//    which parent they must not outlive.
#ifndef ONYXRUNTIME_CXX_API_H_
#define ONYXRUNTIME_CXX_API_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "onyxruntime/onyxruntime_c_api.h"

namespace onyx {

/// Error raised for every failed C API call. `code()` is the C status code.
class Exception : public std::runtime_error {
 public:
  Exception(const std::string& message, OnyxErrorCode code) : std::runtime_error(message), code_(code) {}
  /// The OnyxErrorCode reported by the library (never ONYX_OK).
  OnyxErrorCode code() const noexcept { return code_; }

 private:
  OnyxErrorCode code_;
};

namespace detail {
// Looked up once; NULL when the loaded library is older than this header.
inline const OnyxApi* ApiOrNull() noexcept {
  static const OnyxApi* const api = OnyxGetApiBase()->GetApi(ONYX_API_VERSION);
  return api;
}
}  // namespace detail

/// The C function table. Throws onyx::Exception (ONYX_FAIL) with the library's
/// explanation when it does not provide ONYX_API_VERSION.
inline const OnyxApi& GetApi() {
  const OnyxApi* api = detail::ApiOrNull();
  if (api == nullptr) {
    const char* why = OnyxGetApiBase()->GetApiError(ONYX_API_VERSION);
    throw Exception(why != nullptr ? why : "onyxruntime: requested API version is not supported", ONYX_FAIL);
  }
  return *api;
}

/// Turns a C status into an exception; takes ownership of `status`.
inline void ThrowOnError(OnyxStatus* status) {
  if (status == nullptr) return;
  const OnyxApi& api = GetApi();
  OnyxErrorCode code = api.StatusGetCode(status);
  std::string message = api.StatusGetMessage(status);
  api.StatusRelease(status);
  throw Exception(message, code == ONYX_OK ? ONYX_FAIL : code);
}

namespace detail {

template <typename T>
struct Releaser;
// Destructors must not throw: a live handle implies the table was found.
#define ONYX_CXX_RELEASER(Type, Fn)                                  \
  template <>                                                        \
  struct Releaser<Type> {                                            \
    static void Release(Type* p) noexcept {                          \
      if (const OnyxApi* api = ApiOrNull()) api->Fn(p);              \
    }                                                                \
  };
ONYX_CXX_RELEASER(OnyxEnv, EnvRelease)
ONYX_CXX_RELEASER(OnyxSessionOptions, SessionOptionsRelease)
ONYX_CXX_RELEASER(OnyxSession, SessionRelease)
ONYX_CXX_RELEASER(OnyxRunOptions, RunOptionsRelease)
ONYX_CXX_RELEASER(OnyxValue, ValueRelease)
ONYX_CXX_RELEASER(OnyxMemoryInfo, MemoryInfoRelease)
ONYX_CXX_RELEASER(OnyxTypeInfo, TypeInfoRelease)
ONYX_CXX_RELEASER(OnyxTensorTypeAndShapeInfo, TensorTypeAndShapeInfoRelease)
ONYX_CXX_RELEASER(OnyxModelMetadata, ModelMetadataRelease)
#undef ONYX_CXX_RELEASER

/// Move-only holder of one C handle. `owned == false` marks a borrowed handle
/// (never released here).
template <typename T>
class Handle {
 public:
  Handle() noexcept = default;
  explicit Handle(T* p, bool owned = true) noexcept : p_(p), owned_(owned) {}
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  Handle(Handle&& other) noexcept : p_(other.p_), owned_(other.owned_) { other.p_ = nullptr; }
  Handle& operator=(Handle&& other) noexcept {
    if (this != &other) {
      Reset();
      p_ = other.p_;
      owned_ = other.owned_;
      other.p_ = nullptr;
    }
    return *this;
  }
  ~Handle() { Reset(); }

  /// The raw handle (still owned by this object).
  T* get() const noexcept { return p_; }
  operator T*() const noexcept { return p_; }  // NOLINT: lets wrappers be passed to C calls
  explicit operator bool() const noexcept { return p_ != nullptr; }
  /// Gives up ownership; the caller must release the returned handle.
  T* release() noexcept {
    T* p = p_;
    p_ = nullptr;
    return p;
  }
  bool owned() const noexcept { return owned_; }

 protected:
  void Reset() noexcept {
    if (p_ != nullptr && owned_) Releaser<T>::Release(p_);
    p_ = nullptr;
  }
  T* p_ = nullptr;
  bool owned_ = true;
};

// Throws a clear error instead of letting a moved-from wrapper reach the C side
// as NULL (which the C side would also reject, but with a less useful message).
template <typename T>
inline T* Checked(T* p, const char* what) {
  if (p == nullptr) throw Exception(std::string("onyx: use of an empty or moved-from ") + what, ONYX_INVALID_ARGUMENT);
  return p;
}

}  // namespace detail

/// IEEE half precision, stored as raw bits.
struct Float16 {
  uint16_t value;
};
/// bfloat16, stored as raw bits.
struct BFloat16 {
  uint16_t value;
};

/// Maps a C++ element type to its OnyxElementType.
template <typename T>
struct TypeToElementType;
#define ONYX_CXX_ELEMENT(CType, Enum) \
  template <>                         \
  struct TypeToElementType<CType> {   \
    static constexpr OnyxElementType value = Enum; \
  };
ONYX_CXX_ELEMENT(float, ONYX_TYPE_FLOAT)
ONYX_CXX_ELEMENT(double, ONYX_TYPE_DOUBLE)
ONYX_CXX_ELEMENT(int8_t, ONYX_TYPE_INT8)
ONYX_CXX_ELEMENT(uint8_t, ONYX_TYPE_UINT8)
ONYX_CXX_ELEMENT(int16_t, ONYX_TYPE_INT16)
ONYX_CXX_ELEMENT(uint16_t, ONYX_TYPE_UINT16)
ONYX_CXX_ELEMENT(int32_t, ONYX_TYPE_INT32)
ONYX_CXX_ELEMENT(uint32_t, ONYX_TYPE_UINT32)
ONYX_CXX_ELEMENT(int64_t, ONYX_TYPE_INT64)
ONYX_CXX_ELEMENT(uint64_t, ONYX_TYPE_UINT64)
ONYX_CXX_ELEMENT(bool, ONYX_TYPE_BOOL)
ONYX_CXX_ELEMENT(Float16, ONYX_TYPE_FLOAT16)
ONYX_CXX_ELEMENT(BFloat16, ONYX_TYPE_BFLOAT16)
#undef ONYX_CXX_ELEMENT

/// Size in bytes of one element of `type`; 0 for strings and sub-byte types.
inline size_t ElementSize(OnyxElementType type) noexcept {
  switch (type) {
    case ONYX_TYPE_FLOAT: case ONYX_TYPE_INT32: case ONYX_TYPE_UINT32: return 4;
    case ONYX_TYPE_DOUBLE: case ONYX_TYPE_INT64: case ONYX_TYPE_UINT64: case ONYX_TYPE_COMPLEX64: return 8;
    case ONYX_TYPE_COMPLEX128: return 16;
    case ONYX_TYPE_INT16: case ONYX_TYPE_UINT16: case ONYX_TYPE_FLOAT16: case ONYX_TYPE_BFLOAT16: return 2;
    case ONYX_TYPE_INT8: case ONYX_TYPE_UINT8: case ONYX_TYPE_BOOL:
    case ONYX_TYPE_FLOAT8E4M3FN: case ONYX_TYPE_FLOAT8E4M3FNUZ:
    case ONYX_TYPE_FLOAT8E5M2: case ONYX_TYPE_FLOAT8E5M2FNUZ: return 1;
    default: return 0;
  }
}

/// Logging environment. Sessions keep their own reference to it.
class Env : public detail::Handle<OnyxEnv> {
 public:
  explicit Env(OnyxLoggingLevel severity = ONYX_LOG_WARNING, const char* log_id = "onyx") {
    OnyxEnv* out = nullptr;
    ThrowOnError(GetApi().EnvCreate(severity, log_id, &out));
    p_ = out;
  }
  /// Adopts an existing handle (takes ownership).
  explicit Env(OnyxEnv* p) noexcept : Handle(p) {}
};

/// Session configuration. Setters return *this so calls can be chained.
class SessionOptions : public detail::Handle<OnyxSessionOptions> {
 public:
  SessionOptions() {
    OnyxSessionOptions* out = nullptr;
    ThrowOnError(GetApi().SessionOptionsCreate(&out));
    p_ = out;
  }
  explicit SessionOptions(OnyxSessionOptions* p) noexcept : Handle(p) {}

  /// Deep copy.
  SessionOptions Clone() const {
    OnyxSessionOptions* out = nullptr;
    ThrowOnError(GetApi().SessionOptionsClone(detail::Checked(p_, "SessionOptions"), &out));
    return SessionOptions(out);
  }
  SessionOptions& SetIntraOpNumThreads(int threads) {
    ThrowOnError(GetApi().SessionOptionsSetIntraOpThreads(p_, threads));
    return *this;
  }
  SessionOptions& SetInterOpNumThreads(int threads) {
    ThrowOnError(GetApi().SessionOptionsSetInterOpThreads(p_, threads));
    return *this;
  }
  SessionOptions& SetGraphOptimizationLevel(OnyxGraphOptimizationLevel level) {
    ThrowOnError(GetApi().SessionOptionsSetGraphOptimizationLevel(p_, level));
    return *this;
  }
  SessionOptions& SetExecutionMode(OnyxExecutionMode mode) {
    ThrowOnError(GetApi().SessionOptionsSetExecutionMode(p_, mode));
    return *this;
  }
  SessionOptions& SetLogSeverityLevel(int severity) {
    ThrowOnError(GetApi().SessionOptionsSetLogSeverity(p_, severity));
    return *this;
  }
  SessionOptions& SetLogId(const std::string& log_id) {
    ThrowOnError(GetApi().SessionOptionsSetLogId(p_, log_id.c_str()));
    return *this;
  }
  SessionOptions& AddConfigEntry(const std::string& key, const std::string& value) {
    ThrowOnError(GetApi().SessionOptionsAddConfigEntry(p_, key.c_str(), value.c_str()));
    return *this;
  }
  /// The value for `key`, or nullopt when it is not set.
  std::optional<std::string> GetConfigEntry(const std::string& key) const {
    const char* out = nullptr;
    ThrowOnError(GetApi().SessionOptionsGetConfigEntry(p_, key.c_str(), &out));
    if (out == nullptr) return std::nullopt;
    return std::string(out);
  }
  /// Appends a provider ("CPUExecutionProvider", "CUDAExecutionProvider", ...).
  SessionOptions& AppendExecutionProvider(const std::string& name,
                                          const std::map<std::string, std::string>& options = {}) {
    std::vector<const char*> keys, values;
    keys.reserve(options.size());
    values.reserve(options.size());
    for (const auto& kv : options) {
      keys.push_back(kv.first.c_str());
      values.push_back(kv.second.c_str());
    }
    ThrowOnError(GetApi().SessionOptionsAppendProvider(p_, name.c_str(), keys.data(), values.data(), keys.size()));
    return *this;
  }
};

/// Per-run settings: log tag, severity and the terminate flag.
class RunOptions : public detail::Handle<OnyxRunOptions> {
 public:
  RunOptions() {
    OnyxRunOptions* out = nullptr;
    ThrowOnError(GetApi().RunOptionsCreate(&out));
    p_ = out;
  }
  explicit RunOptions(OnyxRunOptions* p) noexcept : Handle(p) {}

  RunOptions& SetTag(const std::string& tag) {
    ThrowOnError(GetApi().RunOptionsSetTag(p_, tag.c_str()));
    return *this;
  }
  std::string GetTag() const {
    const char* out = nullptr;
    ThrowOnError(GetApi().RunOptionsGetTag(p_, &out));
    return out != nullptr ? std::string(out) : std::string();
  }
  RunOptions& SetLogSeverityLevel(int severity) {
    ThrowOnError(GetApi().RunOptionsSetLogSeverity(p_, severity));
    return *this;
  }
  /// Asks runs using these options to stop; safe from another thread.
  RunOptions& SetTerminate(bool terminate = true) {
    ThrowOnError(GetApi().RunOptionsSetTerminate(p_, terminate ? 1 : 0));
    return *this;
  }
  bool GetTerminate() const {
    int out = 0;
    ThrowOnError(GetApi().RunOptionsGetTerminate(p_, &out));
    return out != 0;
  }
};

/// Where a tensor's memory lives.
class MemoryInfo : public detail::Handle<OnyxMemoryInfo> {
 public:
  /// Adopts `p`; `owned == false` wraps a borrowed handle.
  explicit MemoryInfo(OnyxMemoryInfo* p, bool owned = true) noexcept : Handle(p, owned) {}

  static MemoryInfo CreateCpu(OnyxAllocatorType allocator_type = ONYX_DEVICE_ALLOCATOR,
                              OnyxMemType mem_type = ONYX_MEM_DEFAULT) {
    OnyxMemoryInfo* out = nullptr;
    ThrowOnError(GetApi().MemoryInfoCreateCpu(allocator_type, mem_type, &out));
    return MemoryInfo(out);
  }
  static MemoryInfo Create(const std::string& name, OnyxAllocatorType allocator_type, int device_id,
                           OnyxMemType mem_type) {
    OnyxMemoryInfo* out = nullptr;
    ThrowOnError(GetApi().MemoryInfoCreate(name.c_str(), allocator_type, device_id, mem_type, &out));
    return MemoryInfo(out);
  }
  std::string GetName() const {
    const char* out = nullptr;
    ThrowOnError(GetApi().MemoryInfoGetName(p_, &out));
    return out != nullptr ? std::string(out) : std::string();
  }
  int GetDeviceId() const {
    int out = 0;
    ThrowOnError(GetApi().MemoryInfoGetDeviceId(p_, &out));
    return out;
  }
  OnyxMemType GetMemType() const {
    OnyxMemType out = ONYX_MEM_DEFAULT;
    ThrowOnError(GetApi().MemoryInfoGetMemType(p_, &out));
    return out;
  }
  OnyxAllocatorType GetAllocatorType() const {
    OnyxAllocatorType out = ONYX_DEVICE_ALLOCATOR;
    ThrowOnError(GetApi().MemoryInfoGetAllocatorType(p_, &out));
    return out;
  }
};

/// Element type and shape of a tensor (declared or actual).
class TensorTypeAndShapeInfo : public detail::Handle<OnyxTensorTypeAndShapeInfo> {
 public:
  /// Adopts `p`; `owned == false` wraps a handle borrowed from a TypeInfo.
  explicit TensorTypeAndShapeInfo(OnyxTensorTypeAndShapeInfo* p, bool owned = true) noexcept : Handle(p, owned) {}

  OnyxElementType GetElementType() const {
    OnyxElementType out = ONYX_TYPE_UNDEFINED;
    ThrowOnError(GetApi().TensorInfoGetElementType(p_, &out));
    return out;
  }
  size_t GetDimensionsCount() const {
    size_t out = 0;
    ThrowOnError(GetApi().TensorInfoGetDimCount(p_, &out));
    return out;
  }
  /// False when the rank itself is unknown.
  bool HasShape() const {
    int out = 0;
    ThrowOnError(GetApi().TensorInfoHasShape(p_, &out));
    return out != 0;
  }
  /// Dims, -1 for symbolic or unknown ones.
  std::vector<int64_t> GetShape() const {
    std::vector<int64_t> dims(GetDimensionsCount());
    ThrowOnError(GetApi().TensorInfoGetDims(p_, dims.data(), dims.size()));
    return dims;
  }
  /// Symbol names per dim; "" for known or unnamed dims.
  std::vector<std::string> GetSymbolicDimensions() const {
    std::vector<const char*> names(GetDimensionsCount(), nullptr);
    ThrowOnError(GetApi().TensorInfoGetSymbolicDims(p_, names.data(), names.size()));
    std::vector<std::string> out;
    out.reserve(names.size());
    for (const char* n : names) out.emplace_back(n != nullptr ? n : "");
    return out;
  }
  /// Product of the dims; -1 when any is unknown.
  int64_t GetElementCount() const {
    int64_t out = 0;
    ThrowOnError(GetApi().TensorInfoGetElementCount(p_, &out));
    return out;
  }
};

/// Declared type of a session input or output.
class TypeInfo : public detail::Handle<OnyxTypeInfo> {
 public:
  explicit TypeInfo(OnyxTypeInfo* p) noexcept : Handle(p) {}

  OnyxValueKind GetKind() const {
    OnyxValueKind out = ONYX_VALUE_UNKNOWN;
    ThrowOnError(GetApi().TypeInfoGetKind(p_, &out));
    return out;
  }
  /// "tensor(float)", "seq(tensor(int64))", ...
  std::string GetTypeString() const {
    const char* out = nullptr;
    ThrowOnError(GetApi().TypeInfoGetTypeString(p_, &out));
    return out != nullptr ? std::string(out) : std::string();
  }
  /// Borrowed view: must not outlive this TypeInfo. Throws when not a tensor.
  TensorTypeAndShapeInfo GetTensorTypeAndShapeInfo() const {
    const OnyxTensorTypeAndShapeInfo* out = nullptr;
    ThrowOnError(GetApi().TypeInfoGetTensorInfo(p_, &out));
    if (out == nullptr) throw Exception("onyx: type " + GetTypeString() + " is not a tensor", ONYX_INVALID_ARGUMENT);
    // The view never calls a mutating function, so dropping const is safe.
    return TensorTypeAndShapeInfo(const_cast<OnyxTensorTypeAndShapeInfo*>(out), false);
  }
};

/// Model metadata; strings are copied out.
class ModelMetadata : public detail::Handle<OnyxModelMetadata> {
 public:
  explicit ModelMetadata(OnyxModelMetadata* p) noexcept : Handle(p) {}

  std::string GetProducerName() const { return Str(GetApi().ModelMetadataGetProducerName); }
  std::string GetGraphName() const { return Str(GetApi().ModelMetadataGetGraphName); }
  std::string GetDomain() const { return Str(GetApi().ModelMetadataGetDomain); }
  std::string GetDescription() const { return Str(GetApi().ModelMetadataGetDescription); }
  std::string GetGraphDescription() const { return Str(GetApi().ModelMetadataGetGraphDescription); }
  int64_t GetVersion() const {
    int64_t out = 0;
    ThrowOnError(GetApi().ModelMetadataGetVersion(p_, &out));
    return out;
  }
  /// Custom key/value pairs (metadata_props).
  std::map<std::string, std::string> GetCustomMetadataMap() const {
    const OnyxApi& api = GetApi();
    size_t count = 0;
    ThrowOnError(api.ModelMetadataGetCustomCount(p_, &count));
    std::map<std::string, std::string> out;
    for (size_t i = 0; i < count; ++i) {
      const char* k = nullptr;
      const char* v = nullptr;
      ThrowOnError(api.ModelMetadataGetCustomKey(p_, i, &k));
      ThrowOnError(api.ModelMetadataGetCustomValue(p_, i, &v));
      out[k != nullptr ? k : ""] = v != nullptr ? v : "";
    }
    return out;
  }
  std::optional<std::string> LookupCustomMetadata(const std::string& key) const {
    const char* out = nullptr;
    ThrowOnError(GetApi().ModelMetadataLookupCustom(p_, key.c_str(), &out));
    if (out == nullptr) return std::nullopt;
    return std::string(out);
  }

 private:
  std::string Str(OnyxStatus* (*fn)(const OnyxModelMetadata*, const char**)) const {
    const char* out = nullptr;
    ThrowOnError(fn(p_, &out));
    return out != nullptr ? std::string(out) : std::string();
  }
};

/// A value passed to or returned by a run (tensors for now).
class Value : public detail::Handle<OnyxValue> {
 public:
  Value() noexcept = default;
  /// Adopts `p` (takes ownership).
  explicit Value(OnyxValue* p) noexcept : Handle(p) {}

  /// Tensor over the caller's buffer, no copy: `data` must stay alive and
  /// unchanged as long as this Value (and any run using it).
  template <typename T>
  static Value CreateTensor(const MemoryInfo& info, T* data, size_t count, const int64_t* shape, size_t rank) {
    static_assert(!std::is_same<T, std::string>::value, "string tensors: use CreateStringTensor");
    OnyxValue* out = nullptr;
    ThrowOnError(GetApi().ValueCreateTensorWithData(info, static_cast<void*>(data), count * sizeof(T), shape, rank,
                                                    TypeToElementType<T>::value, &out));
    return Value(out);
  }
  template <typename T>
  static Value CreateTensor(const MemoryInfo& info, T* data, size_t count, const std::vector<int64_t>& shape) {
    return CreateTensor<T>(info, data, count, shape.data(), shape.size());
  }
  /// Untyped variant: `bytes` must equal the element count times the size of `type`.
  static Value CreateTensor(const MemoryInfo& info, void* data, size_t bytes, const std::vector<int64_t>& shape,
                            OnyxElementType type) {
    OnyxValue* out = nullptr;
    ThrowOnError(GetApi().ValueCreateTensorWithData(info, data, bytes, shape.data(), shape.size(), type, &out));
    return Value(out);
  }
  /// Tensor whose buffer the library allocates (contents uninitialised).
  template <typename T>
  static Value CreateTensor(const std::vector<int64_t>& shape) {
    return CreateTensor(shape, TypeToElementType<T>::value);
  }
  static Value CreateTensor(const std::vector<int64_t>& shape, OnyxElementType type) {
    OnyxValue* out = nullptr;
    ThrowOnError(GetApi().ValueCreateTensor(nullptr, shape.data(), shape.size(), type, &out));
    return Value(out);
  }
  /// String tensor holding copies of `strings` (row-major; size must match shape).
  static Value CreateStringTensor(const std::vector<int64_t>& shape, const std::vector<std::string>& strings) {
    Value v = CreateTensor(shape, ONYX_TYPE_STRING);
    v.FillStringTensor(strings);
    return v;
  }

  OnyxValueKind GetKind() const {
    OnyxValueKind out = ONYX_VALUE_UNKNOWN;
    ThrowOnError(GetApi().ValueGetKind(p_, &out));
    return out;
  }
  bool IsTensor() const { return GetKind() == ONYX_VALUE_TENSOR; }
  TensorTypeAndShapeInfo GetTensorTypeAndShapeInfo() const {
    OnyxTensorTypeAndShapeInfo* out = nullptr;
    ThrowOnError(GetApi().ValueGetTensorTypeAndShape(p_, &out));
    return TensorTypeAndShapeInfo(out);
  }
  std::vector<int64_t> GetShape() const { return GetTensorTypeAndShapeInfo().GetShape(); }
  OnyxElementType GetElementType() const { return GetTensorTypeAndShapeInfo().GetElementType(); }
  size_t GetElementCount() const {
    int64_t n = GetTensorTypeAndShapeInfo().GetElementCount();
    return n < 0 ? 0 : static_cast<size_t>(n);
  }
  /// The elements, valid while this Value lives. Throws when T does not match
  /// the element type, so a float tensor is never read as int32.
  template <typename T>
  T* GetTensorMutableData() {
    OnyxElementType actual = GetElementType();
    if (actual != TypeToElementType<T>::value) {
      throw Exception("onyx: GetTensorData: tensor element type " + std::to_string(static_cast<int>(actual)) +
                          " does not match requested type " +
                          std::to_string(static_cast<int>(TypeToElementType<T>::value)),
                      ONYX_INVALID_ARGUMENT);
    }
    void* out = nullptr;
    ThrowOnError(GetApi().ValueGetTensorData(p_, &out));
    return static_cast<T*>(out);
  }
  template <typename T>
  const T* GetTensorData() const {
    return const_cast<Value*>(this)->GetTensorMutableData<T>();
  }
  /// Untyped pointer to the elements (not for strings).
  void* GetTensorRawData() {
    void* out = nullptr;
    ThrowOnError(GetApi().ValueGetTensorData(p_, &out));
    return out;
  }
  /// Borrowed: must not outlive this Value.
  MemoryInfo GetTensorMemoryInfo() const {
    const OnyxMemoryInfo* out = nullptr;
    ThrowOnError(GetApi().ValueGetTensorMemoryInfo(p_, &out));
    return MemoryInfo(const_cast<OnyxMemoryInfo*>(out), false);
  }
  void FillStringTensor(const std::vector<std::string>& strings) {
    std::vector<const char*> ptrs;
    std::vector<size_t> lengths;
    ptrs.reserve(strings.size());
    lengths.reserve(strings.size());
    for (const auto& s : strings) {
      ptrs.push_back(s.data());
      lengths.push_back(s.size());
    }
    ThrowOnError(GetApi().StringTensorFill(p_, ptrs.data(), lengths.data(), ptrs.size()));
  }
  std::string GetStringTensorElement(size_t index) const {
    const char* out = nullptr;
    size_t length = 0;
    ThrowOnError(GetApi().StringTensorGetElement(p_, index, &out, &length));
    return std::string(out != nullptr ? out : "", out != nullptr ? length : 0);
  }
  std::vector<std::string> GetStringTensorData() const {
    size_t n = GetElementCount();
    std::vector<std::string> out;
    out.reserve(n);
    for (size_t i = 0; i < n; ++i) out.push_back(GetStringTensorElement(i));
    return out;
  }
};

/// A loaded, prepared model. Run() may be called from many threads at once.
class Session : public detail::Handle<OnyxSession> {
 public:
  Session(const Env& env, const std::string& model_path, const SessionOptions& options) {
    OnyxSession* out = nullptr;
    ThrowOnError(GetApi().SessionCreate(env, model_path.c_str(), options, &out));
    p_ = out;
  }
  Session(const Env& env, const void* model_data, size_t length, const SessionOptions& options) {
    OnyxSession* out = nullptr;
    ThrowOnError(GetApi().SessionCreateFromBytes(env, model_data, length, options, &out));
    p_ = out;
  }
  /// Default session options.
  Session(const Env& env, const std::string& model_path) {
    OnyxSession* out = nullptr;
    ThrowOnError(GetApi().SessionCreate(env, model_path.c_str(), nullptr, &out));
    p_ = out;
  }
  explicit Session(OnyxSession* p) noexcept : Handle(p) {}

  size_t GetInputCount() const { return Count(GetApi().SessionGetInputCount); }
  size_t GetOutputCount() const { return Count(GetApi().SessionGetOutputCount); }
  size_t GetOverridableInitializerCount() const { return Count(GetApi().SessionGetOverridableInitializerCount); }
  std::string GetInputName(size_t i) const { return Name(GetApi().SessionGetInputName, i); }
  std::string GetOutputName(size_t i) const { return Name(GetApi().SessionGetOutputName, i); }
  std::string GetOverridableInitializerName(size_t i) const {
    return Name(GetApi().SessionGetOverridableInitializerName, i);
  }
  std::vector<std::string> GetInputNames() const { return Names(GetApi().SessionGetInputCount, GetApi().SessionGetInputName); }
  std::vector<std::string> GetOutputNames() const {
    return Names(GetApi().SessionGetOutputCount, GetApi().SessionGetOutputName);
  }
  std::vector<std::string> GetOverridableInitializerNames() const {
    return Names(GetApi().SessionGetOverridableInitializerCount, GetApi().SessionGetOverridableInitializerName);
  }
  TypeInfo GetInputTypeInfo(size_t i) const { return Type(GetApi().SessionGetInputTypeInfo, i); }
  TypeInfo GetOutputTypeInfo(size_t i) const { return Type(GetApi().SessionGetOutputTypeInfo, i); }
  TypeInfo GetOverridableInitializerTypeInfo(size_t i) const {
    return Type(GetApi().SessionGetOverridableInitializerTypeInfo, i);
  }
  ModelMetadata GetModelMetadata() const {
    OnyxModelMetadata* out = nullptr;
    ThrowOnError(GetApi().SessionGetModelMetadata(p_, &out));
    return ModelMetadata(out);
  }
  /// Providers in use, in priority order.
  std::vector<std::string> GetProviders() const {
    return Names(GetApi().SessionGetProviderCount, GetApi().SessionGetProviderName);
  }

  /// Runs with raw arrays; `output_names == nullptr` asks for every output
  /// (then output_count must equal GetOutputCount()).
  std::vector<Value> Run(const RunOptions* run_options, const char* const* input_names, const Value* inputs,
                         size_t input_count, const char* const* output_names, size_t output_count) {
    std::vector<const OnyxValue*> raw_inputs(input_count);
    for (size_t i = 0; i < input_count; ++i) raw_inputs[i] = inputs[i].get();
    std::vector<OnyxValue*> raw_outputs(output_count, nullptr);
    // Reserve first so that adopting the outputs below cannot throw and leak.
    std::vector<Value> result;
    result.reserve(output_count);
    ThrowOnError(GetApi().SessionRun(p_, run_options != nullptr ? run_options->get() : nullptr, input_names,
                                     raw_inputs.data(), input_count, output_names, output_count,
                                     raw_outputs.data()));
    for (OnyxValue* v : raw_outputs) result.emplace_back(v);
    return result;
  }
  /// Runs the model; empty `output_names` means every output in model order.
  std::vector<Value> Run(const RunOptions& run_options, const std::vector<std::string>& input_names,
                         const std::vector<Value>& inputs, const std::vector<std::string>& output_names) {
    return RunImpl(&run_options, input_names, inputs, output_names);
  }
  /// Same, with default run options.
  std::vector<Value> Run(const std::vector<std::string>& input_names, const std::vector<Value>& inputs,
                         const std::vector<std::string>& output_names = {}) {
    return RunImpl(nullptr, input_names, inputs, output_names);
  }

 private:
  std::vector<Value> RunImpl(const RunOptions* run_options, const std::vector<std::string>& input_names,
                             const std::vector<Value>& inputs, const std::vector<std::string>& output_names) {
    if (input_names.size() != inputs.size()) {
      throw Exception("onyx: Session::Run: " + std::to_string(input_names.size()) + " input names but " +
                          std::to_string(inputs.size()) + " input values",
                      ONYX_INVALID_ARGUMENT);
    }
    std::vector<const char*> in_names;
    in_names.reserve(input_names.size());
    for (const auto& n : input_names) in_names.push_back(n.c_str());
    std::vector<std::string> all_outputs;
    const std::vector<std::string>* wanted = &output_names;
    if (output_names.empty()) {
      all_outputs = GetOutputNames();
      wanted = &all_outputs;
    }
    std::vector<const char*> out_names;
    out_names.reserve(wanted->size());
    for (const auto& n : *wanted) out_names.push_back(n.c_str());
    return Run(run_options, in_names.data(), inputs.data(), inputs.size(), out_names.data(), out_names.size());
  }
  size_t Count(OnyxStatus* (*fn)(const OnyxSession*, size_t*)) const {
    size_t out = 0;
    ThrowOnError(fn(p_, &out));
    return out;
  }
  std::string Name(OnyxStatus* (*fn)(const OnyxSession*, size_t, const char**), size_t i) const {
    const char* out = nullptr;
    ThrowOnError(fn(p_, i, &out));
    return out != nullptr ? std::string(out) : std::string();
  }
  std::vector<std::string> Names(OnyxStatus* (*count)(const OnyxSession*, size_t*),
                                 OnyxStatus* (*name)(const OnyxSession*, size_t, const char**)) const {
    size_t n = Count(count);
    std::vector<std::string> out;
    out.reserve(n);
    for (size_t i = 0; i < n; ++i) out.push_back(Name(name, i));
    return out;
  }
  TypeInfo Type(OnyxStatus* (*fn)(const OnyxSession*, size_t, OnyxTypeInfo**), size_t i) const {
    OnyxTypeInfo* out = nullptr;
    ThrowOnError(fn(p_, i, &out));
    return TypeInfo(out);
  }
};

/// Library version ("0.1.0").
inline std::string GetVersionString() { return GetApi().GetVersionString(); }
/// Build configuration in one line.
inline std::string GetBuildInfoString() { return GetApi().GetBuildInfoString(); }
/// Providers usable on this machine, in default priority order.
inline std::vector<std::string> GetAvailableProviders() {
  const OnyxApi& api = GetApi();
  size_t n = 0;
  ThrowOnError(api.GetAvailableProviderCount(&n));
  std::vector<std::string> out;
  for (size_t i = 0; i < n; ++i) {
    const char* name = nullptr;
    ThrowOnError(api.GetAvailableProviderName(i, &name));
    out.emplace_back(name != nullptr ? name : "");
  }
  return out;
}
/// Every provider name the library knows, available or not.
inline std::vector<std::string> GetAllProviders() {
  const OnyxApi& api = GetApi();
  size_t n = 0;
  ThrowOnError(api.GetAllProviderCount(&n));
  std::vector<std::string> out;
  for (size_t i = 0; i < n; ++i) {
    const char* name = nullptr;
    ThrowOnError(api.GetAllProviderName(i, &name));
    out.emplace_back(name != nullptr ? name : "");
  }
  return out;
}

}  // namespace onyx

#endif  // ONYXRUNTIME_CXX_API_H_

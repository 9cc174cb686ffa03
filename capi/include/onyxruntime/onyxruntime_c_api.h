/*
 * Onyx Runtime C API. The only interface of libonyxruntime.so.
 *
 * Conventions (apply to every function below unless its comment says otherwise):
 *  - Fallible functions return OnyxStatus*: NULL on success, otherwise an object
 *    the caller owns and frees with OnyxApi::StatusRelease. On failure, out
 *    parameters are left unchanged and no handle passed in is modified.
 *  - A handle returned through a pointer-to-pointer named `out` by a
 *    ...Create/...Get...Info function is owned by the caller and freed with the
 *    matching ...Release. `const char**` outs are borrowed: they live as long as
 *    the object they were read from (stated per function).
 *  - ...Release functions accept NULL and do nothing.
 *  - NULL handles or NULL out pointers are reported as ONYX_INVALID_ARGUMENT.
 *  - Thread-safety: an OnyxSession may be used from many threads at once
 *    (SessionRun included); all other handles must not be mutated from two
 *    threads at once but may be read concurrently.
 *  - The OnyxApi table only grows at its end; ONYX_API_VERSION tells a caller
 *    how far it may read.
 */
#ifndef ONYXRUNTIME_C_API_H_
#define ONYXRUNTIME_C_API_H_

#ifndef ONYX_CFFI_CDEF
#include <stddef.h>
#include <stdint.h>

#if defined(_WIN32)
#define ONYX_EXPORT __declspec(dllexport)
#else
#define ONYX_EXPORT __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
extern "C" {
#endif
#else
#define ONYX_EXPORT
#endif /* ONYX_CFFI_CDEF */

#define ONYX_API_VERSION 7

/* Error codes. Values are fixed forever; new codes are appended. */
typedef enum OnyxErrorCode {
  ONYX_OK = 0,
  ONYX_FAIL = 1,
  ONYX_INVALID_ARGUMENT = 2,
  ONYX_NO_SUCHFILE = 3,
  ONYX_NO_MODEL = 4,
  ONYX_ENGINE_ERROR = 5,
  ONYX_RUNTIME_EXCEPTION = 6,
  ONYX_INVALID_PROTOBUF = 7,
  ONYX_MODEL_LOADED = 8,
  ONYX_NOT_IMPLEMENTED = 9,
  ONYX_INVALID_GRAPH = 10,
  ONYX_EP_FAIL = 11,
  /* Version 6: SessionOptionsSetLoadCancellation stopped a session creation. */
  ONYX_MODEL_LOAD_CANCELED = 12
} OnyxErrorCode;

/* Tensor element types; values equal onnx.TensorProto.DataType. */
typedef enum OnyxElementType {
  ONYX_TYPE_UNDEFINED = 0,
  ONYX_TYPE_FLOAT = 1,
  ONYX_TYPE_UINT8 = 2,
  ONYX_TYPE_INT8 = 3,
  ONYX_TYPE_UINT16 = 4,
  ONYX_TYPE_INT16 = 5,
  ONYX_TYPE_INT32 = 6,
  ONYX_TYPE_INT64 = 7,
  ONYX_TYPE_STRING = 8,
  ONYX_TYPE_BOOL = 9,
  ONYX_TYPE_FLOAT16 = 10,
  ONYX_TYPE_DOUBLE = 11,
  ONYX_TYPE_UINT32 = 12,
  ONYX_TYPE_UINT64 = 13,
  ONYX_TYPE_COMPLEX64 = 14,
  ONYX_TYPE_COMPLEX128 = 15,
  ONYX_TYPE_BFLOAT16 = 16,
  ONYX_TYPE_FLOAT8E4M3FN = 17,
  ONYX_TYPE_FLOAT8E4M3FNUZ = 18,
  ONYX_TYPE_FLOAT8E5M2 = 19,
  ONYX_TYPE_FLOAT8E5M2FNUZ = 20,
  ONYX_TYPE_UINT4 = 21,
  ONYX_TYPE_INT4 = 22,
  ONYX_TYPE_FLOAT4E2M1 = 23,
  /* Appended (ONNX's numbering); a library older than these refuses them
     with INVALID_ARGUMENT naming the type: */
  ONYX_TYPE_FLOAT8E8M0 = 24, /* one byte, an exponent only (2^(e-127)), 0xFF is NaN */
  ONYX_TYPE_UINT2 = 25,      /* packed four per byte, lowest bits first */
  ONYX_TYPE_INT2 = 26
} OnyxElementType;

typedef enum OnyxValueKind {
  ONYX_VALUE_UNKNOWN = 0,
  ONYX_VALUE_TENSOR = 1,
  ONYX_VALUE_SEQUENCE = 2,
  ONYX_VALUE_MAP = 3,
  ONYX_VALUE_OPTIONAL = 4,
  ONYX_VALUE_SPARSE_TENSOR = 5
} OnyxValueKind;

/* Layouts of a sparse tensor (values as onnxruntime's OrtSparseFormat). */
typedef enum OnyxSparseFormat {
  ONYX_SPARSE_UNDEFINED = 0,
  ONYX_SPARSE_COO = 1,
  ONYX_SPARSE_CSR = 2,
  ONYX_SPARSE_BLOCK_SPARSE = 4
} OnyxSparseFormat;

typedef enum OnyxGraphOptimizationLevel {
  ONYX_DISABLE_ALL = 0,
  ONYX_ENABLE_BASIC = 1,
  ONYX_ENABLE_EXTENDED = 2,
  ONYX_ENABLE_LAYOUT = 3,
  ONYX_ENABLE_ALL = 99
} OnyxGraphOptimizationLevel;

typedef enum OnyxExecutionMode {
  ONYX_EXECUTION_SEQUENTIAL = 0,
  ONYX_EXECUTION_PARALLEL = 1
} OnyxExecutionMode;

typedef enum OnyxExecutionOrder {
  ONYX_EXECUTION_ORDER_DEFAULT = 0,
  ONYX_EXECUTION_ORDER_PRIORITY_BASED = 1,
  ONYX_EXECUTION_ORDER_MEMORY_EFFICIENT = 2
} OnyxExecutionOrder;

typedef enum OnyxLoggingLevel {
  ONYX_LOG_VERBOSE = 0,
  ONYX_LOG_INFO = 1,
  ONYX_LOG_WARNING = 2,
  ONYX_LOG_ERROR = 3,
  ONYX_LOG_FATAL = 4
} OnyxLoggingLevel;

typedef enum OnyxAllocatorType {
  ONYX_DEVICE_ALLOCATOR = 0,
  ONYX_ARENA_ALLOCATOR = 1
} OnyxAllocatorType;

typedef enum OnyxMemType {
  ONYX_MEM_CPU_INPUT = -2,
  ONYX_MEM_CPU_OUTPUT = -1,
  ONYX_MEM_DEFAULT = 0
} OnyxMemType;

typedef struct OnyxStatus OnyxStatus;
typedef struct OnyxEnv OnyxEnv;
typedef struct OnyxSessionOptions OnyxSessionOptions;
typedef struct OnyxSession OnyxSession;
typedef struct OnyxRunOptions OnyxRunOptions;
typedef struct OnyxValue OnyxValue;
typedef struct OnyxMemoryInfo OnyxMemoryInfo;
typedef struct OnyxAllocator OnyxAllocator;
typedef struct OnyxTypeInfo OnyxTypeInfo;
typedef struct OnyxTensorTypeAndShapeInfo OnyxTensorTypeAndShapeInfo;
typedef struct OnyxModelMetadata OnyxModelMetadata;
typedef struct OnyxIoBinding OnyxIoBinding;
typedef struct OnyxArenaCfg OnyxArenaCfg;
typedef struct OnyxLoraAdapter OnyxLoraAdapter;

/* Called by the library when it no longer needs a buffer it took over. */
typedef void (*OnyxDeleter)(void* context, void* data);

/* Called once by SessionRunAsync when the run ends, on one of the session's
 * worker threads. On success `status` is NULL and `outputs` holds
 * `output_count` values, each owned by the callee (ValueRelease); the array
 * itself is borrowed for the call. On failure `status` (owned by the callee,
 * StatusRelease) says why, `outputs` is NULL and `output_count` 0. */
typedef void (*OnyxRunAsyncCallback)(void* user_data, OnyxValue** outputs, size_t output_count, OnyxStatus* status);

/* An input of SessionRunTensors: a tensor over the caller's memory, read in
 * place (no copy, no OnyxValue to create). Numeric element types only. */
typedef struct OnyxTensorArg {
  const void* data;      /* the elements; may be NULL only when there are none */
  size_t data_bytes;     /* must equal the element count times the element size */
  const int64_t* shape;  /* `rank` dimensions (>= 0); may be NULL when rank is 0 */
  size_t rank;
  OnyxElementType type;
} OnyxTensorArg;

/* An output of SessionRunTensors. `value` is owned by the caller
 * (ValueRelease); `shape` and `data` are borrowed from it and live as long as
 * it does. For a tensor, `type`, `rank`, `shape` and `data` describe it
 * (`data` is NULL for string tensors and for tensors without elements); for
 * other kinds (sequence, map, optional) only `value` and `kind` are set, the
 * rest being zero. */
typedef struct OnyxTensorResult {
  OnyxValue* value;
  OnyxValueKind kind;
  OnyxElementType type;
  size_t rank;
  const int64_t* shape;
  void* data;
} OnyxTensorResult;

typedef struct OnyxApi {
  /* ---- Status ---------------------------------------------------------- */

  /* Creates a status with `code` and a copy of `message` (NULL = ""). Never
   * fails; returns NULL only for ONYX_OK. Free with StatusRelease. */
  OnyxStatus* (*StatusCreate)(OnyxErrorCode code, const char* message);
  /* The code of `status`; ONYX_OK for NULL. */
  OnyxErrorCode (*StatusGetCode)(const OnyxStatus* status);
  /* The message of `status` (borrowed, lives as long as the status); "" for NULL. */
  const char* (*StatusGetMessage)(const OnyxStatus* status);
  void (*StatusRelease)(OnyxStatus* status);

  /* ---- Environment ------------------------------------------------------ */

  /* Creates an environment holding logging settings. Sessions keep their own
   * reference, so the env may be released before the sessions made from it. */
  OnyxStatus* (*EnvCreate)(OnyxLoggingLevel severity, const char* log_id, OnyxEnv** out);
  void (*EnvRelease)(OnyxEnv* env);

  /* ---- Session options -------------------------------------------------- */

  OnyxStatus* (*SessionOptionsCreate)(OnyxSessionOptions** out);
  /* Deep copy of `options` into *out (owned by the caller). */
  OnyxStatus* (*SessionOptionsClone)(const OnyxSessionOptions* options, OnyxSessionOptions** out);
  void (*SessionOptionsRelease)(OnyxSessionOptions* options);
  /* Threads for one operator (0 = one per core). Must be >= 0. */
  OnyxStatus* (*SessionOptionsSetIntraOpThreads)(OnyxSessionOptions* options, int threads);
  /* Threads across operators in parallel mode (0 = default). Must be >= 0. */
  OnyxStatus* (*SessionOptionsSetInterOpThreads)(OnyxSessionOptions* options, int threads);
  OnyxStatus* (*SessionOptionsSetGraphOptimizationLevel)(OnyxSessionOptions* options, OnyxGraphOptimizationLevel level);
  OnyxStatus* (*SessionOptionsSetExecutionMode)(OnyxSessionOptions* options, OnyxExecutionMode mode);
  /* Severity (0 verbose .. 4 fatal) of the session's log. */
  OnyxStatus* (*SessionOptionsSetLogSeverity)(OnyxSessionOptions* options, int severity);
  OnyxStatus* (*SessionOptionsSetLogId)(OnyxSessionOptions* options, const char* log_id);
  /* Sets a string-keyed option (the long tail, e.g. "session.intra_op.allow_spinning").
   * Both strings are copied. */
  OnyxStatus* (*SessionOptionsAddConfigEntry)(OnyxSessionOptions* options, const char* key, const char* value);
  /* *out = the value for `key` (borrowed, lives until the entry is changed or
   * the options released) or NULL when the key is not set. */
  OnyxStatus* (*SessionOptionsGetConfigEntry)(const OnyxSessionOptions* options, const char* key, const char** out);
  /* Appends an execution provider by name ("CPUExecutionProvider", ...) with
   * `count` string options. Providers are tried in the order appended; the CPU
   * provider is always added last if absent. An unknown or unavailable name
   * fails with ONYX_INVALID_ARGUMENT naming it and the available ones. */
  OnyxStatus* (*SessionOptionsAppendProvider)(OnyxSessionOptions* options, const char* provider_name,
                                             const char* const* keys, const char* const* values, size_t count);

  /* ---- Session ---------------------------------------------------------- */

  /* Loads, checks and prepares the model at `path`. *out is owned by the caller
   * (SessionRelease). `options` may be NULL for defaults. Errors: NO_SUCHFILE,
   * INVALID_PROTOBUF, INVALID_GRAPH, NOT_IMPLEMENTED (an operator without a
   * kernel), each naming the node at fault. */
  OnyxStatus* (*SessionCreate)(const OnyxEnv* env, const char* path, const OnyxSessionOptions* options,
                               OnyxSession** out);
  /* Same from a serialized ModelProto; `data` is not referenced after return. */
  OnyxStatus* (*SessionCreateFromBytes)(const OnyxEnv* env, const void* data, size_t length,
                                        const OnyxSessionOptions* options, OnyxSession** out);
  /* Must not be called while another thread is inside SessionRun on it. */
  void (*SessionRelease)(OnyxSession* session);

  /* Graph inputs that are not initializers. */
  OnyxStatus* (*SessionGetInputCount)(const OnyxSession* session, size_t* out);
  OnyxStatus* (*SessionGetOutputCount)(const OnyxSession* session, size_t* out);
  /* Initializers that are also graph inputs: a feed may replace them. */
  OnyxStatus* (*SessionGetOverridableInitializerCount)(const OnyxSession* session, size_t* out);
  /* Names are borrowed and live as long as the session. */
  OnyxStatus* (*SessionGetInputName)(const OnyxSession* session, size_t index, const char** out);
  OnyxStatus* (*SessionGetOutputName)(const OnyxSession* session, size_t index, const char** out);
  OnyxStatus* (*SessionGetOverridableInitializerName)(const OnyxSession* session, size_t index, const char** out);
  /* Declared type of each; *out owned by the caller (TypeInfoRelease). */
  OnyxStatus* (*SessionGetInputTypeInfo)(const OnyxSession* session, size_t index, OnyxTypeInfo** out);
  OnyxStatus* (*SessionGetOutputTypeInfo)(const OnyxSession* session, size_t index, OnyxTypeInfo** out);
  OnyxStatus* (*SessionGetOverridableInitializerTypeInfo)(const OnyxSession* session, size_t index, OnyxTypeInfo** out);
  /* *out owned by the caller (ModelMetadataRelease). */
  OnyxStatus* (*SessionGetModelMetadata)(const OnyxSession* session, OnyxModelMetadata** out);
  /* Providers the session uses, in priority order; names borrowed for the session's life. */
  OnyxStatus* (*SessionGetProviderCount)(const OnyxSession* session, size_t* out);
  OnyxStatus* (*SessionGetProviderName)(const OnyxSession* session, size_t index, const char** out);

  /* Runs the model. Thread-safe: many threads may run one session at once.
   *  input_names/inputs: `input_count` pairs; every graph input must be fed
   *    (overridable initializers may be). Inputs are read, never written, and
   *    may be released once the call returns.
   *  output_names: the `output_count` outputs wanted, or NULL for all outputs in
   *    model order (then output_count must equal SessionGetOutputCount).
   *  outputs: an array of `output_count` slots the caller provides; each is set
   *    to a new value owned by the caller (ValueRelease). On failure, no slot is
   *    written.
   *  run_options may be NULL. */
  OnyxStatus* (*SessionRun)(OnyxSession* session, const OnyxRunOptions* run_options,
                            const char* const* input_names, const OnyxValue* const* inputs, size_t input_count,
                            const char* const* output_names, size_t output_count, OnyxValue** outputs);

  /* ---- Run options ------------------------------------------------------ */

  OnyxStatus* (*RunOptionsCreate)(OnyxRunOptions** out);
  void (*RunOptionsRelease)(OnyxRunOptions* options);
  /* Tag shown in the log for this run; copied. */
  OnyxStatus* (*RunOptionsSetTag)(OnyxRunOptions* options, const char* tag);
  /* *out borrowed, lives until the tag changes or the options are released. */
  OnyxStatus* (*RunOptionsGetTag)(const OnyxRunOptions* options, const char** out);
  OnyxStatus* (*RunOptionsSetLogSeverity)(OnyxRunOptions* options, int severity);
  /* When set (non-zero), runs using these options stop before their next node
   * and fail with ONYX_RUNTIME_EXCEPTION ("Exiting due to terminate flag").
   * Safe to call from another thread while a run is in progress. */
  OnyxStatus* (*RunOptionsSetTerminate)(OnyxRunOptions* options, int terminate);
  OnyxStatus* (*RunOptionsGetTerminate)(const OnyxRunOptions* options, int* out);

  /* ---- Memory info and allocators --------------------------------------- */

  /* Describes memory: name "Cpu" (or "Cuda"), device id, allocator and mem type. */
  OnyxStatus* (*MemoryInfoCreate)(const char* name, OnyxAllocatorType allocator_type, int device_id,
                                  OnyxMemType mem_type, OnyxMemoryInfo** out);
  OnyxStatus* (*MemoryInfoCreateCpu)(OnyxAllocatorType allocator_type, OnyxMemType mem_type, OnyxMemoryInfo** out);
  void (*MemoryInfoRelease)(OnyxMemoryInfo* info);
  /* *out borrowed, lives as long as `info`. */
  OnyxStatus* (*MemoryInfoGetName)(const OnyxMemoryInfo* info, const char** out);
  OnyxStatus* (*MemoryInfoGetDeviceId)(const OnyxMemoryInfo* info, int* out);
  OnyxStatus* (*MemoryInfoGetMemType)(const OnyxMemoryInfo* info, OnyxMemType* out);
  OnyxStatus* (*MemoryInfoGetAllocatorType)(const OnyxMemoryInfo* info, OnyxAllocatorType* out);

  /* The process-wide CPU allocator: borrowed, never released, thread-safe. */
  OnyxStatus* (*GetDefaultAllocator)(OnyxAllocator** out);
  /* 64-byte aligned; free with AllocatorFree on the same allocator. */
  OnyxStatus* (*AllocatorAlloc)(OnyxAllocator* allocator, size_t size, void** out);
  OnyxStatus* (*AllocatorFree)(OnyxAllocator* allocator, void* p);
  /* *out borrowed, lives as long as the allocator. */
  OnyxStatus* (*AllocatorGetMemoryInfo)(const OnyxAllocator* allocator, const OnyxMemoryInfo** out);

  /* ---- Values ----------------------------------------------------------- */

  /* A tensor whose buffer the library allocates from `allocator` (NULL = the
   * default CPU allocator). Numeric contents are uninitialised; strings are "". */
  OnyxStatus* (*ValueCreateTensor)(OnyxAllocator* allocator, const int64_t* shape, size_t rank,
                                   OnyxElementType type, OnyxValue** out);
  /* A tensor over the caller's buffer (zero copy). The caller keeps `data`
   * alive and unchanged while the value (or any run using it) lives.
   * `data_bytes` must equal the element count times the element size. Not for strings. */
  OnyxStatus* (*ValueCreateTensorWithData)(const OnyxMemoryInfo* info, void* data, size_t data_bytes,
                                           const int64_t* shape, size_t rank, OnyxElementType type,
                                           OnyxValue** out);
  /* Like ValueCreateTensorWithData, but the library takes over `data` and calls
   * deleter(context, data) when the value is released; it also calls it when
   * this function fails, so ownership is settled either way. */
  OnyxStatus* (*ValueCreateTensorWithDeleter)(const OnyxMemoryInfo* info, void* data, size_t data_bytes,
                                              const int64_t* shape, size_t rank, OnyxElementType type,
                                              OnyxDeleter deleter, void* context, OnyxValue** out);
  void (*ValueRelease)(OnyxValue* value);
  OnyxStatus* (*ValueGetKind)(const OnyxValue* value, OnyxValueKind* out);
  /* *out owned by the caller (TensorTypeAndShapeInfoRelease). Tensors only. */
  OnyxStatus* (*ValueGetTensorTypeAndShape)(const OnyxValue* value, OnyxTensorTypeAndShapeInfo** out);
  /* Pointer to the tensor's elements, valid as long as the value. Not for strings. */
  OnyxStatus* (*ValueGetTensorData)(OnyxValue* value, void** out);
  /* *out borrowed, lives as long as the value. */
  OnyxStatus* (*ValueGetTensorMemoryInfo)(const OnyxValue* value, const OnyxMemoryInfo** out);
  /* Sets the elements of a string tensor: `count` must equal its element count;
   * lengths may be NULL for NUL-terminated strings. Strings are copied. */
  OnyxStatus* (*StringTensorFill)(OnyxValue* value, const char* const* strings, const size_t* lengths, size_t count);
  /* Element `index` of a string tensor: *out borrowed (valid until the value is
   * released or refilled), *length its byte length (it may contain NULs). */
  OnyxStatus* (*StringTensorGetElement)(const OnyxValue* value, size_t index, const char** out, size_t* length);

  /* ---- Type information ------------------------------------------------- */

  void (*TypeInfoRelease)(OnyxTypeInfo* info);
  OnyxStatus* (*TypeInfoGetKind)(const OnyxTypeInfo* info, OnyxValueKind* out);
  /* onnxruntime's spelling: "tensor(float)", "seq(tensor(int64))", ...;
   * borrowed, lives as long as `info`. */
  OnyxStatus* (*TypeInfoGetTypeString)(const OnyxTypeInfo* info, const char** out);
  /* *out borrowed from `info`; NULL when the type is not a tensor. */
  OnyxStatus* (*TypeInfoGetTensorInfo)(const OnyxTypeInfo* info, const OnyxTensorTypeAndShapeInfo** out);

  void (*TensorTypeAndShapeInfoRelease)(OnyxTensorTypeAndShapeInfo* info);
  OnyxStatus* (*TensorInfoGetElementType)(const OnyxTensorTypeAndShapeInfo* info, OnyxElementType* out);
  /* Rank; 0 both for scalars and for an unknown rank (see TensorInfoHasShape). */
  OnyxStatus* (*TensorInfoGetDimCount)(const OnyxTensorTypeAndShapeInfo* info, size_t* out);
  OnyxStatus* (*TensorInfoHasShape)(const OnyxTensorTypeAndShapeInfo* info, int* out);
  /* Copies min(count, rank) dims into `dims`; -1 for a symbolic or unknown dim. */
  OnyxStatus* (*TensorInfoGetDims)(const OnyxTensorTypeAndShapeInfo* info, int64_t* dims, size_t count);
  /* Copies min(count, rank) symbol names (borrowed from `info`): "" for a known
   * or unnamed dim. */
  OnyxStatus* (*TensorInfoGetSymbolicDims)(const OnyxTensorTypeAndShapeInfo* info, const char** names, size_t count);
  /* Product of the dims; -1 when any is not known. */
  OnyxStatus* (*TensorInfoGetElementCount)(const OnyxTensorTypeAndShapeInfo* info, int64_t* out);

  /* ---- Model metadata --------------------------------------------------- */

  void (*ModelMetadataRelease)(OnyxModelMetadata* metadata);
  /* Strings below are borrowed and live as long as `metadata`. */
  OnyxStatus* (*ModelMetadataGetProducerName)(const OnyxModelMetadata* metadata, const char** out);
  OnyxStatus* (*ModelMetadataGetGraphName)(const OnyxModelMetadata* metadata, const char** out);
  OnyxStatus* (*ModelMetadataGetDomain)(const OnyxModelMetadata* metadata, const char** out);
  OnyxStatus* (*ModelMetadataGetDescription)(const OnyxModelMetadata* metadata, const char** out);
  OnyxStatus* (*ModelMetadataGetGraphDescription)(const OnyxModelMetadata* metadata, const char** out);
  OnyxStatus* (*ModelMetadataGetVersion)(const OnyxModelMetadata* metadata, int64_t* out);
  OnyxStatus* (*ModelMetadataGetCustomCount)(const OnyxModelMetadata* metadata, size_t* out);
  OnyxStatus* (*ModelMetadataGetCustomKey)(const OnyxModelMetadata* metadata, size_t index, const char** out);
  OnyxStatus* (*ModelMetadataGetCustomValue)(const OnyxModelMetadata* metadata, size_t index, const char** out);
  /* *out = the value for `key`, or NULL when absent. */
  OnyxStatus* (*ModelMetadataLookupCustom)(const OnyxModelMetadata* metadata, const char* key, const char** out);

  /* ---- Library ---------------------------------------------------------- */

  /* Providers this build can run on this machine, in default priority order;
   * names are static strings. */
  OnyxStatus* (*GetAvailableProviderCount)(size_t* out);
  OnyxStatus* (*GetAvailableProviderName)(size_t index, const char** out);
  /* Every provider name the API knows, available or not; static strings. */
  OnyxStatus* (*GetAllProviderCount)(size_t* out);
  OnyxStatus* (*GetAllProviderName)(size_t index, const char** out);
  /* "0.1.0"; static. */
  const char* (*GetVersionString)(void);
  /* Build configuration in one line; static. */
  const char* (*GetBuildInfoString)(void);

  /* ---- Profiling -------------------------------------------------------- */

  /* Sessions created with these options record a Chrome-trace profile (model
   * loading, initialization, each run and each node's kernel time with op type,
   * provider, input and output shapes) into "<prefix><date-time>_<pid>.json".
   * `prefix` is copied; NULL keeps the default "onnxruntime_profile_". */
  OnyxStatus* (*SessionOptionsEnableProfiling)(OnyxSessionOptions* options, const char* prefix);
  OnyxStatus* (*SessionOptionsDisableProfiling)(OnyxSessionOptions* options);
  /* Writes the profile and stops profiling. *out (borrowed) is the file's path,
   * valid until the next SessionEndProfiling on this session or its release.
   * ONYX_FAIL when the session was not created with profiling enabled. */
  OnyxStatus* (*SessionEndProfiling)(OnyxSession* session, const char** out);
  /* Wall-clock nanoseconds since the Unix epoch at which profiling started;
   * 0 when profiling is not enabled. */
  OnyxStatus* (*SessionGetProfilingStartTimeNs)(const OnyxSession* session, uint64_t* out);

  /* ==== Version 2 ======================================================== */

  /* ---- IO binding ------------------------------------------------------- */

  /* A set of input values and output destinations for repeated runs of one
   * session (SessionRunWithBinding). The binding keeps the session alive: it
   * stays usable after SessionRelease until it is released itself. */
  OnyxStatus* (*SessionCreateIoBinding)(OnyxSession* session, OnyxIoBinding** out);
  void (*IoBindingRelease)(OnyxIoBinding* binding);
  /* Binds graph input `name` (a non-initializer input or an overridable
   * initializer) to `value`. The binding shares the value's data, so `value`
   * may be released afterwards (a buffer the caller lent to it with
   * ValueCreateTensorWithData must still stay alive). Binding a name again
   * replaces the earlier value. Unknown names: ONYX_INVALID_ARGUMENT. */
  OnyxStatus* (*IoBindingBindInput)(OnyxIoBinding* binding, const char* name, const OnyxValue* value);
  /* Binds graph output `name` to a pre-allocated tensor: runs write the output
   * into its buffer in place, and fail with ONYX_INVALID_ARGUMENT when the
   * output's element type or shape differs from the tensor's. */
  OnyxStatus* (*IoBindingBindOutput)(OnyxIoBinding* binding, const char* name, const OnyxValue* value);
  /* Binds graph output `name` to memory the library allocates on the device
   * `info` names ("Cpu", or "Cuda" with its device id in a session with the
   * CUDA provider) at each run, for outputs whose shape is only known then.
   * A device no provider of the session runs on is refused here with
   * ONYX_INVALID_ARGUMENT naming the output. */
  OnyxStatus* (*IoBindingBindOutputToDevice)(OnyxIoBinding* binding, const char* name, const OnyxMemoryInfo* info);
  /* Bound outputs, in the order they were first bound. Names are borrowed and
   * live until the outputs are cleared or the binding released. */
  OnyxStatus* (*IoBindingGetBoundOutputCount)(const OnyxIoBinding* binding, size_t* out);
  OnyxStatus* (*IoBindingGetBoundOutputName)(const OnyxIoBinding* binding, size_t index, const char** out);
  /* The value output `index` holds after the last successful run (the bound
   * tensor itself for a pre-allocated output); *out is a new handle sharing
   * its data, owned by the caller. Before any run: the bound tensor, or a
   * value of kind ONYX_VALUE_UNKNOWN for an output the run will allocate. */
  OnyxStatus* (*IoBindingGetBoundOutputValue)(const OnyxIoBinding* binding, size_t index, OnyxValue** out);
  void (*IoBindingClearBoundInputs)(OnyxIoBinding* binding);
  void (*IoBindingClearBoundOutputs)(OnyxIoBinding* binding);
  /* Waits for pending copies of bound inputs / outputs to their devices. CPU
   * values need none, so these only check the binding. */
  OnyxStatus* (*IoBindingSynchronizeInputs)(OnyxIoBinding* binding);
  OnyxStatus* (*IoBindingSynchronizeOutputs)(OnyxIoBinding* binding);
  /* Runs `session` with the bound inputs, producing the bound outputs (at
   * least one must be bound: ONYX_INVALID_ARGUMENT otherwise). `binding` must
   * come from this session. On failure the previous results stay readable. */
  OnyxStatus* (*SessionRunWithBinding)(OnyxSession* session, const OnyxRunOptions* run_options,
                                       OnyxIoBinding* binding);

  /* ---- Non-tensor values ------------------------------------------------ */

  /* The value's type ("tensor(float)", "seq(tensor(int64))",
   * "map(int64,tensor(float))", "optional(...)"); *out owned by the caller. */
  OnyxStatus* (*ValueGetTypeInfo)(const OnyxValue* value, OnyxTypeInfo** out);
  /* Sequences: the number of elements. Maps: 2 (keys, values). Optionals: 0
   * when empty, else 1. Tensors: ONYX_INVALID_ARGUMENT. */
  OnyxStatus* (*ValueGetElementCount)(const OnyxValue* value, size_t* out);
  /* Element `index` of a sequence; of a map, 0 = the keys tensor and 1 = the
   * values tensor; of an optional, 0 = its value. *out is a new handle sharing
   * the element's data, owned by the caller. */
  OnyxStatus* (*ValueGetElement)(const OnyxValue* value, size_t index, OnyxValue** out);
  /* A sequence of `count` values (count may be 0; every item must be a tensor
   * of one element type, or every item a map). Items are shared, not copied. */
  OnyxStatus* (*ValueCreateSequence)(const OnyxValue* const* items, size_t count, OnyxValue** out);
  /* A map from two 1-D tensors of equal length: keys (int64 or string) and values. */
  OnyxStatus* (*ValueCreateMap)(const OnyxValue* keys, const OnyxValue* values, OnyxValue** out);
  /* An optional holding `inner`, or an empty optional when `inner` is NULL. */
  OnyxStatus* (*ValueCreateOptional)(const OnyxValue* inner, OnyxValue** out);

  /* ---- More session and run options ------------------------------------- */

  /* Writes the graph, after optimization, to `path` as an ONNX model when a
   * session is created with these options ("" = do not write). */
  OnyxStatus* (*SessionOptionsSetOptimizedModelFilePath)(OnyxSessionOptions* options, const char* path);
  /* Fixes every free dimension with this denotation (e.g. "DATA_BATCH") in
   * the graph's inputs to `value` (>= 1) when a session is created. */
  OnyxStatus* (*SessionOptionsAddFreeDimensionOverride)(OnyxSessionOptions* options, const char* denotation,
                                                        int64_t value);
  /* Fixes every free dimension named `name` (a dim_param) to `value` (>= 1). */
  OnyxStatus* (*SessionOptionsAddFreeDimensionOverrideByName)(OnyxSessionOptions* options, const char* name,
                                                              int64_t value);
  /* Uses `value` (a CPU tensor) for the model's initializer `name` instead of
   * the model's own data. The options share the value's data; a buffer lent
   * with ValueCreateTensorWithData must outlive every session created. */
  OnyxStatus* (*SessionOptionsAddInitializer)(OnyxSessionOptions* options, const char* name, const OnyxValue* value);
  /* Memory pattern planning: after a run, the next run with the same input
   * shapes allocates its intermediates as one planned block. Default on. */
  OnyxStatus* (*SessionOptionsSetMemPattern)(OnyxSessionOptions* options, int enable);
  /* Free each intermediate after its last reader. Default on. */
  OnyxStatus* (*SessionOptionsSetMemReuse)(OnyxSessionOptions* options, int enable);
  /* Keep freed CPU buffers in a cache for reuse (the arena). Default on. */
  OnyxStatus* (*SessionOptionsSetCpuMemArena)(OnyxSessionOptions* options, int enable);
  /* Only deterministic kernels. Every CPU kernel of this build is deterministic
   * for a given thread count, so this is recorded and reported. */
  OnyxStatus* (*SessionOptionsSetDeterministicCompute)(OnyxSessionOptions* options, int enable);
  OnyxStatus* (*SessionOptionsSetExecutionOrder)(OnyxSessionOptions* options, OnyxExecutionOrder order);
  /* Verbosity (>= 0) of VERBOSE log messages; higher shows more. */
  OnyxStatus* (*SessionOptionsSetLogVerbosity)(OnyxSessionOptions* options, int level);
  OnyxStatus* (*RunOptionsSetLogVerbosity)(OnyxRunOptions* options, int level);

  /* ---- Process-wide settings -------------------------------------------- */

  /* Seeds the generators of random operators (RandomNormal, RandomUniform,
   * their *Like forms, Bernoulli, Multinomial) that have no `seed` attribute,
   * in sessions created afterwards. */
  OnyxStatus* (*SetGlobalSeed)(int64_t seed);
  /* Default log severity (0 verbose .. 4 fatal) and verbosity for sessions
   * that do not set their own. Messages go to stderr. */
  OnyxStatus* (*SetDefaultLogSeverity)(int severity);
  OnyxStatus* (*SetDefaultLogVerbosity)(int level);
  /* The library never sends telemetry; this only records the setting. */
  OnyxStatus* (*SetTelemetryEnabled)(int enabled);
  OnyxStatus* (*GetTelemetryEnabled)(int* out);

  /* ---- Shared allocators ------------------------------------------------ */

  /* Arena settings: max_mem bytes the arena may hold (0 = no limit);
   * arena_extend_strategy, initial_chunk_size_bytes and
   * max_dead_bytes_per_chunk as in onnxruntime (-1 = default for each). */
  OnyxStatus* (*ArenaCfgCreate)(size_t max_mem, int arena_extend_strategy, int initial_chunk_size_bytes,
                                int max_dead_bytes_per_chunk, OnyxArenaCfg** out);
  void (*ArenaCfgRelease)(OnyxArenaCfg* cfg);
  /* Creates an allocator for the memory `info` describes (CPU only) and
   * registers it with `env`; sessions created from `env` whose options set
   * the config entry "session.use_env_allocators" to "1" share it instead of
   * using their own. `cfg` may be NULL for defaults. One per device:
   * registering again replaces it for sessions created afterwards. */
  OnyxStatus* (*EnvCreateAndRegisterAllocator)(OnyxEnv* env, const OnyxMemoryInfo* info, const OnyxArenaCfg* cfg);
  OnyxStatus* (*EnvUnregisterAllocator)(OnyxEnv* env, const OnyxMemoryInfo* info);

  /* ---- API version 3 ---------------------------------------------------- */

  /* The operators `provider` (e.g. "CPUExecutionProvider") has kernels for,
   * read from its kernel registry: one entry per kernel definition, ordered by
   * (domain, op_type, since_version). INVALID_ARGUMENT naming the provider
   * when it is unknown or not available in this build. Operators that ONNX
   * defines as functions run as their bodies when no kernel exists, so a
   * model may use more than this list. Thread-safe. */
  OnyxStatus* (*ProviderGetSupportedOperatorCount)(const char* provider, size_t* out);
  /* Entry `index`: domain ("" = ai.onnx) and op type are static strings that
   * live as long as the process; the opset range is inclusive. */
  OnyxStatus* (*ProviderGetSupportedOperator)(const char* provider, size_t index, const char** domain,
                                               const char** op_type, int* since_version, int* end_version);

  /* ---- API version 4 ---------------------------------------------------- */

  /* SessionRun in one call for callers that resolved names once (language
   * bindings): inputs by position and as tensors over caller memory, outputs
   * by position with their type, shape and data reported, so no value needs
   * creating or querying around the run. Thread-safe as SessionRun.
   *  input_indices/inputs: `input_count` pairs; index i < SessionGetInputCount
   *    is input i, and SessionGetInputCount + j is overridable initializer j.
   *    Every input must be fed; buffers are read during the call only.
   *  output_indices: the `output_count` outputs wanted (indices of
   *    SessionGetOutputName), or NULL for all outputs in order (then
   *    output_count must equal SessionGetOutputCount).
   *  outputs: `output_count` results the caller provides, filled on success;
   *    on failure none is written and nothing is left to release.
   * Errors (INVALID_ARGUMENT) name the input at fault: an index out of range,
   * a string element type, a buffer size that does not match the shape, or
   * the checks of SessionRun (types and shapes against the model). */
  OnyxStatus* (*SessionRunTensors)(OnyxSession* session, const OnyxRunOptions* run_options,
                                   const size_t* input_indices, const OnyxTensorArg* inputs, size_t input_count,
                                   const size_t* output_indices, size_t output_count, OnyxTensorResult* outputs);

  /* ---- API version 5 ---------------------------------------------------- */

  /* Sets a string-keyed run setting (onnxruntime's run config entries); both
   * strings are copied and a key set again is overwritten. Keys the engine
   * implements take effect at each run using these options:
   *   "memory.enable_memory_arena_shrinkage" = "cpu:0" (';'-separated
   *   device:id list): after the run, the session's CPU arena returns its idle
   *   memory to the system; a device or id without an arena fails the run
   *   with INVALID_ARGUMENT naming it.
   * Other keys are stored and read back, as onnxruntime does. INVALID_ARGUMENT
   * when the key is empty or longer than 1024 bytes. */
  OnyxStatus* (*RunOptionsAddConfigEntry)(OnyxRunOptions* options, const char* key, const char* value);
  /* *out = the value for `key` (borrowed, lives until the entry is changed or
   * the options released) or NULL when the key is not set. */
  OnyxStatus* (*RunOptionsGetConfigEntry)(const OnyxRunOptions* options, const char* key, const char** out);
  /* Starts a run on one of the session's intra-op worker threads and returns
   * at once; `callback(user_data, ...)` is called on that thread when the run
   * ends (see OnyxRunAsyncCallback). Arguments are as SessionRun's, except
   * that input values are shared (not copied) by the run, so a buffer lent with
   * ValueCreateTensorWithData, and `run_options`, must stay alive until the
   * callback. Names are copied. Errors found before the run starts are
   * returned here and the callback is not called: NULL arguments, and
   * INVALID_ARGUMENT when the session's pool has no worker thread
   * (intra-op threads = 1). SessionRelease waits for the session's pending
   * async runs; called from inside a callback, it returns at once and the
   * session is freed once its runs are done. */
  OnyxStatus* (*SessionRunAsync)(OnyxSession* session, const OnyxRunOptions* run_options,
                                 const char* const* input_names, const OnyxValue* const* inputs, size_t input_count,
                                 const char* const* output_names, size_t output_count, OnyxRunAsyncCallback callback,
                                 void* user_data);
  /* Where the session wants input (output) `index` to be: *out borrowed, lives
   * as long as the session. "Cpu", device 0, the arena allocator type unless
   * the session's CPU arena is off. */
  OnyxStatus* (*SessionGetInputMemoryInfo)(const OnyxSession* session, size_t index, const OnyxMemoryInfo** out);
  OnyxStatus* (*SessionGetOutputMemoryInfo)(const OnyxSession* session, size_t index, const OnyxMemoryInfo** out);

  /* ---- API version 6 ---------------------------------------------------- */

  /* A sparse tensor of dense shape `dense_shape` (`rank` dims) from its
   * non-zero `values` (a CPU tensor) and its index tensors (CPU, shared, not
   * copied):
   *   ONYX_SPARSE_COO: 1 int64 tensor, [nnz] linear offsets or [nnz, rank]
   *     coordinates, strictly increasing in row-major order; values [nnz].
   *   ONYX_SPARSE_CSR: 2-D dense shape; inner int64 [nnz] (columns, increasing
   *     within a row) then outer int64 [rows + 1] (row starts, 0 .. nnz).
   *   ONYX_SPARSE_BLOCK_SPARSE: 2-D dense shape; values [blocks, bh, bw];
   *     1 int32 tensor [2, blocks] of block rows then block columns.
   * INVALID_ARGUMENT naming the rule broken (an index out of range or out of
   * order, a shape that does not fit). The value has kind
   * ONYX_VALUE_SPARSE_TENSOR: ValueGetTensorTypeAndShape gives its element
   * type and dense shape, ValueGetElementCount the number of its tensors and
   * ValueGetElement 0 its values, 1.. its index tensors in the order above.
   * SessionRun takes it for inputs declared sparse_tensor(...), densified for
   * the kernels. */
  OnyxStatus* (*ValueCreateSparseTensor)(OnyxSparseFormat format, const int64_t* dense_shape, size_t rank,
                                         const OnyxValue* values, const OnyxValue* const* indices,
                                         size_t index_count, OnyxValue** out);
  /* The format of a sparse tensor; INVALID_ARGUMENT for other values. */
  OnyxStatus* (*ValueGetSparseFormat)(const OnyxValue* value, OnyxSparseFormat* out);
  /* Gives the contents of an external data file in memory: tensors of models
   * loaded with these options whose external data `location` equals `name`
   * are read from `data` (`length` bytes) instead of the file system. The
   * buffer is borrowed: it must outlive every session created with the
   * options. Giving a name again replaces it. */
  OnyxStatus* (*SessionOptionsAddExternalFileInMemory)(OnyxSessionOptions* options, const char* name,
                                                       const void* data, size_t length);
  /* Arena settings by onnxruntime's key names: "max_mem" (bytes the arena may
   * hold, 0 = no limit; enforced), "arena_extend_strategy" (0 next power of
   * two, 1 same as requested), "initial_chunk_size_bytes",
   * "max_dead_bytes_per_chunk", "initial_growth_chunk_size_bytes",
   * "max_power_of_two_extend_bytes" (checked and recorded: the CPU arena's
   * size classes replace onnxruntime's chunk growth). -1 = default.
   * INVALID_ARGUMENT naming an unknown key or a value out of range. */
  OnyxStatus* (*ArenaCfgCreateFromKeys)(const char* const* keys, const int64_t* values, size_t count,
                                        OnyxArenaCfg** out);
  /* Memory info as onnxruntime's CreateMemoryInfo_V2: `device_type` 0 CPU,
   * 1 GPU, 2 FPGA, 3 NPU; `vendor_id` (PCI id); `device_mem_type` 0 default
   * or 5 host accessible (a host-accessible CPU info has mem type
   * ONYX_MEM_CPU_OUTPUT); `alignment` in bytes (0 = the allocator's, else a
   * power of two). `name` is recorded as given. */
  OnyxStatus* (*MemoryInfoCreateV2)(const char* name, int device_type, int vendor_id, int device_id,
                                    int device_mem_type, size_t alignment, OnyxAllocatorType allocator_type,
                                    OnyxMemoryInfo** out);
  OnyxStatus* (*MemoryInfoGetDeviceMemType)(const OnyxMemoryInfo* info, int* out);
  OnyxStatus* (*MemoryInfoGetVendorId)(const OnyxMemoryInfo* info, int* out);

  /* ---- LoRA adapters (onnxruntime's adapter file format) ----------------- */

  /* Reads an adapter file (onnxruntime's .onnx_adapter flatbuffer): its
   * parameters become CPU tensors. INVALID_ARGUMENT (INVALID_PROTOBUF for a
   * file that is truncated or not an adapter) naming what is wrong. */
  OnyxStatus* (*LoraAdapterCreate)(const char* path, OnyxLoraAdapter** out);
  /* Same from bytes in memory; `data` is copied. */
  OnyxStatus* (*LoraAdapterCreateFromBytes)(const void* data, size_t length, OnyxLoraAdapter** out);
  /* An adapter from `count` named tensors (shared, not copied) and versions. */
  OnyxStatus* (*LoraAdapterCreateFromValues)(const char* const* names, const OnyxValue* const* values,
                                             size_t count, int adapter_version, int model_version,
                                             OnyxLoraAdapter** out);
  void (*LoraAdapterRelease)(OnyxLoraAdapter* adapter);
  /* format_version (1), adapter_version and model_version. */
  OnyxStatus* (*LoraAdapterGetVersions)(const OnyxLoraAdapter* adapter, int* format_version,
                                        int* adapter_version, int* model_version);
  OnyxStatus* (*LoraAdapterGetParameterCount)(const OnyxLoraAdapter* adapter, size_t* out);
  /* Parameter `index`: *name borrowed (lives as long as the adapter), *value a
   * new handle sharing the tensor, owned by the caller. */
  OnyxStatus* (*LoraAdapterGetParameter)(const OnyxLoraAdapter* adapter, size_t index, const char** name,
                                         OnyxValue** value);
  /* Writes the adapter to `path` in the adapter file format. */
  OnyxStatus* (*LoraAdapterSave)(const OnyxLoraAdapter* adapter, const char* path);
  /* Activates `adapter` for runs using these options: its parameters are fed
   * to the inputs (or overridable initializers) of the same names for those
   * runs only, unless the run feeds them itself. A parameter the model has no
   * input for, or of another type or shape, fails the run with
   * INVALID_ARGUMENT naming it. The options share the adapter's tensors, so
   * the adapter may be released; other runs are unaffected. */
  OnyxStatus* (*RunOptionsAddActiveLoraAdapter)(OnyxRunOptions* options, const OnyxLoraAdapter* adapter);

  /* ---- Node placement ----------------------------------------------------- */

  /* The nodes the session runs (after optimization), in execution order,
   * with the provider each was assigned to. Needs the session config entry
   * "session.record_ep_graph_assignment_info" = "1" (ONYX_FAIL otherwise,
   * with onnxruntime's text). Strings are borrowed and live as long as the
   * session; domain "" is ai.onnx. */
  OnyxStatus* (*SessionGetAssignedNodeCount)(const OnyxSession* session, size_t* out);
  OnyxStatus* (*SessionGetAssignedNode)(const OnyxSession* session, size_t index, const char** provider,
                                        const char** node_name, const char** op_type, const char** domain);

  /* ---- Global thread pools ------------------------------------------------ */

  /* Creates the environment's global thread pool: `intra_op_threads` threads
   * (0 = one per core), shared by every session created from `env` whose
   * options turned per-session threads off; `inter_op_threads` is checked and
   * recorded (those sessions' parallel mode runs on the same pool). Once per
   * environment: ONYX_FAIL when it exists already. */
  OnyxStatus* (*EnvCreateGlobalThreadPools)(OnyxEnv* env, int intra_op_threads, int inter_op_threads);
  /* 0: sessions created with these options run on their environment's global
   * thread pool, and their own thread counts are ignored; SessionCreate fails
   * with ONYX_FAIL when the environment has none. Default 1 (own pools). */
  OnyxStatus* (*SessionOptionsSetUsePerSessionThreads)(OnyxSessionOptions* options, int enable);
  /* Non-zero: session creations using these options (or copies made with
   * SessionOptionsClone, which share the flag), including one in progress on
   * another thread, stop at their next stage and fail with
   * ONYX_MODEL_LOAD_CANCELED; later creations too, until it is set back to 0.
   * Safe to call from any thread. */
  OnyxStatus* (*SessionOptionsSetLoadCancellation)(OnyxSessionOptions* options, int cancel);

  /* ==== Version 7 ======================================================== */

  /* ---- Device memory ------------------------------------------------------ */

  /* A new tensor in the memory `info` names ("Cuda": on CUDA device
   * info's device_id, through CUDAExecutionProvider's library; "Cpu": host
   * memory), holding a copy of the `data_bytes` bytes of host memory at
   * `host_data` (NULL: contents uninitialised; then `data_bytes` is ignored).
   * `data_bytes` must equal the element count times the element size. Not for
   * strings. Owned by the caller (ValueRelease); the device memory is freed
   * then, even after the sessions using it are gone. ONYX_INVALID_ARGUMENT
   * naming why when CUDA is not available here. The copy has finished on
   * return. Thread-safe. */
  OnyxStatus* (*ValueCreateTensorOnDevice)(const OnyxMemoryInfo* info, const void* host_data, size_t data_bytes,
                                           const int64_t* shape, size_t rank, OnyxElementType type,
                                           OnyxValue** out);
  /* Copies tensor `value`'s data, in host or device memory, into the
   * `data_bytes` bytes at `host_data` (exactly the tensor's size); the copy
   * has finished on return. Not for strings. Thread-safe. */
  OnyxStatus* (*ValueCopyTensorToHost)(const OnyxValue* value, void* host_data, size_t data_bytes);
} OnyxApi;

typedef struct OnyxApiBase {
  /* The table for `version` (1..ONYX_API_VERSION of the library), or NULL when
   * this library is too old; GetApiError then says why. */
  const OnyxApi* (*GetApi)(uint32_t version);
  /* NULL when GetApi(version) succeeds, else a static message to report. */
  const char* (*GetApiError)(uint32_t version);
  const char* (*GetVersionString)(void);
} OnyxApiBase;

/* The only exported symbol. Never fails; the returned table is static. */
ONYX_EXPORT const OnyxApiBase* OnyxGetApiBase(void);

#ifndef ONYX_CFFI_CDEF
#ifdef __cplusplus
}
#endif
#endif

#endif /* ONYXRUNTIME_C_API_H_ */

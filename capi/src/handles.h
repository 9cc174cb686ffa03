// What the opaque C handles are, and the exception firewall every entry uses.
#pragma once

#include <condition_variable>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <vector>

#include "core/framework/status.h"
#include "core/framework/value.h"
#include "core/session/options.h"
#include "core/session/session.h"
#include "onyxruntime/onyxruntime_c_api.h"

struct OnyxStatus {
  OnyxErrorCode code;
  std::string message;
};

struct OnyxEnv {
  int severity = 2;
  std::string log_id;
  // Registered with EnvCreateAndRegisterAllocator; shared by sessions that
  // opt in with "session.use_env_allocators" = "1".
  std::shared_ptr<onyx::Allocator> cpu_allocator;
  // EnvCreateGlobalThreadPools: shared by sessions whose options turned
  // per-session threads off.
  std::shared_ptr<onyx::ThreadPool> global_intra_pool;
  int global_inter_threads = 0;
};

struct OnyxSessionOptions {
  onyx::SessionOptions options;
};

struct OnyxMemoryInfo {
  onyx::MemoryInfo info;
};

struct OnyxSession {
  // Shared with the IO bindings made from it, which may outlive the handle.
  std::shared_ptr<onyx::Session> session;
  std::string last_profile_path;
  // Where inputs and outputs live (SessionGetInput/OutputMemoryInfo).
  OnyxMemoryInfo io_memory;
  // SessionRunAsync runs queued or running; SessionRelease waits for none.
  std::mutex async_mu;
  std::condition_variable async_done;
  size_t async_pending = 0;
};

struct OnyxRunOptions {
  onyx::RunOptions options;
};

struct OnyxValue {
  onyx::Value value;
};

struct OnyxIoBinding {
  std::shared_ptr<onyx::Session> session;
  std::vector<std::string> input_names;
  std::vector<onyx::Value> inputs;
  std::vector<std::string> output_names;
  // Per bound output: the caller's tensor, or null to allocate at each run.
  std::vector<std::shared_ptr<onyx::Tensor>> output_buffers;
  // Per bound output without a buffer: the memory the run returns it in
  // (IoBindingBindOutputToDevice; host memory for the rest).
  std::vector<onyx::MemoryInfo> output_devices;
  // What the last successful run produced, one per bound output.
  std::vector<std::string> result_names;
  std::vector<onyx::Value> results;
  bool has_run = false;
};

struct OnyxArenaCfg {
  size_t max_mem = 0;
  int arena_extend_strategy = -1;
  int initial_chunk_size_bytes = -1;
  int max_dead_bytes_per_chunk = -1;
  int64_t initial_growth_chunk_size_bytes = -1;
  int64_t max_power_of_two_extend_bytes = -1;
};

struct OnyxLoraAdapter {
  int format_version = 1;
  int adapter_version = 0;
  int model_version = 0;
  // Shared with the run options it is activated on.
  std::shared_ptr<const onyx::NamedTensors> parameters;
};

struct OnyxAllocator {
  onyx::Allocator* allocator;
  OnyxMemoryInfo info;
};

struct OnyxTensorTypeAndShapeInfo {
  onyx::ElemType elem = onyx::ElemType::kUndefined;
  bool has_shape = false;
  std::vector<int64_t> dims;
  std::vector<std::string> symbols;
};

struct OnyxTypeInfo {
  OnyxValueKind kind = ONYX_VALUE_UNKNOWN;
  std::string type_string;
  std::unique_ptr<OnyxTensorTypeAndShapeInfo> tensor;  // set for tensors
};

struct OnyxModelMetadata {
  std::string producer, graph_name, domain, description, graph_description;
  int64_t version = 0;
  std::vector<std::pair<std::string, std::string>> custom;
};

namespace onyx {
namespace capi {

OnyxStatus* ToOnyxStatus(const Status& s);
OnyxStatus* NewStatus(OnyxErrorCode code, std::string message);

}  // namespace capi
}  // namespace onyx

// The firewall: no C++ exception crosses the ABI. Every fallible entry point
// is written as `API_BEGIN ... API_END`, returning OnyxStatus*.
#define API_BEGIN try {
#define API_END                                                                          \
  }                                                                                      \
  catch (const ::onyx::OnyxException& e) {                                               \
    return ::onyx::capi::ToOnyxStatus(e.status());                                       \
  }                                                                                      \
  catch (const std::bad_alloc&) {                                                        \
    return ::onyx::capi::NewStatus(ONYX_FAIL, "out of memory");                          \
  }                                                                                      \
  catch (const std::exception& e) {                                                      \
    return ::onyx::capi::NewStatus(ONYX_RUNTIME_EXCEPTION, e.what());                    \
  }                                                                                      \
  catch (...) {                                                                          \
    return ::onyx::capi::NewStatus(ONYX_RUNTIME_EXCEPTION, "unknown exception");         \
  }                                                                                      \
  return nullptr;

#define API_RETURN_IF_ERROR(expr)                       \
  do {                                                  \
    ::onyx::Status _st = (expr);                        \
    if (!_st.ok()) return ::onyx::capi::ToOnyxStatus(_st); \
  } while (0)

// Names the function and argument at fault for NULL misuse.
#define API_CHECK_NOT_NULL(arg)                                                                     \
  do {                                                                                              \
    if ((arg) == nullptr)                                                                           \
      return ::onyx::capi::NewStatus(ONYX_INVALID_ARGUMENT, std::string(__func__) + ": argument '" #arg \
                                                                "' must not be NULL");              \
  } while (0)

namespace onyx {
namespace capi {

// The int a C caller passed in a C enum (a parameter or a struct field). C
// lets any int through, while in C++ reading an enum object outside its
// enumerators' range is undefined (UBSan: "load of value 7, which is not a
// valid value for type ..."), so the bits are read as an int and only that
// int is compared or stored.
template <typename E>
int EnumArg(const E& e) {
  static_assert(sizeof(E) == sizeof(int), "C enums are int-sized");
  int v;
  std::memcpy(&v, &e, sizeof v);
  return v;
}

// Caller-owned type info describing `t` (api_info.cc).
OnyxTypeInfo* NewTypeInfo(const TypeInfo& t);
// Checks a tensor over caller memory (element type, shape, buffer size) and
// sets `dims` (api_value.cc). Strings are refused: they cannot be borrowed.
Status CheckTensorArg(const void* data, size_t data_bytes, const int64_t* shape, size_t rank, int type, Dims* dims);

}  // namespace capi
}  // namespace onyx

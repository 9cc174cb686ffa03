#include <cstring>
#include <map>
#include <string>

#include "capi/src/api_table.h"
#include "capi/src/handles.h"
#include "core/session/providers_query.h"

namespace onyx {
namespace capi {
namespace {

// The value stored under `key` in a session's or a run's config entries, or
// null; it lives as long as the options object.
const char* ConfigValue(const std::map<std::string, std::string>& config, const char* key) {
  auto it = config.find(key);
  return it == config.end() ? nullptr : it->second.c_str();
}

OnyxStatus* SessionOptionsCreate(OnyxSessionOptions** out) {
  API_BEGIN
  API_CHECK_NOT_NULL(out);
  *out = new OnyxSessionOptions();
  API_END
}
OnyxStatus* SessionOptionsClone(const OnyxSessionOptions* options, OnyxSessionOptions** out) {
  API_BEGIN
  API_CHECK_NOT_NULL(options);
  API_CHECK_NOT_NULL(out);
  *out = new OnyxSessionOptions(*options);
  API_END
}
void SessionOptionsRelease(OnyxSessionOptions* options) { delete options; }

OnyxStatus* SessionOptionsSetIntraOpThreads(OnyxSessionOptions* options, int threads) {
  API_BEGIN
  API_CHECK_NOT_NULL(options);
  if (threads < 0) return NewStatus(ONYX_INVALID_ARGUMENT, "intra_op_num_threads must be >= 0, got " + std::to_string(threads));
  options->options.intra_op_threads = threads;
  API_END
}
OnyxStatus* SessionOptionsSetInterOpThreads(OnyxSessionOptions* options, int threads) {
  API_BEGIN
  API_CHECK_NOT_NULL(options);
  if (threads < 0) return NewStatus(ONYX_INVALID_ARGUMENT, "inter_op_num_threads must be >= 0, got " + std::to_string(threads));
  options->options.inter_op_threads = threads;
  API_END
}
OnyxStatus* SessionOptionsSetGraphOptimizationLevel(OnyxSessionOptions* options, OnyxGraphOptimizationLevel level_arg) {
  const int level = EnumArg(level_arg);
  API_BEGIN
  API_CHECK_NOT_NULL(options);
  if (level != ONYX_DISABLE_ALL && level != ONYX_ENABLE_BASIC && level != ONYX_ENABLE_EXTENDED &&
      level != ONYX_ENABLE_LAYOUT && level != ONYX_ENABLE_ALL)
    return NewStatus(ONYX_INVALID_ARGUMENT, "graph optimization level must be 0, 1, 2, 3 or 99, got " + std::to_string(level));
  options->options.graph_optimization_level = level;
  API_END
}
OnyxStatus* SessionOptionsSetExecutionMode(OnyxSessionOptions* options, OnyxExecutionMode mode_arg) {
  const int mode = EnumArg(mode_arg);
  API_BEGIN
  API_CHECK_NOT_NULL(options);
  if (mode != ONYX_EXECUTION_SEQUENTIAL && mode != ONYX_EXECUTION_PARALLEL)
    return NewStatus(ONYX_INVALID_ARGUMENT, "execution mode must be 0 (sequential) or 1 (parallel), got " + std::to_string(mode));
  options->options.execution_mode = mode;
  API_END
}
OnyxStatus* SessionOptionsSetLogSeverity(OnyxSessionOptions* options, int severity) {
  API_BEGIN
  API_CHECK_NOT_NULL(options);
  if (severity < -1 || severity > 4)
    return NewStatus(ONYX_INVALID_ARGUMENT, "log severity must be 0..4 (or -1 for the default), got " + std::to_string(severity));
  options->options.log_severity = severity;
  API_END
}
OnyxStatus* SessionOptionsSetLogId(OnyxSessionOptions* options, const char* log_id) {
  API_BEGIN
  API_CHECK_NOT_NULL(options);
  API_CHECK_NOT_NULL(log_id);
  options->options.log_id = log_id;
  API_END
}
OnyxStatus* SessionOptionsAddConfigEntry(OnyxSessionOptions* options, const char* key, const char* value) {
  API_BEGIN
  API_CHECK_NOT_NULL(options);
  API_CHECK_NOT_NULL(key);
  API_CHECK_NOT_NULL(value);
  if (*key == '\0') return NewStatus(ONYX_INVALID_ARGUMENT, "SessionOptionsAddConfigEntry: key must not be empty");
  options->options.config[key] = value;
  API_END
}
OnyxStatus* SessionOptionsGetConfigEntry(const OnyxSessionOptions* options, const char* key, const char** out) {
  API_BEGIN
  API_CHECK_NOT_NULL(options);
  API_CHECK_NOT_NULL(key);
  API_CHECK_NOT_NULL(out);
  *out = ConfigValue(options->options.config, key);
  API_END
}
OnyxStatus* SessionOptionsAppendProvider(OnyxSessionOptions* options, const char* provider_name,
                                         const char* const* keys, const char* const* values, size_t count) {
  API_BEGIN
  API_CHECK_NOT_NULL(options);
  API_CHECK_NOT_NULL(provider_name);
  if (count > 0) {
    API_CHECK_NOT_NULL(keys);
    API_CHECK_NOT_NULL(values);
  }
  API_RETURN_IF_ERROR(CheckProviderName(provider_name));
  ProviderRequest req;
  req.name = provider_name;
  for (size_t i = 0; i < count; ++i) {
    if (!keys[i] || !values[i])
      return NewStatus(ONYX_INVALID_ARGUMENT, "SessionOptionsAppendProvider: option " + std::to_string(i) + " of '" +
                                                 provider_name + "' has a NULL key or value");
    req.options[keys[i]] = values[i];
  }
  for (const auto& existing : options->options.providers)
    if (existing.name == req.name)
      return NewStatus(ONYX_INVALID_ARGUMENT, std::string("execution provider '") + provider_name + "' was already appended");
  options->options.providers.push_back(std::move(req));
  API_END
}

OnyxStatus* SessionOptionsEnableProfiling(OnyxSessionOptions* options, const char* prefix) {
  API_BEGIN
  API_CHECK_NOT_NULL(options);
  options->options.enable_profiling = true;
  if (prefix) options->options.profile_file_prefix = prefix;
  API_END
}
OnyxStatus* SessionOptionsDisableProfiling(OnyxSessionOptions* options) {
  API_BEGIN
  API_CHECK_NOT_NULL(options);
  options->options.enable_profiling = false;
  API_END
}

OnyxStatus* RunOptionsCreate(OnyxRunOptions** out) {
  API_BEGIN
  API_CHECK_NOT_NULL(out);
  *out = new OnyxRunOptions();
  API_END
}
void RunOptionsRelease(OnyxRunOptions* options) { delete options; }
OnyxStatus* RunOptionsSetTag(OnyxRunOptions* options, const char* tag) {
  API_BEGIN
  API_CHECK_NOT_NULL(options);
  API_CHECK_NOT_NULL(tag);
  options->options.tag = tag;
  API_END
}
OnyxStatus* RunOptionsGetTag(const OnyxRunOptions* options, const char** out) {
  API_BEGIN
  API_CHECK_NOT_NULL(options);
  API_CHECK_NOT_NULL(out);
  *out = options->options.tag.c_str();
  API_END
}
OnyxStatus* RunOptionsSetLogSeverity(OnyxRunOptions* options, int severity) {
  API_BEGIN
  API_CHECK_NOT_NULL(options);
  if (severity < -1 || severity > 4)
    return NewStatus(ONYX_INVALID_ARGUMENT, "log severity must be 0..4 (or -1 for the default), got " + std::to_string(severity));
  options->options.log_severity = severity;
  API_END
}
OnyxStatus* RunOptionsSetTerminate(OnyxRunOptions* options, int terminate) {
  API_BEGIN
  API_CHECK_NOT_NULL(options);
  options->options.terminate.store(terminate != 0);
  API_END
}
OnyxStatus* RunOptionsGetTerminate(const OnyxRunOptions* options, int* out) {
  API_BEGIN
  API_CHECK_NOT_NULL(options);
  API_CHECK_NOT_NULL(out);
  *out = options->options.terminate.load() ? 1 : 0;
  API_END
}

OnyxStatus* RunOptionsAddConfigEntry(OnyxRunOptions* options, const char* key, const char* value) {
  API_BEGIN
  API_CHECK_NOT_NULL(options);
  API_CHECK_NOT_NULL(key);
  API_CHECK_NOT_NULL(value);
  // onnxruntime's limit and wording (ConfigOptions::AddConfigEntry).
  const size_t length = std::strlen(key);
  if (length == 0 || length > 1024)
    return NewStatus(ONYX_INVALID_ARGUMENT, "Config key is empty or longer than maximum length 1024");
  options->options.config[key] = value;
  API_END
}
OnyxStatus* RunOptionsGetConfigEntry(const OnyxRunOptions* options, const char* key, const char** out) {
  API_BEGIN
  API_CHECK_NOT_NULL(options);
  API_CHECK_NOT_NULL(key);
  API_CHECK_NOT_NULL(out);
  *out = ConfigValue(options->options.config, key);
  API_END
}

OnyxStatus* SessionOptionsSetOptimizedModelFilePath(OnyxSessionOptions* options, const char* path) {
  API_BEGIN
  API_CHECK_NOT_NULL(options);
  API_CHECK_NOT_NULL(path);
  options->options.optimized_model_filepath = path;
  API_END
}

template <std::map<std::string, int64_t> SessionOptions::*Overrides>
OnyxStatus* AddFreeDimensionOverride(OnyxSessionOptions* options, const char* key, int64_t value) {
  API_BEGIN
  API_CHECK_NOT_NULL(options);
  API_CHECK_NOT_NULL(key);
  if (*key == '\0') return NewStatus(ONYX_INVALID_ARGUMENT, "free dimension override: the dimension name is empty");
  if (value < 0)
    return NewStatus(ONYX_INVALID_ARGUMENT,
                     StrCat("free dimension override '", key, "': the value must be >= 0, got ", value));
  (options->options.*Overrides)[key] = value;
  API_END
}

OnyxStatus* SessionOptionsAddExternalFileInMemory(OnyxSessionOptions* options, const char* name, const void* data,
                                                 size_t length) {
  API_BEGIN
  API_CHECK_NOT_NULL(options);
  API_CHECK_NOT_NULL(name);
  if (length > 0) API_CHECK_NOT_NULL(data);
  if (!*name) return NewStatus(ONYX_INVALID_ARGUMENT, "add_external_initializers_from_files_in_memory: a file name is empty");
  options->options.external_files_in_memory[name] = {data, length};
  API_END
}

OnyxStatus* SessionOptionsSetLoadCancellation(OnyxSessionOptions* options, int cancel) {
  API_BEGIN
  API_CHECK_NOT_NULL(options);
  options->options.load_cancel->store(cancel != 0);
  API_END
}

OnyxStatus* SessionOptionsAddInitializer(OnyxSessionOptions* options, const char* name, const OnyxValue* value) {
  API_BEGIN
  API_CHECK_NOT_NULL(options);
  API_CHECK_NOT_NULL(name);
  API_CHECK_NOT_NULL(value);
  if (!value->value.IsTensor())
    return NewStatus(ONYX_INVALID_ARGUMENT, StrCat("add_initializer: the value for '", name, "' is not a tensor"));
  if (value->value.tensor().location().device != DeviceType::kCpu)
    return NewStatus(ONYX_INVALID_ARGUMENT, StrCat("add_initializer: '", name, "' must be in CPU memory"));
  auto& list = options->options.initializers;
  for (auto& kv : list) {
    if (kv.first == name) {
      kv.second = value->value.tensor_ptr();
      return nullptr;
    }
  }
  list.emplace_back(name, value->value.tensor_ptr());
  API_END
}

template <bool SessionOptions::*Flag>
OnyxStatus* SetFlag(OnyxSessionOptions* options, int enable) {
  API_BEGIN
  API_CHECK_NOT_NULL(options);
  options->options.*Flag = enable != 0;
  API_END
}

OnyxStatus* SessionOptionsSetExecutionOrder(OnyxSessionOptions* options, OnyxExecutionOrder order_arg) {
  const int order = EnumArg(order_arg);
  API_BEGIN
  API_CHECK_NOT_NULL(options);
  if (order < ONYX_EXECUTION_ORDER_DEFAULT || order > ONYX_EXECUTION_ORDER_MEMORY_EFFICIENT)
    return NewStatus(ONYX_INVALID_ARGUMENT,
                     StrCat("execution order must be 0 (default), 1 (priority-based) or 2 (memory-efficient), got ",
                            static_cast<int>(order)));
  options->options.execution_order = order;
  API_END
}

OnyxStatus* SessionOptionsSetLogVerbosity(OnyxSessionOptions* options, int level) {
  API_BEGIN
  API_CHECK_NOT_NULL(options);
  if (level < 0) return NewStatus(ONYX_INVALID_ARGUMENT, StrCat("log verbosity must be >= 0, got ", level));
  options->options.log_verbosity = level;
  API_END
}

OnyxStatus* RunOptionsSetLogVerbosity(OnyxRunOptions* options, int level) {
  API_BEGIN
  API_CHECK_NOT_NULL(options);
  if (level < 0) return NewStatus(ONYX_INVALID_ARGUMENT, StrCat("log verbosity must be >= 0, got ", level));
  options->options.log_verbosity = level;
  API_END
}

}  // namespace

void FillOptionsApi(OnyxApi& a) {
  a.SessionOptionsCreate = SessionOptionsCreate;
  a.SessionOptionsClone = SessionOptionsClone;
  a.SessionOptionsRelease = SessionOptionsRelease;
  a.SessionOptionsSetIntraOpThreads = SessionOptionsSetIntraOpThreads;
  a.SessionOptionsSetInterOpThreads = SessionOptionsSetInterOpThreads;
  a.SessionOptionsSetGraphOptimizationLevel = SessionOptionsSetGraphOptimizationLevel;
  a.SessionOptionsSetExecutionMode = SessionOptionsSetExecutionMode;
  a.SessionOptionsSetLogSeverity = SessionOptionsSetLogSeverity;
  a.SessionOptionsSetLogId = SessionOptionsSetLogId;
  a.SessionOptionsAddConfigEntry = SessionOptionsAddConfigEntry;
  a.SessionOptionsGetConfigEntry = SessionOptionsGetConfigEntry;
  a.SessionOptionsAppendProvider = SessionOptionsAppendProvider;
  a.SessionOptionsEnableProfiling = SessionOptionsEnableProfiling;
  a.SessionOptionsDisableProfiling = SessionOptionsDisableProfiling;
  a.RunOptionsCreate = RunOptionsCreate;
  a.RunOptionsRelease = RunOptionsRelease;
  a.RunOptionsSetTag = RunOptionsSetTag;
  a.RunOptionsGetTag = RunOptionsGetTag;
  a.RunOptionsSetLogSeverity = RunOptionsSetLogSeverity;
  a.RunOptionsSetTerminate = RunOptionsSetTerminate;
  a.RunOptionsGetTerminate = RunOptionsGetTerminate;
  a.RunOptionsAddConfigEntry = RunOptionsAddConfigEntry;
  a.RunOptionsGetConfigEntry = RunOptionsGetConfigEntry;
  a.SessionOptionsSetOptimizedModelFilePath = SessionOptionsSetOptimizedModelFilePath;
  a.SessionOptionsAddFreeDimensionOverride = AddFreeDimensionOverride<&SessionOptions::free_dim_overrides_by_denotation>;
  a.SessionOptionsAddFreeDimensionOverrideByName = AddFreeDimensionOverride<&SessionOptions::free_dim_overrides_by_name>;
  a.SessionOptionsAddInitializer = SessionOptionsAddInitializer;
  a.SessionOptionsAddExternalFileInMemory = SessionOptionsAddExternalFileInMemory;
  a.SessionOptionsSetUsePerSessionThreads = SetFlag<&SessionOptions::use_per_session_threads>;
  a.SessionOptionsSetLoadCancellation = SessionOptionsSetLoadCancellation;
  a.SessionOptionsSetMemPattern = SetFlag<&SessionOptions::enable_mem_pattern>;
  a.SessionOptionsSetMemReuse = SetFlag<&SessionOptions::enable_mem_reuse>;
  a.SessionOptionsSetCpuMemArena = SetFlag<&SessionOptions::enable_cpu_mem_arena>;
  a.SessionOptionsSetDeterministicCompute = SetFlag<&SessionOptions::use_deterministic_compute>;
  a.SessionOptionsSetExecutionOrder = SessionOptionsSetExecutionOrder;
  a.SessionOptionsSetLogVerbosity = SessionOptionsSetLogVerbosity;
  a.RunOptionsSetLogVerbosity = RunOptionsSetLogVerbosity;
}

}  // namespace capi
}  // namespace onyx

// Process-wide settings (seed, logging, telemetry) and environment allocators.
#include <cstdint>
#include <atomic>

#include "capi/src/api_table.h"
#include "capi/src/handles.h"
#include "core/framework/logging.h"
#include "core/framework/random.h"

namespace onyx {
namespace capi {
namespace {

std::atomic<bool> g_telemetry{false};

OnyxStatus* SetGlobalSeedEntry(int64_t seed) {
  API_BEGIN
  SetGlobalSeed(seed);
  API_END
}

OnyxStatus* SetDefaultLogSeverityEntry(int severity) {
  API_BEGIN
  if (severity < 0 || severity > 4)
    return NewStatus(ONYX_INVALID_ARGUMENT, StrCat("default log severity must be 0..4, got ", severity));
  SetDefaultLogSeverity(severity);
  API_END
}

OnyxStatus* SetDefaultLogVerbosityEntry(int level) {
  API_BEGIN
  if (level < 0) return NewStatus(ONYX_INVALID_ARGUMENT, StrCat("default log verbosity must be >= 0, got ", level));
  SetDefaultLogVerbosity(level);
  API_END
}

OnyxStatus* SetTelemetryEnabled(int enabled) {
  API_BEGIN
  g_telemetry.store(enabled != 0);
  API_END
}

OnyxStatus* GetTelemetryEnabled(int* out) {
  API_BEGIN
  API_CHECK_NOT_NULL(out);
  *out = g_telemetry.load() ? 1 : 0;
  API_END
}

OnyxStatus* ArenaCfgCreate(size_t max_mem, int arena_extend_strategy, int initial_chunk_size_bytes,
                           int max_dead_bytes_per_chunk, OnyxArenaCfg** out) {
  API_BEGIN
  API_CHECK_NOT_NULL(out);
  // onnxruntime: 0 = kNextPowerOfTwo, 1 = kSameAsRequested. Our cache rounds
  // to size classes either way; the value is checked and kept for parity.
  if (arena_extend_strategy < -1 || arena_extend_strategy > 1)
    return NewStatus(ONYX_INVALID_ARGUMENT,
                     StrCat("arena_extend_strategy must be -1 (default), 0 or 1, got ", arena_extend_strategy));
  if (initial_chunk_size_bytes < -1 || max_dead_bytes_per_chunk < -1)
    return NewStatus(ONYX_INVALID_ARGUMENT, "initial_chunk_size_bytes and max_dead_bytes_per_chunk must be >= -1");
  *out = new OnyxArenaCfg{max_mem, arena_extend_strategy, initial_chunk_size_bytes, max_dead_bytes_per_chunk};
  API_END
}

OnyxStatus* ArenaCfgCreateFromKeys(const char* const* keys, const int64_t* values, size_t count, OnyxArenaCfg** out) {
  API_BEGIN
  API_CHECK_NOT_NULL(out);
  if (count > 0) {
    API_CHECK_NOT_NULL(keys);
    API_CHECK_NOT_NULL(values);
  }
  OnyxArenaCfg cfg;
  for (size_t i = 0; i < count; ++i) {
    if (!keys[i]) return NewStatus(ONYX_INVALID_ARGUMENT, StrCat("ArenaCfgCreateFromKeys: keys[", i, "] is NULL"));
    const std::string key = keys[i];
    const int64_t v = values[i];
    auto int_in = [&](int64_t lo, int64_t hi) -> OnyxStatus* {
      if (v < lo || v > hi)
        return NewStatus(ONYX_INVALID_ARGUMENT, StrCat("OrtArenaCfg: ", key, " must be in [", lo, ", ", hi, "], got ", v));
      return nullptr;
    };
    OnyxStatus* bad = nullptr;
    if (key == "max_mem") {
      if (!(bad = int_in(0, INT64_MAX))) cfg.max_mem = static_cast<size_t>(v);
    } else if (key == "arena_extend_strategy") {
      if (!(bad = int_in(-1, 1))) cfg.arena_extend_strategy = static_cast<int>(v);
    } else if (key == "initial_chunk_size_bytes") {
      if (!(bad = int_in(-1, INT32_MAX))) cfg.initial_chunk_size_bytes = static_cast<int>(v);
    } else if (key == "max_dead_bytes_per_chunk") {
      if (!(bad = int_in(-1, INT32_MAX))) cfg.max_dead_bytes_per_chunk = static_cast<int>(v);
    } else if (key == "initial_growth_chunk_size_bytes") {
      if (!(bad = int_in(-1, INT32_MAX))) cfg.initial_growth_chunk_size_bytes = v;
    } else if (key == "max_power_of_two_extend_bytes") {
      if (!(bad = int_in(-1, INT64_MAX))) cfg.max_power_of_two_extend_bytes = v;
    } else {
      // onnxruntime's text.
      return NewStatus(ONYX_INVALID_ARGUMENT, "Invalid OrtArenaCfg option: " + key);
    }
    if (bad) return bad;
  }
  *out = new OnyxArenaCfg(cfg);
  API_END
}

void ArenaCfgRelease(OnyxArenaCfg* cfg) { delete cfg; }

OnyxStatus* EnvCreateGlobalThreadPools(OnyxEnv* env, int intra_op_threads, int inter_op_threads) {
  API_BEGIN
  API_CHECK_NOT_NULL(env);
  if (intra_op_threads < 0 || inter_op_threads < 0)
    return NewStatus(ONYX_INVALID_ARGUMENT, StrCat("EnvCreateGlobalThreadPools: thread counts must be >= 0, got ",
                                                   intra_op_threads, " and ", inter_op_threads));
  if (env->global_intra_pool)
    return NewStatus(ONYX_FAIL, "Global thread pools have already been created, cannot replace them");
  env->global_intra_pool = std::make_shared<ThreadPool>(intra_op_threads > 0 ? intra_op_threads : 0);
  env->global_inter_threads = inter_op_threads;
  API_END
}

OnyxStatus* EnvCreateAndRegisterAllocator(OnyxEnv* env, const OnyxMemoryInfo* info, const OnyxArenaCfg* cfg) {
  API_BEGIN
  API_CHECK_NOT_NULL(env);
  API_CHECK_NOT_NULL(info);
  if (info->info.device != DeviceType::kCpu)
    return NewStatus(ONYX_INVALID_ARGUMENT, StrCat("create_and_register_allocator: cannot create an allocator for ",
                                                   info->info.name, " memory: this build has only the CPU"));
  const bool arena = info->info.alloc_type == ONYX_ARENA_ALLOCATOR;
  const size_t max_mem = cfg ? cfg->max_mem : 0;
  // A device allocator keeps nothing idle; an arena caches freed blocks. A
  // second registration replaces the first (sessions using it keep it).
  env->cpu_allocator = arena ? std::make_shared<CpuAllocator>(size_t{64} << 10, size_t{256} << 20, max_mem)
                             : std::make_shared<CpuAllocator>(SIZE_MAX, 0, max_mem);
  API_END
}

OnyxStatus* EnvUnregisterAllocator(OnyxEnv* env, const OnyxMemoryInfo* info) {
  API_BEGIN
  API_CHECK_NOT_NULL(env);
  API_CHECK_NOT_NULL(info);
  if (info->info.device != DeviceType::kCpu || !env->cpu_allocator)
    return NewStatus(ONYX_INVALID_ARGUMENT,
                     StrCat("no allocator for ", info->info.name, " memory is registered with this environment"));
  // Sessions that use it keep their reference.
  env->cpu_allocator.reset();
  API_END
}

}  // namespace

void FillEnvApi(OnyxApi& a) {
  a.SetGlobalSeed = SetGlobalSeedEntry;
  a.SetDefaultLogSeverity = SetDefaultLogSeverityEntry;
  a.SetDefaultLogVerbosity = SetDefaultLogVerbosityEntry;
  a.SetTelemetryEnabled = SetTelemetryEnabled;
  a.GetTelemetryEnabled = GetTelemetryEnabled;
  a.ArenaCfgCreate = ArenaCfgCreate;
  a.ArenaCfgRelease = ArenaCfgRelease;
  a.ArenaCfgCreateFromKeys = ArenaCfgCreateFromKeys;
  a.EnvCreateGlobalThreadPools = EnvCreateGlobalThreadPools;
  a.EnvCreateAndRegisterAllocator = EnvCreateAndRegisterAllocator;
  a.EnvUnregisterAllocator = EnvUnregisterAllocator;
}

}  // namespace capi
}  // namespace onyx

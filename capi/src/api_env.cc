// Process-wide settings (seed, logging, telemetry) and environment allocators.
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

void ArenaCfgRelease(OnyxArenaCfg* cfg) { delete cfg; }

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
  a.EnvCreateAndRegisterAllocator = EnvCreateAndRegisterAllocator;
  a.EnvUnregisterAllocator = EnvUnregisterAllocator;
}

}  // namespace capi
}  // namespace onyx

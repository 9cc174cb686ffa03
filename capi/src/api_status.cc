#include "capi/src/api_table.h"
#include "capi/src/handles.h"
#include "core/framework/logging.h"
#include "core/session/session.h"

namespace onyx {
namespace capi {

namespace {
// Returned when even the status cannot be allocated; StatusRelease skips it.
OnyxStatus kOutOfMemory{ONYX_FAIL, "out of memory"};
}  // namespace

OnyxStatus* NewStatus(OnyxErrorCode code, std::string message) {
  if (code == ONYX_OK) return nullptr;
  try {
    return new OnyxStatus{code, std::move(message)};
  } catch (...) {
    return &kOutOfMemory;
  }
}

OnyxStatus* ToOnyxStatus(const Status& s) {
  if (s.ok()) return nullptr;
  return NewStatus(static_cast<OnyxErrorCode>(s.code()), s.message());
}

namespace {

OnyxStatus* StatusCreate(OnyxErrorCode code_arg, const char* message) {
  // A code outside the enumeration (C lets any int through) becomes FAIL:
  // an OnyxErrorCode holding it could not be read back in C++.
  const int v = EnumArg(code_arg);
  const OnyxErrorCode code = v >= ONYX_OK && v <= ONYX_EP_FAIL ? static_cast<OnyxErrorCode>(v) : ONYX_FAIL;
  return NewStatus(code, message ? message : "");
}
OnyxErrorCode StatusGetCode(const OnyxStatus* s) { return s ? s->code : ONYX_OK; }
const char* StatusGetMessage(const OnyxStatus* s) { return s ? s->message.c_str() : ""; }
void StatusRelease(OnyxStatus* s) {
  if (s != &kOutOfMemory) delete s;
}

OnyxStatus* EnvCreate(OnyxLoggingLevel severity_arg, const char* log_id, OnyxEnv** out) {
  const int severity = EnumArg(severity_arg);
  API_BEGIN
  API_CHECK_NOT_NULL(out);
  if (severity < ONYX_LOG_VERBOSE || severity > ONYX_LOG_FATAL)
    return NewStatus(ONYX_INVALID_ARGUMENT, "EnvCreate: severity must be 0..4, got " + std::to_string(severity));
  auto env = std::make_unique<OnyxEnv>();
  env->severity = severity;
  env->log_id = log_id ? log_id : "";
  // Like onnxruntime's environment, it sets the process's default logger.
  SetDefaultLogSeverity(severity);
  // And like it, it does the process's one-time set-up now, not in the
  // first session.
  Session::PrepareProcess();
  *out = env.release();
  API_END
}
void EnvRelease(OnyxEnv* env) { delete env; }

}  // namespace

void FillStatusApi(OnyxApi& a) {
  a.StatusCreate = StatusCreate;
  a.StatusGetCode = StatusGetCode;
  a.StatusGetMessage = StatusGetMessage;
  a.StatusRelease = StatusRelease;
  a.EnvCreate = EnvCreate;
  a.EnvRelease = EnvRelease;
}

}  // namespace capi
}  // namespace onyx

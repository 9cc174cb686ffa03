#include <cstring>

#include "capi/src/api_table.h"
#include "capi/src/handles.h"

namespace {

const OnyxApi* BuildApi() {
  static OnyxApi api = [] {
    OnyxApi a;
    std::memset(&a, 0, sizeof(a));
    onyx::capi::FillStatusApi(a);
    onyx::capi::FillOptionsApi(a);
    onyx::capi::FillSessionApi(a);
    onyx::capi::FillValueApi(a);
    onyx::capi::FillInfoApi(a);
    onyx::capi::FillBindingApi(a);
    onyx::capi::FillEnvApi(a);
    onyx::capi::FillLoraApi(a);
    return a;
  }();
  return &api;
}

const OnyxApi* GetApi(uint32_t version) {
  if (version < 1 || version > ONYX_API_VERSION) return nullptr;
  return BuildApi();
}

const char* GetApiError(uint32_t version) {
  if (version >= 1 && version <= ONYX_API_VERSION) return nullptr;
  static thread_local char buf[160];
  std::snprintf(buf, sizeof(buf),
                "Onyx Runtime %s provides C API versions 1 to %d, but version %u was requested; "
                "use a newer libonyxruntime.so",
                ONYX_VERSION, ONYX_API_VERSION, version);
  return buf;
}

const char* GetVersion() { return ONYX_VERSION; }

const OnyxApiBase kApiBase = {&GetApi, &GetApiError, &GetVersion};

}  // namespace

extern "C" ONYX_EXPORT const OnyxApiBase* OnyxGetApiBase(void) { return &kApiBase; }

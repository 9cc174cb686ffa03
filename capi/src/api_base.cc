// OnyxGetApiBase, the library's one exported symbol. This file sees only the
// public header, and the build compiles it with debug information, so the
// library's DWARF describes exactly the public ABI (OnyxApiBase, OnyxApi and
// the types they reach, engine types staying opaque) for abidw/abidiff.
#include <cstdio>

#include "capi/src/api_table.h"

namespace {

const OnyxApi* GetApi(uint32_t version) {
  if (version < 1 || version > ONYX_API_VERSION) return nullptr;
  return onyx::capi::Api();
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

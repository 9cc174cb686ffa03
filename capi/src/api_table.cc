#include <cstring>

#include "capi/src/api_table.h"
#include "capi/src/handles.h"

namespace onyx {
namespace capi {

const OnyxApi* Api() {
  static OnyxApi api = [] {
    OnyxApi a;
    std::memset(&a, 0, sizeof(a));
    FillStatusApi(a);
    FillOptionsApi(a);
    FillSessionApi(a);
    FillValueApi(a);
    FillInfoApi(a);
    FillBindingApi(a);
    FillEnvApi(a);
    FillLoraApi(a);
    return a;
  }();
  return &api;
}

}  // namespace capi
}  // namespace onyx

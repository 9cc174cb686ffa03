// Each api_*.cc fills its part of the function table.
#pragma once

#include "onyxruntime/onyxruntime_c_api.h"

namespace onyx {
namespace capi {

void FillStatusApi(OnyxApi& api);
void FillOptionsApi(OnyxApi& api);
void FillSessionApi(OnyxApi& api);
void FillValueApi(OnyxApi& api);
void FillInfoApi(OnyxApi& api);
void FillBindingApi(OnyxApi& api);
void FillEnvApi(OnyxApi& api);
void FillLoraApi(OnyxApi& api);

// The filled table (built once).
const OnyxApi* Api();

}  // namespace capi
}  // namespace onyx

// The public header must compile alone as strict C++ (see header_test.c for C).
#include "onyxruntime/onyxruntime_c_api.h"

int main() { return OnyxGetApiBase()->GetApi(ONYX_API_VERSION) == nullptr ? 1 : 0; }

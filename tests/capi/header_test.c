/* The public header must compile alone as strict C99. */
#include "onyxruntime/onyxruntime_c_api.h"

int main(void) { return OnyxGetApiBase()->GetApi(ONYX_API_VERSION) == NULL ? 1 : 0; }

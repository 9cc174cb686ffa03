/* Consumer of an installed Onyx Runtime (find_package or pkg-config): runs
 * add.onnx (z = x + y, float [2, 3]) and prints z. */
#include <stdio.h>

#include <onyxruntime/onyxruntime_c_api.h>

static int failed(const OnyxApi* api, OnyxStatus* status) {
  if (status == NULL) return 0;
  fprintf(stderr, "consumer: %s\n", api->StatusGetMessage(status));
  api->StatusRelease(status);
  return 1;
}

int main(int argc, char** argv) {
  const OnyxApi* api = OnyxGetApiBase()->GetApi(ONYX_API_VERSION);
  if (api == NULL || argc != 2) return 2;
  OnyxEnv* env = NULL;
  OnyxSession* session = NULL;
  if (failed(api, api->EnvCreate(ONYX_LOG_WARNING, "consumer", &env))) return 1;
  if (failed(api, api->SessionCreate(env, argv[1], NULL, &session))) return 1;
  float x[6] = {1, 2, 3, 4, 5, 6}, y[6] = {10, 20, 30, 40, 50, 60};
  int64_t shape[2] = {2, 3};
  size_t indices[2] = {0, 1};
  OnyxTensorArg args[2] = {{x, sizeof x, shape, 2, ONYX_TYPE_FLOAT}, {y, sizeof y, shape, 2, ONYX_TYPE_FLOAT}};
  OnyxTensorResult z;
  if (failed(api, api->SessionRunTensors(session, NULL, indices, args, 2, NULL, 1, &z))) return 1;
  printf("z =");
  for (int i = 0; i < 6; ++i) printf(" %g", ((const float*)z.data)[i]);
  printf("\n");
  api->ValueRelease(z.value);
  api->SessionRelease(session);
  api->EnvRelease(env);
  return 0;
}

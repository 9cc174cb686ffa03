/* Built against the API version 4 header (abi_checks/v4/, the header as it was
 * before version 5 was appended) and run against the current library: a
 * program compiled for an older header keeps working. Loads MODEL (one float
 * tensor input, first output float), checks its declared types, runs it with
 * SessionRun and with SessionRunTensors on the same deterministic input and
 * compares the bytes, and checks that errors still come back as statuses with
 * the same codes. Prints "abi_v4_client: OK" and exits 0, else exits 1. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onyxruntime/onyxruntime_c_api.h"

#if ONYX_API_VERSION != 4
#error "abi_checks/v4_client.c must be compiled against the version 4 header (abi_checks/v4)"
#endif

static const OnyxApi* api;

static void fail(const char* what) {
  fprintf(stderr, "abi_v4_client: FAILED: %s\n", what);
  exit(1);
}

static void check(OnyxStatus* status, const char* what) {
  if (status == NULL) return;
  fprintf(stderr, "abi_v4_client: FAILED: %s: %s\n", what, api->StatusGetMessage(status));
  exit(1);
}

/* The call must fail with `code`; the status is released. */
static void expect_error(OnyxStatus* status, OnyxErrorCode code, const char* what) {
  if (status == NULL) fail(what);
  if (api->StatusGetCode(status) != code) {
    fprintf(stderr, "abi_v4_client: FAILED: %s: code %d, expected %d (%s)\n", what, (int)api->StatusGetCode(status),
            (int)code, api->StatusGetMessage(status));
    exit(1);
  }
  api->StatusRelease(status);
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s MODEL.onnx\n", argv[0]);
    return 1;
  }
  const OnyxApiBase* base = OnyxGetApiBase();
  api = base->GetApi(ONYX_API_VERSION);
  if (api == NULL) fail(base->GetApiError(ONYX_API_VERSION));
  if (base->GetApi(ONYX_API_VERSION + 1000) != NULL) fail("GetApi of an unknown version is not NULL");
  if (strstr(base->GetApiError(ONYX_API_VERSION + 1000), "1004") == NULL) fail("GetApiError does not name the version");
  if (strcmp(base->GetVersionString(), api->GetVersionString()) != 0) fail("two version strings");

  OnyxEnv* env = NULL;
  OnyxSessionOptions* options = NULL;
  OnyxSession* session = NULL;
  const char* value = NULL;
  check(api->EnvCreate(ONYX_LOG_WARNING, "abi_v4_client", &env), "EnvCreate");
  check(api->SessionOptionsCreate(&options), "SessionOptionsCreate");
  check(api->SessionOptionsSetIntraOpThreads(options, 1), "SetIntraOpThreads");
  check(api->SessionOptionsSetGraphOptimizationLevel(options, ONYX_ENABLE_ALL), "SetGraphOptimizationLevel");
  check(api->SessionOptionsAddConfigEntry(options, "session.intra_op.allow_spinning", "0"), "AddConfigEntry");
  check(api->SessionOptionsGetConfigEntry(options, "session.intra_op.allow_spinning", &value), "GetConfigEntry");
  if (value == NULL || strcmp(value, "0") != 0) fail("config entry not read back");
  expect_error(api->SessionOptionsSetIntraOpThreads(options, -1), ONYX_INVALID_ARGUMENT, "negative thread count");
  expect_error(api->SessionCreate(env, "/nonexistent/model.onnx", options, &session), ONYX_NO_SUCHFILE, "missing model");
  check(api->SessionCreate(env, argv[1], options, &session), argv[1]);

  size_t n_in = 0, n_out = 0, rank = 0;
  const char *in_name = NULL, *out_name = NULL;
  OnyxTypeInfo* info = NULL;
  const OnyxTensorTypeAndShapeInfo* tensor = NULL;
  OnyxValueKind kind = ONYX_VALUE_UNKNOWN;
  OnyxElementType type = ONYX_TYPE_UNDEFINED;
  int64_t dims[8];
  check(api->SessionGetInputCount(session, &n_in), "SessionGetInputCount");
  check(api->SessionGetOutputCount(session, &n_out), "SessionGetOutputCount");
  if (n_in != 1 || n_out < 1) fail("the model needs one input and an output");
  check(api->SessionGetInputName(session, 0, &in_name), "SessionGetInputName");
  check(api->SessionGetOutputName(session, 0, &out_name), "SessionGetOutputName");
  check(api->SessionGetInputTypeInfo(session, 0, &info), "SessionGetInputTypeInfo");
  check(api->TypeInfoGetKind(info, &kind), "TypeInfoGetKind");
  check(api->TypeInfoGetTensorInfo(info, &tensor), "TypeInfoGetTensorInfo");
  if (kind != ONYX_VALUE_TENSOR || tensor == NULL) fail("input is not a tensor");
  check(api->TensorInfoGetElementType(tensor, &type), "TensorInfoGetElementType");
  check(api->TensorInfoGetDimCount(tensor, &rank), "TensorInfoGetDimCount");
  if (type != ONYX_TYPE_FLOAT || rank == 0 || rank > 8) fail("input is not a float tensor of rank 1..8");
  check(api->TensorInfoGetDims(tensor, dims, rank), "TensorInfoGetDims");
  api->TypeInfoRelease(info);
  size_t count = 1;
  for (size_t d = 0; d < rank; ++d) {
    if (dims[d] < 0) dims[d] = 1;
    count *= (size_t)dims[d];
  }
  float* x = malloc(count * sizeof(float));
  for (size_t i = 0; i < count; ++i) x[i] = (float)((double)((i * 7919) % 1000) / 500.0 - 1.0);

  /* SessionRun with a value over the caller's buffer (API version 1 entries). */
  OnyxMemoryInfo* cpu = NULL;
  OnyxValue* input = NULL;
  OnyxValue* output = NULL;
  void* out_data = NULL;
  int64_t out_count = 0;
  OnyxTensorTypeAndShapeInfo* out_info = NULL;
  check(api->MemoryInfoCreateCpu(ONYX_DEVICE_ALLOCATOR, ONYX_MEM_DEFAULT, &cpu), "MemoryInfoCreateCpu");
  check(api->ValueCreateTensorWithData(cpu, x, count * sizeof(float), dims, rank, ONYX_TYPE_FLOAT, &input),
        "ValueCreateTensorWithData");
  check(api->SessionRun(session, NULL, &in_name, (const OnyxValue* const*)&input, 1, &out_name, 1, &output),
        "SessionRun");
  check(api->ValueGetTensorTypeAndShape(output, &out_info), "ValueGetTensorTypeAndShape");
  check(api->TensorInfoGetElementType(out_info, &type), "output TensorInfoGetElementType");
  check(api->TensorInfoGetElementCount(out_info, &out_count), "TensorInfoGetElementCount");
  api->TensorTypeAndShapeInfoRelease(out_info);
  check(api->ValueGetTensorData(output, &out_data), "ValueGetTensorData");
  if (type != ONYX_TYPE_FLOAT || out_count <= 0) fail("first output is not a non-empty float tensor");
  for (int64_t i = 0; i < out_count; ++i)
    if (!isfinite(((const float*)out_data)[i])) fail("output not finite");

  /* SessionRunTensors (API version 4) with the version 4 structs: the same bytes. */
  OnyxTensorArg arg;
  OnyxTensorResult result;
  size_t in_index = 0, out_index = 0;
  memset(&result, 0, sizeof(result));
  arg.data = x;
  arg.data_bytes = count * sizeof(float);
  arg.shape = dims;
  arg.rank = rank;
  arg.type = ONYX_TYPE_FLOAT;
  check(api->SessionRunTensors(session, NULL, &in_index, &arg, 1, &out_index, 1, &result), "SessionRunTensors");
  if (result.kind != ONYX_VALUE_TENSOR || result.type != ONYX_TYPE_FLOAT || result.data == NULL)
    fail("SessionRunTensors result is not a float tensor");
  if (memcmp(result.data, out_data, (size_t)out_count * sizeof(float)) != 0)
    fail("SessionRun and SessionRunTensors disagree");
  arg.data_bytes -= 4;
  expect_error(api->SessionRunTensors(session, NULL, &in_index, &arg, 1, &out_index, 1, &result),
               ONYX_INVALID_ARGUMENT, "short buffer");
  arg.data_bytes += 4;
  arg.type = ONYX_TYPE_INT32;
  expect_error(api->SessionRunTensors(session, NULL, &in_index, &arg, 1, &out_index, 1, &result),
               ONYX_INVALID_ARGUMENT, "wrong element type");

  printf("abi_v4_client: OK (library %s, API version 4 header; %s -> %s, %lld elements, both run paths agree)\n",
         api->GetVersionString(), in_name, out_name, (long long)out_count);
  api->ValueRelease(output);
  api->ValueRelease(input);
  api->MemoryInfoRelease(cpu);
  api->SessionRelease(session);
  api->SessionOptionsRelease(options);
  api->EnvRelease(env);
  free(x);
  return 0;
}

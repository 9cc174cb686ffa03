/* Onyx Runtime from C: loads a model, prints its inputs and outputs, runs it
 * once and prints what it returned.
 *
 *   onyx_example_c MODEL [INPUT.bin ...]
 *
 * The i-th file (raw elements in native byte order) feeds the i-th input;
 * inputs without a file get seeded pseudo-random values (symbolic dims = 1).
 * Numeric tensor inputs and outputs only. Exits 1 with the library's message
 * on any error. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onyxruntime/onyxruntime_c_api.h"

static const OnyxApi* api;

/* Prints the status's message, releases it and exits when it is an error. */
static void check(OnyxStatus* status, const char* what) {
  if (status == NULL) return;
  fprintf(stderr, "onyx_example_c: %s: error %d: %s\n", what, (int)api->StatusGetCode(status),
          api->StatusGetMessage(status));
  api->StatusRelease(status);
  exit(1);
}

static const char* type_name(OnyxElementType t) {
  switch (t) {
    case ONYX_TYPE_FLOAT: return "float";
    case ONYX_TYPE_DOUBLE: return "double";
    case ONYX_TYPE_INT8: return "int8";
    case ONYX_TYPE_UINT8: return "uint8";
    case ONYX_TYPE_INT16: return "int16";
    case ONYX_TYPE_UINT16: return "uint16";
    case ONYX_TYPE_INT32: return "int32";
    case ONYX_TYPE_UINT32: return "uint32";
    case ONYX_TYPE_INT64: return "int64";
    case ONYX_TYPE_UINT64: return "uint64";
    case ONYX_TYPE_BOOL: return "bool";
    default: return NULL;
  }
}

static size_t type_size(OnyxElementType t) {
  switch (t) {
    case ONYX_TYPE_DOUBLE: case ONYX_TYPE_INT64: case ONYX_TYPE_UINT64: return 8;
    case ONYX_TYPE_FLOAT: case ONYX_TYPE_INT32: case ONYX_TYPE_UINT32: return 4;
    case ONYX_TYPE_INT16: case ONYX_TYPE_UINT16: return 2;
    default: return 1;
  }
}

static double element(const void* data, OnyxElementType t, size_t i) {
  switch (t) {
    case ONYX_TYPE_FLOAT: return ((const float*)data)[i];
    case ONYX_TYPE_DOUBLE: return ((const double*)data)[i];
    case ONYX_TYPE_INT8: return ((const int8_t*)data)[i];
    case ONYX_TYPE_INT16: return ((const int16_t*)data)[i];
    case ONYX_TYPE_UINT16: return ((const uint16_t*)data)[i];
    case ONYX_TYPE_INT32: return ((const int32_t*)data)[i];
    case ONYX_TYPE_UINT32: return ((const uint32_t*)data)[i];
    case ONYX_TYPE_INT64: return (double)((const int64_t*)data)[i];
    case ONYX_TYPE_UINT64: return (double)((const uint64_t*)data)[i];
    default: return ((const uint8_t*)data)[i];
  }
}

/* Seeded values in [-1, 1) (integers: -8..7; bool: 0/1), the same in the C++ example. */
static void fill_random(void* data, OnyxElementType t, size_t n, uint64_t* state) {
  for (size_t i = 0; i < n; ++i) {
    *state = *state * 6364136223846793005ULL + 1442695040888963407ULL;
    uint32_t r = (uint32_t)(*state >> 33);
    double v = r / 2147483648.0 * 2.0 - 1.0;
    int64_t k = (int64_t)(r % 16) - 8;
    switch (t) {
      case ONYX_TYPE_FLOAT: ((float*)data)[i] = (float)v; break;
      case ONYX_TYPE_DOUBLE: ((double*)data)[i] = v; break;
      case ONYX_TYPE_INT8: ((int8_t*)data)[i] = (int8_t)k; break;
      case ONYX_TYPE_INT16: ((int16_t*)data)[i] = (int16_t)k; break;
      case ONYX_TYPE_INT32: ((int32_t*)data)[i] = (int32_t)k; break;
      case ONYX_TYPE_INT64: ((int64_t*)data)[i] = k; break;
      case ONYX_TYPE_BOOL: ((uint8_t*)data)[i] = (uint8_t)(r & 1); break;
      case ONYX_TYPE_UINT16: ((uint16_t*)data)[i] = (uint16_t)(r % 16); break;
      case ONYX_TYPE_UINT32: ((uint32_t*)data)[i] = r % 16; break;
      case ONYX_TYPE_UINT64: ((uint64_t*)data)[i] = r % 16; break;
      default: ((uint8_t*)data)[i] = (uint8_t)(r % 16); break;
    }
  }
}

static void print_shape(const int64_t* dims, const char* const* symbols, size_t rank) {
  printf("[");
  for (size_t d = 0; d < rank; ++d) {
    if (symbols != NULL && symbols[d] != NULL && symbols[d][0] != '\0') printf("%s%s", d ? ", " : "", symbols[d]);
    else printf("%s%lld", d ? ", " : "", (long long)dims[d]);
  }
  printf("]");
}

/* Prints "KIND i: NAME TYPE [dims]" from a session's declared type. */
static void describe(OnyxTypeInfo* info, const char* kind, size_t i, const char* name) {
  const char* type_string = NULL;
  const OnyxTensorTypeAndShapeInfo* tensor = NULL;
  check(api->TypeInfoGetTypeString(info, &type_string), "TypeInfoGetTypeString");
  check(api->TypeInfoGetTensorInfo(info, &tensor), "TypeInfoGetTensorInfo");
  printf("%s %zu: %s %s", kind, i, name, type_string);
  if (tensor != NULL) {
    size_t rank = 0;
    check(api->TensorInfoGetDimCount(tensor, &rank), "TensorInfoGetDimCount");
    int64_t dims[16];
    const char* symbols[16];
    if (rank > 16) rank = 16;
    check(api->TensorInfoGetDims(tensor, dims, rank), "TensorInfoGetDims");
    check(api->TensorInfoGetSymbolicDims(tensor, symbols, rank), "TensorInfoGetSymbolicDims");
    printf(" ");
    print_shape(dims, symbols, rank);
  }
  printf("\n");
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s MODEL [INPUT.bin ...]\n", argv[0]);
    return 1;
  }
  api = OnyxGetApiBase()->GetApi(ONYX_API_VERSION);
  if (api == NULL) {
    fprintf(stderr, "onyx_example_c: %s\n", OnyxGetApiBase()->GetApiError(ONYX_API_VERSION));
    return 1;
  }
  OnyxEnv* env = NULL;
  OnyxSession* session = NULL;
  check(api->EnvCreate(ONYX_LOG_WARNING, "onyx_example_c", &env), "EnvCreate");
  check(api->SessionCreate(env, argv[1], NULL, &session), argv[1]);
  printf("model: %s\n", argv[1]);

  size_t n_in = 0, n_out = 0;
  check(api->SessionGetInputCount(session, &n_in), "SessionGetInputCount");
  check(api->SessionGetOutputCount(session, &n_out), "SessionGetOutputCount");
  const char** in_names = calloc(n_in + 1, sizeof(char*));
  const char** out_names = calloc(n_out + 1, sizeof(char*));
  OnyxValue** inputs = calloc(n_in + 1, sizeof(OnyxValue*));
  OnyxValue** outputs = calloc(n_out + 1, sizeof(OnyxValue*));
  void** buffers = calloc(n_in + 1, sizeof(void*));
  OnyxMemoryInfo* cpu = NULL;
  check(api->MemoryInfoCreateCpu(ONYX_DEVICE_ALLOCATOR, ONYX_MEM_DEFAULT, &cpu), "MemoryInfoCreateCpu");
  uint64_t seed = 42;

  for (size_t i = 0; i < n_in; ++i) {
    OnyxTypeInfo* info = NULL;
    const OnyxTensorTypeAndShapeInfo* tensor = NULL;
    check(api->SessionGetInputName(session, i, &in_names[i]), "SessionGetInputName");
    check(api->SessionGetInputTypeInfo(session, i, &info), "SessionGetInputTypeInfo");
    describe(info, "input", i, in_names[i]);
    check(api->TypeInfoGetTensorInfo(info, &tensor), "TypeInfoGetTensorInfo");
    OnyxElementType type = ONYX_TYPE_UNDEFINED;
    size_t rank = 0;
    int64_t dims[16];
    if (tensor != NULL) {
      check(api->TensorInfoGetElementType(tensor, &type), "TensorInfoGetElementType");
      check(api->TensorInfoGetDimCount(tensor, &rank), "TensorInfoGetDimCount");
    }
    if (type_name(type) == NULL || rank > 16) {
      fprintf(stderr, "onyx_example_c: input '%s' is not a numeric tensor of rank <= 16\n", in_names[i]);
      return 1;
    }
    check(api->TensorInfoGetDims(tensor, dims, rank), "TensorInfoGetDims");
    api->TypeInfoRelease(info);
    size_t count = 1;
    for (size_t d = 0; d < rank; ++d) {
      if (dims[d] < 0) dims[d] = 1;
      count *= (size_t)dims[d];
    }
    size_t bytes = count * type_size(type);
    buffers[i] = malloc(bytes ? bytes : 1);
    if ((int)i + 2 < argc) {
      FILE* f = fopen(argv[i + 2], "rb");
      size_t got = f ? fread(buffers[i], 1, bytes, f) : 0;
      int extra = f ? fgetc(f) : EOF;
      if (f) fclose(f);
      if (f == NULL || got != bytes || extra != EOF) {
        fprintf(stderr, "onyx_example_c: input '%s' needs %zu bytes and %s does not hold exactly that\n", in_names[i],
                bytes, argv[i + 2]);
        return 1;
      }
    } else {
      fill_random(buffers[i], type, count, &seed);
    }
    check(api->ValueCreateTensorWithData(cpu, buffers[i], bytes, dims, rank, type, &inputs[i]), in_names[i]);
  }
  for (size_t i = 0; i < n_out; ++i) {
    OnyxTypeInfo* info = NULL;
    check(api->SessionGetOutputName(session, i, &out_names[i]), "SessionGetOutputName");
    check(api->SessionGetOutputTypeInfo(session, i, &info), "SessionGetOutputTypeInfo");
    describe(info, "output", i, out_names[i]);
    api->TypeInfoRelease(info);
  }

  check(api->SessionRun(session, NULL, in_names, (const OnyxValue* const*)inputs, n_in, out_names, n_out, outputs),
        "SessionRun");

  for (size_t i = 0; i < n_out; ++i) {
    OnyxTensorTypeAndShapeInfo* info = NULL;
    OnyxElementType type = ONYX_TYPE_UNDEFINED;
    size_t rank = 0;
    int64_t count = 0, dims[16];
    void* data = NULL;
    check(api->ValueGetTensorTypeAndShape(outputs[i], &info), out_names[i]);
    check(api->TensorInfoGetElementType(info, &type), "TensorInfoGetElementType");
    check(api->TensorInfoGetDimCount(info, &rank), "TensorInfoGetDimCount");
    check(api->TensorInfoGetElementCount(info, &count), "TensorInfoGetElementCount");
    if (rank > 16) rank = 16;
    check(api->TensorInfoGetDims(info, dims, rank), "TensorInfoGetDims");
    api->TensorTypeAndShapeInfoRelease(info);
    if (type_name(type) == NULL) {
      printf("%s: element type %d (not printed)\n", out_names[i], (int)type);
      continue;
    }
    check(api->ValueGetTensorData(outputs[i], &data), "ValueGetTensorData");
    double sum = 0;
    for (int64_t k = 0; k < count; ++k) sum += element(data, type, (size_t)k);
    printf("%s: %s ", out_names[i], type_name(type));
    print_shape(dims, NULL, rank);
    printf(" sum=%.9g values:", sum);
    for (int64_t k = 0; k < count && k < 16; ++k) printf(" %.9g", element(data, type, (size_t)k));
    printf("%s\n", count > 16 ? " ..." : "");
  }

  for (size_t i = 0; i < n_out; ++i) api->ValueRelease(outputs[i]);
  for (size_t i = 0; i < n_in; ++i) {
    api->ValueRelease(inputs[i]);
    free(buffers[i]);
  }
  api->MemoryInfoRelease(cpu);
  api->SessionRelease(session);
  api->EnvRelease(env);
  free(in_names);
  free(out_names);
  free(inputs);
  free(outputs);
  free(buffers);
  return 0;
}

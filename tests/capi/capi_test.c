/*
 * The binding scenario in plain C99, through the public header only:
 * load a MobileNetV2-like model (input "input" float [batch,3,224,224]),
 * inspect it, run it on a deterministic input held in the caller's buffer,
 * check the outputs and every error path, release everything.
 *
 *   capi_test MODEL.onnx [OUTPUT.bin]
 *
 * OUTPUT.bin receives the raw bytes of the first output, so the Python and C++
 * bindings can be checked to produce the very same bytes. Exit status is
 * non-zero on any failure. Meant to be clean under
 * valgrind --leak-check=full --error-exitcode=1.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onyxruntime/onyxruntime_c_api.h"

static const OnyxApi* g_api;
static int g_failures;

#define CHECK(cond, ...)                                         \
  do {                                                           \
    if (!(cond)) {                                               \
      fprintf(stderr, "FAILED %s:%d: ", __FILE__, __LINE__);     \
      fprintf(stderr, __VA_ARGS__);                              \
      fputc('\n', stderr);                                       \
      g_failures++;                                              \
    }                                                            \
  } while (0)

/* Returns 1 when `st` is success; otherwise reports and releases it. */
static int ok_at(OnyxStatus* st, const char* what, int line) {
  if (st == NULL) return 1;
  fprintf(stderr, "FAILED line %d: %s: code %d: %s\n", line, what, (int)g_api->StatusGetCode(st),
          g_api->StatusGetMessage(st));
  g_api->StatusRelease(st);
  g_failures++;
  return 0;
}
#define OK(call) ok_at((call), #call, __LINE__)

/* Checks that `st` failed with `code` and a non-empty message; releases it. */
static void expect_code_at(OnyxStatus* st, OnyxErrorCode code, const char* what, int line) {
  if (st == NULL) {
    fprintf(stderr, "FAILED line %d: %s: succeeded, expected code %d\n", line, what, (int)code);
    g_failures++;
    return;
  }
  if (g_api->StatusGetCode(st) != code || g_api->StatusGetMessage(st)[0] == '\0') {
    fprintf(stderr, "FAILED line %d: %s: got code %d (\"%s\"), expected code %d\n", line, what,
            (int)g_api->StatusGetCode(st), g_api->StatusGetMessage(st), (int)code);
    g_failures++;
  }
  g_api->StatusRelease(st);
}
#define EXPECT_CODE(call, code) expect_code_at((call), (code), #call, __LINE__)

#define BATCH 1
#define CHANNELS 3
#define HW 224
#define INPUT_COUNT ((size_t)BATCH * CHANNELS * HW * HW)

static void fill_input(float* x, size_t n) {
  size_t i;
  for (i = 0; i < n; ++i) x[i] = (float)((double)((i * 7919u) % 1000u) / 500.0 - 1.0);
}

static uint64_t checksum(const void* data, size_t bytes) {
  const unsigned char* p = (const unsigned char*)data;
  uint64_t h = 1469598103934665603ull;
  size_t i;
  for (i = 0; i < bytes; ++i) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

static void test_api_base(void) {
  const OnyxApiBase* base = OnyxGetApiBase();
  CHECK(base != NULL, "OnyxGetApiBase returned NULL");
  CHECK(base->GetApiError(ONYX_API_VERSION) == NULL, "GetApiError for a supported version");
  CHECK(base->GetApi(ONYX_API_VERSION + 1000u) == NULL, "GetApi for a future version must be NULL");
  CHECK(base->GetApiError(ONYX_API_VERSION + 1000u) != NULL, "GetApiError must explain a NULL GetApi");
  CHECK(base->GetVersionString() != NULL && base->GetVersionString()[0] != '\0', "version string");
  CHECK(strcmp(base->GetVersionString(), g_api->GetVersionString()) == 0, "both version strings agree");
  CHECK(g_api->GetBuildInfoString() != NULL, "build info");
}

static void test_status(void) {
  OnyxStatus* st;
  CHECK(g_api->StatusCreate(ONYX_OK, "ignored") == NULL, "StatusCreate(OK) must be NULL");
  st = g_api->StatusCreate(ONYX_INVALID_ARGUMENT, "bad thing");
  CHECK(st != NULL, "StatusCreate");
  if (st != NULL) {
    CHECK(g_api->StatusGetCode(st) == ONYX_INVALID_ARGUMENT, "status code");
    CHECK(strcmp(g_api->StatusGetMessage(st), "bad thing") == 0, "status message");
    g_api->StatusRelease(st);
  }
  st = g_api->StatusCreate(ONYX_FAIL, NULL);
  if (st != NULL) {
    CHECK(strcmp(g_api->StatusGetMessage(st), "") == 0, "NULL message reads as \"\"");
    g_api->StatusRelease(st);
  }
  CHECK(g_api->StatusGetCode(NULL) == ONYX_OK, "code of NULL status");
  CHECK(strcmp(g_api->StatusGetMessage(NULL), "") == 0, "message of NULL status");
  g_api->StatusRelease(NULL);
}

/* API version 7: tensors made in (and copied out of) device memory. Host
 * memory works everywhere; CUDA works where a GPU answers and is refused
 * otherwise (INVALID_ARGUMENT). */
static void test_v7_device_values(void) {
  static const float vals[3] = {1.f, -2.f, 3.5f};
  static const int64_t three = 3;
  float back[3] = {0.f, 0.f, 0.f};
  OnyxMemoryInfo *cpu = NULL, *cuda = NULL;
  OnyxValue* v = NULL;
  size_t n = 0, i;
  int have_cuda = 0;
  const char* name = NULL;

  if (OK(g_api->GetAvailableProviderCount(&n)))
    for (i = 0; i < n; ++i)
      if (OK(g_api->GetAvailableProviderName(i, &name)) && strcmp(name, "CUDAExecutionProvider") == 0) have_cuda = 1;
  if (OK(g_api->MemoryInfoCreateCpu(ONYX_DEVICE_ALLOCATOR, ONYX_MEM_DEFAULT, &cpu))) {
    if (OK(g_api->ValueCreateTensorOnDevice(cpu, vals, sizeof(vals), &three, 1, ONYX_TYPE_FLOAT, &v))) {
      if (OK(g_api->ValueCopyTensorToHost(v, back, sizeof(back))))
        CHECK(back[1] == -2.f && back[2] == 3.5f, "host copy of a host tensor");
      EXPECT_CODE(g_api->ValueCopyTensorToHost(v, back, 4), ONYX_INVALID_ARGUMENT);
      g_api->ValueRelease(v);
      v = NULL;
    }
    EXPECT_CODE(g_api->ValueCreateTensorOnDevice(cpu, vals, 4, &three, 1, ONYX_TYPE_FLOAT, &v), ONYX_INVALID_ARGUMENT);
    g_api->MemoryInfoRelease(cpu);
  }
  if (OK(g_api->MemoryInfoCreate("Cuda", ONYX_ARENA_ALLOCATOR, 0, ONYX_MEM_DEFAULT, &cuda))) {
    if (!have_cuda) {
      EXPECT_CODE(g_api->ValueCreateTensorOnDevice(cuda, vals, sizeof(vals), &three, 1, ONYX_TYPE_FLOAT, &v),
                  ONYX_INVALID_ARGUMENT);
    } else if (OK(g_api->ValueCreateTensorOnDevice(cuda, vals, sizeof(vals), &three, 1, ONYX_TYPE_FLOAT, &v))) {
      back[0] = back[1] = back[2] = 0.f;
      if (OK(g_api->ValueCopyTensorToHost(v, back, sizeof(back))))
        CHECK(back[0] == 1.f && back[1] == -2.f && back[2] == 3.5f, "round trip through CUDA memory");
      g_api->ValueRelease(v);
    }
    g_api->MemoryInfoRelease(cuda);
  }
}

/* API version 6: sparse tensors, arena keys, memory info v2, LoRA adapters. */
static void test_v6_values(void) {
  static const float vals[2] = {1.f, 2.f};
  static const int64_t good_idx[2] = {1, 5}, bad_idx[2] = {5, 1}, far_idx[2] = {1, 99};
  static const int64_t two = 2, dense[2] = {3, 4};
  OnyxMemoryInfo* mem = NULL;
  OnyxValue *v = NULL, *idx = NULL, *sparse = NULL, *part = NULL;
  OnyxSparseFormat fmt = ONYX_SPARSE_UNDEFINED;
  OnyxArenaCfg* cfg = NULL;
  OnyxLoraAdapter* adapter = NULL;
  size_t n = 0;
  int vendor = -1, dmt = -1;
  const char* keys[2] = {"max_mem", "initial_growth_chunk_size_bytes"};
  const char* bad_keys[1] = {"no_such_key"};
  const int64_t key_values[2] = {0, 1024};
  const unsigned char junk[12] = {200, 0, 0, 0, 'T', 'O', 'R', 'T', 0, 0, 0, 0}; /* root beyond the end */

  if (!OK(g_api->MemoryInfoCreateCpu(ONYX_DEVICE_ALLOCATOR, ONYX_MEM_DEFAULT, &mem))) return;
  OK(g_api->ValueCreateTensorWithData(mem, (void*)vals, sizeof(vals), &two, 1, ONYX_TYPE_FLOAT, &v));
  OK(g_api->ValueCreateTensorWithData(mem, (void*)good_idx, sizeof(good_idx), &two, 1, ONYX_TYPE_INT64, &idx));
  if (v != NULL && idx != NULL &&
      OK(g_api->ValueCreateSparseTensor(ONYX_SPARSE_COO, dense, 2, v, (const OnyxValue* const*)&idx, 1, &sparse))) {
    if (OK(g_api->ValueGetSparseFormat(sparse, &fmt))) CHECK(fmt == ONYX_SPARSE_COO, "sparse format");
    if (OK(g_api->ValueGetElementCount(sparse, &n))) CHECK(n == 2, "a COO tensor holds values and indices");
    if (OK(g_api->ValueGetElement(sparse, 1, &part))) g_api->ValueRelease(part);
    g_api->ValueRelease(sparse);
  }
  g_api->ValueRelease(idx);
  idx = NULL;
  OK(g_api->ValueCreateTensorWithData(mem, (void*)bad_idx, sizeof(bad_idx), &two, 1, ONYX_TYPE_INT64, &idx));
  EXPECT_CODE(g_api->ValueCreateSparseTensor(ONYX_SPARSE_COO, dense, 2, v, (const OnyxValue* const*)&idx, 1, &sparse),
              ONYX_INVALID_ARGUMENT);
  g_api->ValueRelease(idx);
  idx = NULL;
  OK(g_api->ValueCreateTensorWithData(mem, (void*)far_idx, sizeof(far_idx), &two, 1, ONYX_TYPE_INT64, &idx));
  EXPECT_CODE(g_api->ValueCreateSparseTensor(ONYX_SPARSE_COO, dense, 2, v, (const OnyxValue* const*)&idx, 1, &sparse),
              ONYX_INVALID_ARGUMENT);
  EXPECT_CODE(g_api->ValueGetSparseFormat(v, &fmt), ONYX_INVALID_ARGUMENT);
  g_api->ValueRelease(idx);
  g_api->ValueRelease(v);
  g_api->MemoryInfoRelease(mem);

  if (OK(g_api->ArenaCfgCreateFromKeys(keys, key_values, 2, &cfg))) g_api->ArenaCfgRelease(cfg);
  EXPECT_CODE(g_api->ArenaCfgCreateFromKeys(bad_keys, key_values, 1, &cfg), ONYX_INVALID_ARGUMENT);

  if (OK(g_api->MemoryInfoCreateV2("Cpu", 0, 0, 0, 5, 64, ONYX_ARENA_ALLOCATOR, &mem))) {
    if (OK(g_api->MemoryInfoGetDeviceMemType(mem, &dmt))) CHECK(dmt == 5, "host-accessible memory");
    if (OK(g_api->MemoryInfoGetVendorId(mem, &vendor))) CHECK(vendor == 0, "CPU vendor id");
    g_api->MemoryInfoRelease(mem);
  }
  EXPECT_CODE(g_api->MemoryInfoCreateV2("Cpu", 0, 0, 0, 0, 3, ONYX_ARENA_ALLOCATOR, &mem), ONYX_INVALID_ARGUMENT);

  EXPECT_CODE(g_api->LoraAdapterCreateFromBytes(junk, sizeof(junk), &adapter), ONYX_INVALID_PROTOBUF);
  EXPECT_CODE(g_api->LoraAdapterCreateFromBytes(junk, 6, &adapter), ONYX_INVALID_PROTOBUF);
  EXPECT_CODE(g_api->LoraAdapterCreate("/nonexistent/x.onnx_adapter", &adapter), ONYX_NO_SUCHFILE);
}

static void test_providers(void) {
  size_t n = 0, i;
  const char* name = NULL;
  int has_cpu = 0;
  if (OK(g_api->GetAvailableProviderCount(&n))) {
    CHECK(n >= 1, "at least one available provider");
    for (i = 0; i < n; ++i) {
      if (OK(g_api->GetAvailableProviderName(i, &name)) && strcmp(name, "CPUExecutionProvider") == 0) has_cpu = 1;
    }
    CHECK(has_cpu, "CPUExecutionProvider is available");
    EXPECT_CODE(g_api->GetAvailableProviderName(n, &name), ONYX_INVALID_ARGUMENT);
  }
  if (OK(g_api->GetAllProviderCount(&n))) CHECK(n >= 2, "CPU and CUDA are known providers");
  EXPECT_CODE(g_api->GetAvailableProviderCount(NULL), ONYX_INVALID_ARGUMENT);
}

/* API v3: the CPU provider's operators, read from its registry. */
static void test_supported_operators(void) {
  size_t n = 0, i;
  const char *domain = NULL, *op = NULL;
  int since = 0, end = 0, has_loop = 0, has_conv = 0, sorted = 1;
  char prev[256] = "";
  if (OK(g_api->ProviderGetSupportedOperatorCount("CPUExecutionProvider", &n))) {
    CHECK(n > 50, "the CPU provider lists its kernels");
    for (i = 0; i < n; ++i) {
      char key[256];
      if (!OK(g_api->ProviderGetSupportedOperator("CPUExecutionProvider", i, &domain, &op, &since, &end))) break;
      CHECK(since >= 1 && end >= since, "opset range is ordered");
      if (strcmp(domain, "") == 0 && strcmp(op, "Loop") == 0) has_loop = 1;
      if (strcmp(domain, "") == 0 && strcmp(op, "Conv") == 0) has_conv = 1;
      snprintf(key, sizeof key, "%s\x01%s", domain, op);
      if (strcmp(prev, key) > 0) sorted = 0;
      snprintf(prev, sizeof prev, "%s", key);
    }
    CHECK(has_loop && has_conv, "Loop and Conv are listed");
    CHECK(sorted, "entries are ordered by domain and op");
    EXPECT_CODE(g_api->ProviderGetSupportedOperator("CPUExecutionProvider", n, &domain, &op, &since, &end),
                ONYX_INVALID_ARGUMENT);
  }
  EXPECT_CODE(g_api->ProviderGetSupportedOperatorCount("NoSuchExecutionProvider", &n), ONYX_INVALID_ARGUMENT);
  EXPECT_CODE(g_api->ProviderGetSupportedOperatorCount(NULL, &n), ONYX_INVALID_ARGUMENT);
  EXPECT_CODE(g_api->ProviderGetSupportedOperator("CPUExecutionProvider", 0, NULL, &op, &since, &end),
              ONYX_INVALID_ARGUMENT);
}

static OnyxSessionOptions* make_options(void) {
  OnyxSessionOptions* opts = NULL;
  OnyxSessionOptions* clone = NULL;
  const char* value = NULL;
  if (!OK(g_api->SessionOptionsCreate(&opts))) return NULL;
  OK(g_api->SessionOptionsSetIntraOpThreads(opts, 0));
  OK(g_api->SessionOptionsSetInterOpThreads(opts, 0));
  OK(g_api->SessionOptionsSetGraphOptimizationLevel(opts, ONYX_ENABLE_ALL));
  OK(g_api->SessionOptionsSetExecutionMode(opts, ONYX_EXECUTION_SEQUENTIAL));
  OK(g_api->SessionOptionsSetLogSeverity(opts, ONYX_LOG_WARNING));
  OK(g_api->SessionOptionsSetLogId(opts, "capi_test"));
  /* Sessions refuse keys neither onnxruntime nor the engine defines: a real one. */
  OK(g_api->SessionOptionsAddConfigEntry(opts, "session.intra_op.allow_spinning", "0"));
  if (OK(g_api->SessionOptionsGetConfigEntry(opts, "session.intra_op.allow_spinning", &value)))
    CHECK(value != NULL && strcmp(value, "0") == 0, "config entry round trip");
  value = "sentinel";
  if (OK(g_api->SessionOptionsGetConfigEntry(opts, "capi_test.absent", &value)))
    CHECK(value == NULL, "absent config entry reads as NULL");

  EXPECT_CODE(g_api->SessionOptionsSetIntraOpThreads(opts, -1), ONYX_INVALID_ARGUMENT);
  EXPECT_CODE(g_api->SessionOptionsSetIntraOpThreads(NULL, 1), ONYX_INVALID_ARGUMENT);
  EXPECT_CODE(g_api->SessionOptionsAppendProvider(opts, "NoSuchExecutionProvider", NULL, NULL, 0),
              ONYX_INVALID_ARGUMENT);
  EXPECT_CODE(g_api->SessionOptionsCreate(NULL), ONYX_INVALID_ARGUMENT);
  OK(g_api->SessionOptionsAppendProvider(opts, "CPUExecutionProvider", NULL, NULL, 0));

  if (OK(g_api->SessionOptionsClone(opts, &clone))) {
    value = NULL;
    if (OK(g_api->SessionOptionsGetConfigEntry(clone, "session.intra_op.allow_spinning", &value)))
      CHECK(value != NULL && strcmp(value, "0") == 0, "clone keeps config entries");
    g_api->SessionOptionsRelease(clone);
  }
  return opts;
}

static void test_load_errors(const OnyxEnv* env, const OnyxSessionOptions* opts) {
  OnyxSession* s = NULL;
  static const char garbage[] = "this is not an ONNX model";
  EXPECT_CODE(g_api->SessionCreate(env, "/nonexistent/dir/model.onnx", opts, &s), ONYX_NO_SUCHFILE);
  CHECK(s == NULL, "out left unchanged on failure");
  EXPECT_CODE(g_api->SessionCreateFromBytes(env, garbage, sizeof garbage, opts, &s), ONYX_INVALID_PROTOBUF);
  CHECK(s == NULL, "out left unchanged on failure");
  EXPECT_CODE(g_api->SessionCreate(env, NULL, opts, &s), ONYX_INVALID_ARGUMENT);
  EXPECT_CODE(g_api->SessionCreate(env, "/nonexistent/dir/model.onnx", opts, NULL), ONYX_INVALID_ARGUMENT);
  EXPECT_CODE(g_api->SessionCreateFromBytes(env, NULL, 10, opts, &s), ONYX_INVALID_ARGUMENT);
}

static void check_tensor_info(const OnyxTensorTypeAndShapeInfo* t, OnyxElementType type, size_t rank,
                              const int64_t* dims, const char* const* syms, const char* what) {
  OnyxElementType et = ONYX_TYPE_UNDEFINED;
  size_t r = 0, i;
  int has = 0;
  int64_t got[8];
  const char* names[8];
  int64_t count = 0;
  if (OK(g_api->TensorInfoGetElementType(t, &et))) CHECK(et == type, "%s: element type %d", what, (int)et);
  if (OK(g_api->TensorInfoHasShape(t, &has))) CHECK(has, "%s: has a shape", what);
  if (!OK(g_api->TensorInfoGetDimCount(t, &r))) return;
  CHECK(r == rank, "%s: rank %u, expected %u", what, (unsigned)r, (unsigned)rank);
  if (r != rank || r > 8) return;
  if (OK(g_api->TensorInfoGetDims(t, got, r)))
    for (i = 0; i < r; ++i)
      CHECK(got[i] == dims[i], "%s: dim %u is %lld, expected %lld", what, (unsigned)i, (long long)got[i],
            (long long)dims[i]);
  if (OK(g_api->TensorInfoGetSymbolicDims(t, names, r)))
    for (i = 0; i < r; ++i)
      CHECK(names[i] != NULL && strcmp(names[i], syms[i]) == 0, "%s: symbol %u is \"%s\", expected \"%s\"", what,
            (unsigned)i, names[i] ? names[i] : "(null)", syms[i]);
  if (OK(g_api->TensorInfoGetElementCount(t, &count)))
    CHECK(count == -1, "%s: element count with a symbolic dim must be -1", what);
}

static void test_inspect(OnyxSession* s) {
  size_t n = 0, i;
  const char* name = NULL;
  OnyxTypeInfo* ti = NULL;
  const OnyxTensorTypeAndShapeInfo* t = NULL;
  OnyxValueKind kind = ONYX_VALUE_UNKNOWN;
  const char* type_str = NULL;
  static const int64_t in_dims[4] = {-1, 3, 224, 224};
  static const char* const in_syms[4] = {"batch", "", "", ""};
  static const int64_t out_dims[2] = {-1, 1000};
  static const char* const out_syms[2] = {"batch", ""};
  OnyxModelMetadata* md = NULL;

  if (OK(g_api->SessionGetInputCount(s, &n))) CHECK(n == 1, "one input, got %u", (unsigned)n);
  if (OK(g_api->SessionGetInputName(s, 0, &name))) CHECK(strcmp(name, "input") == 0, "input name %s", name);
  EXPECT_CODE(g_api->SessionGetInputName(s, 1, &name), ONYX_INVALID_ARGUMENT);
  if (OK(g_api->SessionGetInputTypeInfo(s, 0, &ti))) {
    if (OK(g_api->TypeInfoGetKind(ti, &kind))) CHECK(kind == ONYX_VALUE_TENSOR, "input kind");
    if (OK(g_api->TypeInfoGetTypeString(ti, &type_str)))
      CHECK(strcmp(type_str, "tensor(float)") == 0, "input type string %s", type_str);
    if (OK(g_api->TypeInfoGetTensorInfo(ti, &t)) && t != NULL)
      check_tensor_info(t, ONYX_TYPE_FLOAT, 4, in_dims, in_syms, "input");
    CHECK(t != NULL, "input has tensor info");
    g_api->TypeInfoRelease(ti);
    ti = NULL;
  }
  if (OK(g_api->SessionGetOutputCount(s, &n))) CHECK(n >= 1, "at least one output");
  if (OK(g_api->SessionGetOutputName(s, 0, &name))) CHECK(name[0] != '\0', "output name");
  if (OK(g_api->SessionGetOutputTypeInfo(s, 0, &ti))) {
    t = NULL;
    if (OK(g_api->TypeInfoGetTensorInfo(ti, &t)) && t != NULL)
      check_tensor_info(t, ONYX_TYPE_FLOAT, 2, out_dims, out_syms, "output");
    g_api->TypeInfoRelease(ti);
    ti = NULL;
  }
  if (OK(g_api->SessionGetOverridableInitializerCount(s, &n))) {
    for (i = 0; i < n; ++i) OK(g_api->SessionGetOverridableInitializerName(s, i, &name));
  }
  if (OK(g_api->SessionGetProviderCount(s, &n))) {
    CHECK(n >= 1, "session has providers");
    if (n >= 1 && OK(g_api->SessionGetProviderName(s, n - 1, &name)))
      CHECK(strcmp(name, "CPUExecutionProvider") == 0, "CPU provider comes last, got %s", name);
  }

  if (OK(g_api->SessionGetModelMetadata(s, &md))) {
    const char* str = NULL;
    const char* key = NULL;
    const char* value = NULL;
    const char* looked = NULL;
    int64_t version = 0;
    OK(g_api->ModelMetadataGetProducerName(md, &str));
    CHECK(str != NULL, "producer name");
    OK(g_api->ModelMetadataGetGraphName(md, &str));
    CHECK(str != NULL && str[0] != '\0', "graph name");
    OK(g_api->ModelMetadataGetDomain(md, &str));
    OK(g_api->ModelMetadataGetDescription(md, &str));
    OK(g_api->ModelMetadataGetGraphDescription(md, &str));
    OK(g_api->ModelMetadataGetVersion(md, &version));
    if (OK(g_api->ModelMetadataGetCustomCount(md, &n))) {
      for (i = 0; i < n; ++i) {
        if (OK(g_api->ModelMetadataGetCustomKey(md, i, &key)) && OK(g_api->ModelMetadataGetCustomValue(md, i, &value)) &&
            OK(g_api->ModelMetadataLookupCustom(md, key, &looked)))
          CHECK(looked != NULL && strcmp(looked, value) == 0, "lookup of custom key %s", key);
      }
      EXPECT_CODE(g_api->ModelMetadataGetCustomKey(md, n, &key), ONYX_INVALID_ARGUMENT);
    }
    looked = "sentinel";
    if (OK(g_api->ModelMetadataLookupCustom(md, "capi_test.absent", &looked)))
      CHECK(looked == NULL, "absent custom key reads as NULL");
    g_api->ModelMetadataRelease(md);
  }

  EXPECT_CODE(g_api->SessionGetInputCount(NULL, &n), ONYX_INVALID_ARGUMENT);
  EXPECT_CODE(g_api->SessionGetInputCount(s, NULL), ONYX_INVALID_ARGUMENT);
  EXPECT_CODE(g_api->SessionGetModelMetadata(s, NULL), ONYX_INVALID_ARGUMENT);
}

/* Runs once on `input`; returns the first output (caller releases) or NULL. */
static OnyxValue* run_once(OnyxSession* s, const OnyxRunOptions* ro, const OnyxValue* input, int explicit_names) {
  const char* in_names[1] = {"input"};
  const OnyxValue* inputs[1];
  const char* out_name = NULL;
  const char* out_names[1];
  size_t n_out = 0;
  OnyxValue* outputs[8] = {NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL};
  size_t i;
  inputs[0] = input;
  if (!OK(g_api->SessionGetOutputCount(s, &n_out)) || n_out == 0 || n_out > 8) return NULL;
  if (explicit_names) {
    if (!OK(g_api->SessionGetOutputName(s, 0, &out_name))) return NULL;
    out_names[0] = out_name;
    if (!OK(g_api->SessionRun(s, ro, in_names, inputs, 1, out_names, 1, outputs))) return NULL;
    return outputs[0];
  }
  if (!OK(g_api->SessionRun(s, ro, in_names, inputs, 1, NULL, n_out, outputs))) return NULL;
  for (i = 1; i < n_out; ++i) g_api->ValueRelease(outputs[i]);
  return outputs[0];
}

/* Checks shape [BATCH, 1000], float, finite values, not all equal. */
static void check_output(OnyxValue* out, const char* what) {
  OnyxValueKind kind = ONYX_VALUE_UNKNOWN;
  OnyxTensorTypeAndShapeInfo* info = NULL;
  void* data = NULL;
  size_t rank = 0, i;
  int64_t dims[2] = {0, 0};
  OnyxElementType et = ONYX_TYPE_UNDEFINED;
  const float* y;
  int finite = 1;
  float lo, hi;
  if (OK(g_api->ValueGetKind(out, &kind))) CHECK(kind == ONYX_VALUE_TENSOR, "%s: kind", what);
  if (!OK(g_api->ValueGetTensorTypeAndShape(out, &info))) return;
  OK(g_api->TensorInfoGetElementType(info, &et));
  OK(g_api->TensorInfoGetDimCount(info, &rank));
  CHECK(et == ONYX_TYPE_FLOAT && rank == 2, "%s: float rank 2 (type %d, rank %u)", what, (int)et, (unsigned)rank);
  if (rank == 2 && OK(g_api->TensorInfoGetDims(info, dims, 2)))
    CHECK(dims[0] == BATCH && dims[1] == 1000, "%s: shape [%lld, %lld]", what, (long long)dims[0],
          (long long)dims[1]);
  g_api->TensorTypeAndShapeInfoRelease(info);
  if (!OK(g_api->ValueGetTensorData(out, &data)) || data == NULL) return;
  y = (const float*)data;
  lo = hi = y[0];
  for (i = 0; i < (size_t)BATCH * 1000; ++i) {
    if (!isfinite(y[i])) finite = 0;
    if (y[i] < lo) lo = y[i];
    if (y[i] > hi) hi = y[i];
  }
  CHECK(finite, "%s: all outputs finite", what);
  CHECK(hi > lo, "%s: outputs are not all equal", what);
}

static void test_value_errors_and_kinds(const OnyxMemoryInfo* mem, float* x) {
  static const int64_t shape[4] = {BATCH, CHANNELS, HW, HW};
  static const int64_t shape2[1] = {2};
  OnyxValue* v = NULL;
  OnyxValue* strings = NULL;
  const char* fill[2] = {"ab", "c"};
  const char* s = NULL;
  size_t len = 0;
  void* data = NULL;
  OnyxAllocator* alloc = NULL;
  void* p = NULL;

  EXPECT_CODE(g_api->ValueCreateTensorWithData(mem, x, INPUT_COUNT * sizeof(float) - 4, shape, 4, ONYX_TYPE_FLOAT, &v),
              ONYX_INVALID_ARGUMENT);
  EXPECT_CODE(g_api->ValueCreateTensorWithData(mem, x, INPUT_COUNT * sizeof(float), shape, 4, ONYX_TYPE_FLOAT, NULL),
              ONYX_INVALID_ARGUMENT);
  EXPECT_CODE(g_api->ValueCreateTensorWithData(mem, x, 16, shape2, 1, ONYX_TYPE_STRING, &v), ONYX_INVALID_ARGUMENT);
  CHECK(v == NULL, "out left unchanged on failure");

  if (OK(g_api->ValueCreateTensor(NULL, shape2, 1, ONYX_TYPE_FLOAT, &v))) {
    if (OK(g_api->ValueGetTensorData(v, &data)) && data != NULL) {
      ((float*)data)[0] = 1.5f;
      ((float*)data)[1] = -2.0f;
    }
    g_api->ValueRelease(v);
    v = NULL;
  }
  if (OK(g_api->ValueCreateTensor(NULL, shape2, 1, ONYX_TYPE_STRING, &strings))) {
    if (OK(g_api->StringTensorGetElement(strings, 0, &s, &len))) CHECK(len == 0, "new string tensor holds \"\"");
    EXPECT_CODE(g_api->StringTensorFill(strings, fill, NULL, 1), ONYX_INVALID_ARGUMENT);
    OK(g_api->StringTensorFill(strings, fill, NULL, 2));
    if (OK(g_api->StringTensorGetElement(strings, 1, &s, &len)))
      CHECK(len == 1 && memcmp(s, "c", 1) == 0, "string element 1");
    if (OK(g_api->StringTensorGetElement(strings, 0, &s, &len)))
      CHECK(len == 2 && memcmp(s, "ab", 2) == 0, "string element 0");
    EXPECT_CODE(g_api->StringTensorGetElement(strings, 2, &s, &len), ONYX_INVALID_ARGUMENT);
    g_api->ValueRelease(strings);
  }

  if (OK(g_api->GetDefaultAllocator(&alloc))) {
    if (OK(g_api->AllocatorAlloc(alloc, 100, &p))) {
      CHECK(((uintptr_t)p % 64u) == 0, "allocator returns 64-byte aligned memory");
      memset(p, 0, 100);
      OK(g_api->AllocatorFree(alloc, p));
    }
  }
  g_api->ValueRelease(NULL);
  g_api->TypeInfoRelease(NULL);
  g_api->SessionRelease(NULL);
  g_api->EnvRelease(NULL);
}

static int g_deleter_calls;
static void counting_free(void* context, void* data) {
  (void)context;
  g_deleter_calls++;
  free(data);
}

static void test_deleter(const OnyxMemoryInfo* mem) {
  static const int64_t shape[2] = {2, 3};
  OnyxValue* v = NULL;
  float* buf = (float*)malloc(6 * sizeof(float));
  g_deleter_calls = 0;
  if (buf == NULL) return;
  if (OK(g_api->ValueCreateTensorWithDeleter(mem, buf, 6 * sizeof(float), shape, 2, ONYX_TYPE_FLOAT, counting_free,
                                             NULL, &v))) {
    CHECK(g_deleter_calls == 0, "deleter not called before release");
    g_api->ValueRelease(v);
  }
  CHECK(g_deleter_calls == 1, "deleter called once on release (%d)", g_deleter_calls);
  /* On failure the library still takes the buffer: no leak under valgrind. */
  buf = (float*)malloc(6 * sizeof(float));
  if (buf == NULL) return;
  v = NULL;
  EXPECT_CODE(g_api->ValueCreateTensorWithDeleter(mem, buf, 5, shape, 2, ONYX_TYPE_FLOAT, counting_free, NULL, &v),
              ONYX_INVALID_ARGUMENT);
  CHECK(g_deleter_calls == 2, "deleter called when creation fails (%d)", g_deleter_calls);
}

static void test_run_errors(OnyxSession* s, const OnyxMemoryInfo* mem, float* x, const OnyxValue* good) {
  static const int64_t wrong_shape[4] = {BATCH, CHANNELS, HW / 2, HW * 2};
  static const int64_t wrong_rank[3] = {BATCH * CHANNELS, HW, HW};
  static const int64_t good_shape[4] = {BATCH, CHANNELS, HW, HW};
  const char* bad_name[1] = {"no_such_input"};
  const char* in_names[1] = {"input"};
  const char* bad_out[1] = {"no_such_output"};
  const OnyxValue* inputs[1];
  OnyxValue* outputs[1] = {NULL};
  OnyxValue* v = NULL;
  size_t n_out = 0;

  inputs[0] = good;
  OK(g_api->SessionGetOutputCount(s, &n_out));
  EXPECT_CODE(g_api->SessionRun(s, NULL, bad_name, inputs, 1, NULL, n_out, outputs), ONYX_INVALID_ARGUMENT);
  CHECK(outputs[0] == NULL, "no output slot written on failure");
  EXPECT_CODE(g_api->SessionRun(s, NULL, in_names, inputs, 0, NULL, n_out, outputs), ONYX_INVALID_ARGUMENT);
  EXPECT_CODE(g_api->SessionRun(s, NULL, in_names, inputs, 1, bad_out, 1, outputs), ONYX_INVALID_ARGUMENT);
  EXPECT_CODE(g_api->SessionRun(NULL, NULL, in_names, inputs, 1, NULL, n_out, outputs), ONYX_INVALID_ARGUMENT);
  EXPECT_CODE(g_api->SessionRun(s, NULL, in_names, inputs, 1, NULL, n_out, NULL), ONYX_INVALID_ARGUMENT);
  CHECK(outputs[0] == NULL, "no output slot written on failure");

  if (OK(g_api->ValueCreateTensorWithData(mem, x, INPUT_COUNT * sizeof(float), wrong_shape, 4, ONYX_TYPE_FLOAT,
                                          &v))) {
    inputs[0] = v;
    EXPECT_CODE(g_api->SessionRun(s, NULL, in_names, inputs, 1, NULL, n_out, outputs), ONYX_INVALID_ARGUMENT);
    g_api->ValueRelease(v);
    v = NULL;
  }
  if (OK(g_api->ValueCreateTensorWithData(mem, x, INPUT_COUNT * sizeof(float), wrong_rank, 3, ONYX_TYPE_FLOAT,
                                          &v))) {
    inputs[0] = v;
    EXPECT_CODE(g_api->SessionRun(s, NULL, in_names, inputs, 1, NULL, n_out, outputs), ONYX_INVALID_ARGUMENT);
    g_api->ValueRelease(v);
    v = NULL;
  }
  /* Same bytes, wrong element type. */
  if (OK(g_api->ValueCreateTensorWithData(mem, x, INPUT_COUNT * sizeof(float), good_shape, 4, ONYX_TYPE_INT32,
                                          &v))) {
    inputs[0] = v;
    EXPECT_CODE(g_api->SessionRun(s, NULL, in_names, inputs, 1, NULL, n_out, outputs), ONYX_INVALID_ARGUMENT);
    g_api->ValueRelease(v);
  }
  CHECK(outputs[0] == NULL, "no output slot written on failure");
}

static void test_terminate(OnyxSession* s, const OnyxValue* input) {
  OnyxRunOptions* ro = NULL;
  const char* in_names[1] = {"input"};
  const OnyxValue* inputs[1];
  OnyxValue* outputs[8] = {NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL};
  size_t n_out = 0;
  int flag = 0;
  inputs[0] = input;
  if (!OK(g_api->SessionGetOutputCount(s, &n_out)) || n_out > 8) return;
  if (!OK(g_api->RunOptionsCreate(&ro))) return;
  OK(g_api->RunOptionsSetTerminate(ro, 1));
  if (OK(g_api->RunOptionsGetTerminate(ro, &flag))) CHECK(flag != 0, "terminate flag set");
  EXPECT_CODE(g_api->SessionRun(s, ro, in_names, inputs, 1, NULL, n_out, outputs), ONYX_RUNTIME_EXCEPTION);
  CHECK(outputs[0] == NULL, "no output slot written on failure");
  g_api->RunOptionsRelease(ro);
}

static int write_file(const char* path, const void* data, size_t bytes) {
  FILE* f = fopen(path, "wb");
  size_t written;
  if (f == NULL) {
    fprintf(stderr, "cannot open %s for writing\n", path);
    return 0;
  }
  written = fwrite(data, 1, bytes, f);
  if (fclose(f) != 0 || written != bytes) {
    fprintf(stderr, "cannot write %s\n", path);
    return 0;
  }
  return 1;
}

static size_t output_bytes(OnyxValue* v, void** data) {
  OnyxTensorTypeAndShapeInfo* info = NULL;
  int64_t count = 0;
  *data = NULL;
  if (!OK(g_api->ValueGetTensorTypeAndShape(v, &info))) return 0;
  OK(g_api->TensorInfoGetElementCount(info, &count));
  g_api->TensorTypeAndShapeInfoRelease(info);
  if (!OK(g_api->ValueGetTensorData(v, data))) return 0;
  return count > 0 ? (size_t)count * sizeof(float) : 0;
}

/* ---- API version 2 -------------------------------------------------------- */

/* IO binding on the real model: a pre-allocated output written in place must
 * equal a plain run's output; errors name the fault and leave the binding usable. */
static void test_iobinding(OnyxSession* s, const OnyxMemoryInfo* mem, const OnyxValue* input, OnyxValue* reference) {
  OnyxIoBinding* b = NULL;
  OnyxValue* y = NULL;
  OnyxValue* got = NULL;
  OnyxValue* wrong = NULL;
  OnyxTensorTypeAndShapeInfo* info = NULL;
  const char* out_name = NULL;
  const char* bound_name = NULL;
  void* ref_data = NULL;
  void* got_data = NULL;
  float* buf = NULL;
  size_t rank = 0, n = 0, bytes;
  int64_t dims[8];
  int64_t count = 0;
  static const int64_t wrong_shape[2] = {1, 7};
  float wrong_buf[7];

  EXPECT_CODE(g_api->SessionCreateIoBinding(NULL, &b), ONYX_INVALID_ARGUMENT);
  if (!OK(g_api->SessionCreateIoBinding(s, &b))) return;
  if (!OK(g_api->SessionGetOutputName(s, 0, &out_name))) goto done;
  EXPECT_CODE(g_api->IoBindingBindInput(b, "no_such_input", input), ONYX_INVALID_ARGUMENT);
  EXPECT_CODE(g_api->IoBindingBindOutput(b, "no_such_output", input), ONYX_INVALID_ARGUMENT);
  EXPECT_CODE(g_api->IoBindingBindInput(b, "input", NULL), ONYX_INVALID_ARGUMENT);
  EXPECT_CODE(g_api->SessionRunWithBinding(s, NULL, b), ONYX_INVALID_ARGUMENT); /* no output bound */
  if (!OK(g_api->IoBindingBindInput(b, "input", input))) goto done;

  /* A buffer of the reference output's shape, bound as the output. */
  if (!OK(g_api->ValueGetTensorTypeAndShape(reference, &info))) goto done;
  OK(g_api->TensorInfoGetDimCount(info, &rank));
  OK(g_api->TensorInfoGetElementCount(info, &count));
  if (rank <= 8) OK(g_api->TensorInfoGetDims(info, dims, rank));
  g_api->TensorTypeAndShapeInfoRelease(info);
  bytes = (size_t)count * sizeof(float);
  buf = (float*)calloc((size_t)count, sizeof(float));
  if (buf == NULL || rank > 8) goto done;
  if (!OK(g_api->ValueCreateTensorWithData(mem, buf, bytes, dims, rank, ONYX_TYPE_FLOAT, &y))) goto done;

  /* Wrong shape first: the run fails, the buffer of the wrong size is untouched. */
  if (OK(g_api->ValueCreateTensorWithData(mem, wrong_buf, sizeof(wrong_buf), wrong_shape, 2, ONYX_TYPE_FLOAT, &wrong))) {
    OK(g_api->IoBindingBindOutput(b, out_name, wrong));
    g_api->ValueRelease(wrong); /* the binding holds its own reference */
    EXPECT_CODE(g_api->SessionRunWithBinding(s, NULL, b), ONYX_INVALID_ARGUMENT);
  }
  OK(g_api->IoBindingBindOutput(b, out_name, y)); /* replaces the wrong one */
  if (OK(g_api->IoBindingGetBoundOutputCount(b, &n))) CHECK(n == 1, "one bound output, got %zu", n);
  if (OK(g_api->IoBindingGetBoundOutputName(b, 0, &bound_name)))
    CHECK(strcmp(bound_name, out_name) == 0, "bound output name");
  if (OK(g_api->SessionRunWithBinding(s, NULL, b))) {
    output_bytes(reference, &ref_data);
    CHECK(ref_data != NULL && memcmp(buf, ref_data, bytes) == 0, "bound output equals a plain run's output");
    if (OK(g_api->IoBindingGetBoundOutputValue(b, 0, &got)) && OK(g_api->ValueGetTensorData(got, &got_data)))
      CHECK(got_data == (void*)buf, "the bound output is the caller's buffer (no copy)");
  }
  wrong = NULL;
  EXPECT_CODE(g_api->IoBindingGetBoundOutputValue(b, 5, &wrong), ONYX_INVALID_ARGUMENT);
  CHECK(wrong == NULL, "out left unchanged on failure");
  OK(g_api->IoBindingSynchronizeInputs(b));
  OK(g_api->IoBindingSynchronizeOutputs(b));
  /* Device memory this (CPU-only) session has no provider for: refused,
   * naming the output; the host side of a device ("Cuda" with a CPU mem
   * type) is host memory. */
  {
    OnyxMemoryInfo* cuda = NULL;
    OnyxStatus* st;
    if (OK(g_api->MemoryInfoCreate("Cuda", ONYX_ARENA_ALLOCATOR, 0, ONYX_MEM_DEFAULT, &cuda))) {
      st = g_api->IoBindingBindOutputToDevice(b, out_name, cuda);
      CHECK(st != NULL && g_api->StatusGetCode(st) == ONYX_INVALID_ARGUMENT &&
                strstr(g_api->StatusGetMessage(st), "cannot be allocated in Cuda memory") != NULL &&
                strstr(g_api->StatusGetMessage(st), out_name) != NULL,
            "BindOutputToDevice(Cuda) on a CPU session: %s", st ? g_api->StatusGetMessage(st) : "succeeded");
      g_api->StatusRelease(st);
      g_api->MemoryInfoRelease(cuda);
    }
    if (OK(g_api->MemoryInfoCreate("Cuda", ONYX_ARENA_ALLOCATOR, 0, ONYX_MEM_CPU_OUTPUT, &cuda))) {
      OK(g_api->IoBindingBindOutputToDevice(b, out_name, cuda));
      g_api->MemoryInfoRelease(cuda);
    }
  }
  g_api->IoBindingClearBoundInputs(b);
  EXPECT_CODE(g_api->SessionRunWithBinding(s, NULL, b), ONYX_INVALID_ARGUMENT); /* missing input */
  g_api->IoBindingClearBoundOutputs(b);
  if (OK(g_api->IoBindingGetBoundOutputCount(b, &n))) CHECK(n == 0, "cleared outputs");
done:
  g_api->ValueRelease(got);
  g_api->ValueRelease(y);
  g_api->IoBindingRelease(b);
  free(buf);
}

/* Sequences, maps and optionals built and taken apart through the C API. */
static void test_non_tensor_values(const OnyxMemoryInfo* mem) {
  float a[2] = {1.f, 2.f};
  int64_t keys[2] = {10, 20};
  static const int64_t shape[1] = {2};
  OnyxValue* ta = NULL;
  OnyxValue* tk = NULL;
  OnyxValue* seq = NULL;
  OnyxValue* map = NULL;
  OnyxValue* opt = NULL;
  OnyxValue* empty = NULL;
  OnyxValue* item = NULL;
  OnyxTypeInfo* ti = NULL;
  const char* type = NULL;
  const OnyxValue* items[2];
  size_t n = 0;
  OnyxValueKind kind = ONYX_VALUE_UNKNOWN;

  if (!OK(g_api->ValueCreateTensorWithData(mem, a, sizeof(a), shape, 1, ONYX_TYPE_FLOAT, &ta))) return;
  if (!OK(g_api->ValueCreateTensorWithData(mem, keys, sizeof(keys), shape, 1, ONYX_TYPE_INT64, &tk))) goto done;
  items[0] = ta;
  items[1] = ta;
  if (OK(g_api->ValueCreateSequence(items, 2, &seq))) {
    if (OK(g_api->ValueGetKind(seq, &kind))) CHECK(kind == ONYX_VALUE_SEQUENCE, "sequence kind");
    if (OK(g_api->ValueGetElementCount(seq, &n))) CHECK(n == 2, "sequence length");
    if (OK(g_api->ValueGetTypeInfo(seq, &ti)) && OK(g_api->TypeInfoGetTypeString(ti, &type)))
      CHECK(strcmp(type, "seq(tensor(float))") == 0, "sequence type %s", type);
    g_api->TypeInfoRelease(ti);
    ti = NULL;
    EXPECT_CODE(g_api->ValueGetElement(seq, 2, &item), ONYX_INVALID_ARGUMENT);
    if (OK(g_api->ValueGetElement(seq, 1, &item))) {
      void* d = NULL;
      if (OK(g_api->ValueGetTensorData(item, &d))) CHECK(d == (void*)a, "sequence items share their tensor");
      g_api->ValueRelease(item);
      item = NULL;
    }
  }
  items[1] = tk;
  EXPECT_CODE(g_api->ValueCreateSequence(items, 2, &item), ONYX_INVALID_ARGUMENT); /* mixed element types */
  EXPECT_CODE(g_api->ValueCreateSequence(NULL, 1, &item), ONYX_INVALID_ARGUMENT);
  EXPECT_CODE(g_api->ValueGetElementCount(ta, &n), ONYX_INVALID_ARGUMENT); /* a tensor has no elements */
  if (OK(g_api->ValueCreateMap(tk, ta, &map))) {
    if (OK(g_api->ValueGetTypeInfo(map, &ti)) && OK(g_api->TypeInfoGetTypeString(ti, &type)))
      CHECK(strcmp(type, "map(int64,tensor(float))") == 0, "map type %s", type);
    g_api->TypeInfoRelease(ti);
    if (OK(g_api->ValueGetElementCount(map, &n))) CHECK(n == 2, "a map has keys and values");
  }
  EXPECT_CODE(g_api->ValueCreateMap(ta, ta, &item), ONYX_INVALID_ARGUMENT); /* float keys */
  if (OK(g_api->ValueCreateOptional(NULL, &empty)) && OK(g_api->ValueGetElementCount(empty, &n)))
    CHECK(n == 0, "empty optional");
  if (OK(g_api->ValueCreateOptional(ta, &opt)) && OK(g_api->ValueGetElementCount(opt, &n)))
    CHECK(n == 1, "optional with a value");
done:
  g_api->ValueRelease(opt);
  g_api->ValueRelease(empty);
  g_api->ValueRelease(map);
  g_api->ValueRelease(seq);
  g_api->ValueRelease(tk);
  g_api->ValueRelease(ta);
}

static void test_v2_options_and_settings(const OnyxMemoryInfo* mem) {
  OnyxSessionOptions* o = NULL;
  OnyxRunOptions* ro = NULL;
  OnyxArenaCfg* cfg = NULL;
  OnyxEnv* env = NULL;
  OnyxValue* w = NULL;
  OnyxMemoryInfo* cuda = NULL;
  float data[3] = {1.f, 2.f, 3.f};
  static const int64_t shape[1] = {3};
  int on = -1;

  if (!OK(g_api->SessionOptionsCreate(&o))) return;
  OK(g_api->SessionOptionsSetOptimizedModelFilePath(o, ""));
  OK(g_api->SessionOptionsAddFreeDimensionOverride(o, "DATA_BATCH", 1));
  OK(g_api->SessionOptionsAddFreeDimensionOverrideByName(o, "batch", 1));
  EXPECT_CODE(g_api->SessionOptionsAddFreeDimensionOverrideByName(o, "batch", -1), ONYX_INVALID_ARGUMENT);
  EXPECT_CODE(g_api->SessionOptionsAddFreeDimensionOverrideByName(o, "", 1), ONYX_INVALID_ARGUMENT);
  OK(g_api->SessionOptionsSetMemPattern(o, 0));
  OK(g_api->SessionOptionsSetMemReuse(o, 1));
  OK(g_api->SessionOptionsSetCpuMemArena(o, 0));
  OK(g_api->SessionOptionsSetDeterministicCompute(o, 1));
  OK(g_api->SessionOptionsSetExecutionOrder(o, ONYX_EXECUTION_ORDER_PRIORITY_BASED));
  EXPECT_CODE(g_api->SessionOptionsSetExecutionOrder(o, (OnyxExecutionOrder)7), ONYX_INVALID_ARGUMENT);
  OK(g_api->SessionOptionsSetLogVerbosity(o, 1));
  EXPECT_CODE(g_api->SessionOptionsSetLogVerbosity(o, -1), ONYX_INVALID_ARGUMENT);
  if (OK(g_api->ValueCreateTensorWithData(mem, data, sizeof(data), shape, 1, ONYX_TYPE_FLOAT, &w))) {
    OK(g_api->SessionOptionsAddInitializer(o, "W", w));
    g_api->ValueRelease(w); /* the options keep a reference */
  }
  EXPECT_CODE(g_api->SessionOptionsAddInitializer(o, "W", NULL), ONYX_INVALID_ARGUMENT);
  if (OK(g_api->RunOptionsCreate(&ro))) {
    OK(g_api->RunOptionsSetLogVerbosity(ro, 2));
    g_api->RunOptionsRelease(ro);
  }
  g_api->SessionOptionsRelease(o);

  OK(g_api->SetGlobalSeed(42));
  OK(g_api->SetDefaultLogVerbosity(0));
  EXPECT_CODE(g_api->SetDefaultLogSeverity(9), ONYX_INVALID_ARGUMENT);
  OK(g_api->SetDefaultLogSeverity(ONYX_LOG_WARNING));
  OK(g_api->SetTelemetryEnabled(1));
  if (OK(g_api->GetTelemetryEnabled(&on))) CHECK(on == 1, "telemetry setting recorded");
  OK(g_api->SetTelemetryEnabled(0));

  EXPECT_CODE(g_api->ArenaCfgCreate(0, 5, -1, -1, &cfg), ONYX_INVALID_ARGUMENT);
  if (OK(g_api->ArenaCfgCreate(1u << 20, -1, -1, -1, &cfg)) && OK(g_api->EnvCreate(ONYX_LOG_WARNING, "v2", &env))) {
    OK(g_api->EnvCreateAndRegisterAllocator(env, mem, cfg));
    OK(g_api->EnvCreateAndRegisterAllocator(env, mem, NULL)); /* replaces */
    if (OK(g_api->MemoryInfoCreate("Cuda", ONYX_ARENA_ALLOCATOR, 0, ONYX_MEM_DEFAULT, &cuda))) {
      EXPECT_CODE(g_api->EnvCreateAndRegisterAllocator(env, cuda, cfg), ONYX_INVALID_ARGUMENT);
      g_api->MemoryInfoRelease(cuda);
    }
    OK(g_api->EnvUnregisterAllocator(env, mem));
    EXPECT_CODE(g_api->EnvUnregisterAllocator(env, mem), ONYX_INVALID_ARGUMENT);
  }
  g_api->EnvRelease(env);
  g_api->ArenaCfgRelease(cfg);
}

int main(int argc, char** argv) {
  OnyxEnv* env = NULL;
  OnyxSessionOptions* opts = NULL;
  OnyxSession* session = NULL;
  OnyxRunOptions* ro = NULL;
  OnyxMemoryInfo* mem = NULL;
  OnyxValue* input = NULL;
  OnyxValue* out1 = NULL;
  OnyxValue* out2 = NULL;
  float* x = NULL;
  static const int64_t shape[4] = {BATCH, CHANNELS, HW, HW};
  uint64_t before;
  const char* tag = NULL;
  const char* mem_name = NULL;
  void* data = NULL;

  if (argc < 2) {
    fprintf(stderr, "usage: %s MODEL.onnx [OUTPUT.bin]\n", argv[0]);
    return 2;
  }
  g_api = OnyxGetApiBase()->GetApi(ONYX_API_VERSION);
  if (g_api == NULL) {
    fprintf(stderr, "GetApi failed: %s\n", OnyxGetApiBase()->GetApiError(ONYX_API_VERSION));
    return 1;
  }
  test_api_base();
  test_status();
  test_providers();
  test_supported_operators();
  test_v6_values();
  test_v7_device_values();

  EXPECT_CODE(g_api->EnvCreate(ONYX_LOG_WARNING, "capi_test", NULL), ONYX_INVALID_ARGUMENT);
  if (!OK(g_api->EnvCreate(ONYX_LOG_WARNING, "capi_test", &env))) return 1;
  opts = make_options();
  test_load_errors(env, opts);
  if (!OK(g_api->SessionCreate(env, argv[1], opts, &session))) {
    g_api->SessionOptionsRelease(opts);
    g_api->EnvRelease(env);
    return 1;
  }
  /* Sessions hold their own reference: the env and options may go first. */
  g_api->SessionOptionsRelease(opts);
  g_api->EnvRelease(env);

  test_inspect(session);

  x = (float*)malloc(INPUT_COUNT * sizeof(float));
  if (x == NULL) return 1;
  fill_input(x, INPUT_COUNT);
  before = checksum(x, INPUT_COUNT * sizeof(float));
  if (OK(g_api->MemoryInfoCreateCpu(ONYX_DEVICE_ALLOCATOR, ONYX_MEM_DEFAULT, &mem))) {
    if (OK(g_api->MemoryInfoGetName(mem, &mem_name))) CHECK(strcmp(mem_name, "Cpu") == 0, "memory name %s", mem_name);
  }
  if (OK(g_api->ValueCreateTensorWithData(mem, x, INPUT_COUNT * sizeof(float), shape, 4, ONYX_TYPE_FLOAT, &input))) {
    if (OK(g_api->ValueGetTensorData(input, &data))) CHECK(data == (void*)x, "input wraps the caller's buffer");
  }
  if (OK(g_api->RunOptionsCreate(&ro))) {
    OK(g_api->RunOptionsSetTag(ro, "capi_test run"));
    if (OK(g_api->RunOptionsGetTag(ro, &tag))) CHECK(strcmp(tag, "capi_test run") == 0, "run tag round trip");
    OK(g_api->RunOptionsSetLogSeverity(ro, ONYX_LOG_WARNING));
  }

  if (input != NULL) {
    out1 = run_once(session, ro, input, 0);
    CHECK(out1 != NULL, "first run");
    if (out1 != NULL) check_output(out1, "first run");
    CHECK(checksum(x, INPUT_COUNT * sizeof(float)) == before, "run must not write its input");

    test_run_errors(session, mem, x, input);
    test_terminate(session, input);
    if (out1 != NULL) test_iobinding(session, mem, input, out1);

    /* The session is still usable after every error, and runs are deterministic. */
    out2 = run_once(session, NULL, input, 1);
    CHECK(out2 != NULL, "run after errors");
    if (out1 != NULL && out2 != NULL) {
      void* d1 = NULL;
      void* d2 = NULL;
      size_t b1 = output_bytes(out1, &d1), b2 = output_bytes(out2, &d2);
      CHECK(b1 == b2 && b1 > 0 && d1 != d2 && memcmp(d1, d2, b1) == 0, "repeated runs give identical bytes");
      if (argc > 2 && b1 > 0 && !write_file(argv[2], d1, b1)) g_failures++;
    }
  }
  test_value_errors_and_kinds(mem, x);
  test_deleter(mem);
  test_non_tensor_values(mem);
  test_v2_options_and_settings(mem);

  g_api->ValueRelease(out1);
  g_api->ValueRelease(out2);
  g_api->ValueRelease(input);
  g_api->RunOptionsRelease(ro);
  g_api->MemoryInfoRelease(mem);
  g_api->SessionRelease(session);
  free(x);

  if (g_failures != 0) {
    fprintf(stderr, "capi_test: %d check(s) failed\n", g_failures);
    return 1;
  }
  printf("capi_test: all checks passed\n");
  return 0;
}

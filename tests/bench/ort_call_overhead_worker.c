/* onnxruntime's side of bench_call_overhead.py's C columns: times Run through
 * onnxruntime's C API, doing per call exactly what call_overhead_worker.c does
 * through ours, so "Onyx C / ORT C" compares like with like.
 *
 *   ort_call_overhead_worker LIBONNXRUNTIME.so EXPECTED_VERSION THREADS NAME=MODEL.onnx ...
 *
 * The onnxruntime wheel ships the shared library but no C header, and nothing
 * may be downloaded, so this file declares the few things it uses itself: the
 * OrtApiBase entry point (GetApi, GetVersionString) and the OrtApi function
 * pointers it calls, by their slot in onnxruntime's OrtApi table (struct OrtApi
 * in onnxruntime's include/onnxruntime/core/session/onnxruntime_c_api.h). All
 * of them are in the part onnxruntime froze at API version 1, slots 0 to 101
 * (the table is append-only), so the slots hold for every later library. The library is dlopen'ed from the
 * path given; before any session is made the slots are checked at run time
 * (version string, status create/code/message round trip, the CPU memory
 * info's name/id/types), then every model's input/output counts and names are
 * printed ("model ...") and its first outputs ("output ...") so the benchmark
 * checks them against the model and onnx's reference evaluator; a mismatch
 * stops the worker (or the benchmark) with a message.
 *
 * Every model's inputs are float tensors [1, 16] (what the benchmark builds)
 * holding the same values as call_overhead_worker.c's. Prints "ready" once the
 * sessions exist, then serves requests on stdin, one line "NAME REPEAT" each,
 * answering one line of REPEAT per-call times in nanoseconds (the loop is
 * call_overhead_serve.h's, shared with call_overhead_worker.c). Each timed
 * call: create the input values over the worker's own buffers, Run, release
 * the outputs and the input values. */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "call_overhead_serve.h"

#define MAX_MODELS CALL_OVERHEAD_MAX_MODELS
#define MAX_IO CALL_OVERHEAD_MAX_IO

/* Opaque onnxruntime objects: only pointers to them are handled. */
typedef struct OrtStatusTag OrtStatus;
typedef struct OrtEnvTag OrtEnv;
typedef struct OrtSessionOptionsTag OrtSessionOptions;
typedef struct OrtSessionTag OrtSession;
typedef struct OrtMemoryInfoTag OrtMemoryInfo;
typedef struct OrtValueTag OrtValue;
typedef struct OrtAllocatorTag OrtAllocator;
typedef struct OrtTensorTypeAndShapeInfoTag OrtTensorTypeAndShapeInfo;

/* Enum values the calls below pass or check (onnxruntime's numbering). */
enum {
  kErrInvalidArgument = 2, /* OrtErrorCode ORT_INVALID_ARGUMENT */
  kLogWarning = 2,         /* OrtLoggingLevel ORT_LOGGING_LEVEL_WARNING */
  kDeviceAllocator = 0,    /* OrtAllocatorType OrtDeviceAllocator */
  kArenaAllocator = 1,     /* OrtAllocatorType OrtArenaAllocator */
  kMemTypeDefault = 0,     /* OrtMemType OrtMemTypeDefault */
  kMemTypeCpuOutput = -1,  /* OrtMemType OrtMemTypeCPUOutput */
  kElemFloat = 1           /* ONNXTensorElementDataType FLOAT */
};

/* The entry point: the library's exported OrtGetApiBase() returns this. */
typedef struct {
  const void* (*GetApi)(uint32_t version);
  const char* (*GetVersionString)(void);
} OrtApiBaseDecl;

/* Slots of OrtApi used here, numbered from its first function pointer. */
enum {
  kCreateStatus = 0,
  kGetErrorCode = 1,
  kGetErrorMessage = 2,
  kCreateEnv = 3,
  kCreateSession = 7,
  kRun = 9,
  kCreateSessionOptions = 10,
  kSetIntraOpNumThreads = 24,
  kSetInterOpNumThreads = 25,
  kSessionGetInputCount = 30,
  kSessionGetOutputCount = 31,
  kSessionGetInputName = 36,
  kSessionGetOutputName = 37,
  kCreateTensorWithDataAsOrtValue = 49,
  kIsTensor = 50,
  kGetTensorMutableData = 51,
  kGetDimensionsCount = 61,
  kGetDimensions = 62,
  kGetTensorShapeElementCount = 64,
  kGetTensorTypeAndShape = 65,
  kCreateCpuMemoryInfo = 69,
  kMemoryInfoGetName = 71,
  kMemoryInfoGetId = 72,
  kMemoryInfoGetMemType = 73,
  kMemoryInfoGetType = 74,
  kAllocatorFree = 76,
  kGetAllocatorWithDefaultOptions = 78,
  kReleaseEnv = 92,
  kReleaseStatus = 93,
  kReleaseMemoryInfo = 94,
  kReleaseSession = 95,
  kReleaseValue = 96,
  kReleaseTensorTypeAndShapeInfo = 99,
  kReleaseSessionOptions = 100,
  kLastSlotUsed = kReleaseSessionOptions
};

/* The same functions, typed; filled from the table by LoadApi(). */
static struct {
  OrtStatus* (*CreateStatus)(int code, const char* msg);
  int (*GetErrorCode)(const OrtStatus* status);
  const char* (*GetErrorMessage)(const OrtStatus* status);
  OrtStatus* (*CreateEnv)(int log_level, const char* logid, OrtEnv** out);
  OrtStatus* (*CreateSession)(const OrtEnv* env, const char* path, const OrtSessionOptions* so, OrtSession** out);
  OrtStatus* (*Run)(OrtSession* sess, const void* run_options, const char* const* in_names,
                    const OrtValue* const* inputs, size_t n_in, const char* const* out_names, size_t n_out,
                    OrtValue** outputs);
  OrtStatus* (*CreateSessionOptions)(OrtSessionOptions** out);
  OrtStatus* (*SetIntraOpNumThreads)(OrtSessionOptions* so, int n);
  OrtStatus* (*SetInterOpNumThreads)(OrtSessionOptions* so, int n);
  OrtStatus* (*SessionGetInputCount)(const OrtSession* sess, size_t* out);
  OrtStatus* (*SessionGetOutputCount)(const OrtSession* sess, size_t* out);
  OrtStatus* (*SessionGetInputName)(const OrtSession* sess, size_t i, OrtAllocator* alloc, char** out);
  OrtStatus* (*SessionGetOutputName)(const OrtSession* sess, size_t i, OrtAllocator* alloc, char** out);
  OrtStatus* (*CreateTensorWithDataAsOrtValue)(const OrtMemoryInfo* info, void* data, size_t data_len,
                                               const int64_t* shape, size_t shape_len, int elem_type,
                                               OrtValue** out);
  OrtStatus* (*IsTensor)(const OrtValue* value, int* out);
  OrtStatus* (*GetTensorMutableData)(OrtValue* value, void** out);
  OrtStatus* (*GetDimensionsCount)(const OrtTensorTypeAndShapeInfo* info, size_t* out);
  OrtStatus* (*GetDimensions)(const OrtTensorTypeAndShapeInfo* info, int64_t* dims, size_t n);
  OrtStatus* (*GetTensorShapeElementCount)(const OrtTensorTypeAndShapeInfo* info, size_t* out);
  OrtStatus* (*GetTensorTypeAndShape)(const OrtValue* value, OrtTensorTypeAndShapeInfo** out);
  OrtStatus* (*CreateCpuMemoryInfo)(int alloc_type, int mem_type, OrtMemoryInfo** out);
  OrtStatus* (*MemoryInfoGetName)(const OrtMemoryInfo* info, const char** out);
  OrtStatus* (*MemoryInfoGetId)(const OrtMemoryInfo* info, int* out);
  OrtStatus* (*MemoryInfoGetMemType)(const OrtMemoryInfo* info, int* out);
  OrtStatus* (*MemoryInfoGetType)(const OrtMemoryInfo* info, int* out);
  OrtStatus* (*AllocatorFree)(OrtAllocator* alloc, void* p);
  OrtStatus* (*GetAllocatorWithDefaultOptions)(OrtAllocator** out);
  void (*ReleaseEnv)(OrtEnv*);
  void (*ReleaseStatus)(OrtStatus*);
  void (*ReleaseMemoryInfo)(OrtMemoryInfo*);
  void (*ReleaseSession)(OrtSession*);
  void (*ReleaseValue)(OrtValue*);
  void (*ReleaseTensorTypeAndShapeInfo)(OrtTensorTypeAndShapeInfo*);
  void (*ReleaseSessionOptions)(OrtSessionOptions*);
} ort;

static void Fail(const char* what, const char* detail) {
  fprintf(stderr, "ort_call_overhead_worker: %s: %s\n", what, detail);
  exit(1);
}

static void Check(OrtStatus* st, const char* what) {
  if (st) {
    fprintf(stderr, "ort_call_overhead_worker: %s failed (code %d): %s\n", what, ort.GetErrorCode(st),
            ort.GetErrorMessage(st));
    ort.ReleaseStatus(st);
    exit(1);
  }
}

/* Copies table slot k<name> into the typed pointer ort.<name>. The table holds
 * function pointers as data pointers, as POSIX dlsym already requires. */
#define LOAD(name) memcpy(&ort.name, &table[k##name], sizeof(ort.name))

static void LoadApi(const char* lib_path, const char* expected_version) {
  void* lib = dlopen(lib_path, RTLD_NOW | RTLD_LOCAL);
  const OrtApiBaseDecl* (*get_base)(void);
  const OrtApiBaseDecl* base;
  void* const* table;
  void* sym;
  OrtStatus* st;
  OrtMemoryInfo* info;
  const char* text;
  int value;
  size_t i;
  if (!lib) Fail("dlopen", dlerror());
  sym = dlsym(lib, "OrtGetApiBase");
  if (!sym) Fail("dlsym OrtGetApiBase", dlerror());
  memcpy(&get_base, &sym, sizeof(get_base));
  base = get_base();
  if (!base || !base->GetVersionString || !base->GetApi) Fail("OrtGetApiBase", "returned no entry points");
  text = base->GetVersionString();
  if (!text || strcmp(text, expected_version) != 0) {
    fprintf(stderr, "ort_call_overhead_worker: library version %s, expected %s\n", text ? text : "(null)",
            expected_version);
    exit(1);
  }
  /* Every slot used is in the version-1 part; any later version serves it too. */
  table = (void* const*)base->GetApi(1);
  if (!table) Fail("GetApi(1)", "returned NULL");
  for (i = 0; i <= kLastSlotUsed; ++i)
    if (!table[i]) Fail("OrtApi table", "a slot up to ReleaseSessionOptions is NULL");
  LOAD(CreateStatus); LOAD(GetErrorCode); LOAD(GetErrorMessage); LOAD(CreateEnv); LOAD(CreateSession); LOAD(Run);
  LOAD(CreateSessionOptions); LOAD(SetIntraOpNumThreads); LOAD(SetInterOpNumThreads); LOAD(SessionGetInputCount);
  LOAD(SessionGetOutputCount); LOAD(SessionGetInputName); LOAD(SessionGetOutputName);
  LOAD(CreateTensorWithDataAsOrtValue); LOAD(IsTensor); LOAD(GetTensorMutableData); LOAD(GetDimensionsCount);
  LOAD(GetDimensions); LOAD(GetTensorShapeElementCount); LOAD(GetTensorTypeAndShape); LOAD(CreateCpuMemoryInfo);
  LOAD(MemoryInfoGetName); LOAD(MemoryInfoGetId); LOAD(MemoryInfoGetMemType); LOAD(MemoryInfoGetType);
  LOAD(AllocatorFree); LOAD(GetAllocatorWithDefaultOptions); LOAD(ReleaseEnv); LOAD(ReleaseStatus);
  LOAD(ReleaseMemoryInfo); LOAD(ReleaseSession); LOAD(ReleaseValue); LOAD(ReleaseTensorTypeAndShapeInfo);
  LOAD(ReleaseSessionOptions);

  /* Slots 0-2 and 93: a status made here must come back with its code and text. */
  st = ort.CreateStatus(kErrInvalidArgument, "slot probe 42");
  if (!st) Fail("slot check", "CreateStatus returned NULL");
  if (ort.GetErrorCode(st) != kErrInvalidArgument) Fail("slot check", "GetErrorCode does not round-trip");
  text = ort.GetErrorMessage(st);
  /* A small integer here is another slot's return value: never read through it. */
  if ((uintptr_t)text < 4096 || strcmp(text, "slot probe 42") != 0)
    Fail("slot check", "GetErrorMessage does not round-trip");
  ort.ReleaseStatus(st);
  /* Slots 69, 71-74, 94: a CPU memory info reads back as made; id 0, mem type -1
   * and allocator type 1 differ, so two getters swapped cannot both pass. */
  Check(ort.CreateCpuMemoryInfo(kArenaAllocator, kMemTypeCpuOutput, &info), "CreateCpuMemoryInfo");
  Check(ort.MemoryInfoGetName(info, &text), "MemoryInfoGetName");
  if (!text || strcmp(text, "Cpu") != 0) Fail("slot check", "MemoryInfoGetName is not \"Cpu\"");
  Check(ort.MemoryInfoGetId(info, &value), "MemoryInfoGetId");
  if (value != 0) Fail("slot check", "MemoryInfoGetId is not 0");
  Check(ort.MemoryInfoGetMemType(info, &value), "MemoryInfoGetMemType");
  if (value != kMemTypeCpuOutput) Fail("slot check", "MemoryInfoGetMemType is not CPU output");
  Check(ort.MemoryInfoGetType(info, &value), "MemoryInfoGetType");
  if (value != kArenaAllocator) Fail("slot check", "MemoryInfoGetType is not the arena allocator");
  ort.ReleaseMemoryInfo(info);
  /* Slots 3, 7, 10, 92, 100: a model path that does not exist is refused, naming it. */
  {
    OrtSessionOptions* so;
    OrtEnv* env;
    OrtSession* sess = NULL;
    Check(ort.CreateEnv(kLogWarning, "probe", &env), "CreateEnv");
    Check(ort.CreateSessionOptions(&so), "CreateSessionOptions");
    st = ort.CreateSession(env, "/nonexistent/ort_call_overhead_probe.onnx", so, &sess);
    if (!st || sess) Fail("slot check", "CreateSession accepted a model path that does not exist");
    text = ort.GetErrorMessage(st);
    if (!text || !strstr(text, "ort_call_overhead_probe")) Fail("slot check", "CreateSession's error names no path");
    ort.ReleaseStatus(st);
    ort.ReleaseSessionOptions(so);
    ort.ReleaseEnv(env);
  }
}

typedef struct {
  char name[64];
  OrtSession* session;
  size_t n_in, n_out;
  char* in_names[MAX_IO];
  char* out_names[MAX_IO];
  float data[MAX_IO][16];
} Model;

static Model models[MAX_MODELS];
static OrtMemoryInfo* cpu;

/* Prints output i of model m, one line: "output MODEL INDEX DIMS d0 .. VALUES v0 ..". */
static void PrintOutput(const Model* m, size_t i, OrtValue* output) {
  OrtTensorTypeAndShapeInfo* shape;
  int64_t dims[8];
  size_t rank, count, j;
  int is_tensor = 0;
  float* values;
  Check(ort.IsTensor(output, &is_tensor), "IsTensor");
  if (!is_tensor) Fail("output check", "an output is not a tensor");
  Check(ort.GetTensorTypeAndShape(output, &shape), "GetTensorTypeAndShape");
  Check(ort.GetDimensionsCount(shape, &rank), "GetDimensionsCount");
  if (rank > 8) Fail("output check", "output rank above 8");
  Check(ort.GetDimensions(shape, dims, rank), "GetDimensions");
  Check(ort.GetTensorShapeElementCount(shape, &count), "GetTensorShapeElementCount");
  ort.ReleaseTensorTypeAndShapeInfo(shape);
  Check(ort.GetTensorMutableData(output, (void**)&values), "GetTensorMutableData");
  printf("output %s %zu DIMS", m->name, i);
  for (j = 0; j < rank; ++j) printf(" %lld", (long long)dims[j]);
  printf(" VALUES");
  for (j = 0; j < count; ++j) printf(" %.9g", values[j]);
  printf("\n");
}

/* One call as the benchmark times it; with print non-NULL (once per model,
 * untimed) its outputs are printed before they are released. */
static void RunOnce(int model, void* print) {
  static const int64_t shape[2] = {1, 16};
  Model* m = &models[model];
  OrtValue* inputs[MAX_IO];
  OrtValue* outputs[MAX_IO] = {NULL};
  size_t i;
  for (i = 0; i < m->n_in; ++i)
    Check(ort.CreateTensorWithDataAsOrtValue(cpu, m->data[i], sizeof(m->data[i]), shape, 2, kElemFloat, &inputs[i]),
          "CreateTensorWithDataAsOrtValue");
  Check(ort.Run(m->session, NULL, (const char* const*)m->in_names, (const OrtValue* const*)inputs, m->n_in,
                (const char* const*)m->out_names, m->n_out, outputs),
        "Run");
  if (print)
    for (i = 0; i < m->n_out; ++i) PrintOutput(m, i, outputs[i]);
  for (i = 0; i < m->n_out; ++i) ort.ReleaseValue(outputs[i]);
  for (i = 0; i < m->n_in; ++i) ort.ReleaseValue(inputs[i]);
}

int main(int argc, char** argv) {
  const char* names[MAX_MODELS];
  int n_models = 0, a, rc;
  OrtEnv* env;
  OrtSessionOptions* so;
  OrtAllocator* alloc;
  if (argc < 5) {
    fprintf(stderr, "usage: %s LIBONNXRUNTIME.so EXPECTED_VERSION THREADS NAME=MODEL.onnx ...\n", argv[0]);
    return 2;
  }
  LoadApi(argv[1], argv[2]);
  Check(ort.CreateEnv(kLogWarning, "bench", &env), "CreateEnv");
  Check(ort.CreateSessionOptions(&so), "CreateSessionOptions");
  Check(ort.SetIntraOpNumThreads(so, atoi(argv[3])), "SetIntraOpNumThreads");
  Check(ort.SetInterOpNumThreads(so, 1), "SetInterOpNumThreads");
  Check(ort.CreateCpuMemoryInfo(kDeviceAllocator, kMemTypeDefault, &cpu), "CreateCpuMemoryInfo");
  Check(ort.GetAllocatorWithDefaultOptions(&alloc), "GetAllocatorWithDefaultOptions");
  for (a = 4; a < argc && n_models < MAX_MODELS; ++a) {
    Model* m = &models[n_models];
    const char* path;
    size_t i;
    memset(m, 0, sizeof(*m));
    path = CallOverheadSplitArg(argv[a], m->name, sizeof(m->name));
    if (!path) Fail(argv[a], "not NAME=MODEL.onnx");
    names[n_models++] = m->name;
    Check(ort.CreateSession(env, path, so, &m->session), "CreateSession");
    Check(ort.SessionGetInputCount(m->session, &m->n_in), "SessionGetInputCount");
    Check(ort.SessionGetOutputCount(m->session, &m->n_out), "SessionGetOutputCount");
    if (m->n_in > MAX_IO || m->n_out > MAX_IO) Fail(m->name, "more inputs or outputs than MAX_IO");
    printf("model %s %zu %zu", m->name, m->n_in, m->n_out);
    for (i = 0; i < m->n_in; ++i) {
      Check(ort.SessionGetInputName(m->session, i, alloc, &m->in_names[i]), "SessionGetInputName");
      printf(" %s", m->in_names[i]);
    }
    for (i = 0; i < m->n_out; ++i) {
      Check(ort.SessionGetOutputName(m->session, i, alloc, &m->out_names[i]), "SessionGetOutputName");
      printf(" %s", m->out_names[i]);
    }
    printf("\n");
    CallOverheadFillInputs(m->data, m->n_in);
    RunOnce(n_models - 1, stdout);
  }
  rc = CallOverheadServe(names, n_models, RunOnce, NULL);
  for (a = 0; a < n_models; ++a) {
    size_t i;
    for (i = 0; i < models[a].n_in; ++i) Check(ort.AllocatorFree(alloc, models[a].in_names[i]), "AllocatorFree");
    for (i = 0; i < models[a].n_out; ++i) Check(ort.AllocatorFree(alloc, models[a].out_names[i]), "AllocatorFree");
    ort.ReleaseSession(models[a].session);
  }
  ort.ReleaseMemoryInfo(cpu);
  ort.ReleaseSessionOptions(so);
  ort.ReleaseEnv(env);
  return rc;
}

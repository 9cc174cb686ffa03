/* The C side of bench_call_overhead.py: times SessionRun through the public C
 * API only, so the benchmark can tell the C cost from the Python binding's.
 *
 *   call_overhead_worker THREADS NAME=MODEL.onnx ...
 *
 * Every model's inputs are float tensors [1, 16] (what the benchmark builds).
 * Prints "ready" once the sessions exist, then serves requests on stdin, one
 * line "NAME REPEAT" each, answering one line of REPEAT per-call times in
 * nanoseconds (the loop is call_overhead_serve.h's, shared with
 * ort_call_overhead_worker.c). Each timed call is what a C caller pays per
 * inference: create the input values over its own buffers, SessionRun,
 * release the outputs and the input values. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "call_overhead_serve.h"
#include "onyxruntime/onyxruntime_c_api.h"

#define MAX_MODELS CALL_OVERHEAD_MAX_MODELS
#define MAX_IO CALL_OVERHEAD_MAX_IO

static const OnyxApi* api;

static void Check(OnyxStatus* st, const char* what) {
  if (st) {
    fprintf(stderr, "%s failed: %s\n", what, api->StatusGetMessage(st));
    exit(1);
  }
}

typedef struct {
  char name[64];
  OnyxSession* session;
  size_t n_in, n_out;
  const char* in_names[MAX_IO];
  const char* out_names[MAX_IO];
  float data[MAX_IO][16];
} Model;

static Model models[MAX_MODELS];
static OnyxMemoryInfo* cpu;

static void RunOnce(int model, void* unused) {
  static const int64_t shape[2] = {1, 16};
  Model* m = &models[model];
  OnyxValue* inputs[MAX_IO];
  OnyxValue* outputs[MAX_IO];
  size_t i;
  for (i = 0; i < m->n_in; ++i)
    Check(api->ValueCreateTensorWithData(cpu, m->data[i], sizeof(m->data[i]), shape, 2, ONYX_TYPE_FLOAT, &inputs[i]),
          "ValueCreateTensorWithData");
  Check(api->SessionRun(m->session, NULL, m->in_names, (const OnyxValue* const*)inputs, m->n_in, m->out_names,
                        m->n_out, outputs),
        "SessionRun");
  for (i = 0; i < m->n_out; ++i) api->ValueRelease(outputs[i]);
  for (i = 0; i < m->n_in; ++i) api->ValueRelease(inputs[i]);
  (void)unused;
}

int main(int argc, char** argv) {
  const char* names[MAX_MODELS];
  int n_models = 0, a, rc;
  OnyxEnv* env;
  OnyxSessionOptions* so;
  if (argc < 3) {
    fprintf(stderr, "usage: %s THREADS NAME=MODEL.onnx ...\n", argv[0]);
    return 2;
  }
  api = OnyxGetApiBase()->GetApi(ONYX_API_VERSION);
  if (!api) {
    fprintf(stderr, "%s\n", OnyxGetApiBase()->GetApiError(ONYX_API_VERSION));
    return 1;
  }
  Check(api->EnvCreate(ONYX_LOG_WARNING, "bench", &env), "EnvCreate");
  Check(api->SessionOptionsCreate(&so), "SessionOptionsCreate");
  Check(api->SessionOptionsSetIntraOpThreads(so, atoi(argv[1])), "SessionOptionsSetIntraOpThreads");
  Check(api->MemoryInfoCreateCpu(ONYX_DEVICE_ALLOCATOR, ONYX_MEM_DEFAULT, &cpu), "MemoryInfoCreateCpu");
  for (a = 2; a < argc && n_models < MAX_MODELS; ++a) {
    Model* m = &models[n_models];
    const char* path;
    size_t i;
    memset(m, 0, sizeof(*m));
    path = CallOverheadSplitArg(argv[a], m->name, sizeof(m->name));
    if (!path) return 2;
    names[n_models++] = m->name;
    Check(api->SessionCreate(env, path, so, &m->session), "SessionCreate");
    Check(api->SessionGetInputCount(m->session, &m->n_in), "SessionGetInputCount");
    Check(api->SessionGetOutputCount(m->session, &m->n_out), "SessionGetOutputCount");
    if (m->n_in > MAX_IO || m->n_out > MAX_IO) return 2;
    for (i = 0; i < m->n_in; ++i)
      Check(api->SessionGetInputName(m->session, i, &m->in_names[i]), "SessionGetInputName");
    for (i = 0; i < m->n_out; ++i)
      Check(api->SessionGetOutputName(m->session, i, &m->out_names[i]), "SessionGetOutputName");
    CallOverheadFillInputs(m->data, m->n_in);
  }
  rc = CallOverheadServe(names, n_models, RunOnce, NULL);
  for (a = 0; a < n_models; ++a) api->SessionRelease(models[a].session);
  api->MemoryInfoRelease(cpu);
  api->SessionOptionsRelease(so);
  api->EnvRelease(env);
  return rc;
}

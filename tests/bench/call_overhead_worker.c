/* The C side of bench_call_overhead.py: times SessionRun through the public C
 * API only, so the benchmark can tell the C cost from the Python binding's.
 *
 *   call_overhead_worker THREADS NAME=MODEL.onnx ...
 *
 * Every model's inputs are float tensors [1, 16] (what the benchmark builds).
 * Prints "ready" once the sessions exist, then serves requests on stdin, one
 * line "NAME REPEAT" each, answering one line of REPEAT per-call times in
 * nanoseconds. Each timed call is what a C caller pays per inference: create
 * the input values over its own buffers, SessionRun, release the outputs and
 * the input values. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "onyxruntime/onyxruntime_c_api.h"

#define MAX_MODELS 8
#define MAX_IO 8

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

static long long NowNs(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void RunOnce(Model* m, const OnyxMemoryInfo* cpu) {
  static const int64_t shape[2] = {1, 16};
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
}

int main(int argc, char** argv) {
  Model models[MAX_MODELS];
  int n_models = 0, a;
  OnyxEnv* env;
  OnyxSessionOptions* so;
  OnyxMemoryInfo* cpu;
  char line[256];
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
    Model* m = &models[n_models++];
    const char* eq = strchr(argv[a], '=');
    size_t i, j;
    if (!eq || (size_t)(eq - argv[a]) >= sizeof(m->name)) return 2;
    memset(m, 0, sizeof(*m));
    memcpy(m->name, argv[a], (size_t)(eq - argv[a]));
    Check(api->SessionCreate(env, eq + 1, so, &m->session), "SessionCreate");
    Check(api->SessionGetInputCount(m->session, &m->n_in), "SessionGetInputCount");
    Check(api->SessionGetOutputCount(m->session, &m->n_out), "SessionGetOutputCount");
    if (m->n_in > MAX_IO || m->n_out > MAX_IO) return 2;
    for (i = 0; i < m->n_in; ++i) {
      Check(api->SessionGetInputName(m->session, i, &m->in_names[i]), "SessionGetInputName");
      for (j = 0; j < 16; ++j) m->data[i][j] = (float)((i * 16 + j) % 7) - 3.0f;
    }
    for (i = 0; i < m->n_out; ++i) Check(api->SessionGetOutputName(m->session, i, &m->out_names[i]), "SessionGetOutputName");
  }
  printf("ready\n");
  fflush(stdout);
  while (fgets(line, sizeof(line), stdin)) {
    char name[64];
    int repeat, r, k;
    Model* m = NULL;
    if (sscanf(line, "%63s %d", name, &repeat) != 2 || repeat <= 0) return 2;
    for (k = 0; k < n_models; ++k)
      if (strcmp(models[k].name, name) == 0) m = &models[k];
    if (!m) return 2;
    for (r = 0; r < 5; ++r) RunOnce(m, cpu);
    for (r = 0; r < repeat; ++r) {
      long long t0 = NowNs();
      RunOnce(m, cpu);
      printf(r ? " %lld" : "%lld", NowNs() - t0);
    }
    printf("\n");
    fflush(stdout);
  }
  for (a = 0; a < n_models; ++a) api->SessionRelease(models[a].session);
  api->MemoryInfoRelease(cpu);
  api->SessionOptionsRelease(so);
  api->EnvRelease(env);
  return 0;
}

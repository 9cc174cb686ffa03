/* What bench_call_overhead.py's two C workers share, so that they time the same
 * way: call_overhead_worker.c (our C API) and ort_call_overhead_worker.c
 * (onnxruntime's). Header-only; each worker is one C file compiled on its own. */
#ifndef ONYX_BENCH_CALL_OVERHEAD_SERVE_H_
#define ONYX_BENCH_CALL_OVERHEAD_SERVE_H_

#include <stdio.h>
#include <string.h>
#include <time.h>

#define CALL_OVERHEAD_MAX_MODELS 8
#define CALL_OVERHEAD_MAX_IO 8

/* Splits a "NAME=MODEL.onnx" argument: copies NAME into name (size bytes) and
 * returns the path, or NULL when there is no '=' or the name does not fit. */
static const char* CallOverheadSplitArg(const char* arg, char* name, size_t size) {
  const char* eq = strchr(arg, '=');
  if (!eq || (size_t)(eq - arg) >= size) return NULL;
  memset(name, 0, size);
  memcpy(name, arg, (size_t)(eq - arg));
  return eq + 1;
}

/* The [1, 16] float inputs both workers feed: input i, element j = (i*16 + j) % 7 - 3
 * (bench_call_overhead.py's c_worker_inputs computes the same). */
static void CallOverheadFillInputs(float (*data)[16], size_t n_in) {
  size_t i, j;
  for (i = 0; i < n_in; ++i)
    for (j = 0; j < 16; ++j) data[i][j] = (float)((i * 16 + j) % 7) - 3.0f;
}

static long long CallOverheadNowNs(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Prints "ready", then serves requests on stdin, one line "NAME REPEAT" each:
 * 5 untimed calls of run_once(model index, ctx), then REPEAT timed one by one,
 * answered as one line of REPEAT times in nanoseconds. Returns 0 at the end of
 * the input, 2 on a request it cannot read or a model it does not know. */
static int CallOverheadServe(const char* const* names, int n_models, void (*run_once)(int model, void* ctx),
                             void* ctx) {
  char line[256];
  printf("ready\n");
  fflush(stdout);
  while (fgets(line, sizeof(line), stdin)) {
    char name[64];
    int repeat, r, k, m = -1;
    if (sscanf(line, "%63s %d", name, &repeat) != 2 || repeat <= 0) return 2;
    for (k = 0; k < n_models; ++k)
      if (strcmp(names[k], name) == 0) m = k;
    if (m < 0) return 2;
    for (r = 0; r < 5; ++r) run_once(m, ctx);
    for (r = 0; r < repeat; ++r) {
      long long t0 = CallOverheadNowNs();
      run_once(m, ctx);
      printf(r ? " %lld" : "%lld", CallOverheadNowNs() - t0);
    }
    printf("\n");
    fflush(stdout);
  }
  return 0;
}

#endif /* ONYX_BENCH_CALL_OVERHEAD_SERVE_H_ */

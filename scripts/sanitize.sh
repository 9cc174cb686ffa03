#!/usr/bin/env bash
# Sanitizer and fuzzing suites (issue 12), each in its own build tree, built
# with clang so one instrumented tree serves the tests and libFuzzer:
#
#   sanitize.sh asan     build-asan/ (ASan + UBSan + fuzzer coverage): the
#                        engine unit tests, the C++ API test and the C API test
#                        (LeakSanitizer on), zero reports allowed
#   sanitize.sh fuzz [SECONDS]
#                        each tests/fuzz target for SECONDS (or
#                        $ONYX_FUZZ_SECONDS; unset: $ONYX_FUZZ_RUNS inputs,
#                        default 8000, from seed $ONYX_FUZZ_SEED, default 1:
#                        repeatable, what CI runs) from a seed corpus made at
#                        run time, after replaying tests/fuzz/regressions/;
#                        prints executions and crashes per target
#   sanitize.sh tsan     build-tsan/ (ThreadSanitizer): the concurrency tests
#   sanitize.sh all      asan, fuzz, tsan
#
# Longer fuzzing: ONYX_FUZZ_SECONDS=3600 bash scripts/sanitize.sh fuzz (new
# crashers land in build-asan/fuzz/crashes/; minimise with -minimize_crash=1
# and add them to tests/fuzz/regressions/<target>/ with the engine fix).
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PY="$ROOT/.venv/bin/python"
JOBS="${ONYX_JOBS:-$(nproc)}"
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$ROOT}"
# Sanitizer runtimes read these; symbolize with the clang that built the tree.
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:allocator_may_return_null=1:detect_stack_use_after_return=0}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
export TSAN_OPTIONS="${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1}"
LLVM_SYMBOLIZER="$(command -v llvm-symbolizer || ls /usr/lib/llvm-*/bin/llvm-symbolizer 2>/dev/null | tail -1)"
[ -n "$LLVM_SYMBOLIZER" ] && export ASAN_SYMBOLIZER_PATH="$LLVM_SYMBOLIZER" TSAN_SYMBOLIZER_PATH="$LLVM_SYMBOLIZER"

configure() {  # build dir, sanitizer, fuzz ON/OFF, [CPU kernel subset]
  local dir="$1" san="$2" fuzz="$3" kernels="${4:-}"
  bash "$ROOT/scripts/deps_onnx.sh" || return 1
  if [ ! -f "$dir/build.ninja" ]; then
    # -O1: the sanitizers' usual level (fast enough to run, quick to build);
    # line tables only: stack traces with lines at a fraction of -g's cost.
    CC=clang CXX=clang++ "$ROOT/.venv/bin/cmake" -S "$ROOT" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Sanitize \
      -DCMAKE_C_FLAGS="-O1 -gline-tables-only" -DCMAKE_CXX_FLAGS="-O1 -gline-tables-only" \
      -DONYX_SANITIZE="$san" -DONYX_FUZZ="$fuzz" -DONYX_CPU_KERNELS="$kernels" -DONYX_PYTHON="$PY" >/dev/null || return 1
  elif ! grep -qxF "ONYX_CPU_KERNELS:STRING=$kernels" "$dir/CMakeCache.txt"; then
    # The kernel subset changed since this tree was configured.
    "$ROOT/.venv/bin/cmake" -S "$ROOT" -B "$dir" -DONYX_CPU_KERNELS="$kernels" >/dev/null || return 1
  fi
}

asan_build() {
  configure "$ROOT/build-asan" address ON || return 1
  local targets=(onyx_unit_tests cxx_api_test capi_test)
  for f in "$ROOT"/tests/fuzz/fuzz_*.cc; do targets+=("$(basename "${f%.cc}")"); done
  "$ROOT/.venv/bin/cmake" --build "$ROOT/build-asan" -j"$JOBS" --target "${targets[@]}"
}

run_asan() {
  asan_build || return 1
  local B="$ROOT/build-asan" MODEL="${ONYX_MODEL_DIR:-$ROOT/build/models}/mobilenetv2.onnx" rc=0
  [ -f "$MODEL" ] || "$PY" "$ROOT/tests/models/generate.py" --out "$(dirname "$MODEL")" --only mobilenetv2 >/dev/null || return 1
  echo "--- ASan+UBSan: engine unit tests"
  "$B/onyx_unit_tests" --gtest_brief=1 || rc=1
  echo "--- ASan+UBSan: C++ API test"
  ONYX_TEST_MODEL="$MODEL" "$B/cxx_api_test" --gtest_brief=1 || rc=1
  echo "--- ASan+UBSan+LSan: C API test"
  "$B/capi_test" "$MODEL" && echo "capi_test: passed, no sanitizer report" || rc=1
  return $rc
}

run_fuzz() {
  # CI (no argument, no ONYX_FUZZ_SECONDS): a fixed number of inputs per
  # target from a fixed seed, so a run is repeatable (the targets run
  # sessions on one thread); longer runs by time: sanitize.sh fuzz SECONDS.
  local seconds="${1:-${ONYX_FUZZ_SECONDS:-}}" runs="${ONYX_FUZZ_RUNS:-8000}" B="$ROOT/build-asan" rc=0
  local budget=(-runs="$runs") what="$runs inputs"
  if [ -n "$seconds" ]; then budget=(-max_total_time="$seconds"); what="${seconds}s"; fi
  asan_build || return 1
  "$PY" "$ROOT/tests/fuzz/make_seeds.py" --out "$B/fuzz/seeds" || return 1
  mkdir -p "$B/fuzz/crashes"
  local summary=()
  for f in "$ROOT"/tests/fuzz/fuzz_*.cc; do
    local t; t="$(basename "${f%.cc}")"
    local reg="$ROOT/tests/fuzz/regressions/$t"
    if [ -d "$reg" ] && [ -n "$(ls -A "$reg")" ]; then
      echo "--- $t: replaying $(ls "$reg" | wc -l) regression inputs"
      "$B/$t" -rss_limit_mb=4096 "$reg"/* >"$B/fuzz/$t.replay.log" 2>&1 || { tail -40 "$B/fuzz/$t.replay.log"; rc=1; summary+=("$t: REGRESSION INPUT CRASHED"); continue; }
    fi
    mkdir -p "$B/fuzz/corpus/$t"
    echo "--- $t: fuzzing ($what)"
    local log="$B/fuzz/$t.log"
    # A fixed seed (ONYX_FUZZ_SEED, 0 = random) keeps CI runs repeatable.
    "$B/$t" "${budget[@]}" -seed="${ONYX_FUZZ_SEED:-1}" -timeout=25 -rss_limit_mb=4096 -print_final_stats=1 \
      -artifact_prefix="$B/fuzz/crashes/$t-" "$B/fuzz/corpus/$t" "$B/fuzz/seeds/$t" >"$log" 2>&1
    local status=$?
    local executed; executed="$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)"
    local crashes=0
    if [ $status -ne 0 ]; then crashes=1; rc=1; grep -B5 -A40 -m1 'ERROR\|runtime error\|==ERROR\|deadly signal\|timeout' "$log" | head -80; fi
    summary+=("$t: ${executed:-0} executions ($what), $crashes crashes")
  done
  echo "--- fuzz summary"
  printf '%s\n' "${summary[@]}"
  return $rc
}

# What tests/unit/concurrency_test.cc runs (MatMul on our SGEMM or OpenBLAS,
# Relu, Tanh, Softmax, Add, Loop, Identity; gemm.cc names the CPU path): the TSan tree builds the engine with these kernels only.
TSAN_KERNELS="cpu_provider.cc;common/*.cc;controlflow/*.cc;math/blas.cc;math/gemm.cc;math/sgemm.cc;math/packed_gemv.cc;math/elementwise_binary.cc;math/elementwise_unary.cc;math/matmul.cc;math/gelu_contrib.cc;math/softmax.cc;tensor/reshape.cc"

run_tsan() {
  configure "$ROOT/build-tsan" thread OFF "$TSAN_KERNELS" || return 1
  "$ROOT/.venv/bin/cmake" --build "$ROOT/build-tsan" -j"$JOBS" --target concurrency_tests || return 1
  echo "--- TSan: concurrency tests"
  "$ROOT/build-tsan/concurrency_tests" --gtest_brief=1
}

case "${1:-all}" in
  asan) run_asan ;;
  fuzz) run_fuzz "${2:-}" ;;
  tsan) run_tsan ;;
  all) rc=0; run_asan || rc=1; run_fuzz "${2:-}" || rc=1; run_tsan || rc=1; exit $rc ;;
  *) echo "usage: sanitize.sh asan|fuzz [SECONDS]|tsan|all" >&2; exit 2 ;;
esac

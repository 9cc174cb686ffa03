#!/usr/bin/env bash
# The README's test command: installs what is missing, builds everything, and
# runs every test suite (GoogleTest, the C API under valgrind, the ABI checks,
# the Java and C# bindings, examples and install packages, pytest), printing each suite's counts. Exits non-zero if any suite fails.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${ONYX_BUILD_DIR:-$ROOT/build}"
PY="$ROOT/.venv/bin/python"
export ONYX_MODEL_DIR="${ONYX_MODEL_DIR:-$BUILD/models}"
export ONYX_PYTHONPATH="$BUILD/python"

bash "$ROOT/scripts/setup.sh" || exit 1
bash "$ROOT/scripts/build.sh" || exit 1

failed=()
summary=()
run_suite() {  # name, command...
  local name="$1"; shift
  echo "=== $name"
  if "$@"; then summary+=("PASS  $name"); else summary+=("FAIL  $name"); failed+=("$name"); fi
}

"$PY" "$ROOT/tests/models/generate.py" --out "$ONYX_MODEL_DIR" --only mobilenetv2 >/dev/null || exit 1
MODEL="$ONYX_MODEL_DIR/mobilenetv2.onnx"

run_suite "Layer check (includes follow DESIGN.md)" "$PY" "$ROOT/scripts/check_layers.py" "$ROOT"
run_suite "GoogleTest (engine unit tests)" "$BUILD/onyx_unit_tests" --gtest_brief=1
run_suite "GoogleTest (C++ API)" env ONYX_TEST_MODEL="$MODEL" "$BUILD/cxx_api_test" --gtest_brief=1
run_suite "C API under valgrind" valgrind -q --suppressions="$ROOT/scripts/valgrind.supp" --leak-check=full --show-leak-kinds=definite,indirect \
  --errors-for-leak-kinds=definite,indirect --error-exitcode=1 "$BUILD/capi_test" "$MODEL"
run_suite "Header compiles alone (C, C++)" bash -c "'$BUILD/header_test_c' && '$BUILD/header_test_cc'"
run_suite "ABI check" "$PY" "$ROOT/abi_checks/check_abi.py" "$BUILD/libonyxruntime.so"
run_suite "ABI: program built against the v4 header, run on this library" "$BUILD/abi_v4_client" "$MODEL"
run_suite "ABI: abidiff against abi_checks/libonyxruntime.abi" "$PY" "$ROOT/abi_checks/abidiff_check.py" "$BUILD/libonyxruntime.so"
run_suite "Java binding (JNA, JUnit)" bash "$ROOT/bindings/java/run_tests.sh" "$BUILD"
# Issue 12: clang trees of their own (build-asan/, build-tsan/), see scripts/sanitize.sh.
run_suite "ASan+UBSan+LSan (unit tests, C++ API, C API)" bash "$ROOT/scripts/sanitize.sh" asan
run_suite "libFuzzer (${ONYX_FUZZ_RUNS:-8000} inputs per target from a fixed seed, regression inputs first)" bash "$ROOT/scripts/sanitize.sh" fuzz
run_suite "TSan (concurrency tests)" bash "$ROOT/scripts/sanitize.sh" tsan
run_suite "C# binding (mono, NUnit)" bash "$ROOT/bindings/csharp/run_tests.sh" "$BUILD"
PACKAGING_TESTS=(tests/python/test_examples.py tests/python/test_install.py tests/python/test_abidiff.py)
run_suite "C/C++ examples, cmake --install + find_package/pkg-config/Java/C# consumers, abidiff check (pytest)" \
  "$PY" -m pytest "${PACKAGING_TESTS[@]/#/$ROOT/}" -q -p no:cacheprovider
run_suite "pytest (API, models, optimizer, ONNX node conformance, real models)" "$PY" -m pytest "$ROOT/tests/python" "$ROOT/tests/conformance" "$ROOT/tests/realmodels" \
  "${PACKAGING_TESTS[@]/#/--ignore=$ROOT/}" -q -p no:cacheprovider
# The same suites on the AVX2 path (ONYX_CPU_ISA caps our kernels; OpenBLAS
# reads OPENBLAS_CORETYPE when it loads), so an AVX-512 machine tests both.
run_suite "GoogleTest on the AVX2 path (ONYX_CPU_ISA=avx2)" env ONYX_CPU_ISA=avx2 OPENBLAS_CORETYPE=Haswell \
  "$BUILD/onyx_unit_tests" --gtest_brief=1
run_suite "pytest on the AVX2 path (ONYX_CPU_ISA=avx2)" env ONYX_CPU_ISA=avx2 OPENBLAS_CORETYPE=Haswell \
  "$PY" -m pytest "$ROOT/tests/python" "$ROOT/tests/conformance" "$ROOT/tests/realmodels" \
  "${PACKAGING_TESTS[@]/#/--ignore=$ROOT/}" -q -p no:cacheprovider

echo
echo "=== summary"
printf '%s\n' "${summary[@]}"
if [ ${#failed[@]} -gt 0 ]; then
  echo "FAILED: ${failed[*]}"
  exit 1
fi
echo "all suites passed"

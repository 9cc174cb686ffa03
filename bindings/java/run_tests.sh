#!/usr/bin/env bash
# Builds the Java binding's jar (JNA over libonyxruntime.so, no native code of
# its own; the CMake target onyxruntime_jar) and runs its JUnit tests on generated models; prints
# "java: N passed, M failed". Usage: run_tests.sh [build dir]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BUILD="${1:-${ONYX_BUILD_DIR:-$ROOT/build}}"
OUT="$BUILD/java"
CP_DEPS=/usr/share/java/jna.jar:/usr/share/java/junit4.jar:/usr/share/java/hamcrest-core.jar
CMAKE="$ROOT/.venv/bin/cmake"; [ -x "$CMAKE" ] || CMAKE=cmake
"$CMAKE" --build "$BUILD" --target onyxruntime_jar  # build/java/onyxruntime.jar (CMakeLists.txt)
rm -rf "$OUT/test-classes" "$OUT/models"; mkdir -p "$OUT/test-classes" "$OUT/models"
javac -d "$OUT/test-classes" -cp "$OUT/onyxruntime.jar:$CP_DEPS" $(find "$ROOT/bindings/java/src/test" -name '*.java')
"$ROOT/.venv/bin/python" "$ROOT/bindings/make_test_models.py" "$OUT/models"
set +e
java -Donyxruntime.library="$BUILD/libonyxruntime.so" -Donyx.test.models="$OUT/models" \
  -Donyx.abi.baseline="$ROOT/abi_checks/onyx_api_v4.txt" \
  -cp "$OUT/onyxruntime.jar:$OUT/test-classes:$CP_DEPS" org.junit.runner.JUnitCore ai.onyx.runtime.SessionTest ai.onyx.runtime.ValuesTest \
  > "$OUT/junit.log" 2>&1
rc=$?
set -e
cat "$OUT/junit.log"
run=$(grep -oE 'OK \(([0-9]+) tests?\)|Tests run: [0-9]+' "$OUT/junit.log" | grep -oE '[0-9]+' | head -1)
failed=$(grep -oE 'Failures: [0-9]+' "$OUT/junit.log" | grep -oE '[0-9]+' || echo 0)
echo "java: $((${run:-0} - failed)) passed, $failed failed"
exit $rc

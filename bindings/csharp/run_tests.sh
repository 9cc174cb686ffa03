#!/usr/bin/env bash
# Builds the C# binding (P/Invoke over libonyxruntime.so, no native code of its
# own; the CMake target onyxruntime_csharp, mono's mcs) and runs its NUnit tests on generated models; prints
# "csharp: N passed, M failed". Usage: run_tests.sh [build dir]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BUILD="$(cd "${1:-${ONYX_BUILD_DIR:-$ROOT/build}}" && pwd)"
OUT="$BUILD/csharp"
NUNIT=/usr/lib/cli/nunit.framework-2.6.3/nunit.framework.dll
mkdir -p "$OUT"
rm -rf "$OUT/tests" "$OUT/models"; mkdir -p "$OUT/tests" "$OUT/models"
CMAKE="$ROOT/.venv/bin/cmake"; [ -x "$CMAKE" ] || CMAKE=cmake
"$CMAKE" --build "$BUILD" --target onyxruntime_csharp  # build/csharp/OnyxRuntime.dll (CMakeLists.txt)
cp "$OUT/OnyxRuntime.dll" "$OUT/tests/"
mcs -langversion:7.2 -unsafe -warnaserror+ -target:library -r:"$OUT/tests/OnyxRuntime.dll" -r:"$NUNIT" -r:System.Core \
  -out:"$OUT/tests/OnyxRuntime.Tests.dll" "$ROOT"/bindings/csharp/tests/*.cs
"$ROOT/.venv/bin/python" "$ROOT/bindings/make_test_models.py" "$OUT/models"
set +e
ONYXRUNTIME_LIBRARY="$BUILD/libonyxruntime.so" ONYX_TEST_MODELS="$OUT/models" \
  ONYX_ABI_BASELINE="$ROOT/abi_checks/onyx_api_v5.txt" \
  nunit-console -nologo -noshadow -xml="$OUT/TestResult.xml" "$OUT/tests/OnyxRuntime.Tests.dll" > "$OUT/nunit.log" 2>&1
rc=$?
set -e
cat "$OUT/nunit.log"
line=$(grep -E '^Tests run: [0-9]+' "$OUT/nunit.log" | head -1 || true)
run=$(sed -nE 's/^Tests run: ([0-9]+).*/\1/p' <<<"$line")
errors=$(sed -nE 's/.*Errors: ([0-9]+).*/\1/p' <<<"$line")
failures=$(sed -nE 's/.*Failures: ([0-9]+).*/\1/p' <<<"$line")
if [ -z "$run" ]; then
  echo "csharp: 0 passed, 1 failed (nunit-console exited with $rc before reporting)"
  exit 1
fi
failed=$((errors + failures))
echo "csharp: $((run - failed)) passed, $failed failed"
[ "$rc" -eq 0 ] && [ "$failed" -eq 0 ]

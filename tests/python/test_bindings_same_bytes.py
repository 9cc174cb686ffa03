"""One scenario, five bindings, identical bytes.

Runs the MobileNetV2 test model on the deterministic input
x[i] = (float)((double)((i * 7919) % 1000) / 500.0 - 1.0) through Python,
through the C test (build/capi_test), the C++ test (build/cxx_api_test), a
Java program on build/java/onyxruntime.jar and a C# program on
build/csharp/OnyxRuntime.dll (same_bytes/), and checks that the first
output's raw bytes agree exactly: all go through the same library, so any
difference is a binding bug (a copy with the wrong layout, a wrong dtype, a
stale buffer).

The test binaries are looked up in $ONYX_BUILD_DIR, else next to the staged
Python package ($ONYX_PYTHONPATH/..), else <repo>/build.
"""

import filecmp
import os
import subprocess

import numpy as np
import pytest

from conftest import ONYX_PYTHONPATH, REPO_ROOT, SELF_CHECK


def _build_dir():
    candidates = [os.environ.get("ONYX_BUILD_DIR"), os.path.dirname(os.path.abspath(ONYX_PYTHONPATH)),
                  os.path.join(REPO_ROOT, "build")]
    for d in candidates:
        if d and os.path.exists(os.path.join(d, "capi_test")):
            return d
    return None


def deterministic_input(batch=1):
    i = np.arange(batch * 3 * 224 * 224, dtype=np.uint64)
    # Same arithmetic as the C and C++ tests: integer modulo, double division, float cast.
    return (((i * 7919) % 1000).astype(np.float64) / 500.0 - 1.0).astype(np.float32).reshape(batch, 3, 224, 224)


@pytest.fixture(scope="module")
def mobilenet(model_files):
    return model_files.path("mobilenetv2")


@pytest.fixture(scope="module")
def python_bytes(onyx, mobilenet):
    sess = onyx.InferenceSession(mobilenet, providers=["CPUExecutionProvider"])
    x = deterministic_input()
    y = sess.run(None, {sess.get_inputs()[0].name: x})[0]
    assert y.dtype == np.float32 and y.shape == (1, 1000)
    assert np.isfinite(y).all()
    return np.ascontiguousarray(y).tobytes()


def _binary(name):
    if SELF_CHECK:
        pytest.skip("self-check runs the Python side against onnxruntime only")
    d = _build_dir()
    if d is None:
        pytest.fail("capi_test not found: build it (ninja capi_test cxx_api_test) or set ONYX_BUILD_DIR",
                    pytrace=False)
    path = os.path.join(d, name)
    if not os.path.exists(path):
        pytest.fail("%s not found in %s" % (name, d), pytrace=False)
    staged = os.path.join(ONYX_PYTHONPATH, "onyxruntime", "libonyxruntime.so")
    built = os.path.join(d, "libonyxruntime.so")
    if os.path.exists(built) and os.path.exists(staged) and not filecmp.cmp(built, staged, shallow=False):
        # Otherwise a numeric change in the engine reads as a binding bug.
        pytest.fail("%s differs from %s: the staged Python package is stale (build onyx_python)" % (staged, built),
                    pytrace=False)
    return path


def test_c_binding_gives_the_same_bytes(mobilenet, python_bytes, tmp_path):
    out = tmp_path / "c.bin"
    r = subprocess.run([_binary("capi_test"), mobilenet, str(out)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert out.read_bytes() == python_bytes


def test_cxx_binding_gives_the_same_bytes(mobilenet, python_bytes, tmp_path):
    out = tmp_path / "cxx.bin"
    env = dict(os.environ, ONYX_TEST_MODEL=mobilenet, ONYX_TEST_OUT=str(out))
    r = subprocess.run([_binary("cxx_api_test"), "--gtest_filter=CxxApiTest.RunZeroCopyDeterministic"], env=env,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "1 test" in r.stdout and "SKIPPED" not in r.stdout, r.stdout
    assert out.read_bytes() == python_bytes


SAME_BYTES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "same_bytes")


def test_java_binding_gives_the_same_bytes(mobilenet, python_bytes, tmp_path):
    d = os.path.dirname(_binary("capi_test"))
    jar = os.path.join(d, "java", "onyxruntime.jar")
    assert os.path.exists(jar), "%s not built (CMake target onyxruntime_jar)" % jar
    cp = "%s:/usr/share/java/jna.jar" % jar
    subprocess.run(["javac", "-d", str(tmp_path), "-cp", cp, os.path.join(SAME_BYTES, "SameBytes.java")], check=True)
    out = tmp_path / "java.bin"
    r = subprocess.run(["java", "-Donyxruntime.library=%s" % os.path.join(d, "libonyxruntime.so"), "-cp",
                        "%s:%s" % (cp, tmp_path), "SameBytes", mobilenet, str(out)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert out.read_bytes() == python_bytes


def test_csharp_binding_gives_the_same_bytes(mobilenet, python_bytes, tmp_path):
    d = os.path.dirname(_binary("capi_test"))
    dll = os.path.join(d, "csharp", "OnyxRuntime.dll")
    assert os.path.exists(dll), "%s not built (CMake target onyxruntime_csharp)" % dll
    exe = tmp_path / "same_bytes.exe"
    subprocess.run(["mcs", "-r:" + dll, "-out:%s" % exe, os.path.join(SAME_BYTES, "SameBytes.cs")], check=True)
    out = tmp_path / "csharp.bin"
    env = dict(os.environ, MONO_PATH=os.path.dirname(dll), ONYXRUNTIME_LIBRARY=os.path.join(d, "libonyxruntime.so"))
    r = subprocess.run(["mono", str(exe), mobilenet, str(out)], env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert out.read_bytes() == python_bytes


def test_onyx_run_gives_the_same_bytes(mobilenet, python_bytes, tmp_path):
    x_path = tmp_path / "x.npy"
    np.save(x_path, deterministic_input())
    out_dir = tmp_path / "outs"
    r = subprocess.run([_binary("onyx_run"), mobilenet, "--input", "input=%s" % x_path, "--repeat", "1",
                        "--warmup", "0", "--save-outputs", str(out_dir)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "latency over 1 runs" in r.stdout
    saved = [f for f in os.listdir(out_dir) if f.endswith(".npy")]
    assert len(saved) == 1, saved
    y = np.load(out_dir / saved[0])
    assert y.dtype == np.float32 and y.shape == (1, 1000)
    assert y.tobytes() == python_bytes


def test_onyx_run_errors_exit_1(mobilenet, tmp_path):
    exe = _binary("onyx_run")
    bad = tmp_path / "bad.npy"
    np.save(bad, np.ones((1, 3, 224, 224), np.float64))
    for args in ([str(tmp_path / "missing.onnx")], [mobilenet, "--repeat", "zero"], [mobilenet, "--input", "nope=x.npy"],
                 [mobilenet, "--input", "input=%s" % bad], []):
        r = subprocess.run([exe] + args, capture_output=True, text=True, timeout=300)
        assert r.returncode == 1, (args, r.stdout, r.stderr)
        assert "onyx_run: error" in r.stderr, (args, r.stderr)


def test_python_input_matches_the_c_formula():
    x = deterministic_input().reshape(-1)
    for i in (0, 1, 2, 126, 1000, 150527):
        assert x[i] == np.float32(((i * 7919) % 1000) / 500.0 - 1.0)

"""The C and C++ example programs (bindings/c/example.c, bindings/cxx/example.cc).

Both print the model's inputs and outputs, run it on given (raw .bin) or
seeded random inputs and print each output; they must print the same text,
and the values must be the model's (numpy), including for the random inputs,
whose generator is repeated here.
"""
import os
import re
import subprocess
import sys

import numpy as np
import pytest

from conftest import REPO_ROOT

EXAMPLES = ("onyx_example_c", "onyx_example_cxx")


def _exe(name):
    d = os.environ.get("ONYX_BUILD_DIR") or os.path.join(REPO_ROOT, "build")
    path = os.path.join(d, name)
    if not os.path.exists(path):
        pytest.fail("%s not built" % path, pytrace=False)
    return path


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    d = tmp_path_factory.mktemp("example_models")
    subprocess.run([sys.executable, os.path.join(REPO_ROOT, "bindings", "make_test_models.py"), str(d)], check=True)
    return d


def _run_both(*args):
    outs = []
    for name in EXAMPLES:
        r = subprocess.run([_exe(name)] + [str(a) for a in args], capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, (name, r.stdout, r.stderr)
        outs.append(r.stdout)
    assert outs[0] == outs[1], "C and C++ examples disagree:\n%s\n%s" % tuple(outs)
    return outs[0]


def _values(out, name):
    m = re.search(r"^%s: \w+ \[([^\]]*)\] sum=\S+ values:(.*)$" % re.escape(name), out, re.M)
    assert m, out
    return [float(v) for v in m.group(2).split()]


def test_given_inputs(models, tmp_path):
    x = np.arange(6, dtype=np.float32) * 0.25 - 1
    y = np.array([3, -1, 0.5, 1e-3, 7, -2], np.float32)
    x.tofile(tmp_path / "x.bin")
    y.tofile(tmp_path / "y.bin")
    out = _run_both(models / "add.onnx", tmp_path / "x.bin", tmp_path / "y.bin")
    assert "input 0: x tensor(float) [2, 3]" in out and "output 0: z tensor(float) [2, 3]" in out
    np.testing.assert_allclose(_values(out, "z"), x + y, rtol=1e-7)


def _random(seed, n):
    """The examples' generator: integer inputs get (r % 16) - 8."""
    out = []
    for _ in range(n):
        seed = (seed * 6364136223846793005 + 1442695040888963407) % 2**64
        out.append(((seed >> 33) % 16) - 8)
    return seed, out


def test_random_inputs_symbolic_dims(models):
    out = _run_both(models / "mixed.onnx")
    assert "input 0: ids tensor(int64) [n]" in out, out
    seed, ids = _random(42, 1)  # the symbolic dim n runs as 1
    _, n = _random(seed, 2)
    assert _values(out, "ids_f") == ids
    assert _values(out, "total") == [sum(ids)]
    assert _values(out, "neg") == [-v for v in n]


def test_errors_exit_1(models, tmp_path):
    (tmp_path / "short.bin").write_bytes(b"\0" * 20)
    for name in EXAMPLES:
        r = subprocess.run([_exe(name), str(tmp_path / "missing.onnx")], capture_output=True, text=True)
        assert r.returncode == 1 and "missing.onnx" in r.stderr, r.stderr
        r = subprocess.run([_exe(name), str(models / "add.onnx"), str(tmp_path / "short.bin")], capture_output=True,
                           text=True)
        assert r.returncode == 1 and "input 'x' needs 24 bytes" in r.stderr, r.stderr
        r = subprocess.run([_exe(name)], capture_output=True, text=True)
        assert r.returncode == 1 and "usage" in r.stderr

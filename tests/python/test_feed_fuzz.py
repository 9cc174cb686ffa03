"""The Python binding's feed conversion under structured random inputs
(tests/fuzz/fuzz_python_feeds.py; issue 12 item 1): a bounded run from a
fixed seed in CI, in a child process so that a crash names the case it died
on, and the cases it found, kept as regression tests.

Longer runs: .venv/bin/python tests/fuzz/fuzz_python_feeds.py --cases 1000000 --seed 0
(ONYX_FEED_FUZZ_CASES / ONYX_FEED_FUZZ_SEED change this test's run.)"""

import os
import subprocess
import sys

import numpy as np
import pytest
from onnx import helper

from conftest import ONYX_PYTHONPATH, REPO_ROOT, is_ort

FUZZER = os.path.join(REPO_ROOT, "tests", "fuzz", "fuzz_python_feeds.py")


def test_bounded_feed_fuzz(onyx, tmp_path):
    if onyx.__name__ != "onyxruntime":
        pytest.skip("fuzzes onyxruntime's binding")
    cases = os.environ.get("ONYX_FEED_FUZZ_CASES", "3000")
    seed = os.environ.get("ONYX_FEED_FUZZ_SEED", "1")
    last = tmp_path / "last_case.txt"
    env = dict(os.environ, ONYX_PYTHONPATH=ONYX_PYTHONPATH)
    p = subprocess.run([sys.executable, "-W", "ignore", FUZZER, "--cases", cases, "--seed", seed,
                        "--last-case", str(last)], capture_output=True, text=True, env=env, timeout=600)
    print(p.stdout[-2000:])
    where = last.read_text().strip() if last.exists() else "?"
    assert p.returncode == 0, "feed fuzzing failed (exit %d; last case %s, replay with --replay %s):\n%s\n%s" % (
        p.returncode, where, where, p.stdout[-4000:], p.stderr[-4000:])
    assert "python_feeds: %s cases" % cases in p.stdout


def _identity():
    graph = helper.make_graph([helper.make_node("Identity", ["X"], ["Y"])], "g",
                              [helper.make_tensor_value_info("X", 1, ["N"])],
                              [helper.make_tensor_value_info("Y", 1, ["N"])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    return model.SerializeToString()


# Found by the fuzzer (cases 1:6 and 1:798): names that are not str raised
# AttributeError ('int' object has no attribute 'encode') from inside the
# binding; onnxruntime's pybind layer raises TypeError.
def test_non_str_output_name_is_a_type_error(rt):
    s = rt.InferenceSession(_identity(), providers=["CPUExecutionProvider"])
    with pytest.raises(TypeError):
        s.run([1], {"X": np.ones(2, np.float32)})
    np.testing.assert_array_equal(s.run(None, {"X": np.ones(2, np.float32)})[0], np.ones(2, np.float32))


def test_non_str_iobinding_name_is_a_type_error(rt):
    s = rt.InferenceSession(_identity(), providers=["CPUExecutionProvider"])
    b = s.io_binding()
    with pytest.raises(TypeError):
        b.bind_cpu_input(1, np.ones(2, np.float32))
    with pytest.raises(TypeError):
        b.bind_output(2)
    b.bind_cpu_input("X", np.ones(2, np.float32))
    b.bind_output("Y")
    s.run_with_iobinding(b)
    np.testing.assert_array_equal(b.copy_outputs_to_cpu()[0], np.ones(2, np.float32))

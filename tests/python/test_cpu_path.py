"""ONYX_CPU_ISA: the SIMD path is chosen at run time and can be capped by the
environment, so CI runs the AVX2 path on an AVX-512 machine. Each case runs
in a fresh interpreter (the path is read once, when the library loads)."""

import json
import os
import subprocess
import sys

import pytest

from conftest import ONYX_PYTHONPATH

PROBE = r"""
import numpy as np, onnx
from onnx import helper, TensorProto
import onyxruntime as rt
print(rt.get_build_info())
# 41 values a row: every path's vectors end in a masked tail.
nodes = [helper.make_node("Softmax", ["x"], ["y"], axis=-1), helper.make_node("LogSoftmax", ["x"], ["z"], axis=-1)]
g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 41])],
                      [helper.make_tensor_value_info(n, TensorProto.FLOAT, [3, 41]) for n in ("y", "z")])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
x = np.linspace(-5, 5, 123, dtype=np.float32).reshape(3, 41)
try:
    y, z = rt.InferenceSession(m.SerializeToString()).run(None, {"x": x})
except Exception as e:
    print("ERROR", type(e).__name__, e)
else:
    e = np.exp(x - x.max(-1, keepdims=True))
    s = e.sum(-1, keepdims=True)
    print("MAXDIFF", max(float(np.abs(y - e / s).max()),
                         float(np.abs(z - (x - x.max(-1, keepdims=True) - np.log(s))).max())))
"""


# The start of a float kernel probe run on every path (test_conv_*): imports,
# a seeded `rng`, `rand(*shape)` of float32 normals, a `results` dict.
FLOAT_PROBE_HEAD = r"""
import json
import numpy as np
from onnx import helper, numpy_helper, TensorProto
from onnx.reference import ReferenceEvaluator
import onyxruntime as rt

rng = np.random.default_rng(0)
F = TensorProto.FLOAT
results = {}

def rand(*shape):
    return rng.standard_normal(shape).astype(np.float32)
"""

# FLOAT_PROBE_HEAD and `conv_model(xshape, W, bias, attrs, tail, residual)`:
# one Conv (constant W, B) then optionally + input z and a tail op (op,
# attrs; Clip to [0, 6]) (test_conv_simd_paths, test_conv_strided).
CONV_PROBE_HEAD = FLOAT_PROBE_HEAD + r"""
def conv_model(xshape, W, bias, attrs, tail=None, residual=False):
    inits = [numpy_helper.from_array(W, "W")] + ([numpy_helper.from_array(bias, "B")] if bias is not None else [])
    nodes = [helper.make_node("Conv", ["x", "W"] + (["B"] if bias is not None else []), ["c"], **attrs)]
    inputs = [helper.make_tensor_value_info("x", F, xshape)]
    cur = "c"
    if residual:
        inputs.append(helper.make_tensor_value_info("z", F, None))
        nodes.append(helper.make_node("Add", [cur, "z"], ["s"]))
        cur = "s"
    if tail is not None:
        op, kw = tail
        extra = []
        if op == "Clip":
            inits += [numpy_helper.from_array(np.array(0, np.float32), "lo"), numpy_helper.from_array(np.array(6, np.float32), "hi")]
            extra = ["lo", "hi"]
        nodes.append(helper.make_node(op, [cur] + extra, ["y"], **kw))
        cur = "y"
    g = helper.make_graph(nodes, "g", inputs, [helper.make_tensor_value_info(cur, F, None)], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
"""

def _probe(isa, script=PROBE, timeout=120):
    """Runs `script` in a fresh interpreter with ONYX_CPU_ISA=isa (None: unset); its stdout."""
    env = dict(os.environ, PYTHONPATH=ONYX_PYTHONPATH)
    env.pop("ONYX_CPU_ISA", None)
    if isa is not None:
        env["ONYX_CPU_ISA"] = isa
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=timeout)
    assert out.returncode == 0, out.stderr
    return out.stdout


def _probe_results(isa, script, timeout=600):
    """Runs a probe that prints CPU_PATH and RESULTS <json> on path `isa`: checks that it ran
    there and returns the results."""
    lines = _probe(isa, script, timeout=timeout).splitlines()
    info = [l for l in lines if l.startswith("CPU_PATH")][0]
    assert f"cpu path={isa}" in info, info
    return json.loads([l for l in lines if l.startswith("RESULTS ")][0][len("RESULTS "):])


def _hardware_best():
    flags = open("/proc/cpuinfo").read()
    if all(f in flags for f in (" avx512f", " avx512dq", " avx512bw", " avx512vl")):
        return "avx512"
    return "avx2" if " avx2" in flags and " fma" in flags else "baseline"


def _paths():
    """The SIMD paths this machine can run, widest first (ONYX_CPU_ISA values)."""
    best = _hardware_best()
    return [p for p in ("avx512", "avx2", "baseline") if p == "baseline" or p == best or (p == "avx2" and best == "avx512")]


def test_default_path_is_the_cpus_best():
    out = _probe(None)
    assert "cpu path=%s (OpenBLAS " % _hardware_best() in out
    assert float(out.split("MAXDIFF")[1]) < 1e-6


@pytest.mark.parametrize("isa", ["avx2", "baseline"])
def test_capped_path_is_used_and_agrees(isa):
    if isa == "avx2" and _hardware_best() == "baseline":
        pytest.skip("this CPU has no AVX2: the cap cannot widen the path")
    out = _probe(isa)
    assert "cpu path=%s (OpenBLAS " % isa in out
    assert float(out.split("MAXDIFF")[1]) < 1e-6


def test_unknown_path_is_refused_naming_the_variable():
    out = _probe("sse9")
    assert "ERROR InvalidArgument" in out
    assert "ONYX_CPU_ISA='sse9'" in out and "avx512, avx2 or baseline" in out

"""Kernels that pack a constant weight into a copy of their own at session
creation (KernelInfo::ReleaseConstantInput) let the session free the
original: the weight is held once, not twice. An initializer that anything
else still reads (another node, a graph output, a subgraph) keeps its data."""

import os
import subprocess
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

from conftest import ONYX_PYTHONPATH

K, N = 2048, 4096  # an 8 MiB int8 weight

PROBE = r"""
import sys, numpy as np
sys.path.insert(0, sys.argv[1])
import onyxruntime as rt
def rss_mib():
    return int(open("/proc/self/statm").read().split()[1]) * 4096 / 2**20
a = np.random.default_rng(1).integers(0, 255, (3, %d)).astype(np.uint8)
# A first session pays the process's one-time costs (operator schemas, pools).
from onnx import helper, TensorProto
g = helper.make_graph([helper.make_node("Neg", ["x"], ["y"])], "warm",
                      [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])])
warm = rt.InferenceSession(helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)]).SerializeToString())
warm.run(None, {"x": np.ones(1, np.float32)})
before = rss_mib()
sess = rt.InferenceSession(sys.argv[2])
grown = rss_mib() - before
outs = [sess.run(None, {"a": a}) for _ in range(2)]
np.savez(sys.argv[3], *outs[1])
assert all(np.array_equal(x, y) for x, y in zip(*outs))
print(grown)
""" % K


def _model(path, extra_reader):
    w = np.random.default_rng(0).integers(-128, 128, (K, N)).astype(np.int8)
    nodes = [helper.make_node("MatMulInteger", ["a", "w"], ["y"])]
    outputs = [helper.make_tensor_value_info("y", TensorProto.INT32, [3, N])]
    if extra_reader:
        # A reader that does not pack: the data must stay.
        nodes.append(helper.make_node("ReduceMax", ["w"], ["wmax"], keepdims=0))
        outputs.append(helper.make_tensor_value_info("wmax", TensorProto.INT8, []))
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("a", TensorProto.UINT8, [3, K])], outputs,
                          [numpy_helper.from_array(w, "w")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)])
    m.ir_version = 8
    with open(path, "wb") as f:
        f.write(m.SerializeToString())
    return w


def _probe(tmp_path, extra_reader):
    path = str(tmp_path / ("m%d.onnx" % extra_reader))
    w = _model(path, extra_reader)
    out = str(tmp_path / "out.npz")
    r = subprocess.run([sys.executable, "-c", PROBE, ONYX_PYTHONPATH, path, out], capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    got = np.load(out)
    a = np.random.default_rng(1).integers(0, 255, (3, K)).astype(np.uint8)
    np.testing.assert_array_equal(got["arr_0"], a.astype(np.int64) @ w.astype(np.int64))
    if extra_reader:
        assert got["arr_1"] == w.max()
    return float(r.stdout.strip().splitlines()[-1])


def test_packed_weight_is_held_once_unless_another_node_reads_it(tmp_path):
    weight_mib = K * N / 2 ** 20
    once = _probe(tmp_path, extra_reader=False)
    kept = _probe(tmp_path, extra_reader=True)
    # The packed copy (about the weight's size) and no second full copy ...
    assert once < 1.5 * weight_mib, (once, weight_mib)
    # ... while a weight another kernel reads keeps its data beside the pack.
    assert kept - once > 0.7 * weight_mib, (kept, once, weight_mib)

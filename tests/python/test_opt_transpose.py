"""transpose_optimizer: two Transposes in a row become one (or none when they
cancel), and a Transpose swapping the last two dims into a MatMul becomes
com.microsoft FusedMatMul with transA/transB."""

import numpy as np
import pytest
from onnx import helper

from opt_fusion_util import ONYX_ONLY, F, check_fusion, const, make_model

pytestmark = ONYX_ONLY

rng = np.random.default_rng(53)
X = rng.standard_normal((2, 3, 4, 5)).astype(np.float32)


def _pair(p1, p2, outputs=("y",), extra=()):
    nodes = [helper.make_node("Transpose", ["x"], ["t1"], perm=p1), helper.make_node("Transpose", ["t1"], ["t2"], perm=p2),
             helper.make_node("Relu", ["t2"], ["y"])] + list(extra)
    return make_model(nodes, [("x", F, ["b", 3, 4, 5])], [(o, F, None) for o in outputs])


def test_inverse_pair_cancels(onyx, tmp_path):
    check_fusion(onyx, _pair([0, 2, 3, 1], [0, 3, 1, 2]), {"x": X}, tmp_path, present={"Relu": 1},
                 absent=["Transpose", "Identity"])


def test_pair_merges(onyx, tmp_path):
    saved = check_fusion(onyx, _pair([0, 2, 1, 3], [0, 1, 3, 2]), {"x": X}, tmp_path, present={"Transpose": 1})
    t = [n for n in saved.graph.node if n.op_type == "Transpose"][0]
    assert list(t.input) == ["x"] and list(t.attribute[0].ints) == [0, 2, 3, 1]


def test_default_perm_pair_cancels(onyx, tmp_path):
    m = _pair([3, 2, 1, 0], [3, 2, 1, 0])
    for n in m.graph.node[:2]:
        del n.attribute[:]  # perm defaults to reversing the dims
    check_fusion(onyx, m, {"x": X}, tmp_path, absent=["Transpose"])


def test_inner_read_elsewhere_stays(onyx, tmp_path):
    m = _pair([0, 2, 1, 3], [0, 2, 1, 3], outputs=("y", "z"), extra=[helper.make_node("Neg", ["t1"], ["z"])])
    saved = check_fusion(onyx, m, {"x": X}, tmp_path, present={"Transpose": 1, "Neg": 1})
    assert [n for n in saved.graph.node if n.op_type == "Relu"][0].input[0] == "x"


def _matmul(side, perm, outputs=("y",), const_b=False):
    a_shape, b_shape = [2, 4, 5], [2, 5, 6]
    ta = side == "A"
    nodes = []
    if ta:
        nodes.append(helper.make_node("Transpose", ["a"], ["at"], perm=perm))
        a_shape = [2, 5, 4]
    else:
        nodes.append(helper.make_node("Transpose", ["b"], ["bt"], perm=perm))
        b_shape = [2, 6, 5]
    nodes.append(helper.make_node("MatMul", ["at" if ta else "a", "bt" if not ta else "b"], ["y"]))
    inputs = [("a", F, ["n"] + a_shape[1:])]
    inits = []
    feeds = {"a": rng.standard_normal(a_shape).astype(np.float32)}
    bval = rng.standard_normal(b_shape).astype(np.float32)
    if const_b:
        inits.append(const("b", bval))
    else:
        inputs.append(("b", F, ["n"] + b_shape[1:]))
        feeds["b"] = bval
    return make_model(nodes, inputs, [(o, F, None) for o in outputs], inits), feeds


@pytest.mark.parametrize("side", ["A", "B"])
def test_transpose_into_matmul(onyx, tmp_path, side):
    m, feeds = _matmul(side, [0, 2, 1])
    saved = check_fusion(onyx, m, feeds, tmp_path, present={"com.microsoft:FusedMatMul": 1},
                         absent=["Transpose", "MatMul"])
    attrs = {a.name: a.i for a in saved.graph.node[0].attribute}
    assert attrs["transA"] == (side == "A") and attrs["transB"] == (side == "B")


def test_levels(onyx, tmp_path):
    m, feeds = _matmul("B", [0, 2, 1])
    check_fusion(onyx, m, feeds, tmp_path, level="ORT_DISABLE_ALL", present={"Transpose": 1, "MatMul": 1})
    check_fusion(onyx, m, feeds, tmp_path, level="ORT_ENABLE_BASIC", present={"com.microsoft:FusedMatMul": 1})
    check_fusion(onyx, m, feeds, tmp_path, disabled="TransposeOptimizer", present={"Transpose": 1, "MatMul": 1})


@pytest.mark.parametrize("case", ["batch_perm", "read_elsewhere", "constant"])
def test_matmul_near_misses(onyx, tmp_path, case):
    if case == "batch_perm":  # moves the batch dim: not a transA/transB
        nodes = [helper.make_node("Transpose", ["b"], ["bt"], perm=[1, 0, 2]),
                 helper.make_node("MatMul", ["a", "bt"], ["y"])]
        m = make_model(nodes, [("a", F, [2, 4, 5]), ("b", F, [5, 2, 6])], [("y", F, None)])
        feeds = {"a": rng.standard_normal((2, 4, 5)).astype(np.float32),
                 "b": rng.standard_normal((5, 2, 6)).astype(np.float32)}
        kept = {"Transpose": 1, "MatMul": 1}
    elif case == "read_elsewhere":
        m, feeds = _matmul("B", [0, 2, 1], outputs=("y", "bt"))
        kept = {"Transpose": 1, "MatMul": 1}
    else:  # constant folding transposes the weight instead; MatMul keeps its packed B
        m, feeds = _matmul("B", [0, 2, 1], const_b=True)
        kept = {"MatMul": 1}
    check_fusion(onyx, m, feeds, tmp_path, present=kept, absent=["com.microsoft:FusedMatMul"])

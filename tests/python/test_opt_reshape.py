"""reshape_fusion: Reshape(Reshape(X)) becomes one Reshape when the outer
shape does not copy dims of the intermediate; a Reshape to X's own shape goes."""

import numpy as np
from onnx import helper

from opt_fusion_util import ONYX_ONLY, F, check_fusion, const, make_model

pytestmark = ONYX_ONLY

rng = np.random.default_rng(61)
X = rng.standard_normal((2, 3, 4)).astype(np.float32)


def _chain(s1, s2, outputs=("y",), extra=(), allowzero=0):
    nodes = [helper.make_node("Reshape", ["x", "s1"], ["r1"]),
             helper.make_node("Reshape", ["r1", "s2"], ["r2"], allowzero=allowzero),
             helper.make_node("Relu", ["r2"], ["y"])] + list(extra)
    return make_model(nodes, [("x", F, ["b", 3, 4])], [(o, F, None) for o in outputs],
                      [const("s1", s1, np.int64), const("s2", s2, np.int64)])


def test_chain_collapses(onyx, tmp_path):
    saved = check_fusion(onyx, _chain([6, 4], [4, -1]), {"x": X}, tmp_path, present={"Reshape": 1})
    r = [n for n in saved.graph.node if n.op_type == "Reshape"][0]
    assert r.input[0] == "x"


def test_allowzero_outer_collapses(onyx, tmp_path):
    check_fusion(onyx, _chain([6, 4], [2, 12], allowzero=1), {"x": X}, tmp_path, present={"Reshape": 1})


def test_zero_copying_the_intermediate_stays(onyx, tmp_path):
    # 0 takes dim 0 of the intermediate (6), not of x (2).
    check_fusion(onyx, _chain([6, 4], [0, 2, 2]), {"x": X}, tmp_path, present={"Reshape": 2})


def test_inner_read_elsewhere(onyx, tmp_path):
    m = _chain([6, 4], [24], outputs=("y", "z"), extra=[helper.make_node("Neg", ["r1"], ["z"])])
    saved = check_fusion(onyx, m, {"x": X}, tmp_path, present={"Reshape": 2})
    assert sorted(n.input[0] for n in saved.graph.node if n.op_type == "Reshape") == ["x", "x"]


def test_same_shape_reshape_goes(onyx, tmp_path):
    m = make_model([helper.make_node("Reshape", ["x", "s"], ["r"]), helper.make_node("Relu", ["r"], ["y"])],
                   [("x", F, [2, 3, 4])], [("y", F, None)], [const("s", [2, 3, 4], np.int64)])
    check_fusion(onyx, m, {"x": X}, tmp_path, present={"Relu": 1}, absent=["Reshape", "Identity"])
    check_fusion(onyx, m, {"x": X}, tmp_path, level="ORT_DISABLE_ALL", present={"Reshape": 1})

"""matmul_scale_fusion: a float MatMul (or FusedMatMul) scaled by a constant
scalar, Div or Mul on its output or Mul/Div on an input, becomes
com.microsoft FusedMatMul with the scale in alpha (onnxruntime's
MatMulScaleFusion). Scales that are not constant scalars, that broadcast
the value to a bigger shape, divide by zero or sit on a value read
elsewhere stay as they are."""

import numpy as np
import pytest
from onnx import TensorProto, helper

from opt_fusion_util import ONYX_ONLY, F, check_fusion, const, make_model, op_counts, optimized

pytestmark = ONYX_ONLY

rng = np.random.default_rng(61)
FMM = "com.microsoft:FusedMatMul"
A = rng.standard_normal((2, 3, 4, 8)).astype(np.float32)
B = rng.standard_normal((2, 3, 8, 5)).astype(np.float32)
FEEDS = {"a": A, "b": B}
INPUTS = [("a", F, ["n", 3, 4, 8]), ("b", F, ["n", 3, 8, 5])]


def _alpha(saved):
    node = [n for n in saved.graph.node if n.op_type == "FusedMatMul"][0]
    return {a.name: helper.get_attribute_value(a) for a in node.attribute}.get("alpha", 1.0)


def _scaled_output(op, c, scale_first=False, outputs=("y",), extra=(), inputs=INPUTS):
    scaler = helper.make_node(op, ["c", "p"] if scale_first else ["p", "c"], ["y"])
    nodes = [helper.make_node("MatMul", ["a", "b"], ["p"]), scaler] + list(extra)
    return make_model(nodes, inputs, [(o, F, None) for o in outputs], [const("c", c)])


@pytest.mark.parametrize("op,c,alpha", [("Div", 8.0, 0.125), ("Mul", 0.3, 0.3), ("Div", 3.0, 1 / 3.0)])
def test_output_scale_folds(onyx, tmp_path, op, c, alpha):
    saved = check_fusion(onyx, _scaled_output(op, c), FEEDS, tmp_path, present={FMM: 1}, absent=["MatMul", op])
    assert abs(_alpha(saved) - alpha) <= 1e-7 * abs(alpha)
    assert list(saved.graph.node[0].input) == ["a", "b"] and list(saved.graph.node[0].output) == ["y"]


def test_scale_first_in_mul_and_scalar_of_rank_4(onyx, tmp_path):
    saved = check_fusion(onyx, _scaled_output("Mul", [[[[0.25]]]], scale_first=True), FEEDS, tmp_path,
                         present={FMM: 1}, absent=["MatMul", "Mul"])
    assert _alpha(saved) == 0.25


def test_input_scales_and_output_scale_multiply(onyx, tmp_path):
    nodes = [helper.make_node("Mul", ["ca", "a"], ["as"]), helper.make_node("Div", ["b", "cb"], ["bs"]),
             helper.make_node("MatMul", ["as", "bs"], ["p"]), helper.make_node("Div", ["p", "cy"], ["y"])]
    m = make_model(nodes, INPUTS, [("y", F, None)], [const("ca", 0.5), const("cb", 4.0), const("cy", 2.0)])
    saved = check_fusion(onyx, m, FEEDS, tmp_path, present={FMM: 1}, absent=["MatMul", "Mul", "Div"])
    assert _alpha(saved) == 0.0625 and list(saved.graph.node[0].input) == ["a", "b"]


def test_after_transpose_into_fused_matmul(onyx, tmp_path):
    """transpose_optimizer's FusedMatMul (transB) takes the scale too: attention's Q x K^T / sqrt(d)."""
    nodes = [helper.make_node("Transpose", ["k"], ["kt"], perm=[0, 1, 3, 2]),
             helper.make_node("MatMul", ["a", "kt"], ["p"]), helper.make_node("Div", ["p", "c"], ["y"])]
    m = make_model(nodes, [("a", F, ["n", 3, 4, 8]), ("k", F, ["n", 3, 6, 8])], [("y", F, None)], [const("c", 2.0)])
    feeds = {"a": A, "k": rng.standard_normal((2, 3, 6, 8)).astype(np.float32)}
    saved = check_fusion(onyx, m, feeds, tmp_path, present={FMM: 1}, absent=["MatMul", "Transpose", "Div"])
    attrs = {a.name: helper.get_attribute_value(a) for a in saved.graph.node[0].attribute}
    assert attrs["transB"] == 1 and attrs["alpha"] == 0.5


def test_existing_fused_matmul_alpha_multiplies(onyx, tmp_path):
    nodes = [helper.make_node("FusedMatMul", ["a", "b"], ["p"], domain="com.microsoft", alpha=3.0),
             helper.make_node("Mul", ["p", "c"], ["y"])]
    m = make_model(nodes, INPUTS, [("y", F, None)], [const("c", 0.5)], extra_opsets=[("com.microsoft", 1)])
    saved = check_fusion(onyx, m, FEEDS, tmp_path, present={FMM: 1}, absent=["Mul"])
    assert _alpha(saved) == 1.5


def test_constant_b_two_d(onyx, tmp_path):
    """A weight MatMul (B packed once at load) scaled after: FusedMatMul packs B too."""
    nodes = [helper.make_node("MatMul", ["a", "w"], ["p"]), helper.make_node("Mul", ["p", "c"], ["y"])]
    m = make_model(nodes, [INPUTS[0]], [("y", F, None)],
                   [const("w", rng.standard_normal((8, 7))), const("c", 1.5)])
    check_fusion(onyx, m, {"a": A}, tmp_path, present={FMM: 1}, absent=["MatMul", "Mul"])


def test_levels_and_disabled_by_name(onyx, tmp_path):
    m = _scaled_output("Div", 8.0)
    check_fusion(onyx, m, FEEDS, tmp_path, level="ORT_ENABLE_BASIC", present={"MatMul": 1, "Div": 1}, absent=[FMM])
    for name in ("MatMulScaleFusion", "matmul_scale_fusion"):
        check_fusion(onyx, m, FEEDS, tmp_path, disabled=name, present={"MatMul": 1, "Div": 1}, absent=[FMM])
    check_fusion(onyx, m, FEEDS, tmp_path, level="ORT_ENABLE_ALL", present={FMM: 1}, absent=["Div"])


@pytest.mark.parametrize("case", ["divided_by_product", "vector_scale", "scale_broadcasts_rank", "divide_by_zero",
                                  "product_read_elsewhere", "scale_is_input", "int_matmul"])
def test_not_fused(onyx, tmp_path, case):
    feeds = dict(FEEDS)
    kept = {"MatMul": 1}
    if case == "divided_by_product":  # c / (A x B) is no scale of the product
        m = _scaled_output("Div", 2.0, scale_first=True)
        kept["Div"] = 1
    elif case == "vector_scale":  # one scale per column
        m = _scaled_output("Mul", rng.uniform(0.5, 2.0, 5))
        kept["Mul"] = 1
    elif case == "scale_broadcasts_rank":  # [1,1,1,1,1] makes the 4-D product 5-D
        m = _scaled_output("Mul", np.full((1, 1, 1, 1, 1), 0.5))
        kept["Mul"] = 1
    elif case == "divide_by_zero":
        m = _scaled_output("Div", 0.0)
        kept["Div"] = 1
    elif case == "product_read_elsewhere":
        m = _scaled_output("Div", 2.0, outputs=("y", "z"), extra=[helper.make_node("Relu", ["p"], ["z"])])
        kept.update({"Div": 1, "Relu": 1})
    elif case == "scale_is_input":
        nodes = [helper.make_node("MatMul", ["a", "b"], ["p"]), helper.make_node("Div", ["p", "c"], ["y"])]
        m = make_model(nodes, INPUTS + [("c", F, [])], [("y", F, None)])
        feeds["c"] = np.array(3.0, np.float32)
        kept["Div"] = 1
    else:
        i32 = TensorProto.INT32
        nodes = [helper.make_node("MatMul", ["a", "b"], ["p"]), helper.make_node("Mul", ["p", "c"], ["y"])]
        m = make_model(nodes, [("a", i32, [2, 3]), ("b", i32, [3, 2])], [("y", i32, None)],
                       [const("c", 3, np.int32)])
        feeds = {"a": rng.integers(-5, 5, (2, 3)).astype(np.int32), "b": rng.integers(-5, 5, (3, 2)).astype(np.int32)}
        kept["Mul"] = 1
    check_fusion(onyx, m, feeds, tmp_path, present=kept, absent=[FMM])


def test_bad_shapes_name_the_fused_node_and_session_stays_usable(onyx, tmp_path):
    inputs = [("a", F, ["n", 3, 4, "ka"]), ("b", F, ["n", 3, "kb", 5])]
    sess, saved = optimized(onyx, _scaled_output("Div", 8.0, inputs=inputs), tmp_path)
    assert op_counts(saved)[FMM] == 1
    with pytest.raises(Exception) as info:
        sess.run(None, {"a": A, "b": rng.standard_normal((2, 3, 7, 5)).astype(np.float32)})
    msg = str(info.value)
    assert "FusedMatMul" in msg and "8" in msg and "7" in msg, msg
    np.testing.assert_allclose(sess.run(None, FEEDS)[0], np.matmul(A, B) / 8.0, rtol=1e-5, atol=1e-5)

"""matmul_integer_to_float_fusion: MatMulInteger -> Cast(float) -> Mul(scale)
[-> Add(bias)], as onnxruntime.quantization.quantize_dynamic writes it,
becomes com.microsoft MatMulIntegerToFloat; the values stay bit for bit those
of the unfused graph (ORT_DISABLE_ALL) and within 1e-4 of onnxruntime's.
Shapes the kernel cannot take (A's zero point per row, a scale that
broadcasts over rows, B not a constant) stay unfused."""

import numpy as np
import pytest
from onnx import TensorProto, helper

from opt_fusion_util import ONYX_ONLY, F, check_fusion, check_not_fused, const, make_model, op_counts, optimized

pytestmark = ONYX_ONLY

rng = np.random.default_rng(7)
FUSED = "com.microsoft:MatMulIntegerToFloat"
K, N = 40, 24
X = rng.standard_normal((2, 5, K)).astype(np.float32)


def _model(bias=True, per_column=False, w_type=np.int8, a_zp_shape=(), scale_shape=None, const_w=True,
           swap_mul=False):
    """DynamicQuantizeLinear(x) -> MatMulInteger(xq, w, xzp, wzp) -> Cast -> Mul(s) [-> Add(b)],
    s = Mul(x_scale, w_scale)."""
    info = np.iinfo(w_type)
    w = rng.integers(info.min, info.max, (K, N), endpoint=True).astype(w_type)
    w_scale = rng.uniform(0.01, 0.05, N if per_column else ()).astype(np.float32)
    w_zp = np.zeros(N if per_column else (), w_type) + (0 if w_type == np.int8 else 128)
    nodes = [helper.make_node("DynamicQuantizeLinear", ["x"], ["xq", "xs", "xz"])]
    a_zp = "xz"
    if a_zp_shape != ():
        nodes.append(helper.make_node("Reshape", ["xz", "zshape"], ["xz2"]))
        a_zp = "xz2"
    nodes += [helper.make_node("Mul", ["xs", "ws"], ["s0"])]
    s = "s0"
    if scale_shape is not None:
        nodes.append(helper.make_node("Reshape", ["s0", "sshape"], ["s1"]))
        s = "s1"
    nodes += [helper.make_node("MatMulInteger", ["xq", "w", a_zp, "wz"], ["i"]),
              helper.make_node("Cast", ["i"], ["f"], to=TensorProto.FLOAT),
              helper.make_node("Mul", [s, "f"] if swap_mul else ["f", s], ["y" if not bias else "m"])]
    inits = [const("ws", w_scale), const("wz", w_zp, w_type)]
    inputs = [("x", F, list(X.shape))]
    if const_w:
        inits.append(const("w", w, w_type))
    else:
        inputs.append(("w", TensorProto.INT8 if w_type == np.int8 else TensorProto.UINT8, [K, N]))
    if bias:
        nodes.append(helper.make_node("Add", ["m", "b"], ["y"]))
        inits.append(const("b", rng.standard_normal(N)))
    if a_zp_shape != ():
        inits.append(const("zshape", a_zp_shape, np.int64))
    if scale_shape is not None:
        inits.append(const("sshape", scale_shape, np.int64))
    feeds = {"x": X}
    if not const_w:
        feeds["w"] = w
    return make_model(nodes, inputs, [("y", F, None)], inits), feeds


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("per_column", [False, True])
@pytest.mark.parametrize("w_type", [np.int8, np.uint8])
def test_fuses_and_keeps_the_values(onyx, tmp_path, bias, per_column, w_type):
    m, feeds = _model(bias=bias, per_column=per_column, w_type=w_type)
    saved = check_fusion(onyx, m, feeds, tmp_path, present={FUSED: 1, "DynamicQuantizeLinear": 1},
                         absent=["MatMulInteger", "Cast", "Mul"] + (["Add"] if bias else []))
    assert len(saved.graph.node[-1].input) == (7 if bias else 6)
    # The scale product's Mul went: the node takes both factors.
    assert list(saved.graph.node[-1].input[2:4]) == ["xs", "ws"]
    # Bit for bit the unfused graph's floats: float(i) * (1 * s) + b is float(i) * s + b.
    fused, _ = optimized(onyx, m, tmp_path)
    base, _ = optimized(onyx, m, tmp_path, level="ORT_DISABLE_ALL")
    np.testing.assert_array_equal(fused.run(None, feeds)[0], base.run(None, feeds)[0])


def test_scale_first_in_mul(onyx, tmp_path):
    m, feeds = _model(swap_mul=True)
    check_fusion(onyx, m, feeds, tmp_path, present={FUSED: 1}, absent=["MatMulInteger", "Cast"])


@pytest.mark.parametrize("per_column", [False, True])
def test_scale_product_factors_in_either_order(onyx, tmp_path, per_column):
    """Mul(w_scale, x_scale): the per-tensor factor is the node's a_scale whichever side it is on."""
    m, feeds = _model(per_column=per_column)
    mul = [n for n in m.graph.node if n.op_type == "Mul" and list(n.input) == ["xs", "ws"]][0]
    mul.input[:] = ["ws", "xs"]
    saved = check_fusion(onyx, m, feeds, tmp_path, present={FUSED: 1}, absent=["MatMulInteger", "Cast", "Mul"])
    assert list(saved.graph.node[-1].input[2:4]) == (["xs", "ws"] if per_column else ["ws", "xs"])
    fused, _ = optimized(onyx, m, tmp_path)
    base, _ = optimized(onyx, m, tmp_path, level="ORT_DISABLE_ALL")
    np.testing.assert_array_equal(fused.run(None, feeds)[0], base.run(None, feeds)[0])


def test_scale_product_read_elsewhere_stays(onyx, tmp_path):
    m, feeds = _model(bias=False)
    m.graph.node.append(helper.make_node("Identity", ["s0"], ["s_out"]))
    m.graph.output.append(helper.make_tensor_value_info("s_out", F, None))
    saved = check_fusion(onyx, m, feeds, tmp_path, present={FUSED: 1, "Mul": 1}, absent=["MatMulInteger", "Cast"])
    fused_node = [n for n in saved.graph.node if n.op_type == "MatMulIntegerToFloat"][0]
    assert list(fused_node.input[2:4]) == ["xs", "ws"]


def test_disabled_by_name(onyx, tmp_path):
    m, feeds = _model()
    check_fusion(onyx, m, feeds, tmp_path, disabled="MatMulIntegerToFloatFusion",
                 present={"MatMulInteger": 1, "Cast": 1}, absent=[FUSED])


def test_a_zero_point_of_shape_1_fuses(onyx, tmp_path):
    m, feeds = _model(a_zp_shape=[1])
    check_fusion(onyx, m, feeds, tmp_path, present={FUSED: 1}, absent=["MatMulInteger"])


@pytest.mark.parametrize("case", ["scale_per_row", "runtime_w"])
def test_not_fused(onyx, tmp_path, case):
    if case == "scale_per_row":
        m, feeds = _model(scale_shape=[1, 1, 1])  # rank 3: it could broadcast over rows
    else:
        m, feeds = _model(const_w=False)
    check_not_fused(onyx, m, feeds, tmp_path, [FUSED], {"MatMulInteger": 1, "Cast": 1})


def test_a_zero_point_per_row_not_fused(onyx, tmp_path):
    # onnxruntime refuses a per-row zero point: checked against int64 numpy.
    M = 6
    a = rng.integers(0, 255, (M, K), endpoint=True).astype(np.uint8)
    w = rng.integers(-128, 127, (K, N), endpoint=True).astype(np.int8)
    az = rng.integers(0, 255, M).astype(np.uint8)
    nodes = [helper.make_node("MatMulInteger", ["a", "w", "az"], ["i"]),
             helper.make_node("Cast", ["i"], ["f"], to=TensorProto.FLOAT),
             helper.make_node("Mul", ["f", "s"], ["y"])]
    m = make_model(nodes, [("a", TensorProto.UINT8, [M, K]), ("az", TensorProto.UINT8, [M])], [("y", F, None)],
                   [const("w", w, np.int8), const("s", np.float32(0.02))], opset=13)
    sess, saved = optimized(onyx, m, tmp_path)
    assert FUSED not in op_counts(saved) and op_counts(saved)["MatMulInteger"] == 1
    want = ((a.astype(np.int64) - az.astype(np.int64)[:, None]) @ w.astype(np.int64)).astype(np.float32) * \
        np.float32(0.02)
    np.testing.assert_array_equal(sess.run(None, {"a": a, "az": az})[0], want)

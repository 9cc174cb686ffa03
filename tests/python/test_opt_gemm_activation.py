"""gemm_activation_fusion: Gemm followed by an activation becomes
com.microsoft FusedGemm with the activation in its epilogue (and the
activation's attributes as activation_alpha/beta/gamma); a 2-D MatMul + bias
Add that matmul_add_fusion turns into Gemm gets the same."""

import numpy as np
import pytest
from onnx import TensorProto, helper

from opt_fusion_util import ONYX_ONLY, F, check_fusion, const, make_model

pytestmark = ONYX_ONLY

rng = np.random.default_rng(41)
X = rng.standard_normal((4, 8)).astype(np.float32)
FUSED = "com.microsoft:FusedGemm"

ACTIVATIONS = [("Relu", {}), ("Sigmoid", {}), ("Tanh", {}), ("LeakyRelu", {"alpha": 0.2}),
               ("HardSigmoid", {"alpha": 0.3, "beta": 0.4}), ("Elu", {"alpha": 0.7}), ("Selu", {}),
               ("Softplus", {})]
# Parameters the fused node must spell out when the activation left them to defaults.
DEFAULTS = {"Selu": {"alpha": 1.67326319217681884765625, "gamma": 1.05070102214813232421875}}


def _gemm_model(act, attrs, trans_b=0, outputs=("y",), extra=()):
    w = rng.standard_normal((6, 8) if trans_b else (8, 6)) * 0.5
    nodes = [helper.make_node("Gemm", ["x", "w", "c"], ["g"], transB=trans_b, alpha=0.9, beta=1.1),
             helper.make_node(act, ["g"], ["y"], **attrs)] + list(extra)
    return make_model(nodes, [("x", F, ["n", 8])], [(o, F, None) for o in outputs],
                      [const("w", w), const("c", rng.standard_normal(6))])


@pytest.mark.parametrize("act,attrs", ACTIVATIONS, ids=[a for a, _ in ACTIVATIONS])
def test_gemm_activation_fuses(onyx, tmp_path, act, attrs):
    saved = check_fusion(onyx, _gemm_model(act, attrs, trans_b=1), {"x": X}, tmp_path, present={FUSED: 1},
                         absent=["Gemm", act])
    node = saved.graph.node[0]
    got = {a.name: helper.get_attribute_value(a) for a in node.attribute}
    assert got["activation"] == act.encode()
    assert got["transB"] == 1 and abs(got["alpha"] - 0.9) < 1e-7 and abs(got["beta"] - 1.1) < 1e-7
    for k, v in dict(DEFAULTS.get(act, {}), **attrs).items():
        assert abs(got["activation_" + k] - v) < 1e-6


def test_matmul_bias_relu_becomes_fused_gemm(onyx, tmp_path):
    nodes = [helper.make_node("MatMul", ["x", "w"], ["m"]), helper.make_node("Add", ["m", "b"], ["a"]),
             helper.make_node("Relu", ["a"], ["y"])]
    m = make_model(nodes, [("x", F, ["n", 8])], [("y", F, None)],
                   [const("w", rng.standard_normal((8, 6))), const("b", rng.standard_normal(6))])
    check_fusion(onyx, m, {"x": X}, tmp_path, present={FUSED: 1}, absent=["MatMul", "Add", "Relu", "Gemm"])


def test_levels(onyx, tmp_path):
    for level in ("ORT_DISABLE_ALL", "ORT_ENABLE_BASIC"):
        check_fusion(onyx, _gemm_model("Relu", {}), {"x": X}, tmp_path, level=level, present={"Gemm": 1},
                     absent=[FUSED])
    check_fusion(onyx, _gemm_model("Relu", {}), {"x": X}, tmp_path, disabled="GemmActivationFusion",
                 present={"Gemm": 1, "Relu": 1}, absent=[FUSED])


@pytest.mark.parametrize("case", ["gemm_output_read", "gemm_is_output", "not_an_activation", "double"])
def test_near_misses_are_not_fused(onyx, tmp_path, case):
    feeds = {"x": X}
    if case == "gemm_output_read":
        m = _gemm_model("Relu", {}, outputs=("y", "z"), extra=[helper.make_node("Neg", ["g"], ["z"])])
    elif case == "gemm_is_output":
        m = _gemm_model("Relu", {}, outputs=("y", "g"))
    elif case == "not_an_activation":
        m = _gemm_model("Softmax", {"axis": -1})
    else:
        m = _gemm_model("Relu", {})
        for v in list(m.graph.input) + list(m.graph.output):
            v.type.tensor_type.elem_type = TensorProto.DOUBLE
        for t in m.graph.initializer:
            t.CopyFrom(const(t.name, np.frombuffer(t.raw_data, np.float32).reshape(t.dims), np.float64))
        feeds = {"x": X.astype(np.float64)}
    check_fusion(onyx, m, feeds, tmp_path, present={"Gemm": 1}, absent=[FUSED])

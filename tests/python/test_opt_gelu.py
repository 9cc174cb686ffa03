"""gelu_fusion and bias_gelu_fusion: GELU written out op by op (the erf form
BERT exports, the tanh approximation of GPT-2) becomes com.microsoft Gelu /
FastGelu, and a Linear layer's bias Add in front of it joins it (BiasGelu,
FastGelu with bias). Near misses stay as they are."""

import math

import numpy as np
import pytest
from onnx import helper

from opt_fusion_util import ONYX_ONLY, F, check_fusion, const, make_model

pytestmark = ONYX_ONLY

H = 12
rng = np.random.default_rng(31)
X = (rng.standard_normal((2, 3, H)) * 2).astype(np.float32)
FEEDS = {"x": X}


def _erf_nodes(x, out, grouping="xg_half", scale="div", sqrt2=math.sqrt(2.0)):
    nodes = [helper.make_node("Div", [x, "sqrt2"], ["u"]) if scale == "div"
             else helper.make_node("Mul", ["inv_sqrt2", x], ["u"]),
             helper.make_node("Erf", ["u"], ["e"]),
             helper.make_node("Add", ["e", "one"], ["g"])]
    if grouping == "xg_half":  # (x * g) * 0.5, as torch.onnx writes it
        nodes += [helper.make_node("Mul", [x, "g"], ["p"]), helper.make_node("Mul", ["p", "half"], [out])]
    elif grouping == "half_x_g":  # (x * 0.5) * g
        nodes += [helper.make_node("Mul", ["half", x], ["hx"]), helper.make_node("Mul", ["hx", "g"], [out])]
    else:  # x * (g * 0.5)
        nodes += [helper.make_node("Mul", ["g", "half"], ["hg"]), helper.make_node("Mul", [x, "hg"], [out])]
    inits = [const("sqrt2", sqrt2), const("inv_sqrt2", 1 / sqrt2), const("one", 1.0), const("half", 0.5)]
    return nodes, inits


def _tanh_nodes(x, out, coeff=0.044715):
    nodes = [helper.make_node("Pow", [x, "three"], ["cube"]),
             helper.make_node("Mul", ["cube", "coeff"], ["c"]),
             helper.make_node("Add", [x, "c"], ["s"]),
             helper.make_node("Mul", ["s", "k"], ["inner"]),
             helper.make_node("Tanh", ["inner"], ["t"]),
             helper.make_node("Add", ["t", "one"], ["g"]),
             helper.make_node("Mul", [x, "half"], ["hx"]),
             helper.make_node("Mul", ["hx", "g"], [out])]
    inits = [const("three", 3.0), const("coeff", coeff), const("k", math.sqrt(2 / math.pi)), const("one", 1.0),
             const("half", 0.5)]
    return nodes, inits


def _model(nodes, inits, outputs=("y",)):
    used = {i for n in nodes for i in n.input}
    return make_model(nodes, [("x", F, ["b", "s", H])], [(o, F, None) for o in outputs],
                      [t for t in inits if t.name in used])


@pytest.mark.parametrize("grouping", ["xg_half", "half_x_g", "x_ghalf"])
@pytest.mark.parametrize("scale", ["div", "mul"])
def test_erf_gelu_fuses(onyx, tmp_path, grouping, scale):
    nodes, inits = _erf_nodes("x", "y", grouping, scale)
    check_fusion(onyx, _model(nodes, inits), FEEDS, tmp_path, present={"com.microsoft:Gelu": 1},
                 absent=["Erf", "Mul", "Div", "Add"])


def test_tanh_gelu_fuses(onyx, tmp_path):
    nodes, inits = _tanh_nodes("x", "y")
    check_fusion(onyx, _model(nodes, inits), FEEDS, tmp_path, present={"com.microsoft:FastGelu": 1},
                 absent=["Tanh", "Pow", "Mul", "Add"])


def test_disabled_level_keeps_pattern(onyx, tmp_path):
    nodes, inits = _erf_nodes("x", "y")
    for level in ("ORT_DISABLE_ALL", "ORT_ENABLE_BASIC"):
        check_fusion(onyx, _model(nodes, inits), FEEDS, tmp_path, level=level, present={"Erf": 1},
                     absent=["com.microsoft:Gelu"])
    check_fusion(onyx, _model(nodes, inits), FEEDS, tmp_path, disabled="GeluFusion", present={"Erf": 1},
                 absent=["com.microsoft:Gelu"])


@pytest.mark.parametrize("case", ["wrong_constant", "erf_output_read", "gate_is_output", "half_input", "bad_coeff"])
def test_near_misses_are_not_fused(onyx, tmp_path, case):
    feeds = dict(FEEDS)
    outputs = ("y",)
    if case == "bad_coeff":
        nodes, inits = _tanh_nodes("x", "y", coeff=0.05)
        check_fusion(onyx, _model(nodes, inits), feeds, tmp_path, present={"Tanh": 1},
                     absent=["com.microsoft:FastGelu"])
        return
    nodes, inits = _erf_nodes("x", "y", sqrt2=math.sqrt(3.0) if case == "wrong_constant" else math.sqrt(2.0))
    if case == "erf_output_read":
        outputs = ("y", "e2")
        nodes.append(helper.make_node("Relu", ["e"], ["e2"]))
    elif case == "gate_is_output":
        outputs = ("y", "g")
    model = _model(nodes, inits, outputs)
    if case == "half_input":
        # 0.5 arrives as a graph input: not a constant.
        model.graph.initializer.remove([t for t in model.graph.initializer if t.name == "half"][0])
        model.graph.input.append(helper.make_tensor_value_info("half", F, []))
        feeds["half"] = np.array(0.5, dtype=np.float32)
    check_fusion(onyx, model, feeds, tmp_path, present={"Erf": 1}, absent=["com.microsoft:Gelu"])


def _linear(gelu, bias_shape=(H,)):
    nodes, inits = (_erf_nodes if gelu == "erf" else _tanh_nodes)("lin", "y")
    nodes = [helper.make_node("MatMul", ["x", "w"], ["mm"]), helper.make_node("Add", ["mm", "bias"], ["lin"])] + nodes
    inits += [const("w", rng.standard_normal((H, H)) * 0.3), const("bias", rng.standard_normal(bias_shape))]
    return nodes, inits


@pytest.mark.parametrize("gelu,fused", [("erf", "com.microsoft:BiasGelu"), ("tanh", "com.microsoft:FastGelu")])
def test_bias_joins_gelu(onyx, tmp_path, gelu, fused):
    nodes, inits = _linear(gelu)
    saved = check_fusion(onyx, _model(nodes, inits), FEEDS, tmp_path, present={fused: 1, "MatMul": 1},
                         absent=["Add", "com.microsoft:Gelu"])
    node = [n for n in saved.graph.node if n.domain == "com.microsoft"][0]
    assert list(node.input) == ["mm", "bias"]


def test_bias_near_misses(onyx, tmp_path):
    # A [s, H] "bias" broadcasts over more than the last axis: no BiasGelu.
    x = rng.standard_normal((2, 3, H)).astype(np.float32)
    nodes, inits = _linear("erf", bias_shape=(3, H))
    m = make_model(nodes, [("x", F, ["b", 3, H])], [("y", F, None)], [t for t in inits if t.name in
                                                                       {i for n in nodes for i in n.input}])
    check_fusion(onyx, m, {"x": x}, tmp_path, present={"com.microsoft:Gelu": 1, "Add": 1},
                 absent=["com.microsoft:BiasGelu"])
    # The biased sum is also an output.
    nodes, inits = _linear("erf")
    check_fusion(onyx, _model(nodes, inits, outputs=("y", "lin")), FEEDS, tmp_path,
                 present={"com.microsoft:Gelu": 1, "Add": 1}, absent=["com.microsoft:BiasGelu"])
    check_fusion(onyx, _model(nodes, inits), FEEDS, tmp_path, disabled="BiasGeluFusion",
                 present={"com.microsoft:Gelu": 1, "Add": 1}, absent=["com.microsoft:BiasGelu"])

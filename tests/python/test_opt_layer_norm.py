"""layer_norm_fusion: LayerNorm as torch.onnx writes it out before opset 17
(ReduceMean/Sub/Pow/ReduceMean/Add/Sqrt/Div/Mul/Add) becomes one
LayerNormalization, and the RMSNorm pattern one SimplifiedLayerNormalization;
near misses stay as they are."""

import numpy as np
import pytest
from onnx import helper

from opt_fusion_util import ONYX_ONLY, F, check_fusion, const, make_model

pytestmark = ONYX_ONLY

H = 16
rng = np.random.default_rng(11)
X = rng.standard_normal((2, 5, H)).astype(np.float32) * 3 + 1


def _reduce_mean(inp, out, opset, axes=(-1,)):
    if opset >= 18:
        return [helper.make_node("ReduceMean", [inp, "axes_" + out], [out], keepdims=1)], \
            [const("axes_" + out, list(axes), np.int64)]
    return [helper.make_node("ReduceMean", [inp], [out], axes=list(axes), keepdims=1)], []


def _layer_norm_model(opset=17, axes=(-1,), beta=True, eps_input=False, gamma_shape=(H,), extra_output=None,
                      exponent=2.0):
    nodes, inits = [], []
    n, i = _reduce_mean("x", "mu", opset, axes)
    nodes += n
    inits += i
    nodes.append(helper.make_node("Sub", ["x", "mu"], ["d"]))
    nodes.append(helper.make_node("Pow", ["d", "two"], ["sq"]))
    n, i = _reduce_mean("sq", "var", opset, axes)
    nodes += n
    inits += i
    nodes += [helper.make_node("Add", ["var", "eps"], ["ve"]),
              helper.make_node("Sqrt", ["ve"], ["std"]),
              helper.make_node("Div", ["d", "std"], ["nrm"]),
              helper.make_node("Mul", ["nrm", "gamma"], ["y" if not beta else "scaled"])]
    inits += [const("two", exponent), const("gamma", rng.standard_normal(gamma_shape) * 0.5 + 1)]
    if beta:
        nodes.append(helper.make_node("Add", ["scaled", "beta"], ["y"]))
        inits.append(const("beta", rng.standard_normal(H) * 0.1))
    inputs = [("x", F, [None, None, H])]
    if eps_input:
        inputs.append(("eps", F, []))
    else:
        inits.append(const("eps", 1e-5))
    outputs = [("y", F, None)] + ([(extra_output, F, None)] if extra_output else [])
    return make_model(nodes, inputs, outputs, inits, opset=opset)


FEEDS = {"x": X}


@pytest.mark.parametrize("opset", [13, 17, 18])
@pytest.mark.parametrize("beta", [True, False])
def test_decomposed_layer_norm_fuses(onyx, tmp_path, opset, beta):
    saved = check_fusion(onyx, _layer_norm_model(opset, beta=beta), FEEDS, tmp_path,
                         present={"LayerNormalization": 1},
                         absent=["ReduceMean", "Sub", "Pow", "Sqrt", "Div", "Mul", "Add"])
    node = saved.graph.node[0]
    assert len(node.input) == (3 if beta else 2)
    attrs = {a.name: a for a in node.attribute}
    assert attrs["axis"].i == -1 and abs(attrs["epsilon"].f - 1e-5) < 1e-12


def test_positive_last_axis_fuses(onyx, tmp_path):
    check_fusion(onyx, _layer_norm_model(axes=(2,)), FEEDS, tmp_path, present={"LayerNormalization": 1})


def test_levels_and_disabling(onyx, tmp_path):
    model = _layer_norm_model()
    for level in ("ORT_DISABLE_ALL", "ORT_ENABLE_BASIC"):
        check_fusion(onyx, model, FEEDS, tmp_path, level=level, present={"ReduceMean": 2},
                     absent=["LayerNormalization"])
    check_fusion(onyx, model, FEEDS, tmp_path, level="ORT_ENABLE_ALL", present={"LayerNormalization": 1})
    check_fusion(onyx, model, FEEDS, tmp_path, disabled="LayerNormFusion", present={"ReduceMean": 2},
                 absent=["LayerNormalization"])


@pytest.mark.parametrize("case", ["wrong_axis", "two_axes", "extra_consumer", "graph_output", "eps_input",
                                  "gamma_broadcast", "gamma_scalar", "cube"])
def test_near_misses_are_not_fused(onyx, tmp_path, case):
    model = {
        "wrong_axis": lambda: _layer_norm_model(axes=(1,), gamma_shape=(H,)),
        "two_axes": lambda: _layer_norm_model(axes=(1, 2)),
        "eps_input": lambda: _layer_norm_model(eps_input=True),
        "gamma_broadcast": lambda: _layer_norm_model(gamma_shape=(5, H)),
        "gamma_scalar": lambda: _layer_norm_model(gamma_shape=(1,)),
        "cube": lambda: _layer_norm_model(exponent=3.0),
        "graph_output": lambda: _layer_norm_model(extra_output="std"),
        "extra_consumer": lambda: _extra_consumer_model(),
    }[case]()
    feeds = dict(FEEDS)
    if case == "eps_input":
        feeds["eps"] = np.array(1e-5, dtype=np.float32)
    check_fusion(onyx, model, feeds, tmp_path, present=["ReduceMean"],
                 absent=["LayerNormalization", "com.microsoft:SkipLayerNormalization"])


def _extra_consumer_model():
    """The centred value d also feeds a second output."""
    m = _layer_norm_model()
    m.graph.node.append(helper.make_node("Relu", ["d"], ["d_relu"]))
    m.graph.output.append(helper.make_tensor_value_info("d_relu", F, None))
    return m


def _rms_model(form="div", eps_input=False, weight=True):
    nodes = [helper.make_node("Pow", ["x", "two"], ["sq"]),
             helper.make_node("ReduceMean", ["sq"], ["ms"], axes=[-1], keepdims=1),
             helper.make_node("Add", ["ms", "eps"], ["mse"]),
             helper.make_node("Sqrt", ["mse"], ["rms"])]
    if form == "div":
        nodes.append(helper.make_node("Div", ["x", "rms"], ["nrm"]))
    else:
        nodes += [helper.make_node("Reciprocal", ["rms"], ["inv"]), helper.make_node("Mul", ["x", "inv"], ["nrm"])]
    inits = [const("two", 2.0), const("w", rng.standard_normal(H) * 0.5 + 1)]
    inputs = [("x", F, ["b", "s", H])]
    if eps_input:
        inputs.append(("eps", F, []))
    else:
        inits.append(const("eps", 1e-6))
    nodes.append(helper.make_node("Mul", ["w" if weight else "nrm", "nrm" if weight else "nrm"], ["y"]))
    return make_model(nodes, inputs, [("y", F, None)], inits)


@pytest.mark.parametrize("form", ["div", "reciprocal"])
def test_rms_norm_fuses(onyx, tmp_path, form):
    saved = check_fusion(onyx, _rms_model(form), FEEDS, tmp_path, present={"SimplifiedLayerNormalization": 1},
                         absent=["Pow", "ReduceMean", "Sqrt", "Mul", "Div", "Reciprocal"])
    attrs = {a.name: a for a in saved.graph.node[0].attribute}
    assert abs(attrs["epsilon"].f - 1e-6) < 1e-12


def test_rms_norm_near_misses(onyx, tmp_path):
    feeds = dict(FEEDS, eps=np.array(1e-6, dtype=np.float32))
    check_fusion(onyx, _rms_model(eps_input=True), feeds, tmp_path, present=["Pow"],
                 absent=["SimplifiedLayerNormalization"])
    # nrm * nrm instead of a weight vector
    check_fusion(onyx, _rms_model(weight=False), FEEDS, tmp_path, present=["Pow"],
                 absent=["SimplifiedLayerNormalization"])


def test_double_input_is_not_fused(onyx, tmp_path):
    """LayerNormalization here runs float only: a double LayerNorm stays."""
    m = _layer_norm_model()
    from onnx import TensorProto, numpy_helper
    m.graph.input[0].type.tensor_type.elem_type = TensorProto.DOUBLE
    m.graph.output[0].type.tensor_type.elem_type = TensorProto.DOUBLE
    for init in m.graph.initializer:
        if init.data_type == TensorProto.FLOAT:
            init.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(init).astype(np.float64), init.name))
    check_fusion(onyx, m, {"x": X.astype(np.float64)}, tmp_path, present=["ReduceMean"],
                 absent=["LayerNormalization"])

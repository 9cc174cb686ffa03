"""conv_add_fusion: Add(Conv(X), Z) [-> Relu] becomes one com.microsoft FusedConv
with Z as its fourth input (and the activation), only where that is exact:
Z of the Conv output's very shape, no other reader of the Conv output, the
sum before any activation. Results match level 0 and onnxruntime."""

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

F = TensorProto.FLOAT
rng = np.random.default_rng(5)


def _conv(name, x, out, cin, cout, bias=True):
    w = numpy_helper.from_array(rng.standard_normal((cout, cin, 3, 3)).astype(np.float32) * 0.2, name + "_w")
    inits = [w]
    ins = [x, w.name]
    if bias:
        b = numpy_helper.from_array(rng.standard_normal(cout).astype(np.float32), name + "_b")
        inits.append(b)
        ins.append(b.name)
    return helper.make_node("Conv", ins, [out], name=name, pads=[1, 1, 1, 1]), inits


def _model(nodes, inits, outputs, x_shape=("N", 4, 6, 6)):
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", F, list(x_shape))],
                              [helper.make_tensor_value_info(o, F, None) for o in outputs], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8  # what onnxruntime 1.31 reads
    return model


def _optimized(onyx, model, tmp_path, level="ORT_ENABLE_EXTENDED"):
    so = onyx.SessionOptions()
    so.graph_optimization_level = getattr(onyx.GraphOptimizationLevel, level)
    path = str(tmp_path / ("opt_%s.onnx" % level))
    so.optimized_model_filepath = path
    sess = onyx.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    return sess, onnx.load(path)


def _check_values(onyx, model, sess):
    x = rng.standard_normal((2, 4, 6, 6)).astype(np.float32)
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    want = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"]).run(None, {"x": x})
    for g, w in zip(sess.run(None, {"x": x}), want):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("bias", [True, False])
def test_residual_block_becomes_one_fused_conv(onyx, tmp_path, bias):
    # y = Relu(Conv2(Relu(Conv1(x))) + x): the residual sum and the Relu fold into Conv2.
    c1, i1 = _conv("c1", "x", "h", 4, 4)
    c2, i2 = _conv("c2", "hr", "h2", 4, 4, bias=bias)
    nodes = [c1, helper.make_node("Relu", ["h"], ["hr"]), c2, helper.make_node("Add", ["x", "h2"], ["s"]),
             helper.make_node("Relu", ["s"], ["y"])]
    model = _model(nodes, i1 + i2, ["y"])
    sess, opt = _optimized(onyx, model, tmp_path)
    ops = [(n.domain, n.op_type) for n in opt.graph.node]
    assert ops == [("com.microsoft", "FusedConv"), ("com.microsoft", "FusedConv")], ops
    last = opt.graph.node[1]
    assert len(last.input) == 4 and last.input[3] == "x" and last.output[0] == "y"
    assert (last.input[2] == "") == (not bias)
    assert helper.get_attribute_value([a for a in last.attribute if a.name == "activation"][0]) == b"Relu"
    _check_values(onyx, model, sess)
    # onnxruntime runs the saved model too (its contrib op).
    x = rng.standard_normal((1, 4, 6, 6)).astype(np.float32)
    np.testing.assert_allclose(ort.InferenceSession(opt.SerializeToString()).run(None, {"x": x})[0],
                               sess.run(None, {"x": x})[0], rtol=1e-5, atol=1e-5)


def test_z_computed_after_the_conv_in_model_order(onyx, tmp_path):
    # The sum's other operand is another branch listed after the Conv: the
    # fused node takes the Add's place, after both.
    c1, i1 = _conv("c1", "x", "a", 4, 4)
    c2, i2 = _conv("c2", "x", "b", 4, 4)
    nodes = [c1, c2, helper.make_node("Add", ["a", "b"], ["y"])]
    model = _model(nodes, i1 + i2, ["y"])
    sess, opt = _optimized(onyx, model, tmp_path)
    assert [n.op_type for n in opt.graph.node] == ["Conv", "FusedConv"]
    _check_values(onyx, model, sess)


def test_not_fused_where_it_would_change_results(onyx, tmp_path):
    c1, i1 = _conv("c1", "x", "h", 4, 4)
    bias = numpy_helper.from_array(rng.standard_normal((1, 4, 1, 1)).astype(np.float32), "chan")
    cases = {
        # Z broadcasts: [1,4,1,1] is not the Conv output's shape
        "broadcast": ([c1, helper.make_node("Add", ["h", "chan"], ["y"])], i1 + [bias], ["y"]),
        # the Conv output is read again
        "two_readers": ([c1, helper.make_node("Add", ["h", "x"], ["y"]), helper.make_node("Neg", ["h"], ["z"])],
                        i1, ["y", "z"]),
        # the activation comes before the sum
        "activation_first": ([c1, helper.make_node("Relu", ["h"], ["r"]), helper.make_node("Add", ["r", "x"], ["y"])],
                             i1, ["y"]),
    }
    for name, (nodes, inits, outs) in cases.items():
        model = _model(nodes, inits, outs)
        sess, opt = _optimized(onyx, model, tmp_path)
        assert any(n.op_type == "Add" for n in opt.graph.node), name
        assert all(len(n.input) <= 3 for n in opt.graph.node if n.op_type == "FusedConv"), name
        _check_values(onyx, model, sess)


def test_disabled_by_name(onyx, tmp_path):
    c1, i1 = _conv("c1", "x", "h", 4, 4)
    model = _model([c1, helper.make_node("Add", ["h", "x"], ["y"])], i1, ["y"])
    so = onyx.SessionOptions()
    so.add_session_config_entry("optimization.disable_specified_optimizers", "ConvAddFusion")
    so.optimized_model_filepath = str(tmp_path / "off.onnx")
    onyx.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    assert [n.op_type for n in onnx.load(str(tmp_path / "off.onnx")).graph.node] == ["Conv", "Add"]

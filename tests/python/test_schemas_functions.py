"""Operators from ONNX's own schemas: function bodies, model-local functions,
opset and type-constraint checks at load. Outputs are compared with
onnx.reference.ReferenceEvaluator and onnxruntime."""

import os
import tempfile

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

import onyxruntime as rt


def _model(nodes, inputs, outputs, opset=18, functions=(), extra_opsets=()):
    graph = helper.make_graph(nodes, "g", inputs, outputs)
    imports = [helper.make_opsetid("", opset)] + [helper.make_opsetid(d, v) for d, v in extra_opsets]
    m = helper.make_model(graph, opset_imports=imports, functions=list(functions))
    m.ir_version = 8
    return m


def _tensor(name, elem=TensorProto.FLOAT, shape=(2, 3)):
    return helper.make_tensor_value_info(name, elem, list(shape))


def _run_all(model, feeds):
    data = model.SerializeToString()
    ours = rt.InferenceSession(data, providers=["CPUExecutionProvider"]).run(None, feeds)
    theirs = ort.InferenceSession(data, providers=["CPUExecutionProvider"]).run(None, feeds)
    ref = ReferenceEvaluator(model).run(None, feeds)
    return ours, theirs, ref


@pytest.mark.parametrize("op,attrs", [
    ("HardSwish", {}),
    ("Mish", {}),
    ("Softsign", {}),
    ("ThresholdedRelu", {"alpha": 0.5}),
    ("Shrink", {"lambd": 0.7, "bias": 0.1}),
])
def test_function_operator_without_kernel_runs_as_its_body(op, attrs):
    m = _model([helper.make_node(op, ["x"], ["y"], name="f", **attrs)], [_tensor("x")], [_tensor("y")])
    x = np.random.default_rng(0).standard_normal((2, 3)).astype(np.float32) * 3
    ours, theirs, ref = _run_all(m, {"x": x})
    np.testing.assert_allclose(ours[0], ref[0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-5, atol=1e-6)


def test_expanded_nodes_are_named_after_the_node_they_came_from():
    m = _model([helper.make_node("HardSwish", ["x"], ["y"], name="hs")], [_tensor("x")], [_tensor("y")])
    with tempfile.TemporaryDirectory() as d:
        so = rt.SessionOptions()
        so.optimized_model_filepath = os.path.join(d, "opt.onnx")
        so.graph_optimization_level = rt.GraphOptimizationLevel.ORT_DISABLE_ALL
        rt.InferenceSession(m.SerializeToString(), so, providers=["CPUExecutionProvider"])
        saved = onnx.load(so.optimized_model_filepath)
    ops = [n.op_type for n in saved.graph.node]
    assert "HardSwish" not in ops and len(ops) >= 1
    assert all(n.name.startswith("hs/") for n in saved.graph.node), [n.name for n in saved.graph.node]


def test_context_dependent_body_is_built_for_the_input_types():
    # CastLike's body depends on the type of its second input.
    m = _model([helper.make_node("CastLike", ["x", "like"], ["y"])],
               [_tensor("x"), _tensor("like", TensorProto.INT64, (1,))], [_tensor("y", TensorProto.INT64)])
    x = np.array([[1.7, -2.2, 3.0], [0.0, 5.5, -0.4]], np.float32)
    ours, theirs, ref = _run_all(m, {"x": x, "like": np.zeros(1, np.int64)})
    assert ours[0].dtype == np.int64
    np.testing.assert_array_equal(ours[0], ref[0])
    np.testing.assert_array_equal(ours[0], theirs[0])


def _local_function(name="AddScaled", domain="local", body_ref_attr=True):
    scale_attr = helper.make_attribute_ref("alpha", onnx.AttributeProto.FLOAT) if body_ref_attr else None
    const = helper.make_node("Constant", [], ["a"], value_float=1.0) if not body_ref_attr else \
        helper.make_node("Constant", [], ["a"])
    if body_ref_attr:
        const.attribute.append(onnx.AttributeProto(name="value_float", ref_attr_name="alpha",
                                                   type=onnx.AttributeProto.FLOAT))
    del scale_attr
    return helper.make_function(
        domain, name, ["x", "y"], ["z"],
        [const, helper.make_node("Mul", ["x", "a"], ["xa"]), helper.make_node("Add", ["xa", "y"], ["z"])],
        [helper.make_opsetid("", 18)], attributes=[] if not body_ref_attr else ["alpha"])


def test_model_local_function_with_attribute_reference():
    f = _local_function()
    call = helper.make_node("AddScaled", ["x", "y"], ["z"], domain="local", alpha=2.5)
    m = _model([call], [_tensor("x"), _tensor("y")], [_tensor("z")], functions=[f], extra_opsets=[("local", 1)])
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    y = np.ones((2, 3), np.float32)
    ours, theirs, ref = _run_all(m, {"x": x, "y": y})
    np.testing.assert_allclose(ours[0], x * 2.5 + y)
    np.testing.assert_allclose(ours[0], theirs[0])
    np.testing.assert_allclose(ours[0], ref[0])


def test_model_local_function_calling_another():
    inner = _local_function("Inner", "local")
    outer = helper.make_function("local", "Outer", ["x"], ["z"],
                                 [helper.make_node("Inner", ["x", "x"], ["z"], domain="local", alpha=3.0)],
                                 [helper.make_opsetid("", 18), helper.make_opsetid("local", 1)])
    m = _model([helper.make_node("Outer", ["x"], ["z"], domain="local")], [_tensor("x")], [_tensor("z")],
               functions=[inner, outer], extra_opsets=[("local", 1)])
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    ours, theirs, _ = _run_all(m, {"x": x})
    np.testing.assert_allclose(ours[0], x * 3.0 + x)
    np.testing.assert_allclose(ours[0], theirs[0])


def _fails_at_load(model, *words):
    with pytest.raises(Exception) as e:
        rt.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    for w in words:
        assert w in str(e.value), str(e.value)
    # The process and other sessions go on.
    ok = _model([helper.make_node("Relu", ["x"], ["y"])], [_tensor("x")], [_tensor("y")])
    out = rt.InferenceSession(ok.SerializeToString()).run(None, {"x": -np.ones((2, 3), np.float32)})
    assert (out[0] == 0).all()
    return str(e.value)


def test_opset_from_the_future_is_refused():
    m = _model([helper.make_node("Relu", ["x"], ["y"])], [_tensor("x")], [_tensor("y")], opset=99)
    _fails_at_load(m, "opset 99", "ai.onnx")
    with pytest.raises(Exception):
        ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])


def test_input_type_outside_the_schema_constraints_is_refused():
    m = _model([helper.make_node("Sqrt", ["x"], ["y"], name="root")], [_tensor("x", TensorProto.INT64)],
               [_tensor("y", TensorProto.INT64)])
    _fails_at_load(m, "root", "Sqrt", "tensor(int64)", "tensor(float)")
    with pytest.raises(Exception):
        ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])


def test_function_that_calls_itself_is_refused():
    f = helper.make_function("local", "Loopy", ["x"], ["y"],
                             [helper.make_node("Loopy", ["x"], ["y"], domain="local")],
                             [helper.make_opsetid("", 18), helper.make_opsetid("local", 1)])
    m = _model([helper.make_node("Loopy", ["x"], ["y"], domain="local")], [_tensor("x")], [_tensor("y")],
               functions=[f], extra_opsets=[("local", 1)])
    _fails_at_load(m, "Loopy")


def test_call_of_an_undefined_local_function_is_refused():
    m = _model([helper.make_node("Missing", ["x"], ["y"], domain="local", name="call")], [_tensor("x")],
               [_tensor("y")], extra_opsets=[("local", 1)])
    _fails_at_load(m, "Missing", "local", "call")


def test_supported_operators_come_from_the_registry():
    ops = rt.get_supported_operators("CPUExecutionProvider")
    keys = {(d, o) for d, o, _, _ in ops}
    assert ("", "Loop") in keys and ("", "Conv") in keys and ("ai.onnx.ml", "Normalizer") in keys
    # A function operator without a kernel is not listed: it runs as its body.
    assert ("", "HardSwish") not in keys
    assert all(1 <= s <= e for _, _, s, e in ops)
    with pytest.raises(Exception) as e:
        rt.get_supported_operators("NoSuchExecutionProvider")
    assert "NoSuchExecutionProvider" in str(e.value)


def test_backend_is_compatible_reads_kernels_and_function_bodies():
    from onyxruntime.backend import backend as b

    fn = _model([helper.make_node("HardSwish", ["x"], ["y"])], [_tensor("x")], [_tensor("y")])
    assert b.OnyxRuntimeBackend.is_compatible(fn)
    local = _model([helper.make_node("AddScaled", ["x", "y"], ["z"], domain="local", alpha=1.0)],
                   [_tensor("x"), _tensor("y")], [_tensor("z")], functions=[_local_function()],
                   extra_opsets=[("local", 1)])
    assert b.OnyxRuntimeBackend.is_compatible(local)
    unknown = _model([helper.make_node("Mystery", ["x"], ["y"], domain="x.y")], [_tensor("x")], [_tensor("y")],
                     extra_opsets=[("x.y", 1)])
    assert not b.OnyxRuntimeBackend.is_compatible(unknown)
    assert not b.OnyxRuntimeBackend.is_compatible(fn, device="CUDA")


def test_a_declared_shape_inference_disproves_runs_with_a_warning(capfd):
    # An exporter declared Reshape's [3, 2] result as [2, 3]: onnxruntime runs
    # such models, so do we, and the log says what was overridden.
    g = helper.make_graph([helper.make_node("Reshape", ["x", "s"], ["y"], name="r")], "g",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])],
                          [helper.make_tensor("s", TensorProto.INT64, [2], [3, 2])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    sess = rt.InferenceSession(m.SerializeToString())
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_array_equal(sess.run(None, {"x": x})[0], x.reshape(3, 2))
    err = capfd.readouterr().err
    assert "node 'r' (Reshape): output 'y' is declared tensor(float) [2,3] but inferred tensor(float) [3,2]" in err, err
    assert "[W:onyxruntime" in err, err

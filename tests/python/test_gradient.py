"""ai.onnx.preview.training Gradient: the session writes the backward pass out
as ordinary operators. Each gradient is checked against central finite
differences of the same model's forward output, in float64, and the
analytical ones against numpy where a formula is short."""

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import onyxruntime as rt

TRAINING = "ai.onnx.preview.training"
D = TensorProto.DOUBLE


def _model(nodes, inputs, outputs, xs, y, zs=(), grad_inputs=None, opset=17, initializers=()):
    """`nodes` compute `y`; a Gradient node appends d sum(y)/dx for each x of xs
    as outputs 'grad_<x>'."""
    grad = helper.make_node("Gradient", list(grad_inputs or list(xs) + list(zs)), ["grad_" + x for x in xs],
                            name="the_gradient", domain=TRAINING, xs=list(xs), y=y, **({"zs": list(zs)} if zs else {}))
    outs = list(outputs) + [helper.make_tensor_value_info("grad_" + x, D, None) for x in xs]
    graph = helper.make_graph(list(nodes) + [grad], "g", inputs, outs, initializer=list(initializers))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset), helper.make_opsetid(TRAINING, 1)])


def _forward_model(model, y):
    """The same graph without the Gradient node, with `y` as its only output."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    keep = [n for n in m.graph.node if n.op_type != "Gradient"]
    del m.graph.node[:]
    m.graph.node.extend(keep)
    del m.graph.output[:]
    m.graph.output.extend([helper.make_tensor_value_info(y, D, None)])
    return m


def _numeric_grad(model, feeds, y, x, eps=1e-6):
    sess = rt.InferenceSession(_forward_model(model, y).SerializeToString())
    base = {k: np.array(v, dtype=np.float64) for k, v in feeds.items()}
    grad = np.zeros_like(base[x])
    flat = grad.reshape(-1)
    for i in range(flat.size):
        plus = {k: v.copy() for k, v in base.items()}
        minus = {k: v.copy() for k, v in base.items()}
        plus[x].reshape(-1)[i] += eps
        minus[x].reshape(-1)[i] -= eps
        fp = sess.run(None, plus)[0].sum()
        fm = sess.run(None, minus)[0].sum()
        flat[i] = (fp - fm) / (2 * eps)
    return grad


def _check(model, feeds, xs, y, rtol=1e-5, atol=1e-6):
    sess = rt.InferenceSession(model.SerializeToString())
    names = [o.name for o in sess.get_outputs()]
    got = dict(zip(names, sess.run(None, feeds)))
    for x in xs:
        want = _numeric_grad(model, feeds, y, x)
        assert got["grad_" + x].shape == feeds[x].shape, x
        np.testing.assert_allclose(got["grad_" + x], want, rtol=rtol, atol=atol, err_msg="d sum(%s)/d %s" % (y, x))
    return got


def _vi(name, shape):
    return helper.make_tensor_value_info(name, D, shape)


rng = np.random.default_rng(7)


def test_backend_suite_models_pass():
    # The two models of onnx's own suite, through the backend, exactly.
    from onnx.backend.test.case.model.gradient import Gradient  # noqa: F401
    a, b = np.array(1.0, np.float32), np.array(2.0, np.float32)
    add = helper.make_node("Add", ["a", "b"], ["c"])
    mul = helper.make_node("Mul", ["c", "a"], ["d"])
    grad = helper.make_node("Gradient", ["a", "b"], ["dd_da", "dd_db"], domain=TRAINING, xs=["a", "b"], y="d")
    f = TensorProto.FLOAT
    graph = helper.make_graph([add, mul, grad], "g", [helper.make_tensor_value_info(n, f, []) for n in "ab"],
                              [helper.make_tensor_value_info(n, f, []) for n in ("d", "dd_da", "dd_db")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 12), helper.make_opsetid(TRAINING, 1)])
    d, da, db = rt.InferenceSession(model.SerializeToString()).run(None, {"a": a, "b": b})
    assert (d, da, db) == (3.0, 4.0, 1.0)
    assert da.dtype == np.float32 and da.shape == ()


@pytest.mark.parametrize("op", ["Add", "Sub", "Mul", "Div", "Pow"])
@pytest.mark.parametrize("shapes", [([2, 3], [2, 3]), ([2, 3], [3]), ([4, 1, 3], [2, 1]), ([1], [2, 3])])
def test_broadcast_binary(op, shapes):
    sa, sb = shapes
    model = _model([helper.make_node(op, ["a", "b"], ["y"])], [_vi("a", sa), _vi("b", sb)], [_vi("y", None)],
                   ["a", "b"], "y")
    feeds = {"a": rng.uniform(0.5, 2.0, sa), "b": rng.uniform(0.5, 2.0, sb)}
    got = _check(model, feeds, ["a", "b"], "y")
    if op == "Mul" and sa == sb:
        np.testing.assert_allclose(got["grad_a"], feeds["b"])


def test_dynamic_shapes_undo_broadcast_at_run_time():
    # Symbolic dims: which axes were broadcast is found at run time.
    model = _model([helper.make_node("Mul", ["a", "b"], ["t"]), helper.make_node("Add", ["t", "c"], ["y"])],
                   [_vi("a", ["N", 3]), _vi("b", ["M"]), _vi("c", ["N", 1])], [_vi("y", None)], ["a", "b", "c"], "y")
    for n in (1, 4):
        feeds = {"a": rng.normal(size=(n, 3)), "b": rng.normal(size=(3,)), "c": rng.normal(size=(n, 1))}
        _check(model, feeds, ["a", "b", "c"], "y")


@pytest.mark.parametrize("op", ["Neg", "Abs", "Relu", "LeakyRelu", "Sigmoid", "Tanh", "Exp", "Log", "Sqrt",
                                "Reciprocal", "Sin", "Cos", "Erf", "Identity"])
def test_unary(op):
    model = _model([helper.make_node(op, ["x"], ["y"])], [_vi("x", [3, 4])], [_vi("y", None)], ["x"], "y")
    x = rng.uniform(0.2, 2.0, (3, 4)) * (1 if op in ("Log", "Sqrt") else rng.choice([-1, 1], (3, 4)))
    _check(model, {"x": x}, ["x"], "y")


def test_mlp_with_softmax_and_mean():
    # y = ReduceMean(Softmax(Relu(X W1 + b1) W2 + b2)) * weights, through Gemm and MatMul.
    nodes = [
        helper.make_node("Gemm", ["X", "W1", "b1"], ["h"], transB=1, alpha=0.7, beta=1.3),
        helper.make_node("Relu", ["h"], ["r"]),
        helper.make_node("MatMul", ["r", "W2"], ["m"]),
        helper.make_node("Add", ["m", "b2"], ["z"]),
        helper.make_node("Softmax", ["z"], ["p"], axis=-1),
        helper.make_node("Log", ["p"], ["lp"]),
        helper.make_node("Mul", ["lp", "T"], ["l"]),
        helper.make_node("ReduceMean", ["l"], ["y"], axes=[1], keepdims=0),
    ]
    inputs = [_vi("X", [4, 5]), _vi("W1", [6, 5]), _vi("b1", [6]), _vi("W2", [6, 3]), _vi("b2", [3]), _vi("T", [4, 3])]
    model = _model(nodes, inputs, [_vi("y", None)], ["X", "W1", "b1", "W2", "b2"], "y", zs=["T"])
    feeds = {"X": rng.normal(size=(4, 5)), "W1": rng.normal(size=(6, 5)), "b1": rng.normal(size=(6,)),
             "W2": rng.normal(size=(6, 3)), "b2": rng.normal(size=(3,)), "T": np.eye(3)[[0, 2, 1, 1]]}
    _check(model, feeds, ["X", "W1", "b1", "W2", "b2"], "y")


@pytest.mark.parametrize("ta,tb", [(0, 0), (1, 0), (0, 1), (1, 1)])
def test_gemm_transposes(ta, tb):
    sa = [5, 4] if ta else [4, 5]
    sb = [3, 5] if tb else [5, 3]
    model = _model([helper.make_node("Gemm", ["A", "B", "C"], ["y"], transA=ta, transB=tb, alpha=1.5, beta=0.5)],
                   [_vi("A", sa), _vi("B", sb), _vi("C", [1, 3])], [_vi("y", None)], ["A", "B", "C"], "y")
    _check(model, {"A": rng.normal(size=sa), "B": rng.normal(size=sb), "C": rng.normal(size=(1, 3))},
           ["A", "B", "C"], "y")


def test_batched_matmul_broadcast():
    model = _model([helper.make_node("MatMul", ["a", "b"], ["y"])], [_vi("a", [2, 4, 3]), _vi("b", [3, 5])],
                   [_vi("y", None)], ["a", "b"], "y")
    _check(model, {"a": rng.normal(size=(2, 4, 3)), "b": rng.normal(size=(3, 5))}, ["a", "b"], "y")


@pytest.mark.parametrize("opset", [11, 13])
def test_softmax_and_logsoftmax_across_opsets(opset):
    # Before opset 13 Softmax flattens at `axis`; from 13 it runs along `axis`.
    nodes = [helper.make_node("Softmax", ["x"], ["s"], axis=1), helper.make_node("LogSoftmax", ["s"], ["ls"], axis=1),
             helper.make_node("Mul", ["ls", "w"], ["y"])]
    model = _model(nodes, [_vi("x", [2, 3, 4]), _vi("w", [2, 3, 4])], [_vi("y", None)], ["x"], "y", zs=["w"],
                   opset=opset)
    _check(model, {"x": rng.normal(size=(2, 3, 4)), "w": rng.normal(size=(2, 3, 4))}, ["x"], "y")


@pytest.mark.parametrize("opset", [11, 13, 18])
@pytest.mark.parametrize("keepdims", [0, 1])
def test_reductions_shapes_and_transposes(opset, keepdims):
    axes = [0, 2]
    if opset >= 13:
        axes_init = [numpy_helper.from_array(np.array(axes, np.int64), "axes")]
        rsum = helper.make_node("ReduceSum", ["t", "axes"], ["s"], keepdims=keepdims)
    else:
        axes_init = []
        rsum = helper.make_node("ReduceSum", ["t"], ["s"], axes=axes, keepdims=keepdims)
    if opset >= 18:
        rmean = helper.make_node("ReduceMean", ["x", "mean_axes"], ["mn"], keepdims=1)
    else:
        rmean = helper.make_node("ReduceMean", ["x"], ["mn"], axes=[0, 1], keepdims=1)
    shape = numpy_helper.from_array(np.array([4, 6], np.int64), "shape")
    nodes = [helper.make_node("Transpose", ["x"], ["t"], perm=[1, 2, 0]), rsum,
             helper.make_node("Reshape", ["x", "shape"], ["r"]), helper.make_node("Sin", ["r"], ["sr"]),
             helper.make_node("Flatten", ["sr"], ["f"], axis=1), helper.make_node("ReduceSum", ["f"], ["fs"], keepdims=0),
             helper.make_node("Mul", ["s", "fs"], ["p"]), rmean, helper.make_node("Sum", ["p", "mn"], ["y0"]),
             helper.make_node("Unsqueeze", ["y0", "one"], ["y"]) if opset >= 13
             else helper.make_node("Unsqueeze", ["y0"], ["y"], axes=[1])]
    inits = axes_init + [shape, numpy_helper.from_array(np.array([1], np.int64), "one"),
                         numpy_helper.from_array(np.array([0, 1], np.int64), "mean_axes")]
    model = _model(nodes, [_vi("x", [2, 3, 4])], [_vi("y", None)], ["x"], "y", opset=opset, initializers=inits)
    _check(model, {"x": rng.normal(size=(2, 3, 4))}, ["x"], "y")


def test_expand_where_cast_and_float32_model():
    f = TensorProto.FLOAT
    nodes = [helper.make_node("Cast", ["a"], ["a64"], to=D), helper.make_node("Expand", ["a64", "shape"], ["e"]),
             helper.make_node("Greater", ["e", "zero"], ["pos"]), helper.make_node("Where", ["pos", "e", "b"], ["w"]),
             helper.make_node("Cast", ["w"], ["y"], to=f)]
    inits = [numpy_helper.from_array(np.array([3, 4], np.int64), "shape"),
             numpy_helper.from_array(np.array(0.0), "zero")]
    model = _model(nodes, [helper.make_tensor_value_info("a", f, [4]), _vi("b", [3, 1])],
                   [helper.make_tensor_value_info("y", f, None)], ["a", "b"], "y", initializers=inits)
    del model.graph.output[1:]
    model.graph.output.extend([helper.make_tensor_value_info("grad_a", f, None), _vi("grad_b", None)])
    a = np.array([1.0, -2.0, 3.0, -4.0], np.float32)
    b = rng.normal(size=(3, 1))
    ga, gb = rt.InferenceSession(model.SerializeToString()).run(["grad_a", "grad_b"], {"a": a, "b": b})
    assert ga.dtype == np.float32
    np.testing.assert_array_equal(ga, np.where(a > 0, 3.0, 0.0).astype(np.float32))
    np.testing.assert_array_equal(gb, np.full((3, 1), 2.0))


def test_evaluated_at_other_inputs_clones_the_forward_pass():
    # Gradient's inputs are other values than xs: y is differentiated there,
    # and the model's own forward outputs are unchanged.
    nodes = [helper.make_node("Mul", ["a", "a"], ["sq"]), helper.make_node("Mul", ["sq", "b"], ["y"]),
             helper.make_node("Add", ["a", "one"], ["a1"])]
    inits = [numpy_helper.from_array(np.array(1.0), "one")]
    model = _model(nodes, [_vi("a", [3]), _vi("b", [3])], [_vi("y", None)], ["a"], "y", zs=["b"],
                   grad_inputs=["a1", "b"], initializers=inits)
    a, b = rng.normal(size=3), rng.normal(size=3)
    y, ga = rt.InferenceSession(model.SerializeToString()).run(None, {"a": a, "b": b})
    np.testing.assert_allclose(y, a * a * b)
    np.testing.assert_allclose(ga, 2 * (a + 1) * b)


def test_x_that_y_does_not_depend_on_gets_zeros():
    model = _model([helper.make_node("Exp", ["a"], ["y"])], [_vi("a", [2]), _vi("b", [2, 2])], [_vi("y", None)],
                   ["a", "b"], "y")
    out = rt.InferenceSession(model.SerializeToString()).run(["grad_a", "grad_b"], {"a": np.zeros(2), "b": np.ones((2, 2))})
    np.testing.assert_array_equal(out[0], np.ones(2))
    np.testing.assert_array_equal(out[1], np.zeros((2, 2)))


def test_second_derivative_through_two_gradients():
    # d/da of (d sum(a^3)/da) = 6a
    g1 = helper.make_node("Gradient", ["a"], ["da"], name="g1", domain=TRAINING, xs=["a"], y="y")
    g2 = helper.make_node("Gradient", ["a"], ["dda"], name="g2", domain=TRAINING, xs=["a"], y="da")
    nodes = [helper.make_node("Mul", ["a", "a"], ["sq"]), helper.make_node("Mul", ["sq", "a"], ["y"]), g1, g2]
    graph = helper.make_graph(nodes, "g", [_vi("a", [3])], [_vi("da", None), _vi("dda", None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(TRAINING, 1)])
    a = np.array([1.0, -2.0, 0.5])
    da, dda = rt.InferenceSession(model.SerializeToString()).run(None, {"a": a})
    np.testing.assert_allclose(da, 3 * a * a)
    np.testing.assert_allclose(dda, 6 * a)


def test_listed_in_supported_operators_and_backend():
    assert (TRAINING, "Gradient", 1, 1) in [tuple(op) for op in rt.get_supported_operators()]
    import onyxruntime.backend as backend
    model = _model([helper.make_node("Exp", ["a"], ["y"])], [_vi("a", [2])], [_vi("y", None)], ["a"], "y")
    assert backend.is_compatible(model)


def _error(model, feeds=None):
    with pytest.raises(Exception) as e:
        sess = rt.InferenceSession(model.SerializeToString())
        sess.run(None, feeds or {})
    return str(e.value)


def test_bad_inputs_name_the_fault():
    # y depends on an input named neither in xs nor zs.
    m = _model([helper.make_node("Mul", ["a", "b"], ["y"])], [_vi("a", [2]), _vi("b", [2])], [_vi("y", None)],
               ["a"], "y")
    msg = _error(m)
    assert "the_gradient" in msg and "'b'" in msg and "neither in xs nor in zs" in msg
    # An operator without a derivative rule.
    m = _model([helper.make_node("Floor", ["a"], ["y"])], [_vi("a", [2])], [_vi("y", None)], ["a"], "y")
    msg = _error(m)
    assert "Floor" in msg and "no derivative rule" in msg and "the_gradient" in msg
    # An integer x.
    grad = helper.make_node("Gradient", ["i"], ["gi"], name="ig", domain=TRAINING, xs=["i"], y="y")
    graph = helper.make_graph([helper.make_node("Cast", ["i"], ["y"], to=D), grad], "g",
                              [helper.make_tensor_value_info("i", TensorProto.INT64, [2])],
                              [_vi("gi", None)])
    msg = _error(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                         helper.make_opsetid(TRAINING, 1)]))
    assert "'i'" in msg and "int64" in msg and "floating-point" in msg
    # Missing y.
    grad = helper.make_node("Gradient", ["a"], ["ga"], name="noy", domain=TRAINING, xs=["a"])
    graph = helper.make_graph([grad], "g", [_vi("a", [2])], [_vi("ga", None)])
    msg = _error(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                         helper.make_opsetid(TRAINING, 1)]))
    assert "noy" in msg and "'y'" in msg

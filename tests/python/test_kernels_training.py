"""Training-related kernels: the ai.onnx.preview.training optimizers Adagrad,
Adam and Momentum (standard, Nesterov; one or several tensors; float and
double), against onnx.reference.ReferenceEvaluator and the spec's formulas
(onnxruntime's CPU build has none of them); bad inputs name the node."""

import numpy as np
import pytest
from onnx import TensorProto, helper
from onnx.helper import np_dtype_to_tensor_dtype
from onnx.reference import ReferenceEvaluator

import onyxruntime as rt

RNG = np.random.default_rng(13)
_TRAINING = "ai.onnx.preview.training"


def _model(op, feeds, n_out, **attrs):
    names = list(feeds)
    node = helper.make_node(op, names, [f"o{i}" for i in range(n_out)], name="opt", domain=_TRAINING, **attrs)
    ins = [helper.make_tensor_value_info(n, np_dtype_to_tensor_dtype(v.dtype), v.shape) for n, v in feeds.items()]
    outs = [helper.make_tensor_value_info(f"o{i}", np_dtype_to_tensor_dtype(feeds[names[2]].dtype), None)
            for i in range(n_out)]
    graph = helper.make_graph([node], "g", ins, outs)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18), helper.make_opsetid(_TRAINING, 1)])
    m.ir_version = 8
    return m


def _ours(m, f):
    return rt.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, f)


def _check(m, f, want=None, tol=1e-5):
    ours = _ours(m, f)
    ref = ReferenceEvaluator(m).run(None, f)
    for o, r in zip(ours, ref):
        assert o.shape == r.shape
        np.testing.assert_allclose(o, r.astype(o.dtype), rtol=tol, atol=tol)
    if want is not None:
        for o, w in zip(ours, want):
            np.testing.assert_allclose(o, w, rtol=tol, atol=tol)
    return ours


def _tensors(n, dtype, shapes=((3,), (2, 4), (5,))):
    return [RNG.standard_normal(shapes[i % len(shapes)]).astype(dtype) for i in range(n)]


def _feeds(r, t, *lists):
    f = {"R": np.array(r, lists[0][0].dtype), "T": np.array(t, np.int64)}
    for k, lst in enumerate(lists):
        for i, v in enumerate(lst):
            f[f"in{k}_{i}"] = v
    return f


@pytest.mark.parametrize("n", [1, 3])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("t", [0, 4])
def test_adagrad(n, dtype, t):
    xs, gs, hs = _tensors(n, dtype), _tensors(n, dtype), [np.abs(v) for v in _tensors(n, dtype)]
    attrs = dict(decay_factor=0.1, epsilon=1e-5, norm_coefficient=0.01)
    m = _model("Adagrad", _feeds(0.1, t, xs, gs, hs), 2 * n, **attrs)
    want_x, want_h = [], []
    for x, g, h in zip(xs, gs, hs):
        r = 0.1 / (1 + t * 0.1)
        gr = 0.01 * x + g
        hn = h + gr * gr
        want_x.append(x - r * gr / (np.sqrt(hn) + 1e-5))
        want_h.append(hn)
    _check(m, _feeds(0.1, t, xs, gs, hs), want_x + want_h)


@pytest.mark.parametrize("n", [1, 2])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("t", [0, 3])
def test_adam(n, dtype, t):
    xs, gs, vs = _tensors(n, dtype), _tensors(n, dtype), _tensors(n, dtype)
    hs = [np.abs(v) for v in _tensors(n, dtype)]
    attrs = dict(alpha=0.85, beta=0.95, epsilon=1e-4, norm_coefficient=0.02, norm_coefficient_post=0.01)
    m = _model("Adam", _feeds(0.05, t, xs, gs, vs, hs), 3 * n, **attrs)
    _check(m, _feeds(0.05, t, xs, gs, vs, hs), tol=1e-4)


@pytest.mark.parametrize("mode", ["standard", "nesterov"])
@pytest.mark.parametrize("n", [1, 3])
@pytest.mark.parametrize("t", [0, 2])
def test_momentum(mode, n, t):
    xs, gs, vs = _tensors(n, np.float32), _tensors(n, np.float32), _tensors(n, np.float32)
    m = _model("Momentum", _feeds(0.1, t, xs, gs, vs), 2 * n, alpha=0.9, beta=0.5, mode=mode, norm_coefficient=0.1)
    _check(m, _feeds(0.1, t, xs, gs, vs))


def test_adam_default_attributes():
    xs, gs, vs, hs = _tensors(1, np.float32), _tensors(1, np.float32), _tensors(1, np.float32), _tensors(1, np.float32)
    hs = [np.abs(h) for h in hs]
    _check(_model("Adam", _feeds(0.01, 1, xs, gs, vs, hs), 3), _feeds(0.01, 1, xs, gs, vs, hs), tol=1e-4)


def _fails(m, f, *words):
    with pytest.raises(Exception) as e:
        _ours(m, f)
    for w in ("opt",) + words:
        assert w in str(e.value), str(e.value)


def test_optimizer_bad_inputs():
    x, g, h = np.ones(3, np.float32), np.ones(4, np.float32), np.ones(3, np.float32)
    f = _feeds(0.1, 1, [x], [g], [h])
    _fails(_model("Adagrad", f, 2), f, "input 3 (G of tensor 0)", "[4]", "[3]")
    f = _feeds(0.1, 1, [x], [x])
    _fails(_model("Adagrad", f, 2), f, "expected 2 + 3n inputs", "got 4")
    f = _feeds(0.1, 1, [x], [x], [h])
    f["R"] = np.ones(2, np.float32)
    _fails(_model("Adagrad", f, 2), f, "input 0 (R)", "scalar")
    with pytest.raises(Exception) as e:
        _ours(_model("Momentum", _feeds(0.1, 1, [x], [x], [h]), 2, alpha=0.9, beta=0.1, mode="heavy",
                     norm_coefficient=0.0), _feeds(0.1, 1, [x], [x], [h]))
    assert "heavy" in str(e.value)

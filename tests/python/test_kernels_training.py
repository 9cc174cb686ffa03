"""Training-related kernels: BatchNormalization and Dropout in training mode,
and the ai.onnx.preview.training optimizers Adagrad,
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


# --------------------------------------------------------------------------
# BatchNormalization, training_mode=1 (opset 14+)


def _bn_model(x, opset, n_out=3, **attrs):
    c = x.shape[1]
    elem = np_dtype_to_tensor_dtype(x.dtype)
    node = helper.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], ["y", "rm", "rv"][:n_out], name="bn",
                            **attrs)
    ins = [helper.make_tensor_value_info("x", elem, x.shape)] + [
        helper.make_tensor_value_info(n, elem, [c]) for n in ("s", "b", "m", "v")]
    outs = [helper.make_tensor_value_info(n, elem, None) for n in ["y", "rm", "rv"][:n_out]]
    m = helper.make_model(helper.make_graph([node], "g", ins, outs), opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    c_feeds = {n: RNG.standard_normal(c).astype(x.dtype) for n in ("s", "b", "m")}
    c_feeds["v"] = np.abs(RNG.standard_normal(c)).astype(x.dtype) + 0.5
    return m, dict(x=x, **c_feeds)


@pytest.mark.parametrize("shape", [(2, 3, 4, 5), (4, 2), (3, 5, 7), (2, 3, 2, 2, 2)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("opset", [14, 15])
def test_batchnorm_training(shape, dtype, opset):
    x = (RNG.standard_normal(shape) * 3 + 1).astype(dtype)
    m, f = _bn_model(x, opset, training_mode=1, momentum=0.8, epsilon=1e-3)
    y, rm, rv = _check(m, f, tol=1e-4)
    axes = tuple(i for i in range(x.ndim) if i != 1)
    mean, var = x.astype(np.float64).mean(axis=axes), x.astype(np.float64).var(axis=axes)
    bshape = [1, -1] + [1] * (x.ndim - 2)
    want_y = (x - mean.reshape(bshape)) / np.sqrt(var.reshape(bshape) + 1e-3) * f["s"].reshape(bshape) + \
        f["b"].reshape(bshape)
    np.testing.assert_allclose(y, want_y, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(rm, f["m"] * 0.8 + mean * 0.2, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(rv, f["v"] * 0.8 + var * 0.2, rtol=1e-5, atol=1e-5)


def test_batchnorm_training_only_y_and_inference_unchanged():
    x = RNG.standard_normal((2, 3, 4)).astype(np.float32)
    m, f = _bn_model(x, 15, n_out=1, training_mode=1)
    _check(m, f, tol=1e-4)
    m, f = _bn_model(x, 15, n_out=1, training_mode=0)
    _check(m, f, tol=1e-5)


def test_batchnorm_statistics_outputs_need_training_mode():
    x = RNG.standard_normal((2, 3, 4)).astype(np.float32)
    m, f = _bn_model(x, 15, n_out=3, training_mode=0)
    with pytest.raises(Exception) as e:
        _ours(m, f)
    assert "bn" in str(e.value) and "training_mode=1" in str(e.value)


# --------------------------------------------------------------------------
# Dropout, training_mode=true


def _dropout_model(dtype, n_out=2, **attrs):
    elem = np_dtype_to_tensor_dtype(np.dtype(dtype))
    node = helper.make_node("Dropout", ["x", "r", "t"], ["y", "mask"][:n_out], name="drop", **attrs)
    ins = [helper.make_tensor_value_info("x", elem, None), helper.make_tensor_value_info("r", TensorProto.FLOAT, []),
           helper.make_tensor_value_info("t", TensorProto.BOOL, [])]
    outs = [helper.make_tensor_value_info("y", elem, None), helper.make_tensor_value_info("mask", TensorProto.BOOL,
                                                                                          None)][:n_out]
    m = helper.make_model(helper.make_graph([node], "g", ins, outs), opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    return m


def _drop_feeds(x, ratio, training=True):
    return {"x": x, "r": np.array(ratio, np.float32), "t": np.array(training)}


@pytest.mark.parametrize("ratio", [0.1, 0.5, 0.75])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
def test_dropout_training_statistics(ratio, dtype):
    n = 200000
    x = RNG.uniform(1, 2, n).astype(dtype)
    y, mask = _ours(_dropout_model(dtype, seed=3), _drop_feeds(x, ratio))
    assert mask.dtype == bool and y.dtype == dtype
    kept = mask.mean()
    # Binomial: 6 standard deviations.
    assert abs(kept - (1 - ratio)) < 6 * np.sqrt(ratio * (1 - ratio) / n), kept
    tol = 1e-3 if dtype == np.float16 else 1e-6
    np.testing.assert_allclose(y[mask].astype(np.float64), x[mask].astype(np.float64) / (1 - ratio), rtol=tol)
    assert (y[~mask] == 0).all()
    # Neighbouring draws are not correlated: runs of kept elements look geometric.
    pairs = np.mean(mask[1:] & mask[:-1])
    assert abs(pairs - (1 - ratio) ** 2) < 0.01


def test_dropout_seed_reproducible_and_distinct():
    x = np.ones(5000, np.float32)
    a = _ours(_dropout_model(np.float32, seed=1), _drop_feeds(x, 0.5))[1]
    b = _ours(_dropout_model(np.float32, seed=1), _drop_feeds(x, 0.5))[1]
    c = _ours(_dropout_model(np.float32, seed=2), _drop_feeds(x, 0.5))[1]
    np.testing.assert_array_equal(a, b)
    assert (a != c).any()
    # Without a seed attribute the global seed makes it reproducible.
    rt.set_seed(123)
    d = _ours(_dropout_model(np.float32), _drop_feeds(x, 0.5))[1]
    rt.set_seed(123)
    e = _ours(_dropout_model(np.float32), _drop_feeds(x, 0.5))[1]
    np.testing.assert_array_equal(d, e)
    # Two runs of one session draw fresh masks.
    sess = rt.InferenceSession(_dropout_model(np.float32, seed=1).SerializeToString(),
                               providers=["CPUExecutionProvider"])
    assert (sess.run(None, _drop_feeds(x, 0.5))[1] != sess.run(None, _drop_feeds(x, 0.5))[1]).any()


def test_dropout_training_zero_ratio_and_inference_are_identity():
    x = RNG.standard_normal((3, 4)).astype(np.float32)
    for f in (_drop_feeds(x, 0.0, True), _drop_feeds(x, 0.6, False)):
        y, mask = _ours(_dropout_model(np.float32), f)
        np.testing.assert_array_equal(y, x)
        assert mask.all()
        ref = ReferenceEvaluator(_dropout_model(np.float32)).run(None, f)
        np.testing.assert_array_equal(y, ref[0])


def test_dropout_training_bad_ratio():
    x = np.ones(4, np.float32)
    for r in (1.0, -0.1):
        with pytest.raises(Exception) as e:
            _ours(_dropout_model(np.float32), _drop_feeds(x, r))
        assert "drop" in str(e.value) and "input 1 (ratio)" in str(e.value) and "[0, 1)" in str(e.value)

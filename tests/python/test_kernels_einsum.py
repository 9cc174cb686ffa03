"""Einsum: every part of the equation grammar (implicit and explicit output,
'...' with broadcasting, repeated labels, size-1 broadcasting, scalars, many
operands) against onnx.reference.ReferenceEvaluator (numpy's einsum) and,
where it takes the equation and type, onnxruntime; bad equations and shapes
fail with an error naming the node and the equation."""

import ml_dtypes
import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

import onyxruntime as rt

RNG = np.random.default_rng(7)

_ELEM = {np.float32: TensorProto.FLOAT, np.float64: TensorProto.DOUBLE, np.int32: TensorProto.INT32,
         np.int64: TensorProto.INT64, np.float16: TensorProto.FLOAT16, ml_dtypes.bfloat16: TensorProto.BFLOAT16,
         np.uint8: TensorProto.UINT8, np.int8: TensorProto.INT8}


def _model(eq, xs, opset=None):
    elem = _ELEM[xs[0].dtype.type]
    if opset is None:  # bfloat16 is allowed from opset 28
        opset = 28 if elem == TensorProto.BFLOAT16 else 12
    names = [f"x{i}" for i in range(len(xs))]
    node = helper.make_node("Einsum", names, ["y"], equation=eq, name="ein")
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info(n, elem, None) for n in names],
                              [helper.make_tensor_value_info("y", elem, None)])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = helper.find_min_ir_version_for([m.opset_import[0]])
    return m, dict(zip(names, xs))


def _ours(model, feeds):
    return rt.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)[0]


def _check(eq, *xs, use_ort=True, tol=1e-5):
    m, feeds = _model(eq, list(xs))
    y = _ours(m, feeds)
    want = np.einsum(eq, *[x.astype(np.float64) if x.dtype.kind == "f" or x.dtype == ml_dtypes.bfloat16 else x
                           for x in xs])
    ref = ReferenceEvaluator(m).run(None, feeds)[0]
    assert y.shape == np.asarray(ref).shape == want.shape, (y.shape, np.asarray(ref).shape, want.shape)
    assert y.dtype == xs[0].dtype
    if y.dtype.kind in "iu":
        np.testing.assert_array_equal(y, ref)
    else:
        np.testing.assert_allclose(y.astype(np.float64), want.astype(np.float64), rtol=tol, atol=tol)
    if use_ort:
        theirs = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)[0]
        assert theirs.shape == y.shape
        np.testing.assert_allclose(y.astype(np.float64), theirs.astype(np.float64), rtol=tol, atol=tol)
    return y


def _r(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


@pytest.mark.parametrize("eq,shapes", [
    ("ij,jk->ik", [(3, 4), (4, 5)]),
    ("ij,jk", [(3, 4), (4, 5)]),
    ("bij,bjk->bik", [(6, 3, 4), (6, 4, 5)]),
    ("bij,bkj->bik", [(2, 3, 4), (2, 5, 4)]),
    ("bji,bjk->bik", [(2, 4, 3), (2, 4, 5)]),
    ("ij->ji", [(3, 4)]),
    ("ij->", [(3, 4)]),
    ("ij->j", [(3, 4)]),
    ("ii->i", [(4, 4)]),
    ("ii", [(4, 4)]),
    ("bii->bi", [(3, 5, 5)]),
    ("i,i", [(7,), (7,)]),
    ("i,j->ij", [(3,), (4,)]),
    ("...ij,...jk->...ik", [(2, 3, 4), (2, 4, 5)]),
    ("...ij,...jk", [(2, 5, 3, 4), (2, 5, 4, 2)]),
    ("ij...,jk...->ik...", [(3, 4, 2), (4, 5, 2)]),
    ("bhqd,bhkd->bhqk", [(2, 3, 4, 8), (2, 3, 5, 8)]),
    ("bhqk,bhkd->bhqd", [(2, 3, 4, 5), (2, 3, 5, 8)]),
    ("abc,cd,de->abe", [(2, 3, 4), (4, 5), (5, 6)]),
    ("ijk,kji->", [(2, 3, 4), (4, 3, 2)]),
    ("iij,jkk->ik", [(3, 3, 4), (4, 2, 2)]),
    ("Ab,bC->AC", [(3, 4), (4, 2)]),
    ("ba", [(3, 4)]),
    ("bA", [(3, 4)]),
    ("i,i,i->i", [(5,), (5,), (5,)]),
])
def test_einsum_float(eq, shapes):
    # onnxruntime takes lower-case labels only.
    _check(eq, *[_r(*s) for s in shapes], use_ort=eq == eq.lower())


@pytest.mark.parametrize("dtype", [np.float64, np.int32, np.int64, np.float16, ml_dtypes.bfloat16, np.int8, np.uint8])
def test_einsum_types(dtype):
    if np.dtype(dtype).kind in "iu":
        a = RNG.integers(0, 4, (2, 3, 4)).astype(dtype)
        b = RNG.integers(0, 4, (2, 4, 5)).astype(dtype)
    else:
        a, b = _r(2, 3, 4, dtype=dtype), _r(2, 4, 5, dtype=dtype)
    use_ort = dtype in (np.float64, np.int32, np.int64)
    tol = 2e-2 if dtype in (np.float16, ml_dtypes.bfloat16) else 1e-6
    _check("bij,bjk->bik", a, b, use_ort=use_ort, tol=tol)
    _check("bij->bj", a, use_ort=use_ort, tol=tol)


def test_einsum_scalar_and_empty():
    _check(",->", np.array(2.5, np.float32), np.array(4.0, np.float32))
    _check("->", np.array(2.5, np.float32))
    _check("ij,jk->ik", _r(0, 4), _r(4, 5))
    y = _check("ij,jk->ik", _r(3, 0), _r(0, 5))
    assert (y == 0).all()


def test_einsum_size_one_broadcasts_as_numpy():
    # numpy (and so onnx's reference) broadcasts a labelled dim of size 1.
    _check("ij,ij->ij", _r(3, 1), _r(3, 4), use_ort=False)
    _check("...i,...i", _r(3, 1, 2), _r(4, 2), use_ort=False)
    # '...' of different ranks across inputs (onnxruntime refuses it).
    _check("...ij,...jk", _r(2, 1, 3, 4), _r(5, 4, 2), use_ort=False)


def test_einsum_large_batched_matmul_matches_numpy():
    a, b = _r(16, 64, 128), _r(16, 128, 96)
    _check("bij,bjk->bik", a, b, tol=1e-3)
    _check("bij,bkj->bik", a, _r(16, 96, 128), tol=1e-3)


def _fails(eq, xs, *words, at_load=False):
    m, feeds = _model(eq, xs)
    with pytest.raises(Exception) as e:
        sess = rt.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
        sess.run(None, feeds)
    for w in words:
        assert w in str(e.value), str(e.value)


@pytest.mark.parametrize("eq,shapes,words", [
    ("ij,jk->ik", [(3, 4), (5, 6)], ["label 'j'", "size"]),
    ("ij->ik", [(3, 4)], ["output label 'k'"]),
    ("ij->ii", [(3, 3)], ["output label 'i' appears more than once"]),
    ("i$->i", [(3, 3)], ["character '$'"]),
    ("i..j->i", [(3, 3)], ["'...'"]),
    ("ij->i->j", [(3, 3)], ["more than one '->'"]),
    ("ij,jk->ik", [(3, 4)], ["2 input terms", "1 inputs"]),
    ("ijk->i", [(3, 4)], ["input 0 has rank 2", "3 labels"]),
    ("ii->i", [(3, 4)], ["label 'i'", "size 4 in input 0"]),
    ("...ij->ij", [(2, 3, 4)], ["output has no '...'"]),
    ("...i,...i->...i", [(2, 3), (4, 3)], ["'...'", "broadcast"]),
])
def test_einsum_bad_equation(eq, shapes, words):
    _fails(eq, [_r(*s) for s in shapes], "ein", "'" + eq + "'", *words)

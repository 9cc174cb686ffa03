"""Index and data-movement kernels: GatherElements, GatherND, ScatterElements,
Scatter, ScatterND, Split, Pad, Tile, Trilu, CumSum, CumProd, OneHot, EyeLike,
Compress, TopK, NonZero, ReverseSequence, Unique. Each case is a one-node model
run through onyxruntime and compared with onnx.reference.ReferenceEvaluator and
with onnxruntime; bad inputs must fail with INVALID_ARGUMENT naming the node."""

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

import onyxruntime as rt

SELF_CHECK = rt.__name__ == "onnxruntime"


def _elem(arr):
    if arr.dtype == object:
        return TensorProto.STRING
    return helper.np_dtype_to_tensor_dtype(arr.dtype)


def _model(op, feeds, attrs=None, opset=18, n_out=1, inits=None, in_names=None, shapes=True, out_types=None):
    """One `op` node named 'node' over graph inputs `feeds` (name -> array) and
    initializers `inits` (name -> array); `in_names` orders the node's inputs
    ('' for an omitted optional one)."""
    inits = inits or {}
    names = in_names if in_names is not None else list(feeds) + list(inits)
    outs = [f"y{i}" for i in range(n_out)]
    node = helper.make_node(op, names, outs, name="node", **(attrs or {}))
    inputs = [helper.make_tensor_value_info(k, _elem(v), list(v.shape) if shapes else None) for k, v in feeds.items()]
    types = out_types or [TensorProto.UNDEFINED] * n_out
    outputs = [helper.make_tensor_value_info(o, t, None) for o, t in zip(outs, types)]
    graph = helper.make_graph([node], "g", inputs, outputs,
                              initializer=[numpy_helper.from_array(v, k) for k, v in inits.items()])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8 if opset <= 18 else 10
    if out_types is None:
        # onnxruntime refuses undefined output types: take them from ONNX's inference.
        inferred = {v.name: v.type.tensor_type.elem_type
                    for v in onnx.shape_inference.infer_shapes(m).graph.output}
        for o in m.graph.output:
            o.type.tensor_type.elem_type = inferred.get(o.name, 0)
    return m


def _assert_same(a, b, what):
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape, f"{what}: shape {a.shape} vs {b.shape}"
    if a.dtype == object or b.dtype == object:
        assert a.tolist() == b.tolist(), what
        return
    assert a.dtype == b.dtype, f"{what}: dtype {a.dtype} vs {b.dtype}"
    if np.issubdtype(a.dtype, np.floating):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6, err_msg=what)
    else:
        np.testing.assert_array_equal(a, b, err_msg=what)


def _check(op, feeds, attrs=None, opset=18, n_out=1, inits=None, in_names=None, with_ort=True, with_ref=True):
    """with_ref=False where the reference evaluator lacks the op or form (its
    GatherElements/Unique mishandle some axes); with_ort=False where
    onnxruntime does (strings, opset 26)."""
    assert with_ort or with_ref
    if SELF_CHECK and not with_ort:
        return None  # a form onnxruntime itself does not run
    m = _model(op, feeds, attrs, opset, n_out, inits, in_names)
    data = m.SerializeToString()
    ours = rt.InferenceSession(data, providers=["CPUExecutionProvider"]).run(None, feeds)
    assert len(ours) == n_out
    if with_ref:
        ref = ReferenceEvaluator(m).run(None, feeds)
        for i in range(n_out):
            _assert_same(ours[i], ref[i], f"{op} output {i} vs reference")
    if with_ort:
        theirs = ort.InferenceSession(data, providers=["CPUExecutionProvider"]).run(None, feeds)
        for i in range(n_out):
            _assert_same(ours[i], theirs[i], f"{op} output {i} vs onnxruntime")
    return ours


def _fails(op, feeds, attrs=None, opset=18, n_out=1, inits=None, in_names=None, match=None):
    """The node must fail at run time (shapes left undeclared so that load-time
    inference does not catch it first) with an error naming the node."""
    m = _model(op, feeds, attrs, opset, n_out, inits, in_names, shapes=False)
    with pytest.raises(Exception) as e:
        sess = rt.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
        sess.run(None, feeds)
    msg = str(e.value)
    assert "node" in msg, msg
    if not SELF_CHECK:
        assert "INVALID_ARGUMENT" in msg, msg
        assert op in msg, msg
        if match:
            assert match in msg, msg


RNG = np.random.default_rng(0)
F32 = RNG.standard_normal((3, 4, 5)).astype(np.float32)
I64 = np.arange(24, dtype=np.int64).reshape(2, 3, 4)
STR = np.array([["a", "bb", "c"], ["dd", "e", "ff"]], dtype=object)


# ---------------------------------------------------------------- GatherElements
@pytest.mark.parametrize("axis", [0, 1, 2, -1, -3])
@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.bool_, np.float16])
def test_gather_elements(axis, dtype):
    x = (F32 * 4).astype(dtype)
    dim = x.shape[axis]
    shape = list(x.shape)
    shape[axis] = 6
    ind = RNG.integers(-dim, dim, size=shape).astype(np.int64)
    # The reference's take_along_axis mishandles a negative axis.
    _check("GatherElements", {"x": x, "i": ind}, {"axis": axis}, opset=13, with_ref=axis >= 0)


def test_gather_elements_int32_indices_smaller_and_opset11():
    ind = np.array([[0, -1], [1, 0]], np.int32)
    # Indices smaller than data off the axis: numpy's take_along_axis (the reference) refuses them.
    _check("GatherElements", {"x": F32[0], "i": ind}, {"axis": 1}, opset=11, with_ref=False)


def test_gather_elements_empty_and_strings():
    _check("GatherElements", {"x": F32, "i": np.zeros((3, 0, 5), np.int64)}, {"axis": 1})
    _check("GatherElements", {"x": STR, "i": np.array([[2, 0], [1, 1]], np.int64)}, {"axis": 1}, with_ort=False)


def test_gather_elements_bad_inputs():
    _fails("GatherElements", {"x": F32[0], "i": np.array([[0, 5]], np.int64)}, {"axis": 1}, match="out of range")
    _fails("GatherElements", {"x": F32[0], "i": np.zeros((2,), np.int64)}, {"axis": 0}, match="rank")
    _fails("GatherElements", {"x": F32[0], "i": np.zeros((2, 9), np.int64)}, {"axis": 0}, match="exceeds")


# ---------------------------------------------------------------- GatherND
@pytest.mark.parametrize("opset", [11, 12, 13])
def test_gather_nd_plain(opset):
    _check("GatherND", {"x": F32, "i": np.array([[0, 1], [2, -1]], np.int64)}, opset=opset)
    _check("GatherND", {"x": F32, "i": np.array([[[1, 2, 3]], [[-1, 0, 4]]], np.int64)}, opset=opset)
    _check("GatherND", {"x": I64, "i": np.array([[1], [0]], np.int64)}, opset=opset)


@pytest.mark.parametrize("batch_dims,ind", [
    (1, np.array([[1], [0]], np.int64)),
    (1, np.array([[[0, 1], [2, 3]], [[1, 0], [0, 0]]], np.int64)),
    (2, np.array([[[1], [2], [3]], [[0], [1], [-1]]], np.int64)),
])
def test_gather_nd_batch_dims(batch_dims, ind):
    _check("GatherND", {"x": I64, "i": ind}, {"batch_dims": batch_dims}, opset=13)


def test_gather_nd_strings_and_empty():
    _check("GatherND", {"x": STR, "i": np.array([[1, 2], [0, 0]], np.int64)}, with_ort=False)
    _check("GatherND", {"x": F32, "i": np.zeros((0, 2), np.int64)})


def test_gather_nd_bad_inputs():
    _fails("GatherND", {"x": F32, "i": np.array([[3, 0]], np.int64)}, match="out of range")
    _fails("GatherND", {"x": F32, "i": np.zeros((1, 4), np.int64)}, match="last dim")
    _fails("GatherND", {"x": I64, "i": np.zeros((3, 1), np.int64)}, {"batch_dims": 1}, match="batch dim")


# ---------------------------------------------------------------- ScatterElements / Scatter
@pytest.mark.parametrize("reduction,opset", [("none", 11), ("none", 13), ("add", 16), ("mul", 16),
                                             ("max", 18), ("min", 18)])
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.float64])
def test_scatter_elements(reduction, opset, dtype):
    data = (F32[0] * 3).astype(dtype)
    ind = np.array([[1, 0, 2, -1, 0], [0, 2, 1, 1, -3]], np.int64)
    upd = (RNG.standard_normal((2, 5)) * 3).astype(dtype)
    attrs = {"axis": 0}
    if reduction != "none":
        attrs["reduction"] = reduction
    _check("ScatterElements", {"x": data, "i": ind, "u": upd}, attrs, opset=opset)


def test_scatter_elements_duplicates_axis_last_and_strings():
    data = np.zeros((2, 4), np.float32)
    ind = np.array([[1, 1, 3], [0, 0, 0]], np.int64)
    upd = np.arange(6, dtype=np.float32).reshape(2, 3)
    _check("ScatterElements", {"x": data, "i": ind, "u": upd}, {"axis": -1, "reduction": "add"}, opset=18)
    _check("ScatterElements", {"x": STR, "i": np.array([[2], [0]], np.int64), "u": np.array([["z"], ["y"]], object)},
           {"axis": 1}, with_ort=False)
    _check("ScatterElements", {"x": data, "i": np.zeros((2, 0), np.int64), "u": np.zeros((2, 0), np.float32)},
           {"axis": 1}, opset=13)


def test_scatter_opset9():
    data = np.zeros((3, 3), np.float32)
    ind = np.array([[1, 0, 2], [0, 2, 1]], np.int64)
    upd = np.array([[1, 1.1, 1.2], [2, 2.1, 2.2]], np.float32)
    _check("Scatter", {"x": data, "i": ind, "u": upd}, {"axis": 0}, opset=10, with_ref=False)


def test_scatter_elements_bad_inputs():
    data = np.zeros((3, 3), np.float32)
    _fails("ScatterElements", {"x": data, "i": np.array([[3]], np.int64), "u": np.ones((1, 1), np.float32)},
           match="out of range")
    _fails("ScatterElements", {"x": data, "i": np.array([[0, 1]], np.int64), "u": np.ones((1, 3), np.float32)},
           match="updates")


# ---------------------------------------------------------------- ScatterND
@pytest.mark.parametrize("reduction,opset", [("none", 11), ("none", 13), ("add", 16), ("mul", 16),
                                             ("max", 18), ("min", 18)])
def test_scatter_nd(reduction, opset):
    data = np.arange(32, dtype=np.float32).reshape(2, 4, 4)
    ind = np.array([[0, 1], [1, -1], [0, 1]], np.int64)
    upd = RNG.standard_normal((3, 4)).astype(np.float32) * 10
    attrs = {} if reduction == "none" else {"reduction": reduction}
    if reduction == "none":  # duplicates are undefined without a reduction
        ind, upd = ind[:2], upd[:2]
    _check("ScatterND", {"x": data, "i": ind, "u": upd}, attrs, opset=opset)


def test_scatter_nd_full_index_and_int():
    data = np.arange(8, dtype=np.int64)
    _check("ScatterND", {"x": data, "i": np.array([[4], [3], [1], [7]], np.int64),
                         "u": np.array([9, 10, 11, 12], np.int64)}, opset=13)
    _check("ScatterND", {"x": data, "i": np.array([[4], [4]], np.int64), "u": np.array([2, 3], np.int64)},
           {"reduction": "mul"}, opset=18)


def test_scatter_nd_bad_inputs():
    data = np.zeros((2, 3), np.float32)
    _fails("ScatterND", {"x": data, "i": np.array([[2, 0]], np.int64), "u": np.ones((1,), np.float32)},
           match="out of range")
    _fails("ScatterND", {"x": data, "i": np.array([[1]], np.int64), "u": np.ones((1, 2), np.float32)},
           match="updates")


# ---------------------------------------------------------------- Split
def test_split_attribute_forms():
    x = np.arange(24, dtype=np.float32).reshape(4, 6)
    _check("Split", {"x": x}, {"axis": 1, "split": [1, 2, 3]}, opset=2, n_out=3)
    _check("Split", {"x": x}, {"axis": -1, "split": [2, 4]}, opset=11, n_out=2)
    _check("Split", {"x": x}, {"axis": 0}, opset=11, n_out=2)


def test_split_opset1_input_form():
    if SELF_CHECK:
        pytest.skip("onnxruntime has no opset-1 kernel")
    x = np.arange(12, dtype=np.float32).reshape(2, 6)
    m = _model("Split", {"x": x}, {"axis": 1, "split": [4, 2]}, opset=1, n_out=2)
    ours = rt.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": x})
    np.testing.assert_array_equal(ours[0], x[:, :4])
    np.testing.assert_array_equal(ours[1], x[:, 4:])


@pytest.mark.parametrize("opset", [13, 18])
def test_split_input_form(opset):
    x = np.arange(30, dtype=np.int64).reshape(5, 6)
    _check("Split", {"x": x}, {"axis": 0}, opset=opset, n_out=3, inits={"s": np.array([1, 0, 4], np.int64)})
    equal = {"axis": 1} if opset < 18 else {"axis": 1, "num_outputs": 3}
    _check("Split", {"x": x}, equal, opset=opset, n_out=3)
    _check("Split", {"x": STR}, equal, opset=opset, n_out=3, with_ort=False)


def test_split_num_outputs_uneven():
    x = np.arange(14, dtype=np.float32).reshape(7, 2)
    _check("Split", {"x": x}, {"axis": 0, "num_outputs": 3}, opset=18, n_out=3)
    _check("Split", {"x": x}, {"axis": 0, "num_outputs": 2}, opset=18, n_out=2)


def test_split_bad_inputs():
    x = np.arange(12, dtype=np.float32).reshape(2, 6)
    _fails("Split", {"x": x, "s": np.array([2, 2], np.int64)}, {"axis": 1}, opset=13, n_out=2, match="sum")
    _fails("Split", {"x": x, "s": np.array([7, -1], np.int64)}, {"axis": 1}, opset=13, n_out=2, match=">= 0")


# ---------------------------------------------------------------- Pad
@pytest.mark.parametrize("mode", ["constant", "reflect", "edge", "wrap"])
@pytest.mark.parametrize("pads", [[1, 2, 2, 1], [0, 3, 1, 0], [2, 0, 0, 2]])
def test_pad_modes(mode, pads):
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    feeds = {"x": x}
    inits = {"p": np.array(pads, np.int64)}
    if mode == "constant":
        inits["c"] = np.array(1.5, np.float32)
    _check("Pad", feeds, {"mode": mode}, opset=19, inits=inits)


def test_pad_axes_and_negative_pads():
    x = np.arange(24, dtype=np.int32).reshape(2, 3, 4)
    _check("Pad", {"x": x}, {"mode": "constant"}, opset=18,
           inits={"p": np.array([1, 2, 0, 1], np.int64), "c": np.array(7, np.int32), "a": np.array([-1, 0], np.int64)})
    _check("Pad", {"x": x}, {"mode": "edge"}, opset=18,
           inits={"p": np.array([1, 0, 2, 0, 1, 1], np.int64)})
    # axes with constant_value omitted ('' input)
    _check("Pad", {"x": x}, {"mode": "reflect"}, opset=18, in_names=["x", "p", "", "a"],
           inits={"p": np.array([2, 1, 1, 0], np.int64), "a": np.array([2, 1], np.int64)})
    # Negative pads crop; the reference (numpy.pad) refuses them, so compare with onnxruntime only.
    m = _model("Pad", {"x": x}, {"mode": "constant"}, opset=13, inits={"p": np.array([0, -1, 1, 0, 0, -2], np.int64)},
               out_types=[TensorProto.INT32])
    ours = rt.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    theirs = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    _assert_same(ours, theirs, "Pad negative pads")


def test_pad_attribute_forms_and_types():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    _check("Pad", {"x": x}, {"mode": "constant", "pads": [0, 1, 1, 0], "value": 2.5}, opset=2)
    _check("Pad", {"x": x}, {"mode": "reflect", "pads": [1, 2, 1, 2]}, opset=2)
    _check("Pad", {"x": x}, {"mode": "edge"}, opset=11, inits={"p": np.array([1, 1, 1, 1], np.int64)})
    _check("Pad", {"x": np.array([[True, False]])}, {}, opset=13, inits={"p": np.array([1, 0, 0, 1], np.int64)})
    _check("Pad", {"x": x.astype(np.float16)}, {"mode": "wrap"}, opset=19, inits={"p": np.array([2, 4, 1, 2], np.int64)},
           with_ort=False)
    _check("Pad", {"x": np.zeros((0, 3), np.float32)}, {}, opset=13, inits={"p": np.array([1, 0, 1, 0], np.int64)})


def test_pad_opset1_paddings_attribute():
    if SELF_CHECK:
        pytest.skip("onnxruntime has no opset-1 kernel")
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    m = _model("Pad", {"x": x}, {"paddings": [1, 0, 0, 1], "value": -1.0}, opset=1)
    ours = rt.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    np.testing.assert_array_equal(ours, np.pad(x, [(1, 0), (0, 1)], constant_values=-1.0))


def test_pad_bad_inputs():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    _fails("Pad", {"x": x, "p": np.array([1, 1], np.int64)}, opset=13, match="pads")
    _fails("Pad", {"x": x, "p": np.array([0, -4, 0, 0], np.int64)}, opset=13, match="crop")
    _fails("Pad", {"x": np.zeros((0, 2), np.float32), "p": np.array([1, 0, 1, 0], np.int64)}, {"mode": "edge"},
           opset=13, match="empty")


# ---------------------------------------------------------------- Tile
@pytest.mark.parametrize("reps", [[1, 1, 1], [2, 1, 3], [0, 2, 1], [3, 2, 2]])
def test_tile(reps):
    _check("Tile", {"x": F32}, opset=13, inits={"r": np.array(reps, np.int64)})
    _check("Tile", {"x": I64}, opset=6, inits={"r": np.array(reps, np.int64)})


def test_tile_rank4_block_copies():
    x = RNG.standard_normal((2, 3, 1, 4)).astype(np.float32)
    for reps in ([1, 2, 3, 1], [2, 1, 1, 3], [3, 2, 2, 2], [1, 1, 5, 1]):
        _check("Tile", {"x": x}, opset=13, inits={"r": np.array(reps, np.int64)})


def test_tile_strings_bool_and_1d():
    _check("Tile", {"x": STR}, opset=13, inits={"r": np.array([2, 2], np.int64)}, with_ort=False)
    _check("Tile", {"x": np.array([True, False])}, opset=13, inits={"r": np.array([3], np.int64)})


def test_tile_bad_inputs():
    _fails("Tile", {"x": F32[0], "r": np.array([2, -1], np.int64)}, opset=13, match=">= 0")
    _fails("Tile", {"x": F32[0], "r": np.array([2], np.int64)}, opset=13, match="rank")
    if not SELF_CHECK:  # sizes that overflow int64 are refused before any allocation
        _fails("Tile", {"x": F32[0], "r": np.array([2**62, 2**62], np.int64)}, opset=13, match="overflow")


def test_huge_outputs_are_refused():
    if SELF_CHECK:
        pytest.skip("onnxruntime words these differently")
    _fails("Pad", {"x": F32[0], "p": np.array([0, 2**62, 0, 0], np.int64)}, opset=13, match="too large")
    _fails("OneHot", {"i": np.zeros((4,), np.int64), "d": np.array(2**62, np.int64),
                      "v": np.array([0, 1], np.float32)}, opset=11, match="too large")


# ---------------------------------------------------------------- Trilu
@pytest.mark.parametrize("upper", [0, 1])
@pytest.mark.parametrize("k", [None, 0, 1, -1, 3, -7, 100])
def test_trilu(upper, k):
    x = RNG.integers(0, 10, size=(2, 3, 5)).astype(np.int64)
    inits = {} if k is None else {"k": np.array(k, np.int64)}
    _check("Trilu", {"x": x}, {"upper": upper}, opset=14, inits=inits)


def test_trilu_tall_empty_and_bad():
    _check("Trilu", {"x": F32[:, :, :2].copy()}, {"upper": 0}, opset=14, inits={"k": np.array(-1, np.int64)})
    _check("Trilu", {"x": np.zeros((3, 0, 4), np.float32)}, opset=14)
    _fails("Trilu", {"x": np.arange(3, dtype=np.float32)}, opset=14, match="rank")


# ---------------------------------------------------------------- CumSum / CumProd
@pytest.mark.parametrize("exclusive", [0, 1])
@pytest.mark.parametrize("reverse", [0, 1])
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_cumsum(exclusive, reverse, axis):
    x = RNG.standard_normal((3, 4, 2)).astype(np.float64)
    _check("CumSum", {"x": x}, {"exclusive": exclusive, "reverse": reverse}, opset=14,
           inits={"a": np.array(axis, np.int32)})
    _check("CumSum", {"x": I64}, {"exclusive": exclusive, "reverse": reverse}, opset=11,
           inits={"a": np.array(axis, np.int64)})


@pytest.mark.parametrize("exclusive", [0, 1])
@pytest.mark.parametrize("reverse", [0, 1])
def test_cumprod(exclusive, reverse):
    x = (RNG.standard_normal((3, 4)) + 1).astype(np.float32)
    # onnxruntime has no CumProd (opset 26) yet: the reference is the oracle.
    _check("CumProd", {"x": x}, {"exclusive": exclusive, "reverse": reverse}, opset=26,
           inits={"a": np.array(1, np.int64)}, with_ort=False)
    _check("CumProd", {"x": np.arange(1, 7, dtype=np.int32).reshape(2, 3)}, {"exclusive": exclusive, "reverse": reverse},
           opset=26, inits={"a": np.array(0, np.int64)}, with_ort=False)


def test_cumsum_bad_axis():
    _fails("CumSum", {"x": F32, "a": np.array(3, np.int64)}, opset=14, match="out of range")


# ---------------------------------------------------------------- OneHot
@pytest.mark.parametrize("axis", [-1, 0, 1, -2])
def test_one_hot(axis):
    ind = np.array([[0, 3, -1], [2, 7, -4]], np.int64)
    _check("OneHot", {"i": ind}, {"axis": axis}, opset=11,
           inits={"d": np.array(4, np.int64), "v": np.array([0.5, 2.0], np.float32)})


def test_one_hot_types():
    ind = np.array([1.0, 2.0, 0.0, -1.0], np.float32)
    fff = {"d": np.array(3.0, np.float32), "v": np.array([0, 1], np.float32)}
    _check("OneHot", {"i": ind}, opset=11, inits=fff)
    # Non-integral indices match no position (both oracles compare them as numbers).
    _check("OneHot", {"i": ind + 0.7}, opset=11, inits=fff)
    # onnxruntime has no kernel for these type combinations.
    _check("OneHot", {"i": ind}, opset=11, inits={"d": np.array(3.0, np.float32), "v": np.array([0, 1], np.int32)},
           with_ort=False)
    _check("OneHot", {"i": ind.astype(np.int8)}, opset=11,
           inits={"d": np.array(3, np.uint8), "v": np.array([1, 2], np.float16)}, with_ort=False)
    # A one-element 1-D depth: the reference wants a scalar.
    _check("OneHot", {"i": ind}, opset=11, inits={"d": np.array([3], np.int64), "v": np.array([0, 1], np.int64)},
           with_ref=False)
    _check("OneHot", {"i": np.array([1, 0], np.int32)}, opset=9,
           inits={"d": np.array(2, np.int32), "v": np.array([0, 5], np.int64)}, with_ort=False)
    _check("OneHot", {"i": np.array([1, 0], np.int64)}, opset=9,
           inits={"d": np.array(2, np.int64), "v": np.array([0, 5], np.int64)})


def test_one_hot_bad_values():
    _fails("OneHot", {"i": np.array([1], np.int64), "d": np.array(2, np.int64), "v": np.array([1.0], np.float32)},
           opset=11, match="values")
    _fails("OneHot", {"i": np.array([1], np.int64), "d": np.array(0, np.int64), "v": np.array([0, 1.0], np.float32)},
           opset=11, match="depth")


# ---------------------------------------------------------------- EyeLike
@pytest.mark.parametrize("k", [0, 1, -2, 5, -9])
def test_eye_like(k):
    _check("EyeLike", {"x": np.zeros((3, 5), np.float32)}, {"k": k}, opset=9)
    _check("EyeLike", {"x": np.zeros((4, 2), np.int32)}, {"k": k, "dtype": TensorProto.DOUBLE}, opset=22)


def test_eye_like_bad_rank():
    _fails("EyeLike", {"x": np.zeros((3,), np.float32)}, opset=9, match="2-D")


# ---------------------------------------------------------------- Compress
@pytest.mark.parametrize("axis", [None, 0, 1, -1])
def test_compress(axis):
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    cond = np.array([True, False, True], np.bool_)
    attrs = {} if axis is None else {"axis": axis}
    _check("Compress", {"x": x, "c": cond}, attrs, opset=11)
    _check("Compress", {"x": x, "c": np.zeros(3, np.bool_)}, attrs, opset=11)


def test_compress_strings_and_bad():
    _check("Compress", {"x": STR, "c": np.array([False, True, True])}, {"axis": 1}, opset=11, with_ort=False)
    if not SELF_CHECK:  # onnxruntime ignores condition entries past the axis; numpy and we refuse a true one
        _fails("Compress", {"x": np.zeros((2, 2), np.float32), "c": np.array([False, False, True])}, {"axis": 0},
               opset=11, match="condition")


# ---------------------------------------------------------------- TopK
@pytest.mark.parametrize("largest", [0, 1])
@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("k", [0, 1, 3])
def test_topk(largest, axis, k):
    x = RNG.integers(0, 4, size=(4, 3, 5)).astype(np.float32)  # many ties
    _check("TopK", {"x": x}, {"axis": axis, "largest": largest, "sorted": 1}, opset=11, n_out=2,
           inits={"k": np.array([k], np.int64)})


def test_topk_forms_and_types():
    x = RNG.integers(-5, 5, size=(3, 6)).astype(np.int64)
    _check("TopK", {"x": x.astype(np.float32)}, {"k": 2}, opset=1, n_out=2)
    _check("TopK", {"x": x.astype(np.float64)}, {}, opset=10, n_out=2, inits={"k": np.array([4], np.int64)})
    _check("TopK", {"x": x.astype(np.int32)}, {"largest": 0}, opset=11, n_out=2, inits={"k": np.array([6], np.int64)})


def test_topk_bad_k():
    _fails("TopK", {"x": F32, "k": np.array([6], np.int64)}, opset=11, n_out=2, match="out of range")


# ---------------------------------------------------------------- NonZero
@pytest.mark.parametrize("x", [
    np.array([[1, 0, 2], [0, 0, 3]], np.int32),
    np.array([[True, False], [False, True]]),
    np.array([0.0, -0.0, 1.5, np.nan], np.float32),
    np.zeros((2, 0, 3), np.float32),
    np.ones((2, 2, 2), np.uint8),
])
def test_non_zero(x):
    _check("NonZero", {"x": x}, opset=13)


def test_non_zero_strings():
    _check("NonZero", {"x": np.array([["", "a"], ["b", ""]], object)}, opset=13, with_ort=False)


# ---------------------------------------------------------------- ReverseSequence
@pytest.mark.parametrize("batch_axis,time_axis", [(0, 1), (1, 0)])
def test_reverse_sequence(batch_axis, time_axis):
    x = np.arange(48, dtype=np.float32).reshape(4, 4, 3)
    lens = np.array([4, 1, 0, 2], np.int64)
    _check("ReverseSequence", {"x": x, "l": lens}, {"batch_axis": batch_axis, "time_axis": time_axis}, opset=10)
    lens = np.array([1, 2, 3, 4], np.int64)
    _check("ReverseSequence", {"x": x[:, :, 0].copy(), "l": lens}, {"batch_axis": batch_axis, "time_axis": time_axis},
           opset=10)


def test_reverse_sequence_bad_lens():
    x = np.zeros((2, 3), np.float32)
    _fails("ReverseSequence", {"x": x, "l": np.array([1, 4, 0], np.int64)}, {"batch_axis": 1, "time_axis": 0},
           opset=10, match="sequence_lens")
    _fails("ReverseSequence", {"x": x, "l": np.array([1], np.int64)}, {"batch_axis": 1, "time_axis": 0}, opset=10,
           match="sequence_lens")


# ---------------------------------------------------------------- Unique
@pytest.mark.parametrize("sorted_", [0, 1])
@pytest.mark.parametrize("axis", [None, 0, 1, -1])
def test_unique(sorted_, axis):
    x = np.array([[1, 0, 0], [1, 0, 0], [2, 3, 4], [1, 0, 0]], np.float32)
    attrs = {"sorted": sorted_}
    if axis is not None:
        attrs["axis"] = axis
    # The reference's unsorted path reorders along axis 0 whatever the axis.
    _check("Unique", {"x": x}, attrs, opset=11, n_out=4, with_ref=sorted_ == 1 or axis == 0)


def test_unique_flat_types_and_fewer_outputs():
    x = np.array([2, 1, 1, 3, 4, 3], np.int64)
    _check("Unique", {"x": x}, {"sorted": 0}, opset=11, n_out=4)
    _check("Unique", {"x": x}, {}, opset=11, n_out=1)
    _check("Unique", {"x": x.astype(np.int8)}, {}, opset=11, n_out=2)
    _check("Unique", {"x": np.array(["b", "a", "b"], object)}, {}, opset=11, n_out=4, with_ort=False)


def test_unique_bad_axis():
    _fails("Unique", {"x": np.zeros((2, 2), np.float32)}, {"axis": 2}, opset=11, n_out=1, match="axis")

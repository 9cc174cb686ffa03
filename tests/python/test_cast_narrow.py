"""Cast to and from float8, float8e8m0, int4/uint4, int2/uint2 and float4e2m1, bit for bit against onnx's
reference evaluator (onnx.reference, which uses ml_dtypes).

The Python binding has no numpy dtype for these formats, so the narrow values
stay inside the model: a float or integer input is cast to the narrow type and
back, or a Constant holding every code of a format is cast to each type. Both
directions are then visible through ordinary outputs. onnxruntime has no CPU
Cast for several of these formats, so the oracle is onnx's reference, and the
tests are skipped under ONYX_TEST_SELF_CHECK=1.
"""

import warnings

import numpy as np
import pytest
from onnx import TensorProto as T
from onnx import helper
from onnx.reference import ReferenceEvaluator

from conftest import SELF_CHECK

pytestmark = pytest.mark.skipif(SELF_CHECK, reason="onnxruntime lacks these casts; the oracle is onnx.reference")

FLOAT8 = [T.FLOAT8E4M3FN, T.FLOAT8E4M3FNUZ, T.FLOAT8E5M2, T.FLOAT8E5M2FNUZ, T.FLOAT8E8M0]
PACKED = [T.INT4, T.UINT4, T.FLOAT4E2M1, T.INT2, T.UINT2]
BITS = {T.INT4: 4, T.UINT4: 4, T.FLOAT4E2M1: 4, T.INT2: 2, T.UINT2: 2}
NARROW = FLOAT8 + PACKED
# Output types numpy (and so the binding) can hold.
PLAIN = [T.FLOAT, T.DOUBLE, T.FLOAT16, T.INT8, T.INT16, T.INT32, T.INT64, T.UINT8, T.UINT16, T.UINT32, T.UINT64,
         T.BOOL]


def _model(nodes, in_type, out_type):
    graph = helper.make_graph(nodes, "cast", [helper.make_tensor_value_info("x", in_type, None)],
                              [helper.make_tensor_value_info("z", out_type, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 25)])
    model.ir_version = 11
    return model


def _run_both(onyx, model, x):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # numpy's overflow/invalid-cast warnings inside the reference
        want = ReferenceEvaluator(model).run(None, {"x": x})[0]
    got = onyx.InferenceSession(model.SerializeToString()).run(None, {"x": x})[0]
    return want, got


def _assert_same(want, got, what):
    want, got = np.asarray(want), np.asarray(got)
    assert want.dtype == got.dtype and want.shape == got.shape, what
    if want.dtype.kind == "f":
        w, g = want.astype(np.float64), got.astype(np.float64)
        same = np.where(np.isnan(w), np.isnan(g), (w == g) & (np.signbit(w) == np.signbit(g)))
    else:
        same = want == got
    bad = np.flatnonzero(~same)
    assert bad.size == 0, "%s: %d differ, first at %s: want %r got %r" % (
        what, bad.size, bad[:5].tolist(), want.ravel()[bad[:5]].tolist(), got.ravel()[bad[:5]].tolist())


def _float_inputs():
    rng = np.random.default_rng(7)
    parts = [
        rng.integers(0, 2**32, 20000, dtype=np.uint64).astype(np.uint32).view(np.float32),  # any bit pattern
        (rng.standard_normal(20000) * rng.choice([1e-3, 0.1, 1, 30, 300, 3e4, 7e4], 20000)).astype(np.float32),
        np.arange(65536, dtype=np.uint32).astype(np.uint16).view(np.float16).astype(np.float32),  # every float16
        np.array([np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 448, 464, 465, 240, 248, 57344, 61439, 61440,
                  0.25, 0.75, 2.5, 5, 6, 7, 2**-9, 2**-10, 2**-16, 2**-17, 2**-18, 1.0625, 1.1875], np.float32),
    ]
    x = np.concatenate(parts)
    return np.concatenate([x, -x])


@pytest.mark.parametrize("src", [T.FLOAT, T.FLOAT16, T.DOUBLE])
@pytest.mark.parametrize("to", NARROW)
@pytest.mark.parametrize("saturate", [1, 0])
def test_float_to_narrow_and_back(onyx, src, to, saturate):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # numpy warns when float32 overflows float16
        x = _float_inputs().astype(helper.tensor_dtype_to_np_dtype(src))
    model = _model([helper.make_node("Cast", ["x"], ["y"], to=to, saturate=saturate),
                    helper.make_node("Cast", ["y"], ["z"], to=src)], src, src)
    want, got = _run_both(onyx, model, x)
    _assert_same(want, got, "%s -> %s (saturate=%d)" % (T.DataType.Name(src), T.DataType.Name(to), saturate))


@pytest.mark.parametrize("src", [T.INT64, T.INT32, T.UINT8, T.INT8, T.BOOL])
@pytest.mark.parametrize("to", NARROW)
def test_integers_to_narrow(onyx, src, to):
    ints = np.concatenate([np.arange(-70000, 70000, 13), [2**31 - 1, -2**31, 2**40 + 5, -2**40 - 7]])
    x = ints.astype(helper.tensor_dtype_to_np_dtype(src))
    model = _model([helper.make_node("Cast", ["x"], ["y"], to=to),
                    helper.make_node("Cast", ["y"], ["z"], to=T.DOUBLE)], src, T.DOUBLE)
    want, got = _run_both(onyx, model, x)
    _assert_same(want, got, "%s -> %s" % (T.DataType.Name(src), T.DataType.Name(to)))


def _every_code(elem_type):
    if elem_type in PACKED:
        # Every code plus one more, so the last byte is partly used.
        bits = BITS[elem_type]
        per, count = 8 // bits, (1 << bits) + 1
        codes = np.arange(count, dtype=np.uint8) % (1 << bits)
        codes = np.append(codes, np.zeros(-count % per, np.uint8)).reshape(-1, per)
        packed = np.zeros(codes.shape[0], np.uint8)
        for k in range(per):
            packed |= codes[:, k] << (k * bits)
        return helper.make_tensor("c", elem_type, [count], packed.tobytes(), raw=True)
    return helper.make_tensor("c", elem_type, [256], np.arange(256, dtype=np.uint8).tobytes(), raw=True)


@pytest.mark.parametrize("src", NARROW)
@pytest.mark.parametrize("to", PLAIN + [T.BFLOAT16] + NARROW)
def test_every_code_to_each_type(onyx, src, to):
    if src == to == T.FLOAT8E8M0:
        pytest.skip("onnx's reference re-encodes through float32, turning code 0 (2^-127, a float32 subnormal) "
                    "into code 1; a cast to the same type keeps every code (checked below)")
    nodes = [helper.make_node("Constant", [], ["c"], value=_every_code(src)),
             helper.make_node("Cast", ["c"], ["y"], to=to)]
    out = to
    if to not in PLAIN:
        nodes.append(helper.make_node("Cast", ["y"], ["w"], to=T.FLOAT))
        out = T.FLOAT
    # A graph input keeps the model from being all constants; x is empty.
    nodes.append(helper.make_node("Concat", [nodes[-1].output[0], "x"], ["z"], axis=0))
    x = np.zeros(0, helper.tensor_dtype_to_np_dtype(out))
    model = _model(nodes, out, out)
    if src in NARROW and to in NARROW and src != to and _reference_lacks(src, to):
        # ml_dtypes has no direct cast between these two formats: the
        # reference goes through float32, which holds every value of both
        # exactly, so the result is the same value conversion.
        ref_nodes = [nodes[0], helper.make_node("Cast", ["c"], ["f"], to=T.FLOAT),
                     helper.make_node("Cast", ["f"], ["y"], to=to)] + nodes[2:]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want = ReferenceEvaluator(_model(ref_nodes, out, out)).run(None, {"x": x})[0]
        got = onyx.InferenceSession(model.SerializeToString()).run(None, {"x": x})[0]
    else:
        want, got = _run_both(onyx, model, x)
    _assert_same(want, got, "every %s code -> %s" % (T.DataType.Name(src), T.DataType.Name(to)))


def _reference_lacks(src, to):
    try:
        np.zeros(1, helper.tensor_dtype_to_np_dtype(src)).astype(helper.tensor_dtype_to_np_dtype(to))
        return False
    except TypeError:
        return True


@pytest.mark.parametrize("src", [T.FLOAT, T.FLOAT16, T.DOUBLE])
@pytest.mark.parametrize("round_mode", ["up", "down", "nearest"])
@pytest.mark.parametrize("saturate", [1, 0])
def test_float_to_float8e8m0_each_round_mode(onyx, src, round_mode, saturate):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        x = _float_inputs().astype(helper.tensor_dtype_to_np_dtype(src))
    model = _model([helper.make_node("Cast", ["x"], ["y"], to=T.FLOAT8E8M0, saturate=saturate, round_mode=round_mode),
                    helper.make_node("Cast", ["y"], ["z"], to=T.FLOAT)], src, T.FLOAT)
    want, got = _run_both(onyx, model, x)
    _assert_same(want, got, "%s -> float8e8m0 (%s, saturate=%d)" % (T.DataType.Name(src), round_mode, saturate))


def test_unknown_round_mode_is_refused_naming_it(onyx):
    model = _model([helper.make_node("Cast", ["x"], ["z"], to=T.FLOAT8E8M0, round_mode="sideways")], T.FLOAT,
                   T.FLOAT8E8M0)
    with pytest.raises(Exception, match="sideways"):
        onyx.InferenceSession(model.SerializeToString())


def test_float8e8m0_to_itself_keeps_every_code(onyx):
    nodes = [helper.make_node("Constant", [], ["c"], value=_every_code(T.FLOAT8E8M0)),
             helper.make_node("Cast", ["c"], ["y"], to=T.FLOAT8E8M0),
             helper.make_node("Cast", ["y"], ["w"], to=T.UINT8, saturate=0),
             helper.make_node("Concat", ["w", "x"], ["z"], axis=0)]
    model = _model(nodes, T.UINT8, T.UINT8)
    # y -> uint8 goes through the value; compare values through float instead.
    model.graph.node[2].CopyFrom(helper.make_node("Cast", ["y"], ["w"], to=T.FLOAT))
    model = _model(list(model.graph.node), T.FLOAT, T.FLOAT)
    got = onyx.InferenceSession(model.SerializeToString()).run(None, {"x": np.zeros(0, np.float32)})[0]
    want = np.array([np.nan if c == 255 else 2.0 ** (c - 127) for c in range(256)], np.float32)
    _assert_same(want, got, "float8e8m0 -> float8e8m0")

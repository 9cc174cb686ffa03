"""DeformConv (19, 22): offsets (fractional, out of the image), masks, bias,
groups, offset groups, strides, dilations, pads, against
onnx.reference.ReferenceEvaluator and onnxruntime where it has the kernel;
bad shapes name the node and the input."""

import ml_dtypes
import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper
from onnx.helper import np_dtype_to_tensor_dtype
from onnx.reference import ReferenceEvaluator

import onyxruntime as rt

RNG = np.random.default_rng(21)


def _model(feeds, opset=19, **attrs):
    names = list(feeds)
    node = helper.make_node("DeformConv", [n if feeds[n] is not None else "" for n in names], ["y"], name="dc",
                            **attrs)
    elem = np_dtype_to_tensor_dtype(feeds["x"].dtype)
    ins = [helper.make_tensor_value_info(n, elem, v.shape) for n, v in feeds.items() if v is not None]
    graph = helper.make_graph([node], "g", ins, [helper.make_tensor_value_info("y", elem, None)])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = helper.find_min_ir_version_for([m.opset_import[0]])
    return m, {n: v for n, v in feeds.items() if v is not None}


def _ours(m, f):
    return rt.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, f)[0]


def _case(n=1, c=2, h=5, w=6, oc=4, k=(3, 3), group=1, og=1, stride=(1, 1), dil=(1, 1), pads=(0, 0, 0, 0),
          use_mask=True, use_bias=True, dtype=np.float32, scale=1.5):
    kh, kw = k
    oh = (h + pads[0] + pads[2] - ((kh - 1) * dil[0] + 1)) // stride[0] + 1
    ow = (w + pads[1] + pads[3] - ((kw - 1) * dil[1] + 1)) // stride[1] + 1
    feeds = {"x": RNG.standard_normal((n, c, h, w)).astype(dtype),
             "w": RNG.standard_normal((oc, c // group, kh, kw)).astype(dtype),
             "offset": (RNG.standard_normal((n, og * 2 * kh * kw, oh, ow)) * scale).astype(dtype),
             "B": RNG.standard_normal(oc).astype(dtype) if use_bias else None,
             "mask": RNG.uniform(0, 1, (n, og * kh * kw, oh, ow)).astype(dtype) if use_mask else None}
    if not use_mask:
        feeds.pop("mask")
        if not use_bias:
            feeds.pop("B")
    attrs = dict(group=group, offset_group=og, strides=list(stride), dilations=list(dil), pads=list(pads),
                 kernel_shape=list(k))
    return feeds, attrs


_CASES = [dict(), dict(use_mask=False), dict(use_mask=False, use_bias=False), dict(pads=(1, 1, 1, 1)),
          dict(stride=(2, 1), dil=(1, 2), pads=(1, 2, 0, 1)), dict(c=4, oc=6, group=2), dict(c=4, og=2),
          dict(c=4, oc=4, group=2, og=4, k=(2, 3)), dict(n=2, scale=4.0), dict(k=(1, 1))]


@pytest.mark.parametrize("case", range(len(_CASES)))
@pytest.mark.parametrize("opset", [19, 22])
def test_deform_conv(case, opset):
    feeds, attrs = _case(**_CASES[case])
    m, f = _model(feeds, opset, **attrs)
    y = _ours(m, f)
    ref = ReferenceEvaluator(m).run(None, f)[0]
    np.testing.assert_allclose(y, ref, rtol=1e-4, atol=1e-4)
    try:
        sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    except Exception as e:  # noqa: BLE001 - older onnxruntime builds lack DeformConv
        if "NOT_IMPLEMENTED" in str(e) or "opset" in str(e).lower():
            return
        raise
    np.testing.assert_allclose(y, sess.run(None, f)[0], rtol=1e-4, atol=1e-4)


# onnx's reference samples in float32 (its GridSample), hence 1e-5 for float64.
@pytest.mark.parametrize("dtype,tol", [(np.float64, 1e-6), (np.float16, 3e-2), (ml_dtypes.bfloat16, 2e-1)])
def test_deform_conv_types(dtype, tol):
    feeds, attrs = _case(dtype=np.float64)
    f32 = _model(feeds, 22, **attrs)
    want = ReferenceEvaluator(f32[0]).run(None, f32[1])[0]
    cast = {k: v.astype(dtype) for k, v in feeds.items()}
    m, f = _model(cast, 22, **attrs)
    y = _ours(m, f)
    assert y.dtype == dtype
    np.testing.assert_allclose(y.astype(np.float64), want, rtol=tol * 10, atol=tol * 10)


def test_deform_conv_zero_offsets_is_conv():
    feeds, attrs = _case(use_mask=False, pads=(1, 1, 1, 1))
    feeds["offset"][:] = 0
    y = _ours(*_model(feeds, 19, **attrs))
    conv = helper.make_node("Conv", ["x", "w", "B"], ["y"], pads=[1, 1, 1, 1])
    g = helper.make_graph([conv], "g", [helper.make_tensor_value_info(n, TensorProto.FLOAT, None)
                                        for n in ("x", "w", "B")], [helper.make_tensor_value_info("y", 1, None)])
    cm = helper.make_model(g, opset_imports=[helper.make_opsetid("", 19)])
    cm.ir_version = 9
    want = _ours(cm, {k: feeds[k] for k in ("x", "w", "B")})
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-5)


def test_deform_conv_bad_inputs():
    feeds, attrs = _case()
    bad = dict(feeds, offset=feeds["offset"][:, :4])
    with pytest.raises(Exception) as e:
        _ours(*_model(bad, 19, **attrs))
    assert "dc" in str(e.value) and "input 2 (offset)" in str(e.value)
    bad = dict(feeds, mask=feeds["mask"][:, :, :2])
    with pytest.raises(Exception) as e:
        _ours(*_model(bad, 19, **attrs))
    assert "input 4 (mask)" in str(e.value)
    feeds, attrs = _case(c=3)
    attrs["offset_group"] = 2
    with pytest.raises(Exception) as e:
        _ours(*_model(feeds, 19, **attrs))
    assert "offset_group" in str(e.value) and "3 channels" in str(e.value)

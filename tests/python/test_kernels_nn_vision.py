"""CPU kernels of the vision and recurrent operators: Resize/Upsample,
ConvTranspose, LSTM, GRU, RNN (and GridSample, RoiAlign, MaxUnpool, Col2Im
where present). Small models built with onnx.helper run through onyxruntime
and are compared with onnxruntime and, where it follows the spec, with
onnx.reference.ReferenceEvaluator; bad inputs must give an INVALID_ARGUMENT
error that names the node."""

import itertools

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

import onyxruntime as rt

NP2ONNX = {np.float32: TensorProto.FLOAT, np.float64: TensorProto.DOUBLE, np.float16: TensorProto.FLOAT16,
           np.int64: TensorProto.INT64, np.int32: TensorProto.INT32}


def _vi(name, arr_or_dtype, shape=None):
    if isinstance(arr_or_dtype, np.ndarray):
        return helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(arr_or_dtype.dtype),
                                             list(arr_or_dtype.shape))
    return helper.make_tensor_value_info(name, NP2ONNX[arr_or_dtype], shape)


def _model(node, feeds, n_out=1, opset=19, out_dtype=None, initializers=()):
    inputs = [_vi(k, v) for k, v in feeds.items()]
    out_dtype = out_dtype or next(iter(feeds.values())).dtype.type
    outputs = [_vi(o, out_dtype, None) for o in node.output[:n_out] if o]
    graph = helper.make_graph([node], "g", inputs, outputs, initializer=list(initializers))
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m


def _ours(model, feeds):
    return rt.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)


def _theirs(model, feeds):
    return ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)


def _ref(model, feeds):
    return ReferenceEvaluator(model).run(None, feeds)


def _check(model, feeds, ref=True, ortc=True, rtol=1e-4, atol=1e-5):
    ours = _ours(model, feeds)
    if ortc:
        theirs = _theirs(model, feeds)
        for a, b in zip(ours, theirs):
            assert a.shape == b.shape
            np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)
    if ref:
        refs = _ref(model, feeds)
        for a, b in zip(ours, refs):
            assert a.shape == b.shape
            np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)
    return ours


def _bad(model, feeds, node_name, *words):
    with pytest.raises(Exception) as e:
        _ours(model, feeds)
    msg = str(e.value)
    assert "INVALID_ARGUMENT" in msg, msg
    assert node_name in msg, msg
    for w in words:
        assert w in msg, msg
    return msg


RNG = np.random.default_rng(0)


def _x(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


# ---------------------------------------------------------------- Resize


def _resize_node(mode, scales=True, **attrs):
    ins = ["X", "", "scales"] if scales else ["X", "", "", "sizes"]
    return helper.make_node("Resize", ins, ["Y"], name="rs", mode=mode, **attrs)


COORDS = ["half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric", "half_pixel_symmetric"]


@pytest.mark.parametrize("mode,coord", list(itertools.product(["linear", "cubic"], COORDS)))
@pytest.mark.parametrize("scales", [[1, 1, 1.7, 0.6], [1, 1, 0.5, 2.5], [1, 1, 3.0, 1.0]])
def test_resize_linear_cubic_scales(mode, coord, scales):
    x = _x(2, 3, 5, 7)
    s = np.array(scales, np.float32)
    node = _resize_node(mode, coordinate_transformation_mode=coord)
    m = _model(node, {"X": x, "scales": s})
    # onnxruntime reads align_corners with the integer output length; the
    # spec and the reference use scale * length, so compare with the reference there.
    ortc = not (coord == "align_corners" and any(abs(v * d - round(v * d)) > 1e-6 for v, d in zip(scales, x.shape)))
    ortc = ortc and coord != "half_pixel_symmetric"  # onnxruntime 1.x lacks it at some versions
    _check(m, {"X": x, "scales": s}, ortc=ortc)


@pytest.mark.parametrize("nearest_mode", ["round_prefer_floor", "round_prefer_ceil", "floor", "ceil"])
@pytest.mark.parametrize("coord", ["half_pixel", "asymmetric", "align_corners", "pytorch_half_pixel"])
def test_resize_nearest_sizes(nearest_mode, coord):
    x = _x(1, 2, 4, 5)
    sizes = np.array([1, 2, 7, 3], np.int64)
    node = _resize_node("nearest", scales=False, coordinate_transformation_mode=coord, nearest_mode=nearest_mode)
    _check(_model(node, {"X": x, "sizes": sizes}), {"X": x, "sizes": sizes})


@pytest.mark.parametrize("mode", ["nearest", "linear", "cubic"])
def test_resize_tf_crop_and_resize_with_extrapolation(mode):
    x = _x(1, 1, 6, 6)
    roi = np.array([0, 0, -0.17, 0.31, 1, 1, 0.93, 1.37], np.float32)
    sizes = np.array([1, 1, 4, 5], np.int64)
    node = helper.make_node("Resize", ["X", "roi", "", "sizes"], ["Y"], name="rs", mode=mode,
                            coordinate_transformation_mode="tf_crop_and_resize", extrapolation_value=7.5)
    feeds = {"X": x, "roi": roi, "sizes": sizes}
    out = _check(_model(node, feeds), feeds)
    assert (out[0] == 7.5).any()


@pytest.mark.parametrize("mode", ["linear", "cubic"])
def test_resize_antialias_downscale_matches_reference(mode):
    x = _x(1, 2, 9, 11)
    s = np.array([1, 1, 0.4, 0.6], np.float32)
    node = _resize_node(mode, antialias=1)
    _check(_model(node, {"X": x, "scales": s}), {"X": x, "scales": s}, ortc=False)


def test_resize_cubic_exclude_outside_and_coeff():
    x = _x(1, 1, 5, 5)
    s = np.array([1, 1, 1.6, 0.7], np.float32)
    node = _resize_node("cubic", cubic_coeff_a=-0.5, exclude_outside=1)
    _check(_model(node, {"X": x, "scales": s}), {"X": x, "scales": s})


@pytest.mark.parametrize("policy", ["stretch", "not_larger", "not_smaller"])
def test_resize_axes_and_keep_aspect_ratio(policy):
    x = _x(2, 3, 6, 4)
    sizes = np.array([5, 9], np.int64)
    node = helper.make_node("Resize", ["X", "", "", "sizes"], ["Y"], name="rs", mode="linear", axes=[3, 2],
                            keep_aspect_ratio_policy=policy)
    _check(_model(node, {"X": x, "sizes": sizes}), {"X": x, "sizes": sizes})


def test_resize_double_and_half():
    xd = _x(1, 1, 3, 4, dtype=np.float64)
    s = np.array([1, 1, 2, 1.5], np.float32)
    node = _resize_node("linear")
    _check(_model(node, {"X": xd, "scales": s}), {"X": xd, "scales": s}, rtol=1e-10, atol=1e-12, ortc=False)
    xh = _x(1, 1, 3, 4, dtype=np.float16)
    ours = _ours(_model(node, {"X": xh, "scales": s}), {"X": xh, "scales": s})[0]
    want = _ours(_model(node, {"X": xh.astype(np.float32), "scales": s}), {"X": xh.astype(np.float32), "scales": s})[0]
    assert ours.dtype == np.float16
    np.testing.assert_allclose(ours.astype(np.float32), want, rtol=2e-3, atol=2e-3)


@pytest.mark.parametrize("opset", [11, 13])
def test_resize_opset11_13_forms(opset):
    x = _x(1, 2, 3, 4)
    roi = np.array([], np.float32)
    s = np.array([1, 1, 2.0, 0.5], np.float32)
    node = helper.make_node("Resize", ["X", "roi", "scales"], ["Y"], name="rs", mode="nearest",
                            coordinate_transformation_mode="asymmetric")
    feeds = {"X": x, "roi": roi, "scales": s}
    _check(_model(node, feeds, opset=opset), feeds, ref=False)


def test_resize_tf_half_pixel_for_nn_opset11():
    x = _x(1, 1, 4, 4)
    s = np.array([1, 1, 1.5, 0.75], np.float32)
    node = helper.make_node("Resize", ["X", "roi", "scales"], ["Y"], name="rs", mode="nearest",
                            coordinate_transformation_mode="tf_half_pixel_for_nn")
    feeds = {"X": x, "roi": np.array([], np.float32), "scales": s}
    _check(_model(node, feeds, opset=11), feeds, ref=False)


@pytest.mark.parametrize("mode", ["nearest", "linear"])
@pytest.mark.parametrize("scales", [[1, 1, 2, 3], [1, 1, 0.5, 0.6], [1, 1, 1.5, 2.5]])
def test_resize_opset10_and_upsample9(mode, scales):
    x = _x(1, 2, 4, 5)
    s = np.array(scales, np.float32)
    feeds = {"X": x, "scales": s}
    r10 = helper.make_node("Resize", ["X", "scales"], ["Y"], name="rs", mode=mode)
    _check(_model(r10, feeds, opset=10), feeds, ref=False)
    if min(scales) >= 1:
        up = helper.make_node("Upsample", ["X", "scales"], ["Y"], name="up", mode=mode)
        _check(_model(up, feeds, opset=9), feeds, ref=False)


def test_upsample7_scales_attribute():
    x = _x(1, 2, 3, 3)
    node = helper.make_node("Upsample", ["X"], ["Y"], name="up", mode="nearest", scales=[1.0, 1.0, 2.0, 3.0])
    out = _check(_model(node, {"X": x}, opset=7), {"X": x}, ref=False)
    np.testing.assert_array_equal(out[0], np.repeat(np.repeat(x, 2, axis=2), 3, axis=3))


def test_resize_bad_inputs_name_the_node():
    x = _x(1, 1, 2, 2)
    node = _resize_node("linear")
    _bad(_model(node, {"X": x, "scales": np.array([1, 2], np.float32)}), {"X": x, "scales": np.array([1, 2], np.float32)},
         "rs", "scales")
    bad = np.array([1, 1, -2, 2], np.float32)
    _bad(_model(node, {"X": x, "scales": bad}), {"X": x, "scales": bad}, "rs", "scales")
    both = helper.make_node("Resize", ["X", "", "scales", "sizes"], ["Y"], name="rs2", mode="linear")
    feeds = {"X": x, "scales": np.array([1, 1, 2, 2], np.float32), "sizes": np.array([1, 1, 4, 4], np.int64)}
    _bad(_model(both, feeds), feeds, "rs2", "sizes")
    crop = helper.make_node("Resize", ["X", "roi", "", "sizes"], ["Y"], name="rs3", mode="linear",
                            coordinate_transformation_mode="tf_crop_and_resize")
    feeds = {"X": x, "roi": np.array([0, 1], np.float32), "sizes": np.array([1, 1, 4, 4], np.int64)}
    _bad(_model(crop, feeds), feeds, "rs3", "roi")


# ---------------------------------------------------------- ConvTranspose


CT_CASES = [
    dict(x=(1, 2, 4, 5), w=(2, 3, 3, 3)),
    dict(x=(2, 4, 3, 3), w=(4, 1, 3, 2), group=2, strides=[2, 3], pads=[1, 0, 0, 1]),
    dict(x=(1, 3, 5), w=(3, 2, 4), strides=[2], dilations=[2], output_padding=[1]),
    dict(x=(1, 2, 3, 4, 3), w=(2, 2, 2, 3, 2), strides=[1, 2, 2], pads=[0, 1, 0, 1, 0, 1]),
    dict(x=(1, 2, 4, 4), w=(2, 2, 3, 3), strides=[2, 2], auto_pad="SAME_UPPER"),
    dict(x=(1, 2, 4, 4), w=(2, 2, 3, 3), strides=[2, 2], auto_pad="SAME_LOWER"),
    dict(x=(1, 2, 4, 4), w=(2, 2, 3, 3), strides=[2, 2], auto_pad="VALID"),
    dict(x=(1, 2, 3, 3), w=(2, 2, 3, 3), strides=[3, 2], output_shape=[10, 8]),
    dict(x=(2, 6, 5, 5), w=(6, 1, 3, 3), group=6, strides=[2, 2], pads=[1, 1, 1, 1]),
    dict(x=(1, 16, 20, 20), w=(16, 8, 4, 4), strides=[2, 2], pads=[1, 1, 1, 1]),
]


@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize("case", range(len(CT_CASES)))
def test_conv_transpose(case, bias):
    c = dict(CT_CASES[case])
    x = _x(*c.pop("x"))
    w = _x(*c.pop("w"))
    feeds = {"X": x, "W": w}
    ins = ["X", "W"]
    if bias:
        feeds["B"] = _x(w.shape[1] * c.get("group", 1))
        ins.append("B")
    node = helper.make_node("ConvTranspose", ins, ["Y"], name="ct", **c)
    # The reference mishandles groups with bias and SAME_UPPER's split; onnxruntime is the oracle there.
    ref = c.get("group", 1) == 1 and "auto_pad" not in c
    _check(_model(node, feeds), feeds, ref=ref, rtol=1e-4, atol=1e-4)


def test_conv_transpose_double():
    x = _x(1, 2, 3, 3, dtype=np.float64)
    w = _x(2, 3, 2, 2, dtype=np.float64)
    node = helper.make_node("ConvTranspose", ["X", "W"], ["Y"], name="ct", strides=[2, 2])
    # onnxruntime has no double ConvTranspose.
    _check(_model(node, {"X": x, "W": w}), {"X": x, "W": w}, ortc=False, rtol=1e-10, atol=1e-10)


def test_conv_transpose_bad_inputs_name_the_node():
    x = _x(1, 3, 4, 4)
    w = _x(2, 3, 3, 3)  # needs 3 input channels in dim 0
    node = helper.make_node("ConvTranspose", ["X", "W"], ["Y"], name="ct_bad")
    _bad(_model(node, {"X": x, "W": w}), {"X": x, "W": w}, "ct_bad", "'W'")
    w = _x(3, 2, 3, 3)
    b = _x(5)
    node = helper.make_node("ConvTranspose", ["X", "W", "B"], ["Y"], name="ct_bias")
    _bad(_model(node, {"X": x, "W": w, "B": b}), {"X": x, "W": w, "B": b}, "ct_bias", "'B'")


# ------------------------------------------------------- LSTM / GRU / RNN


def _rnn_feeds(op, S, B, I, H, D, layout=0, bias=True, seq=False, init=False, peep=False, dtype=np.float32):
    G = {"LSTM": 4, "GRU": 3, "RNN": 1}[op]
    feeds = {"X": _x(*((S, B, I) if layout == 0 else (B, S, I)), dtype=dtype),
             "W": _x(D, G * H, I, dtype=dtype) * 0.5, "R": _x(D, G * H, H, dtype=dtype) * 0.5}
    names = ["X", "W", "R"]
    if bias:
        feeds["B"] = _x(D, 2 * G * H, dtype=dtype) * 0.5
    names.append("B" if bias else "")
    if seq:
        feeds["sequence_lens"] = RNG.integers(1, S + 1, size=B).astype(np.int32)
    names.append("sequence_lens" if seq else "")
    if init:
        shape = (D, B, H) if layout == 0 else (B, D, H)
        feeds["initial_h"] = _x(*shape, dtype=dtype)
        if op == "LSTM":
            feeds["initial_c"] = _x(*shape, dtype=dtype)
    names.append("initial_h" if init else "")
    if op == "LSTM":
        names.append("initial_c" if init else "")
        if peep:
            feeds["P"] = _x(D, 3 * H, dtype=dtype) * 0.5
        names.append("P" if peep else "")
    while names and names[-1] == "":
        names.pop()
    return feeds, names


RNN_OUTS = {"LSTM": ["Y", "Y_h", "Y_c"], "GRU": ["Y", "Y_h"], "RNN": ["Y", "Y_h"]}


@pytest.mark.parametrize("op", ["LSTM", "GRU", "RNN"])
@pytest.mark.parametrize("direction", ["forward", "reverse", "bidirectional"])
@pytest.mark.parametrize("seq,init", [(False, False), (True, True)])
def test_recurrent_against_onnxruntime(op, direction, seq, init):
    D = 2 if direction == "bidirectional" else 1
    feeds, names = _rnn_feeds(op, S=5, B=3, I=4, H=6, D=D, seq=seq, init=init, peep=True)
    node = helper.make_node(op, names, RNN_OUTS[op], name="rec", hidden_size=6, direction=direction)
    m = _model(node, feeds, n_out=len(RNN_OUTS[op]))
    # The reference ignores sequence_lens; onnxruntime is the oracle.
    want = _check(m, feeds, ref=not seq, rtol=1e-4, atol=1e-5)
    if seq:
        lens = feeds["sequence_lens"]
        for b, n in enumerate(lens):
            assert not want[0][n:, :, b].any()  # steps past a sequence's end are zeros
    # layout 1 (batch first), which onnxruntime lacks: the same numbers transposed.
    feeds1 = {k: (v.transpose(1, 0, 2).copy() if k in ("X", "initial_h", "initial_c") else v) for k, v in feeds.items()}
    node1 = helper.make_node(op, names, RNN_OUTS[op], name="rec", hidden_size=6, direction=direction, layout=1)
    got = _ours(_model(node1, feeds1, n_out=len(RNN_OUTS[op])), feeds1)
    np.testing.assert_allclose(got[0], want[0].transpose(2, 0, 1, 3), rtol=1e-6, atol=1e-7)
    for g, w in zip(got[1:], want[1:]):
        np.testing.assert_allclose(g, w.transpose(1, 0, 2), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("op,extra", [
    ("LSTM", dict(clip=0.7)),
    ("LSTM", dict(input_forget=1)),
    ("LSTM", dict(activations=["HardSigmoid", "LeakyRelu", "Tanh"], activation_alpha=[0.3, 0.05],
                  activation_beta=[0.4])),
    ("GRU", dict(linear_before_reset=1)),
    ("GRU", dict(clip=0.5, activations=["Sigmoid", "Relu"])),
    ("RNN", dict(activations=["Relu"], clip=1.0)),
    ("RNN", dict(activations=["Affine"], activation_alpha=[0.5], activation_beta=[0.1])),
])
def test_recurrent_attributes(op, extra):
    feeds, names = _rnn_feeds(op, S=4, B=2, I=3, H=5, D=1, init=True)
    node = helper.make_node(op, names, RNN_OUTS[op], name="rec", hidden_size=5, **extra)
    _check(_model(node, feeds, n_out=len(RNN_OUTS[op])), feeds, ref=False)


@pytest.mark.parametrize("op", ["LSTM", "GRU", "RNN"])
def test_recurrent_double(op):
    feeds, names = _rnn_feeds(op, S=3, B=2, I=3, H=4, D=2, dtype=np.float64)
    node = helper.make_node(op, names, RNN_OUTS[op], name="rec", hidden_size=4, direction="bidirectional")
    _check(_model(node, feeds, n_out=len(RNN_OUTS[op])), feeds, ortc=False, rtol=1e-9, atol=1e-10)


@pytest.mark.parametrize("op", ["LSTM", "GRU", "RNN"])
def test_recurrent_bad_inputs_name_the_node(op):
    feeds, names = _rnn_feeds(op, S=3, B=2, I=3, H=4, D=1)
    feeds["R"] = feeds["R"][:, :, :3].copy()
    node = helper.make_node(op, names, RNN_OUTS[op][:2], name="rec_bad", hidden_size=4)
    _bad(_model(node, feeds, n_out=2), feeds, "rec_bad", "'R'")
    feeds, names = _rnn_feeds(op, S=3, B=2, I=3, H=4, D=1, seq=True)
    feeds["sequence_lens"] = np.array([2, 9], np.int32)
    node = helper.make_node(op, names, RNN_OUTS[op][:2], name="rec_len", hidden_size=4)
    _bad(_model(node, feeds, n_out=2), feeds, "rec_len", "sequence_lens")


# ------------------------------------------------ GridSample, RoiAlign, ...


@pytest.mark.parametrize("mode", ["bilinear", "nearest", "bicubic"])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align_corners", [0, 1])
def test_grid_sample_opset16(mode, padding_mode, align_corners):
    x = _x(2, 3, 5, 6)
    grid = (RNG.uniform(-1.4, 1.4, size=(2, 4, 7, 2))).astype(np.float32)
    node = helper.make_node("GridSample", ["X", "grid"], ["Y"], name="gs", mode=mode, padding_mode=padding_mode,
                            align_corners=align_corners)
    feeds = {"X": x, "grid": grid}
    if mode == "bicubic" and padding_mode == "border":
        # onnxruntime's bicubic border sampling differs from the spec's reference
        # near the edges; the opset-20 reference (mode cubic) is the oracle.
        ours = _ours(_model(node, feeds, opset=16), feeds)[0]
        n20 = helper.make_node("GridSample", ["X", "grid"], ["Y"], mode="cubic", padding_mode=padding_mode,
                               align_corners=align_corners)
        np.testing.assert_allclose(ours, _ref(_model(n20, feeds, opset=20), feeds)[0], rtol=1e-4, atol=1e-5)
        return
    _check(_model(node, feeds, opset=16), feeds, ref=False, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("mode", ["linear", "nearest", "cubic"])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
def test_grid_sample_opset20_2d_and_3d(mode, padding_mode):
    x = _x(1, 2, 4, 5)
    grid = (RNG.uniform(-1.3, 1.3, size=(1, 3, 4, 2))).astype(np.float32)
    node = helper.make_node("GridSample", ["X", "grid"], ["Y"], name="gs", mode=mode, padding_mode=padding_mode)
    feeds = {"X": x, "grid": grid}
    # onnxruntime's cubic border sampling differs from the reference near the edges.
    _check(_model(node, feeds, opset=20), feeds, ortc=not (mode == "cubic" and padding_mode == "border"),
           rtol=1e-4, atol=1e-5)
    if mode != "cubic":
        x3 = _x(1, 2, 3, 4, 5)
        g3 = (RNG.uniform(-1.2, 1.2, size=(1, 2, 3, 2, 3))).astype(np.float32)
        feeds = {"X": x3, "grid": g3}
        _check(_model(node, feeds, opset=20), feeds, ortc=False, rtol=1e-4, atol=1e-5)


def test_grid_sample_bad_grid_names_the_node():
    x = _x(1, 1, 3, 3)
    grid = _x(2, 2, 2, 2)
    node = helper.make_node("GridSample", ["X", "grid"], ["Y"], name="gs_bad")
    _bad(_model(node, {"X": x, "grid": grid}, opset=20), {"X": x, "grid": grid}, "gs_bad", "'grid'")


@pytest.mark.parametrize("mode", ["avg", "max"])
@pytest.mark.parametrize("ctm,opset", [("half_pixel", 16), ("output_half_pixel", 16), (None, 10)])
@pytest.mark.parametrize("sampling_ratio", [0, 2])
def test_roi_align(mode, ctm, opset, sampling_ratio):
    x = _x(2, 3, 10, 12)
    rois = np.array([[0, 0, 9, 9], [1.5, 2.2, 7.3, 6.1], [3, 3, 4, 4], [-2, 1, 13, 11]], np.float32)
    bi = np.array([0, 1, 1, 0], np.int64)
    attrs = dict(mode=mode, output_height=3, output_width=4, sampling_ratio=sampling_ratio, spatial_scale=0.9)
    if ctm is not None:
        attrs["coordinate_transformation_mode"] = ctm
    node = helper.make_node("RoiAlign", ["X", "rois", "batch_indices"], ["Y"], name="ra", **attrs)
    feeds = {"X": x, "rois": rois, "batch_indices": bi}
    # onnxruntime's max mode differs from the spec's reference; use the reference there.
    _check(_model(node, feeds, opset=opset, out_dtype=np.float32), feeds, ortc=mode == "avg", ref=opset >= 16,
           rtol=1e-4, atol=1e-5)


def test_roi_align_bad_batch_index_names_the_node():
    x = _x(1, 1, 4, 4)
    feeds = {"X": x, "rois": np.array([[0, 0, 2, 2]], np.float32), "batch_indices": np.array([3], np.int64)}
    node = helper.make_node("RoiAlign", ["X", "rois", "batch_indices"], ["Y"], name="ra_bad")
    _bad(_model(node, feeds, opset=16, out_dtype=np.float32), feeds, "ra_bad", "batch_indices")


def test_max_unpool_roundtrip_with_max_pool():
    x = _x(1, 2, 6, 6)
    pool = helper.make_node("MaxPool", ["X"], ["P", "I"], kernel_shape=[2, 2], strides=[2, 2])
    g = helper.make_graph([pool], "g", [_vi("X", x)], [_vi("P", np.float32, None), _vi("I", np.int64, None)])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    p, i = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"X": x})
    node = helper.make_node("MaxUnpool", ["P", "I"], ["Y"], name="mu", kernel_shape=[2, 2], strides=[2, 2])
    feeds = {"P": p, "I": i}
    _check(_model(node, feeds, opset=11, out_dtype=np.float32), feeds)


def test_max_unpool_bad_index_names_the_node():
    feeds = {"P": _x(1, 1, 2, 2), "I": np.array([[[[0, 1, 2, 99]]]], np.int64).reshape(1, 1, 2, 2)}
    node = helper.make_node("MaxUnpool", ["P", "I"], ["Y"], name="mu_bad", kernel_shape=[2, 2], strides=[2, 2])
    _bad(_model(node, feeds, opset=11, out_dtype=np.float32), feeds, "mu_bad", "'I'")


@pytest.mark.parametrize("attrs", [{}, dict(strides=[2, 1], pads=[1, 0, 1, 1], dilations=[1, 2])])
def test_col2im(attrs):
    image = np.array([5, 6], np.int64)
    block = np.array([2, 3], np.int64)
    s = attrs.get("strides", [1, 1])
    p = attrs.get("pads", [0, 0, 0, 0])
    d = attrs.get("dilations", [1, 1])
    nb = [(image[j] + p[j] + p[j + 2] - d[j] * (block[j] - 1) - 1) // s[j] + 1 for j in range(2)]
    x = _x(2, 3 * 6, int(np.prod(nb)))
    node = helper.make_node("Col2Im", ["input", "image_shape", "block_shape"], ["Y"], name="c2i", **attrs)
    feeds = {"input": x, "image_shape": image, "block_shape": block}
    _check(_model(node, feeds, opset=18, out_dtype=np.float32), feeds, ortc=False)
    bad = {"input": _x(2, 18, 7), "image_shape": image, "block_shape": block}
    _bad(_model(node, bad, opset=18, out_dtype=np.float32), bad, "c2i", "blocks")


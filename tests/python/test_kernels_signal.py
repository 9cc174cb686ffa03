"""DFT (17, 20), STFT (17), MelWeightMatrix (17): forward and inverse, real
and complex input, onesided, irfft, every axis, dft_length shorter and longer
than the signal, power-of-two and other lengths (the Bluestein path), against
numpy's FFT, onnx.reference.ReferenceEvaluator and onnxruntime where it has
the case; bad inputs name the node and the input."""

import ml_dtypes
import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

import onyxruntime as rt

RNG = np.random.default_rng(5)
_E = {np.float32: TensorProto.FLOAT, np.float64: TensorProto.DOUBLE, np.float16: TensorProto.FLOAT16,
      ml_dtypes.bfloat16: TensorProto.BFLOAT16, np.int64: TensorProto.INT64, np.int32: TensorProto.INT32}


def _model(op, feeds, opset, out_elem, **attrs):
    names = list(feeds)
    node = helper.make_node(op, [n if feeds[n] is not None else "" for n in names], ["y"], name="sig", **attrs)
    ins = [helper.make_tensor_value_info(n, _E[v.dtype.type], v.shape) for n, v in feeds.items() if v is not None]
    graph = helper.make_graph([node], "g", ins, [helper.make_tensor_value_info("y", out_elem, None)])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = helper.find_min_ir_version_for([m.opset_import[0]])
    return m, {n: v for n, v in feeds.items() if v is not None}


def _ours(m, f):
    return rt.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, f)[0]


def _theirs(m, f):
    try:
        sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    except Exception as e:  # noqa: BLE001 - onnxruntime lacks some types/opsets
        if "NOT_IMPLEMENTED" in str(e) or "opset" in str(e).lower():
            return None
        raise
    return sess.run(None, f)[0]


def _close(a, b, tol):
    assert a.shape == b.shape, (a.shape, b.shape)
    np.testing.assert_allclose(a.astype(np.float64), np.asarray(b).astype(np.float64), rtol=tol, atol=tol)


def _as_pairs(c):
    return np.stack([c.real, c.imag], axis=-1)


def _dft_feeds(x, dft_length=None, axis=None, opset=20):
    f = {"x": x, "dft_length": None if dft_length is None else np.array(dft_length, np.int64)}
    if opset >= 20:
        f["axis"] = None if axis is None else np.array(axis, np.int64)
    return f


@pytest.mark.parametrize("n", [1, 2, 8, 16, 7, 10, 12, 97])
@pytest.mark.parametrize("complex_in", [False, True])
@pytest.mark.parametrize("inverse", [False, True])
def test_dft_lengths(n, complex_in, inverse):
    sig = RNG.standard_normal((2, n, 3)) + (1j * RNG.standard_normal((2, n, 3)) if complex_in else 0)
    x = (_as_pairs(sig) if complex_in else sig[..., None]).astype(np.float32)
    m, f = _model("DFT", _dft_feeds(x, axis=1), 20, TensorProto.FLOAT, inverse=int(inverse))
    y = _ours(m, f)
    want = np.fft.ifft(sig, axis=1) if inverse else np.fft.fft(sig, axis=1)
    _close(y, _as_pairs(want), 1e-4)
    _close(y, ReferenceEvaluator(m).run(None, f)[0], 1e-4)
    theirs = _theirs(m, f)
    if theirs is not None:
        _close(y, theirs, 1e-3)


@pytest.mark.parametrize("dft_length", [5, 8, 13, 32])
@pytest.mark.parametrize("onesided", [0, 1])
def test_dft_length_pads_or_cuts(dft_length, onesided):
    x = RNG.standard_normal((3, 10, 1)).astype(np.float64)
    m, f = _model("DFT", _dft_feeds(x, dft_length, 1), 20, TensorProto.DOUBLE, onesided=onesided)
    y = _ours(m, f)
    want = np.fft.fft(x[..., 0], n=dft_length, axis=1)
    if onesided:
        want = want[:, : dft_length // 2 + 1]
    _close(y, _as_pairs(want), 1e-10)
    _close(y, ReferenceEvaluator(m).run(None, f)[0], 1e-10)
    theirs = _theirs(m, f)
    if theirs is not None:
        _close(y, theirs, 1e-6)


@pytest.mark.parametrize("axis", [0, 1, 2, -2, -3, -4])
def test_dft_every_axis_opset20(axis):
    x = RNG.standard_normal((3, 4, 5, 2)).astype(np.float32)
    m, f = _model("DFT", _dft_feeds(x, axis=axis), 20, TensorProto.FLOAT)
    y = _ours(m, f)
    sig = x[..., 0] + 1j * x[..., 1]
    _close(y, _as_pairs(np.fft.fft(sig, axis=axis % 4)), 1e-4)
    _close(y, ReferenceEvaluator(m).run(None, f)[0], 1e-4)


@pytest.mark.parametrize("axis", [0, 1, 2, -2])
def test_dft_axis_attribute_opset17(axis):
    x = RNG.standard_normal((2, 6, 5, 1)).astype(np.float32)
    m, f = _model("DFT", _dft_feeds(x, opset=17), 17, TensorProto.FLOAT, axis=axis, onesided=1)
    y = _ours(m, f)
    a = axis % 4
    want = np.fft.rfft(x[..., 0], axis=a)
    _close(y, _as_pairs(want), 1e-4)
    _close(y, ReferenceEvaluator(m).run(None, f)[0], 1e-4)
    theirs = _theirs(m, f)
    if theirs is not None and a == 1:
        _close(y, theirs, 1e-3)


@pytest.mark.parametrize("n", [10, 11, 16, None])
def test_dft_irfft(n):
    spec = np.fft.rfft(RNG.standard_normal((2, 12, 3)), axis=1)
    x = _as_pairs(spec).astype(np.float64)
    m, f = _model("DFT", _dft_feeds(x, n, 1), 20, TensorProto.DOUBLE, inverse=1, onesided=1)
    y = _ours(m, f)
    want = np.fft.irfft(spec, n=n, axis=1)[..., None]
    _close(y, want, 1e-10)
    _close(y, ReferenceEvaluator(m).run(None, f)[0], 1e-10)


@pytest.mark.parametrize("dtype,tol", [(np.float16, 2e-2), (ml_dtypes.bfloat16, 1e-1)])
def test_dft_half_types(dtype, tol):
    x = RNG.standard_normal((2, 12, 1)).astype(dtype)
    m, f = _model("DFT", _dft_feeds(x, axis=1), 20, _E[dtype])
    y = _ours(m, f)
    assert y.dtype == dtype
    _close(y, _as_pairs(np.fft.fft(x[..., 0].astype(np.float64), axis=1)), tol * 8)


def test_dft_large_matches_numpy():
    x = RNG.standard_normal((4, 4096, 1)).astype(np.float32)
    m, f = _model("DFT", _dft_feeds(x, axis=1), 20, TensorProto.FLOAT)
    _close(_ours(m, f), _as_pairs(np.fft.fft(x[..., 0].astype(np.float64), axis=1)), 2e-3)
    x = RNG.standard_normal((2, 3001, 2)).astype(np.float32)  # prime-ish length: Bluestein
    m, f = _model("DFT", _dft_feeds(x, axis=1), 20, TensorProto.FLOAT)
    _close(_ours(m, f), _as_pairs(np.fft.fft((x[..., 0] + 1j * x[..., 1]).astype(np.complex128), axis=1)), 2e-3)


def _fails(m, f, *words, at_load=False):
    with pytest.raises(Exception) as e:
        rt.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, f)
    for w in ("sig",) + words:
        assert w in str(e.value), str(e.value)


def test_dft_bad_inputs():
    x = RNG.standard_normal((2, 8, 1)).astype(np.float32)
    # Lengths whose work buffers (outside the tensor memory limit) would pass
    # 2^23 complex doubles each are refused before anything is allocated;
    # the largest power of two below the limit's neighbours still runs.
    _fails(*_model("DFT", _dft_feeds(x, (1 << 23) + 1, 1), 20, TensorProto.FLOAT), "input 1 (dft_length)",
           "8388609", "works in 33554432 points", "limit of 8388608")
    _fails(*_model("DFT", _dft_feeds(x, 1 << 24, 1), 20, TensorProto.FLOAT), "input 1 (dft_length)", "16777216")
    _fails(*_model("DFT", _dft_feeds(x, 3 << 21, 1), 20, TensorProto.FLOAT), "works in 16777216 points")
    y = _ours(*_model("DFT", _dft_feeds(x[:1], 1 << 20, 1), 20, TensorProto.FLOAT, onesided=1))
    _close(y, _as_pairs(np.fft.rfft(x[:1, :, 0].astype(np.float64), n=1 << 20, axis=1)), 1e-3)
    _fails(*_model("DFT", _dft_feeds(x, 0, 1), 20, TensorProto.FLOAT), "input 1 (dft_length)", "positive")
    _fails(*_model("DFT", _dft_feeds(x, None, 2), 20, TensorProto.FLOAT), "input 2 (axis)", "out of range")
    _fails(*_model("DFT", _dft_feeds(x, None, -4), 20, TensorProto.FLOAT), "input 2 (axis)", "-4")
    x3 = RNG.standard_normal((2, 8, 3)).astype(np.float32)
    _fails(*_model("DFT", _dft_feeds(x3, None, 1), 20, TensorProto.FLOAT), "input 0 (input)", "[2,8,3]")
    f = _dft_feeds(x, None, 1)
    f["dft_length"] = np.array([4, 5], np.int64)
    _fails(*_model("DFT", f, 20, TensorProto.FLOAT), "input 1 (dft_length)")


# --------------------------------------------------------------------------
# STFT


@pytest.mark.parametrize("frame_length,step", [(16, 8), (15, 4), (32, 32), (1, 1)])
@pytest.mark.parametrize("window", [False, True])
@pytest.mark.parametrize("onesided", [0, 1])
def test_stft_real(frame_length, step, window, onesided):
    x = RNG.standard_normal((2, 100, 1)).astype(np.float32)
    w = (0.5 - 0.5 * np.cos(2 * np.pi * np.arange(frame_length) / frame_length)).astype(np.float32)
    feeds = {"x": x, "step": np.array(step, np.int64), "window": w if window else None,
             "fl": np.array(frame_length, np.int64)}
    m, f = _model("STFT", feeds, 17, TensorProto.FLOAT, onesided=onesided)
    y = _ours(m, f)
    frames = 1 + (100 - frame_length) // step
    want = np.stack([np.fft.fft(x[:, i * step:i * step + frame_length, 0] * (w if window else 1), axis=1)
                     for i in range(frames)], axis=1)
    if onesided:
        want = want[:, :, : frame_length // 2 + 1]
    _close(y, _as_pairs(want), 1e-4)
    _close(y, ReferenceEvaluator(m).run(None, f)[0], 1e-4)
    theirs = _theirs(m, f)
    if theirs is not None:
        _close(y, theirs, 1e-3)


def test_stft_complex_and_window_only():
    sig = RNG.standard_normal((1, 50)) + 1j * RNG.standard_normal((1, 50))
    x = _as_pairs(sig)[:, :, :].astype(np.float64).reshape(1, 50, 2)
    w = np.hanning(10)
    m, f = _model("STFT", {"x": x, "step": np.array(5, np.int64), "window": w}, 17, TensorProto.DOUBLE, onesided=0)
    y = _ours(m, f)
    want = np.stack([np.fft.fft(sig[:, i * 5:i * 5 + 10] * w, axis=1) for i in range(9)], axis=1)
    _close(y, _as_pairs(want), 1e-10)
    _close(y, ReferenceEvaluator(m).run(None, f)[0], 1e-10)


def test_stft_bad_inputs():
    x = RNG.standard_normal((1, 40, 1)).astype(np.float32)
    w = np.ones(8, np.float32)
    m, f = _model("STFT", {"x": x, "step": np.array(0, np.int64), "window": w}, 17, TensorProto.FLOAT)
    _fails(m, f, "input 1 (frame_step)", "positive")
    m, f = _model("STFT", {"x": x, "step": np.array(2, np.int64), "window": w, "fl": np.array(9, np.int64)}, 17,
                  TensorProto.FLOAT)
    _fails(m, f, "input 2 (window)", "input 3 (frame_length)", "9")
    m, f = _model("STFT", {"x": x, "step": np.array(2, np.int64), "window": None, "fl": np.array(41, np.int64)}, 17,
                  TensorProto.FLOAT)
    _fails(m, f, "frame length 41", "input 0 (signal)")
    m, f = _model("STFT", {"x": x[0], "step": np.array(2, np.int64)}, 17, TensorProto.FLOAT)
    _fails(m, f, "input 0 (signal)", "[40,1]")


# --------------------------------------------------------------------------
# MelWeightMatrix


@pytest.mark.parametrize("mels,dft,rate,lo,hi", [(8, 16, 8192, 0, 4096), (20, 512, 16000, 20, 8000),
                                                 (40, 1024, 22050, 0, 11025), (5, 31, 1000, 100, 450)])
@pytest.mark.parametrize("out", [TensorProto.FLOAT, TensorProto.DOUBLE, TensorProto.FLOAT16])
def test_mel_weight_matrix(mels, dft, rate, lo, hi, out):
    feeds = {"mels": np.array(mels, np.int64), "dft": np.array(dft, np.int64), "rate": np.array(rate, np.int64),
             "lo": np.array(lo, np.float32), "hi": np.array(hi, np.float32)}
    m, f = _model("MelWeightMatrix", feeds, 17, out, output_datatype=out)
    y = _ours(m, f)
    ref = ReferenceEvaluator(m).run(None, f)[0]
    assert y.dtype == ref.dtype
    _close(y, ref, 1e-6)
    theirs = _theirs(m, f)
    if theirs is not None:
        _close(y, theirs, 1e-3)


def test_mel_weight_matrix_bad_inputs():
    def feeds(**over):
        f = {"mels": np.array(8, np.int64), "dft": np.array(16, np.int64), "rate": np.array(8000, np.int64),
             "lo": np.array(0, np.float32), "hi": np.array(4000, np.float32)}
        f.update(over)
        return f
    _fails(*_model("MelWeightMatrix", feeds(mels=np.array(0, np.int64)), 17, TensorProto.FLOAT),
           "input 0 (num_mel_bins)", "positive")
    _fails(*_model("MelWeightMatrix", feeds(hi=np.array(5000, np.float32)), 17, TensorProto.FLOAT),
           "4 (upper_edge_hertz) 5000", "sample_rate / 2")
    _fails(*_model("MelWeightMatrix", feeds(rate=np.array(-1, np.int64)), 17, TensorProto.FLOAT),
           "input 2 (sample_rate)")

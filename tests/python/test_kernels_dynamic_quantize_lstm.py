"""com.microsoft DynamicQuantizeLSTM (onnxruntime's contrib op, written by
onnxruntime.quantization.quantize_dynamic for LSTM nodes): int8/uint8 W and R,
per-direction or per-column scales and zero points, forward/reverse/
bidirectional, sequence_lens, initial states, peepholes, against a numpy
model of onnxruntime's arithmetic (each GEMM quantizes its float operand to
uint8 on the fly) and against onnxruntime itself; bad inputs name the node and
the input. Also the model quantize_dynamic makes from a float LSTM."""

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import onyxruntime as rt

_E = {np.int8: TensorProto.INT8, np.uint8: TensorProto.UINT8, np.int32: TensorProto.INT32,
      np.float32: TensorProto.FLOAT}
_INPUTS = ["X", "W", "R", "B", "sequence_lens", "initial_h", "initial_c", "P",
           "W_scale", "W_zero_point", "R_scale", "R_zero_point"]


_CONST = ("W", "R", "W_scale", "W_zero_point", "R_scale", "R_zero_point")


def _model(feeds, **attrs):
    """W, R and their scales and zero points are initializers (as the quantizer
    writes them; onnxruntime requires it); the rest are graph inputs."""
    names = [n if feeds.get(n) is not None else "" for n in _INPUTS]
    while names and names[-1] == "":
        names.pop()
    node = helper.make_node("DynamicQuantizeLSTM", names, ["Y", "Y_h", "Y_c"], name="qlstm", domain="com.microsoft",
                            **attrs)
    present = [n for n in _INPUTS if feeds.get(n) is not None]
    ins = [helper.make_tensor_value_info(n, _E[feeds[n].dtype.type], feeds[n].shape) for n in present
           if n not in _CONST]
    inits = [numpy_helper.from_array(feeds[n], n) for n in present if n in _CONST]
    outs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in ("Y", "Y_h", "Y_c")]
    g = helper.make_graph([node], "g", ins, outs, inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 14), helper.make_opsetid("com.microsoft", 1)])
    m.ir_version = 8
    return m.SerializeToString(), {n: feeds[n] for n in present if n not in _CONST}


def _dynq(a):
    """onnxruntime's on-the-fly uint8 quantization: operand less zero point, scale."""
    lo, hi = min(float(a.min(initial=0)), 0.0), max(float(a.max(initial=0)), 0.0)
    scale = np.float32(1.0) if hi == lo else np.float32((np.float32(hi) - np.float32(lo)) / np.float32(255))
    zp = np.float32(np.rint(np.clip(np.float32(0) - np.float32(lo) / scale, 0, 255)))
    q = np.clip(np.rint(a.astype(np.float32) / scale) + zp, 0, 255)
    return (q - zp).astype(np.float64), scale


def _reference(f, reverse=False):
    """A numpy model of the op, gates i, o, f, c; direction d of W is [I, 4H]."""
    x, w, r = f["X"], f["W"], f["R"]
    S, Bt, _ = x.shape
    D, H = r.shape[0], r.shape[1]
    G = 4 * H

    def per_col(t, d):
        t = np.asarray(t)
        return np.broadcast_to(t[d] if t.ndim == 2 else t[d], (G,)).astype(np.float32)

    lens = f["sequence_lens"] if f.get("sequence_lens") is not None else np.full(Bt, S, np.int32)
    max_len = int(lens.max()) if Bt else 0
    h0 = f["initial_h"] if f.get("initial_h") is not None else np.zeros((D, Bt, H), np.float32)
    c0 = f["initial_c"] if f.get("initial_c") is not None else np.zeros((D, Bt, H), np.float32)
    y = np.zeros((S, D, Bt, H), np.float32)
    yh = np.zeros((D, Bt, H), np.float32)
    yc = np.zeros((D, Bt, H), np.float32)
    sig = lambda v: 1.0 / (1.0 + np.exp(-v))  # noqa: E731
    for d in range(D):
        wz = per_col(f["W_zero_point"], d) if f.get("W_zero_point") is not None else np.zeros(G, np.float32)
        rz = per_col(f["R_zero_point"], d) if f.get("R_zero_point") is not None else np.zeros(G, np.float32)
        wq = w[d].astype(np.float64) - wz
        rq = r[d].astype(np.float64) - rz
        ws, rs = per_col(f["W_scale"], d), per_col(f["R_scale"], d)
        xa, xs = _dynq(x[:max_len].reshape(-1, x.shape[2]))
        xw = np.zeros((S * Bt, G), np.float32)
        xw[:max_len * Bt] = (xa @ wq).astype(np.float32) * (xs * ws)
        if f.get("B") is not None:
            xw += f["B"][d, :G] + f["B"][d, G:]
        xw = xw.reshape(S, Bt, G)
        h, c = h0[d].copy(), c0[d].copy()
        p = f["P"][d] if f.get("P") is not None else np.zeros(3 * H, np.float32)
        rev = d == 1 or reverse
        for step in range(S):
            # Step k runs t = k of each entry (len - 1 - k in reverse); rows that
            # ended before it count as zeros when H is quantized.
            active = step < np.asarray(lens)
            if not active.any():
                break
            used = active | (step == 0)
            tb = [(lens[b] - 1 - step if rev else step) if active[b] else 0 for b in range(Bt)]
            ha, hs = _dynq(np.where(used[:, None], h, 0))
            g = xw[tb, np.arange(Bt)] + (ha @ rq).astype(np.float32) * (hs * rs)
            i = sig(g[:, :H] + p[:H] * c)
            fg = sig(g[:, 2 * H:3 * H] + p[2 * H:] * c)
            cn = fg * c + i * np.tanh(g[:, 3 * H:])
            o = sig(g[:, H:2 * H] + p[H:2 * H] * cn)
            hn = o * np.tanh(cn)
            c = np.where(active[:, None], cn, c)
            h = np.where(active[:, None], hn, h)
            for b in range(Bt):
                if active[b]:
                    y[tb[b], d, b] = hn[b]
        empty = (np.asarray(lens) == 0)[:, None]
        yh[d], yc[d] = np.where(empty, 0, h), np.where(empty, 0, c)
    return [y, yh, yc]


def _feeds(rng, S=5, Bt=2, I=6, H=4, D=1, wtype=np.int8, per_column=False, bias=True, lens=None, init=False,
           peep=False, zero_points=False):
    G = 4 * H
    info = np.iinfo(wtype)
    sshape = (D, G) if per_column else (D,)
    f = {
        "X": rng.uniform(-2, 2, (S, Bt, I)).astype(np.float32),
        "W": rng.integers(info.min, info.max + 1, (D, I, G)).astype(wtype),
        "R": rng.integers(info.min, info.max + 1, (D, H, G)).astype(wtype),
        "B": rng.uniform(-0.5, 0.5, (D, 8 * H)).astype(np.float32) if bias else None,
        "sequence_lens": np.array(lens, np.int32) if lens is not None else None,
        "initial_h": rng.uniform(-1, 1, (D, Bt, H)).astype(np.float32) if init else None,
        "initial_c": rng.uniform(-1, 1, (D, Bt, H)).astype(np.float32) if init else None,
        "P": rng.uniform(-0.5, 0.5, (D, 3 * H)).astype(np.float32) if peep else None,
        "W_scale": rng.uniform(0.002, 0.01, sshape).astype(np.float32),
        "W_zero_point": (rng.integers(info.min // 8, info.max // 8, sshape) if zero_points
                         else np.zeros(sshape)).astype(wtype),
        "R_scale": rng.uniform(0.002, 0.01, sshape).astype(np.float32),
        "R_zero_point": (rng.integers(info.min // 8, info.max // 8, sshape) if zero_points
                         else np.zeros(sshape)).astype(wtype),
    }
    return f


def _ort_one_thread(model):
    # onnxruntime quantizes H_{t-1} per part of the batch it gives each thread
    # (for small hidden sizes); with one thread, over the whole batch, as we do.
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    return ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])


def _run(model, feeds):
    return rt.InferenceSession(model, providers=["CPUExecutionProvider"]).run(None, feeds)


# onnxruntime takes zero weight zero points only; ours takes any (checked
# against the numpy model alone).
CASES = [
    dict(),
    dict(per_column=True),
    dict(D=2, direction="bidirectional"),
    dict(direction="reverse"),
    dict(D=2, direction="bidirectional", lens=[5, 3], init=True, peep=True),
    dict(Bt=3, lens=[2, 5, 0], init=True),
    dict(S=1, Bt=1, I=3, H=2),
    dict(S=12, Bt=4, I=20, H=16, per_column=True),
    dict(wtype=np.uint8, zero_points=True, ort=False),
    dict(per_column=True, wtype=np.uint8, bias=False, zero_points=True, ort=False),
    dict(per_column=True, zero_points=True, D=2, direction="bidirectional", ort=False),
]


def _close(got, want, name, first=None):
    """Equal up to float rounding at each direction's first step (`first`: a
    list of (t, d, b) for Y), where the operands are exact; later, one ulp of
    the float cell may move an H_{t-1} value across a quantization boundary
    (one step, about 1/255 of its range, times the weights), and that carries
    on through the recurrence: all values agree to 3e-3."""
    assert got.shape == want.shape, (name, got.shape, want.shape)
    for t, d, b in first or []:
        np.testing.assert_allclose(got[t, d, b], want[t, d, b], rtol=1e-5, atol=1e-6,
                                   err_msg="%s first step t=%d d=%d b=%d" % (name, t, d, b))
    np.testing.assert_allclose(got, want, rtol=0, atol=3e-3, err_msg=name)


def _first_steps(f, reverse):
    S, Bt = f["X"].shape[0], f["X"].shape[1]
    lens = f["sequence_lens"] if f.get("sequence_lens") is not None else [S] * Bt
    out = []
    for d in range(f["R"].shape[0]):
        for b in range(Bt):
            if lens[b] > 0:
                out.append((lens[b] - 1 if (d == 1 or reverse) else 0, d, b))
    return out


@pytest.mark.parametrize("case", CASES, ids=[str(i) for i in range(len(CASES))])
def test_dynamic_quantize_lstm_matches_reference_and_onnxruntime(case):
    case = dict(case)
    direction = case.pop("direction", "forward")
    use_ort = case.pop("ort", True)
    rng = np.random.default_rng(len(str(case)) * 7 + len(direction))
    f = _feeds(rng, **case)
    model, feeds = _model(f, hidden_size=f["R"].shape[1], direction=direction)
    ours = _run(model, feeds)
    reverse = direction == "reverse"
    first = _first_steps(f, reverse)
    expected = _reference(f, reverse=reverse)
    for got, want, name in zip(ours, expected, ("Y", "Y_h", "Y_c")):
        _close(got, want, name, first if name == "Y" else None)
    if use_ort:
        theirs = _ort_one_thread(model).run(None, feeds)
        for got, want, name in zip(ours, theirs, ("Y", "Y_h", "Y_c")):
            _close(got, want, name, first if name == "Y" else None)


def test_quantize_dynamic_lstm_model_matches_onnxruntime(tmp_path):
    """A float LSTM, quantized by onnxruntime.quantization.quantize_dynamic."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    rng = np.random.default_rng(5)
    S, Bt, I, H = 7, 2, 16, 12
    inits = [numpy_helper.from_array(rng.normal(0, 0.3, (2, 4 * H, I)).astype(np.float32), "W"),
             numpy_helper.from_array(rng.normal(0, 0.3, (2, 4 * H, H)).astype(np.float32), "R"),
             numpy_helper.from_array(rng.normal(0, 0.1, (2, 8 * H)).astype(np.float32), "B")]
    node = helper.make_node("LSTM", ["X", "W", "R", "B"], ["Y", "Y_h", "Y_c"], hidden_size=H,
                            direction="bidirectional")
    g = helper.make_graph([node], "g", [helper.make_tensor_value_info("X", TensorProto.FLOAT, [S, Bt, I])],
                          [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in ("Y", "Y_h", "Y_c")],
                          inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 14)])
    m.ir_version = 8
    src, dst = tmp_path / "lstm.onnx", tmp_path / "lstm_q.onnx"
    src.write_bytes(m.SerializeToString())
    quantize_dynamic(str(src), str(dst), weight_type=QuantType.QInt8, per_channel=True)
    import onnx

    qm = onnx.load(str(dst))
    assert [n.op_type for n in qm.graph.node] == ["DynamicQuantizeLSTM"]
    x = rng.uniform(-1, 1, (S, Bt, I)).astype(np.float32)
    ours = rt.InferenceSession(str(dst), providers=["CPUExecutionProvider"]).run(None, {"X": x})
    theirs = _ort_one_thread(str(dst)).run(None, {"X": x})
    first = [(0, 0, b) for b in range(Bt)] + [(S - 1, 1, b) for b in range(Bt)]
    for got, want, name in zip(ours, theirs, ("Y", "Y_h", "Y_c")):
        _close(got, want, name, first if name == "Y" else None)
    # And close to the float model (8-bit weights and activations: ~1e-2).
    flt = ort.InferenceSession(str(src), providers=["CPUExecutionProvider"]).run(None, {"X": x})
    assert np.abs(ours[0] - flt[0]).max() < 0.05


def _err(model, feeds):
    with pytest.raises(Exception) as ei:
        _run(model, feeds)
    return str(ei.value)


def test_bad_inputs_name_node_and_input():
    rng = np.random.default_rng(3)
    f = _feeds(rng)

    m, fd = _model(dict(f, sequence_lens=np.array([9, 1], np.int32)), hidden_size=4)
    msg = _err(m, fd)
    assert "qlstm" in msg and "sequence_lens" in msg and "9" in msg

    m, fd = _model(dict(f, W_scale=np.array([0.0], np.float32)), hidden_size=4)
    msg = _err(m, fd)
    assert "qlstm" in msg and "W_scale" in msg and "> 0" in msg

    m, fd = _model(dict(f, R_scale=np.ones((1, 3), np.float32)), hidden_size=4)
    msg = _err(m, fd)
    assert "qlstm" in msg and "R_scale" in msg and "[1,3]" in msg.replace(" ", "")

    m, fd = _model(dict(f, W=np.zeros((1, 5, 16), np.int8)), hidden_size=4)
    msg = _err(m, fd)
    assert "'W'" in msg and "[1,5,16]" in msg.replace(" ", "")

    m, fd = _model(dict(f, R=f["R"].astype(np.uint8), R_zero_point=f["R_zero_point"].astype(np.uint8)),
                   hidden_size=4)
    msg = _err(m, fd)
    assert "qlstm" in msg and "'W' and 'R'" in msg

    m, fd = _model(dict(f, X=f["X"][0]), hidden_size=4)
    msg = _err(m, fd)
    assert "qlstm" in msg and "'X'" in msg and "rank 3" in msg
    # The session stays usable.
    m, fd = _model(f, hidden_size=4)
    assert _run(m, fd)[0].shape == (5, 1, 2, 4)

"""onnxruntime's transformer contrib ops that its optimizers write into saved
models: com.microsoft Attention (packed QKV, mask_index in its four forms,
unidirectional, past/present, qkv_hidden_sizes, attention_bias, scale),
EmbedLayerNormalization, SkipSimplifiedLayerNormalization and the
default-domain SimplifiedLayerNormalization (RMS norm). Each against a numpy
model of the operator and against onnxruntime itself; bad inputs name the
node and the input."""

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import onyxruntime as rt

F32 = np.float32
_E = {np.float32: TensorProto.FLOAT, np.int32: TensorProto.INT32, np.int64: TensorProto.INT64,
      np.float16: TensorProto.FLOAT16}


def _model(op, inputs, feeds, n_out=1, inits=(), domain="com.microsoft", **attrs):
    node = helper.make_node(op, inputs, ["Y%d" % i for i in range(n_out)], name="anode", domain=domain, **attrs)
    ins = [helper.make_tensor_value_info(n, _E[feeds[n].dtype.type], feeds[n].shape) for n in inputs
           if n and n not in inits]
    init = [numpy_helper.from_array(feeds[n], n) for n in inputs if n in inits]
    g = helper.make_graph([node], "g", ins, [helper.make_empty_tensor_value_info("Y%d" % i) for i in range(n_out)],
                          init)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)])
    m.ir_version = 8
    return m.SerializeToString(), {n: feeds[n] for n in inputs if n and n not in inits}


def _run(lib, model, feeds):
    return lib.InferenceSession(model, providers=["CPUExecutionProvider"]).run(None, feeds)


def _err(model, feeds, *words):
    with pytest.raises(Exception) as ei:
        _run(rt, model, feeds)
    for w in ("anode",) + words:
        assert w in str(ei.value), str(ei.value)


def _close(ours, want, theirs, tol=2e-5):
    for i, (a, w, t) in enumerate(zip(ours, want, theirs)):
        assert a.shape == np.shape(w) and a.dtype == t.dtype, (i, a.shape, np.shape(w), a.dtype, t.dtype)
        scale = max(1.0, float(np.abs(w).max()))
        np.testing.assert_allclose(a, w, rtol=tol, atol=tol * scale, err_msg="output %d vs numpy" % i)
        np.testing.assert_allclose(a, t, rtol=tol, atol=tol * scale, err_msg="output %d vs onnxruntime" % i)


# --- Attention ---

def _softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def _attention_ref(x, w, b, heads, mask=None, past=None, unidirectional=False, qkv=None, scale=None,
                   attn_bias=None, filt=-10000.0):
    B, S, _ = x.shape
    dq, dk, dv = qkv or (w.shape[1] // 3,) * 3
    p = x.astype(np.float64) @ w + (b if b is not None else 0)
    q, k, v = p[..., :dq], p[..., dq:dq + dk], p[..., dq + dk:]
    split = lambda t: t.reshape(B, S, heads, -1).transpose(0, 2, 1, 3)  # noqa: E731
    q, k, v = split(q), split(k), split(v)
    P = 0
    if past is not None:
        P = past.shape[3]
        k = np.concatenate([past[0], k], axis=2)
        v = np.concatenate([past[1], v], axis=2)
    present = np.stack([k, v]) if k.shape == v.shape else None
    T = P + S
    scale = scale or 1.0 / np.sqrt(dq // heads)
    add = np.zeros((B, S, T))
    if mask is not None:
        if mask.ndim == 3:
            add = np.where(mask > 0, 0.0, filt)
        elif mask.ndim == 2:
            add = np.broadcast_to(np.where(mask > 0, 0.0, filt)[:, None, :], (B, S, T)).copy()
        else:
            t = np.arange(T)
            for bi in range(B):
                keep = t < mask[bi]
                if mask.shape[0] == 2 * B:
                    keep &= t >= mask[B + bi]
                add[bi] = np.where(keep, 0.0, filt)[None, :]
    if unidirectional and S > 1:
        for s in range(S):
            add[:, s, P + s + 1:] = np.finfo(np.float32).min
    scores = scale * (q @ k.transpose(0, 1, 3, 2)) + add[:, None]
    if attn_bias is not None:
        scores = scores + attn_bias
    out = (_softmax(scores) @ v).transpose(0, 2, 1, 3).reshape(B, S, -1)
    return out, present


_ATTN_CASES = {
    "plain": dict(),
    "mask_1d_end": dict(mask="end"),
    "mask_1d_end_start": dict(mask="end_start"),
    "mask_2d_raw": dict(mask="raw2"),
    "mask_3d_raw": dict(mask="raw3"),
    "unidirectional": dict(unidirectional=1),
    "unidirectional_with_raw_mask": dict(unidirectional=1, mask="raw2"),
    "past_present": dict(past=3, unidirectional=1),
    "qkv_hidden_sizes": dict(qkv=[8, 8, 12]),
    "scale_and_attention_bias": dict(scale=0.3, attn_bias=True),
    "no_bias": dict(no_bias=True),
}


@pytest.mark.parametrize("case", list(_ATTN_CASES))
def test_attention_matches_numpy_and_onnxruntime(case):
    c = _ATTN_CASES[case]
    rng = np.random.default_rng(5)
    B, S, Din, heads = 2, 5, 16, 2
    qkv = c.get("qkv")
    dsum = sum(qkv) if qkv else 3 * Din
    f = {"x": rng.standard_normal((B, S, Din)).astype(F32),
         "w": (rng.standard_normal((Din, dsum)) / 4).astype(F32),
         "b": rng.standard_normal(dsum).astype(F32) * 0.1}
    names = ["x", "w", "" if c.get("no_bias") else "b"]
    P = c.get("past", 0)
    T = P + S
    mask = None
    if "mask" in c:
        kind = c["mask"]
        if kind == "end":
            mask = np.array([T, T - 2], np.int32)
        elif kind == "end_start":
            mask = np.array([T, T - 1, 0, 2], np.int32)
        elif kind == "raw2":
            mask = (rng.random((B, T)) > 0.3).astype(np.int32)
            mask[:, 0] = 1
        else:
            mask = (rng.random((B, S, T)) > 0.3).astype(np.int32)
            mask[:, :, 0] = 1
        f["m"] = mask
    past = None
    if P:
        past = rng.standard_normal((2, B, heads, P, Din // heads)).astype(F32)
        f["past"] = past
    attn_bias = None
    if c.get("attn_bias"):
        attn_bias = rng.standard_normal((1, heads, S, T)).astype(F32)
        f["ab"] = attn_bias
    names += ["m" if mask is not None else "", "past" if P else "", "ab" if attn_bias is not None else ""]
    while names[-1] == "":
        names.pop()
    attrs = {"num_heads": heads}
    for k in ("unidirectional", "scale"):
        if k in c:
            attrs[k] = c[k]
    if qkv:
        attrs["qkv_hidden_sizes"] = qkv
    n_out = 2 if P else 1
    model, feeds = _model("Attention", names, f, n_out=n_out, inits=("w", "b"), **attrs)
    want = _attention_ref(f["x"], f["w"], None if c.get("no_bias") else f["b"], heads, mask, past,
                          c.get("unidirectional", 0), qkv, c.get("scale"), attn_bias)[:n_out]
    ours = _run(rt, model, feeds)
    # onnxruntime 1.31's CPU kernel crashes (segfault) when the optional bias is omitted: numpy only there.
    theirs = want if c.get("no_bias") else _run(ort, model, feeds)
    _close(ours, want, [np.asarray(t, F32) for t in theirs], tol=1e-4)


def test_attention_declared_output_shapes():
    f = {"x": np.ones((2, 5, 16), F32), "w": np.ones((16, 48), F32), "b": np.ones(48, F32),
         "past": np.ones((2, 2, 4, 3, 4), F32)}
    model, _ = _model("Attention", ["x", "w", "b", "", "past"], f, n_out=2, num_heads=4)
    outs = rt.InferenceSession(model, providers=["CPUExecutionProvider"]).get_outputs()
    assert [list(o.shape) for o in outs] == [[2, 5, 16], [2, 2, 4, 8, 4]]


def test_attention_bad_inputs():
    rng = np.random.default_rng(1)
    f = {"x": rng.standard_normal((2, 5, 16)).astype(F32), "w": rng.standard_normal((16, 48)).astype(F32),
         "b": rng.standard_normal(48).astype(F32), "m": np.ones((2, 4), np.int32)}
    _err(*_model("Attention", ["x", "w", "b", "m"], f, num_heads=4), "input 3 (mask_index)", "[2,4]")
    f2 = dict(f, m=np.ones((2, 5), np.int64))
    _err(*_model("Attention", ["x", "w", "b", "m"], f2, num_heads=4), "input 3 (mask_index)", "int32")
    f3 = dict(f, b=np.ones(47, F32))
    _err(*_model("Attention", ["x", "w", "b"], f3, num_heads=4), "input 2 (bias)", "[47]")
    _err(*_model("Attention", ["x", "w", "b"], f, num_heads=5), "input 1 (weights)", "num_heads 5")
    f4 = dict(f, x=np.ones((2, 5, 12), F32))
    _err(*_model("Attention", ["x", "w", "b"], f4, num_heads=4), "input 1 (weights)", "16")


# --- EmbedLayerNormalization ---

def _embed_ref(ids, seg_ids, word, pos, seg, gamma, beta, mask, pos_ids, eps):
    B, S = ids.shape
    p = pos_ids if pos_ids is not None else np.arange(S)[None, :]
    e = word[ids].astype(np.float64) + pos[np.broadcast_to(p, (B, S))]
    if seg is not None:
        e = e + seg[seg_ids]
    mu = e.mean(-1, keepdims=True)
    var = ((e - mu) ** 2).mean(-1, keepdims=True)
    y = (e - mu) / np.sqrt(var + eps) * gamma + beta
    mi = (mask == 1).sum(1).astype(np.int32) if mask is not None else np.zeros(B, np.int32)
    return y, mi, e


@pytest.mark.parametrize("segments", [True, False])
@pytest.mark.parametrize("with_mask", [True, False])
@pytest.mark.parametrize("position_ids", [None, "batch", "shared"])
def test_embed_layer_norm_matches_numpy_and_onnxruntime(segments, with_mask, position_ids):
    rng = np.random.default_rng(3)
    B, S, H, V, P = 2, 6, 16, 30, 10
    f = {"ids": rng.integers(0, V, (B, S)).astype(np.int32),
         "sids": rng.integers(0, 2, (B, S)).astype(np.int32),
         "word": rng.standard_normal((V, H)).astype(F32), "pos": rng.standard_normal((P, H)).astype(F32),
         "seg": rng.standard_normal((2, H)).astype(F32), "gamma": rng.uniform(0.5, 1.5, H).astype(F32),
         "beta": rng.standard_normal(H).astype(F32),
         "mask": np.array([[1] * S, [1] * (S - 2) + [0, 0]], np.int32)}
    if position_ids == "batch":
        f["pids"] = rng.integers(0, P, (B, S)).astype(np.int32)
    elif position_ids == "shared":
        f["pids"] = rng.integers(0, P, (1, S)).astype(np.int32)
    names = ["ids", "sids" if segments else "", "word", "pos", "seg" if segments else "", "gamma", "beta",
             "mask" if with_mask else "", "pids" if position_ids else ""]
    while names[-1] == "":
        names.pop()
    model, feeds = _model("EmbedLayerNormalization", names, f, n_out=3,
                          inits=("word", "pos", "seg", "gamma", "beta"), epsilon=1e-5)
    want = _embed_ref(f["ids"], f["sids"], f["word"], f["pos"], f["seg"] if segments else None, f["gamma"],
                      f["beta"], f["mask"] if with_mask else None, f.get("pids"), 1e-5)
    ours = _run(rt, model, feeds)
    np.testing.assert_array_equal(ours[1], want[1])
    _close(ours, want, _run(ort, model, feeds))


def test_embed_layer_norm_bad_inputs():
    rng = np.random.default_rng(3)
    f = {"ids": np.array([[1, 2, 40]], np.int32), "word": rng.standard_normal((30, 8)).astype(F32),
         "pos": rng.standard_normal((10, 8)).astype(F32), "gamma": np.ones(8, F32), "beta": np.zeros(8, F32)}
    names = ["ids", "", "word", "pos", "", "gamma", "beta"]
    _err(*_model("EmbedLayerNormalization", names, f), "input 0 (input_ids)", "40")
    f2 = dict(f, ids=np.ones((1, 12), np.int32))
    _err(*_model("EmbedLayerNormalization", names, f2), "position", "10 rows")
    f3 = dict(f, ids=np.ones((1, 3), np.int32), gamma=np.ones(7, F32))
    _err(*_model("EmbedLayerNormalization", names, f3), "input 5 (gamma)")
    f4 = dict(f, ids=np.ones((1, 3), np.int64))
    _err(*_model("EmbedLayerNormalization", names, f4), "input 0", "int64")


# --- SimplifiedLayerNormalization, SkipSimplifiedLayerNormalization ---

def _rms(x, g, eps):
    x = x.astype(np.float64)
    inv = 1.0 / np.sqrt((x * x).mean(-1, keepdims=True) + eps)
    return x * inv * g, inv


@pytest.mark.parametrize("shape", [(2, 3, 16), (4, 8)])
def test_simplified_layer_norm(shape):
    rng = np.random.default_rng(2)
    f = {"x": (rng.standard_normal(shape) * 2 + 0.5).astype(F32), "g": rng.uniform(0.5, 1.5, shape[-1]).astype(F32)}
    model, feeds = _model("SimplifiedLayerNormalization", ["x", "g"], f, n_out=2, domain="", epsilon=1e-5, axis=-1)
    y, inv = _rms(f["x"], f["g"], 1e-5)
    _close(_run(rt, model, feeds), [y, inv], _run(ort, model, feeds))


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("skip_shape", ["full", "per_sequence"])
def test_skip_simplified_layer_norm(bias, skip_shape):
    rng = np.random.default_rng(4)
    B, S, H = 2, 3, 16
    f = {"x": rng.standard_normal((B, S, H)).astype(F32),
         "s": rng.standard_normal((B, S, H) if skip_shape == "full" else (S, H)).astype(F32),
         "g": rng.uniform(0.5, 1.5, H).astype(F32), "b": rng.standard_normal(H).astype(F32)}
    names = ["x", "s", "g"] + (["b"] if bias else [])
    model, feeds = _model("SkipSimplifiedLayerNormalization", names, f, n_out=4, epsilon=1e-5)
    total = f["x"] + f["s"] + (f["b"] if bias else 0)
    y, inv = _rms(total, f["g"], 1e-5)
    want = [y, np.zeros((B, S, 1)), inv, total]
    _close(_run(rt, model, feeds), want, _run(ort, model, feeds))


def test_simplified_layer_norms_bad_inputs():
    f = {"x": np.ones((2, 3, 4), F32), "s": np.ones((2, 3, 4), F32), "g": np.ones(5, F32)}
    _err(*_model("SkipSimplifiedLayerNormalization", ["x", "s", "g"], f), "SkipSimplifiedLayerNormalization",
         "input 2 (gamma)", "[5]")
    f2 = {"x": np.ones((2, 3, 4), F32), "g": np.ones(4, np.float16)}
    _err(*_model("SimplifiedLayerNormalization", ["x", "g"], f2, domain=""), "SimplifiedLayerNormalization",
         "float16")

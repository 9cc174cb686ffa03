"""onnxruntime contrib ops that its transformer optimizer writes, beyond
Attention: com.microsoft MultiHeadAttention (use_multi_head_attention; self and
cross attention, bias, key_padding_mask in its three CPU forms, attention_bias,
past/present, 4-D cached keys, packed QKV and KV), RotaryEmbedding,
GemmFastGelu, and the Stable Diffusion ops BiasSplitGelu, BiasAdd, GroupNorm,
SkipGroupNorm and NhwcConv. Each against a numpy model of the operator and
against onnxruntime where its CPU provider has a kernel; it has none for
BiasSplitGelu, BiasAdd, GroupNorm, SkipGroupNorm, NhwcConv, GemmFastGelu or
MultiHeadAttention's packed forms, so there onnxruntime runs the same
computation written in standard ops (or its FastGelu). Bad inputs name the
node and the input, and the session runs good inputs afterwards."""

import math

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

import onyxruntime as rt

F32 = np.float32
_E = {np.dtype(np.float32): TensorProto.FLOAT, np.dtype(np.float16): TensorProto.FLOAT16,
      np.dtype(np.float64): TensorProto.DOUBLE, np.dtype(np.int32): TensorProto.INT32,
      np.dtype(np.int64): TensorProto.INT64}


def _model(op, inputs, dtypes, n_out=1, domain="com.microsoft", **attrs):
    """One node named 'anode'; inputs of unknown shape (so one session takes
    good and bad shapes); '' leaves an optional input out."""
    node = helper.make_node(op, inputs, ["Y%d" % i for i in range(n_out)], name="anode", domain=domain, **attrs)
    ins = [helper.make_tensor_value_info(n, _E[np.dtype(dtypes[n])], None) for n in inputs if n]
    outs = [helper.make_empty_tensor_value_info("Y%d" % i) for i in range(n_out)]
    m = helper.make_model(helper.make_graph([node], "g", ins, outs),
                          opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)])
    m.ir_version = 8
    return m.SerializeToString()


def _graph_model(nodes, feeds, outputs, opset=20):
    ins = [helper.make_tensor_value_info(n, _E[v.dtype], None) for n, v in feeds.items()]
    outs = [helper.make_empty_tensor_value_info(o) for o in outputs]
    m = helper.make_model(helper.make_graph(nodes, "g", ins, outs), opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 10
    return m.SerializeToString()


def _session(lib, model):
    return lib.InferenceSession(model, providers=["CPUExecutionProvider"])


def _close(got, want, tol=2e-5, what=""):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, (what, got.shape, want.shape)
    scale = max(1.0, float(np.abs(want).max())) if want.size else 1.0
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=tol, atol=tol * scale,
                               err_msg=what)


def _bad(sess, feeds, good, *words):
    """`feeds` fails naming the node and `words`; `good` still runs afterwards."""
    with pytest.raises(Exception) as ei:
        sess.run(None, feeds)
    for w in ("anode",) + words:
        assert w in str(ei.value), str(ei.value)
    sess.run(None, good)


# --- MultiHeadAttention ---

def _softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def _heads(x, n):
    """[B, L, N*H] -> [B, N, L, H]."""
    b, l, d = x.shape
    return x.reshape(b, l, n, d // n).transpose(0, 2, 1, 3)


def _mha_ref(q, k, v, n, bias=None, mask=None, attn_bias=None, past_k=None, past_v=None, unidirectional=False,
             scale=None, filt=-10000.0):
    """q [B, S, D]; k, v [B, L, D|Dv] or (4-D) [B, N, L, H]. Returns output, present_k, present_v."""
    q = q.astype(np.float64)
    k = k.astype(np.float64)
    v = v.astype(np.float64)
    D = q.shape[2]
    if bias is not None:
        q = q + bias[:D]
        k = k + bias[D:2 * D]
        v = v + bias[2 * D:]
    qh = _heads(q, n)
    kh = k if k.ndim == 4 else _heads(k, n)
    vh = v if v.ndim == 4 else _heads(v, n)
    if past_k is not None:
        kh = np.concatenate([past_k, kh], axis=2)
        vh = np.concatenate([past_v, vh], axis=2)
    B, _, S, H = qh.shape
    T = kh.shape[2]
    P = T - (k.shape[2] if k.ndim == 4 else k.shape[1])
    scores = (qh @ kh.transpose(0, 1, 3, 2)) * (scale or 1.0 / math.sqrt(H))
    if attn_bias is not None:
        scores = scores + attn_bias
    if mask is not None:
        if mask.ndim == 1:
            keep = np.arange(T)[None, None, :] < mask[:, None, None]
        elif mask.ndim == 2:
            keep = np.broadcast_to(mask[:, None, :] > 0, (B, S, T))
        else:
            keep = mask > 0
        scores = scores + np.where(keep, 0.0, filt)[:, None]
    if unidirectional and S > 1:
        causal = np.arange(T)[None, :] > (P + np.arange(S))[:, None]
        scores = np.where(causal, np.finfo(np.float32).min, scores)
    out = _softmax(scores) @ vh
    return out.transpose(0, 2, 1, 3).reshape(B, S, -1), kh, vh


MHA_CASES = {
    "self_bias": dict(S=5, L=5, bias=True),
    "cross": dict(S=4, L=7),
    "cross_dv": dict(S=3, L=6, Dv=16, bias=True),
    "mask_lengths": dict(S=5, L=5, mask="1d"),
    "mask_2d": dict(S=5, L=5, mask="2d", bias=True),
    "mask_3d": dict(S=4, L=6, mask="3d"),
    "attn_bias": dict(S=4, L=6, attn_bias=(1, 4)),
    "attn_bias_batch": dict(S=4, L=6, attn_bias=(2, 1), mask="2d"),
    "past": dict(S=3, L=3, past=4, bias=True, mask="2d"),
    "past_causal": dict(S=3, L=3, past=2, unidirectional=True),
    "causal": dict(S=6, L=6, unidirectional=True, bias=True),
    "scale_filter": dict(S=4, L=4, scale=0.3, mask="1d", filt=-50.0),
    "cached_kv_4d": dict(S=3, L=5, kv4d=True, mask="2d"),
    # No bias, past or present: Q, K, V read in place by the GEMMs (attention_fusion's form).
    "in_place": dict(S=5, L=5, mask="2d", one_output=True),
    "in_place_cross_dv": dict(S=3, L=7, Dv=16, one_output=True),
}


def _mha_feeds(c, rng, B=2, N=4, H=8):
    D = N * H
    Dv = c.get("Dv", D)
    S, L, P = c["S"], c["L"], c.get("past", 0)
    T = P + L
    f = {"query": rng.standard_normal((B, S, D)).astype(F32)}
    if c.get("kv4d"):
        f["key"] = rng.standard_normal((B, N, L, H)).astype(F32)
        f["value"] = rng.standard_normal((B, N, L, Dv // N)).astype(F32)
    else:
        f["key"] = rng.standard_normal((B, L, D)).astype(F32)
        f["value"] = rng.standard_normal((B, L, Dv)).astype(F32)
    if c.get("bias"):
        f["bias"] = (rng.standard_normal(2 * D + Dv) * 0.5).astype(F32)
    m = c.get("mask")
    if m == "1d":
        f["key_padding_mask"] = np.array([T - 2, T], np.int32)[:B]
    elif m == "2d":
        mk = np.ones((B, T), np.int32)
        mk[0, -2:] = 0
        f["key_padding_mask"] = mk
    elif m == "3d":
        mk = (rng.random((B, S, T)) > 0.3).astype(np.int32)
        mk[..., 0] = 1
        f["key_padding_mask"] = mk
    if c.get("attn_bias"):
        bb, bn = c["attn_bias"]
        f["attention_bias"] = rng.standard_normal((bb, bn, S, T)).astype(F32)
    if P:
        f["past_key"] = rng.standard_normal((B, N, P, H)).astype(F32)
        f["past_value"] = rng.standard_normal((B, N, P, Dv // N)).astype(F32)
    return f, N


_MHA_INPUTS = ["query", "key", "value", "bias", "key_padding_mask", "attention_bias", "past_key", "past_value"]


def _mha_model(feeds, n, n_out, **attrs):
    names = [x if x in feeds else "" for x in _MHA_INPUTS]
    while names[-1] == "":
        names.pop()
    return _model("MultiHeadAttention", names, {k: v.dtype for k, v in feeds.items()}, n_out=n_out, num_heads=n,
                  **attrs)


@pytest.mark.parametrize("case", sorted(MHA_CASES))
def test_multi_head_attention_matches_numpy_and_onnxruntime(case):
    c = MHA_CASES[case]
    feeds, n = _mha_feeds(c, np.random.default_rng(sum(map(ord, case))))
    attrs = {}
    if c.get("unidirectional"):
        attrs["unidirectional"] = 1
    if c.get("scale"):
        attrs["scale"] = c["scale"]
    if c.get("filt"):
        attrs["mask_filter_value"] = c["filt"]
    n_out = 1 if c.get("kv4d") or c.get("one_output") else 3
    model = _mha_model(feeds, n, n_out, **attrs)
    ours = _session(rt, model).run(None, feeds)
    theirs = _session(ort, model).run(None, feeds)
    want = _mha_ref(feeds["query"], feeds["key"], feeds["value"], n, feeds.get("bias"), feeds.get("key_padding_mask"),
                    feeds.get("attention_bias"), feeds.get("past_key"), feeds.get("past_value"),
                    c.get("unidirectional", False), c.get("scale"), c.get("filt", -10000.0))
    for i in range(n_out):
        _close(ours[i], want[i], what="output %d vs numpy" % i)
        _close(ours[i], theirs[i], what="output %d vs onnxruntime" % i)


@pytest.mark.parametrize("bias", [False, True])
def test_multi_head_attention_packed_forms(bias):
    """Packed QKV [B, S, N, 3, H] and packed KV [B, L, N, 2, H] (onnxruntime's
    CPU kernel refuses both): the same as the unpacked inputs, on both runtimes."""
    rng = np.random.default_rng(5)
    B, S, N, H = 2, 5, 4, 8
    D = N * H
    q, k, v = (rng.standard_normal((B, S, D)).astype(F32) for _ in range(3))
    mask = np.array([3, 5], np.int32)
    b = (rng.standard_normal(3 * D) * 0.5).astype(F32) if bias else None
    want, _, _ = _mha_ref(q, k, v, N, b, mask)
    split = lambda t: t.reshape(B, S, N, 1, H)  # noqa: E731
    qkv = np.concatenate([split(q), split(k), split(v)], axis=3)
    feeds = {"query": qkv, "key_padding_mask": mask}
    names = ["query", "", "", "bias" if bias else "", "key_padding_mask"]
    if bias:
        feeds["bias"] = b
    dtypes = {kk: vv.dtype for kk, vv in feeds.items()}
    got = _session(rt, _model("MultiHeadAttention", names, dtypes, num_heads=N)).run(None, feeds)[0]
    _close(got, want, what="packed QKV vs numpy")
    unpacked = {"query": q, "key": k, "value": v, "key_padding_mask": mask}
    if bias:
        unpacked["bias"] = b
    theirs = _session(ort, _mha_model(unpacked, N, 1)).run(None, unpacked)[0]
    _close(got, theirs, what="packed QKV vs onnxruntime (unpacked)")
    if not bias:  # onnxruntime's rule: no bias with packed KV
        kv = np.concatenate([split(k), split(v)], axis=3)
        feeds = {"query": q, "key": kv, "key_padding_mask": mask}
        dtypes = {kk: vv.dtype for kk, vv in feeds.items()}
        got = _session(rt, _model("MultiHeadAttention", ["query", "key", "", "", "key_padding_mask"], dtypes,
                                  num_heads=N)).run(None, feeds)[0]
        _close(got, want, what="packed KV vs numpy")


def test_multi_head_attention_declared_shape():
    feeds, n = _mha_feeds(MHA_CASES["cross_dv"], np.random.default_rng(1))
    sess = _session(rt, _mha_model(feeds, n, 1))
    assert sess.run(None, feeds)[0].shape == (2, 3, 16)


def test_multi_head_attention_bad_inputs():
    rng = np.random.default_rng(3)
    feeds, n = _mha_feeds(MHA_CASES["past"], rng)
    sess = _session(rt, _mha_model(feeds, n, 3))
    good = dict(feeds)
    sess.run(None, good)

    def bad(name, value, *words):
        f = dict(good)
        f[name] = value
        _bad(sess, f, good, *words)

    bad("query", feeds["query"][0], "input 0 (query)")
    bad("key", feeds["key"][..., :-1], "input 1 (key)")
    bad("value", feeds["value"][:, :-1], "input 2 (value)")
    bad("bias", feeds["bias"][:-1], "input 3 (bias)", str(feeds["bias"].size))
    bad("key_padding_mask", feeds["key_padding_mask"][:, :-1], "input 4 (key_padding_mask)")
    bad("past_key", feeds["past_key"][:, :, :, :-1], "input 6 (past_key)")
    bad("past_value", feeds["past_value"][:, :, :-1], "input 7 (past_value)")
    # Wrong element types, in models that declare them (a feed of another type
    # than the graph declares is refused before any kernel runs).
    for name, dtype, words in (("key_padding_mask", np.int64, ("input 4 (key_padding_mask)", "int32")),
                               ("query", np.float64, ("input 0", "double"))):
        f = dict(good)
        f[name] = good[name].astype(dtype)
        with pytest.raises(Exception) as ei:
            _session(rt, _mha_model(f, n, 3)).run(None, f)
        for w in ("anode",) + words:
            assert w in str(ei.value), str(ei.value)

    ab = {k: v for k, v in feeds.items() if k not in ("past_key", "past_value", "key_padding_mask")}
    ab["attention_bias"] = rng.standard_normal((2, 4, 3, 3)).astype(F32)
    sess_ab = _session(rt, _mha_model(ab, n, 1))
    good_ab = dict(ab)
    sess_ab.run(None, good_ab)
    ab_bad = dict(ab)
    ab_bad["attention_bias"] = ab["attention_bias"][:, :, :, :2]
    _bad(sess_ab, ab_bad, good_ab, "input 5 (attention_bias)")

    with pytest.raises(Exception, match="num_heads"):
        _session(rt, _model("MultiHeadAttention", ["query", "key", "value"], {x: F32 for x in _MHA_INPUTS}))


# --- BiasSplitGelu, BiasAdd ---

def _gelu(x):
    from scipy.special import erf
    return 0.5 * x * (1.0 + erf(x / math.sqrt(2.0)))


def _ort_bias_split_gelu(x, bias):
    """The same on onnxruntime, in standard ops (it has no CPU BiasSplitGelu),
    in float32 (its Erf takes no other type)."""
    x, bias = x.astype(F32), bias.astype(F32)
    nodes = [helper.make_node("Add", ["X", "bias"], ["z"]),
             helper.make_node("Split", ["z"], ["l", "r"], axis=-1, num_outputs=2),
             helper.make_node("Gelu", ["r"], ["g"]),
             helper.make_node("Mul", ["l", "g"], ["Y"])]
    feeds = {"X": x, "bias": bias}
    return _session(ort, _graph_model(nodes, feeds, ["Y"])).run(None, feeds)[0]


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.float64])
@pytest.mark.parametrize("shape", [(2, 6, 20), (1, 3, 1280), (1, 1, 2)])
def test_bias_split_gelu(dtype, shape):
    rng = np.random.default_rng(shape[-1])
    x = rng.standard_normal(shape).astype(dtype)
    bias = rng.standard_normal(shape[-1]).astype(dtype)
    got = _session(rt, _model("BiasSplitGelu", ["X", "bias"], {"X": dtype, "bias": dtype})).run(
        None, {"X": x, "bias": bias})[0]
    z = x.astype(np.float64) + bias
    half = shape[-1] // 2
    want = z[..., :half] * _gelu(z[..., half:])
    tol = 2e-3 if dtype == np.float16 else 2e-6
    assert got.dtype == dtype
    _close(got, want, tol, "vs numpy")
    _close(got, _ort_bias_split_gelu(x, bias), tol, "vs onnxruntime (Add, Split, Gelu, Mul)")


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_bias_add(dtype):
    rng = np.random.default_rng(9)
    x, skip = (rng.standard_normal((2, 16, 320)).astype(dtype) for _ in range(2))
    bias = rng.standard_normal(320).astype(dtype)
    feeds = {"X": x, "bias": bias, "skip": skip}
    got = _session(rt, _model("BiasAdd", ["X", "bias", "skip"], {k: dtype for k in feeds})).run(None, feeds)[0]
    nodes = [helper.make_node("Add", ["X", "bias"], ["t"]), helper.make_node("Add", ["t", "skip"], ["Y"])]
    theirs = _session(ort, _graph_model(nodes, feeds, ["Y"])).run(None, feeds)[0]
    tol = 2e-3 if dtype == np.float16 else 1e-6
    assert got.dtype == dtype
    _close(got, x.astype(np.float64) + bias + skip, tol, "vs numpy")
    _close(got, theirs, tol, "vs onnxruntime (Add, Add)")


def test_bias_split_gelu_and_bias_add_bad_inputs():
    rng = np.random.default_rng(4)
    x = rng.standard_normal((1, 4, 8)).astype(F32)
    b = rng.standard_normal(8).astype(F32)
    sess = _session(rt, _model("BiasSplitGelu", ["X", "bias"], {"X": F32, "bias": F32}))
    good = {"X": x, "bias": b}
    _bad(sess, {"X": x, "bias": b[:4]}, good, "input 1 (bias)", "8")
    _bad(sess, {"X": x[0], "bias": b}, good, "input 0 (X)", "3-D")
    _bad(sess, {"X": x[..., :7], "bias": b[:7]}, good, "even")
    sess = _session(rt, _model("BiasAdd", ["X", "bias", "skip"], {"X": F32, "bias": F32, "skip": F32}))
    good = {"X": x, "bias": b, "skip": x}
    _bad(sess, {"X": x, "bias": b, "skip": x[:, :2]}, good, "input 2 (skip)")
    _bad(sess, {"X": x, "bias": b[:3], "skip": x}, good, "input 1 (bias)")


# --- RotaryEmbedding ---

def _rotary_ref(x, pos, cos, sin, heads=0, rotary_dim=0, interleaved=False):
    x = x.astype(np.float64)
    if x.ndim == 3:
        B, S, D = x.shape
        H = cos.shape[1] * 2 if rotary_dim == 0 else D // heads
        xh = x.reshape(B, S, D // H, H).transpose(0, 2, 1, 3)
    else:
        xh = x
        B, _, S, H = x.shape
    R = rotary_dim or H
    p = pos[0] + np.arange(S)[None, :].repeat(B, 0) if pos.shape == (1,) else pos
    c, s = cos[p].astype(np.float64)[:, None], sin[p].astype(np.float64)[:, None]  # [B, 1, S, R/2]
    y = xh.copy()
    if interleaved:
        x1, x2 = xh[..., 0:R:2], xh[..., 1:R:2]
        y[..., 0:R:2], y[..., 1:R:2] = x1 * c - x2 * s, x2 * c + x1 * s
    else:
        x1, x2 = xh[..., :R // 2], xh[..., R // 2:R]
        y[..., :R // 2], y[..., R // 2:R] = x1 * c - x2 * s, x2 * c + x1 * s
    return y if x.ndim == 4 else y.transpose(0, 2, 1, 3).reshape(x.shape)


ROTARY_CASES = {
    "3d_start": dict(shape=(2, 5, 64), heads=4, pos="start"),
    "3d_ids": dict(shape=(2, 5, 64), heads=4, pos="ids"),
    "4d_interleaved": dict(shape=(2, 3, 5, 16), pos="ids", interleaved=True),
    "3d_partial": dict(shape=(1, 4, 64), heads=2, rotary_dim=16, pos="start"),
    "3d_partial_interleaved": dict(shape=(2, 4, 48), heads=3, rotary_dim=8, pos="ids", interleaved=True),
}


def _rotary_feeds(c, rng, dtype=F32, max_pos=16):
    x = rng.standard_normal(c["shape"]).astype(dtype)
    B = c["shape"][0]
    S = c["shape"][2] if len(c["shape"]) == 4 else c["shape"][1]
    if len(c["shape"]) == 4:
        H = c["shape"][3]
    else:
        H = c["shape"][2] // c["heads"]
    R = c.get("rotary_dim") or H
    theta = np.arange(max_pos)[:, None] / (10000.0 ** (np.arange(R // 2)[None, :] * 2.0 / R))
    pos = np.array([3], np.int64) if c["pos"] == "start" else rng.integers(0, max_pos, (B, S)).astype(np.int64)
    return {"input": x, "position_ids": pos, "cos_cache": np.cos(theta).astype(dtype),
            "sin_cache": np.sin(theta).astype(dtype)}


def _rotary_model(feeds, c):
    attrs = {}
    if c.get("rotary_dim"):
        attrs.update(rotary_embedding_dim=c["rotary_dim"], num_heads=c["heads"])
    if c.get("interleaved"):
        attrs["interleaved"] = 1
    return _model("RotaryEmbedding", ["input", "position_ids", "cos_cache", "sin_cache"],
                  {k: v.dtype for k, v in feeds.items()}, **attrs)


@pytest.mark.parametrize("case", sorted(ROTARY_CASES))
def test_rotary_embedding_matches_numpy_and_onnxruntime(case):
    c = ROTARY_CASES[case]
    feeds = _rotary_feeds(c, np.random.default_rng(sum(map(ord, case))))
    model = _rotary_model(feeds, c)
    got = _session(rt, model).run(None, feeds)[0]
    want = _rotary_ref(feeds["input"], feeds["position_ids"], feeds["cos_cache"], feeds["sin_cache"],
                       c.get("heads", 0), c.get("rotary_dim", 0), c.get("interleaved", False))
    _close(got, want, 1e-5, "vs numpy")
    _close(got, _session(ort, model).run(None, feeds)[0], 1e-5, "vs onnxruntime")


@pytest.mark.parametrize("dtype", [np.float16])
def test_rotary_embedding_half(dtype):
    c = ROTARY_CASES["3d_ids"]
    feeds = _rotary_feeds(c, np.random.default_rng(2), dtype)
    got = _session(rt, _rotary_model(feeds, c)).run(None, feeds)[0]
    assert got.dtype == dtype
    _close(got, _rotary_ref(feeds["input"], feeds["position_ids"], feeds["cos_cache"], feeds["sin_cache"],
                            c["heads"]), 3e-3, "float16 vs numpy")


def test_rotary_embedding_bad_inputs():
    c = ROTARY_CASES["3d_ids"]
    good = _rotary_feeds(c, np.random.default_rng(8))
    sess = _session(rt, _rotary_model(good, c))
    sess.run(None, good)

    def bad(name, value, *words):
        f = dict(good)
        f[name] = value
        _bad(sess, f, good, *words)

    far = good["position_ids"].copy()
    far[1, 2] = 16
    bad("position_ids", far, "input 1 (position_ids)", "position 16", "batch 1, token 2")
    bad("position_ids", np.array([12], np.int64), "input 1 (position_ids)", "position 16")
    bad("position_ids", good["position_ids"][:, :2], "input 1 (position_ids)")
    bad("input", good["input"][..., :60], "input 0 (input)")
    bad("input", good["input"][0], "input 0 (input)")
    bad("cos_cache", good["cos_cache"][:, :4], "2 (cos_cache)", "[16,4]")
    bad("sin_cache", good["sin_cache"][:8], "3 (sin_cache)", "[8,8]")
    c4 = ROTARY_CASES["4d_interleaved"]
    good4 = _rotary_feeds(c4, np.random.default_rng(9))
    sess4 = _session(rt, _rotary_model(good4, c4))
    narrow = {"cos_cache": good4["cos_cache"][:, :4], "sin_cache": good4["sin_cache"][:, :4]}
    _bad(sess4, dict(good4, **narrow), good4, "rotary dimension 16", "twice the width of input 2 (cos_cache)")
    with pytest.raises(Exception, match="num_heads"):
        _session(rt, _model("RotaryEmbedding", ["input", "position_ids", "cos_cache", "sin_cache"],
                            {k: v.dtype for k, v in good.items()}, rotary_embedding_dim=8))


# --- GroupNorm, SkipGroupNorm ---

def _group_norm_ref(x, gamma, beta, groups, eps, silu, channels_last):
    x = x.astype(np.float64)
    if channels_last:
        x = x.transpose(0, 3, 1, 2)
    n, c = x.shape[:2]
    v = x.reshape(n, groups, -1)
    y = (v - v.mean(-1, keepdims=True)) / np.sqrt(v.var(-1, keepdims=True) + eps)
    y = y.reshape(x.shape) * gamma.astype(np.float64)[None, :, None, None] + beta.astype(np.float64)[None, :, None, None]
    if silu:
        y = y / (1.0 + np.exp(-y))
    return y.transpose(0, 2, 3, 1) if channels_last else y


def _ort_group_norm(x, gamma, beta, groups, eps, silu, channels_last):
    """onnxruntime running GroupNormalization-21 (per-channel scale and bias),
    in float32, between Transposes for NHWC, then x * Sigmoid(x) for SiLU."""
    feeds = {"X": x.astype(F32), "gamma": gamma.astype(F32), "beta": beta.astype(F32)}
    nodes, src = [], "X"
    if channels_last:
        nodes.append(helper.make_node("Transpose", ["X"], ["xt"], perm=[0, 3, 1, 2]))
        src = "xt"
    nodes.append(helper.make_node("GroupNormalization", [src, "gamma", "beta"], ["gn"], num_groups=groups,
                                  epsilon=eps))
    out = "gn"
    if silu:
        nodes += [helper.make_node("Sigmoid", ["gn"], ["sg"]), helper.make_node("Mul", ["gn", "sg"], ["act"])]
        out = "act"
    nodes.append(helper.make_node("Transpose", [out], ["Y"], perm=[0, 2, 3, 1]) if channels_last else
                 helper.make_node("Identity", [out], ["Y"]))
    return _session(ort, _graph_model(nodes, feeds, ["Y"], opset=21)).run(None, feeds)[0]


GROUP_NORM_CASES = {
    "nhwc": dict(shape=(2, 4, 5, 32), groups=8, silu=False, channels_last=1),
    "nhwc_silu": dict(shape=(1, 3, 3, 64), groups=32, silu=True, channels_last=1),
    "nchw_silu": dict(shape=(2, 16, 3, 4), groups=4, silu=True, channels_last=0),
    "one_group": dict(shape=(1, 2, 2, 12), groups=1, silu=False, channels_last=1),
}


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("case", sorted(GROUP_NORM_CASES))
def test_group_norm(case, dtype):
    c = GROUP_NORM_CASES[case]
    rng = np.random.default_rng(sum(map(ord, case)))
    C = c["shape"][3] if c["channels_last"] else c["shape"][1]
    x = (rng.standard_normal(c["shape"]) * 3 + 1).astype(dtype)
    gamma = rng.standard_normal(C).astype(F32)
    beta = rng.standard_normal(C).astype(F32)
    feeds = {"X": x, "gamma": gamma, "beta": beta}
    got = _session(rt, _model("GroupNorm", ["X", "gamma", "beta"], {k: v.dtype for k, v in feeds.items()},
                              groups=c["groups"], epsilon=1e-5, activation=int(c["silu"]),
                              channels_last=c["channels_last"])).run(None, feeds)[0]
    args = (gamma, beta, c["groups"], 1e-5, c["silu"], c["channels_last"])
    tol = 5e-3 if dtype == np.float16 else 2e-5
    assert got.dtype == dtype and got.shape == x.shape
    _close(got, _group_norm_ref(x, *args), tol, "vs numpy")
    _close(got, _ort_group_norm(x, *args), tol, "vs onnxruntime (GroupNormalization-21)")


@pytest.mark.parametrize("skip_shape", ["full", "n11c", "nc"])
@pytest.mark.parametrize("bias", [False, True])
def test_skip_group_norm(skip_shape, bias):
    rng = np.random.default_rng(len(skip_shape) + bias)
    N, H, W, C, G = 2, 3, 4, 32, 8
    x = rng.standard_normal((N, H, W, C)).astype(F32)
    skip = rng.standard_normal({"full": (N, H, W, C), "n11c": (N, 1, 1, C), "nc": (N, C)}[skip_shape]).astype(F32)
    feeds = {"X": x, "gamma": rng.standard_normal(C).astype(F32), "beta": rng.standard_normal(C).astype(F32),
             "skip": skip}
    if bias:
        feeds["bias"] = rng.standard_normal(C).astype(F32)
    names = ["X", "gamma", "beta", "skip"] + (["bias"] if bias else [])
    y, s = _session(rt, _model("SkipGroupNorm", names, {k: v.dtype for k, v in feeds.items()}, n_out=2, groups=G,
                                epsilon=1e-5, activation=1)).run(None, feeds)
    want_s = x + skip.reshape(N, 1, 1, C) if skip_shape != "full" else x + skip
    if bias:
        want_s = want_s + feeds["bias"]
    _close(s, want_s, 1e-6, "S vs numpy")
    args = (feeds["gamma"], feeds["beta"], G, 1e-5, True, 1)
    _close(y, _group_norm_ref(want_s, *args), 2e-5, "Y vs numpy")
    _close(y, _ort_group_norm(want_s.astype(F32), *args), 2e-5, "Y vs onnxruntime (Add, GroupNormalization-21)")


def test_group_norms_bad_inputs():
    rng = np.random.default_rng(6)
    x = rng.standard_normal((1, 2, 2, 8)).astype(F32)
    g = np.ones(8, F32)
    good = {"X": x, "gamma": g, "beta": g}
    sess = _session(rt, _model("GroupNorm", ["X", "gamma", "beta"], {k: F32 for k in good}, groups=4))
    sess.run(None, good)
    _bad(sess, dict(good, X=x[0]), good, "input 0 (X)", "4-D")
    _bad(sess, dict(good, X=x[..., :6]), good, "groups 4", "6 channels")
    _bad(sess, dict(good, gamma=g[:4]), good, "input 1 (gamma)", "8")
    _bad(sess, dict(good, beta=g[:7]), good, "input 2 (beta)")
    good = dict(good, skip=x)
    sess = _session(rt, _model("SkipGroupNorm", ["X", "gamma", "beta", "skip"], {k: F32 for k in good}, groups=4))
    sess.run(None, good)
    _bad(sess, dict(good, skip=x[:, :1]), good, "input 3 (skip)")
    for attrs, word in ((dict(groups=0), "groups"), (dict(groups=2, activation=2), "activation")):
        with pytest.raises(Exception, match=word):
            _session(rt, _model("GroupNorm", ["X", "gamma", "beta"], {k: F32 for k in good}, **attrs))


# --- GemmFastGelu ---

def _fast_gelu(z):
    return 0.5 * z * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (z + 0.044715 * z ** 3)))


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("shapes", [((2, 5, 16), (16, 24)), ((7, 32), (32, 8)), ((2, 3, 4, 8), (8, 6))])
def test_gemm_fast_gelu(shapes, bias):
    """Against numpy and onnxruntime's MatMul + FastGelu (it has no CPU GemmFastGelu)."""
    rng = np.random.default_rng(shapes[1][1] + bias)
    feeds = {"X": rng.standard_normal(shapes[0]).astype(F32), "W": rng.standard_normal(shapes[1]).astype(F32)}
    if bias:
        feeds["bias"] = rng.standard_normal(shapes[1][1]).astype(F32)
    names = list(feeds)
    got = _session(rt, _model("GemmFastGelu", names, {k: F32 for k in feeds})).run(None, feeds)[0]
    z = feeds["X"].astype(np.float64) @ feeds["W"] + (feeds["bias"] if bias else 0)
    _close(got, _fast_gelu(z), 1e-5, "vs numpy")
    nodes = [helper.make_node("MatMul", ["X", "W"], ["xw"]),
             helper.make_node("FastGelu", ["xw"] + (["bias"] if bias else []), ["Y"], domain="com.microsoft")]
    m = helper.make_model(helper.make_graph(nodes, "g", [helper.make_tensor_value_info(k, TensorProto.FLOAT, None)
                                                         for k in feeds], [helper.make_empty_tensor_value_info("Y")]),
                          opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)])
    m.ir_version = 8
    _close(got, _session(ort, m.SerializeToString()).run(None, feeds)[0], 1e-5, "vs onnxruntime")


def test_gemm_fast_gelu_bad_inputs():
    rng = np.random.default_rng(1)
    good = {"X": rng.standard_normal((3, 4)).astype(F32), "W": rng.standard_normal((4, 5)).astype(F32),
            "bias": np.zeros(5, F32)}
    sess = _session(rt, _model("GemmFastGelu", ["X", "W", "bias"], {k: F32 for k in good}))
    sess.run(None, good)
    _bad(sess, dict(good, bias=np.zeros(4, F32)), good, "input 2 (bias)", "5 values")
    _bad(sess, dict(good, W=good["W"][:3]), good, "inner dimensions")


# --- NhwcConv ---

def _ort_conv(x, w, b, **attrs):
    feeds = {"X": x, "W": w}
    if b is not None:
        feeds["B"] = b
    nodes = [helper.make_node("Conv", list(feeds), ["Y"], **attrs)]
    return _session(ort, _graph_model(nodes, feeds, ["Y"])).run(None, feeds)[0]


NHWC_CASES = {
    "3x3_pad": dict(x=(2, 3, 7, 6), w=(8, 3, 3), attrs=dict(pads=[1, 1, 1, 1])),
    "stride_group": dict(x=(1, 4, 6, 10), w=(4, 3, 3), attrs=dict(strides=[2, 2], group=2, pads=[0, 1, 0, 1])),
    "1x1_bias": dict(x=(2, 5, 5, 16), w=(24, 1, 1), attrs={}, bias=True),
    "depthwise": dict(x=(1, 6, 6, 8), w=(8, 3, 3), attrs=dict(group=8, dilations=[2, 2])),
    "1d": dict(x=(2, 10, 4), w=(6, 3), attrs=dict(auto_pad="SAME_UPPER")),
}


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("case", sorted(NHWC_CASES))
def test_nhwc_conv(case, dtype):
    """Against onnxruntime's Conv on the same data channels first (it has no CPU NhwcConv)."""
    c = NHWC_CASES[case]
    rng = np.random.default_rng(len(case))
    x = rng.standard_normal(c["x"]).astype(dtype)
    group = c["attrs"].get("group", 1)
    w = rng.standard_normal(c["w"][:1] + c["w"][1:] + (c["x"][-1] // group,)).astype(dtype)
    b = rng.standard_normal(c["w"][0]).astype(dtype) if c.get("bias") else None
    feeds = {"X": x, "W": w}
    if b is not None:
        feeds["B"] = b
    got = _session(rt, _model("NhwcConv", list(feeds), {k: dtype for k in feeds}, **c["attrs"])).run(None, feeds)[0]
    first = lambda t: np.moveaxis(t, -1, 1)  # noqa: E731
    want = np.moveaxis(_ort_conv(first(x).astype(F32), first(w).astype(F32),
                                 None if b is None else b.astype(F32), **c["attrs"]), 1, -1)
    assert got.dtype == dtype
    _close(got, want, 5e-3 if dtype == np.float16 else 2e-5, "vs onnxruntime Conv (channels first)")


def test_nhwc_conv_bad_inputs():
    rng = np.random.default_rng(2)
    good = {"X": rng.standard_normal((1, 5, 5, 4)).astype(F32), "W": rng.standard_normal((6, 3, 3, 4)).astype(F32)}
    sess = _session(rt, _model("NhwcConv", ["X", "W"], {k: F32 for k in good}))
    sess.run(None, good)
    _bad(sess, dict(good, X=good["X"][..., :3]), good, "input X [1,5,5,3]", "expects 4")
    _bad(sess, dict(good, W=good["W"][0]), good, "weight W [3,3,4]", "rank")

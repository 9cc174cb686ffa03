"""nhwc_transformer (level 'all'): chains of 8-bit quantized operators
(QLinearConv, QLinearAdd, QLinearGlobalAveragePool, per-tensor Quantize /
DequantizeLinear, QLinearBatchNormalization) run channels-last, with one
Transpose where a chain is entered and one where it is left; QLinearConv
becomes onnxruntime's com.microsoft QLinearConv with channels_last=1.
Outputs are bit for bit those of level 'disabled' and of onnxruntime, on
every SIMD path; a conv alone, float readers and graph outputs keep the
[N, C, H, W] values they read; bad inputs are errors naming the node."""

import json

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from opt_fusion_util import ONYX_ONLY, op_counts
from test_cpu_path import _paths, _probe

F = TensorProto.FLOAT
U8 = TensorProto.UINT8
I8 = TensorProto.INT8


class QGraph:
    """A quantized model under construction: float x -> QuantizeLinear ->
    ... -> DequantizeLinear outputs, with seeded weights."""

    def __init__(self, seed=0, act=np.uint8):
        self.rng = np.random.default_rng(seed)
        self.nodes, self.inits, self.act = [], [], act
        self.zp = 128 if act == np.uint8 else 0

    def init(self, name, value):
        self.inits.append(numpy_helper.from_array(np.asarray(value), name))
        return name

    def qparams(self, name, scale, zp=None):
        zp = self.zp if zp is None else zp
        return self.init(name + "_s", np.float32(scale)), self.init(name + "_z", np.array(zp, self.act))

    def quantize(self, x, out, scale=0.05):
        s, z = self.qparams(out, scale)
        self.nodes.append(helper.make_node("QuantizeLinear", [x, s, z], [out]))
        return out, scale

    def dequantize(self, x, scale, out):
        self.nodes.append(helper.make_node("DequantizeLinear", [x, x + "_s", x + "_z"], [out]))
        return out

    def conv(self, x, out, cin, cout, k=3, group=1, stride=1, pads=None, per_channel=True, bias=True, domain=""):
        """QLinearConv; x is (name, scale). The output scale keeps most sums in range."""
        xname, xs = x
        kk = [k, k] if isinstance(k, int) else list(k)
        w = self.rng.integers(-127, 128, (cout, cin // group, *kk)).astype(np.int8)
        ws = (self.rng.uniform(0.002, 0.02, cout) if per_channel else np.array(0.01)).astype(np.float32)
        fan = (cin // group) * int(np.prod(kk))
        ys = float(xs * ws.mean() * 74 * 73 * np.sqrt(fan) / 40)
        s, z = self.qparams(out, ys)
        ins = [xname, xname + "_s", xname + "_z", self.init(out + "_w", w), self.init(out + "_ws", ws),
               self.init(out + "_wz", np.zeros(ws.shape, np.int8)), s, z]
        if bias:
            ins.append(self.init(out + "_b", self.rng.integers(-3000, 3000, cout).astype(np.int32)))
        pads = [k // 2] * 4 if pads is None and isinstance(k, int) else (pads or [0] * (2 * len(kk)))
        self.nodes.append(helper.make_node("QLinearConv", ins, [out], name=out, kernel_shape=kk, group=group,
                                           strides=[stride] * len(kk), pads=pads, domain=domain))
        return out, ys

    def add(self, a, b, out):
        ys = (a[1] + b[1]) * 0.8
        s, z = self.qparams(out, ys)
        self.nodes.append(helper.make_node("QLinearAdd", [a[0], a[0] + "_s", a[0] + "_z", b[0], b[0] + "_s",
                                                          b[0] + "_z", s, z], [out], domain="com.microsoft"))
        return out, ys

    def global_pool(self, x, out):
        s, z = self.qparams(out, x[1])
        self.nodes.append(helper.make_node("QLinearGlobalAveragePool", [x[0], x[0] + "_s", x[0] + "_z", s, z], [out],
                                           domain="com.microsoft", channels_last=0))
        return out, x[1]

    def batch_norm(self, x, out, c, relu=False):
        """DequantizeLinear -> BatchNormalization -> [Relu] -> QuantizeLinear."""
        r = self.rng
        d = self.dequantize(x[0], x[1], out + "_dq")
        prm = [self.init(out + "_" + n, v.astype(np.float32)) for n, v in (
            ("gamma", r.uniform(0.5, 1.5, c)), ("beta", r.uniform(-1, 1, c)), ("mean", r.uniform(-1, 1, c)),
            ("var", r.uniform(0.2, 2, c)))]
        self.nodes.append(helper.make_node("BatchNormalization", [d] + prm, [out + "_bn"], epsilon=1e-3))
        cur = out + "_bn"
        if relu:
            self.nodes.append(helper.make_node("Relu", [cur], [out + "_relu"]))
            cur = out + "_relu"
        return self.quantize(cur, out, scale=0.04)

    def model(self, x_shape, outputs, x_type=F):
        """outputs: names of float values, or (name, elem type) pairs; x_shape None: unknown."""
        outs = [o if isinstance(o, tuple) else (o, F) for o in outputs]
        shape = None if x_shape is None else list(x_shape)
        g = helper.make_graph(self.nodes, "g", [helper.make_tensor_value_info("x", x_type, shape)],
                              [helper.make_tensor_value_info(o, t, None) for o, t in outs], self.inits)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)])
        m.ir_version = 8
        return m


def session(lib, model, level, tmp_path=None, disabled=None):
    so = lib.SessionOptions()
    so.graph_optimization_level = getattr(lib.GraphOptimizationLevel, level)
    so.intra_op_num_threads = 2
    if disabled:
        so.add_session_config_entry("optimization.disable_specified_optimizers", disabled)
    path = None
    if tmp_path is not None:
        path = str(tmp_path / ("opt_%d.onnx" % len(list(tmp_path.iterdir()))))
        so.optimized_model_filepath = path
    sess = lib.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    return sess, (onnx.load(path) if path else None)


def check_exact(onyx, model, feeds, tmp_path, ort_runs_saved=True):
    """Level 'all' gives level 'disabled''s and onnxruntime's outputs bit for
    bit; returns the saved optimized model."""
    sess, saved = session(onyx, model, "ORT_ENABLE_ALL", tmp_path)
    got = sess.run(None, feeds)
    plain = session(onyx, model, "ORT_DISABLE_ALL")[0].run(None, feeds)
    theirs = session(ort, model, "ORT_ENABLE_ALL")[0].run(None, feeds)
    for g, p, t in zip(got, plain, theirs):
        assert g.dtype == p.dtype and g.shape == p.shape
        np.testing.assert_array_equal(g, p)
        np.testing.assert_array_equal(g, t)
    if ort_runs_saved:  # onnxruntime's own contrib ops and Transposes only
        for g, t in zip(got, session(ort, saved, "ORT_DISABLE_ALL")[0].run(None, feeds)):
            np.testing.assert_array_equal(g, t)
    return saved


def channels_last_convs(model):
    return [n for n in model.graph.node if n.op_type == "QLinearConv" and n.domain == "com.microsoft"
            and any(a.name == "channels_last" and a.i == 1 for a in n.attribute)]


def feeds(shape, seed=1):
    return {"x": np.random.default_rng(seed).standard_normal(shape).astype(np.float32) * 2}


def residual_block(act=np.uint8, c=16, x_shape=("N", 16, 9, 11)):
    """x -> Q -> conv3x3 -> conv1x1 (+ the first conv's output) -> global pool -> DQ."""
    g = QGraph(act=act)
    x = g.quantize("x", "xq")
    a = g.conv(x, "a", c, c, 3)
    b = g.conv(a, "b", c, c, 1)
    s = g.add(a, b, "s")
    p = g.global_pool(s, "p")
    g.dequantize(p[0], p[1], "y")
    return g.model(list(x_shape), ["y"])


@ONYX_ONLY
@pytest.mark.parametrize("act", [np.uint8, np.int8])
def test_chain_runs_channels_last_between_two_transposes(onyx, tmp_path, act):
    saved = check_exact(onyx, residual_block(act), feeds((2, 16, 9, 11)), tmp_path)
    counts = op_counts(saved)
    assert len(channels_last_convs(saved)) == 2, counts
    assert counts["QLinearConv"] == 0 and counts["Transpose"] == 2, counts
    pool = next(n for n in saved.graph.node if n.op_type == "QLinearGlobalAveragePool")
    assert helper.get_attribute_value(next(a for a in pool.attribute if a.name == "channels_last")) == 1


@ONYX_ONLY
def test_level_extended_and_disabled_optimizer_keep_the_layout(onyx, tmp_path):
    model = residual_block()
    _, saved = session(onyx, model, "ORT_ENABLE_EXTENDED", tmp_path)
    assert not channels_last_convs(saved) and op_counts(saved)["Transpose"] == 0
    for name in ("nhwc_transformer", "NhwcTransformer"):
        _, saved = session(onyx, model, "ORT_ENABLE_ALL", tmp_path, disabled=name)
        assert not channels_last_convs(saved) and op_counts(saved)["Transpose"] == 0


# Geometry the channels-last kernel handles itself: padding (asymmetric too),
# strides, groups (depthwise included), per-tensor and per-channel w scales,
# a first conv of few channels (the kernel's channel-rows path), no bias.
CONVS = {
    "3x3_pad_asym": dict(k=3, pads=[0, 1, 2, 1]),
    "5x5_stride2": dict(k=5, stride=2),
    "1x1_stride2": dict(k=1, stride=2, pads=[0, 0, 0, 0]),
    "group2": dict(k=3, group=2),
    "depthwise": dict(k=3, group=16),
    "per_tensor_w": dict(k=3, per_channel=False),
    "no_bias": dict(k=1, bias=False),
    "rect_3x1": dict(k=(3, 1), pads=[1, 0, 1, 0]),
}


@ONYX_ONLY
@pytest.mark.parametrize("case", sorted(CONVS))
def test_conv_geometry_matches(onyx, tmp_path, case):
    g = QGraph(seed=3)
    x = g.quantize("x", "xq")
    a = g.conv(x, "a", 16, 16, **CONVS[case])
    b = g.conv(a, "b", 16, 24, 3)
    g.dequantize(b[0], b[1], "y")
    saved = check_exact(onyx, g.model([2, 16, 13, 10], ["y"]), feeds((2, 16, 13, 10)), tmp_path)
    assert len(channels_last_convs(saved)) == 2


@ONYX_ONLY
def test_first_conv_of_few_channels_and_8bit_graph_input(onyx, tmp_path):
    # 3 input channels (channel-rows path); x arrives quantized, as a graph input.
    g = QGraph(seed=4)
    g.init("x_s", np.float32(0.05))
    g.init("x_z", np.array(128, np.uint8))
    a = g.conv(("x", 0.05), "a", 3, 32, 7, stride=2, pads=[3, 3, 3, 3])
    b = g.conv(a, "b", 32, 32, 1)
    model = g.model([1, 3, 30, 30], [("b", U8)], x_type=U8)
    x = {"x": np.random.default_rng(5).integers(0, 256, (1, 3, 30, 30)).astype(np.uint8)}
    saved = check_exact(onyx, model, x, tmp_path)
    assert len(channels_last_convs(saved)) == 2
    assert saved.graph.output[0].name == "b"


@ONYX_ONLY
def test_readers_outside_the_chain_get_nchw_values(onyx, tmp_path):
    # a's output is also a graph output and is read by a float DequantizeLinear ->
    # Flatten: both see [N, C, H, W]; b and c stay channels-last.
    g = QGraph(seed=6)
    x = g.quantize("x", "xq")
    a = g.conv(x, "a", 8, 16, 3)
    b = g.conv(a, "b", 16, 16, 3)
    c = g.conv(b, "c", 16, 8, 1)
    g.dequantize(a[0], a[1], "a_f")
    g.nodes.append(helper.make_node("Flatten", ["a_f"], ["a_flat"]))
    g.dequantize(c[0], c[1], "y")
    model = g.model([2, 8, 7, 7], ["y", ("a", U8), "a_flat"])
    saved = check_exact(onyx, model, feeds((2, 8, 7, 7)), tmp_path)
    assert len(channels_last_convs(saved)) == 3
    # Entry, a back for its readers, the exit (c's DequantizeLinear reads float out: it stays outside).
    assert op_counts(saved)["Transpose"] == 3, op_counts(saved)


@ONYX_ONLY
def test_lone_conv_keeps_its_layout(onyx, tmp_path):
    g = QGraph(seed=7)
    x = g.quantize("x", "xq")
    a = g.conv(x, "a", 8, 8, 3)
    g.dequantize(a[0], a[1], "y")
    saved = check_exact(onyx, g.model([1, 8, 6, 6], ["y"]), feeds((1, 8, 6, 6)), tmp_path)
    assert not channels_last_convs(saved) and op_counts(saved)["Transpose"] == 0


@ONYX_ONLY
@pytest.mark.parametrize("relu", [False, True])
def test_batch_norm_between_convs_runs_channels_last(onyx, tmp_path, relu):
    # The quantizer's DQ -> BatchNormalization -> Q island (qdq_batch_norm_fusion)
    # joins the chain as QLinearBatchNormalization with channels_last=1.
    g = QGraph(seed=8)
    x = g.quantize("x", "xq")
    a = g.conv(x, "a", 8, 16, 3)
    bn = g.batch_norm(a, "bn", 16, relu=relu)
    b = g.conv(bn, "b", 16, 16, 1)
    g.dequantize(b[0], b[1], "y")
    saved = check_exact(onyx, g.model(["N", 8, 10, 10], ["y"]), feeds((2, 8, 10, 10)), tmp_path,
                        ort_runs_saved=False)
    qbn = [n for n in saved.graph.node if n.op_type == "QLinearBatchNormalization"]
    assert len(qbn) == 1 and qbn[0].domain == "com.onyxruntime"
    assert {a.name: helper.get_attribute_value(a) for a in qbn[0].attribute}["channels_last"] == 1
    assert len(channels_last_convs(saved)) == 2 and op_counts(saved)["Transpose"] == 2


@ONYX_ONLY
def test_wrong_channel_count_is_an_error_naming_the_node(onyx, tmp_path):
    model = residual_block(x_shape=("N", "C", "H", "W"))
    _, saved = session(onyx, model, "ORT_ENABLE_ALL", tmp_path)
    assert len(channels_last_convs(saved)) == 2
    sess = session(onyx, model, "ORT_ENABLE_ALL")[0]
    with pytest.raises(Exception) as e:
        sess.run(None, feeds((1, 12, 9, 11)))
    msg = str(e.value)
    assert "QLinearConv" in msg and "12 channels" in msg and "expects 16" in msg, msg
    assert sess.run(None, feeds((1, 16, 9, 11)))[0].shape == (1, 16, 1, 1)  # still usable


def _contrib_conv_model(x_shape, k=3, pads=None, **attrs):
    g = QGraph(seed=9)
    g.init("x_s", np.float32(0.05))
    g.init("x_z", np.array(128, np.uint8))
    g.conv(("x", 0.05), "y", 4, 8, k, pads=pads, domain="com.microsoft")
    for k, v in attrs.items():
        g.nodes[-1].attribute.append(helper.make_attribute(k, v))
    return g.model(x_shape, [("y", U8)], x_type=U8)


@pytest.mark.parametrize("spatial", [(7, 9), (11,), (4, 5, 6)])
def test_contrib_conv_channels_last_matches_channels_first(onyx, spatial):
    nd = len(spatial)
    shape = (2, 4) + spatial
    to_last = (0,) + tuple(range(2, nd + 2)) + (1,)
    kw = dict(k=(3,) * nd, pads=[1] * (2 * nd))
    x = np.random.default_rng(10).integers(0, 256, shape).astype(np.uint8)
    xl = np.ascontiguousarray(x.transpose(to_last))
    first = session(onyx, _contrib_conv_model(list(shape), **kw), "ORT_DISABLE_ALL")[0].run(None, {"x": x})[0]
    last = session(onyx, _contrib_conv_model(list(xl.shape), channels_last=1, **kw), "ORT_DISABLE_ALL")[0]
    got = last.run(None, {"x": xl})[0]
    np.testing.assert_array_equal(got, first.transpose(to_last))
    theirs = session(ort, _contrib_conv_model(list(xl.shape), channels_last=1, **kw), "ORT_DISABLE_ALL")[0]
    np.testing.assert_array_equal(got, theirs.run(None, {"x": xl})[0])


def test_contrib_conv_channels_last_bad_inputs(onyx):
    sess = session(onyx, _contrib_conv_model(None, channels_last=1), "ORT_DISABLE_ALL")[0]
    with pytest.raises(Exception) as e:
        sess.run(None, {"x": np.zeros((1, 7, 9, 5), np.uint8)})  # 5 channels last, w wants 4
    assert "QLinearConv" in str(e.value) and "5 channels" in str(e.value), str(e.value)
    with pytest.raises(Exception) as e:
        sess.run(None, {"x": np.zeros((7, 4), np.uint8)})
    assert "rank >= 3 (N, spatial..., C)" in str(e.value), str(e.value)
    assert sess.run(None, {"x": np.zeros((1, 5, 5, 4), np.uint8)})[0].shape == (1, 5, 5, 8)


PROBE = r"""
import json, sys
import numpy as np
sys.path.insert(0, %(tests)r)
import onyxruntime as rt
from test_nhwc_transformer import QGraph, residual_block, session, feeds
out = {}
g = QGraph(seed=11)
x = g.quantize("x", "xq")
a = g.conv(x, "a", 3, 24, 5, stride=2)
b = g.conv(a, "b", 24, 24, 3, group=24)
bn = g.batch_norm(b, "bn", 24, relu=True)
c = g.conv(bn, "c", 24, 40, 1)
g.dequantize(c[0], c[1], "y")
cases = {"residual": (residual_block(), feeds((2, 16, 9, 11))),
         "bn_chain": (g.model(["N", 3, 17, 19], ["y"]), feeds((2, 3, 17, 19)))}
for name, (m, f) in cases.items():
    got = session(rt, m, "ORT_ENABLE_ALL")[0].run(None, f)[0]
    plain = session(rt, m, "ORT_DISABLE_ALL")[0].run(None, f)[0]
    out[name] = bool(np.array_equal(got, plain))
print(json.dumps(out))
"""


@ONYX_ONLY
@pytest.mark.parametrize("isa", _paths())
def test_every_simd_path_is_exact(isa):
    import os
    out = _probe(isa, PROBE % {"tests": os.path.dirname(os.path.abspath(__file__))})
    res = json.loads(out.strip().splitlines()[-1])
    assert all(res.values()), (isa, res)


@ONYX_ONLY
@pytest.mark.parametrize("spatial", [(13,), (5, 6, 7)])
def test_1d_and_3d_chains(onyx, tmp_path, spatial):
    nd = len(spatial)
    g = QGraph(seed=12)
    x = g.quantize("x", "xq")
    a = g.conv(x, "a", 8, 16, (3,) * nd, pads=[1] * (2 * nd))
    b = g.conv(a, "b", 16, 8, (1,) * nd, pads=[0] * (2 * nd), stride=2)
    g.dequantize(b[0], b[1], "y")
    shape = (2, 8) + spatial
    saved = check_exact(onyx, g.model(["N", 8, *spatial], ["y"]), feeds(shape), tmp_path)
    assert len(channels_last_convs(saved)) == 2 and op_counts(saved)["Transpose"] == 2


@pytest.mark.parametrize("act", [np.uint8, np.int8])
def test_global_pool_channels_last_many_channels(onyx, act):
    # More channels than one block of the kernel's channel split, several images.
    def model(channels_last, shape):
        g = QGraph(seed=13, act=act)
        g.qparams("x", 0.05)
        g.qparams("y", 0.03)
        g.nodes.append(helper.make_node("QLinearGlobalAveragePool", ["x", "x_s", "x_z", "y_s", "y_z"], ["y"],
                                        domain="com.microsoft", channels_last=channels_last))
        t = U8 if act == np.uint8 else I8
        return g.model(shape, [("y", t)], x_type=t)
    info = np.iinfo(act)
    x = np.random.default_rng(14).integers(info.min, info.max + 1, (3, 600, 5, 7)).astype(act)
    xl = np.ascontiguousarray(x.transpose(0, 2, 3, 1))
    first = session(onyx, model(0, list(x.shape)), "ORT_DISABLE_ALL")[0].run(None, {"x": x})[0]
    got = session(onyx, model(1, list(xl.shape)), "ORT_DISABLE_ALL")[0].run(None, {"x": xl})[0]
    assert got.shape == (3, 1, 1, 600)
    np.testing.assert_array_equal(got.reshape(3, 600), first.reshape(3, 600))
    theirs = session(ort, model(1, list(xl.shape)), "ORT_DISABLE_ALL")[0].run(None, {"x": xl})[0]
    np.testing.assert_array_equal(got, theirs)


POOLS = {
    "3x3_s2_p1": dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]),
    "2x2_ceil": dict(kernel_shape=[2, 2], strides=[2, 2], ceil_mode=1),
    "3x2_dil2_asym": dict(kernel_shape=[3, 2], dilations=[2, 1], pads=[0, 1, 2, 0]),
    "same_upper": dict(kernel_shape=[3, 3], strides=[2, 2], auto_pad="SAME_UPPER"),
}


@ONYX_ONLY
@pytest.mark.parametrize("act", [np.uint8, np.int8])
@pytest.mark.parametrize("case", sorted(POOLS))
def test_max_pool_between_convs_becomes_nhwc_max_pool(onyx, tmp_path, act, case):
    g = QGraph(seed=15, act=act)
    x = g.quantize("x", "xq")
    a = g.conv(x, "a", 8, 16, 3)
    g.nodes.append(helper.make_node("MaxPool", ["a"], ["mp"], **POOLS[case]))
    g.init("mp_s", np.float32(a[1]))
    g.init("mp_z", np.array(g.zp, act))
    b = g.conv(("mp", a[1]), "b", 16, 8, 1)
    g.dequantize(b[0], b[1], "y")
    saved = check_exact(onyx, g.model(["N", 8, 11, 10], ["y"]), feeds((2, 8, 11, 10)), tmp_path)
    counts = op_counts(saved)
    assert counts["com.microsoft:NhwcMaxPool"] == 1 and counts["MaxPool"] == 0, counts
    assert counts["Transpose"] == 2, counts


@pytest.mark.parametrize("spatial,attrs", [((9, 11), POOLS["3x3_s2_p1"]), ((17,), dict(kernel_shape=[3], strides=[2])),
                                           ((4, 6, 5), dict(kernel_shape=[2, 3, 2], pads=[0, 1, 1, 1, 1, 0]))])
def test_nhwc_max_pool_kernel_matches_max_pool(onyx, spatial, attrs):
    nd = len(spatial)
    shape = (2, 5) + spatial
    to_last = (0,) + tuple(range(2, nd + 2)) + (1,)
    x = np.random.default_rng(16).integers(0, 256, shape).astype(np.uint8)
    xl = np.ascontiguousarray(x.transpose(to_last))

    def model(op, domain, in_shape):
        g = helper.make_graph([helper.make_node(op, ["x"], ["y"], domain=domain, **attrs)], "g",
                              [helper.make_tensor_value_info("x", U8, None if in_shape is None else list(in_shape))],
                              [helper.make_tensor_value_info("y", U8, None)])
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)])
        m.ir_version = 8
        return m
    want = session(onyx, model("MaxPool", "", shape), "ORT_DISABLE_ALL")[0].run(None, {"x": x})[0]
    got = session(onyx, model("NhwcMaxPool", "com.microsoft", xl.shape), "ORT_DISABLE_ALL")[0].run(None, {"x": xl})[0]
    np.testing.assert_array_equal(got, want.transpose(to_last))
    if nd == 2:
        theirs = session(ort, model("NhwcMaxPool", "com.microsoft", xl.shape), "ORT_DISABLE_ALL")[0]
        np.testing.assert_array_equal(got, theirs.run(None, {"x": xl})[0])
    bad = session(onyx, model("NhwcMaxPool", "com.microsoft", None), "ORT_DISABLE_ALL")[0]
    with pytest.raises(Exception) as e:
        bad.run(None, {"x": np.zeros((1,) * nd + (5,), np.uint8)})  # one dim short
    assert "NhwcMaxPool: input X" in str(e.value) and "must have rank %d" % (nd + 2) in str(e.value), str(e.value)
    assert bad.run(None, {"x": xl})[0].shape == got.shape  # still usable


# Few input channels and many taps: the channels-last kernel gathers each row
# of taps in one copy (the stem of an image net), borders, strides and a
# dilation included; against the channels-first kernel and onnxruntime.
@pytest.mark.parametrize("cin,k,attrs", [
    (3, (7, 7), dict(strides=[2, 2], pads=[3, 3, 3, 3])),
    (1, (9, 8), dict(pads=[0, 4, 2, 1])),
    (4, (5, 5), dict(strides=[1, 3], pads=[2, 0, 2, 2])),
    (7, (3, 5), dict(dilations=[2, 1], pads=[2, 2, 0, 1])),
    (3, (5, 5), dict(dilations=[1, 2], pads=[2, 4, 2, 4])),
])
@pytest.mark.parametrize("act", [np.uint8, np.int8])
def test_few_channel_channels_last_conv(onyx, cin, k, attrs, act):
    def model(last, shape):
        g = QGraph(seed=17, act=act)
        g.init("x_s", np.float32(0.05))
        g.init("x_z", np.array(g.zp + 3, act))
        g.conv(("x", 0.05), "y", cin, 24, k, pads=attrs.get("pads"), domain="com.microsoft")
        node = g.nodes[-1]
        for a in list(node.attribute):
            if a.name in attrs and a.name != "pads":
                node.attribute.remove(a)
        for name in ("strides", "dilations"):
            if name in attrs:
                node.attribute.append(helper.make_attribute(name, attrs[name]))
        node.attribute.append(helper.make_attribute("channels_last", last))
        t = U8 if act == np.uint8 else I8
        return g.model(shape, [("y", t)], x_type=t)
    info = np.iinfo(act)
    x = np.random.default_rng(18).integers(info.min, info.max + 1, (2, cin, 23, 19)).astype(act)
    xl = np.ascontiguousarray(x.transpose(0, 2, 3, 1))
    first = session(onyx, model(0, list(x.shape)), "ORT_DISABLE_ALL")[0].run(None, {"x": x})[0]
    got = session(onyx, model(1, list(xl.shape)), "ORT_DISABLE_ALL")[0].run(None, {"x": xl})[0]
    np.testing.assert_array_equal(got, first.transpose(0, 2, 3, 1))
    theirs = session(ort, model(1, list(xl.shape)), "ORT_DISABLE_ALL")[0].run(None, {"x": xl})[0]
    np.testing.assert_array_equal(got, theirs)

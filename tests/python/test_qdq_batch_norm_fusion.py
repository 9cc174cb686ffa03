"""qdq_batch_norm_fusion (level 'all'): DequantizeLinear -> BatchNormalization
-> [Relu] -> QuantizeLinear becomes com.onyxruntime QLinearBatchNormalization,
whose outputs are level 'disabled''s bit for bit (the same float steps) and
onnxruntime's; only with per-tensor 8-bit parameters, an inference-mode
BatchNormalization of constant parameters and no other reader of the values
in between. The kernel's bad inputs are errors naming the input."""

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from opt_fusion_util import ONYX_ONLY, op_counts
from test_nhwc_transformer import QGraph, session, feeds
import onnxruntime as ort

F = TensorProto.FLOAT
U8 = TensorProto.UINT8


def island(act=np.uint8, relu=False, c=6, rank=4):
    """x -> Q -> DQ -> BN -> [Relu] -> Q -> DQ -> y (no conv: the island alone)."""
    g = QGraph(seed=21, act=act)
    x = g.quantize("x", "xq", scale=0.03)
    bn = g.batch_norm(x, "bn", c, relu=relu)
    g.dequantize(bn[0], bn[1], "y")
    return g.model(["N", c] + [5, 7][:rank - 2], ["y"])


def check(onyx, model, f, tmp_path, fused=1):
    """Level 'all' fuses `fused` islands and gives level 'disabled''s outputs
    bit for bit, and onnxruntime's (float outputs of an unfused
    BatchNormalization within an ulp: it folds the parameters its own way)."""
    sess, saved = session(onyx, model, "ORT_ENABLE_ALL", tmp_path)
    assert op_counts(saved)["com.onyxruntime:QLinearBatchNormalization"] == fused, op_counts(saved)
    got = sess.run(None, f)
    plain = session(onyx, model, "ORT_DISABLE_ALL")[0].run(None, f)
    theirs = session(ort, model, "ORT_DISABLE_ALL")[0].run(None, f)
    for i, (g, p, t) in enumerate(zip(got, plain, theirs)):
        np.testing.assert_array_equal(g, p)
        if model.graph.output[i].name.endswith("_bn"):
            np.testing.assert_allclose(g, t, rtol=1e-5, atol=1e-6)
        else:
            np.testing.assert_array_equal(g, t)
    return saved


@ONYX_ONLY
@pytest.mark.parametrize("act", [np.uint8, np.int8])
@pytest.mark.parametrize("relu", [False, True])
@pytest.mark.parametrize("rank", [3, 4])
def test_island_fuses_and_matches(onyx, tmp_path, act, relu, rank):
    saved = check(onyx, island(act, relu, rank=rank), feeds((2, 6, 5, 7)[:rank]), tmp_path)
    counts = op_counts(saved)
    assert counts["BatchNormalization"] == 0 and counts["Relu"] == 0, counts


@ONYX_ONLY
def test_saturating_and_extreme_values(onyx, tmp_path):
    # Inputs far outside the quantized range clamp; a huge gamma saturates Y.
    model = island(c=3)
    for init in model.graph.initializer:
        if init.name == "bn_gamma":
            init.CopyFrom(numpy_helper.from_array(np.array([1e6, -1e6, 1e-8], np.float32), "bn_gamma"))
    x = np.array([-1e9, -3, -0.01, 0, 0.01, 3, 1e9], np.float32)
    f = {"x": np.resize(x, (2, 3, 5, 7))}
    check(onyx, model, f, tmp_path)


@ONYX_ONLY
def test_not_fused_where_it_would_not_be_exact_or_allowed(onyx, tmp_path):
    f = feeds((2, 6, 5, 7))
    # A second reader of the BatchNormalization output.
    model = island()
    model.graph.output.append(helper.make_tensor_value_info("bn_bn", F, None))
    check(onyx, model, f, tmp_path, fused=0)
    # Parameters that are graph inputs (a run may replace them).
    model = island()
    model.graph.input.append(helper.make_tensor_value_info("bn_mean", F, [6]))
    check(onyx, model, f, tmp_path, fused=0)
    # A per-channel DequantizeLinear scale.
    g = QGraph(seed=22)
    x = g.quantize("x", "xq", scale=0.03)
    g.init("pc_s", np.linspace(0.01, 0.05, 6).astype(np.float32))
    g.init("pc_z", np.full(6, 128, np.uint8))
    g.nodes.append(helper.make_node("DequantizeLinear", ["xq", "pc_s", "pc_z"], ["d"], axis=1))
    g.init("g1", np.ones(6, np.float32))
    g.init("b1", np.zeros(6, np.float32))
    g.init("v1", np.ones(6, np.float32))
    g.nodes.append(helper.make_node("BatchNormalization", ["d", "g1", "b1", "b1", "v1"], ["n"]))
    q = g.quantize("n", "nq", scale=0.04)
    g.dequantize(q[0], q[1], "y")
    check(onyx, g.model(["N", 6, 5, 7], ["y"]), f, tmp_path, fused=0)


@ONYX_ONLY
def test_level_extended_leaves_the_island(onyx, tmp_path):
    _, saved = session(onyx, island(), "ORT_ENABLE_EXTENDED", tmp_path)
    assert op_counts(saved)["BatchNormalization"] == 1


def _direct(c=4, **attrs):
    """One QLinearBatchNormalization node, x uint8 [N, C, 3] (or channels-last)."""
    g = QGraph(seed=23)
    g.qparams("x", 0.05)
    g.qparams("y", 0.04)
    r = np.random.default_rng(24)
    for n, v in (("gamma", r.uniform(0.5, 2, c)), ("beta", r.uniform(-1, 1, c)), ("mean", r.uniform(-1, 1, c)),
                 ("var", r.uniform(0.1, 2, c))):
        g.init(n, v.astype(np.float32))
    g.nodes.append(helper.make_node("QLinearBatchNormalization",
                                    ["x", "x_s", "x_z", "gamma", "beta", "mean", "var", "y_s", "y_z"], ["y"],
                                    domain="com.onyxruntime", **attrs))
    m = g.model(None, [("y", U8)], x_type=U8)
    m.opset_import.append(helper.make_opsetid("com.onyxruntime", 1))
    return m


def test_channels_last_attribute_matches_channels_first(onyx):
    x = np.random.default_rng(25).integers(0, 256, (2, 4, 37)).astype(np.uint8)
    first = session(onyx, _direct(activation="Relu"), "ORT_DISABLE_ALL")[0].run(None, {"x": x})[0]
    last = session(onyx, _direct(activation="Relu", channels_last=1), "ORT_DISABLE_ALL")[0]
    got = last.run(None, {"x": np.ascontiguousarray(x.transpose(0, 2, 1))})[0]
    np.testing.assert_array_equal(got, first.transpose(0, 2, 1))


def test_kernel_bad_inputs_name_the_input(onyx):
    sess = session(onyx, _direct(), "ORT_DISABLE_ALL")[0]
    with pytest.raises(Exception) as e:
        sess.run(None, {"x": np.zeros((2, 5, 3), np.uint8)})  # 5 channels, parameters for 4
    assert "QLinearBatchNormalization" in str(e.value) and "input 3 (scale)" in str(e.value), str(e.value)
    with pytest.raises(Exception) as e:
        sess.run(None, {"x": np.zeros((4,), np.uint8)})
    assert "rank >= 2" in str(e.value), str(e.value)
    assert sess.run(None, {"x": np.zeros((1, 4, 2), np.uint8)})[0].shape == (1, 4, 2)  # still usable
    with pytest.raises(Exception) as e:
        session(onyx, _direct(activation="Tanh"), "ORT_DISABLE_ALL")
    assert "activation" in str(e.value) and "Tanh" in str(e.value), str(e.value)


@ONYX_ONLY
def test_interleaved_parallel_islands_all_fuse(onyx, tmp_path):
    # Two islands on one input with their nodes interleaved (DQ, DQ, BN, BN, Q, Q),
    # as an exporter orders a ResNet's conv1 and downsample branches: each fusion
    # shifts the nodes after it, and the one pass at this level must not skip any.
    g = QGraph(seed=26)
    x = g.quantize("x", "xq", scale=0.03)
    a = g.batch_norm(x, "a", 6)
    b = g.batch_norm(x, "b", 6, relu=True)
    g.dequantize(a[0], a[1], "ya")
    g.dequantize(b[0], b[1], "yb")
    order = ["xq", "a_dq", "b_dq", "a_bn", "b_bn", "b_relu", "a", "b"]
    g.nodes.sort(key=lambda n: order.index(n.output[0]) if n.output[0] in order else len(order))
    check(onyx, g.model(["N", 6, 5, 7], ["ya", "yb"]), feeds((2, 6, 5, 7)), tmp_path, fused=2)


@ONYX_ONLY
@pytest.mark.parametrize("act", [np.uint8, np.int8])
@pytest.mark.parametrize("follow_conv", [False, True])
def test_max_pool_before_quantize_moves_behind_the_fused_island(onyx, tmp_path, act, follow_conv):
    # DQ -> BN -> Relu -> MaxPool -> Q (a ResNet stem as quantized): the MaxPool runs
    # on the fused island's 8-bit output; with a QLinearConv on each side the stem
    # joins the channels-last chain as NhwcMaxPool.
    g = QGraph(seed=27, act=act)
    x = g.quantize("x", "xq", scale=0.03)
    src = g.conv(x, "c0", 6, 8, 3) if follow_conv else x
    c = 8 if follow_conv else 6
    d = g.dequantize(src[0], src[1], "stem_dq")
    prm = [g.init("stem_" + n, v.astype(np.float32)) for n, v in (
        ("gamma", g.rng.uniform(0.5, 1.5, c)), ("beta", g.rng.uniform(-1, 1, c)), ("mean", g.rng.uniform(-1, 1, c)),
        ("var", g.rng.uniform(0.2, 2, c)))]
    g.nodes += [helper.make_node("BatchNormalization", [d] + prm, ["stem_bn"]),
                helper.make_node("Relu", ["stem_bn"], ["stem_relu"]),
                helper.make_node("MaxPool", ["stem_relu"], ["stem_pool"], kernel_shape=[3, 3], strides=[2, 2],
                                 pads=[1, 1, 1, 1])]
    q = g.quantize("stem_pool", "stem", scale=0.04)
    if follow_conv:
        q = g.conv(q, "c1", 8, 8, 1)
    g.dequantize(q[0], q[1], "y")
    saved = check(onyx, g.model(["N", 6, 9, 10], ["y"]), feeds((2, 6, 9, 10)), tmp_path)
    counts = op_counts(saved)
    assert counts["BatchNormalization"] == 0 and counts["Relu"] == 0, counts
    if follow_conv:
        assert counts["com.microsoft:NhwcMaxPool"] == 1 and counts["Transpose"] == 2, counts
    else:
        assert counts["MaxPool"] == 1, counts
        pool = next(n for n in saved.graph.node if n.op_type == "MaxPool")
        assert pool.input[0] == next(n for n in saved.graph.node if n.op_type == "QLinearBatchNormalization").output[0]

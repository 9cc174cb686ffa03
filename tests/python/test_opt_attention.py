"""attention_fusion: BERT-style multi-head self-attention (Q/K/V MatMul+Add,
Reshape, Transpose, scaled scores, additive mask made from a 0/1 mask,
Softmax, context Transpose+Reshape) becomes one com.microsoft Attention; the
project's BERT gets one per layer. Projections of another kind (quantize_dynamic's
integer MatMuls, weights given as inputs) stay outside a MultiHeadAttention.
Near misses stay as they are."""

import math
import os

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from opt_fusion_util import ONYX_ONLY, F, check_fusion, const, make_model, op_counts, optimized

pytestmark = ONYX_ONLY

B, S, N, HD = 2, 5, 4, 4
D = N * HD
I64 = TensorProto.INT64
rng = np.random.default_rng(83)
ATT = "com.microsoft:Attention"
MHA = "com.microsoft:MultiHeadAttention"


def _feeds(mask_batch=B):
    mask = np.ones((mask_batch, S), dtype=np.int64)
    mask[-1, S - 2:] = 0
    return {"x": rng.standard_normal((B, S, D)).astype(np.float32), "mask": mask}


def _attention(targets="computed", scale="div", mask="chain", k_two_steps=False, extra_outputs=(),
               weights="const", softmax_axis=-1, mask_shape=("batch", "seq"), heads_target=None):
    nodes, inits = [], []
    if targets == "computed":  # as torch.onnx writes x.size(): Shape -> Gather -> Unsqueeze -> Concat
        nodes += [helper.make_node("Shape", ["x"], ["shp"]),
                  helper.make_node("Gather", ["shp", "i0"], ["g0"], axis=0),
                  helper.make_node("Gather", ["shp", "i1"], ["g1"], axis=0),
                  helper.make_node("Unsqueeze", ["g0", "ax0"], ["u0"]),
                  helper.make_node("Unsqueeze", ["g1", "ax0"], ["u1"]),
                  helper.make_node("Concat", ["u0", "u1", "nh"], ["heads_shape"], axis=0),
                  helper.make_node("Concat", ["u0", "u1", "dd"], ["merged_shape"], axis=0)]
        inits += [const("i0", 0, np.int64), const("i1", 1, np.int64), const("ax0", [0], np.int64),
                  const("nh", heads_target or [N, HD], np.int64), const("dd", [D], np.int64)]
    else:
        inits += [const("heads_shape", heads_target or [0, 0, N, HD], np.int64),
                  const("merged_shape", [0, 0, D], np.int64)]
    inputs = [("x", F, ["batch", "seq", D])]
    if weights == "int8":  # onnxruntime.quantization.quantize_dynamic's projections
        nodes.append(helper.make_node("DynamicQuantizeLinear", ["x"], ["xq", "xs", "xzp"]))
    for name, perm in (("q", [0, 2, 1, 3]), ("k", [0, 2, 1, 3] if k_two_steps else [0, 2, 3, 1]), ("v", [0, 2, 1, 3])):
        w = rng.standard_normal((D, D)).astype(np.float32) / math.sqrt(D)
        if weights == "const":
            inits.append(const("w" + name, w))
        elif weights == "int8":
            ws = float(np.abs(w).max() / 127)
            inits += [const("w" + name, np.round(w / ws), np.int8), const("ws" + name, ws),
                      const("wzp" + name, 0, np.int8)]
        else:
            inputs.append(("w" + name, F, [D, D]))
        inits.append(const("b" + name, rng.standard_normal(D) * 0.1))
        if weights == "int8":
            nodes += [helper.make_node("Mul", ["xs", "ws" + name], [name + "_s"]),
                      helper.make_node("MatMulInteger", ["xq", "w" + name, "xzp", "wzp" + name], [name + "_i"]),
                      helper.make_node("Cast", [name + "_i"], [name + "_f"], to=F),
                      helper.make_node("Mul", [name + "_f", name + "_s"], [name + "_mm"])]
        else:
            nodes.append(helper.make_node("MatMul", ["x", "w" + name], [name + "_mm"]))
        nodes += [helper.make_node("Add", ["b" + name, name + "_mm"], [name + "_lin"]),
                  helper.make_node("Reshape", [name + "_lin", "heads_shape"], [name + "_r"]),
                  helper.make_node("Transpose", [name + "_r"], [name + "_t"], perm=perm)]
    kt = "k_t"
    if k_two_steps:
        nodes.append(helper.make_node("Transpose", ["k_t"], ["k_tt"], perm=[0, 1, 3, 2]))
        kt = "k_tt"
    if scale == "fused":  # the scale already in alpha (matmul_scale_fusion's FusedMatMul)
        nodes.append(helper.make_node("FusedMatMul", ["q_t", kt], ["scaled"], domain="com.microsoft",
                                      alpha=1 / math.sqrt(HD)))
    else:
        nodes.append(helper.make_node("MatMul", ["q_t", kt], ["scores"]))
    if scale == "fused":
        pass
    elif scale == "div":
        nodes.append(helper.make_node("Div", ["scores", "c"], ["scaled"]))
        inits.append(const("c", math.sqrt(HD)))
    else:
        nodes.append(helper.make_node("Mul", ["c", "scores"], ["scaled"]))
        inits.append(const("c", 1 / math.sqrt(HD)))
    logits = "scaled"
    if mask == "chain":
        inputs.append(("mask", I64, list(mask_shape)))
        nodes += [helper.make_node("Unsqueeze", ["mask", "ax12"], ["m4"]),
                  helper.make_node("Cast", ["m4"], ["mf"], to=TensorProto.FLOAT),
                  helper.make_node("Sub", ["one", "mf"], ["inv"]),
                  helper.make_node("Mul", ["inv", "fmin"], ["ext"]),
                  helper.make_node("Add", ["scaled", "ext"], ["masked"])]
        inits += [const("ax12", [1, 2], np.int64), const("one", 1.0), const("fmin", np.finfo(np.float32).min)]
        logits = "masked"
    elif mask == "float":  # an additive float mask given as is: not a 0/1 mask
        inputs.append(("mask", F, ["batch", 1, 1, "seq"]))
        nodes.append(helper.make_node("Add", ["scaled", "mask"], ["masked"]))
        logits = "masked"
    nodes += [helper.make_node("Softmax", [logits], ["probs"], axis=softmax_axis),
              helper.make_node("MatMul", ["probs", "v_t"], ["ctx"]),
              helper.make_node("Transpose", ["ctx"], ["ctx_t"], perm=[0, 2, 1, 3]),
              helper.make_node("Reshape", ["ctx_t", "merged_shape"], ["y"])]
    return make_model(nodes, inputs, [("y", F, None)] + [(o, F, None) for o in extra_outputs], inits,
                      extra_opsets=[("com.microsoft", 1)] if scale == "fused" else ())


def _with_mask(feeds, model):
    names = {i.name for i in model.graph.input}
    return {k: v for k, v in feeds.items() if k in names}


@pytest.mark.parametrize("targets", ["computed", "constant"])
@pytest.mark.parametrize("scale", ["div", "mul", "fused"])
def test_self_attention_fuses(onyx, tmp_path, targets, scale):
    m = _attention(targets, scale)
    saved = check_fusion(onyx, m, _feeds(), tmp_path, present={ATT: 1},
                         absent=["Softmax", "MatMul", "Transpose", "Reshape", "Shape", "Concat", "Sub"])
    att = [n for n in saved.graph.node if n.op_type == "Attention"][0]
    attrs = {a.name: helper.get_attribute_value(a) for a in att.attribute}
    assert attrs["num_heads"] == N and abs(attrs["scale"] - 1 / math.sqrt(HD)) < 1e-7
    assert attrs["mask_filter_value"] == np.finfo(np.float32).min
    w = [t for t in saved.graph.initializer if t.name == att.input[1]][0]
    assert list(w.dims) == [D, 3 * D]


def test_without_mask_and_two_step_key_transpose(onyx, tmp_path):
    m = _attention(mask="none", k_two_steps=True)
    check_fusion(onyx, m, _with_mask(_feeds(), m), tmp_path, present={ATT: 1}, absent=["Softmax", "Transpose"])


def test_levels(onyx, tmp_path):
    m = _attention()
    check_fusion(onyx, m, _feeds(), tmp_path, level="ORT_ENABLE_BASIC", present={"Softmax": 1}, absent=[ATT])
    check_fusion(onyx, m, _feeds(), tmp_path, disabled="AttentionFusion", present={"Softmax": 1}, absent=[ATT])


@pytest.mark.parametrize("weights", ["int8", "input"])
def test_other_projections_give_multi_head_attention(onyx, tmp_path, weights):
    """quantize_dynamic's projections (MatMulIntegerToFloat once fused) or
    weights that are inputs stay outside; the rest becomes MultiHeadAttention
    of the projected Q, K, V with the mask as key_padding_mask."""
    m = _attention(weights=weights)
    feeds = _feeds()
    if weights == "input":
        for k in "qkv":
            feeds["w" + k] = (rng.standard_normal((D, D)) / math.sqrt(D)).astype(np.float32)
    saved = check_fusion(onyx, m, feeds, tmp_path, present={MHA: 1},
                         absent=[ATT, "Softmax", "Transpose", "Reshape", "Sub"])
    mha = [n for n in saved.graph.node if n.op_type == "MultiHeadAttention"][0]
    attrs = {a.name: helper.get_attribute_value(a) for a in mha.attribute}
    assert attrs["num_heads"] == N and abs(attrs["scale"] - 1 / math.sqrt(HD)) < 1e-7
    assert attrs["mask_filter_value"] == np.finfo(np.float32).min
    assert len(mha.input) == 5 and mha.input[3] == "", list(mha.input)
    if weights == "int8":
        assert op_counts(saved)["com.microsoft:MatMulIntegerToFloat"] == 3, dict(op_counts(saved))
        # The fused graph computes what the unfused one does, exactly.
        base_so = onyx.SessionOptions()
        base_so.graph_optimization_level = onyx.GraphOptimizationLevel.ORT_DISABLE_ALL
        base = onyx.InferenceSession(m.SerializeToString(), base_so, providers=["CPUExecutionProvider"])
        fused = onyx.InferenceSession(saved.SerializeToString(), providers=["CPUExecutionProvider"])
        np.testing.assert_allclose(fused.run(None, feeds)[0], base.run(None, feeds)[0], rtol=1e-5, atol=1e-6)


def test_projections_of_other_shapes_are_not_fused(onyx, tmp_path):
    """Q from x, K and V from another [batch, seq2, D] input (cross attention):
    the projected values differ in shape, so nothing fuses."""
    m = _attention(weights="input")
    for n in m.graph.node:
        if n.op_type == "MatMul" and n.input[1] in ("wk", "wv"):
            n.input[0] = "mem"
    m.graph.input.append(helper.make_tensor_value_info("mem", F, ["batch", "seq2", D]))
    feeds = _feeds()
    feeds["mem"] = rng.standard_normal((B, S, D)).astype(np.float32)
    for k in "qkv":
        feeds["w" + k] = (rng.standard_normal((D, D)) / math.sqrt(D)).astype(np.float32)
    check_fusion(onyx, m, feeds, tmp_path, present=["Softmax"], absent=[ATT, MHA])


@pytest.mark.parametrize("case", ["probs_read", "float_mask", "softmax_axis", "mask_batch_one",
                                  "reshape_not_a_split"])
def test_near_misses_are_not_fused(onyx, tmp_path, case):
    feeds = _feeds()
    if case == "probs_read":
        m = _attention(extra_outputs=("probs",))
    elif case == "float_mask":
        m = _attention(mask="float")
        feeds["mask"] = np.where(feeds["mask"] > 0, 0, -1e4).astype(np.float32)[:, None, None, :]
    elif case == "softmax_axis":
        m = _attention(softmax_axis=2)
    elif case == "mask_batch_one":  # a [1, seq] mask broadcast over the batch
        m = _attention(mask_shape=(1, "seq"))
        feeds = _feeds(mask_batch=1)
    else:  # [batch, -1, N, HD]: the sequence dim is inferred, not provably kept
        m = _attention(heads_target=[0, -1, N, HD], targets="constant")
    check_fusion(onyx, m, feeds, tmp_path, present=["Softmax"], absent=[ATT, MHA])


def test_project_bert_gets_one_attention_per_layer(onyx, model_generator, model_dir, tmp_path):
    """The small BERT (2 layers) of tests/models/generate.py, fully fused."""
    path = model_generator.ensure_model(os.path.join(model_dir, "small"), "bert", small=True)
    layers = model_generator.bert_config(True)["layers"]
    sess, saved = optimized(onyx, onnx.load(path), tmp_path)
    counts = op_counts(saved)
    assert counts[ATT] == layers, dict(counts)
    assert counts["com.microsoft:SkipLayerNormalization"] == 2 * layers, dict(counts)
    assert counts["com.microsoft:BiasGelu"] == layers, dict(counts)
    assert counts["LayerNormalization"] == 1 and counts["Softmax"] == 0 and counts["Erf"] == 0, dict(counts)


def test_mask_of_another_length_is_refused_and_session_stays_usable(onyx, tmp_path):
    """The unfused graph fails to broadcast such a mask too; the fused one says which input is at fault."""
    m = _attention()
    sess, saved = optimized(onyx, m, tmp_path)
    assert op_counts(saved)[ATT] == 1
    feeds = _feeds()
    bad = dict(feeds, mask=np.ones((B, S - 1), dtype=np.int64))
    with pytest.raises(Exception) as info:
        sess.run(None, bad)
    assert "mask_index" in str(info.value) and "Attention" in str(info.value), str(info.value)
    base_so = onyx.SessionOptions()
    base_so.graph_optimization_level = onyx.GraphOptimizationLevel.ORT_DISABLE_ALL
    base = onyx.InferenceSession(m.SerializeToString(), base_so, providers=["CPUExecutionProvider"])
    np.testing.assert_allclose(sess.run(None, feeds)[0], base.run(None, feeds)[0], rtol=1e-4, atol=1e-4)

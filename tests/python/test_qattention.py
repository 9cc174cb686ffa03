"""QAttention and QEmbedLayerNormalization (com.microsoft), as
onnxruntime.quantization.quantize_dynamic writes them for the Attention and
EmbedLayerNormalization nodes of a BERT that onnxruntime's transformer
optimizer fused: each model here is such a float node with seeded weights,
quantized by quantize_dynamic itself, run on both runtimes. The integer
projection is exact and scaled as onnxruntime scales it, so outputs agree to
float rounding (softmax, layer norm)."""

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnxruntime.quantization import quantize_dynamic

F, I32 = TensorProto.FLOAT, TensorProto.INT32
rng = np.random.default_rng(21)


def _save(tmp_path, nodes, inputs, outputs, inits, name):
    graph = helper.make_graph(nodes, "g", inputs, outputs, inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14), helper.make_opsetid("com.microsoft", 1)])
    m.ir_version = 8
    src, dst = str(tmp_path / (name + ".onnx")), str(tmp_path / (name + "_q.onnx"))
    onnx.save(m, src)
    quantize_dynamic(src, dst)
    return dst


def _run_both(onyx, path, feeds):
    ours = onyx.InferenceSession(path, providers=["CPUExecutionProvider"]).run(None, feeds)
    theirs = ort.InferenceSession(path, providers=["CPUExecutionProvider"]).run(None, feeds)
    return ours, theirs


def _attention_model(tmp_path, D=64, heads=4, mask_kind="1d", unidirectional=0):
    w = numpy_helper.from_array((rng.standard_normal((D, 3 * D)) * 0.2).astype(np.float32), "w")
    b = numpy_helper.from_array((rng.standard_normal(3 * D) * 0.1).astype(np.float32), "b")
    ins = [helper.make_tensor_value_info("x", F, ["B", "S", D])]
    node_in = ["x", "w", "b"]
    if mask_kind:
        ins.append(helper.make_tensor_value_info("mask", I32, ["B"] if mask_kind == "1d" else ["B", "S"]))
        node_in.append("mask")
    node = helper.make_node("Attention", node_in, ["y"], domain="com.microsoft", num_heads=heads,
                            unidirectional=unidirectional)
    return _save(tmp_path, [node], ins, [helper.make_tensor_value_info("y", F, None)], [w, b], "attention")


@pytest.mark.parametrize("mask_kind,unidirectional", [("1d", 0), ("2d", 0), (None, 1)])
def test_qattention_matches_onnxruntime(onyx, tmp_path, mask_kind, unidirectional):
    path = _attention_model(tmp_path, mask_kind=mask_kind, unidirectional=unidirectional)
    ops = [n.op_type for n in onnx.load(path).graph.node]
    assert "QAttention" in ops, ops
    B, S = 2, 7
    feeds = {"x": rng.standard_normal((B, S, 64)).astype(np.float32)}
    if mask_kind == "1d":
        feeds["mask"] = np.array([S, S - 2], np.int32)
    elif mask_kind == "2d":
        feeds["mask"] = (rng.random((B, S)) > 0.3).astype(np.int32)
    ours, theirs = _run_both(onyx, path, feeds)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-5, atol=1e-5)


def test_qattention_bad_inputs_name_the_input(onyx, tmp_path):
    path = _attention_model(tmp_path, mask_kind="1d")
    sess = onyx.InferenceSession(path, providers=["CPUExecutionProvider"])
    x = np.zeros((2, 3, 64), np.float32)
    with pytest.raises(Exception, match="QAttention: input 5 \\(mask_index\\) of shape \\[3\\]"):
        sess.run(None, {"x": x, "mask": np.array([3, 3, 3], np.int32)})
    # The session stays usable.
    sess.run(None, {"x": x, "mask": np.array([3, 2], np.int32)})


def _embed_model(tmp_path, V=50, P=16, G=2, H=32):
    tables = {"word": (V, H), "pos": (P, H), "seg": (G, H)}
    inits = [numpy_helper.from_array(rng.standard_normal(s).astype(np.float32), n) for n, s in tables.items()]
    inits += [numpy_helper.from_array((1 + 0.1 * rng.standard_normal(H)).astype(np.float32), "gamma"),
              numpy_helper.from_array((0.1 * rng.standard_normal(H)).astype(np.float32), "beta")]
    ins = [helper.make_tensor_value_info(n, I32, ["B", "S"]) for n in ("ids", "segs", "mask")]
    node = helper.make_node("EmbedLayerNormalization", ["ids", "segs", "word", "pos", "seg", "gamma", "beta", "mask"],
                            ["y", "mask_index"], domain="com.microsoft", epsilon=1e-12)
    outs = [helper.make_tensor_value_info("y", F, None), helper.make_tensor_value_info("mask_index", I32, None)]
    return _save(tmp_path, [node], ins, outs, inits, "embed")


def test_qembed_layer_norm_matches_onnxruntime(onyx, tmp_path):
    path = _embed_model(tmp_path)
    ops = [n.op_type for n in onnx.load(path).graph.node]
    assert "QEmbedLayerNormalization" in ops, ops
    B, S = 2, 9
    feeds = {"ids": rng.integers(0, 50, (B, S)).astype(np.int32), "segs": rng.integers(0, 2, (B, S)).astype(np.int32),
             "mask": np.array([[1] * S, [1] * 6 + [0] * 3], np.int32)}
    ours, theirs = _run_both(onyx, path, feeds)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(ours[1], theirs[1])


def test_qembed_layer_norm_bad_id_names_it(onyx, tmp_path):
    path = _embed_model(tmp_path)
    sess = onyx.InferenceSession(path, providers=["CPUExecutionProvider"])
    feeds = {"ids": np.array([[1, 50]], np.int32), "segs": np.zeros((1, 2), np.int32), "mask": np.ones((1, 2), np.int32)}
    with pytest.raises(Exception, match="input_ids.*50"):
        sess.run(None, feeds)
    feeds["ids"][0, 1] = 3
    sess.run(None, feeds)

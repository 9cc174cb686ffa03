"""SessionOptions.optimized_model_filepath: the optimized graph saved as ONNX.

Each test runs on onnxruntime (the oracle) and on onyxruntime through the `rt`
fixture (conftest.py). A saved model must pass onnx.checker, and a session on
it (optimized again or not) must give the outputs of the session that saved
it. Onyx's file must also run in onnxruntime: its fusions emit onnxruntime's contrib ops
(com.microsoft FusedConv), never private attributes.
"""

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from conftest import SMALL_MODELS
from conftest import is_ort as _is_ort
from onnx import TensorProto, helper, numpy_helper

# The cheap generated models; BERT only in its small form (ONYX_TEST_SMALL_MODELS=1).
MODELS = ("mobilenetv2",) + (("bert",) if SMALL_MODELS else ())

# onnxruntime saves hardware-specific layouts (NCHWc) above EXTENDED and warns
# against it, so both runtimes save at EXTENDED.
SAVE_LEVEL = "ORT_ENABLE_EXTENDED"


def _options(rt, level, path=None):
    so = rt.SessionOptions()
    so.graph_optimization_level = getattr(rt.GraphOptimizationLevel, level)
    if path is not None:
        so.optimized_model_filepath = str(path)
    return so


def _session(rt, model, so):
    return rt.InferenceSession(model, so, providers=["CPUExecutionProvider"])


def _feeds(name, cfg):
    rng = np.random.default_rng([sum(map(ord, name)), 5])
    if name != "bert":
        return {"input": rng.standard_normal((2, 3, 224, 224), dtype=np.float32)}
    seq = 20
    mask = np.ones((2, seq), dtype=np.int64)
    mask[0, seq - 4:] = 0
    return {"input_ids": rng.integers(0, cfg["vocab"], (2, seq), dtype=np.int64),
            "attention_mask": mask,
            "token_type_ids": np.zeros((2, seq), dtype=np.int64)}


def _close(got, want, what):
    assert len(got) == len(want), what
    for i, (g, w) in enumerate(zip(got, want)):
        assert g.shape == w.shape and g.dtype == w.dtype, "%s output %d" % (what, i)
        scale = max(1.0, float(np.abs(w).max()))
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5 * scale, err_msg="%s output %d" % (what, i))


@pytest.mark.parametrize("name", MODELS)
def test_saved_model_is_valid_and_runs_the_same(rt, model_files, tmp_path, name):
    src = model_files.path(name)
    feeds = _feeds(name, model_files.bert_config())
    saved = tmp_path / (name + ".optimized.onnx")
    sess = _session(rt, src, _options(rt, SAVE_LEVEL, saved))
    want = sess.run(None, feeds)
    assert saved.is_file()

    model = onnx.load(str(saved))
    onnx.checker.check_model(model)
    assert [o.name for o in model.graph.output] == [o.name for o in sess.get_outputs()]
    assert [i.name for i in model.graph.input if i.name in feeds] == [i.name for i in sess.get_inputs()]
    opsets = {o.domain: o.version for o in model.opset_import}
    assert opsets.get("", opsets.get("ai.onnx")) == 17
    fused = [n for n in model.graph.node if n.op_type == "FusedConv"]
    for n in fused:
        assert n.domain == "com.microsoft"
    if fused:
        assert opsets.get("com.microsoft") == 1
    if not _is_ort(rt):
        # Conv fusions must leave no Conv carrying private attributes.
        for n in model.graph.node:
            if n.op_type == "Conv" and n.domain in ("", "ai.onnx"):
                assert not {a.name for a in n.attribute} & {"activation", "activation_params"}, n.name
        if name == "mobilenetv2":
            assert fused, "Conv+Clip (ReLU6) should have fused"

    for level in ("ORT_DISABLE_ALL", "ORT_ENABLE_ALL"):
        again = _session(rt, str(saved), _options(rt, level))
        _close(again.run(None, feeds), want, "%s saved by %s, reloaded at %s" % (name, rt.__name__, level))
    if not _is_ort(rt):
        # The file Onyx wrote is onnxruntime's to run as well.
        other = ort.InferenceSession(str(saved), _options(ort, "ORT_DISABLE_ALL"), providers=["CPUExecutionProvider"])
        _close(other.run(None, feeds), want, "%s saved by onyxruntime, run by onnxruntime" % name)


def test_onnxruntime_saved_fused_conv_runs_in_onyx(onyx, model_files, tmp_path):
    """onnxruntime's own FusedConv (Conv + Clip in MobileNetV2) loads and runs in Onyx."""
    src = model_files.path("mobilenetv2")
    feeds = _feeds("mobilenetv2", None)
    saved = tmp_path / "ort_optimized.onnx"
    want = ort.InferenceSession(src, _options(ort, SAVE_LEVEL, saved),
                                providers=["CPUExecutionProvider"]).run(None, feeds)
    model = onnx.load(str(saved))
    assert any(n.op_type == "FusedConv" and n.domain == "com.microsoft" for n in model.graph.node)
    for level in ("ORT_DISABLE_ALL", "ORT_ENABLE_ALL"):
        got = onyx.InferenceSession(str(saved), _options(onyx, level), providers=["CPUExecutionProvider"])
        _close(got.run(None, feeds), want, "onnxruntime's optimized mobilenetv2 in onyxruntime at " + level)


def _tiny_conv_relu():
    """Y = Relu(Conv(X, W) + B) on a [1, 2, 5, 5] float input."""
    rng = np.random.default_rng(3)
    w = numpy_helper.from_array(rng.standard_normal((3, 2, 3, 3)).astype(np.float32), "W")
    b = numpy_helper.from_array(rng.standard_normal(3).astype(np.float32), "B")
    graph = helper.make_graph(
        [helper.make_node("Conv", ["X", "W", "B"], ["c"], pads=[1, 1, 1, 1]),
         helper.make_node("Relu", ["c"], ["Y"])],
        "tiny",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, ["N", 2, 5, 5])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, ["N", 3, 5, 5])],
        initializer=[w, b])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8).SerializeToString()


def test_unwritable_path_fails_session_creation(rt, tmp_path):
    path = tmp_path / "no_such_dir" / "model.onnx"
    with pytest.raises(Exception) as info:
        _session(rt, _tiny_conv_relu(), _options(rt, "ORT_ENABLE_ALL", path))
    # onnxruntime's code for it; its message ("SystemError : 2") omits the path.
    assert type(info.value).__name__ == "InvalidArgument"
    if not _is_ort(rt):
        assert str(path) in str(info.value)
    assert not path.exists()


def test_ort_format_is_refused_by_onyx(onyx, tmp_path):
    """Onyx writes ONNX only; a ".ort" path is an explicit NOT_IMPLEMENTED."""
    if onyx.__name__ == "onnxruntime":
        pytest.skip("ONYX_TEST_SELF_CHECK: onnxruntime writes the ORT format")
    path = tmp_path / "model.ort"
    with pytest.raises(Exception) as info:
        _session(onyx, _tiny_conv_relu(), _options(onyx, "ORT_ENABLE_ALL", path))
    assert type(info.value).__name__ == "NotImplemented"
    assert "ORT format" in str(info.value) and str(path) in str(info.value)
    assert not path.exists()

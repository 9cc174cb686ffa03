"""Graph optimization levels on the generated models.

The optimizer (core/optimizer/) may only change results by float rounding: every
level must give the level-0 outputs within 1e-4 relative, and onnxruntime's
(which runs unoptimized here, so its numerics stay plain).
"""

import numpy as np
import onnxruntime as ort
import pytest

MODELS = ("resnet50", "mobilenetv2", "bert")
LEVELS = (0, 1, 2, 99)
LEVEL_NAMES = {0: "ORT_DISABLE_ALL", 1: "ORT_ENABLE_BASIC", 2: "ORT_ENABLE_EXTENDED", 99: "ORT_ENABLE_ALL"}


def _inputs(name, cfg):
    rng = np.random.default_rng([sum(map(ord, name)), 17])
    if name != "bert":
        return {"input": rng.standard_normal((2, 3, 224, 224), dtype=np.float32)}
    seq = 24
    mask = np.ones((2, seq), dtype=np.int64)
    mask[1, seq - 5:] = 0
    return {"input_ids": rng.integers(0, cfg["vocab"], (2, seq), dtype=np.int64),
            "attention_mask": mask,
            "token_type_ids": np.zeros((2, seq), dtype=np.int64)}


def _close(got, want, what):
    scale = max(1.0, float(np.abs(want).max()))
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * scale, err_msg=what)


@pytest.fixture(scope="module", params=MODELS)
def model_case(request, model_files):
    name = request.param
    path = model_files.path(name)
    feeds = _inputs(name, model_files.bert_config())
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    ref_sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    return name, path, feeds, [o.name for o in ref_sess.get_outputs()], ref_sess.run(None, feeds)


@pytest.mark.parametrize("level", LEVELS)
def test_levels_agree_and_match_onnxruntime(onyx, model_case, level):
    name, path, feeds, out_names, ref = model_case
    base_opts = onyx.SessionOptions()
    base_opts.graph_optimization_level = onyx.GraphOptimizationLevel.ORT_DISABLE_ALL
    base = onyx.InferenceSession(path, base_opts, providers=["CPUExecutionProvider"]).run(None, feeds)
    so = onyx.SessionOptions()
    so.graph_optimization_level = getattr(onyx.GraphOptimizationLevel, LEVEL_NAMES[level])
    sess = onyx.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    # Fusions must not rename graph outputs.
    assert [o.name for o in sess.get_outputs()] == out_names
    got = sess.run(None, feeds)
    assert len(got) == len(ref)
    for i, (g, b, r) in enumerate(zip(got, base, ref)):
        assert g.shape == r.shape and g.dtype == r.dtype
        _close(g, b, "%s level %d output %d vs level 0" % (name, level, i))
        _close(g, r, "%s level %d output %d vs onnxruntime" % (name, level, i))


def test_disabled_optimizers_from_config(onyx, model_files):
    """onnxruntime's config key turns single transformers off; results stay the same."""
    path = model_files.path("mobilenetv2")
    feeds = _inputs("mobilenetv2", None)
    so = onyx.SessionOptions()
    so.add_session_config_entry("optimization.disable_specified_optimizers",
                                "ConvBNFusion,ConvActivationFusion")
    got = onyx.InferenceSession(path, so, providers=["CPUExecutionProvider"]).run(None, feeds)
    plain = onyx.SessionOptions()
    plain.graph_optimization_level = onyx.GraphOptimizationLevel.ORT_DISABLE_ALL
    want = onyx.InferenceSession(path, plain, providers=["CPUExecutionProvider"]).run(None, feeds)
    _close(got[0], want[0], "mobilenetv2 with fusions disabled")

"""End-to-end model tests: onyxruntime against onnxruntime on the generated models.

ResNet-50, MobileNetV2 and a BERT-base-style encoder (tests/models/generate.py) run in
both runtimes on the same seeded inputs at batch 1 and 4. onnxruntime runs with graph
optimizations disabled so its numerics stay plain; onyxruntime runs with its defaults.
"""

import numpy as np
import onnxruntime as ort
import pytest

MODELS = ("resnet50", "mobilenetv2", "bert")
# Sequence length per BERT batch size (keeps the full-size model quick).
BERT_SEQ = {1: 128, 4: 64}

EXPECTED_INPUTS = {
    "resnet50": [("input", "tensor(float)", ["batch", 3, 224, 224])],
    "mobilenetv2": [("input", "tensor(float)", ["batch", 3, 224, 224])],
    "bert": [(n, "tensor(int64)", ["batch", "sequence"])
             for n in ("input_ids", "attention_mask", "token_type_ids")],
}
EXPECTED_OUTPUTS = {
    "resnet50": [("logits", "tensor(float)", ["batch", 1000])],
    "mobilenetv2": [("logits", "tensor(float)", ["batch", 1000])],
    "bert": [("last_hidden_state", "tensor(float)", ["batch", "sequence", 768]),
             ("pooler_output", "tensor(float)", ["batch", 768])],
}


class _Sessions:
    """One session per (runtime, model), created on first use and reused."""

    def __init__(self, onyx, files):
        self.onyx, self.files = onyx, files
        self._cache = {}

    def ort(self, name):
        key = ("ort", name)
        if key not in self._cache:
            so = ort.SessionOptions()
            so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
            self._cache[key] = ort.InferenceSession(self.files.path(name), so,
                                                    providers=["CPUExecutionProvider"])
        return self._cache[key]

    def ours(self, name):
        key = ("onyx", name)
        if key not in self._cache:
            self._cache[key] = self.onyx.InferenceSession(self.files.path(name),
                                                          providers=["CPUExecutionProvider"])
        return self._cache[key]


@pytest.fixture(scope="module")
def sessions(onyx, model_files):
    s = _Sessions(onyx, model_files)
    yield s
    s._cache.clear()


def make_inputs(name, batch, bert_cfg, seq=None):
    """Seeded inputs; the seed depends on model and shape only."""
    rng = np.random.default_rng([sum(map(ord, name)), batch, seq or 0])
    if name != "bert":
        return {"input": rng.standard_normal((batch, 3, 224, 224), dtype=np.float32)}
    seq = seq or BERT_SEQ[batch]
    ids = rng.integers(0, bert_cfg["vocab"], (batch, seq), dtype=np.int64)
    mask = np.ones((batch, seq), dtype=np.int64)
    if batch > 1:
        # Right padding of different lengths (row 0 stays full, no row fully masked).
        for i in range(1, batch):
            keep = max(1, seq - (i * seq) // batch)
            mask[i, keep:] = 0
            ids[i, keep:] = 0  # [PAD]
    types = np.zeros((batch, seq), dtype=np.int64)
    types[:, seq // 2:] = 1  # sentence A / sentence B
    types *= mask
    return {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}


def assert_outputs_match(names, ours, ref):
    assert len(ours) == len(ref), "got %d outputs, onnxruntime %d" % (len(ours), len(ref))
    for n, o, r in zip(names, ours, ref):
        assert isinstance(o, np.ndarray), "%s: got %s, not a numpy array" % (n, type(o))
        assert o.dtype == r.dtype, "%s: dtype %s != %s" % (n, o.dtype, r.dtype)
        assert o.shape == r.shape, "%s: shape %s != %s" % (n, o.shape, r.shape)
        assert np.isfinite(r).all(), "%s: reference has non-finite values" % n
        np.testing.assert_allclose(o, r, rtol=1e-4, atol=1e-4 * max(1.0, float(np.abs(r).max())),
                                   err_msg="output %r" % n)


def _io(args):
    return [(a.name, a.type, list(a.shape)) for a in args]


@pytest.mark.parametrize("name", MODELS)
def test_model_io_metadata(sessions, name):
    ref, ours = sessions.ort(name), sessions.ours(name)
    assert _io(ref.get_inputs()) == EXPECTED_INPUTS[name]
    assert _io(ref.get_outputs()) == EXPECTED_OUTPUTS[name]
    assert _io(ours.get_inputs()) == _io(ref.get_inputs())
    assert _io(ours.get_outputs()) == _io(ref.get_outputs())


@pytest.mark.parametrize("name", MODELS)
def test_model_metadata(sessions, name):
    ref, ours = sessions.ort(name).get_modelmeta(), sessions.ours(name).get_modelmeta()
    assert ref.producer_name == "onyx-tests"
    assert ref.custom_metadata_map["architecture"] == name
    for field in ("producer_name", "graph_name", "domain", "description", "version",
                  "custom_metadata_map"):
        assert getattr(ours, field) == getattr(ref, field), field


@pytest.mark.parametrize("batch", [1, 4])
@pytest.mark.parametrize("name", MODELS)
def test_model_outputs(sessions, model_files, name, batch):
    feeds = make_inputs(name, batch, model_files.bert_config())
    ref_sess, our_sess = sessions.ort(name), sessions.ours(name)
    names = [o.name for o in ref_sess.get_outputs()]
    ref = ref_sess.run(None, feeds)
    ours = our_sess.run(None, feeds)
    assert_outputs_match(names, ours, ref)
    # Guard the test itself: outputs must depend on the input, not be a constant.
    for n, r in zip(names, ref):
        assert float(np.std(r)) > 1e-3, "%s: reference output is degenerate" % n
    if batch > 1:
        spread = float(np.abs(ref[0] - ref[0][:1]).max())
        assert spread > 1e-2, "batch items give the same %s" % names[0]


def test_bert_odd_sequence_output_subset(sessions, model_files):
    """Sequence 7, batch 2, one output requested by name, then both in reverse order."""
    feeds = make_inputs("bert", 2, model_files.bert_config(), seq=7)
    ref_sess, our_sess = sessions.ort("bert"), sessions.ours("bert")
    ref = ref_sess.run(["pooler_output"], feeds)
    ours = our_sess.run(["pooler_output"], feeds)
    assert_outputs_match(["pooler_output"], ours, ref)
    order = ["pooler_output", "last_hidden_state"]
    assert_outputs_match(order, our_sess.run(order, feeds), ref_sess.run(order, feeds))

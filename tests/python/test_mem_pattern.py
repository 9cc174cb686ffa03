"""Memory patterns on the end-to-end models.

With SessionOptions.enable_mem_pattern (the default) the second run with the same input
shapes takes every intermediate from one planned block. Results must be exactly those of
the first run and of a session with the pattern off, and match onnxruntime.
"""

import numpy as np
import onnxruntime as ort
import pytest

from test_models import assert_outputs_match, make_inputs


def _session(rt, path, pattern):
    so = rt.SessionOptions()
    so.enable_mem_pattern = pattern
    return rt.InferenceSession(path, so, providers=["CPUExecutionProvider"])


def _reference(path, feeds):
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    return sess.run(None, feeds)


# (model, [(batch, sequence)] run in this order, each shape three times).
CASES = [
    ("mobilenetv2", [(1, None), (2, None), (1, None)]),
    ("resnet50", [(1, None)]),
    ("bert", [(1, 32), (2, 9), (1, 32)]),
]


@pytest.mark.parametrize("name,shapes", CASES, ids=[c[0] for c in CASES])
def test_repeated_runs_match_pattern_off_and_onnxruntime(onyx, model_files, name, shapes):
    path = model_files.path(name)
    on, off = _session(onyx, path, True), _session(onyx, path, False)
    assert on.get_session_options().enable_mem_pattern
    assert not off.get_session_options().enable_mem_pattern
    names = [o.name for o in on.get_outputs()]
    for batch, seq in shapes:
        feeds = make_inputs(name, batch, model_files.bert_config(), seq=seq)
        want = off.run(None, feeds)
        assert_outputs_match(names, want, _reference(path, feeds))
        for run in range(3):
            got = on.run(None, feeds)
            for n, g, w in zip(names, got, want):
                # Same kernels, same thread count, same alignment: bit-identical.
                assert np.array_equal(g, w), "%s b%d run %d: %s differs with the pattern on" % (
                    name, batch, run + 1, n)


def test_outputs_of_earlier_runs_stay_intact(onyx, model_files):
    """Outputs handed to the caller never live in the pattern block."""
    path = model_files.path("mobilenetv2")
    sess = _session(onyx, path, True)
    a = make_inputs("mobilenetv2", 1, None)
    b = {"input": (a["input"] * -0.5).astype(np.float32)}
    first = sess.run(None, a)[0]
    kept = first.copy()
    for _ in range(3):
        sess.run(None, b)
    assert np.array_equal(first, kept)
    assert not np.array_equal(first, sess.run(None, b)[0])

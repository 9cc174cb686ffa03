"""Config keys through the Python API (issue 12: no silent options): the
README's table lists exactly the engine's table (core/session/session_config.cc),
and a key onnxruntime does not know is refused by name where onnxruntime
ignores it."""

import os
import re

import numpy as np
import pytest
from onnx import helper

from conftest import REPO_ROOT, is_ort


def _table_keys():
    src = open(os.path.join(REPO_ROOT, "core", "session", "session_config.cc")).read()
    body = src[src.index("static const std::vector<ConfigKey> keys"):src.index("return keys;")]
    return set(re.findall(r'^\s*\{"([^"]+)", [SR], [HVX],', body, re.M))


def test_readme_lists_every_key_of_the_table():
    readme = open(os.path.join(REPO_ROOT, "README.md")).read()
    listed = set(re.findall(r"^\| `([^`]+)` \| (?:session|run) \|", readme, re.M))
    keys = _table_keys()
    assert len(keys) > 80
    assert listed == keys


def _model():
    graph = helper.make_graph([helper.make_node("Relu", ["X"], ["Y"])], "g",
                              [helper.make_tensor_value_info("X", 1, ["N"])],
                              [helper.make_tensor_value_info("Y", 1, ["N"])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8).SerializeToString()


@pytest.mark.parametrize("key,value", [("session.intra_op.allow_spining", "0"), ("my.own.key", "1")])
def test_unknown_session_key(rt, key, value):
    so = rt.SessionOptions()
    so.add_session_config_entry(key, value)
    if is_ort(rt):
        rt.InferenceSession(_model(), so, providers=["CPUExecutionProvider"])
        return
    with pytest.raises(Exception, match="INVALID_ARGUMENT : session config entry '%s' is not a key" % re.escape(key)):
        rt.InferenceSession(_model(), so, providers=["CPUExecutionProvider"])


@pytest.mark.parametrize("key,value,accepted", [
    ("session.intra_op.allow_spinning", "0", True), ("session.intra_op.allow_spinning", "2", False),
    ("session.disable_prepacking", "0", True), ("session.disable_prepacking", "1", False),
    ("session.x64quantprecision", "1", False), ("optimization.enable_gelu_approximation", "0", True),
])
def test_known_session_keys(rt, key, value, accepted):
    if is_ort(rt):
        pytest.skip("the engine's handling of keys onnxruntime accepts or ignores")
    onyx = rt
    so = onyx.SessionOptions()
    so.add_session_config_entry(key, value)
    if accepted:
        s = onyx.InferenceSession(_model(), so, providers=["CPUExecutionProvider"])
        x = np.array([-1.0, 2.0], np.float32)
        np.testing.assert_array_equal(s.run(None, {"X": x})[0], np.maximum(x, 0))
    else:
        with pytest.raises(Exception, match="'%s'.*'%s'" % (re.escape(key), value)):
            onyx.InferenceSession(_model(), so, providers=["CPUExecutionProvider"])

"""Shared checks for the graph transformer tests (tests/python/test_opt_*.py).

`check_fusion` builds a session at a level with optimized_model_filepath,
counts the operators of the saved graph, and checks the outputs against the
same model at ORT_DISABLE_ALL, against onnxruntime on the original model, and
against onnxruntime running the saved (optimized) model, within 1e-4 relative.
"""

import collections

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from conftest import SELF_CHECK
from onnx import TensorProto, helper, numpy_helper

F = TensorProto.FLOAT
RTOL = 1e-4

# The tests count Onyx's own fusions; onnxruntime (ONYX_TEST_SELF_CHECK=1) fuses its own way.
ONYX_ONLY = pytest.mark.skipif(SELF_CHECK, reason="counts the fusions of Onyx's optimizer")


def make_model(nodes, inputs, outputs, inits=(), opset=17, extra_opsets=()):
    """inputs/outputs: (name, elem_type, shape) triples; outputs may give shape None."""
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info(*i) for i in inputs],
                              [helper.make_tensor_value_info(*o) for o in outputs], list(inits))
    opsets = [helper.make_opsetid("", opset)] + [helper.make_opsetid(d, v) for d, v in extra_opsets]
    model = helper.make_model(graph, opset_imports=opsets)
    model.ir_version = 8  # what onnxruntime 1.31 reads
    return model


def const(name, value, dtype=np.float32):
    return numpy_helper.from_array(np.asarray(value, dtype=dtype), name)


def op_counts(model):
    return collections.Counter((n.domain + ":" if n.domain not in ("", "ai.onnx") else "") + n.op_type
                               for n in model.graph.node)


def optimized(onyx, model, tmp_path, level="ORT_ENABLE_EXTENDED", disabled=None):
    so = onyx.SessionOptions()
    so.graph_optimization_level = getattr(onyx.GraphOptimizationLevel, level)
    if disabled:
        so.add_session_config_entry("optimization.disable_specified_optimizers", disabled)
    path = str(tmp_path / ("opt_%s_%d.onnx" % (level, len(list(tmp_path.iterdir())))))
    so.optimized_model_filepath = path
    sess = onyx.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    return sess, onnx.load(path)


# onnxruntime's own default-domain operators (LayerNormalization before
# opset 17, SimplifiedLayerNormalization), which ONNX's checker does not know.
ORT_DEFAULT_DOMAIN_OPS = ("LayerNormalization", "SimplifiedLayerNormalization")


def _check_model(model):
    try:
        onnx.checker.check_model(model)
    except onnx.checker.ValidationError as e:
        if not any("No Op registered for %s " % op in str(e) for op in ORT_DEFAULT_DOMAIN_OPS):
            raise
        # Check the rest, with those nodes standing in as Identities.
        stripped = onnx.ModelProto()
        stripped.CopyFrom(model)
        for n in stripped.graph.node:
            if n.domain in ("", "ai.onnx") and n.op_type in ORT_DEFAULT_DOMAIN_OPS:
                n.CopyFrom(helper.make_node("Identity", [n.input[0]], [n.output[0]], name=n.name))
        onnx.checker.check_model(stripped)


def _ort(model_bytes, feeds):
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    return ort.InferenceSession(model_bytes, so, providers=["CPUExecutionProvider"]).run(None, feeds)


def assert_close(got, want, what):
    assert len(got) == len(want), what
    for i, (g, w) in enumerate(zip(got, want)):
        assert g.shape == w.shape and g.dtype == w.dtype, "%s output %d: %s %s vs %s %s" % (
            what, i, g.shape, g.dtype, w.shape, w.dtype)
        scale = max(1.0, float(np.abs(w).max())) if w.size and w.dtype.kind == "f" else 1.0
        np.testing.assert_allclose(g, w, rtol=RTOL, atol=RTOL * scale, err_msg="%s output %d" % (what, i))


def check_fusion(onyx, model, feeds, tmp_path, present=(), absent=(), level="ORT_ENABLE_EXTENDED", disabled=None):
    """Optimizes `model`, asserts each op in `present` ({op: count} or names,
    "com.microsoft:Op" for contrib ops) appears (that often) and none of
    `absent` does, checks the values; returns the saved optimized model."""
    sess, saved = optimized(onyx, model, tmp_path, level, disabled)
    counts = op_counts(saved)
    items = present.items() if isinstance(present, dict) else ((p, None) for p in present)
    for op, n in items:
        if n is None:
            assert counts[op] > 0, "%s missing after optimization: %s" % (op, dict(counts))
        else:
            assert counts[op] == n, "%s: %d, want %d: %s" % (op, counts[op], n, dict(counts))
    for op in absent:
        assert counts[op] == 0, "%s left after optimization: %s" % (op, dict(counts))
    _check_model(saved)
    got = sess.run(None, feeds)
    base_so = onyx.SessionOptions()
    base_so.graph_optimization_level = onyx.GraphOptimizationLevel.ORT_DISABLE_ALL
    base = onyx.InferenceSession(model.SerializeToString(), base_so, providers=["CPUExecutionProvider"])
    assert_close(got, base.run(None, feeds), "optimized vs ORT_DISABLE_ALL")
    assert_close(got, _ort(model.SerializeToString(), feeds), "optimized vs onnxruntime")
    # The saved model is onnxruntime's to run as well.
    assert_close(_ort(saved.SerializeToString(), feeds), got, "saved model run by onnxruntime")
    return saved


def check_not_fused(onyx, model, feeds, tmp_path, fused_ops, kept):
    """None of `fused_ops` appears, every op of `kept` ({op: count}) is still
    there that often, and the values are unchanged."""
    return check_fusion(onyx, model, feeds, tmp_path, present=kept, absent=fused_ops)

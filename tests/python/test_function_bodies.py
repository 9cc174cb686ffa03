"""Every operator of ONNX's default domain that ONNX defines as a function runs
as its function body, with no kernel of ours, and passes onnx's node tests.

The session config entry "session.expand_function_ops" = "1" makes the
session inline every node whose schema has a function body (plain or
context-dependent), even where the CPU provider has a hand-written kernel; so
the body stays the oracle for any kernel written later for speed. The node
tests come from onnx's own test-case generators (the data the backend suite
uses), each compared with the backend runner's tolerances.

Bernoulli's node tests compare random draws with one numpy draw (the spec says
implementations may differ even when seeded), and ONNX's body for it,
Cast(Greater(RandomUniformLike(p), p)), gives 1 with probability 1 - p where
the spec (and onnx's reference, numpy's binomial) say p. Our Bernoulli kernel
follows the spec; it is checked statistically here, and the body's inversion
is pinned so a fixed onnx shows up.
"""

import warnings

import numpy as np
import onnx
import onnx.defs
import onnx.numpy_helper
import pytest

import onyxruntime as rt
from onnx.backend.test.runner import Runner
from conftest import SELF_CHECK

pytestmark = pytest.mark.skipif(SELF_CHECK, reason="an onyxruntime session option; onnxruntime has no such switch")


def _function_ops():
    names = {s.name for s in onnx.defs.get_all_schemas_with_history() if s.domain == "" and not s.deprecated}
    out = []
    for name in sorted(names):
        s = onnx.defs.get_schema(name)
        if not s.deprecated and (s.has_function or s.has_context_dependent_function):
            out.append(name)
    return out


FUNCTION_OPS = _function_ops()
RANDOM_OPS = {"Bernoulli"}


def _node_cases():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # numpy warnings while onnx builds reference data
        from onnx.backend.test.case.node import collect_testcases

        cases = collect_testcases(None)
    picked = []
    for c in cases:
        ops = {n.op_type for n in c.model.graph.node if n.domain in ("", "ai.onnx")}
        hit = ops & set(FUNCTION_OPS)
        if hit and not (hit & RANDOM_OPS) and not c.name.endswith("_expanded"):
            picked.append(c)
    return picked


CASES = _node_cases()


def test_onnx_defines_48_function_operators():
    # onnx 1.23.2's count; a new onnx pin changes it on purpose.
    assert len(FUNCTION_OPS) == 48, FUNCTION_OPS


def test_every_function_operator_has_node_tests_here():
    covered = set()
    for c in CASES:
        covered |= {n.op_type for n in c.model.graph.node}
    missing = set(FUNCTION_OPS) - RANDOM_OPS - covered
    assert not missing, "function operators with no node test selected: %s" % sorted(missing)


def _session(model):
    so = rt.SessionOptions()
    so.add_session_config_entry("session.expand_function_ops", "1")
    return rt.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])


def _as_feed(v):
    # As onnx's backend runner takes them: TensorProto and numpy scalars become arrays.
    if isinstance(v, onnx.TensorProto):
        return onnx.numpy_helper.to_array(v)
    if isinstance(v, list):
        return [_as_feed(x) for x in v]
    return np.asarray(v)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_node_test_passes_as_the_function_body(case):
    model = case.model
    sess = _session(model)
    names = [i.name for i in sess.get_inputs()]
    # Bodies of ops with hand-written kernels must actually be inlined.
    for inputs, outputs in case.data_sets:
        feeds = {n: _as_feed(v) for n, v in zip(names, inputs)}
        got = sess.run(None, feeds)
        # The backend suite's own comparison (its bfloat16 tolerance included).
        Runner.assert_similar_outputs([_as_feed(w) for w in outputs], got, rtol=case.rtol, atol=case.atol,
                                      model_dir=case.name)


def test_bodies_replace_kernels_in_the_saved_graph(tmp_path):
    # Relu has a kernel; with the option its body (Max with 0) runs instead.
    g = onnx.helper.make_graph([onnx.helper.make_node("Relu", ["x"], ["y"], name="r")], "g",
                               [onnx.helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [4])],
                               [onnx.helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [4])])
    m = onnx.helper.make_model(g, opset_imports=[onnx.helper.make_opsetid("", 18)])
    so = rt.SessionOptions()
    so.add_session_config_entry("session.expand_function_ops", "1")
    so.graph_optimization_level = rt.GraphOptimizationLevel.ORT_DISABLE_ALL
    so.optimized_model_filepath = str(tmp_path / "out.onnx")
    sess = rt.InferenceSession(m.SerializeToString(), so)
    x = np.array([-1, 0, 2, -3], np.float32)
    np.testing.assert_array_equal(sess.run(None, {"x": x})[0], np.maximum(x, 0))
    ops = [n.op_type for n in onnx.load(str(tmp_path / "out.onnx")).graph.node]
    assert "Relu" not in ops and ops, ops


def _bernoulli_model(elem):
    g = onnx.helper.make_graph([onnx.helper.make_node("Bernoulli", ["p"], ["y"], seed=3.0)], "g",
                               [onnx.helper.make_tensor_value_info("p", elem, [4, 20000])],
                               [onnx.helper.make_tensor_value_info("y", elem, [4, 20000])])
    return onnx.helper.make_model(g, opset_imports=[onnx.helper.make_opsetid("", 22)])


PROBS = np.array([0.0, 0.1, 0.5, 0.9])


def _draw_means(sess, dtype):
    p = np.repeat(PROBS.astype(dtype)[:, None], 20000, axis=1)
    y = sess.run(None, {"p": p})[0]
    assert y.dtype == dtype and set(np.unique(y)) <= {0.0, 1.0}
    return y.mean(axis=1)


# 20000 draws: a mean lies within 5 standard deviations of its probability.
_TOL = 5 * np.sqrt(PROBS * (1 - PROBS) / 20000) + 1e-12


@pytest.mark.parametrize("dtype,elem", [(np.float32, onnx.TensorProto.FLOAT), (np.float64, onnx.TensorProto.DOUBLE)])
def test_bernoulli_kernel_draws_ones_with_probability_p(dtype, elem):
    m = _bernoulli_model(elem)
    sess = rt.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    np.testing.assert_array_less(np.abs(_draw_means(sess, dtype) - PROBS), _TOL)
    # The seed attribute makes a new session's first draw reproducible.
    p = np.full((4, 20000), 0.5, dtype)
    first = [rt.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"p": p})[0]
             for _ in range(2)]
    np.testing.assert_array_equal(first[0], first[1])


def test_onnx_bernoulli_body_draws_ones_with_probability_one_minus_p():
    means = _draw_means(_session(_bernoulli_model(onnx.TensorProto.FLOAT)), np.float32)
    np.testing.assert_array_less(np.abs(means - (1 - PROBS)), _TOL)


def test_expand_function_ops_takes_only_0_or_1():
    g = onnx.helper.make_graph([onnx.helper.make_node("Relu", ["x"], ["y"])], "g",
                               [onnx.helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [2])],
                               [onnx.helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [2])])
    m = onnx.helper.make_model(g, opset_imports=[onnx.helper.make_opsetid("", 18)])
    so = rt.SessionOptions()
    so.add_session_config_entry("session.expand_function_ops", "yes")
    with pytest.raises(Exception, match="session.expand_function_ops.*'yes'"):
        rt.InferenceSession(m.SerializeToString(), so)
    so = rt.SessionOptions()
    so.add_session_config_entry("session.expand_function_ops", "0")
    x = np.array([-1, 2], np.float32)
    np.testing.assert_array_equal(rt.InferenceSession(m.SerializeToString(), so).run(None, {"x": x})[0], [0, 2])

"""onyxruntime.backend (the ONNX backend API) against onnxruntime.backend.

Runs on both modules; the extensions onyxruntime has (dict inputs, run_node)
are tested on onyxruntime alone, with the reason at each place.
"""

import importlib

import numpy as np
import pytest
from onnx import TensorProto, helper

X = np.arange(6, dtype=np.float32).reshape(2, 3)


@pytest.fixture(params=["onnxruntime", "onyxruntime"])
def rt(request):
    return importlib.import_module(request.param)


@pytest.fixture
def backend(rt):
    return importlib.import_module(rt.__name__ + ".backend")


def _is_ort(rt):
    return rt.__name__ == "onnxruntime"


def _model(n_inputs=2):
    names = ["A", "B"][:n_inputs]
    node = helper.make_node("Add", [names[0], names[-1]], ["Y"])
    graph = helper.make_graph([node], "add", [helper.make_tensor_value_info(n, TensorProto.FLOAT, [2, 3]) for n in names],
                              [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [2, 3])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def test_devices(backend):
    assert backend.supports_device("CPU")
    assert not backend.supports_device("CUDA")
    assert backend.is_compatible(_model())
    assert backend.is_compatible(_model(), "CPU")
    assert not backend.is_compatible(_model(), "CUDA")
    with pytest.raises(RuntimeError):
        backend.prepare(_model(), "CUDA")


def test_prepare_from_proto_bytes_and_path(backend, tmp_path):
    path = tmp_path / "m.onnx"
    path.write_bytes(_model().SerializeToString())
    for model in (_model(), _model().SerializeToString(), str(path)):
        out = backend.prepare(model).run([X, X])
        assert isinstance(out, list)
        np.testing.assert_array_equal(out[0], X + X)


def test_run_and_single_array_input(backend):
    np.testing.assert_array_equal(backend.run(_model(), [X, X])[0], X + X)
    np.testing.assert_array_equal(backend.prepare(_model(1)).run(X)[0], X + X)
    with pytest.raises(RuntimeError):
        backend.prepare(_model(2)).run(X)  # one array for a two-input model


def test_prepare_kwargs_set_session_options(rt, backend):
    rep = backend.prepare(_model(), graph_optimization_level=rt.GraphOptimizationLevel.ORT_DISABLE_ALL,
                          intra_op_num_threads=1)
    opts = rep._session.get_session_options()
    assert opts.graph_optimization_level == rt.GraphOptimizationLevel.ORT_DISABLE_ALL
    assert opts.intra_op_num_threads == 1
    # Unknown keys are ignored: run_model passes one kwargs dict to both
    # prepare() and BackendRep.run().
    backend.prepare(_model(), no_such_option=1)
    with pytest.raises(RuntimeError, match="not permitted"):
        backend.prepare(_model(), enable_profiling=True)  # would write files


def test_run_kwargs_set_run_options(backend):
    np.testing.assert_array_equal(backend.run(_model(), [X, X], logid="r")[0], X + X)
    with pytest.raises(RuntimeError, match="not permitted"):
        backend.run(_model(), [X, X], terminate=True)


def test_dict_inputs_and_run_node(rt, backend):
    if _is_ort(rt):
        # onnxruntime's BackendRep.run takes only a list or one array, and its
        # run_node raises NotImplementedError; onyxruntime supports both, as
        # onnx.backend.base describes them.
        pytest.skip("not offered by onnxruntime")
    rep = backend.prepare(_model())
    np.testing.assert_array_equal(rep.run({"A": X, "B": X})[0], X + X)
    with pytest.raises(ValueError):
        rep.run([X])
    node = helper.make_node("Relu", ["x"], ["y"])
    (y,) = backend.run_node(node, [X - 2])
    np.testing.assert_array_equal(y, np.maximum(X - 2, 0))
    (y,) = backend.run_node(node, {"x": X - 2}, outputs_info=[(np.float32, (2, 3))], opset_version=14)
    np.testing.assert_array_equal(y, np.maximum(X - 2, 0))

"""The code blocks of the seed documents (../shared/seeds/000 and 003) that run
on CPU, run with only the import changed.

Each test receives the runtime module under the name the seed uses
(`onnxruntime`, `rt`) and runs the block's lines as written, on onnxruntime
and on onyxruntime. Blocks that need a GPU or torch are run up to the point
where a CPU-only build must refuse them, and check that it does so clearly.
Seed 003's scikit-learn tutorial uses scikit-learn and skl2onnx, test
dependencies in scripts/requirements.txt.
"""

import importlib
import importlib.util
import os

import numpy as np
import pytest
from onnx import TensorProto, helper, save_model


@pytest.fixture(params=["onnxruntime", "onyxruntime"])
def onnxruntime(request):
    return importlib.import_module(request.param)


def _write_model(path, in_name, out_name, shape=(3, 2)):
    graph = helper.make_graph(
        [helper.make_node("Mul", [in_name, in_name], [out_name])], "seed",
        [helper.make_tensor_value_info(in_name, TensorProto.FLOAT, list(shape))],
        [helper.make_tensor_value_info(out_name, TensorProto.FLOAT, list(shape))])
    save_model(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8), path)


X = np.arange(6, dtype=np.float32).reshape(3, 2)


@pytest.fixture
def in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path


# ---- seed 000: the backend example --------------------------------------------


def test_seed000_backend_example(onnxruntime, capsys):
    backend = importlib.import_module(onnxruntime.__name__ + ".backend")
    from onnx import load

    # -- block: lines 25-42, with `from onnxruntime import ...` as attribute access
    datasets = importlib.import_module(onnxruntime.__name__ + ".datasets")
    get_device = onnxruntime.get_device
    InvalidArgument = importlib.import_module(
        onnxruntime.__name__ + ".capi.onnxruntime_pybind11_state").InvalidArgument

    device = get_device()

    name = datasets.get_example("logreg_iris.onnx")
    model = load(name)

    rep = backend.prepare(model, device)
    x = np.array([[-1.0, -2.0]], dtype=np.float32)
    try:
        label, proba = rep.run(x)
        print("label={}".format(label))
        print("probabilities={}".format(proba))
    except (RuntimeError, InvalidArgument) as e:
        print(e)

    # -- block: lines 45-55
    rep = backend.prepare(name, device)
    x = np.array([[-1.0, -2.0]], dtype=np.float32)
    try:
        label, proba = rep.run(x)
        print("label={}".format(label))
        print("probabilities={}".format(proba))
    except (RuntimeError, InvalidArgument) as e:
        print(e)

    out = capsys.readouterr().out
    expected = ("INVALID_ARGUMENT : Got invalid dimensions for input: float_input for the following indices\n"
                " index: 0 Got: 1 Expected: 3\n Please fix either the inputs")
    assert out.count(expected) == 2, out


def test_seed000_example_model_runs_on_valid_input(onnxruntime):
    """The example model the seed loads is a working logistic regression."""
    backend = importlib.import_module(onnxruntime.__name__ + ".backend")
    datasets = importlib.import_module(onnxruntime.__name__ + ".datasets")
    rep = backend.prepare(datasets.get_example("logreg_iris.onnx"), onnxruntime.get_device())
    x = np.array([[5.1, 3.5], [6.2, 2.9], [7.7, 3.0]], dtype=np.float32)
    label, proba = rep.run(x)
    assert label.shape == (3,)
    assert len(proba) == 3 and all(abs(sum(p.values()) - 1.0) < 1e-5 for p in proba)
    assert [max(p, key=p.get) for p in proba] == list(label)


# ---- seed 003: API overview -----------------------------------------------------


def test_seed003_sklearn_tutorial(onnxruntime, in_tmp):
    rt = onnxruntime
    # -- block "Step 1: Train a model using your favorite framework"
    from sklearn.datasets import load_iris
    from sklearn.model_selection import train_test_split
    iris = load_iris()
    X, y = iris.data, iris.target
    X_train, X_test, y_train, y_test = train_test_split(X, y)

    from sklearn.linear_model import LogisticRegression
    clr = LogisticRegression()
    clr.fit(X_train, y_train)
    print(clr)
    # -- block "Step 2: Convert or export the model into ONNX format"
    from skl2onnx import convert_sklearn
    from skl2onnx.common.data_types import FloatTensorType

    initial_type = [('float_input', FloatTensorType([None, 4]))]
    onx = convert_sklearn(clr, initial_types=initial_type)
    with open("logreg_iris.onnx", "wb") as f:
        f.write(onx.SerializeToString())
    # -- block "Step 3: Load and run the model using ONNX Runtime" (import changed)
    import numpy

    sess = rt.InferenceSession(
        "logreg_iris.onnx", providers=rt.get_available_providers())
    input_name = sess.get_inputs()[0].name
    pred_onx = sess.run(None, {input_name: X_test.astype(numpy.float32)})[0]
    print(pred_onx)
    np.testing.assert_array_equal(pred_onx, clr.predict(X_test.astype(numpy.float32)))
    # -- block "one specific output by its name" (import changed)
    sess = rt.InferenceSession(
        "logreg_iris.onnx", providers=rt.get_available_providers())
    input_name = sess.get_inputs()[0].name
    label_name = sess.get_outputs()[0].name
    pred_onx = sess.run(
        [label_name], {input_name: X_test.astype(numpy.float32)})[0]
    print(pred_onx)
    np.testing.assert_array_equal(pred_onx, clr.predict(X_test.astype(numpy.float32)))
    # The probabilities come as a list of {class: probability} dicts (ZipMap).
    proba = sess.run(None, {input_name: X_test.astype(numpy.float32)})[1]
    np.testing.assert_allclose([[p[k] for k in range(3)] for p in proba],
                               clr.predict_proba(X_test.astype(numpy.float32)), rtol=1e-4, atol=1e-5)


def test_seed003_load_and_run(onnxruntime, in_tmp):
    _write_model("model.onnx", "X", "Y")
    inputs = {"X": X}
    # -- block "Load and run a model"
    session = onnxruntime.InferenceSession('model.onnx')

    outputs = session.run(["Y"], inputs)
    np.testing.assert_array_equal(outputs[0], X * X)


def test_seed003_providers_and_profiling(onnxruntime, in_tmp):
    _write_model("model.onnx", "X", "Y")
    model = "model.onnx"
    # -- block: providers (CUDA first; falls back to CPU on this machine)
    session = onnxruntime.InferenceSession(
            model, providers=['CUDAExecutionProvider', 'CPUExecutionProvider']
    )
    assert session.get_providers()[-1] == "CPUExecutionProvider"
    # -- block: profiling
    options = onnxruntime.SessionOptions()
    options.enable_profiling=True
    session = onnxruntime.InferenceSession(
            'model.onnx',
            sess_options=options,
            providers=['CUDAExecutionProvider', 'CPUExecutionProvider'])
    session.run(None, {"X": X})
    assert (in_tmp / session.end_profiling()).exists()


def test_seed003_ortvalue_on_cpu(onnxruntime, in_tmp):
    _write_model("model.onnx", "X", "Y")
    # -- block "Data on CPU"
    # X is numpy array on cpu
    ortvalue = onnxruntime.OrtValue.ortvalue_from_numpy(X)
    assert ortvalue.device_name() == 'cpu'
    assert ortvalue.shape() == [3, 2]
    assert ortvalue.data_type() == 'tensor(float)'
    assert ortvalue.is_tensor()
    assert np.array_equal(ortvalue.numpy(), X)

    # ortvalue can be provided as part of the input feed to a model
    session = onnxruntime.InferenceSession(
            'model.onnx',
            providers=['CUDAExecutionProvider', 'CPUExecutionProvider'])
    results = session.run(["Y"], {"X": ortvalue})
    np.testing.assert_array_equal(results[0], X * X)


def test_seed003_iobinding_cpu_input(onnxruntime, in_tmp):
    _write_model("model.onnx", "input", "output")
    # -- block "Data on device", first example
    session = onnxruntime.InferenceSession(
            'model.onnx',
            providers=['CUDAExecutionProvider', 'CPUExecutionProvider'])
    io_binding = session.io_binding()
    # OnnxRuntime will copy the data over to the CUDA device if 'input' is consumed by nodes on the CUDA device
    io_binding.bind_cpu_input('input', X)
    io_binding.bind_output('output')
    session.run_with_iobinding(io_binding)
    Y = io_binding.copy_outputs_to_cpu()[0]
    np.testing.assert_array_equal(Y, X * X)


@pytest.mark.parametrize("device", ["cuda", "cpu"])
def test_seed003_iobinding_device_blocks(onnxruntime, in_tmp, device):
    """The device examples, with 'cuda' (which a CPU-only build refuses with a
    clear error) and with 'cpu' substituted, which must then run."""
    _write_model("model.onnx", "input", "output")
    if device == "cuda":
        with pytest.raises(Exception, match="(?i)cuda|device"):
            onnxruntime.OrtValue.ortvalue_from_numpy(X, 'cuda', 0)
        return
    # -- block: input on the device, output allocated by the runtime
    X_ortvalue = onnxruntime.OrtValue.ortvalue_from_numpy(X, device, 0)
    session = onnxruntime.InferenceSession(
            'model.onnx',
            providers=['CUDAExecutionProvider', 'CPUExecutionProvider'])
    io_binding = session.io_binding()
    io_binding.bind_input(name='input', device_type=X_ortvalue.device_name(), device_id=0, element_type=np.float32, shape=X_ortvalue.shape(), buffer_ptr=X_ortvalue.data_ptr())  # noqa: E501
    io_binding.bind_output('output')
    session.run_with_iobinding(io_binding)
    Y = io_binding.copy_outputs_to_cpu()[0]
    np.testing.assert_array_equal(Y, X * X)

    # -- block: input and output both pre-allocated on the device
    Y_ortvalue = onnxruntime.OrtValue.ortvalue_from_shape_and_type([3, 2], np.float32, device, 0)
    io_binding = session.io_binding()
    io_binding.bind_input(
            name='input',
            device_type=X_ortvalue.device_name(),
            device_id=0,
            element_type=np.float32,
            shape=X_ortvalue.shape(),
            buffer_ptr=X_ortvalue.data_ptr()
    )
    io_binding.bind_output(
            name='output',
            device_type=Y_ortvalue.device_name(),
            device_id=0,
            element_type=np.float32,
            shape=Y_ortvalue.shape(),
            buffer_ptr=Y_ortvalue.data_ptr()
    )
    session.run_with_iobinding(io_binding)
    np.testing.assert_array_equal(Y_ortvalue.numpy(), X * X)

    # -- block: output allocated by the runtime on the device
    io_binding = session.io_binding()
    io_binding.bind_input(
            name='input',
            device_type=X_ortvalue.device_name(),
            device_id=0,
            element_type=np.float32,
            shape=X_ortvalue.shape(),
            buffer_ptr=X_ortvalue.data_ptr()
    )
    io_binding.bind_output('output', device)
    session.run_with_iobinding(io_binding)
    ort_output = io_binding.get_outputs()[0]
    np.testing.assert_array_equal(ort_output.numpy(), X * X)

    # -- block: bind OrtValues directly
    Y_ortvalue = onnxruntime.OrtValue.ortvalue_from_shape_and_type([3, 2], np.float32, device, 0)
    io_binding = session.io_binding()
    io_binding.bind_ortvalue_input('input', X_ortvalue)
    io_binding.bind_ortvalue_output('output', Y_ortvalue)
    session.run_with_iobinding(io_binding)
    np.testing.assert_array_equal(Y_ortvalue.numpy(), X * X)


def test_seed003_bfloat16_float8_binding_by_tensorproto(onnxruntime, in_tmp):
    """The torch block binds bfloat16/float8 buffers by TensorProto code on
    CUDA; torch is not a dependency here, so numpy buffers of the same sizes
    stand in, on CPU. The model is Cast(X: float8e5m2) -> bfloat16."""
    graph = helper.make_graph(
        [helper.make_node("Cast", ["X"], ["Y"], to=TensorProto.BFLOAT16)], "cast",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT8E5M2, [3])],
        [helper.make_tensor_value_info("Y", TensorProto.BFLOAT16, [3])])
    session = onnxruntime.InferenceSession(
        helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)], ir_version=9).SerializeToString())
    x = np.full(3, 0x3C, dtype=np.uint8)  # float8e5m2 1.0
    y = np.zeros(3, dtype=np.uint16)      # bfloat16 storage
    from onnx import TensorProto as TP
    # -- block (device_type 'cuda' -> 'cpu')
    binding = session.io_binding()
    binding.bind_input(
        name='X',
        device_type='cpu',
        device_id=0,
        element_type=TP.FLOAT8E5M2,
        shape=tuple(x.shape),
        buffer_ptr=x.ctypes.data,
        )
    binding.bind_output(
        name='Y',
        device_type='cpu',
        device_id=0,
        element_type=TP.BFLOAT16,
        shape=tuple(y.shape),
        buffer_ptr=y.ctypes.data,
        )
    session.run_with_iobinding(binding)
    assert list(y) == [0x3F80] * 3  # bfloat16 1.0


def test_example_model_is_reproducible():
    """The shipped logreg_iris.onnx is exactly what its generator makes."""
    spec = importlib.util.spec_from_file_location(
        "make_logreg_iris", os.path.join(os.path.dirname(__file__), os.pardir, "models", "make_logreg_iris.py"))
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    with open(gen.OUT, "rb") as f:
        assert f.read() == gen.build()

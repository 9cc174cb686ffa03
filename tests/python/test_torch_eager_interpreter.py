"""The eager ONNX-graph interpreter behind the CUDA benchmark's "torch-eager"
baseline (tests/cuda/torch_eager.py), checked with its numpy backend (no torch
needed) and, where torch with CUDA is installed (the GPU machine), its torch
backend on the GPU with TF32 off: the generated benchmark models against
onnxruntime and onyxruntime CPU, single ops' attribute semantics against
onnx.reference, and refusals."""

import importlib.util
import os

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

REPO_ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir, os.pardir))


def _load(name, rel):
    spec = importlib.util.spec_from_file_location(name, os.path.join(REPO_ROOT, *rel.split("/")))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


te = _load("onyx_torch_eager", "tests/cuda/torch_eager.py")
gen = _load("onyx_eager_test_generator", "tests/models/generate.py")

# (model, small, batch, seq, past): the three benchmark models (BERT and GPT-2
# in their 2-layer form, GPT-2 also with a KV cache), MobileNetV2 for grouped
# convs and Clip.
CASES = [("resnet50", False, 1, 0, 0), ("bert", True, 2, 16, 0), ("gpt2", True, 2, 8, 0),
         ("gpt2", True, 2, 8, 5), ("mobilenetv2", False, 2, 0, 0)]
_models = {}


def _torch_backend():
    try:
        import torch
    except ImportError:
        pytest.skip("torch is not installed")
    if not torch.cuda.is_available():
        pytest.skip("torch has no CUDA device")
    te.disable_tf32(torch)
    return te.TorchBackend("cuda")


@pytest.fixture(params=["numpy", "torch"])
def backend(request):
    return te.NumpyBackend() if request.param == "numpy" else _torch_backend()


def _model(name, small):
    if (name, small) not in _models:
        _models[name, small] = gen.build(name, small)
    return _models[name, small]


def _feeds(model, batch, seq, past):
    rng = np.random.default_rng(batch * 100 + seq + past)
    feeds = {}
    for i in model.graph.input:
        shape = []
        for k, d in enumerate(i.type.tensor_type.shape.dim):
            shape.append(d.dim_value if d.HasField("dim_value") else
                         batch if k == 0 else past if "past" in i.name else seq)
        if i.type.tensor_type.elem_type == TensorProto.INT64:
            if "mask" in i.name:
                m = np.ones(shape, np.int64)
                m[-1, -3:] = 0  # padding in the last sequence
                feeds[i.name] = m
            else:
                feeds[i.name] = rng.integers(0, 2 if "type" in i.name else 1000, shape, dtype=np.int64)
        else:
            feeds[i.name] = rng.standard_normal(shape).astype(np.float32)
    return feeds


def _rel(got, want):
    return float(np.max(np.abs(got.astype(np.float64) - want))) / max(1.0, float(np.max(np.abs(want))))


@pytest.mark.parametrize("case", CASES, ids=["%s-b%d-s%d-p%d" % (c[0], c[2], c[3], c[4]) for c in CASES])
def test_generated_models_match_runtime_cpu(case, rt, backend):
    name, small, batch, seq, past = case
    model = _model(name, small)
    feeds = _feeds(model, batch, seq, past)
    want = rt.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)
    got = te.OnnxEagerInterpreter(model, backend).run(feeds)
    assert len(got) == len(want)
    for g, w, o in zip(got, want, model.graph.output):
        assert g.shape == w.shape and g.dtype == w.dtype, o.name
        assert _rel(g, w) < 1e-4, "%s: %s max rel diff %.2e" % (name, o.name, _rel(g, w))


def _single(op, inputs, attrs=None, inits=(), n_out=1, opset=18):
    """A one-node model; inputs: name -> array (initializers from `inits` names)."""
    vis = [helper.make_tensor_value_info(k, helper.np_dtype_to_tensor_dtype(v.dtype), v.shape)
           for k, v in inputs.items() if k not in inits]
    init = [numpy_helper.from_array(v, k) for k, v in inputs.items() if k in inits]
    outs = ["y%d" % i for i in range(n_out)]
    node = helper.make_node(op, list(inputs), outs, **(attrs or {}))
    graph = helper.make_graph([node], "g", vis, [helper.make_value_info(o, helper.TypeProto()) for o in outs], init)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=8)


_BACKEND = [te.NumpyBackend()]  # the single-op tests' backend (set by their fixture)


@pytest.fixture(autouse=False)
def single_backend(backend):
    _BACKEND[0] = backend
    yield backend
    _BACKEND[0] = te.NumpyBackend()


def _check_single(op, inputs, attrs=None, inits=(), n_out=1, opset=18, oracle="reference"):
    model = _single(op, inputs, attrs, inits, n_out, opset)
    feeds = {k: v for k, v in inputs.items() if k not in inits}
    if oracle == "reference":
        want = ReferenceEvaluator(model).run(None, feeds)
    else:
        import onnxruntime
        want = onnxruntime.InferenceSession(model.SerializeToString(),
                                            providers=["CPUExecutionProvider"]).run(None, feeds)
    got = te.OnnxEagerInterpreter(model, _BACKEND[0]).run(feeds)
    for g, w in zip(got, want):
        w = np.asarray(w)
        assert g.shape == w.shape, (op, attrs, g.shape, w.shape)
        assert g.dtype == w.dtype, (op, attrs, g.dtype, w.dtype)
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5, err_msg="%s %s" % (op, attrs))


rng = np.random.default_rng(7)
X4 = rng.standard_normal((2, 4, 9, 8)).astype(np.float32)
I64 = lambda *v: np.array(v, np.int64)  # noqa: E731


@pytest.mark.parametrize("attrs,w_shape", [
    (dict(pads=[1, 0, 2, 1], strides=[2, 1]), (6, 4, 3, 3)),
    (dict(group=2, dilations=[2, 1], pads=[2, 1, 2, 1]), (6, 2, 3, 3)),
    (dict(group=4, strides=[2, 2], auto_pad="SAME_UPPER"), (4, 1, 3, 3)),
    (dict(auto_pad="SAME_LOWER", strides=[2, 3]), (3, 4, 2, 2)),
    (dict(auto_pad="VALID"), (5, 4, 1, 1)),
])
def test_conv_attributes(attrs, w_shape, single_backend):
    w = rng.standard_normal(w_shape).astype(np.float32)
    b = rng.standard_normal(w_shape[0]).astype(np.float32)
    _check_single("Conv", {"x": X4, "w": w, "b": b}, attrs, inits=("w", "b"))


def test_conv1d_without_bias(single_backend):
    _check_single("Conv", {"x": X4[:, :, 0], "w": rng.standard_normal((3, 4, 3)).astype(np.float32)},
                  dict(pads=[1, 2]), inits=("w",))


@pytest.mark.parametrize("op,attrs", [
    ("MaxPool", dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])),
    ("MaxPool", dict(kernel_shape=[3, 2], strides=[2, 2], ceil_mode=1)),
    ("MaxPool", dict(kernel_shape=[2, 2], dilations=[2, 2], pads=[0, 1, 1, 0])),
    ("AveragePool", dict(kernel_shape=[2, 2], strides=[2, 2], ceil_mode=1, count_include_pad=0)),
    ("AveragePool", dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1], count_include_pad=1)),
    ("AveragePool", dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1], count_include_pad=0)),
    ("GlobalAveragePool", {}),
])
def test_pooling_attributes(op, attrs, single_backend):
    _check_single(op, {"x": X4}, attrs, opset=17)


def test_shape_ops(single_backend):
    x = rng.standard_normal((2, 3, 4, 5)).astype(np.float32)
    _check_single("Reshape", {"x": x, "s": I64(0, -1, 5)}, inits=("s",))
    _check_single("Slice", {"x": x, "st": I64(-1, 1), "en": I64(-100, 1000), "ax": I64(-1, 1),
                            "sp": I64(-2, 1)}, inits=("st", "en", "ax", "sp"))
    _check_single("Slice", {"x": x, "st": I64(1, 0), "en": I64(3, 2)}, inits=("st", "en"))
    _check_single("Gather", {"x": x, "i": I64([-1, 0], [1, 2])}, dict(axis=2), inits=("i",))
    _check_single("Gather", {"x": x, "i": np.array(1, np.int64)}, dict(axis=1), inits=("i",))
    _check_single("Split", {"x": x, "s": I64(1, 4)}, dict(axis=-1), inits=("s",), n_out=2)
    _check_single("Split", {"x": x}, dict(axis=3, num_outputs=2), n_out=2)
    _check_single("Split", {"x": x}, dict(axis=1), n_out=3)
    _check_single("Transpose", {"x": x}, dict(perm=[3, 1, 0, 2]))
    _check_single("Transpose", {"x": x})
    _check_single("Unsqueeze", {"x": x, "a": I64(-1, 0)}, inits=("a",))
    _check_single("Squeeze", {"x": x[:, :1], "a": I64(1)}, inits=("a",))
    _check_single("Flatten", {"x": x}, dict(axis=-1))
    _check_single("Flatten", {"x": x}, dict(axis=0))
    _check_single("Expand", {"x": x[:, :1, :, :1], "s": I64(3, 1, 1, 4, 1)}, inits=("s",))
    _check_single("Concat", {"a": x, "b": x[:, :2]}, dict(axis=-3))
    _check_single("Shape", {"x": x}, dict(start=1, end=-1))
    _check_single("Range", {"a": np.array(5, np.int64), "b": np.array(-3, np.int64),
                            "c": np.array(-2, np.int64)}, inits=("a", "b", "c"))
    _check_single("ConstantOfShape", {"s": I64(3, 40)},
                  dict(value=numpy_helper.from_array(np.array([2.5], np.float32))), inits=("s",))


def test_math_ops(single_backend):
    a = rng.standard_normal((3, 4)).astype(np.float32)
    b = rng.standard_normal((4,)).astype(np.float32)
    _check_single("Gemm", {"a": a, "b": rng.standard_normal((5, 4)).astype(np.float32),
                           "c": rng.standard_normal((5,)).astype(np.float32)}, dict(transB=1))
    _check_single("Gemm", {"a": a.T.copy(), "b": rng.standard_normal((4, 5)).astype(np.float32),
                           "c": rng.standard_normal((3, 5)).astype(np.float32)},
                  dict(transA=1, alpha=0.5, beta=2.0))
    _check_single("Div", {"a": I64(7, -7, 7, -7), "b": I64(2, 2, -2, -2)})
    _check_single("Pow", {"a": a, "b": np.array(3, np.int64)}, opset=17)
    _check_single("Softmax", {"x": a}, dict(axis=0))
    # opset < 13 coerces to 2-D (onnx.reference applies the opset-13 rule; onnxruntime does not)
    _check_single("Softmax", {"x": X4}, dict(axis=1), opset=11, oracle="onnxruntime")
    _check_single("LayerNormalization", {"x": a, "g": b, "bb": b[::-1].copy()}, dict(epsilon=1e-3))
    _check_single("LayerNormalization", {"x": X4, "g": X4[0, :, :, :1].copy()}, dict(axis=1))
    _check_single("ReduceMean", {"x": X4, "ax": I64(1, -1)}, dict(keepdims=0), inits=("ax",))
    _check_single("ReduceMean", {"x": X4}, dict(axes=[2]), opset=17)
    _check_single("Erf", {"x": a})
    _check_single("Clip", {"x": a, "lo": np.array(-0.5, np.float32), "hi": np.array(0.5, np.float32)})
    _check_single("Where", {"c": a > 0, "x": a, "y": b})
    _check_single("Cast", {"x": a * 10}, dict(to=TensorProto.INT64))
    _check_single("BatchNormalization", {"x": X4, "s": b, "bi": b * 2, "m": b * 0.1, "v": np.abs(b) + 0.5},
                  dict(epsilon=1e-3))


def test_unknown_op_is_refused_by_name():
    model = _single("Einsum", {"a": np.ones((2, 2), np.float32)}, dict(equation="ij->ji"))
    model.graph.node[0].name = "my_einsum"
    with pytest.raises(te.UnsupportedOpError, match="my_einsum.*Einsum"):
        te.OnnxEagerInterpreter(model, te.NumpyBackend())


def test_bad_feed_names_the_node_or_input():
    model = _single("Reshape", {"x": np.ones((2, 6), np.float32), "s": I64(5, -1)}, inits=("s",))
    model.graph.node[0].name = "bad_reshape"
    interp = te.OnnxEagerInterpreter(model, te.NumpyBackend())
    with pytest.raises(RuntimeError, match="bad_reshape"):
        interp.run({"x": np.ones((2, 6), np.float32)})
    with pytest.raises(ValueError, match="'x'"):
        interp.run({})
    # still usable
    ok = _single("Reshape", {"x": np.ones((2, 6), np.float32), "s": I64(3, -1)}, inits=("s",))
    assert te.OnnxEagerInterpreter(ok, te.NumpyBackend()).run({"x": np.ones((2, 6), np.float32)})[0].shape == (3, 4)
    assert interp.run({"x": np.ones((5, 2), np.float32)})[0].shape == (5, 2)

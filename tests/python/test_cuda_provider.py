"""CUDAExecutionProvider: what holds on every machine (the provider library is
built beside the main one, the main library has no CUDA link, asking for CUDA
without a GPU warns naming why and runs on the CPU), and the GPU checks, which
skip cleanly where no CUDA device answers (tests/cuda/device_check.sh runs them
on a GPU machine).
"""

import os
import shutil
import subprocess
import warnings

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import onyxruntime as rt

PKG_DIR = os.path.dirname(rt.__file__)
PROVIDER_LIB = os.path.join(PKG_DIR, "libonyxruntime_providers_cuda.so")
MAIN_LIB = os.path.join(PKG_DIR, "libonyxruntime.so")
HAS_TOOLKIT = os.path.exists("/usr/local/cuda/bin/nvcc")
CUDA = "CUDAExecutionProvider" in rt.get_available_providers()
needs_gpu = pytest.mark.skipif(not CUDA, reason="no CUDA device answers here (CUDAExecutionProvider not available)")


def _dynamic(path):
    return subprocess.run(["readelf", "-d", "-W", path], check=True, capture_output=True, text=True).stdout


def _needed(path):
    return [line.split("[", 1)[1].rstrip("]") for line in _dynamic(path).splitlines() if "(NEEDED)" in line]


@pytest.mark.skipif(shutil.which("readelf") is None, reason="readelf not installed")
def test_main_library_has_no_cuda_link():
    needed = _needed(MAIN_LIB)
    cuda = [n for n in needed if any(k in n for k in ("cuda", "cublas", "cudnn", "nvrtc"))]
    assert not cuda, "libonyxruntime.so links CUDA libraries: %s" % cuda


@pytest.mark.skipif(not HAS_TOOLKIT, reason="no CUDA toolkit: the provider library is not built")
@pytest.mark.skipif(shutil.which("nm") is None, reason="nm not installed")
def test_provider_library_is_built_and_self_contained():
    assert os.path.exists(PROVIDER_LIB), "the CUDA toolkit is here but %s was not built" % PROVIDER_LIB
    needed = _needed(PROVIDER_LIB)
    # The CUDA runtime is static; cuBLAS is opened at run time by soname.
    assert not [n for n in needed if "onyxruntime" in n or "cublas" in n or "cudart" in n or "cudnn" in n], needed
    exported = subprocess.run(["nm", "-D", "--defined-only", PROVIDER_LIB], check=True, capture_output=True,
                              text=True).stdout.split()
    assert "OnyxCudaProviderGetApi" in exported
    assert not [s for s in exported if "onyx" in s and s != "OnyxCudaProviderGetApi"], "private symbols exported"
    # Nothing left for the main library to provide: no undefined onyx:: symbols.
    undefined = subprocess.run(["nm", "-D", "-C", "--undefined-only", PROVIDER_LIB], check=True,
                               capture_output=True, text=True).stdout
    assert "onyx::" not in undefined and "Onyx" not in undefined, undefined


def _model(opset=17):
    x = helper.make_tensor_value_info("X", TensorProto.FLOAT, [2, 4])
    y = helper.make_tensor_value_info("Y", TensorProto.FLOAT, [2, 3])
    w = helper.make_tensor("W", TensorProto.FLOAT, [4, 3], np.linspace(-1, 1, 12).astype(np.float32).ravel())
    nodes = [helper.make_node("MatMul", ["X", "W"], ["M"]), helper.make_node("Relu", ["M"], ["R"]),
             helper.make_node("Softmax", ["R"], ["Y"], axis=-1)]
    g = helper.make_graph(nodes, "cuda_smoke", [x], [y], [w])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)]).SerializeToString()


@pytest.mark.skipif(CUDA, reason="this machine has a CUDA device")
def test_without_gpu_cuda_is_not_listed_and_a_request_falls_back_with_the_reason():
    assert "CUDAExecutionProvider" not in rt.get_available_providers()
    assert "CUDAExecutionProvider" in rt.get_all_providers()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sess = rt.InferenceSession(_model(), providers=["CUDAExecutionProvider", "CPUExecutionProvider"])
    text = " ".join(str(w.message) for w in caught)
    assert "Specified provider 'CUDAExecutionProvider' is not in available provider names" in text
    # The library's reason follows: which file failed to load, or what CUDA said.
    assert "is not available: " in text
    assert ("no usable CUDA device" in text or "cannot load" in text or "no CUDA device" in text), text
    assert sess.get_providers() == ["CPUExecutionProvider"]
    x = np.ones((2, 4), np.float32)
    assert sess.run(None, {"X": x})[0].shape == (2, 3)


@pytest.mark.skipif(CUDA, reason="this machine has a CUDA device")
def test_without_gpu_cuda_values_are_refused_naming_why():
    for make in (lambda: rt.OrtValue.ortvalue_from_numpy(np.zeros(3, np.float32), "cuda", 0),
                 lambda: rt.OrtValue.ortvalue_from_shape_and_type([3], np.float32, "cuda", 0)):
        with pytest.raises(RuntimeError, match="'cuda': CUDA is not available here: execution provider "
                                               "'CUDAExecutionProvider' is not available: "):
            make()


@pytest.mark.skipif(CUDA, reason="this machine has a CUDA device")
def test_without_gpu_c_api_append_is_an_error_naming_why():
    from onyxruntime.capi import _providers
    why = _providers.unavailable_reason("CUDAExecutionProvider")
    assert why and "'CUDAExecutionProvider' is not available: " in why


def test_cpu_provider_options_stay_refused():
    with pytest.raises(Exception, match="provider option 'foo' of CPUExecutionProvider is not supported"):
        rt.InferenceSession(_model(), providers=[("CPUExecutionProvider", {"foo": "1"})])


# ---- GPU checks: run by tests/cuda/device_check.sh on the device machine ----

def _cuda_session(model, **options):
    return rt.InferenceSession(model, providers=[("CUDAExecutionProvider", options), "CPUExecutionProvider"])


@needs_gpu
def test_gpu_small_model_matches_cpu():
    x = np.random.default_rng(0).standard_normal((2, 4)).astype(np.float32)
    want = rt.InferenceSession(_model(), providers=["CPUExecutionProvider"]).run(None, {"X": x})[0]
    sess = _cuda_session(_model())
    assert sess.get_providers()[0] == "CUDAExecutionProvider"
    np.testing.assert_allclose(sess.run(None, {"X": x})[0], want, rtol=1e-3, atol=1e-3)


@needs_gpu
@pytest.mark.parametrize("key,value", [("device_id", "x"), ("gpu_mem_limit", "lots"), ("use_tf32", "maybe"),
                                       ("no_such_option", "1")])
def test_gpu_bad_provider_option_names_it(key, value):
    with pytest.raises(Exception, match="'%s'" % key):
        rt.InferenceSession(_model(), providers=[("CUDAExecutionProvider", {key: value})],
                            enable_fallback=0)


def _elementwise_cases():
    rng = np.random.default_rng(1)  # also the later cases' inputs
    a = rng.standard_normal((3, 1, 5)).astype(np.float32)
    b = rng.standard_normal((4, 5)).astype(np.float32) + 2
    for op in ("Add", "Sub", "Mul", "Div", "Max", "Min"):
        yield op, [a, b], {}
    for op in ("Relu", "Sigmoid", "Tanh", "Exp", "Abs", "Neg", "Erf"):
        yield op, [a], {}
    yield "Softmax", [a], {"axis": 1}
    yield "Transpose", [a], {"perm": [2, 0, 1]}
    yield "Gather", [b, np.array([[3, 0], [-1, 2]], np.int64)], {"axis": 0}
    yield "Concat", [a[:, :, :2], a[:, :, 2:]], {"axis": 2}
    yield "Where", [a > 0, a, np.float32(0) * a], {}
    yield "ReduceMean", [b], {"axes": [1], "keepdims": 0}
    yield "Pow", [np.abs(a) + 0.5, np.full((1, 5), 1.5, np.float32)], {}
    for op in ("Equal", "Less", "LessOrEqual", "Greater", "GreaterOrEqual"):
        yield op, [np.round(a), np.round(b)], {}
    yield "Cast", [a], {"to": TensorProto.FLOAT16}
    yield "Cast", [a * 10], {"to": TensorProto.INT64}
    yield "Expand", [a, np.array([2, 3, 4, 5], np.int64)], {}
    yield "Slice", [b, np.array([1, -1], np.int64), np.array([4, -6], np.int64), np.array([0, 1], np.int64),
                    np.array([2, -2], np.int64)], {}
    yield "MatMul", [rng.standard_normal((2, 3, 4, 8)).astype(np.float32),
                     rng.standard_normal((8, 5)).astype(np.float32)], {}
    yield "MatMul", [rng.standard_normal((3, 4, 8)).astype(np.float32),
                     rng.standard_normal((3, 8, 5)).astype(np.float32)], {}
    yield "Gemm", [rng.standard_normal((4, 8)).astype(np.float32), rng.standard_normal((5, 8)).astype(np.float32),
                   rng.standard_normal((5,)).astype(np.float32)], {"transB": 1, "alpha": 0.5, "beta": 2.0}
    yield "LayerNormalization", [b, np.linspace(0.5, 1.5, 5).astype(np.float32), np.ones(5, np.float32)], {}
    img = rng.standard_normal((2, 3, 9, 9)).astype(np.float32)
    yield "Conv", [img, rng.standard_normal((4, 3, 3, 3)).astype(np.float32),
                   rng.standard_normal(4).astype(np.float32)], {"pads": [1, 1, 1, 1], "strides": [2, 2]}
    yield "Conv", [img, rng.standard_normal((3, 1, 3, 3)).astype(np.float32)], {"group": 3}
    yield "MaxPool", [img], {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]}
    yield "AveragePool", [img], {"kernel_shape": [2, 2], "strides": [2, 2]}
    yield "GlobalAveragePool", [img], {}
    stats = [np.linspace(0.5, 1.5, 3).astype(np.float32), np.array([0.1, -0.2, 0.3], np.float32),
             np.array([0.0, 0.5, -0.5], np.float32), np.array([1.0, 2.0, 0.5], np.float32)]
    yield "BatchNormalization", [img] + stats, {}
    yield "Reshape", [img, np.array([2, -1], np.int64)], {}
    yield "Unsqueeze", [b, np.array([0, 3], np.int64)], {}


@needs_gpu
@pytest.mark.parametrize("op,inputs,attrs", list(_elementwise_cases()), ids=lambda v: v if isinstance(v, str) else "")
def test_gpu_kernel_matches_reference(op, inputs, attrs):
    from onnx.reference import ReferenceEvaluator
    m, feeds = _cases_model([(op, inputs, attrs)], 17)
    want = ReferenceEvaluator(m).run(None, feeds)[0]
    sess = _cuda_session(m.SerializeToString())
    assert sess.get_providers()[0] == "CUDAExecutionProvider"
    got = sess.run(None, feeds)[0]
    if want.dtype == np.bool_ or np.issubdtype(want.dtype, np.integer):
        np.testing.assert_array_equal(got, want)
    else:
        np.testing.assert_allclose(got.astype(np.float32), want.astype(np.float32), rtol=1e-3, atol=1e-4)


@needs_gpu
def test_gpu_assignments_put_supported_nodes_on_cuda():
    sess = _cuda_session(_model())
    ops = {}
    for sub in sess.get_provider_assignment() if hasattr(sess, "get_provider_assignment") else []:
        for node in sub.get_nodes():
            ops[node.op_type] = sub.ep_name
    if ops:
        assert ops.get("MatMul") == "CUDAExecutionProvider"


@needs_gpu
def test_gpu_iobinding_cpu_round_trip():
    x = np.random.default_rng(2).standard_normal((2, 4)).astype(np.float32)
    sess = _cuda_session(_model())
    want = sess.run(None, {"X": x})[0]
    binding = sess.io_binding()
    binding.bind_cpu_input("X", x)
    binding.bind_output("Y")
    sess.run_with_iobinding(binding)
    np.testing.assert_allclose(binding.copy_outputs_to_cpu()[0], want, rtol=1e-5, atol=1e-6)


@pytest.mark.skipif(CUDA, reason="this machine has a CUDA device")
def test_without_gpu_device_pointers_are_refused_naming_why():
    sess = rt.InferenceSession(_model(), providers=["CPUExecutionProvider"])
    binding = sess.io_binding()
    with pytest.raises(RuntimeError, match="'cuda': CUDA is not available here"):
        binding.bind_input("X", "cuda", 0, np.float32, [2, 4], 1 << 20)
    with pytest.raises(RuntimeError, match="'cuda': CUDA is not available here"):
        binding.bind_output("Y", "cuda", 0, np.float32, [2, 3], 1 << 20)


def _torch_cuda():
    try:
        import torch
    except ImportError:
        return None
    return torch if torch.cuda.is_available() else None


@needs_gpu
def test_gpu_iobinding_torch_device_buffers_in_and_out():
    torch = _torch_cuda()
    if torch is None:
        pytest.skip("torch with CUDA is not installed")
    x = torch.randn(2, 4, device="cuda", dtype=torch.float32)
    y = torch.empty(2, 3, device="cuda", dtype=torch.float32)
    sess = _cuda_session(_model())
    binding = sess.io_binding()
    binding.bind_input("X", "cuda", 0, np.float32, [2, 4], x.data_ptr())
    binding.bind_output("Y", "cuda", 0, np.float32, [2, 3], y.data_ptr())
    sess.run_with_iobinding(binding)
    want = rt.InferenceSession(_model(), providers=["CPUExecutionProvider"]).run(None, {"X": x.cpu().numpy()})[0]
    np.testing.assert_allclose(y.cpu().numpy(), want, rtol=1e-3, atol=1e-3)
    out = binding.get_outputs()[0]
    assert out.device_name() == "cuda"
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-3, atol=1e-3)  # a host copy, as onnxruntime
    # A device input with an output bound to the CPU: the session copies it out.
    binding.bind_output("Y", "cpu")
    sess.run_with_iobinding(binding)
    np.testing.assert_allclose(binding.copy_outputs_to_cpu()[0], want, rtol=1e-3, atol=1e-3)


@needs_gpu
def test_gpu_ortvalues_in_cuda_memory_round_trip_and_feed_a_session():
    x = np.random.default_rng(3).standard_normal((2, 4)).astype(np.float32)
    v = rt.OrtValue.ortvalue_from_numpy(x, "cuda", 0)
    assert v.device_name() == "cuda"
    np.testing.assert_array_equal(v.numpy(), x)
    empty = rt.OrtValue.ortvalue_from_shape_and_type([2, 3], np.float32, "cuda", 0)
    assert empty.device_name() == "cuda" and empty.shape() == [2, 3]
    sess = _cuda_session(_model())
    want = rt.InferenceSession(_model(), providers=["CPUExecutionProvider"]).run(None, {"X": x})[0]
    binding = sess.io_binding()
    binding.bind_ortvalue_input("X", v)
    binding.bind_ortvalue_output("Y", empty)
    sess.run_with_iobinding(binding)
    np.testing.assert_allclose(empty.numpy(), want, rtol=1e-3, atol=1e-3)
    got = sess.run_with_ort_values(["Y"], {"X": v})[0]
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-3, atol=1e-3)


def test_host_values_through_the_device_calls():
    """ValueCreateTensorOnDevice / ValueCopyTensorToHost (C API v7) with host
    memory work everywhere."""
    from onyxruntime.capi._ffi import api, check, ffi
    from onyxruntime.capi import _values
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    out = ffi.new("OnyxValue**")
    check(api.ValueCreateTensorOnDevice(_values._cpu_memory_info(), ffi.from_buffer(x), x.nbytes,
                                        _values._shape_array(x.shape), 2, 1, out))
    value = ffi.gc(out[0], api.ValueRelease)
    back = np.zeros_like(x)
    check(api.ValueCopyTensorToHost(value, ffi.from_buffer(back), back.nbytes))
    np.testing.assert_array_equal(back, x)


def _benchmark_model_and_feeds(name):
    import importlib.util
    gen_path = os.path.join(os.path.dirname(__file__), os.pardir, "models", "generate.py")
    spec = importlib.util.spec_from_file_location("gen", gen_path)
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    model = gen.build(name, small=name != "resnet50")
    cpu = rt.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(7)
    feeds = {}
    for i in cpu.get_inputs():
        shape = [d if isinstance(d, int) else (2 if k == 0 else (0 if "past" in i.name and k == 2 else 16))
                 for k, d in enumerate(i.shape)]
        if "int64" not in i.type:
            feeds[i.name] = rng.standard_normal(shape).astype(np.float32)
        elif "mask" in i.name:
            feeds[i.name] = np.ones(shape, np.int64)
        elif "token_type" in i.name:
            feeds[i.name] = np.zeros(shape, np.int64)
        else:
            feeds[i.name] = rng.integers(0, 1000, shape, dtype=np.int64)
    return model, cpu.run(None, feeds), feeds


def _assert_scaled_close(got, want, tol):
    for g, w in zip(got, want):
        scale = max(1.0, float(np.max(np.abs(w)))) if w.size else 1.0
        np.testing.assert_allclose(g.astype(np.float32), w, rtol=0, atol=tol * scale)


@needs_gpu
@pytest.mark.parametrize("name", ["resnet50", "bert", "gpt2"])
def test_gpu_benchmark_models_match_cpu(name):
    """The generated benchmark models (small BERT/GPT-2) on CUDA match the CPU
    provider to 1e-3 of each output's scale (fp32; TF32 off)."""
    model, want, feeds = _benchmark_model_and_feeds(name)
    _assert_scaled_close(_cuda_session(model.SerializeToString()).run(None, feeds), want, 1e-3)


@needs_gpu
@pytest.mark.parametrize("name", ["resnet50", "bert", "gpt2"])
def test_gpu_benchmark_models_float16_match_cpu_float32(name):
    """The same models converted to float16 (tests/cuda/fp16_model.py) on
    CUDA match the float32 CPU outputs to 1e-2 of each output's scale."""
    import sys
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), os.pardir, "cuda"))
    from fp16_model import to_float16
    model, want, feeds = _benchmark_model_and_feeds(name)
    half = {k: v.astype(np.float16) if v.dtype == np.float32 else v for k, v in feeds.items()}
    got = _cuda_session(to_float16(model).SerializeToString()).run(None, half)
    assert all(g.dtype == np.float16 for g in got)
    _assert_scaled_close(got, want, 1e-2)


# ---- fused transformer kernels (com.microsoft) on CUDA vs the CPU kernels ----

def _ms_model(op, order, inputs, outputs, attrs, inits=()):
    """One com.microsoft node reading `order` (names, "" for an omitted
    input): `inputs` name -> array fed, `inits` (name, array) constants."""
    vis = [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(v.dtype), v.shape)
           for n, v in inputs.items()]
    outs = [helper.make_tensor_value_info(n, TensorProto.UNDEFINED, None) for n in outputs if n]
    node = helper.make_node(op, order, outputs, domain="com.microsoft", **attrs)
    g = helper.make_graph([node], "k", vis, outs, [onnx.numpy_helper.from_array(v, n) for n, v in inits])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)])


def _fused_cases():
    rng = np.random.default_rng(11)
    f32 = np.float32
    B, S, D, N = 2, 7, 16, 4
    x = rng.standard_normal((B, S, D)).astype(f32)
    w = (rng.standard_normal((D, 3 * D)) * 0.3).astype(f32)
    bias = rng.standard_normal(3 * D).astype(f32)
    wb = [("w", w), ("b", bias)]
    raw = np.ones((B, S), np.int32)
    raw[1, 5:] = 0
    raw3 = (rng.random((B, S, S)) > 0.3).astype(np.int32)
    yield "Attention-raw2", "Attention", ["x", "w", "b", "mask"], {"x": x, "mask": raw}, ["y"], {"num_heads": N}, wb
    yield ("Attention-raw3", "Attention", ["x", "w", "b", "mask"], {"x": x, "mask": raw3}, ["y"], {"num_heads": N},
           wb)
    yield ("Attention-ends-causal", "Attention", ["x", "w", "b", "mask"], {"x": x, "mask": np.array([7, 4], np.int32)},
           ["y"], {"num_heads": N, "unidirectional": 1}, wb)
    yield ("Attention-ends-starts", "Attention", ["x", "w", "b", "mask"],
           {"x": x, "mask": np.array([6, 7, 1, 2], np.int32)}, ["y"], {"num_heads": N}, wb)
    yield ("Attention-nobias-scale", "Attention", ["x", "w"], {"x": x}, ["y"], {"num_heads": 2, "scale": 0.3},
           [("w", w)])
    yield ("Attention-qkv-sizes", "Attention", ["x", "w", "b"], {"x": x}, ["y"],
           {"num_heads": 2, "qkv_hidden_sizes": [8, 8, 12]},
           [("w", w[:, :28].copy()), ("b", bias[:28].copy())])
    skip = rng.standard_normal((B, S, D)).astype(f32)
    gamma, beta = rng.standard_normal(D).astype(f32), rng.standard_normal(D).astype(f32)
    yield ("SkipLayerNormalization", "SkipLayerNormalization", ["x", "skip", "gamma", "beta", "bias"],
           {"x": x, "skip": skip}, ["y", "mean", "inv", "sum"], {"epsilon": 1e-5},
           [("gamma", gamma), ("beta", beta), ("bias", bias[:D].copy())])
    yield ("SkipLayerNormalization-perseq", "SkipLayerNormalization", ["x", "skip", "gamma"],
           {"x": x, "skip": skip[0].copy()}, ["y"], {}, [("gamma", gamma)])
    yield ("SkipSimplifiedLayerNormalization", "SkipSimplifiedLayerNormalization", ["x", "skip", "gamma"],
           {"x": x, "skip": skip}, ["y"], {"epsilon": 1e-6}, [("gamma", gamma)])
    yield "BiasGelu", "BiasGelu", ["x", "b"], {"x": x}, ["y"], {}, [("b", bias[:D].copy())]
    yield "FastGelu", "FastGelu", ["x", "b"], {"x": x}, ["y"], {}, [("b", bias[:D].copy())]
    yield "FastGelu-nobias", "FastGelu", ["x"], {"x": x}, ["y"], {}, []
    a = rng.standard_normal((2, 3, 8, 5)).astype(f32)
    yield ("FusedMatMul-transA-transB", "FusedMatMul", ["a", "bm"], {"a": a}, ["y"],
           {"alpha": 0.25, "transA": 1, "transB": 1}, [("bm", rng.standard_normal((3, 6, 8)).astype(f32))])
    yield ("FusedMatMul-transB", "FusedMatMul", ["a", "bm"], {"a": a}, ["y"], {"alpha": 2.0, "transB": 1},
           [("bm", rng.standard_normal((6, 5)).astype(f32))])
    yield ("FusedGemm-Tanh", "FusedGemm", ["a", "bg", "cg"], {"a": rng.standard_normal((4, 8)).astype(f32)}, ["y"],
           {"activation": "Tanh", "transB": 1},
           [("bg", rng.standard_normal((5, 8)).astype(f32)), ("cg", rng.standard_normal(5).astype(f32))])


@needs_gpu
@pytest.mark.parametrize("case", list(_fused_cases()), ids=lambda c: c[0])
def test_gpu_fused_transformer_kernel_matches_cpu(case, tmp_path):
    _, op, order, inputs, outputs, attrs, inits = case
    model = _ms_model(op, order, inputs, outputs, attrs, inits)
    want = rt.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, inputs)
    got, _, placed = _run_profiled(model.SerializeToString(), inputs, tmp_path)
    assert placed.get(op) == {"CUDAExecutionProvider"}, placed
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-4)


@needs_gpu
def test_gpu_attention_float16_matches_float(tmp_path):
    rng = np.random.default_rng(12)
    x = rng.standard_normal((2, 9, 32)).astype(np.float32)
    w = (rng.standard_normal((32, 96)) * 0.2).astype(np.float32)
    b = rng.standard_normal(96).astype(np.float32)
    mask = np.array([9, 6], np.int32)
    order = ["x", "w", "b", "mask"]
    want = rt.InferenceSession(
        _ms_model("Attention", order, {"x": x, "mask": mask}, ["y"], {"num_heads": 4},
                  [("w", w), ("b", b)]).SerializeToString(),
        providers=["CPUExecutionProvider"]).run(None, {"x": x, "mask": mask})[0]
    h = {"x": x.astype(np.float16), "mask": mask}
    model = _ms_model("Attention", order, h, ["y"], {"num_heads": 4},
                      [("w", w.astype(np.float16)), ("b", b.astype(np.float16))])
    got, _, placed = _run_profiled(model.SerializeToString(), h, tmp_path)
    assert placed.get("Attention") == {"CUDAExecutionProvider"}, placed
    assert got[0].dtype == np.float16
    np.testing.assert_allclose(got[0].astype(np.float32), want, rtol=1e-2, atol=1e-2)


@needs_gpu
def test_gpu_attention_bad_mask_names_it_and_session_stays_usable():
    rng = np.random.default_rng(13)
    x = rng.standard_normal((2, 5, 8)).astype(np.float32)
    model = _ms_model("Attention", ["x", "w", "", "mask"], {"x": x, "mask": np.ones((3, 5), np.int32)}, ["y"],
                      {"num_heads": 2}, [("w", rng.standard_normal((8, 24)).astype(np.float32))])
    model.graph.input[1].type.tensor_type.ClearField("shape")  # any mask shape gets to the kernel
    sess = _cuda_session(model.SerializeToString())
    with pytest.raises(Exception, match="mask_index"):
        sess.run(None, {"x": x, "mask": np.ones((3, 5), np.int32)})
    assert sess.run(None, {"x": x, "mask": np.ones((2, 5), np.int32)})[0].shape == (2, 5, 8)


@needs_gpu
def test_gpu_attention_with_past_runs_on_the_cpu_kernel(tmp_path):
    rng = np.random.default_rng(14)
    x = rng.standard_normal((1, 3, 8)).astype(np.float32)
    past = rng.standard_normal((2, 1, 2, 4, 4)).astype(np.float32)
    feeds = {"x": x, "past": past}
    model = _ms_model("Attention", ["x", "w", "b", "", "past"], feeds, ["y", "present"],
                      {"num_heads": 2, "unidirectional": 1},
                      [("w", rng.standard_normal((8, 24)).astype(np.float32)),
                       ("b", rng.standard_normal(24).astype(np.float32))])
    want = rt.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)
    got, _, placed = _run_profiled(model.SerializeToString(), feeds, tmp_path)
    assert placed.get("Attention") == {"CPUExecutionProvider"}, placed
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)


# ---- What the first CUDA conformance run failed (ONYX_CONFORMANCE_DEVICE=CUDA):
# each case must run on CUDA (the profile names the provider of every node)
# and match onnx.reference. The cases of a test share one model (one node
# each), so that a few sessions cover them.

def _cases_model(cases, opset):
    """One node per case (op, inputs, attrs): node n<k> reads k<k>_<i>, writes
    out<k>. Returns the model and its feeds."""
    nodes, vis, outs, feeds = [], [], [], {}
    for k, (op, inputs, attrs) in enumerate(cases):
        names = ["k%d_%d" % (k, i) for i in range(len(inputs))]
        for n, v in zip(names, inputs):
            vis.append(helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(v.dtype), v.shape))
            feeds[n] = v
        nodes.append(helper.make_node(op, names, ["out%d" % k], name="n%d" % k, **attrs))
        outs.append(helper.make_tensor_value_info("out%d" % k, TensorProto.UNDEFINED, None))
    g = helper.make_graph(nodes, "cases", vis, outs)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)]), feeds


def _run_profiled(model, feeds, tmp_path):
    """Outputs of a CUDA session, and the providers that ran each node
    ({node name: set}) and each operator ({op_type: set})."""
    import json
    so = rt.SessionOptions()
    so.enable_profiling = True
    so.profile_file_prefix = str(tmp_path / "prof_")
    sess = rt.InferenceSession(model, sess_options=so, providers=["CUDAExecutionProvider", "CPUExecutionProvider"])
    outs = sess.run(None, feeds)
    with open(sess.end_profiling()) as f:
        events = json.load(f)
    by_node, by_op = {}, {}
    for e in events:
        if e.get("cat") == "Node" and e["name"].endswith("_kernel_time"):
            by_node.setdefault(e["name"][: -len("_kernel_time")], set()).add(e["args"]["provider"])
            by_op.setdefault(e["args"]["op_name"], set()).add(e["args"]["provider"])
    return outs, by_node, by_op


def _check_on_cuda(cases, tmp_path, opset=17, rtol=1e-3, atol=1e-4, on_cuda=None, wants=None, placed=True):
    """Each case (op, inputs, attrs) runs on CUDA and matches the reference
    (or wants[k] where given). Cases that expand into a function body name
    the operators that must run on CUDA instead (`on_cuda`)."""
    from onnx.reference import ReferenceEvaluator
    m, feeds = _cases_model(cases, opset)
    got, by_node, by_op = _run_profiled(m.SerializeToString(), feeds, tmp_path)
    if on_cuda:
        # (A fusion the optimizer finds later may replace some of them.)
        assert any(op in by_op for op in on_cuda), "none of %s ran: %s" % (on_cuda, by_op)
        for op in on_cuda:
            assert by_op.get(op, {"CUDAExecutionProvider"}) == {"CUDAExecutionProvider"}, (op, by_op.get(op))
    for k, (op, inputs, attrs) in enumerate(cases):
        what = "case %d: %s %s %s" % (k, op, [(x.dtype.name, x.shape) for x in inputs], attrs)
        if on_cuda is None and placed:
            assert by_node.get("n%d" % k) == {"CUDAExecutionProvider"}, "%s ran on %s" % (what, by_node.get("n%d" % k))
        want = wants[k] if wants else None
        if want is None:  # each case alone (the reference runs every node of a model)
            one, one_feeds = _cases_model([(op, inputs, attrs)], opset)
            want = ReferenceEvaluator(one).run(None, one_feeds)[0]
        assert got[k].dtype == want.dtype and got[k].shape == want.shape, (what, got[k].shape, want.shape)
        if np.issubdtype(want.dtype, np.integer):
            np.testing.assert_array_equal(got[k], want, err_msg=what)
        else:
            np.testing.assert_allclose(got[k].astype(np.float32), want.astype(np.float32), rtol=rtol, atol=atol,
                                       err_msg=what)


def _rand(shape, dtype=np.float32, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


# Conv with a bias at every rank (3-D convolutions failed in cudnnAddTensor).
_CONV_CASES = [
    ((2, 3, 10), (4, 3, 3), {"pads": [1, 1], "strides": [2]}),
    ((2, 3, 9, 8), (4, 3, 3, 2), {"dilations": [2, 1], "pads": [1, 0, 1, 0]}),
    ((2, 3, 3, 4, 5), (4, 3, 2, 3, 4), {}),
    ((2, 3, 5, 5, 5), (4, 3, 2, 2, 2), {"dilations": [2, 2, 2], "strides": [2, 2, 2]}),
    ((2, 3, 5, 5, 5), (4, 3, 2, 2, 2), {"pads": [1, 1, 1, 1, 1, 1], "strides": [2, 2, 2]}),
    ((2, 4, 4, 5, 4), (6, 2, 3, 3, 3), {"group": 2}),
]


@needs_gpu
@pytest.mark.parametrize("dtype", [np.float32, np.float16], ids=["f32", "f16"])
def test_gpu_conv_with_bias_every_rank(dtype, tmp_path):
    cases = [("Conv", [_rand(xs, dtype, 1), _rand(ws, dtype, 2), _rand(ws[:1], dtype, 3)], attrs)
             for xs, ws, attrs in _CONV_CASES]
    tol = 1e-3 if dtype == np.float32 else 2e-2
    _check_on_cuda(cases, tmp_path, rtol=tol, atol=tol)


# ReduceMean over axes that are not one contiguous run (MVN reduces [0,2,3]).
_REDUCE_CASES = [
    ((3, 3, 3, 1), [0, 2, 3], 1),
    ((2, 3, 4, 5), [0, 2], 0),
    ((2, 3, 4, 5), [1, 3], 1),
    ((2, 3, 4, 5), [-1, 0], 0),
    ((2, 3, 4, 5), [0, 2, 3], 0),
    ((2, 1, 4, 5), [0, 1, 2], 1),  # a size-1 axis between: one run
    ((8, 3, 64, 5), [0, 2, 3], 1),  # few outputs, long sums: a block per output
    ((4, 2, 3, 2, 5, 2), [0, 2, 4], 0),
]


@needs_gpu
@pytest.mark.parametrize("dtype", [np.float32, np.float16], ids=["f32", "f16"])
def test_gpu_reduce_mean_any_axes(dtype, tmp_path):
    xs = [_rand(shape, dtype, 4 + k) for k, (shape, _, _) in enumerate(_REDUCE_CASES)]
    tol = 1e-5 if dtype == np.float32 else 2e-3
    cases = [("ReduceMean", [x], {"axes": axes, "keepdims": kd}) for x, (_, axes, kd) in zip(xs, _REDUCE_CASES)]
    _check_on_cuda(cases, tmp_path, opset=17, rtol=tol, atol=tol)
    # Opset 18 takes the axes as an input (read on the host).
    cases = [("ReduceMean", [x, np.array(axes, np.int64)], {"keepdims": kd})
             for x, (_, axes, kd) in zip(xs, _REDUCE_CASES)]
    _check_on_cuda(cases, tmp_path, opset=18, rtol=tol, atol=tol)


@needs_gpu
def test_gpu_mean_variance_normalization_runs_its_reduce_means_on_cuda(tmp_path):
    cases = [("MeanVarianceNormalization", [_rand((3, 3, 3, 1), np.float32, 5)], {}),
             ("MeanVarianceNormalization", [_rand((2, 4, 3, 5), np.float32, 6)], {"axes": [0, 3]})]
    _check_on_cuda(cases, tmp_path, opset=13, rtol=1e-4, atol=1e-5, on_cuda=["ReduceMean"])


# MatMul broadcasting batch dimensions both ways (was: whole batches only).
_MATMUL_CASES = [
    ((3, 1, 3, 4), (1, 2, 4, 2)),
    ((2, 1, 4, 3, 5), (3, 1, 5, 2)),
    ((1, 3, 4), (2, 4, 6)),
    ((2, 1, 3, 4), (2, 5, 4, 6)),
    ((5, 2, 3, 4), (2, 4, 6)),
    ((2, 3, 4), (4, 6)),
    ((5, 3, 4), (4,)),
    ((4,), (2, 4, 3)),
    ((5, 1, 4), (3, 5, 4, 2)),
    ((3, 0, 4), (4, 2)),
    ((2, 3, 0), (2, 0, 5)),
]


@needs_gpu
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.float64], ids=["f32", "f16", "f64"])
def test_gpu_matmul_broadcasts_batches(dtype, tmp_path):
    cases = [("MatMul", [_rand(sa, dtype, 6 + k), _rand(sb, dtype, 20 + k)], {})
             for k, (sa, sb) in enumerate(_MATMUL_CASES)]
    tol = 1e-5 if dtype != np.float16 else 1e-2
    _check_on_cuda(cases, tmp_path, rtol=tol, atol=tol)


# Max, Min, Sum, Mean of 1..N inputs with multidirectional broadcasting.
_VARIADIC_SHAPES = [[(3,)], [(3, 1, 5), (4, 5)], [(3, 1, 1), (1, 4, 1), (5,)], [(2, 3), (2, 3), (3,), (1, 3)]]


def _mean(inputs):
    # onnx.reference's Mean adds in place into input 0, which cannot broadcast.
    total = inputs[0]
    for x in inputs[1:]:
        total = total + x
    return (total / total.dtype.type(len(inputs))).astype(inputs[0].dtype)


@needs_gpu
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int32], ids=["f32", "f16", "i32"])
def test_gpu_variadic_ops_any_input_count(dtype, tmp_path):
    ops = ["Max", "Min"] if dtype == np.int32 else ["Max", "Min", "Sum", "Mean"]  # Sum/Mean: float types only
    cases, wants = [], []
    for op in ops:
        for k, shapes in enumerate(_VARIADIC_SHAPES):
            inputs = [(_rand(s, np.float32, 10 * k + i) * 4).astype(dtype) for i, s in enumerate(shapes)]
            cases.append((op, inputs, {}))
            wants.append(_mean(inputs) if op == "Mean" else None)
    tol = 1e-6 if dtype == np.float32 else 2e-3
    # Integer arithmetic on host feeds stays on the CPU by design (shape
    # computations; DevicePlacement::DeviceMayRun): int32 checks values only.
    _check_on_cuda(cases, tmp_path, opset=13, rtol=tol, atol=tol, wants=wants, placed=dtype != np.int32)


@needs_gpu
def test_gpu_max_min_before_opset_12(tmp_path):
    inputs = [_rand((2, 3), np.float32, i) for i in range(3)]
    _check_on_cuda([("Max", inputs, {}), ("Min", inputs[:1], {}), ("Sum", inputs, {})], tmp_path, opset=8)


# Softmax of float16 rounds like ONNX's op-by-op reference: the CUDA kernel
# rounded only its output, which put attention_4d_causal_fp16 1 ulp off.
def _ulps(a, b):
    return np.abs(a.view(np.int16).astype(np.int32) - b.view(np.int16).astype(np.int32))


@needs_gpu
def test_gpu_softmax_fp16_rounds_like_the_reference(tmp_path):
    from onnx.reference import ReferenceEvaluator
    x = (_rand((64, 37), np.float32, 8) * 3).astype(np.float16)
    m, feeds = _cases_model([("Softmax", [x], {"axis": -1}), ("Softmax", [x], {"axis": 0})], 17)
    (last, first), by_node, _ = _run_profiled(m.SerializeToString(), feeds, tmp_path)
    assert by_node["n0"] == by_node["n1"] == {"CUDAExecutionProvider"}
    # Rounding only the output differs in most elements; a sum's order may
    # flip a rare one.
    want = ReferenceEvaluator(m).run(["out0"], feeds)[0]
    assert np.mean(last != want) < 0.05 and _ulps(last, want).max() <= 1
    # Along a non-last axis the reference's own fp16 sum is sequential:
    # compare with the CPU kernel, which rounds as in the row case.
    cpu = rt.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"]).run(["out1"], feeds)[0]
    assert np.mean(first != cpu) < 0.05 and _ulps(first, cpu).max() <= 1


@needs_gpu
def test_gpu_attention_causal_fp16_matches_reference(tmp_path):
    """ONNX Attention (opset 23, no kernel: its function body runs) with
    is_causal=1 in float16, as the backend test attention_4d_causal_fp16 but
    over 8 draws, to the backend suite's tolerance."""
    cases = []
    for seed in range(8):
        rng = np.random.default_rng(100 + seed)
        inputs = [rng.random(s).astype(np.float16) for s in ((2, 3, 4, 8), (2, 3, 6, 8), (2, 3, 6, 8))]
        cases.append(("Attention", inputs, {"is_causal": 1}))
    _check_on_cuda(cases, tmp_path, opset=23, rtol=1e-3, atol=1e-7, on_cuda=["MatMul", "Softmax"])


# MaxPool and AveragePool on the CUDA kernel of their own: every attribute
# (ceil_mode, dilations, asymmetric pads, SAME pads, count_include_pad), 1-D
# to 3-D; cuDNN's pooling had sent all but the plain ones to the CPU.
_POOL_CASES = [
    ("AveragePool", (2, 3, 28, 28), {"kernel_shape": [2, 2], "strides": [2, 2], "ceil_mode": 1}),
    ("AveragePool", (2, 3, 9, 9), {"kernel_shape": [3, 3], "strides": [2, 2], "ceil_mode": 1, "pads": [1, 1, 1, 1]}),
    ("AveragePool", (2, 3, 9, 9), {"kernel_shape": [3, 3], "strides": [2, 2], "ceil_mode": 1, "pads": [1, 1, 1, 1],
                                   "count_include_pad": 1}),
    ("AveragePool", (2, 3, 8, 7), {"kernel_shape": [3, 2], "pads": [0, 1, 2, 0], "count_include_pad": 1}),
    ("AveragePool", (2, 3, 8, 7), {"kernel_shape": [3, 3], "strides": [2, 1], "auto_pad": "SAME_UPPER"}),
    ("AveragePool", (1, 2, 12), {"kernel_shape": [4], "strides": [3], "pads": [2, 1]}),
    ("AveragePool", (1, 2, 5, 6, 7), {"kernel_shape": [2, 3, 2], "strides": [2, 2, 2], "ceil_mode": 1}),
    ("MaxPool", (2, 3, 9, 9), {"kernel_shape": [3, 3], "strides": [2, 2], "ceil_mode": 1}),
    ("MaxPool", (2, 3, 10, 9), {"kernel_shape": [2, 3], "dilations": [2, 2], "pads": [1, 0, 1, 2]}),
    ("MaxPool", (2, 3, 8, 7), {"kernel_shape": [3, 3], "strides": [2, 2], "auto_pad": "SAME_LOWER"}),
    ("MaxPool", (1, 2, 5, 6, 7), {"kernel_shape": [2, 2, 3], "pads": [1, 0, 1, 1, 1, 0]}),
    ("MaxPool", (1, 2, 12), {"kernel_shape": [3], "dilations": [3], "ceil_mode": 1, "strides": [2]}),
]


def _pool_case_model(op, x, attrs):
    et = helper.np_dtype_to_tensor_dtype(x.dtype)
    g = helper.make_graph([helper.make_node(op, ["x"], ["y"], **attrs)], "pool",
                          [helper.make_tensor_value_info("x", et, x.shape)], [helper.make_tensor_value_info("y", et, None)])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8).SerializeToString()


def _pool_case_on_cpu(op, x, attrs):
    return rt.InferenceSession(_pool_case_model(op, x, attrs), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]


def test_pool_cases_cpu_match_onnxruntime():
    """The CUDA pool test's expected values: our CPU kernel against onnxruntime
    on the same cases, in float32 (onnxruntime's CPU AveragePool has no double
    kernel), no GPU needed."""
    ort = pytest.importorskip("onnxruntime")
    for k, (op, shape, attrs) in enumerate(_POOL_CASES):
        x = _rand(shape, np.float32, k)
        want = ort.InferenceSession(_pool_case_model(op, x, attrs), providers=["CPUExecutionProvider"]).run(
            None, {"x": x})[0]
        got = _pool_case_on_cpu(op, x, attrs)
        assert got.shape == want.shape, (k, op, attrs, got.shape, want.shape)
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6, err_msg="case %d: %s %s" % (k, op, attrs))


@needs_gpu
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.float64], ids=["f32", "f16", "f64"])
def test_gpu_pools_every_attribute_run_on_cuda(dtype, tmp_path):
    cases = [(op, [_rand(shape, dtype, k)], attrs) for k, (op, shape, attrs) in enumerate(_POOL_CASES)]
    # Checked against the CPU provider, which test_pool_cases_cpu_match_onnxruntime
    # holds to onnxruntime: onnx's ReferenceEvaluator sizes SAME-padded pools
    # by floor ((2, 3, 4, 3) where the spec's ceil(7 / 2) gives 4 columns) and
    # raises IndexError on the 3-D MaxPool with pads.
    wants = [_pool_case_on_cpu(op, inputs[0], attrs) for op, inputs, attrs in cases]
    tol = 2e-3 if dtype == np.float16 else 1e-5
    _check_on_cuda(cases, tmp_path, rtol=tol, atol=tol, wants=wants)


@needs_gpu
@pytest.mark.parametrize("storage_order", [0, 1])
def test_gpu_maxpool_indices_match_cpu(storage_order):
    x = _rand((2, 3, 9, 8), np.float32, 4)
    node = helper.make_node("MaxPool", ["x"], ["y", "i"], kernel_shape=[3, 2], strides=[2, 2], pads=[1, 0, 1, 1],
                            storage_order=storage_order)
    g = helper.make_graph([node], "mp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None),
                           helper.make_tensor_value_info("i", TensorProto.INT64, None)])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 12)]).SerializeToString()
    want = rt.InferenceSession(m, providers=["CPUExecutionProvider"]).run(None, {"x": x})
    got = _cuda_session(m).run(None, {"x": x})
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(got[1], want[1])


@needs_gpu
@pytest.mark.parametrize("dtype", [np.float32, np.float16], ids=["f32", "f16"])
def test_gpu_conv_add_relu_fuses_and_matches_cpu(dtype, tmp_path):
    """Conv + bias + residual Add + Relu: one FusedConv on CUDA (its bias, Z and
    Relu applied in one pass over Y), equal to the CPU provider's result."""
    x, r = _rand((2, 8, 12, 12), dtype, 1), _rand((2, 8, 12, 12), dtype, 2)
    w = numpy_helper.from_array(_rand((8, 8, 3, 3), dtype, 3) * dtype(0.2), "w")
    b = numpy_helper.from_array(_rand((8,), dtype, 4), "b")
    et = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("Add", ["c", "r"], ["s"]), helper.make_node("Relu", ["s"], ["y"])]
    g = helper.make_graph(nodes, "res", [helper.make_tensor_value_info("x", et, x.shape),
                                         helper.make_tensor_value_info("r", et, r.shape)],
                          [helper.make_tensor_value_info("y", et, None)], [w, b])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()
    feeds = {"x": x, "r": r}
    got, _, by_op = _run_profiled(m, feeds, tmp_path)
    # (The optimizer fuses float convolutions only; float16 keeps Conv.)
    assert by_op.get("FusedConv" if dtype == np.float32 else "Conv") == {"CUDAExecutionProvider"}, by_op
    want = rt.InferenceSession(m, providers=["CPUExecutionProvider"]).run(None, feeds)[0]
    tol = 1e-4 if dtype == np.float32 else 2e-2
    np.testing.assert_allclose(got[0].astype(np.float32), want.astype(np.float32), rtol=tol, atol=tol)


# ---- Reductions: every Reduce* operator on the ReduceMap kernels ----------

_REDUCE_OPS = ["ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceSumSquare", "ReduceL1",
               "ReduceL2", "ReduceLogSum", "ReduceLogSumExp"]


def _reduce_input(op, shape, dtype, seed):
    """Inputs each operator can take at the test's tolerances: positive for
    LogSum, near 1 for Prod (no overflow or underflow in float16)."""
    x = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    if op == "ReduceLogSum":
        x = np.abs(x) + 0.5
    elif op == "ReduceProd":
        x = 1 + x * 0.02
    return x.astype(dtype)


def _reduce_cases(op, dtype, opset):
    """(op, inputs, attrs) for axes runs and sets (_REDUCE_CASES), every axis
    (none given), negative axes and, where the opset has it,
    noop_with_empty_axes; axes as an attribute or an input as `opset` says."""
    axes_input = opset >= (13 if op == "ReduceSum" else 18)
    # _REDUCE_CASES, all axes, then by kernel: a block per output (700
    # elements each), a warp per output (contiguous runs of 32 to 511), a
    # thread per output (strided, or short).
    shapes = [(s, a, kd) for s, a, kd in _REDUCE_CASES] + [((3, 4, 5), None, 1), ((3, 4, 5), None, 0),
                                                           ((4, 1, 700), [2], 1), ((64, 100), [1], 0),
                                                           ((3, 40, 50), [-1], 1), ((50, 40, 3), [1], 0),
                                                           ((5, 6), [-1], 0)]
    cases = []
    for k, (shape, axes, kd) in enumerate(shapes):
        x = _reduce_input(op, shape, dtype, 10 + k)
        if axes is None:
            cases.append((op, [x], {"keepdims": kd}))
        elif axes_input:
            cases.append((op, [x, np.array(axes, np.int64)], {"keepdims": kd}))
        else:
            cases.append((op, [x], {"axes": axes, "keepdims": kd}))
    if axes_input:  # noop_with_empty_axes: no reduction, the mapping alone (x^2, |x|, log x...)
        cases.append((op, [_reduce_input(op, (2, 3), dtype, 30)], {"noop_with_empty_axes": 1}))
    return cases


@needs_gpu
@pytest.mark.parametrize("opset", [11, 18])
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.float64], ids=["f32", "f16", "f64"])
@pytest.mark.parametrize("op", _REDUCE_OPS)
def test_gpu_reductions_match_reference(op, dtype, opset, tmp_path):
    tol = {np.float32: 1e-4, np.float16: 4e-3, np.float64: 1e-9}[dtype]
    cases = _reduce_cases(op, dtype, opset)
    wants = None
    if dtype == np.float16:
        # The kernel accumulates in double and rounds once; numpy's float16
        # sums round at every step. The reference runs on the same values in
        # float32, rounded to float16 at the end.
        from onnx.reference import ReferenceEvaluator
        wants = []
        for c_op, inputs, attrs in cases:
            wide = [x.astype(np.float32) if x.dtype == np.float16 else x for x in inputs]
            m, feeds = _cases_model([(c_op, wide, attrs)], opset)
            wants.append(ReferenceEvaluator(m).run(None, feeds)[0].astype(np.float16))
    _check_on_cuda(cases, tmp_path, opset=opset, rtol=tol, atol=tol, wants=wants)


def _bf16_round(x):
    """float32 values rounded to bfloat16's precision (to nearest even)."""
    u = np.ascontiguousarray(x, np.float32).view(np.uint32)
    u = (u + np.uint32(0x7FFF) + ((u >> np.uint32(16)) & np.uint32(1))) & np.uint32(0xFFFF0000)
    return u.view(np.float32)


@needs_gpu
@pytest.mark.parametrize("op", _REDUCE_OPS)
def test_gpu_reductions_bfloat16(op, tmp_path):
    """X (float) -> Cast to bfloat16 -> Reduce* on CUDA -> Cast to float,
    against the reference on the rounded input (bfloat16 keeps 8 bits)."""
    from onnx.reference import ReferenceEvaluator
    x = _bf16_round(_reduce_input(op, (4, 6, 40), np.float32, 40))
    axes = numpy_helper.from_array(np.array([0, 2], np.int64), "axes")
    nodes = [helper.make_node("Cast", ["x"], ["xb"], to=TensorProto.BFLOAT16),
             helper.make_node(op, ["xb", "axes"], ["rb"], keepdims=0, name="reduce"),
             helper.make_node("Cast", ["rb"], ["y"], to=TensorProto.FLOAT)]
    g = helper.make_graph(nodes, "bf16", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], [axes])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)])
    got, by_node, _ = _run_profiled(m.SerializeToString(), {"x": x}, tmp_path)
    assert by_node.get("reduce") == {"CUDAExecutionProvider"}, by_node
    ref = helper.make_graph([helper.make_node(op, ["x", "axes"], ["y"], keepdims=0)], "f32",
                            [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)],
                            [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], [axes])
    want = ReferenceEvaluator(helper.make_model(ref, opset_imports=[helper.make_opsetid("", 18)])).run(
        None, {"x": x})[0]
    np.testing.assert_allclose(got[0], _bf16_round(want), rtol=1e-2, atol=1e-2)


@needs_gpu
@pytest.mark.parametrize("itype", [TensorProto.INT32, TensorProto.INT64], ids=["i32", "i64"])
@pytest.mark.parametrize("op", ["ReduceSum", "ReduceMax", "ReduceMin"])
def test_gpu_integer_reductions_on_device_values(op, itype, tmp_path):
    """Sum, Max and Min of integers made on the device (a Cast there): host
    integers stay on the CPU by design, device ones reduce on CUDA."""
    x = np.random.default_rng(50).integers(-1000, 1000, (3, 70, 9)).astype(np.float32)
    axes = numpy_helper.from_array(np.array([1], np.int64), "axes")
    nodes = [helper.make_node("Cast", ["x"], ["xi"], to=itype),
             helper.make_node(op, ["xi", "axes"], ["y"], keepdims=1, name="reduce")]
    g = helper.make_graph(nodes, "ints", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)],
                          [helper.make_tensor_value_info("y", itype, None)], [axes])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)]).SerializeToString()
    got, by_node, _ = _run_profiled(m, {"x": x}, tmp_path)
    assert by_node.get("reduce") == {"CUDAExecutionProvider"}, by_node
    dtype = np.int32 if itype == TensorProto.INT32 else np.int64
    fn = {"ReduceSum": np.sum, "ReduceMax": np.max, "ReduceMin": np.min}[op]
    want = fn(x.astype(dtype), axis=1, keepdims=True).astype(dtype)
    assert got[0].dtype == dtype
    np.testing.assert_array_equal(got[0], want)


@needs_gpu
def test_gpu_reductions_nan_inf_and_empty(tmp_path):
    """NaN wins Max and Min (as numpy); LogSumExp subtracts the max (1e30
    does not overflow) and gives -inf for a row of -inf, as onnxruntime
    (onnx's reference computes -inf - -inf there: NaN); empty reductions give
    the identity finished (Sum 0, Max -inf...)."""
    x = np.array([[1.0, np.nan, 3.0], [-np.inf, -np.inf, -np.inf], [1e30, 1e30, 0.0]], np.float32)
    ops = ("ReduceMax", "ReduceMin", "ReduceLogSumExp", "ReduceSum")
    cases = [(op, [x, np.array([1], np.int64)], {"keepdims": 0}) for op in ops]
    wants = [np.array([np.nan, -np.inf, 1e30], np.float32) if op == "ReduceLogSumExp" else None for op in ops]
    empty = np.zeros((2, 0, 3), np.float32)
    for op in ("ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceSumSquare"):
        cases.append((op, [empty, np.array([1], np.int64)], {"keepdims": 1}))
        wants.append(None)
    _check_on_cuda(cases, tmp_path, opset=18, rtol=1e-5, atol=1e-5, wants=wants)


# ---- IOBinding: outputs allocated on the device (bind_output(name, 'cuda')) ----

def _dynamic_model():
    """X[N,4] -> MatMul W -> Relu -> Softmax -> Y[N,3] (every node on CUDA)."""
    x = helper.make_tensor_value_info("X", TensorProto.FLOAT, ["N", 4])
    y = helper.make_tensor_value_info("Y", TensorProto.FLOAT, ["N", 3])
    w = helper.make_tensor("W", TensorProto.FLOAT, [4, 3], np.linspace(-1, 1, 12).astype(np.float32).ravel())
    nodes = [helper.make_node("MatMul", ["X", "W"], ["M"]), helper.make_node("Relu", ["M"], ["R"]),
             helper.make_node("Softmax", ["R"], ["Y"], axis=-1)]
    g = helper.make_graph(nodes, "cuda_dynamic", [x], [y], [w])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()


@pytest.mark.skipif(CUDA, reason="this machine has a CUDA device")
def test_without_gpu_bind_output_to_cuda_is_refused_naming_the_output():
    sess = rt.InferenceSession(_model(), providers=["CPUExecutionProvider"])
    binding = sess.io_binding()
    with pytest.raises(RuntimeError, match="bind_output: cannot allocate output 'Y' in 'cuda' memory: .*CUDA is not "
                                           "available here: execution provider 'CUDAExecutionProvider' is not "
                                           "available: "):
        binding.bind_output("Y", "cuda")
    with pytest.raises(RuntimeError, match="cannot allocate output 'Y' in 'cuda' memory"):
        binding.bind_output("Y", "cuda", 0)
    # The binding (and session) stay usable.
    x = np.ones((2, 4), np.float32)
    binding.bind_cpu_input("X", x)
    binding.bind_output("Y")
    sess.run_with_iobinding(binding)
    np.testing.assert_allclose(binding.copy_outputs_to_cpu()[0], sess.run(None, {"X": x})[0])


@needs_gpu
def test_gpu_bind_output_to_cuda_allocates_on_device_with_each_runs_shape(tmp_path):
    import json
    so = rt.SessionOptions()
    so.enable_profiling = True
    so.profile_file_prefix = str(tmp_path / "bind_")
    sess = rt.InferenceSession(_dynamic_model(), sess_options=so,
                               providers=["CUDAExecutionProvider", "CPUExecutionProvider"])
    cpu = rt.InferenceSession(_dynamic_model(), providers=["CPUExecutionProvider"])
    binding = sess.io_binding()
    binding.bind_output("Y", "cuda")
    assert not binding.get_outputs()[0].has_value()  # allocated by the run
    for n in (2, 7, 1):
        x = np.random.default_rng(n).standard_normal((n, 4)).astype(np.float32)
        binding.bind_cpu_input("X", x)
        sess.run_with_iobinding(binding)
        out = binding.get_outputs()[0]
        assert out.device_name() == "cuda"
        assert out.shape() == [n, 3]
        want = cpu.run(None, {"X": x})[0]
        np.testing.assert_allclose(binding.copy_outputs_to_cpu()[0], want, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(out.numpy(), want, rtol=1e-5, atol=1e-6)  # numpy(): a host copy
    with open(sess.end_profiling()) as f:
        events = json.load(f)
    copies = [e for e in events if e.get("cat") == "Node" and e["args"].get("op_name") == "MemcpyToHost"]
    assert not copies, "an output bound to the device was copied to the host: %s" % copies


@needs_gpu
def test_gpu_bind_output_to_cuda_goes_to_torch_by_dlpack_and_rebinds_to_the_cpu():
    """A device output goes to torch by DLPack without a copy; bound to the
    CPU again, the same binding returns host values."""
    sess = _cuda_session(_dynamic_model())
    x = np.random.default_rng(7).standard_normal((3, 4)).astype(np.float32)
    binding = sess.io_binding()
    binding.bind_cpu_input("X", x)
    binding.bind_output("Y", "cuda", 0)
    sess.run_with_iobinding(binding)
    y = binding.get_outputs()[0]
    want = rt.InferenceSession(_dynamic_model(), providers=["CPUExecutionProvider"]).run(None, {"X": x})[0]
    assert y.__dlpack_device__() == (2, 0)
    torch = _torch_cuda()
    if torch is not None:
        t = torch.from_dlpack(y)
        assert t.device.type == "cuda" and t.data_ptr() == y.data_ptr()
        np.testing.assert_allclose(t.cpu().numpy(), want, rtol=1e-5, atol=1e-6)
    binding.bind_output("Y", "cpu")
    sess.run_with_iobinding(binding)
    assert binding.get_outputs()[0].device_name() == "cpu"
    np.testing.assert_allclose(binding.copy_outputs_to_cpu()[0], want, rtol=1e-5, atol=1e-6)


@needs_gpu
def test_gpu_bind_output_to_cuda_in_a_cpu_session_is_refused_naming_the_output():
    sess = rt.InferenceSession(_model(), providers=["CPUExecutionProvider"])
    binding = sess.io_binding()
    with pytest.raises(RuntimeError, match="output 'Y' cannot be allocated in Cuda memory: no provider of this "
                                           "session runs on that device \\(it runs on: CPUExecutionProvider\\)"):
        binding.bind_output("Y", "cuda")


@needs_gpu
def test_gpu_bind_output_to_cuda_made_on_the_cpu_is_copied_there():
    """An output a CPU node makes (Cast to bfloat16 is declined on CUDA) and
    a graph input returned as an output both land in device memory."""
    nodes = [helper.make_node("Cast", ["X"], ["B"], to=TensorProto.BFLOAT16)]
    g = helper.make_graph(nodes, "cpu_made", [helper.make_tensor_value_info("X", TensorProto.FLOAT, [2, 3])],
                          [helper.make_tensor_value_info("B", TensorProto.BFLOAT16, None),
                           helper.make_tensor_value_info("X", TensorProto.FLOAT, None)])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()
    sess = _cuda_session(m)
    x = np.array([[1, 2, 3], [4, 5, 6]], np.float32)
    binding = sess.io_binding()
    binding.bind_cpu_input("X", x)
    binding.bind_output("B", "cuda")
    binding.bind_output("X", "cuda")
    sess.run_with_iobinding(binding)
    outs = binding.get_outputs()
    assert [v.device_name() for v in outs] == ["cuda", "cuda"]
    got = binding.copy_outputs_to_cpu()
    np.testing.assert_array_equal(got[0].astype(np.float32), x)  # small integers are exact in bfloat16
    np.testing.assert_array_equal(got[1], x)


# ---- DLPack on the GPU ----------------------------------------------------

def _hand_made_cuda_capsule():
    """A CPU OrtValue's capsule relabelled kDLCUDA (device 0): what a GPU
    producer would hand over, made without one. Returns (capsule, value)."""
    import ctypes
    from onyxruntime.capi import _dlpack
    v = rt.OrtValue.ortvalue_from_numpy(np.arange(6, dtype=np.float32).reshape(2, 3))
    capsule = v.to_dlpack()
    managed = ctypes.cast(_dlpack._py.PyCapsule_GetPointer(capsule, b"dltensor"),
                          ctypes.POINTER(_dlpack._DLManagedTensor))
    managed.contents.dl_tensor.device.device_type = 2
    return capsule, managed


@pytest.mark.skipif(CUDA, reason="this machine has a CUDA device")
def test_without_gpu_a_cuda_dlpack_capsule_is_refused_naming_why_and_left_unconsumed():
    from onyxruntime.capi import _dlpack
    capsule, managed = _hand_made_cuda_capsule()
    address = __import__("ctypes").addressof(managed.contents)
    with pytest.raises(RuntimeError, match="from_dlpack: DLPack device type 2 \\(kDLCUDA, device 0\\): the tensor "
                                           "is in CUDA memory but CUDA is not available here: execution provider "
                                           "'CUDAExecutionProvider' is not available: "):
        rt.OrtValue.from_dlpack(capsule)
    # Not consumed: still a "dltensor" its producer frees when it dies.
    assert _dlpack._py.PyCapsule_IsValid(capsule, b"dltensor")
    assert address in _dlpack._exported
    del capsule
    assert address not in _dlpack._exported
    # An unknown device type is refused naming it.
    capsule, managed = _hand_made_cuda_capsule()
    managed.contents.dl_tensor.device.device_type = 4  # kDLOpenCL
    with pytest.raises(RuntimeError, match="DLPack device type 4 \\(device 0\\) is not available"):
        rt.OrtValue.from_dlpack(capsule)


def test_cpu_values_still_export_kdlcpu():
    v = rt.OrtValue.ortvalue_from_numpy(np.arange(4, dtype=np.float32))
    assert v.__dlpack_device__() == (1, 0)
    with pytest.raises(BufferError, match="CPU tensors take no stream"):
        v.__dlpack__(stream=5)
    np.testing.assert_array_equal(np.from_dlpack(v), np.arange(4, dtype=np.float32))


def test_cuda_host_dlpack_memory_is_read_as_host_memory():
    """kDLCUDAHost (pinned host memory) is host memory: shared as a CPU value."""
    capsule, managed = _hand_made_cuda_capsule()
    managed.contents.dl_tensor.device.device_type = 3
    v = rt.OrtValue.from_dlpack(capsule)
    assert v.device_name() == "cpu"
    np.testing.assert_array_equal(v.numpy(), np.arange(6, dtype=np.float32).reshape(2, 3))


@needs_gpu
def test_gpu_dlpack_device_value_round_trip_without_a_copy():
    x = np.random.default_rng(8).standard_normal((3, 5)).astype(np.float32)
    v = rt.OrtValue.ortvalue_from_numpy(x, "cuda", 0)
    assert v.__dlpack_device__() == (2, 0)
    w = rt.OrtValue.from_dlpack(v.to_dlpack())
    assert w.device_name() == "cuda" and w.data_ptr() == v.data_ptr()
    np.testing.assert_array_equal(w.numpy(), x)
    u = rt.OrtValue.from_dlpack(v)  # through __dlpack__ (a consumer's stream is accepted)
    assert u.data_ptr() == v.data_ptr()
    assert v.__dlpack__(stream=1) is not None
    with pytest.raises(BufferError, match="not"):
        v.__dlpack__(dl_device=(1, 0))
    # The shared value feeds a CUDA session.
    sess = _cuda_session(_model())
    feed = rt.OrtValue.from_dlpack(rt.OrtValue.ortvalue_from_numpy(x[:2, :4].copy(), "cuda", 0).to_dlpack())
    want = rt.InferenceSession(_model(), providers=["CPUExecutionProvider"]).run(None, {"X": x[:2, :4]})[0]
    assert feed.device_name() == "cuda"
    got = sess.run_with_ort_values(["Y"], {"X": feed})[0]
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-5, atol=1e-6)


@needs_gpu
@pytest.mark.parametrize("tdtype", ["float32", "float16", "bfloat16", "bool", "int64", "int32", "uint8"])
def test_gpu_dlpack_torch_cuda_tensors_both_ways_without_a_copy(tdtype):
    torch = _torch_cuda()
    if torch is None:
        pytest.skip("torch with CUDA is not installed")
    dt = getattr(torch, tdtype)
    src = torch.arange(24, device="cuda").reshape(2, 3, 4)
    t = (src % 2 == 0) if tdtype == "bool" else src.to(dt)
    torch.cuda.synchronize()
    for given in (t, t.__dlpack__()):
        v = rt.OrtValue.from_dlpack(given, tdtype == "bool")  # (older DLPack carries bool as uint8)
        assert v.device_name() == "cuda"
        assert v.data_ptr() == t.data_ptr()
        assert v.shape() == [2, 3, 4]
        want_type = {"float32": "float", "float16": "float16", "bfloat16": "bfloat16", "bool": "bool",
                     "int64": "int64", "int32": "int32", "uint8": "uint8"}[tdtype]
        assert v.data_type() == "tensor(%s)" % want_type
        if tdtype != "bfloat16":
            np.testing.assert_array_equal(v.numpy(), t.cpu().numpy())
        back = torch.from_dlpack(v)
        assert back.device.type == "cuda" and back.data_ptr() == t.data_ptr() and back.dtype == t.dtype
        assert torch.equal(back, t)


def test_a_dlpack_tensor_the_library_refuses_goes_back_to_its_producer():
    """A consumed capsule whose tensor the library refuses (here: no data for
    six elements) is handed back to its producer's deleter, not leaked."""
    import ctypes
    from onyxruntime.capi import _dlpack
    capsule, managed = _hand_made_cuda_capsule()
    managed.contents.dl_tensor.device.device_type = 1
    managed.contents.dl_tensor.data = None
    address = ctypes.addressof(managed.contents)
    assert address in _dlpack._exported
    with pytest.raises(Exception, match="NULL|null|data"):
        rt.OrtValue.from_dlpack(capsule)
    assert address not in _dlpack._exported  # the producer's deleter ran
    assert not _dlpack._py.PyCapsule_IsValid(capsule, b"dltensor")  # consumed

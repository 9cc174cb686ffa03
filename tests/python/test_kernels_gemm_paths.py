"""The float GEMM under MatMul, Gemm, FusedMatMul and Conv (our packed SGEMM,
with constant weights packed once at session creation) on every SIMD path:
each path runs in a fresh interpreter with ONYX_CPU_ISA set (read once, when
the library loads), against onnx.reference.ReferenceEvaluator."""

import json

import pytest

from test_cpu_path import _probe

PROBE = r"""
import json, sys
import numpy as np
from onnx import helper, numpy_helper, TensorProto
from onnx.reference import ReferenceEvaluator
import onyxruntime as rt

rng = np.random.default_rng(0)
F = TensorProto.FLOAT

def rand(*shape):
    return rng.standard_normal(shape).astype(np.float32)

def model(nodes, inputs, outputs, inits, opset=17, extra_inputs=()):
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info(n, F, s) for n, s in inputs + list(extra_inputs)],
                          [helper.make_tensor_value_info(n, F, None) for n in outputs],
                          [numpy_helper.from_array(v, k) for k, v in inits.items()])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset), helper.make_opsetid("com.microsoft", 1)])

results = {}

def check(name, m, feeds, rtol=1e-4):
    got = rt.InferenceSession(m.SerializeToString()).run(None, feeds)
    ref = ReferenceEvaluator(m).run(None, feeds)
    err = max(float(np.max(np.abs(g - r) / (np.abs(r) + 1.0))) if g.size else 0.0 for g, r in zip(got, ref))
    results[name] = err

# MatMul: constant B (packed) and fed B, odd sizes and batch folding; 29x520x2100
# has several blocks of K and of columns (A then packed once for all of them).
for M, K, N in [(1, 768, 2304), (3, 33, 257), (7, 100, 31), (2, 257, 100), (100, 7, 33), (29, 520, 2100)]:
    B = rand(K, N)
    m = model([helper.make_node("MatMul", ["a", "B"], ["y"])], [("a", [2, M, K])], ["y"], {"B": B})
    check(f"matmul_const_{M}x{K}x{N}", m, {"a": rand(2, M, K)})
    m = model([helper.make_node("MatMul", ["a", "b"], ["y"])], [("a", [M, K]), ("b", [K, N])], ["y"], {})
    check(f"matmul_fed_{M}x{K}x{N}", m, {"a": rand(M, K), "b": rand(K, N)})
# One row against a constant B (a decode step: packed_gemv.h streams the
# packed panels): several K blocks, N off whole panels and groups of four.
for K, N in [(768, 2304), (3072, 771), (576, 37), (77, 16), (1000, 129)]:
    m = model([helper.make_node("MatMul", ["a", "B"], ["y"])], [("a", [1, 1, K])], ["y"], {"B": rand(K, N)})
    check(f"matmul_const_row_{K}x{N}", m, {"a": rand(1, 1, K)})
for ta in (0, 1):
    for tb in (0, 1):
        K, N = 300, 133
        B = rand(N, K) if tb else rand(K, N)
        node = helper.make_node("Gemm", ["a", "B", "C"], ["y"], transA=ta, transB=tb, alpha=0.7, beta=-1.3)
        m = model([node], [("a", [K, 1] if ta else [1, K])], ["y"], {"B": B, "C": rand(N)})
        check(f"gemm_row_{ta}{tb}", m, {"a": rand(K, 1) if ta else rand(1, K)})
# Batched B (attention-like) and broadcasting.
m = model([helper.make_node("MatMul", ["a", "b"], ["y"])], [("a", [3, 17, 40]), ("b", [3, 40, 65])], ["y"], {})
check("matmul_batched", m, {"a": rand(3, 17, 40), "b": rand(3, 40, 65)})

# Gemm: constant B with either trans flag, alpha/beta, C broadcast.
for ta in (0, 1):
    for tb in (0, 1):
        M, K, N = 37, 70, 129
        B = rand(N, K) if tb else rand(K, N)
        node = helper.make_node("Gemm", ["a", "B", "C"], ["y"], transA=ta, transB=tb, alpha=0.7, beta=-1.3)
        m = model([node], [("a", [K, M] if ta else [M, K])], ["y"], {"B": B, "C": rand(N)})
        check(f"gemm_{ta}{tb}", m, {"a": rand(K, M) if ta else rand(M, K)})
m = model([helper.make_node("Gemm", ["a", "B"], ["y"], transB=1)], [("a", [1, 300])], ["y"], {"B": rand(500, 300)})
check("gemm_m1_transB", m, {"a": rand(1, 300)})

# FusedMatMul (com.microsoft) with a constant B and alpha.
m = model([helper.make_node("FusedMatMul", ["a", "B"], ["y"], domain="com.microsoft", alpha=0.5)],
          [("a", [4, 9, 50])], ["y"], {"B": rand(50, 77)})
got = rt.InferenceSession(m.SerializeToString()).run(None, {"a": np.ones((4, 9, 50), np.float32)})[0]
B = numpy_helper.to_array(m.graph.initializer[0])
results["fusedmatmul_const"] = float(np.max(np.abs(got - 0.5 * np.ones((4, 9, 50), np.float32) @ B)))

# One query row against fed keys, transB (a decode step's attention scores:
# dot products over B's rows read in place).
m = model([helper.make_node("FusedMatMul", ["a", "b"], ["y"], domain="com.microsoft", alpha=0.125, transB=1)],
          [("a", [2, 3, 1, 64]), ("b", [2, 3, 129, 64])], ["y"], {})
a, b = rand(2, 3, 1, 64), rand(2, 3, 129, 64)
got = rt.InferenceSession(m.SerializeToString()).run(None, {"a": a, "b": b})[0]
results["fusedmatmul_m1_transB"] = float(np.max(np.abs(got - 0.125 * a @ b.transpose(0, 1, 3, 2))))
m = model([helper.make_node("Gemm", ["a", "b"], ["y"], transB=1, alpha=0.5)], [("a", [1, 300]), ("b", [1031, 300])],
          ["y"], {})
a, b = rand(1, 300), rand(1031, 300)
check("gemm_m1_fed_transB", m, {"a": a, "b": b})

# Conv: constant W (packed per group), 3x3 with padding, grouped, 1x1, strided.
for name, (C, Mo, k, group, stride, pad, hw) in {
        "conv3x3": (16, 33, 3, 1, 1, 1, 13), "conv_group2": (8, 12, 3, 2, 2, 1, 11),
        "conv1x1": (40, 70, 1, 1, 1, 0, 9), "conv_big": (64, 64, 3, 1, 1, 1, 28)}.items():
    W = rand(Mo, C // group, k, k)
    node = helper.make_node("Conv", ["x", "W", "Bias"], ["y"], group=group, strides=[stride, stride],
                            pads=[pad] * 4, kernel_shape=[k, k])
    m = model([node], [("x", [2, C, hw, hw])], ["y"], {"W": W, "Bias": rand(Mo)})
    check(name, m, {"x": rand(2, C, hw, hw)})

# An initializer that is also a graph input may be overridden at run time:
# the fed value must be used, not a copy packed at creation.
B = rand(20, 40)
m = model([helper.make_node("MatMul", ["a", "B"], ["y"])], [("a", [5, 20])], ["y"], {"B": B},
          extra_inputs=[("B", [20, 40])])
sess = rt.InferenceSession(m.SerializeToString())
a, B2 = rand(5, 20), rand(20, 40)
results["override_default"] = float(np.max(np.abs(sess.run(None, {"a": a})[0] - a @ B)))
results["override_fed"] = float(np.max(np.abs(sess.run(None, {"a": a, "B": B2})[0] - a @ B2)))

# A wrong inner dimension against a packed constant is refused by name and
# leaves the session usable.
m = model([helper.make_node("MatMul", ["a", "B"], ["y"], name="mm")], [("a", [None, None])], ["y"],
          {"B": rand(30, 50)})
sess = rt.InferenceSession(m.SerializeToString())
try:
    sess.run(None, {"a": rand(4, 29)})
    results["bad_error"] = ""
except Exception as e:
    results["bad_error"] = str(e)
a = rand(4, 30)
B = numpy_helper.to_array(m.graph.initializer[0])
results["after_bad"] = float(np.max(np.abs(sess.run(None, {"a": a})[0] - a @ B)))
print("CPU_PATH", rt.get_build_info())
print("RESULTS " + json.dumps(results))
"""


def _run(isa):
    lines = _probe(isa, PROBE, timeout=300).splitlines()
    line = [l for l in lines if l.startswith("RESULTS ")][0]
    info = [l for l in lines if l.startswith("CPU_PATH")][0]
    return info, json.loads(line[len("RESULTS "):])


@pytest.mark.parametrize("isa", [None, "avx2", "baseline"])
def test_gemm_kernels_agree_with_reference_on_each_path(isa):
    info, r = _run(isa)
    if isa is not None:
        assert f"cpu path={isa}" in info or "cpu path=baseline" in info, info
    bad = r.pop("bad_error")
    assert "MatMul" in bad and "inner dimensions" in bad, bad
    for name, err in r.items():
        assert err < 2e-4, f"{name} on {isa or 'default'} path: max error {err}"

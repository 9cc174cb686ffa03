"""Float Conv of stride 2 through the direct kernel of strided_conv.h
(AVX-512 and AVX2; on the baseline path the same models take the GEMM; 1x1
kernels the GEMM over the even rows and columns), in a fresh interpreter per
path: 3x3 / 1x1 / other kernels, odd sizes, pads
(asymmetric, auto_pad), dilation, batch > 1, output channels that fill no
whole block, images large enough to run in bands of rows, bias / residual Z /
activations fused by the optimizer, against onnx.reference.ReferenceEvaluator
on the unfused graph; and bad inputs, which name the value at fault and leave
the session usable."""

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import onyxruntime as rt
from test_cpu_path import CONV_PROBE_HEAD, _paths, _probe_results

PROBE = CONV_PROBE_HEAD + r"""
def check(name, xshape, M, k, attrs, bias=True, tail=None, residual=False, threads=(1, 2)):
    C = xshape[1]
    kk = [k, k] if isinstance(k, int) else k
    W = (rand(M, C, *kk) / np.sqrt(C * kk[0] * kk[1])).astype(np.float32)
    attrs = dict(attrs, strides=attrs.get("strides", [2, 2]))
    m = conv_model(xshape, W, rand(M) if bias else None, attrs, tail, residual)
    x = rand(*xshape)
    feeds = {"x": x}
    if residual:
        y0 = ReferenceEvaluator(conv_model(xshape, W, None, attrs)).run(None, {"x": x})[0]
        feeds["z"] = rand(*y0.shape)
    ref = ReferenceEvaluator(m).run(None, feeds)[0]
    for level in ("all", "disabled"):
        for t in threads:
            so = rt.SessionOptions()
            so.graph_optimization_level = (rt.GraphOptimizationLevel.ORT_ENABLE_ALL if level == "all"
                                           else rt.GraphOptimizationLevel.ORT_DISABLE_ALL)
            so.intra_op_num_threads = t
            sess = rt.InferenceSession(m.SerializeToString(), so)
            got = sess.run(None, feeds)[0]
            assert got.shape == ref.shape, (name, got.shape, ref.shape)
            # A second run reuses the per-thread buffers (and the padding's zeros).
            again = sess.run(None, feeds)[0]
            assert np.array_equal(got, again), name
            results[f"{name}/{level}/t{t}"] = float(np.max(np.abs(got - ref) / (np.abs(ref) + 1.0)))

P1 = dict(pads=[1, 1, 1, 1])
# ResNet's shapes, scaled down: 3x3 pad 1, Relu fused; the 1x1 downsample
# (the GEMM over the even rows and columns).
check("resnet_3x3", [2, 16, 14, 14], 64, 3, P1, tail=("Relu", {}))
check("resnet_1x1", [2, 24, 14, 14], 128, 1, {}, bias=False)
# Output channels that fill no whole block (64 on AVX-512, 16 on AVX2), odd sizes.
check("odd_3x3", [3, 9, 23, 19], 20, 3, P1)
check("odd_1x1", [1, 7, 15, 13], 70, 1, {})
check("one_channel_out", [1, 6, 9, 9], 1, 3, P1)
# Every tile width: outputs of 1, 2, ... positions and a 7x7 image (49 = 5x5 + 4x6).
for hw in (2, 3, 4, 5, 6, 7, 11, 13):
    check(f"size_{hw}", [1, 5, hw, hw], 17, 3, P1, threads=(2,))
check("out_7x7", [2, 32, 14, 14], 40, 3, P1)
# Pads: asymmetric, none, auto_pad; dilation; other kernels (5x5, 1x3, 7x7: 49 taps).
check("pads_asym", [1, 8, 17, 20], 12, 3, dict(pads=[0, 2, 1, 0]))
check("pads_none", [2, 8, 17, 16], 12, 3, {})
check("same_upper", [1, 8, 16, 15], 12, 3, dict(auto_pad="SAME_UPPER"))
check("same_lower", [1, 8, 15, 16], 12, 3, dict(auto_pad="SAME_LOWER"))
check("all_padding_rows", [1, 6, 4, 4], 7, 3, dict(pads=[3, 3, 3, 3]))
check("dilated", [1, 6, 20, 21], 9, 3, dict(pads=[2, 2, 2, 2], dilations=[2, 2]))
check("k5", [1, 6, 21, 18], 10, 5, dict(pads=[2, 2, 2, 2]))
check("k1x3", [2, 6, 9, 12], 11, [1, 3], dict(pads=[0, 1, 0, 1]))
check("k7_49_taps", [1, 5, 30, 27], 8, 7, dict(pads=[3, 3, 3, 3]))
check("k8_64_taps_gemm", [1, 5, 30, 27], 8, 8, dict(pads=[3, 3, 4, 4]))
check("stride_2x1_gemm", [1, 6, 12, 12], 8, 3, dict(pads=P1["pads"], strides=[2, 1]))
# Batch > 1 and channels split in chunks (3x3: 14 per chunk on AVX-512, 56 on AVX2).
check("chunks", [3, 130, 9, 10], 30, 3, P1)
check("chunks_k2", [2, 600, 6, 6], 24, 2, {})
# Images over 512 KiB: bands of output rows over every block, one image on 2 threads too.
check("bands", [1, 40, 60, 58], 80, 3, P1, tail=("Relu", {}))
check("bands_k2", [2, 40, 64, 60], 72, 2, {})
# Epilogues: residual Z (+ Relu), Clip, LeakyRelu, Sigmoid (a pass of its own).
check("residual", [2, 8, 17, 16], 33, 3, P1, residual=True)
check("residual_relu", [1, 8, 16, 16], 20, 3, P1, residual=True, tail=("Relu", {}))
check("clip", [1, 8, 16, 16], 20, 3, P1, tail=("Clip", {}))
check("leaky", [1, 8, 16, 16], 20, 3, P1, tail=("LeakyRelu", {"alpha": 0.1}))
check("sigmoid", [1, 8, 16, 16], 20, 3, P1, tail=("Sigmoid", {}))
check("no_bias", [2, 8, 13, 16], 20, 3, P1, bias=False)
print("CPU_PATH", rt.get_build_info())
print("RESULTS " + json.dumps(results))
"""

N_CASES = 35


@pytest.mark.parametrize("isa", _paths())
def test_strided_conv_agrees_with_reference_on_each_path(isa):
    r = _probe_results(isa, PROBE)
    per_case = {name.split("/")[0] for name in r}
    assert len(per_case) == N_CASES, sorted(per_case)
    for name, err in r.items():
        assert err < 1e-4, f"{name} on {isa}: max relative error {err}"


def _strided_model(C=8, M=12):
    rng = np.random.default_rng(1)
    W = rng.standard_normal((M, C, 3, 3)).astype(np.float32)
    node = helper.make_node("Conv", ["x", "W"], ["y"], pads=[1, 1, 1, 1], strides=[2, 2])
    g = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, None)],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                          [numpy_helper.from_array(W, "W")])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


def test_bad_input_names_the_value_and_session_stays_usable():
    sess = rt.InferenceSession(_strided_model().SerializeToString())
    good = np.ones((1, 8, 9, 9), np.float32)
    y = sess.run(None, {"x": good})[0]
    assert y.shape == (1, 12, 5, 5)
    with pytest.raises(Exception) as e:
        sess.run(None, {"x": np.ones((1, 7, 9, 9), np.float32)})
    assert "input X" in str(e.value) and "channels" in str(e.value)
    with pytest.raises(Exception) as e:
        sess.run(None, {"x": np.ones((8, 9, 9), np.float32)})
    assert "rank" in str(e.value)
    assert np.array_equal(sess.run(None, {"x": good})[0], y)

"""The Winograd F(2x2, 3x3) and F(4x4, 3x3) paths of float Conv (providers/cpu/nn/winograd_conv.h):
3x3, stride 1, group 1, pads up to 2, on each SIMD path (ONYX_CPU_ISA=avx512
where the CPU has it, avx2, baseline; each in a fresh interpreter), against a
float64 onnx.reference.ReferenceEvaluator run, the float32 one, and
onnxruntime, at optimization levels 'all' (Conv+Relu / Conv+Add+Relu fused
into FusedConv, whose bias, Z and clamp the output transform applies) and
'disabled'. Channel counts not multiples of 16, odd and tiny images
(partial tiles; the input shape left symbolic so that the shape rule, which
needs 16 tiles per image when it knows the size, still picks Winograd),
batch 1 and 3, asymmetric pads, auto_pad. Shapes of 28x28 and more with 64+
channels take F(4x4, 3x3) (winograd::TileFor): those are also run with
session.conv.winograd_f4 = 0 (F(2x2, 3x3)), which must give other bits (the
F(4x4, 3x3) path ran) and the tight bound, while F(4x4, 3x3) is held to
1e-5 of the range and 16x the float32 reference's own rounding."""

import json

import pytest

from test_cpu_path import _paths, _probe

PROBE = r"""
import json
import numpy as np
import onnxruntime as ort
from onnx import helper, numpy_helper, TensorProto
from onnx.reference import ReferenceEvaluator
import onyxruntime as rt

rng = np.random.default_rng(7)
results = {}

def conv_model(xshape, W, bias, attrs, tail, residual, dtype, symbolic):
    F = TensorProto.DOUBLE if dtype == np.float64 else TensorProto.FLOAT
    inits = [numpy_helper.from_array(W.astype(dtype), "W")]
    if bias is not None:
        inits.append(numpy_helper.from_array(bias.astype(dtype), "B"))
    nodes = [helper.make_node("Conv", ["x", "W"] + (["B"] if bias is not None else []), ["c"],
                              kernel_shape=[3, 3], **attrs)]
    dims = [xshape[0], xshape[1], "h", "w"] if symbolic else xshape
    inputs = [helper.make_tensor_value_info("x", F, dims)]
    cur = "c"
    if residual:
        inputs.append(helper.make_tensor_value_info("z", F, None))
        nodes.append(helper.make_node("Add", [cur, "z"], ["s"]))
        cur = "s"
    if tail == "Relu":
        nodes.append(helper.make_node("Relu", [cur], ["y"]))
        cur = "y"
    elif tail == "Clip":
        inits += [numpy_helper.from_array(np.array(0, dtype), "lo"), numpy_helper.from_array(np.array(6, dtype), "hi")]
        nodes.append(helper.make_node("Clip", [cur, "lo", "hi"], ["y"]))
        cur = "y"
    elif tail == "LeakyRelu":
        nodes.append(helper.make_node("LeakyRelu", [cur], ["y"], alpha=0.1))
        cur = "y"
    g = helper.make_graph(nodes, "g", inputs, [helper.make_tensor_value_info(cur, F, None)], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 9  # onnxruntime 1.31 reads up to IR 13
    return m

def check(name, xshape, M, attrs, bias=True, tail=None, residual=False, symbolic=False, f4=False):
    C = xshape[1]
    # ResNet-like magnitudes: He-scaled weights, unit inputs, small biases.
    W = (rng.standard_normal((M, C, 3, 3)) * np.sqrt(2.0 / (9 * C))).astype(np.float32)
    B = (0.1 * rng.standard_normal(M)).astype(np.float32) if bias else None
    x = rng.standard_normal(xshape).astype(np.float32)
    feeds = {"x": x}
    m32 = conv_model(xshape, W, B, attrs, tail, residual, np.float32, symbolic)
    if residual:
        y0 = ReferenceEvaluator(conv_model(xshape, W, None, attrs, None, False, np.float32, False)).run(None, {"x": x})[0]
        feeds["z"] = rng.standard_normal(y0.shape).astype(np.float32)
    m64 = conv_model(xshape, W, B, attrs, tail, residual, np.float64, symbolic)
    ref64 = ReferenceEvaluator(m64).run(None, {k: v.astype(np.float64) for k, v in feeds.items()})[0]
    ref32 = ReferenceEvaluator(m32).run(None, feeds)[0]
    so = ort.SessionOptions()
    so.log_severity_level = 3
    peer = ort.InferenceSession(m32.SerializeToString(), so, providers=["CPUExecutionProvider"]).run(None, feeds)[0]
    scale = float(np.max(np.abs(ref64))) or 1.0
    r = {"ref32": float(np.max(np.abs(ref32 - ref64))) / scale, "ort": float(np.max(np.abs(peer - ref64))) / scale,
         "f4": f4}
    outs = {}
    for level in ("all", "disabled", "f2") if f4 else ("all", "disabled"):
        so = rt.SessionOptions()
        so.graph_optimization_level = (rt.GraphOptimizationLevel.ORT_DISABLE_ALL if level == "disabled"
                                       else rt.GraphOptimizationLevel.ORT_ENABLE_ALL)
        if level == "f2":
            so.add_session_config_entry("session.conv.winograd_f4", "0")
        so.intra_op_num_threads = 2
        got = rt.InferenceSession(m32.SerializeToString(), so).run(None, feeds)[0]
        outs[level] = got
        assert got.shape == ref64.shape, (name, got.shape, ref64.shape)
        r[level] = float(np.max(np.abs(got - ref64))) / scale
        r[level + "_vs_ort"] = float(np.max(np.abs(got - peer))) / scale
        r[level + "_vs_ref32"] = float(np.max(np.abs(got - ref32))) / scale
    if f4:
        r["f4_differs_from_f2"] = bool(not np.array_equal(outs["all"], outs["f2"]))
    results[name] = r

P1 = dict(pads=[1, 1, 1, 1])
# ResNet-50's stride-1 3x3 convs (bias + Relu fused), one stage each, small batch.
check("resnet_56", [1, 64, 56, 56], 64, P1, tail="Relu", f4=True)
check("resnet_28_b3_residual", [3, 128, 28, 28], 128, P1, tail="Relu", residual=True, f4=True)
check("resnet_14", [1, 256, 14, 14], 256, P1, tail="Relu")
check("resnet_7_b3", [3, 512, 7, 7], 512, P1, tail="Relu")
# Batch 1 at 7x7 (16 tiles: one block whose phases are split over the threads,
# its products one 16-column half tile) and 14x14 at batch 3 (147 tiles: a
# 32-column tile pair, a half tile and EdgeColumns per block) with a residual.
check("resnet_7_b1_residual", [1, 512, 7, 7], 512, P1, tail="Relu", residual=True)
check("resnet_14_b3_residual", [3, 256, 14, 14], 256, P1, tail="Relu", residual=True)
# Channel counts off the SGEMM's tiles (33 / 37: 196+ tiles per image; 65 / 70).
check("odd_channels_28", [1, 33, 29, 27], 37, P1)
check("odd_channels_b3_residual", [3, 65, 9, 11], 70, P1, tail="Relu", residual=True, symbolic=True)
# Tiny and odd images (partial tiles), pads 0 and 2, asymmetric pads, auto_pad.
check("image_1x1", [1, 64, 1, 1], 64, P1, symbolic=True)
check("image_2x5_pad2", [2, 64, 2, 5], 66, dict(pads=[2, 2, 2, 2]), symbolic=True)
check("image_5x3_asym", [1, 64, 5, 3], 64, dict(pads=[0, 2, 1, 0]), symbolic=True, tail="Clip")
check("valid_13", [1, 128, 13, 13], 64, {}, bias=False)
check("pad2_one_side", [2, 72, 15, 17], 64, dict(pads=[2, 0, 0, 2]), tail="Relu")
check("same_upper", [2, 64, 10, 12], 64, dict(auto_pad="SAME_UPPER"), symbolic=True)
check("same_lower_odd", [1, 96, 11, 9], 80, dict(auto_pad="SAME_LOWER"), tail="Clip")
# Activations the output transform does not apply (a pass after it), residual without one.
check("leaky", [1, 64, 8, 8], 64, P1, tail="LeakyRelu", symbolic=True)
check("residual_only", [2, 64, 7, 9], 96, P1, residual=True)
# Many tiles: several blocks per thread (batch 3 at 56x56).
check("many_blocks_b3", [3, 64, 57, 55], 64, P1, tail="Relu", f4=True)
# F(4x4, 3x3) edges: images not multiples of 4 (partial tiles on both
# sides), pads 0 and 2, asymmetric pads, auto_pad, channels off the SGEMM's
# tiles, 256 channels, a residual with Clip, the baseline's leaky pass.
check("f4_odd_29x31_pad2", [2, 64, 29, 31], 70, dict(pads=[2, 2, 2, 2]), tail="Relu", f4=True)
check("f4_asym_30x45", [1, 72, 32, 47], 64, dict(pads=[0, 2, 1, 0]), residual=True, tail="Clip", f4=True)
check("f4_valid_30", [1, 96, 30, 30], 80, {}, bias=False, f4=True)
check("f4_same_lower_33", [1, 64, 33, 30], 66, dict(auto_pad="SAME_LOWER"), tail="LeakyRelu", f4=True)
check("f4_256_28", [1, 256, 28, 28], 256, P1, tail="Relu", f4=True)
print("CPU_PATH", rt.get_build_info())
print("RESULTS " + json.dumps(results))
"""

CASES = 23


@pytest.mark.parametrize("isa", _paths())
def test_winograd_agrees_with_reference_and_onnxruntime(isa):
    lines = _probe(isa, PROBE, timeout=900).splitlines()
    info = [l for l in lines if l.startswith("CPU_PATH")][0]
    assert f"cpu path={isa}" in info, info
    r = json.loads([l for l in lines if l.startswith("RESULTS ")][0][len("RESULTS "):])
    assert len(r) == CASES, sorted(r)
    for name, e in r.items():
        # Relative to the output's largest magnitude: within the 1e-5 the
        # benchmark allows against onnxruntime, and no worse than a few
        # times the float32 reference's own rounding (F(2x2, 3x3)), or 16x
        # it (F(4x4, 3x3): about a decimal digit of float32 given up).
        for level in ("all", "disabled", "f2") if e["f4"] else ("all", "disabled"):
            assert e[level] < 1e-5, f"{name} on {isa} ({level}): error {e[level]:.2e} vs float64 reference"
            assert e[level + "_vs_ort"] < 1e-5, f"{name} on {isa} ({level}): {e[level + '_vs_ort']:.2e} from onnxruntime"
            factor = 16 if e["f4"] and level != "f2" else 4
            assert e[level] < factor * max(e["ref32"], e["ort"]) + 1e-7, f"{name} on {isa} ({level}): {e}"
        if e["f4"]:
            assert e["f4_differs_from_f2"], f"{name} on {isa}: F(4x4, 3x3) not taken (same bits as F(2x2, 3x3))"


BAD = r"""
import numpy as np
from onnx import helper, numpy_helper, TensorProto
import onyxruntime as rt
F = TensorProto.FLOAT
W = np.ones((64, 64, 3, 3), np.float32) / 576
g = helper.make_graph([helper.make_node("Conv", ["x", "W"], ["y"], pads=[1, 1, 1, 1], name="wconv")], "g",
                      [helper.make_tensor_value_info("x", F, ["n", "c", "h", "w"])],
                      [helper.make_tensor_value_info("y", F, None)], [numpy_helper.from_array(W, "W")])
s = rt.InferenceSession(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString())
try:
    s.run(None, {"x": np.ones((1, 32, 9, 9), np.float32)})
    print("NO ERROR")
except Exception as e:
    print("ERROR", str(e).replace("\n", " "))
y = s.run(None, {"x": np.ones((2, 64, 9, 9), np.float32)})[0]
print("AFTER", list(y.shape), float(y[0, 0, 4, 4]), float(y[1, 5, 0, 0]))
"""


def test_wrong_channel_count_is_refused_and_session_stays_usable():
    out = _probe(None, BAD, timeout=120)
    err = [l for l in out.splitlines() if l.startswith("ERROR") or l.startswith("NO ERROR")][0]
    assert err.startswith("ERROR"), out
    assert "wconv" in err and "input X" in err and "32 channels" in err and "64" in err, err
    after = [l for l in out.splitlines() if l.startswith("AFTER")][0]
    assert "[2, 64, 9, 9]" in after, after
    # Interior: all 576 taps of ones times 1/576; corner: 4 of the 9 taps per channel.
    interior, corner = map(float, after.split()[-2:])
    assert abs(interior - 1.0) < 1e-5 and abs(corner - 4 / 9) < 1e-5, after

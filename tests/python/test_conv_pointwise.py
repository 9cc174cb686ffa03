"""1x1 stride-1 convolutions on every SIMD path (ONYX_CPU_ISA=avx512 where the
CPU has it, avx2, baseline; each in a fresh interpreter): the SGEMM reads the
input itself as its right operand under the pre-packed weights
(sgemm_inplace.inc), by row tiles across column blocks for shallow products
(K <= 128) and by groups of MC rows for deeper ones, over several K blocks,
the last few columns turned over (EdgeColumns, after a half-panel tile
where they pass one),
several column blocks, rows past MC, partial row tiles and column panels,
on 1 to 3 threads (the GEMM split by rows or columns), strided 1x1 convs
(the input subsampled, then read the same way), with the bias,
residual Z and Relu / Clip the conv applies in its epilogue; against
onnx.reference.ReferenceEvaluator on the unfused graph."""

import json

import pytest

from test_cpu_path import FLOAT_PROBE_HEAD, _paths, _probe

PROBE = FLOAT_PROBE_HEAD + r"""

def out_dims(xshape, attrs):
    s = attrs.get("strides", [1] * (len(xshape) - 2))
    p = attrs.get("pads", [0] * (2 * (len(xshape) - 2)))
    nd = len(xshape) - 2
    return [(xshape[2 + j] + p[j] + p[nd + j] - 1) // s[j] + 1 for j in range(nd)]

def model(xshape, M, tail, residual, bias, attrs):
    C = xshape[1]
    W = rand(M, C, *([1] * (len(xshape) - 2))) / np.float32(np.sqrt(C))
    inits = [numpy_helper.from_array(W, "W")]
    ins = ["x", "W"]
    if bias:
        inits.append(numpy_helper.from_array(rand(M), "B"))
        ins.append("B")
    nodes = [helper.make_node("Conv", ins, ["c"], **attrs)]
    inputs = [helper.make_tensor_value_info("x", F, xshape)]
    cur = "c"
    if residual:
        inputs.append(helper.make_tensor_value_info("z", F, [xshape[0], M] + out_dims(xshape, attrs)))
        nodes.append(helper.make_node("Add", [cur, "z"], ["s"]))
        cur = "s"
    if tail == "Relu":
        nodes.append(helper.make_node("Relu", [cur], ["y"]))
        cur = "y"
    elif tail == "Clip":
        inits += [numpy_helper.from_array(np.array(0, np.float32), "lo"),
                  numpy_helper.from_array(np.array(1.5, np.float32), "hi")]
        nodes.append(helper.make_node("Clip", [cur, "lo", "hi"], ["y"]))
        cur = "y"
    g = helper.make_graph(nodes, "g", inputs, [helper.make_tensor_value_info(cur, F, None)], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])

def check(name, xshape, M, tail=None, residual=False, bias=True, **attrs):
    m = model(xshape, M, tail, residual, bias, attrs)
    feeds = {"x": rand(*xshape)}
    if residual:
        feeds["z"] = rand(xshape[0], M, *out_dims(xshape, attrs))
    ref = ReferenceEvaluator(m).run(None, feeds)[0]
    for threads in (1, 2, 3):
        so = rt.SessionOptions()
        so.intra_op_num_threads = threads
        got = rt.InferenceSession(m.SerializeToString(), so).run(None, feeds)[0]
        assert got.shape == ref.shape, (name, got.shape, ref.shape)
        results[f"{name}/t{threads}"] = float(np.max(np.abs(got - ref) / (np.abs(ref) + 1.0)))

# Shallow (K <= 128): row tiles walk the column panels.
check("shallow_residual_relu", [2, 64, 17, 19], 76, "Relu", True)
check("shallow_column_blocks", [1, 96, 50, 50], 30, None, True)
check("shallow_rows_past_mc", [1, 64, 12, 12], 400, "Relu", True)
check("shallow_k1", [1, 1, 9, 40], 20, "Clip")
check("shallow_no_bias", [1, 24, 56, 56], 144, None, False, False)
# Deep: groups of MC rows, K blocks (300 = 2 x 150, 600 = 3 x 200), column blocks.
check("deep_k_blocks_residual", [2, 300, 10, 13], 100, "Relu", True)
check("deep_column_blocks_clip", [1, 600, 30, 31], 40, "Clip")
check("deep_rows_past_mc", [1, 200, 9, 9], 250, None, True)
check("deep_one_block", [1, 256, 14, 14], 64, "Relu")
# Last columns filling at most half a vector (EdgeColumns): 196 = 6 x 32 + 4
# under one K block (each row group's edge after its panels, the last group
# of an odd number of row panels) and several; one column past the panels.
check("edge_one_k_block", [1, 200, 14, 14], 250, "Relu", True)
check("edge_k_blocks", [2, 520, 14, 14], 40, "Clip")
check("edge_one_column", [1, 72, 3, 11], 30, None, True)
# Last columns past a whole half panel, at most half a vector more: a
# half-panel tile, then EdgeColumns (AVX-512: 7x7 = 32 + 16 + 1, 20 = 16 + 4,
# 21 under groups of MC rows; AVX2: 11 = 8 + 3, 27 = 16 + 8 + 3), shallow and
# deep, one K block and several; a 7x7 conv of depth 160 stays plain (the
# transposed product's move back costs more), one of depth 320 transposed.
check("half_edge_7x7_residual", [3, 64, 7, 7], 40, "Relu", True)
check("half_edge_k_blocks", [2, 300, 5, 4], 30, "Clip")
check("half_edge_groups", [1, 200, 3, 7], 250, None, True)
check("half_edge_1d", [2, 150, 27], 26, "Relu", True)
check("shallow_7x7_plain", [2, 160, 7, 7], 960, "Clip")
check("deep_7x7_transposed", [2, 320, 7, 7], 640, "Relu", True)
# Few rows (one row tile or less): B read in place by the plain loop.
check("few_rows", [1, 50, 20, 20], 5, "Relu", True)
# Strided 1x1 (no padding read): the input subsampled, then read as B; odd
# sizes, strides 2 and 3, different per axis, 1-D; a 7x7 output (the
# transposed product); end pads (an output row reading only padding) and
# leading pads keep the im2col path.
check("strided_s2", [2, 40, 17, 21], 70, "Relu", True, strides=[2, 2])
check("strided_s3_deep", [1, 300, 20, 23], 36, None, False, strides=[3, 3])
check("strided_s21", [1, 24, 9, 30], 50, "Clip", True, strides=[2, 1])
check("strided_1d", [3, 16, 41], 20, None, True, strides=[2])
check("strided_small_out", [2, 64, 14, 14], 96, "Relu", True, strides=[2, 2])
check("strided_end_pad", [1, 16, 10, 10], 24, None, False, strides=[2, 2], pads=[0, 0, 1, 1])
check("strided_lead_pad", [1, 16, 11, 11], 24, "Relu", False, strides=[2, 2], pads=[1, 1, 0, 0])
print("CPU_PATH", rt.get_build_info())
print("RESULTS " + json.dumps(results))
"""


@pytest.mark.parametrize("isa", _paths())
def test_pointwise_conv_agrees_with_reference_on_each_path(isa):
    lines = _probe(isa, PROBE, timeout=600).splitlines()
    info = [l for l in lines if l.startswith("CPU_PATH")][0]
    assert f"cpu path={isa}" in info, info
    r = json.loads([l for l in lines if l.startswith("RESULTS ")][0][len("RESULTS "):])
    assert len(r) == 3 * 26, sorted(r)
    for name, err in r.items():
        assert err < 1e-4, f"{name} on {isa}: max relative error {err}"

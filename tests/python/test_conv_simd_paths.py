"""Float Conv on every SIMD path (ONYX_CPU_ISA=avx512 where the CPU has it,
avx2, baseline; each in a fresh interpreter, the path is read once): the
SGEMM that packs its right operand straight from the input (1-D and 2-D,
any stride, dilation, padding, groups), the depthwise kernels, and the
bias / residual Z / activation the conv applies itself after the optimizer
fused them, against onnx.reference.ReferenceEvaluator on the unfused graph.
The error is per element (|got - ref| / (|ref| + 1)), which F(4x4, 3x3)
Winograd, a few 1e-6 of the output's range, does not meet on these
unscaled weights (outputs of range ~100: 1.5e-4 near zero); the probe
keeps F(2x2, 3x3) (session.conv.winograd_f4 = 0), and
test_conv_winograd.py checks F(4x4, 3x3) on every path against the range."""


import pytest

from test_cpu_path import CONV_PROBE_HEAD, _paths, _probe_results

PROBE = CONV_PROBE_HEAD + r"""
def check(name, xshape, M, k, attrs, bias=True, tail=None, residual=False):
    nd = len(xshape) - 2
    C, group = xshape[1], attrs.get("group", 1)
    W = rand(M, C // group, *([k] * nd) if isinstance(k, int) else k)
    m = conv_model(xshape, W, rand(M) if bias else None, attrs, tail, residual)
    x = rand(*xshape)
    ref_conv = ReferenceEvaluator(m)
    feeds = {"x": x}
    if residual:
        y0 = ReferenceEvaluator(conv_model(xshape, W, None, attrs)).run(None, {"x": x})[0]
        feeds["z"] = rand(*y0.shape)
    ref = ref_conv.run(None, feeds)[0]
    for level in ("all", "disabled"):
        so = rt.SessionOptions()
        so.graph_optimization_level = rt.GraphOptimizationLevel.ORT_ENABLE_ALL if level == "all" else rt.GraphOptimizationLevel.ORT_DISABLE_ALL
        so.intra_op_num_threads = 2
        so.add_session_config_entry("session.conv.winograd_f4", "0")
        got = rt.InferenceSession(m.SerializeToString(), so).run(None, feeds)[0]
        assert got.shape == ref.shape, (name, got.shape, ref.shape)
        results[f"{name}/{level}"] = float(np.max(np.abs(got - ref) / (np.abs(ref) + 1.0)))

# GEMM with im2col packed from the input: strides, dilations, pads (also
# asymmetric and auto_pad), groups, odd sizes, batch > 1, 1x1 (input as B).
check("3x3_s1", [2, 16, 13, 17], 33, 3, dict(pads=[1, 1, 1, 1]))
check("3x3_s2", [3, 8, 23, 19], 20, 3, dict(pads=[1, 1, 1, 1], strides=[2, 2]))
check("3x3_s3_dil2", [1, 5, 29, 31], 7, 3, dict(pads=[2, 1, 0, 3], strides=[3, 3], dilations=[2, 2]))
check("5x3_s21", [2, 6, 15, 40], 13, [5, 3], dict(pads=[2, 0, 1, 2], strides=[2, 1]))
check("7x7_s2_p3", [1, 3, 45, 45], 16, 7, dict(pads=[3, 3, 3, 3], strides=[2, 2]))
check("1x1", [2, 40, 9, 11], 70, 1, {})
check("1x1_s2", [2, 24, 14, 14], 48, 1, dict(strides=[2, 2]))
check("group2", [2, 8, 11, 11], 12, 3, dict(group=2, strides=[2, 2], pads=[1, 1, 1, 1]))
check("group4_1x1", [1, 32, 7, 7], 64, 1, dict(group=4))
check("same_upper", [1, 6, 10, 9], 9, 4, dict(auto_pad="SAME_UPPER", strides=[2, 2]))
check("no_bias_wide", [1, 64, 30, 70], 64, 3, dict(pads=[1, 1, 1, 1]), bias=False)
# Small outputs (7x7, known from the declared input shape) run the transposed
# product Y^T = im2col(X)^T W^T (1x1 reads X^T straight from the input).
check("small_out_49", [2, 64, 7, 7], 96, 3, dict(pads=[1, 1, 1, 1]))
check("small_1x1_residual_relu", [2, 48, 7, 7], 64, 1, {}, tail=("Relu", {}), residual=True)
check("small_s2_clip", [1, 16, 13, 13], 40, 3, dict(pads=[1, 1, 1, 1], strides=[2, 2]), tail=("Clip", {}))
check("small_1d", [2, 16, 20], 64, 3, dict(pads=[1, 1]), tail=("Sigmoid", {}))
check("big_k", [1, 300, 6, 6], 20, 3, dict(pads=[1, 1, 1, 1]))
check("out_1x1", [1, 4, 3, 3], 5, 3, {})
check("conv1d", [2, 7, 50], 11, 5, dict(pads=[2, 1], strides=[2], dilations=[2]))
check("conv1d_1x1", [3, 9, 33], 4, 1, {})
check("conv3d", [1, 3, 6, 7, 5], 4, 3, dict(pads=[1] * 6, strides=[2, 1, 1]))
# Depthwise: multiplier 1 and 2, 3x3 (interior vectors without masks at
# strides 1 and 2) and other sizes, strides 1-3, dilation, narrow rows.
check("dw3_s1_w7", [2, 24, 7, 7], 24, 3, dict(group=24, pads=[1, 1, 1, 1]))
check("dw3_s1_w60", [1, 16, 21, 60], 16, 3, dict(group=16, pads=[1, 1, 1, 1]))
check("dw3_s2_w33", [2, 16, 33, 33], 16, 3, dict(group=16, pads=[1, 1, 1, 1], strides=[2, 2]))
check("dw3_s2_w112", [1, 8, 20, 112], 8, 3, dict(group=8, pads=[0, 1, 1, 0], strides=[2, 2]))
check("dw5_s3_dil2", [1, 6, 25, 19], 6, 5, dict(group=6, pads=[2, 3, 4, 1], strides=[3, 3], dilations=[2, 2]))
check("dw_mult2", [2, 5, 14, 14], 10, 3, dict(group=5, pads=[1, 1, 1, 1]))
check("dw_k1x7", [1, 4, 9, 30], 4, [1, 7], dict(group=4, pads=[0, 3, 0, 3]))
# Small "same" planes run as one flat run of vectors across row ends.
check("dw3_dil2_flat", [2, 12, 10, 10], 12, 3, dict(group=12, pads=[2, 2, 2, 2], dilations=[2, 2]))
check("dw5_flat_13", [1, 6, 13, 13], 6, 5, dict(group=6, pads=[2, 2, 2, 2]), tail=("Relu", {}))
# Fused by the optimizer: Relu / Clip (clamped in the GEMM's epilogue or the
# depthwise store), residual Add (+Relu), LeakyRelu and Sigmoid (a pass after).
check("relu", [2, 16, 12, 12], 32, 3, dict(pads=[1, 1, 1, 1]), tail=("Relu", {}))
check("clip6", [1, 16, 12, 12], 32, 1, {}, tail=("Clip", {}))
check("residual_relu", [2, 16, 10, 10], 16, 3, dict(pads=[1, 1, 1, 1]), tail=("Relu", {}), residual=True)
check("residual_only", [1, 32, 9, 9], 32, 1, {}, residual=True)
check("leaky", [1, 8, 11, 11], 12, 3, dict(pads=[1, 1, 1, 1]), tail=("LeakyRelu", {"alpha": 0.1}))
check("sigmoid_1d", [2, 8, 40], 12, 3, dict(pads=[1, 1]), tail=("Sigmoid", {}))
check("dw_clip6", [2, 32, 14, 14], 32, 3, dict(group=32, pads=[1, 1, 1, 1], strides=[2, 2]), tail=("Clip", {}))
check("dw_relu_wide", [1, 8, 56, 56], 8, 3, dict(group=8, pads=[1, 1, 1, 1]), tail=("Relu", {}))
# 3x3 "same" stride 1 reads its im2col straight from the image (masked per
# tap; strips of output positions across row ends): a K block starting
# mid-channel (31 channels: 279 = 140 + 139), one-column and one-row
# images, a residual with Relu.
check("same3_k_blocks", [2, 31, 9, 23], 20, 3, dict(pads=[1, 1, 1, 1]), tail=("Relu", {}))
check("same3_w1", [1, 8, 11, 1], 13, 3, dict(pads=[1, 1, 1, 1]))
check("same3_h1", [1, 8, 1, 45], 13, 3, dict(pads=[1, 1, 1, 1]), residual=True, tail=("Relu", {}))
check("same3_w2_many", [1, 40, 20, 2], 70, 3, dict(pads=[1, 1, 1, 1]), bias=False)
# Few input channels (at most 4, group 1, no dilation) run the direct conv
# (3x3 stride 2 on AVX-512: the GEMM over the input's phases instead):
# register blocks of output channels (counts not a multiple of the block),
# strides 1 and 2 along rows (mixed with others along columns), row ends
# and rows outside the image, batch, Clip / Relu in the store, Sigmoid in a
# pass after, a residual (which takes the GEMM instead).
check("small_c_stem3", [2, 3, 37, 45], 32, 3, dict(pads=[1, 1, 1, 1], strides=[2, 2]), tail=("Clip", {}))
check("small_c_stem7", [1, 3, 61, 70], 20, 7, dict(pads=[3, 3, 3, 3], strides=[2, 2]), tail=("Relu", {}))
check("small_c_s1_5x5", [1, 2, 19, 33], 5, 5, dict(pads=[2, 1, 0, 2]))
check("small_c_s21", [1, 4, 15, 21], 9, [3, 2], dict(pads=[1, 0, 1, 1], strides=[1, 2]), tail=("Sigmoid", {}))
check("small_c_s13", [1, 1, 12, 30], 17, [1, 16], dict(pads=[0, 7, 0, 8], strides=[3, 1]), bias=False)
check("small_c_1x1", [2, 3, 9, 40], 24, 1, {})
check("small_c_w1", [1, 3, 9, 1], 8, 3, dict(pads=[1, 1, 1, 1], strides=[2, 2]))
check("small_c_stem3_tf", [2, 3, 30, 31], 16, 3, dict(pads=[0, 0, 1, 1], strides=[2, 2]), tail=("Relu", {}))
# Output channels past one block (64 on AVX-512, 16 on AVX2) with a partial
# last block, rows not a multiple of the 6 positions a tile holds.
check("small_c_m70_blocks", [2, 4, 23, 29], 70, 7, dict(pads=[3, 2, 3, 1], strides=[2, 2]), tail=("Relu", {}))
check("small_c_residual", [1, 3, 16, 16], 16, 3, dict(pads=[1, 1, 1, 1]), tail=("Relu", {}), residual=True)
# The row-vector kernel: rows of more vectors than a block (the last block
# ends at the row's end), 1 and 2 output channels (blocks of 3), a channel
# count one past a block, stride 3 across, a wide stride-1 row, odd widths.
check("small_c_wide_7x7", [2, 3, 21, 250], 8, 7, dict(pads=[3, 3, 3, 3], strides=[2, 2]), tail=("Relu", {}))
check("small_c_m1", [1, 3, 12, 40], 1, 3, dict(pads=[1, 1, 1, 1], strides=[2, 2]))
check("small_c_m2_clip", [2, 2, 11, 37], 2, 5, dict(pads=[2, 2, 2, 2], strides=[2, 2]), tail=("Clip", {}))
check("small_c_m64_stem3", [1, 3, 18, 226], 64, 3, dict(pads=[1, 1, 1, 1], strides=[2, 2]), tail=("Clip", {}))
check("small_c_s3", [1, 3, 20, 61], 10, 4, dict(pads=[1, 2, 0, 1], strides=[3, 3]), tail=("Relu", {}))
check("small_c_s1_wide", [1, 1, 7, 300], 4, 3, dict(pads=[1, 1, 1, 1]))
# Stride 1 "same" 3x3 runs each plane as one stream of vectors with column
# masks (rows of 2, 3, 9, 28, 37 columns; one row; rows shorter and longer
# than a vector); stride 2 masks its loads at the row ends (even and odd
# widths, pads on one side only, multiplier 2).
check("dw_same_28", [2, 6, 28, 28], 6, 3, dict(group=6, pads=[1, 1, 1, 1]), tail=("Clip", {}))
check("dw_same_narrow", [1, 3, 5, 2], 3, 3, dict(group=3, pads=[1, 1, 1, 1]))
check("dw_same_3x9", [1, 4, 3, 9], 4, 3, dict(group=4, pads=[1, 1, 1, 1]), tail=("Relu", {}))
check("dw_same_one_row", [1, 4, 1, 37], 4, 3, dict(group=4, pads=[1, 1, 1, 1]))
check("dw_same_mult2", [1, 3, 11, 37], 6, 3, dict(group=3, pads=[1, 1, 1, 1]))
# AVX-512 moves each row's vector a lane left and right (valignd) for the
# side taps on planes of more than a few vectors: an odd width (row ends at
# every lane), batch 3; a 16-column row (vectors aligned to rows); bias absent.
check("dw_same_slide_odd", [3, 5, 23, 45], 5, 3, dict(group=5, pads=[1, 1, 1, 1]), tail=("Relu", {}))
check("dw_same_slide_w16", [1, 4, 12, 16], 4, 3, dict(group=4, pads=[1, 1, 1, 1]), bias=False)
check("dw_same_slide_56", [2, 8, 56, 56], 8, 3, dict(group=8, pads=[1, 1, 1, 1]), tail=("Clip", {}))
check("dw_s2_56", [1, 5, 56, 56], 5, 3, dict(group=5, pads=[1, 1, 1, 1], strides=[2, 2]), tail=("Clip", {}))
check("dw_s2_odd", [2, 3, 27, 29], 3, 3, dict(group=3, pads=[1, 1, 1, 1], strides=[2, 2]))
check("dw_s2_onesided", [1, 4, 14, 14], 4, 3, dict(group=4, pads=[0, 0, 1, 1], strides=[2, 2]))
check("dw_s2_narrow", [1, 2, 6, 3], 4, 3, dict(group=2, pads=[1, 1, 1, 1], strides=[2, 2]))
# The phase split of rows under two vector pairs (plain vectors counted once
# per conv, the rest masked): a tail of 9 lanes and an odd height (the last
# odd phase row outside the image), a one-sided pad at 63 columns, and the
# even phase alone (1x1 stride 2) at 58 columns.
check("dw_s2_split_w50", [2, 5, 31, 50], 5, 3, dict(group=5, pads=[1, 1, 1, 1], strides=[2, 2]), tail=("Clip", {}))
check("dw_s2_split_w63", [1, 4, 21, 63], 4, 3, dict(group=4, pads=[0, 0, 1, 1], strides=[2, 2]), tail=("Relu", {}))
check("1x1_s2_split_w58", [1, 6, 9, 58], 8, 1, dict(strides=[2, 2]))
# Stride 2 on rows of at most half a vector: two output rows per vector
# (other pads than 1 on columns; with pads 1 and no dilation, the first two
# below take the direct rows, two planes a vector on AVX-512;
# MobileNetV2's 14x14 -> 7x7; an odd number of rows, a last row alone;
# exactly half a vector; one-sided pads; dilation with height stride 3; a
# 5x5 kernel; a channel multiplier; bottom rows past the image; height
# stride 1).
check("dw_s2_pairs_7", [2, 12, 14, 14], 12, 3, dict(group=12, pads=[1, 1, 1, 1], strides=[2, 2]), tail=("Clip", {}))
check("dw_s2_pairs_half", [1, 3, 9, 16], 3, 3, dict(group=3, pads=[1, 1, 1, 1], strides=[2, 2]), tail=("Relu", {}))
check("dw_s2_pairs_onesided", [1, 4, 13, 9], 4, 3, dict(group=4, pads=[0, 0, 1, 1], strides=[2, 2]))
check("dw_s2_pairs_dil", [1, 3, 17, 11], 3, 3, dict(group=3, pads=[2, 1, 2, 2], strides=[3, 2], dilations=[2, 2]))
check("dw_s2_pairs_k5", [1, 5, 12, 8], 5, 5, dict(group=5, pads=[2, 2, 2, 2], strides=[2, 2]), bias=False)
check("dw_s2_pairs_mult2", [1, 3, 10, 7], 6, 3, dict(group=3, pads=[3, 1, 3, 1], strides=[2, 2]))
check("dw_s12_pairs", [2, 3, 9, 12], 3, 3, dict(group=3, pads=[1, 1, 1, 1], strides=[1, 2]), tail=("Clip", {}))
# Stride 2 on wide rows: a last vector that is full (64 outputs, its
# shifted-in tap-2 element inside the row), pads of 2 and 0, height stride 1
# and dilation 2.
check("dw_s2_w128", [1, 3, 9, 128], 3, 3, dict(group=3, pads=[1, 1, 1, 1], strides=[2, 2]), tail=("Clip", {}))
check("dw_s2_wide_pads", [1, 2, 7, 100], 2, 3, dict(group=2, pads=[0, 2, 1, 0], strides=[1, 2], dilations=[2, 1]))
# 3x3 stride 2 reads the input's four phase planes (phases::Fits on both
# axes): the GEMM's strips in place (pads 1, TF-style "same" pads 0/1, pads
# 2, dilation 2, odd sizes, a one-row output, K blocks starting mid-channel
# (31 channels), more output channels than a task's rows keep in L2 (packed
# panels), the transposed product on a small output, a batch split over
# threads); a shape the phases do not fit (pads 0, 7 rows: the last tap reads
# row 6, phase row 3 of 3) takes the gather.
check("s2_phase_pad1_odd", [2, 31, 25, 23], 24, 3, dict(pads=[1, 1, 1, 1], strides=[2, 2]), tail=("Relu", {}))
check("s2_phase_tf_same", [1, 16, 20, 30], 20, 3, dict(pads=[0, 0, 1, 1], strides=[2, 2]))
check("s2_phase_pad2", [1, 8, 17, 18], 12, 3, dict(pads=[2, 2, 2, 2], strides=[2, 2]), residual=True)
check("s2_phase_dil2", [1, 8, 21, 19], 12, 3, dict(pads=[2, 2, 2, 2], strides=[2, 2], dilations=[2, 2]))
check("s2_phase_one_row", [1, 8, 2, 40], 10, 3, dict(pads=[1, 1, 1, 1], strides=[2, 2]))
check("s2_phase_wide_m", [1, 8, 12, 12], 400, 3, dict(pads=[1, 1, 1, 1], strides=[2, 2]), bias=False)
check("s2_phase_transposed", [2, 64, 14, 14], 96, 3, dict(pads=[0, 0, 1, 1], strides=[2, 2]), tail=("Clip", {}))
check("s2_phase_batch", [3, 16, 28, 28], 32, 3, dict(pads=[1, 1, 1, 1], strides=[2, 2]))
check("s2_no_phase_fit", [1, 8, 7, 7], 12, 3, dict(strides=[2, 2]))
# Other kernels up to 7x7 pack their panels from the phases too.
check("s2_phase_5x5", [2, 6, 23, 26], 10, 5, dict(pads=[2, 2, 2, 2], strides=[2, 2]), tail=("Relu", {}))
check("s2_phase_7x7", [1, 6, 31, 29], 8, 7, dict(pads=[3, 3, 3, 3], strides=[2, 2]))
check("s2_phase_small_5x5", [1, 32, 13, 13], 48, 5, dict(pads=[2, 2, 2, 2], strides=[2, 2]))
# 1x1 stride 2 without leading pads: the pointwise product of the even rows
# and columns (odd sizes with a trailing pad, the transposed product on a
# small output with a residual, groups); stride 2 along one axis only gathers.
check("1x1_s2_odd_endpad", [2, 12, 15, 17], 20, 1, dict(strides=[2, 2], pads=[0, 0, 1, 1]))
check("1x1_s2_small_residual", [1, 64, 13, 13], 96, 1, dict(strides=[2, 2]), tail=("Relu", {}), residual=True)
check("1x1_s2_group2", [1, 16, 10, 10], 8, 1, dict(strides=[2, 2], group=2))
check("1x1_s21", [1, 8, 9, 10], 6, 1, dict(strides=[2, 1]))
# Depthwise 3x3 stride 2 with a column pad of 1 and no dilation, wider than
# half a vector, reads the input rows directly, two output rows at a time
# (the middle input row shared): odd sizes, multiplier 2, a one-row output,
# Clip (below and dw_s2_*); other pads and dilations on rows of 1.5 vectors
# or more (AVX-512: 24 outputs; AVX2: 12) run over each plane's phases
# ("same" pads 0/1, pads 2 with dilation 2).
check("dw_phase_odd", [2, 5, 31, 50], 5, 3, dict(group=5, pads=[1, 1, 1, 1], strides=[2, 2]), tail=("Clip", {}))
check("dw_phase_tf_same", [1, 4, 17, 64], 4, 3, dict(group=4, pads=[0, 0, 1, 1], strides=[2, 2]))
check("dw_phase_dil2", [1, 3, 15, 70], 3, 3, dict(group=3, pads=[2, 2, 2, 2], strides=[2, 2], dilations=[2, 2]))
check("dw_phase_mult2", [1, 3, 12, 56], 6, 3, dict(group=3, pads=[1, 1, 1, 1], strides=[2, 2]), tail=("Relu", {}))
check("dw_phase_one_row", [1, 2, 1, 80], 2, 3, dict(group=2, pads=[1, 1, 1, 1], strides=[2, 2]))
# The direct stride-2 rows: a batch of 3 with an odd number of output rows
# (the last alone) and an odd width (the last odd column outside the row);
# height pads 0 and 2 (kernel rows above / below the image read a zero
# row); a wide row of plain vectors and a masked tail (113 columns); end
# pads past the image (taps masked to zero); MobileNetV2's 112 -> 56 at
# batch 2 with Clip; a channel multiplier with Relu.
check("dw_direct_batch_odd", [3, 7, 23, 45], 7, 3, dict(group=7, pads=[1, 1, 1, 1], strides=[2, 2]), tail=("Relu", {}))
check("dw_direct_ph0", [2, 4, 16, 40], 4, 3, dict(group=4, pads=[0, 1, 1, 1], strides=[2, 2]), tail=("Clip", {}))
check("dw_direct_ph2", [1, 5, 19, 37], 5, 3, dict(group=5, pads=[2, 1, 0, 1], strides=[2, 2]), bias=False)
check("dw_direct_w113", [1, 3, 10, 113], 3, 3, dict(group=3, pads=[1, 1, 1, 1], strides=[2, 2]), tail=("Clip", {}))
check("dw_direct_endpads", [2, 3, 12, 30], 3, 3, dict(group=3, pads=[1, 1, 3, 3], strides=[2, 2]))
check("dw_direct_112", [2, 16, 112, 112], 16, 3, dict(group=16, pads=[1, 1, 1, 1], strides=[2, 2]), tail=("Clip", {}))
check("dw_direct_mult2", [2, 4, 21, 30], 8, 3, dict(group=4, pads=[1, 1, 1, 1], strides=[2, 2]), tail=("Relu", {}))
# Rows of at most half a vector with pads 1 (AVX-512: two planes a vector;
# AVX2 on 5-8 outputs: the direct rows): an odd number of planes (the last
# with a zero partner), 16 columns with no end pad (the last output reads
# column 15, next to the other plane's lanes), height pad 2 and 0 at an odd
# height, a channel multiplier (one plane a call), bias absent, MobileNetV2's
# 14 -> 7 at batch 3.
check("dw_half_odd_planes", [1, 5, 9, 13], 5, 3, dict(group=5, pads=[1, 1, 1, 1], strides=[2, 2]), tail=("Relu", {}))
check("dw_half_w16", [2, 3, 11, 16], 3, 3, dict(group=3, pads=[1, 1, 0, 0], strides=[2, 2]), tail=("Clip", {}))
check("dw_half_ph2", [1, 4, 15, 10], 4, 3, dict(group=4, pads=[2, 1, 0, 1], strides=[2, 2]), bias=False)
check("dw_half_mult2", [1, 3, 10, 14], 6, 3, dict(group=3, pads=[1, 1, 1, 1], strides=[2, 2]), tail=("Clip", {}))
check("dw_half_576", [3, 64, 14, 14], 64, 3, dict(group=64, pads=[1, 1, 1, 1], strides=[2, 2]), tail=("Clip", {}))

# Float MaxPool / AveragePool planes (vectorised along rows at width strides
# 1 and 2): pads, ceil_mode, count_include_pad, rows wider than a vector,
# 1-D, height dilation; a window wider than 16 and width dilation take the
# scalar loops.
def check_pool(name, op, xshape, **attrs):
    x = rand(*xshape)
    g = helper.make_graph([helper.make_node(op, ["x"], ["y"], **attrs)], "g",
                          [helper.make_tensor_value_info("x", F, xshape)], [helper.make_tensor_value_info("y", F, None)])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 19)])
    ref = ReferenceEvaluator(m).run(None, {"x": x})[0]
    got = rt.InferenceSession(m.SerializeToString()).run(None, {"x": x})[0]
    assert got.shape == ref.shape, (name, got.shape, ref.shape)
    results[name] = float(np.max(np.abs(got - ref) / (np.abs(ref) + 1.0)))

check_pool("max3_s2_p1", "MaxPool", [1, 5, 41, 57], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
check_pool("max3_s2_ceil", "MaxPool", [2, 3, 14, 15], kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1)
check_pool("max2_s1_wide", "MaxPool", [1, 2, 5, 70], kernel_shape=[2, 2], pads=[0, 1, 1, 0])
check_pool("max_dil_h", "MaxPool", [1, 2, 12, 20], kernel_shape=[3, 2], strides=[1, 2], dilations=[2, 1])
check_pool("max_1d", "MaxPool", [2, 3, 50], kernel_shape=[5], strides=[2], pads=[2, 2])
check_pool("max_k17", "MaxPool", [1, 2, 4, 40], kernel_shape=[1, 17], strides=[1, 2])
# MaxPool 3x3 stride 2 on rows of 1.5 vectors or more runs over the phases
# (-inf outside the image): ResNet's pads 1 on odd and even sizes, ceil_mode
# (the last window past the input), pads 0, asymmetric pads, batch.
check_pool("max3_s2_phase", "MaxPool", [2, 3, 56, 58], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
check_pool("max3_s2_phase_odd", "MaxPool", [1, 4, 41, 61], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
check_pool("max3_s2_phase_ceil", "MaxPool", [1, 2, 40, 64], kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1)
check_pool("max3_s2_phase_ceil_pad", "MaxPool", [1, 2, 37, 63], kernel_shape=[3, 3], strides=[2, 2],
           pads=[1, 1, 1, 1], ceil_mode=1)
check_pool("max3_s2_phase_asym", "MaxPool", [1, 3, 20, 70], kernel_shape=[3, 3], strides=[2, 2], pads=[0, 1, 1, 0])
check_pool("max3_s2_phase_one_row", "MaxPool", [1, 2, 2, 90], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
check_pool("avg2_s2_ceil", "AveragePool", [1, 7, 29, 35], kernel_shape=[2, 2], strides=[2, 2], ceil_mode=1)
check_pool("avg3_s2_incl", "AveragePool", [2, 3, 17, 33], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1],
           count_include_pad=1)
check_pool("avg3_s1_pad", "AveragePool", [1, 4, 9, 21], kernel_shape=[3, 3], pads=[1, 1, 1, 1])
check_pool("avg_dil_w", "AveragePool", [1, 2, 9, 21], kernel_shape=[2, 2], dilations=[1, 2])
# Separable pools: window rows combined first, then the taps along the row;
# rows of several vector blocks and tails, stride 1 and 2, wide windows.
check_pool("max3_s2_wide", "MaxPool", [2, 3, 9, 150], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
check_pool("max3_s1_wide", "MaxPool", [1, 2, 6, 133], kernel_shape=[3, 3], pads=[1, 1, 1, 1])
check_pool("avg5_s2_incl_wide", "AveragePool", [1, 2, 11, 101], kernel_shape=[5, 5], strides=[2, 2], pads=[2, 1, 2, 3],
           count_include_pad=1)
check_pool("avg4_s1_ceil", "AveragePool", [1, 3, 10, 50], kernel_shape=[4, 4], strides=[1, 1], pads=[0, 2, 1, 1],
           ceil_mode=1)
# 2x2 stride 2 on rows of exactly twice the output (read as one stream per
# plane): ResNet's 28 -> 14 with ceil_mode, odd heights (a last window of one
# row), one output column, whole vectors, max and average, batch.
check_pool("avg2_s2_flat_28", "AveragePool", [2, 5, 28, 28], kernel_shape=[2, 2], strides=[2, 2], ceil_mode=1)
check_pool("avg2_s2_flat_odd_h", "AveragePool", [1, 3, 27, 40], kernel_shape=[2, 2], strides=[2, 2], ceil_mode=1)
check_pool("avg2_s2_flat_pad_h", "AveragePool", [1, 3, 9, 64], kernel_shape=[2, 2], strides=[2, 2], pads=[1, 0, 1, 0],
           count_include_pad=1)
check_pool("avg2_s2_flat_w2", "AveragePool", [1, 4, 6, 2], kernel_shape=[2, 2], strides=[2, 2])
check_pool("max2_s2_flat", "MaxPool", [3, 2, 14, 32], kernel_shape=[2, 2], strides=[2, 2])
check_pool("max2_s2_flat_odd_h", "MaxPool", [1, 2, 15, 70], kernel_shape=[2, 2], strides=[2, 2], ceil_mode=1)
# The planes run in pairs of buffers (a plane's taps after the next plane's
# rows): one plane, an odd count, many planes over the threads.
check_pool("avg2_s2_flat_one_plane", "AveragePool", [1, 1, 28, 28], kernel_shape=[2, 2], strides=[2, 2], ceil_mode=1)
check_pool("avg2_s2_flat_many", "AveragePool", [1, 67, 28, 28], kernel_shape=[2, 2], strides=[2, 2], ceil_mode=1)
check_pool("max2_s2_flat_odd_planes", "MaxPool", [1, 5, 12, 32], kernel_shape=[2, 2], strides=[2, 2])
# The row buffers run two output rows ahead of the taps: planes of two and
# three output rows.
check_pool("max3_s2_two_rows", "MaxPool", [1, 3, 4, 40], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
check_pool("avg3_s2_three_rows", "AveragePool", [1, 3, 6, 40], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
# GlobalAveragePool's SIMD partial sums: MobileNetV2's 7x7, vector tails, one value, 3-D.
check_pool("gap_7x7", "GlobalAveragePool", [2, 1280, 7, 7])
check_pool("gap_tails", "GlobalAveragePool", [1, 5, 3, 37])
check_pool("gap_one", "GlobalAveragePool", [3, 4, 1, 1])
check_pool("gap_3d", "GlobalAveragePool", [1, 3, 4, 5, 6])
# Planes reduced a vector of them at a time: counts past and short of whole
# vectors, long planes, a tail after two-vector steps.
check_pool("gap_planes_111", "GlobalAveragePool", [3, 37, 7, 7])
check_pool("gap_long", "GlobalAveragePool", [1, 20, 56, 56])
check_pool("gap_65", "GlobalAveragePool", [2, 17, 5, 13])
print("CPU_PATH", rt.get_build_info())
print("RESULTS " + json.dumps(results))
"""


@pytest.mark.parametrize("isa", _paths())
def test_conv_agrees_with_reference_on_each_path(isa):
    r = _probe_results(isa, PROBE)
    assert len(r) == 2 * 114 + 38, sorted(r)
    for name, err in r.items():
        assert err < 1e-4, f"{name} on {isa}: max relative error {err}"

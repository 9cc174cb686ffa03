"""The project's ResNet-50 and BERT quantized with onnxruntime.quantization, as
users do it, run on onyxruntime and match onnxruntime.

Variants, each made from the generated float model (tests/models/generate.py,
through the `model_files` fixture):
  dynamic  quantize_dynamic (DynamicQuantizeLinear + MatMulInteger/ConvInteger);
  qdq      quantize_static, QuantFormat.QDQ (QuantizeLinear/DequantizeLinear pairs);
  qop      quantize_static, QuantFormat.QOperator (QLinearConv, QLinearMatMul,
           com.microsoft QLinearAdd/Mul/Softmax/AveragePool/GlobalAveragePool, QGemm);
and the files onnxruntime's optimizer saves (SessionOptions.optimized_model_filepath
at ORT_ENABLE_EXTENDED) from some of them, where its fusions appear: FusedConv,
FusedGemm, FusedMatMul, BiasGelu, Gelu, SkipLayerNormalization,
DynamicQuantizeMatMul, MatMulIntegerToFloat, QLinearConv/QGemm/QLinearSoftmax
fused from QDQ. Static calibration reads a few seeded samples. The files are
cached under <model dir>/quantized/ with a stamp naming the source model's
stamp, the onnxruntime version and RECIPE; any change rebuilds them. They are
never committed.

Tolerance. Both runtimes compute the integer parts exactly; they differ only
where a requantization lands on a rounding tie (onnxruntime requantizes
float(acc) * scale in float; onyx's default-domain QLinearMatMul/QLinearConv
follow the ONNX reference, in double) or where float ulps before a
QuantizeLinear/DynamicQuantizeLinear straddle a tie (onnxruntime also fuses QDQ
into integer kernels). `step` is the output's DequantizeLinear scale where it
has one (ResNet's quantized logits), else the 8-bit step of its range,
(max - min) / 255.
  - ResNet-50 (one output, the logits, through a chain of convolutions that
    does not amplify a flipped step): max diff <= 2 steps (a tie flip in the
    last requantization plus one carried from the layer before; measured 1-2).
  - BERT: 12 residual layers whose LayerNorms amplify every flipped step.
    onnxruntime's own fused (default) and unfused (ORT_DISABLE_ALL) runs of
    one QDQ model differ by up to 6 steps (last_hidden_state) and 13
    (pooler_output), 1-2 on average (measured, seeds 1-3). Bound: mean diff
    <= 4 steps, max <= 32 steps (an eighth of the 8-bit range; measured up to
    10 and 28).
  - Every output: onyx adds no error. Its mean distance to the float model's
    output is within 10% (+ a tenth of a step) of onnxruntime's.
Float models saved by the optimizer match to float rounding.

Time: quantizing the real 12-layer BERT takes about half a minute the first
time (cached afterwards); each run is under a second on either runtime.
"""

import json
import os
import time

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import numpy_helper
from onnxruntime.quantization import (CalibrationDataReader, QuantFormat, quantize_dynamic,
                                      quantize_static)

# Bump when the quantization recipe below changes: cached files are rebuilt.
RECIPE = 1
VARIANTS = ("dynamic", "qdq", "qop")
CALIBRATION_SAMPLES = 3
BERT_SEQ = 32


def _feeds(name, cfg, seed):
    rng = np.random.default_rng([seed, 7])
    if name == "resnet50":
        return {"input": rng.standard_normal((1, 3, 224, 224), dtype=np.float32)}
    mask = np.ones((1, BERT_SEQ), np.int64)
    mask[0, BERT_SEQ - 5:] = 0
    return {"input_ids": rng.integers(0, cfg["vocab"], (1, BERT_SEQ), dtype=np.int64),
            "attention_mask": mask,
            "token_type_ids": np.zeros((1, BERT_SEQ), np.int64)}


class _Calibration(CalibrationDataReader):
    def __init__(self, name, cfg):
        self._it = iter([_feeds(name, cfg, 1000 + i) for i in range(CALIBRATION_SAMPLES)])

    def get_next(self):
        return next(self._it, None)


def _stamp(src, what):
    with open(src + ".stamp") as f:
        return {"source": json.load(f), "what": what, "onnxruntime": ort.__version__, "recipe": RECIPE}


def _cached(src, what, make):
    """<dir of src>/quantized/<model>_<what>.onnx, made by make(path) unless its
    stamp matches the source model's current stamp."""
    d = os.path.join(os.path.dirname(src), "quantized")
    os.makedirs(d, exist_ok=True)
    base = os.path.splitext(os.path.basename(src))[0]
    path = os.path.join(d, "%s_%s.onnx" % (base, what))
    want = _stamp(src, what)
    try:
        with open(path + ".stamp") as f:
            if json.load(f) == want and os.path.exists(path):
                return path
    except (OSError, ValueError):
        pass
    tmp = "%s.tmp.%d.onnx" % (path[:-5], os.getpid())
    make(tmp)
    os.replace(tmp, path)
    with open(path + ".stamp", "w") as f:
        json.dump(want, f)
    return path


def _quantized(model_files, name, variant):
    src = model_files.path(name)
    cfg = model_files.bert_config()

    def make(out):
        if variant == "dynamic":
            quantize_dynamic(src, out)
        else:
            fmt = QuantFormat.QDQ if variant == "qdq" else QuantFormat.QOperator
            quantize_static(src, out, _Calibration(name, cfg), quant_format=fmt)

    return _cached(src, variant, make)


def _ort_optimized(model_files, name, variant):
    """The model onnxruntime's optimizer saves at ORT_ENABLE_EXTENDED from
    `variant` ("float" is the generated model itself)."""
    src = model_files.path(name)
    inp = src if variant == "float" else _quantized(model_files, name, variant)

    def make(out):
        so = ort.SessionOptions()
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
        so.optimized_model_filepath = out
        ort.InferenceSession(inp, so, providers=["CPUExecutionProvider"])

    return _cached(src, variant + "_ort_extended", make)


def _run(lib, path, feeds, level=None):
    so = lib.SessionOptions()
    if level is not None:
        so.graph_optimization_level = getattr(lib.GraphOptimizationLevel, level)
    return lib.InferenceSession(path, so, providers=["CPUExecutionProvider"]).run(None, feeds)


def _output_scales(path):
    """Output name -> the scale of the DequantizeLinear that makes it, if any."""
    m = onnx.load(path, load_external_data=False)
    inits = {i.name: i for i in m.graph.initializer}
    outs = {o.name for o in m.graph.output}
    scales = {}
    for n in m.graph.node:
        if n.op_type == "DequantizeLinear" and n.output[0] in outs and n.input[1] in inits:
            s = numpy_helper.to_array(inits[n.input[1]])
            if s.size == 1:
                scales[n.output[0]] = float(s.reshape(()))
    return scales, [o.name for o in m.graph.output]


def _steps(path, ort_out):
    """Per output: (step, True when it is the output's own scale)."""
    scales, names = _output_scales(path)
    return [(scales[n], True) if n in scales else (float(y.max() - y.min()) / 255 or 1.0, False)
            for n, y in zip(names, ort_out)]


def _compare(onyx, model_files, name, path):
    feeds = _feeds(name, model_files.bert_config(), 1)
    t0 = time.time()
    ours = _run(onyx, path, feeds)
    t_ours = time.time() - t0
    t0 = time.time()
    theirs = _run(ort, path, feeds)
    t_ort = time.time() - t0
    reference = _run(ort, model_files.path(name), feeds)
    report = []
    for i, (a, b, (step, own_scale)) in enumerate(zip(ours, theirs, _steps(path, theirs))):
        assert a.shape == b.shape and a.dtype == b.dtype, (i, a.shape, b.shape, a.dtype, b.dtype)
        d = np.abs(a.astype(np.float64) - b) / step
        ours_err = float(np.abs(a - reference[i]).mean())
        ort_err = float(np.abs(b - reference[i]).mean())
        report.append("output %d: max diff %.4g = %.2f steps of %.4g%s, mean %.2f steps; error vs float %.4g "
                      "(onnxruntime %.4g)" % (i, d.max() * step, d.max(), step, " (its scale)" if own_scale else "",
                                              d.mean(), ours_err, ort_err))
        if name == "resnet50":
            assert d.max() <= 2 + 1e-4, report[-1]
        else:
            assert d.mean() <= 4 and d.max() <= 32, report[-1]
        assert ours_err <= 1.1 * ort_err + 0.1 * step, report[-1]
    print("%s: %s (onyx %.2fs, onnxruntime %.2fs, both including session creation)"
          % (os.path.basename(path), "; ".join(report), t_ours, t_ort))


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("name", ["resnet50", "bert"])
def test_quantized_model_matches_onnxruntime(onyx, model_files, name, variant):
    path = _quantized(model_files, name, variant)
    _compare(onyx, model_files, name, path)


# The files users save from onnxruntime's optimizer: quantized ones carry its
# integer fusions, float ones its contrib fusions.
_OPTIMIZED = [("resnet50", "qop"), ("resnet50", "qdq"), ("resnet50", "float"), ("bert", "float"),
              ("bert", "dynamic"), ("bert", "qdq")]


@pytest.mark.parametrize("name,variant", _OPTIMIZED)
def test_onnxruntime_optimized_model_runs(onyx, model_files, name, variant):
    path = _ort_optimized(model_files, name, variant)
    m = onnx.load(path, load_external_data=False)
    contrib = sorted({n.op_type for n in m.graph.node if n.domain == "com.microsoft"})
    print("%s contrib ops: %s" % (os.path.basename(path), ", ".join(contrib)))
    if variant == "float":
        assert contrib, "onnxruntime fused nothing"
        feeds = _feeds(name, model_files.bert_config(), 1)
        ours, theirs = _run(onyx, path, feeds), _run(ort, path, feeds)
        for a, b in zip(ours, theirs):
            assert a.shape == b.shape and a.dtype == b.dtype
            np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-4 * max(1.0, float(np.abs(b).max())))
        return
    _compare(onyx, model_files, name, path)

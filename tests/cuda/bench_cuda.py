"""GPU latency of onyxruntime's CUDA provider against onnxruntime's CUDA
provider (when onnxruntime-gpu is installed) and PyTorch eager (when torch with
CUDA is), on a transformer MLP block and the generated benchmark models
(ResNet-50, BERT-base seq 128, GPT-2-style prefill of 128 tokens) at batch 1
and 32.

"torch-eager" runs the same ONNX graph, unoptimized, node by node with torch
ops on the GPU (tests/cuda/torch_eager.py: what an nn.Module's forward written
op by op does: F.conv2d, F.layer_norm, torch.matmul, torch.softmax, ...), under
torch.inference_mode() with TF32 off, with sess.run's I/O contract: numpy
inputs copied to the GPU, outputs copied back to numpy (which synchronizes).

A benchmark, not a test: before timing, the CUDA outputs are compared with the
CPU provider's at batch 1 (1e-3 relative to each output's scale, fp32; TF32
stays off), and a mismatch is printed as such. Prints one line per model and
batch: median ms over the timed runs of each runtime, and onyx/torch (below 1:
onyx is faster). Exits 2 when CUDA is not available.

    python tests/cuda/bench_cuda.py [--models mlp,resnet50,bert,gpt2] [--batches 1,32] [--repeat 30] [--fp16]

--fp16 runs float16 versions of the models (tests/cuda/fp16_model.py) in
every runtime, fed float16 inputs, and checks the outputs against the float32
CPU ones to 1e-2 of their scale.
"""

import argparse
import importlib.util
import os
import statistics
import sys
import tempfile
import time

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

import onyxruntime as rt

REPO_ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir, os.pardir))


def mlp_model(hidden=768):
    rng = np.random.default_rng(0)
    w1 = numpy_helper.from_array((rng.standard_normal((hidden, 4 * hidden)) * 0.02).astype(np.float32), "w1")
    w2 = numpy_helper.from_array((rng.standard_normal((4 * hidden, hidden)) * 0.02).astype(np.float32), "w2")
    g = numpy_helper.from_array(np.ones(hidden, np.float32), "g")
    b = numpy_helper.from_array(np.zeros(hidden, np.float32), "b")
    nodes = [helper.make_node("LayerNormalization", ["x", "g", "b"], ["ln"], axis=-1),
             helper.make_node("MatMul", ["ln", "w1"], ["h"]), helper.make_node("Relu", ["h"], ["a"]),
             helper.make_node("MatMul", ["a", "w2"], ["o"]), helper.make_node("Add", ["o", "x"], ["y"]),
             helper.make_node("Softmax", ["y"], ["z"], axis=-1)]
    graph = helper.make_graph(nodes, "mlp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["B", 128, hidden])],
                              [helper.make_tensor_value_info("z", TensorProto.FLOAT, ["B", 128, hidden])],
                              [w1, w2, g, b])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()


def generated_model(name, out_dir):
    spec = importlib.util.spec_from_file_location("gen", os.path.join(REPO_ROOT, "tests", "models", "generate.py"))
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    with open(gen.ensure_model(out_dir, name, check=False), "rb") as f:
        return f.read()


def feeds_for(sess, batch, seq=128):
    """Inputs from the session's declared ones: symbolic batch dims -> batch,
    other symbolic dims -> seq (0 for a KV cache's past), ids in [0, 1000)."""
    rng = np.random.default_rng(batch)
    feeds = {}
    for i in sess.get_inputs():
        shape = []
        for k, d in enumerate(i.shape):
            if isinstance(d, int):
                shape.append(d)
            elif k == 0:
                shape.append(batch)
            else:
                shape.append(0 if "past" in i.name and k == 2 else seq)
        if "int64" in i.type:
            feeds[i.name] = (np.ones(shape, np.int64) if "mask" in i.name
                             else np.zeros(shape, np.int64) if "token_type" in i.name
                             else rng.integers(0, 1000, shape, dtype=np.int64))
        else:
            feeds[i.name] = rng.standard_normal(shape).astype(np.float32)
    return feeds


def timed(fn, repeat, warmup=3):
    for _ in range(warmup):
        fn()
    t = []
    for _ in range(repeat):
        s = time.perf_counter()
        fn()
        t.append((time.perf_counter() - s) * 1e3)
    return statistics.median(t)


def compare(got, want):
    worst = 0.0
    for g, w in zip(got, want):
        scale = max(1.0, float(np.max(np.abs(w)))) if w.size else 1.0
        worst = max(worst, float(np.max(np.abs(g.astype(np.float32) - w))) / scale if w.size else 0.0)
    return worst


def load_torch_eager():
    """(torch, tests/cuda/torch_eager.py module) with TF32 off, or (None, why)."""
    try:
        import torch
    except ImportError:
        return None, "torch is not installed"
    if not torch.cuda.is_available():
        return None, "torch %s has no CUDA device" % torch.__version__
    spec = importlib.util.spec_from_file_location("torch_eager", os.path.join(os.path.dirname(__file__),
                                                                             "torch_eager.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    mod.disable_tf32(torch)
    return torch, mod


def torch_runner(torch, te, model_bytes):
    interp = te.OnnxEagerInterpreter(onnx.load_from_string(model_bytes), te.TorchBackend("cuda"))

    def run(feeds):
        with torch.inference_mode():
            return interp.run(feeds)  # outputs come back with .cpu(): synchronized
    return interp, run


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", default="mlp,resnet50,bert,gpt2")
    ap.add_argument("--batches", default="1,32")
    ap.add_argument("--repeat", type=int, default=30)
    ap.add_argument("--fp16", action="store_true", help="float16 versions of the models")
    args = ap.parse_args()
    tol = 1e-2 if args.fp16 else 1e-3
    if "CUDAExecutionProvider" not in rt.get_available_providers():
        from onyxruntime.capi import _providers
        print("CUDA is not available: %s" % _providers.unavailable_reason("CUDAExecutionProvider"))
        return 2
    try:
        import onnxruntime as ort
        ort_cuda = "CUDAExecutionProvider" in ort.get_available_providers()
    except ImportError:
        ort, ort_cuda = None, False
    torch, te = load_torch_eager()
    print("peers: onnxruntime-cuda %s, torch-eager %s" % (
        "yes" if ort_cuda else "no",
        "torch %s (TF32 off)" % torch.__version__ if torch is not None else "no: %s" % te), flush=True)
    if torch is None:
        te = None

    def diff(err):
        return " (max rel diff vs CPU %.1e%s)" % (err, "" if err < tol else " MISMATCH") if err is not None else ""

    out_dir = os.environ.get("ONYX_MODEL_DIR", os.path.join(tempfile.gettempdir(), "onyx_bench_models"))
    for name in args.models.split(","):
        model32 = mlp_model() if name == "mlp" else generated_model(name, out_dir)
        model = model32
        if args.fp16:
            sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
            from fp16_model import to_float16
            model = to_float16(onnx.load_from_string(model32)).SerializeToString()
        onyx = rt.InferenceSession(model, providers=["CUDAExecutionProvider", "CPUExecutionProvider"])
        cpu = rt.InferenceSession(model32, providers=["CPUExecutionProvider"])
        ort_sess = ort.InferenceSession(model, providers=["CUDAExecutionProvider"]) if ort_cuda else None
        interp, run_torch = None, None
        if te is not None:
            try:
                interp, run_torch = torch_runner(torch, te, model)
            except Exception as e:  # an op the interpreter lacks: no torch column for this model
                print("%s torch-eager unavailable: %s" % (name, e), flush=True)
        for batch in (int(b) for b in args.batches.split(",")):
            feeds32 = feeds_for(cpu, batch)
            feeds = {k: v.astype(np.float16) if args.fp16 and v.dtype == np.float32 else v for k, v in feeds32.items()}
            want = cpu.run(None, feeds32) if batch == 1 or name == "mlp" else None
            err = compare(onyx.run(None, feeds), want) if want is not None else None
            onyx_ms = timed(lambda: onyx.run(None, feeds), args.repeat)
            line = "%s%s b%d onyx-cuda %.3f ms%s" % (name, "-fp16" if args.fp16 else "", batch, onyx_ms, diff(err))
            if ort_sess is not None:
                ms = timed(lambda: ort_sess.run(None, feeds), args.repeat)
                line += ", onnxruntime-cuda %.3f ms (onyx/ort %.2f)" % (ms, onyx_ms / ms)
            if run_torch is not None:
                try:
                    terr = compare(run_torch(feeds), want) if want is not None else None
                    ms = timed(lambda: run_torch(feeds), args.repeat)
                    line += ", torch-eager %.3f ms%s (onyx/torch %.2f)" % (ms, diff(terr), onyx_ms / ms)
                except Exception as e:  # e.g. out of memory: report it, keep the other columns
                    line += ", torch-eager failed: %s" % str(e).splitlines()[0][:200]
            print(line, flush=True)
        del onyx, cpu, ort_sess, interp, run_torch
        if torch is not None:
            torch.cuda.empty_cache()
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""run() against run_with_iobinding() into pre-allocated outputs, on onnxruntime
and onyxruntime side by side, in one process.

A benchmark, not a test: it prints p50 latencies and ratios and checks only
that the bound output equals run()'s. The models are small on purpose: the
per-call overhead that IO binding removes (output allocation, conversion to
numpy) is what is measured, so a large model would hide it.

    python tests/bench/bench_iobinding.py [--repeat 2000] [--threads 1]
"""

import argparse
import importlib
import os
import sys
import time

import numpy as np
from onnx import TensorProto, helper

REPO_ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir, os.pardir))
sys.path.insert(0, os.environ.get("ONYX_PYTHONPATH", os.path.join(REPO_ROOT, "build", "python")))


def model(n, depth=4):
    nodes, prev = [], "X"
    for i in range(depth):
        nodes.append(helper.make_node("Relu" if i % 2 == 0 else "Neg", [prev], ["T%d" % i]))
        prev = "T%d" % i
    nodes.append(helper.make_node("Identity", [prev], ["Y"]))
    graph = helper.make_graph(nodes, "chain", [helper.make_tensor_value_info("X", TensorProto.FLOAT, [n])],
                              [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [n])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8).SerializeToString()


def p50(fn, repeat):
    for _ in range(max(10, repeat // 20)):
        fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return float(np.median(times)) * 1e6


def bench(rt, n, repeat, threads):
    so = rt.SessionOptions()
    so.intra_op_num_threads = threads
    sess = rt.InferenceSession(model(n), so, providers=["CPUExecutionProvider"])
    x = np.random.default_rng(0).standard_normal(n).astype(np.float32)
    y = np.empty(n, np.float32)
    binding = sess.io_binding()
    binding.bind_cpu_input("X", x)
    binding.bind_output("Y", "cpu", 0, np.float32, [n], y.ctypes.data)
    sess.run_with_iobinding(binding)
    np.testing.assert_array_equal(y, sess.run(None, {"X": x})[0])
    return p50(lambda: sess.run(None, {"X": x}), repeat), p50(lambda: sess.run_with_iobinding(binding), repeat)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=2000)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    runtimes = {name: importlib.import_module(name) for name in ("onnxruntime", "onyxruntime")}
    print("p50 in microseconds per call; ratio = onyx / ort (below 1: Onyx faster)")
    print("%-10s %12s %12s %12s %12s %10s %10s" % ("elements", "ORT run", "ORT bound", "Onyx run", "Onyx bound",
                                                   "run ratio", "bound ratio"))
    for n in (16, 4096, 1 << 20):
        (ort_run, ort_bound), (onyx_run, onyx_bound) = (bench(runtimes[k], n, args.repeat if n < 1 << 20 else 200,
                                                             args.threads) for k in ("onnxruntime", "onyxruntime"))
        print("%-10d %12.1f %12.1f %12.1f %12.1f %10.2f %10.2f" % (n, ort_run, ort_bound, onyx_run, onyx_bound,
                                                                  onyx_run / ort_run, onyx_bound / ort_bound))


if __name__ == "__main__":
    main()

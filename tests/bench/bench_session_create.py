"""Session creation time of the benchmark models, one fresh process per build and
model, rounds interleaved: the first session of a process (which pays for ONNX's
schema registration) and the median of the following ones.

    .venv/bin/python tests/bench/bench_session_create.py build/python [other/build/python ...]

Each argument is a staged Python package directory (build/python); with two,
the second column is divided by the first.
"""

import json
import os
import subprocess
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir, os.pardir))
MODELS = ["mobilenetv2", "resnet50", "bert"]
CHILD = r"""
import json, statistics, sys, time
sys.path.insert(0, sys.argv[1])
import onyxruntime as rt
path = sys.argv[2]
so = rt.SessionOptions()
so.intra_op_num_threads = 1
t = time.perf_counter(); rt.InferenceSession(path, so); first = time.perf_counter() - t
rest = []
for _ in range(5):
    t = time.perf_counter(); rt.InferenceSession(path, so); rest.append(time.perf_counter() - t)
print(json.dumps({"first_ms": first * 1e3, "median_ms": statistics.median(rest) * 1e3}))
"""


def measure(pkg, model):
    path = os.path.join(ROOT, "build", "models", model + ".onnx")
    out = subprocess.run([sys.executable, "-c", CHILD, pkg, path], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(pkgs, rounds=3):
    best = {}
    for _ in range(rounds):
        for model in MODELS:
            for pkg in pkgs:
                r = measure(pkg, model)
                b = best.setdefault((pkg, model), dict(r))
                for k in r:
                    b[k] = min(b[k], r[k])
    for model in MODELS:
        cells = []
        for pkg in pkgs:
            r = best[(pkg, model)]
            cells.append("first %7.1f ms  next %7.1f ms" % (r["first_ms"], r["median_ms"]))
        line = "%-12s %s" % (model, "  |  ".join(cells))
        if len(pkgs) == 2:
            a, b = best[(pkgs[0], model)], best[(pkgs[1], model)]
            line += "   ratio first %.2f next %.2f" % (b["first_ms"] / a["first_ms"], b["median_ms"] / a["median_ms"])
        print(line)


if __name__ == "__main__":
    main(sys.argv[1:] or [os.path.join(ROOT, "build", "python")])

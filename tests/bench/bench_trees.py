#!/usr/bin/env python3
"""Tree-ensemble latency, onyxruntime against onnxruntime.

A benchmark, not a test: it measures and prints; it asserts only that both
runtimes give the same labels and scores (a fast wrong answer is not a result).

    python tests/bench/bench_trees.py [--threads 2] [--rounds 15] [--repeat 20]

Models (built here, small training sets, seeded):
  rf   scikit-learn RandomForestClassifier, 100 trees, max_depth 10, 3 classes
  xgb  XGBoost XGBRegressor, 200 trees (max_depth 6), via onnxmltools
each at 1 row and 10,000 rows. Each runtime runs in its own process (so neither
one's thread pool or allocator disturbs the other), with intra-op threads =
--threads and inter-op threads = 1. Rounds are interleaved: every round times
each case on one runtime then the other, alternating which goes first; a
round's time is the median of --repeat runs. Printed: the median over rounds
per runtime and the ratio onyx/onnxruntime (below 1: onyx is faster).
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

REPO_ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir, os.pardir))
ONYX_PYTHONPATH = os.environ.get("ONYX_PYTHONPATH", os.path.join(REPO_ROOT, "build", "python"))
FEATURES = 20
BATCHES = (1, 10000)


def build_models(directory):
    from sklearn.ensemble import RandomForestClassifier
    from skl2onnx import to_onnx
    import xgboost
    from onnxmltools.convert import convert_xgboost
    from onnxmltools.convert.common.data_types import FloatTensorType

    rng = np.random.RandomState(0)
    X = rng.randn(20000, FEATURES).astype(np.float32)
    y3 = np.digitize(X[:, 0] + X[:, 1] * X[:, 2] + 0.5 * rng.randn(20000), [-0.5, 0.5])
    yr = (X[:, 0] * 2 + np.sin(X[:, 1]) * X[:, 3] + 0.1 * rng.randn(20000)).astype(np.float32)
    rf = RandomForestClassifier(n_estimators=100, max_depth=10, random_state=0, n_jobs=2).fit(X, y3)
    onx = to_onnx(rf, X[:1], options={"zipmap": False}, target_opset={"": 17, "ai.onnx.ml": 3})
    paths = {"rf": os.path.join(directory, "rf.onnx"), "xgb": os.path.join(directory, "xgb.onnx")}
    with open(paths["rf"], "wb") as f:
        f.write(onx.SerializeToString())
    xgb = xgboost.XGBRegressor(n_estimators=200, max_depth=6, random_state=0, n_jobs=2).fit(X, yr)
    onx = convert_xgboost(xgb, initial_types=[("X", FloatTensorType([None, FEATURES]))], target_opset=15)
    with open(paths["xgb"], "wb") as f:
        f.write(onx.SerializeToString())
    return paths


def inputs(batch):
    return np.random.RandomState(batch).randn(batch, FEATURES).astype(np.float32)


def worker(runtime, paths, threads, out_dir):
    """Serves timing requests on stdin: one JSON line in, one JSON line out."""
    if runtime == "onyx":
        sys.path.insert(0, ONYX_PYTHONPATH)
        import onyxruntime as rt
    else:
        import onnxruntime as rt
    so = rt.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    sessions = {name: rt.InferenceSession(p, so, providers=["CPUExecutionProvider"]) for name, p in paths.items()}
    feeds = {b: inputs(b) for b in BATCHES}
    for name, sess in sessions.items():
        outs = sess.run(None, {sess.get_inputs()[0].name: feeds[BATCHES[-1]]})
        np.savez(os.path.join(out_dir, "%s_%s.npz" % (runtime, name)), *outs)
    print(json.dumps({"ready": True}), flush=True)
    for line in sys.stdin:
        req = json.loads(line)
        sess = sessions[req["model"]]
        feed = {sess.get_inputs()[0].name: feeds[req["batch"]]}
        for _ in range(2):
            sess.run(None, feed)
        times = []
        for _ in range(req["repeat"]):
            t0 = time.perf_counter()
            sess.run(None, feed)
            times.append(time.perf_counter() - t0)
        print(json.dumps({"median": float(np.median(times))}), flush=True)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--paths", help=argparse.SUPPRESS)
    ap.add_argument("--out", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        return worker(args.worker, json.loads(args.paths), args.threads, args.out)

    with tempfile.TemporaryDirectory() as tmp:
        paths = build_models(tmp)
        procs = {}
        for runtime in ("onnxruntime", "onyx"):
            cmd = [sys.executable, os.path.abspath(__file__), "--worker", runtime, "--paths", json.dumps(paths),
                   "--threads", str(args.threads), "--out", tmp]
            procs[runtime] = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
            assert json.loads(procs[runtime].stdout.readline())["ready"]
        # Same answers first.
        for name in paths:
            a = np.load(os.path.join(tmp, "onnxruntime_%s.npz" % name))
            b = np.load(os.path.join(tmp, "onyx_%s.npz" % name))
            for k in a.files:
                if a[k].dtype.kind in "iu":
                    assert np.array_equal(a[k], b[k]), "%s: labels differ" % name
                else:
                    np.testing.assert_allclose(b[k], a[k], rtol=1e-4, atol=1e-4, err_msg=name)
        cases = [(m, b) for m in ("rf", "xgb") for b in BATCHES]
        results = {(c, r): [] for c in cases for r in procs}
        for rnd in range(args.rounds):
            order = ("onnxruntime", "onyx") if rnd % 2 == 0 else ("onyx", "onnxruntime")
            for case in cases:
                for runtime in order:
                    p = procs[runtime]
                    p.stdin.write(json.dumps({"model": case[0], "batch": case[1], "repeat": args.repeat}) + "\n")
                    p.stdin.flush()
                    results[(case, runtime)].append(json.loads(p.stdout.readline())["median"])
        for p in procs.values():
            p.stdin.close()
            p.wait()
    print("threads=%d rounds=%d repeat=%d (median of round medians)" % (args.threads, args.rounds, args.repeat))
    print("%-6s %7s %14s %14s %8s" % ("model", "rows", "onnxruntime", "onyx", "ratio"))
    for case in cases:
        o = float(np.median(results[(case, "onnxruntime")]))
        x = float(np.median(results[(case, "onyx")]))
        print("%-6s %7d %12.1fus %12.1fus %8.3f" % (case[0], case[1], o * 1e6, x * 1e6, x / o))


if __name__ == "__main__":
    sys.exit(main())

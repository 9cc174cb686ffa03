"""Per-operator time of Onyx Runtime and onnxruntime on one model, side by side.

    PYTHONPATH=build/python .venv/bin/python tests/bench/profile_ops.py \
        --case bert-int8 [--batch 1] [--threads 1,2] [--runs 20] [--by node]

A benchmark helper, not a test. Each runtime runs in its own process with
enable_profiling (ORT_ENABLE_ALL, sequential, intra_op threads as given), a
few warm-up runs, then --runs profiled runs; the kernel events' durations are
summed per op_name (or per node) within each run, and the median over runs
(or, --stat min, each node's fastest run: steadier on a shared machine) is
printed in microseconds, with the ratio Onyx/ORT. Model and feeds are the
benchmark's (tests/bench/bench_suite.py); --model takes any other model file
with the case's feeds.
"""

import argparse
import collections
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_suite  # noqa: E402

WORKER = r"""
import json, sys, numpy as np
spec = json.loads(sys.argv[1])
if spec["runtime"] == "Onyx":
    sys.path.insert(0, spec["onyx_path"])
    import onyxruntime as rt
else:
    import onnxruntime as rt
feeds = dict(np.load(spec["feeds"]))
so = rt.SessionOptions()
so.intra_op_num_threads = spec["threads"]
so.inter_op_num_threads = 1
so.execution_mode = rt.ExecutionMode.ORT_SEQUENTIAL
so.graph_optimization_level = rt.GraphOptimizationLevel.ORT_ENABLE_ALL
so.log_severity_level = 3
so.enable_profiling = True
so.profile_file_prefix = spec["prefix"]
s = rt.InferenceSession(spec["model"], so, providers=["CPUExecutionProvider"])
for _ in range(spec["warmup"]):
    s.run(None, feeds)
for _ in range(spec["runs"]):
    s.run(None, feeds)
print(s.end_profiling())
"""


def kernel_events(path):
    with open(path) as f:
        events = json.load(f)
    return [e for e in events if e.get("cat") == "Node" and e.get("name", "").endswith("_kernel_time")]


def per_run(events, runs, key):
    """[{node or op: us}] for the last `runs` runs: events split where a run starts over."""
    order = []
    for e in events:
        order.append((e["ts"], e))
    order.sort(key=lambda t: t[0])
    first_node = order[0][1]["name"] if order else None
    splits, cur = [], None
    for _, e in order:
        if e["name"] == first_node:
            cur = collections.defaultdict(float)
            splits.append(cur)
        k = e["name"][:-len("_kernel_time")]
        if key == "op":
            k = e["args"].get("op_name", "?") + "\0" + k
        cur[k] += e["dur"]
    return splits[-runs:]


def _sum_by_op(run):
    out = collections.defaultdict(float)
    for k, v in run.items():
        out[k.split("\0")[0]] += v
    return out


def profile(runtime, model, feeds_path, threads, runs, warmup, tmp, key, stat):
    prefix = os.path.join(tmp, "%s_t%d" % (runtime, threads))
    spec = {"runtime": runtime, "onyx_path": bench_suite.ONYX_PYTHONPATH, "feeds": feeds_path, "model": model,
            "threads": threads, "runs": runs, "warmup": warmup, "prefix": prefix}
    out = subprocess.run([sys.executable, "-c", WORKER, json.dumps(spec)], check=True, capture_output=True,
                         text=True).stdout.strip().splitlines()[-1]
    runs_ = per_run(kernel_events(out), runs, key)
    if stat == "min":
        # Each node's fastest run, then summed: steadier on a shared machine.
        nodes = set().union(*runs_)
        best = {n: min(r.get(n, 0.0) for r in runs_) for n in nodes}
        runs_ = [best]
    if key == "op":
        runs_ = [_sum_by_op(r) for r in runs_]
    keys = set().union(*runs_)
    med = {k: float(np.median([r.get(k, 0.0) for r in runs_])) for k in keys}
    total = float(np.median([sum(r.values()) for r in runs_]))
    counts = collections.Counter()
    if key == "op":
        for e in kernel_events(out):
            counts[e["args"].get("op_name", "?")] += 1
        counts = {k: v // (runs + warmup) for k, v in counts.items()}
    return med, total, counts


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--case", default="bert-int8")
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--by", choices=("op", "node"), default="op")
    ap.add_argument("--stat", choices=("median", "min"), default="median",
                    help="median over runs of each run's sum, or each node's fastest run summed")
    ap.add_argument("--model")
    ap.add_argument("--model-dir", default=os.environ.get("ONYX_MODEL_DIR",
                                                           os.path.join(bench_suite.REPO_ROOT, "build", "models")))
    ap.add_argument("--top", type=int, default=40)
    args = ap.parse_args()
    model = args.model or bench_suite.ensure_case_model(args.case, args.model_dir, False)
    feeds = bench_suite.make_feeds(args.case, args.batch, bench_suite.model_info_of(args.case, False))
    with tempfile.TemporaryDirectory() as tmp:
        feeds_path = os.path.join(tmp, "feeds.npz")
        np.savez(feeds_path, **feeds)
        for t in map(int, args.threads.split(",")):
            res = {}
            for rtname in ("ORT", "Onyx"):
                res[rtname] = profile(rtname, model, feeds_path, t, args.runs, args.warmup, tmp, args.by, args.stat)
            (om, ot, oc), (xm, xt, xc) = res["ORT"], res["Onyx"]
            print("\n%s b%d, %d thread(s): kernel time per run, %s of %d runs (us)" % (
                args.case, args.batch, t, args.stat, args.runs))
            print("%-44s %10s %5s %10s %5s %7s" % (args.by, "ORT", "n", "Onyx", "n", "O/X"))
            keys = sorted(set(om) | set(xm), key=lambda k: -max(om.get(k, 0), xm.get(k, 0)))
            for k in keys[:args.top]:
                o, x = om.get(k, 0.0), xm.get(k, 0.0)
                print("%-44s %10.0f %5s %10.0f %5s %7s" % (k[:44], o, oc.get(k, "") if args.by == "op" else "",
                                                           x, xc.get(k, "") if args.by == "op" else "",
                                                           "%.2f" % (x / o) if o > 0 else "-"))
            print("%-44s %10.0f %5s %10.0f %5s %7.2f" % ("TOTAL", ot, "", xt, "", xt / ot))


if __name__ == "__main__":
    main()

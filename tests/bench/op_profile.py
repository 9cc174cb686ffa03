#!/usr/bin/env python3
"""Per-operator profile of one benchmark case in onyxruntime and onnxruntime.

    PYTHONPATH=build/python .venv/bin/python tests/bench/op_profile.py --case gpt2-decode
        [--batch 1] [--threads 1] [--runs 20] [--model-dir build/models] [--model FILE] [--top 25] [--nodes]
        [--stat median|min] [--baseline-onyx PYTHONPATH] [--onyx-config KEY=VALUE ...]
        [--baseline-config KEY=VALUE ...]

Each runtime runs in its own process with enable_profiling=True on the same
model and seeded feeds as bench_suite.py; the two processes take turns, a few
runs each (with a pause between, for the other's spinning workers to sleep),
so a noisy neighbour slows both alike.
For every run it sums the "Node" events' durations by op_name (and by node
with --nodes); --model profiles another model file with the case's feeds
(e.g. a variant of it); the table shows the medians (or minima) over the runs, the ratio Onyx/ORT,
and the time outside kernels (the Python run call's wall time minus the sum of
node times: executor overhead, allocations, binding).

The onyxruntime profiled is the one under ONYX_PYTHONPATH (default
build/python), whatever PYTHONPATH says; the script prints which, and refuses
a --baseline-onyx that is the same folder (an A/B of a build with itself)
unless the two take different session config entries (--onyx-config,
--baseline-config: an A/B of one build's switch, e.g.
session.conv.winograd_f4=0).
"""

import argparse
import glob
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bench_suite  # noqa: E402

WORKER = r"""
import json, os, sys, time, numpy as np
spec = json.loads(sys.argv[1])
if spec["onyx_path"]:
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
for key, value in spec["config"].items():
    so.add_session_config_entry(key, value)
sess = rt.InferenceSession(spec["path"], so, providers=["CPUExecutionProvider"])
for _ in range(3):
    sess.run(None, feeds)
print("ready", flush=True)
walls = []
for line in sys.stdin:
    n = int(line)
    if n == 0:
        break
    for _ in range(n):
        t0 = time.perf_counter()
        sess.run(None, feeds)
        walls.append((time.perf_counter() - t0) * 1e6)
    print("done", flush=True)
path = sess.end_profiling()
print(json.dumps({"profile": path, "walls": walls}), flush=True)
"""


def start_runtime(runtime, onyx_path, model, feeds_path, threads, runs, tmp, config=None):
    spec = {"runtime": runtime, "onyx_path": onyx_path, "feeds": feeds_path,
            "threads": threads, "path": model, "runs": runs, "config": config or {},
            "prefix": os.path.join(tmp, runtime.lower())}
    proc = subprocess.Popen([sys.executable, "-c", WORKER, json.dumps(spec)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    if proc.stdout.readline().strip() != "ready":
        raise RuntimeError(runtime + " worker failed")
    return proc


def run_some(proc, n):
    proc.stdin.write("%d\n" % n)
    proc.stdin.flush()
    if proc.stdout.readline().strip() != "done":
        raise RuntimeError("worker failed")
    time.sleep(0.05)


def finish_runtime(proc, runs, stat):
    proc.stdin.write("0\n")
    proc.stdin.flush()
    res = json.loads(proc.stdout.readline())
    proc.wait()
    with open(res["profile"]) as f:
        events = json.load(f)
    node_events = [e for e in events if e.get("cat") == "Node" and e["name"].endswith("_kernel_time")]
    # The last `runs` runs: split the node events into runs by the warm-up count.
    per_run = len(node_events) // (runs + 3)
    node_events = node_events[-per_run * runs:] if per_run else []
    by_op = [dict() for _ in range(runs)]
    by_node = [dict() for _ in range(runs)]
    for i, e in enumerate(node_events):
        r = i // per_run
        op = e["args"].get("op_name", "?")
        by_op[r][op] = by_op[r].get(op, 0) + e["dur"]
        by_node[r][(e["name"][:-len("_kernel_time")], op)] = by_node[r].get(
            (e["name"][:-len("_kernel_time")], op), 0) + e["dur"]
    kernels = [sum(d.values()) for d in by_op]
    agg = np.median if stat == "median" else np.min
    return {"wall": float(agg(res["walls"])), "kernels": float(agg(kernels)),
            "outside": float(agg(np.array(res["walls"]) - np.array(kernels))),
            "ops": {k: float(agg([d.get(k, 0) for d in by_op])) for k in set().union(*by_op)},
            "count": {k: sum(1 for n in by_node[0] if n[1] == k) for k in by_op[0]},
            "nodes": {k: float(agg([d.get(k, 0) for d in by_node])) for k in set().union(*by_node)}}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--case", required=True)
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--model-dir", default=os.path.join(bench_suite.REPO_ROOT, "build", "models"))
    ap.add_argument("--model", help="this model file instead of the case's (fed the case's inputs)")
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--nodes", action="store_true")
    ap.add_argument("--stat", choices=("median", "min"), default="median",
                    help="per op and node over the runs (min: steadier on a busy machine)")
    ap.add_argument("--baseline-onyx", default="", metavar="PYTHONPATH",
                    help="compare with the onyxruntime under PYTHONPATH (another build) instead of onnxruntime")
    ap.add_argument("--onyx-config", action="append", default=[], metavar="KEY=VALUE",
                    help="a session config entry for the onyxruntime under test (repeatable)")
    ap.add_argument("--baseline-config", action="append", default=[], metavar="KEY=VALUE",
                    help="a session config entry for the --baseline-onyx one (repeatable)")
    args = ap.parse_args()

    def entries(items):
        out = {}
        for item in items:
            if "=" not in item:
                ap.error("config entry %r is not KEY=VALUE" % item)
            key, value = item.split("=", 1)
            out[key] = value
        return out
    onyx_config, base_config = entries(args.onyx_config), entries(args.baseline_config)
    if base_config and not args.baseline_onyx:
        ap.error("--baseline-config needs --baseline-onyx (onnxruntime takes no onyxruntime config)")
    print("onyxruntime under test: %s (ONYX_PYTHONPATH; PYTHONPATH does not choose it)" % bench_suite.ONYX_PYTHONPATH)
    if args.baseline_onyx:
        if (os.path.realpath(args.baseline_onyx) == os.path.realpath(bench_suite.ONYX_PYTHONPATH)
                and onyx_config == base_config):
            ap.error("--baseline-onyx %s is the build under test (ONYX_PYTHONPATH): set ONYX_PYTHONPATH to the "
                     "other build, or give the two different config entries" % args.baseline_onyx)
        print("baseline onyxruntime: %s" % args.baseline_onyx)
    model = args.model or bench_suite.ensure_case_model(args.case, args.model_dir, False)
    info = bench_suite.model_info_of(args.case, False)
    feeds = bench_suite.make_feeds(args.case, args.batch, info)
    with tempfile.TemporaryDirectory() as tmp:
        feeds_path = os.path.join(tmp, "feeds.npz")
        np.savez(feeds_path, **feeds)
        procs = [start_runtime("base", args.baseline_onyx, model, feeds_path, args.threads, args.runs, tmp,
                               base_config),
                 start_runtime("onyx", bench_suite.ONYX_PYTHONPATH, model, feeds_path, args.threads, args.runs, tmp,
                               onyx_config)]
        chunk = max(1, args.runs // 5)
        done = 0
        while done < args.runs:
            n = min(chunk, args.runs - done)
            for p in (procs if done // chunk % 2 == 0 else procs[::-1]):
                run_some(p, n)
            done += n
        ort, onyx = (finish_runtime(p, args.runs, args.stat) for p in procs)
    base = "base" if args.baseline_onyx else "ORT"
    print("%s b%d, %d thread(s), %s of %d runs, microseconds; %s = %s" % (
        args.case, args.batch, args.threads, args.stat, args.runs, base, args.baseline_onyx or "onnxruntime"))
    print("%-28s %6s %10s %6s %10s %7s" % ("op", "n " + base, base, "n Onyx", "Onyx", "ratio"))
    ops = sorted(set(ort["ops"]) | set(onyx["ops"]), key=lambda k: -max(ort["ops"].get(k, 0), onyx["ops"].get(k, 0)))
    for k in ops[:args.top]:
        a, b = ort["ops"].get(k, 0), onyx["ops"].get(k, 0)
        print("%-28s %6d %10.0f %6d %10.0f %7s" % (k[:28], ort["count"].get(k, 0), a, onyx["count"].get(k, 0), b,
                                              "%.3f" % (b / a) if a else "-"))
    for label in ("kernels", "outside", "wall"):
        print("%-28s %6s %10.0f %6s %10.0f %7.3f" % ("[" + label + "]", "", ort[label], "", onyx[label],
                                                onyx[label] / ort[label] if ort[label] else 0))
    if args.nodes:
        for name, prof in ((base, ort), ("Onyx", onyx)):
            print("\n%s nodes:" % name)
            for k, v in sorted(prof["nodes"].items(), key=lambda kv: -kv[1])[:args.top]:
                print("  %-60s %-22s %9.0f" % (k[0][:60], k[1], v))


if __name__ == "__main__":
    main()

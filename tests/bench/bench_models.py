#!/usr/bin/env python3
"""Side-by-side latency of onyxruntime and onnxruntime on the generated models.

A benchmark, not a test: it measures and prints, it asserts nothing except that the
two runtimes agree on the outputs (a fast wrong answer is not a result).

    python tests/bench/bench_models.py [--models resnet50,mobilenetv2,bert]
        [--batches 1,4] [--seq 128] [--threads N] [--warmup 3] [--repeat 20]
        [--model-dir DIR] [--small] [--no-rss]

Runtimes, all in this process, same inputs, same thread count (intra-op = --threads,
inter-op = 1, sequential execution):
  ORT       onnxruntime, ORT_ENABLE_ALL (its default; the fair peer)
  ORT-noopt onnxruntime, ORT_DISABLE_ALL
  Onyx      onyxruntime with its default options
"ratio" is Onyx p50 / ORT p50 (below 1 means Onyx is faster).
Peak RSS delta: each runtime loads and runs the model in a fresh subprocess, which
reads VmHWM from /proc/self/status before creating the session and after the runs.
"""

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import time

import numpy as np

REPO_ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir, os.pardir))
ONYX_PYTHONPATH = os.environ.get("ONYX_PYTHONPATH", os.path.join(REPO_ROOT, "build", "python"))
MODELS = ("resnet50", "mobilenetv2", "bert")
RUNTIMES = ("ORT", "ORT-noopt", "Onyx")


def load_generator():
    path = os.path.join(REPO_ROOT, "tests", "models", "generate.py")
    spec = importlib.util.spec_from_file_location("onyx_test_model_generator", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def import_onyx():
    if ONYX_PYTHONPATH not in sys.path:
        sys.path.insert(0, ONYX_PYTHONPATH)
    try:
        import onyxruntime
        return onyxruntime, None
    except ImportError as e:
        return None, str(e)


def make_inputs(name, batch, seq, vocab):
    rng = np.random.default_rng([sum(map(ord, name)), batch, seq])
    if name != "bert":
        return {"input": rng.standard_normal((batch, 3, 224, 224), dtype=np.float32)}
    ids = rng.integers(0, vocab, (batch, seq), dtype=np.int64)
    mask = np.ones((batch, seq), dtype=np.int64)
    for i in range(1, batch):
        mask[i, max(1, seq - (i * seq) // batch):] = 0
    types = np.zeros((batch, seq), dtype=np.int64)
    types[:, seq // 2:] = 1
    return {"input_ids": ids, "attention_mask": mask, "token_type_ids": types * mask}


def _set_threads(so, threads):
    for attr, val in (("intra_op_num_threads", threads), ("inter_op_num_threads", 1)):
        try:
            setattr(so, attr, val)
        except (AttributeError, TypeError, ValueError):
            pass


def make_session(runtime, path, threads, onyx=None):
    if runtime == "Onyx":
        so = onyx.SessionOptions()
        _set_threads(so, threads)
        return onyx.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    import onnxruntime as ort
    so = ort.SessionOptions()
    _set_threads(so, threads)
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.graph_optimization_level = (ort.GraphOptimizationLevel.ORT_ENABLE_ALL if runtime == "ORT"
                                   else ort.GraphOptimizationLevel.ORT_DISABLE_ALL)
    return ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])


def time_runs(sess, feeds, warmup, repeat):
    out = None
    for _ in range(warmup):
        out = sess.run(None, feeds)
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = sess.run(None, feeds)
        times.append((time.perf_counter() - t0) * 1e3)
    return np.array(times), out


def max_rel_diff(a, b):
    worst = 0.0
    for x, y in zip(a, b):
        if x.shape != y.shape:
            return float("inf")
        scale = max(1.0, float(np.abs(y).max()))
        worst = max(worst, float(np.abs(x.astype(np.float64) - y).max()) / scale)
    return worst


def vm_hwm_kb():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return None


def rss_child(args):
    """Subprocess body: peak RSS growth from session creation plus a few runs."""
    onyx = None
    if args.rss_runtime == "Onyx":
        onyx, err = import_onyx()
        if onyx is None:
            print(json.dumps({"error": err}))
            return 0
    if args.rss_runtime != "Onyx":
        import onnxruntime  # noqa: F401  (imported before the baseline, like onyx)
    feeds = make_inputs(args.rss_model, args.rss_batch, args.seq, args.rss_vocab)
    before = vm_hwm_kb()
    sess = make_session(args.rss_runtime, args.rss_path, args.threads, onyx)
    for _ in range(2):
        sess.run(None, feeds)
    after = vm_hwm_kb()
    print(json.dumps({"before_kb": before, "after_kb": after}))
    return 0


def measure_rss(runtime, name, path, batch, vocab, args):
    cmd = [sys.executable, os.path.abspath(__file__), "--_rss-child", runtime,
           "--_rss-model", name, "--_rss-path", path, "--_rss-batch", str(batch),
           "--_rss-vocab", str(vocab), "--seq", str(args.seq), "--threads", str(args.threads)]
    try:
        res = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        data = json.loads(res.stdout.strip().splitlines()[-1])
    except (subprocess.SubprocessError, ValueError, IndexError):
        return None
    if "error" in data or data.get("before_kb") is None:
        return None
    return (data["after_kb"] - data["before_kb"]) / 1024.0


def fmt(v, spec="%.2f"):
    return "n/a" if v is None else spec % v


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--batches", default="1,4")
    ap.add_argument("--seq", type=int, default=128, help="BERT sequence length")
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--model-dir", default=os.environ.get("ONYX_MODEL_DIR")
                    or os.path.join(REPO_ROOT, "build", "models"))
    ap.add_argument("--small", action="store_true", help="small BERT (2 layers)")
    ap.add_argument("--no-rss", action="store_true", help="skip the peak-RSS subprocesses")
    ap.add_argument("--_rss-child", dest="rss_runtime", help=argparse.SUPPRESS)
    ap.add_argument("--_rss-model", dest="rss_model", help=argparse.SUPPRESS)
    ap.add_argument("--_rss-path", dest="rss_path", help=argparse.SUPPRESS)
    ap.add_argument("--_rss-batch", dest="rss_batch", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--_rss-vocab", dest="rss_vocab", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.rss_runtime:
        return rss_child(args)

    import onnxruntime as ort
    gen = load_generator()
    onyx, onyx_err = import_onyx()
    names = [n.strip() for n in args.models.split(",") if n.strip()]
    batches = [int(b) for b in args.batches.split(",") if b.strip()]
    vocab = gen.bert_config(args.small)["vocab"]

    print("onnxruntime %s; onyxruntime %s; threads=%d warmup=%d repeat=%d; BERT seq=%d%s"
          % (ort.__version__,
             getattr(onyx, "__version__", "?") if onyx else "NOT AVAILABLE (%s)" % onyx_err,
             args.threads, args.warmup, args.repeat, args.seq, " (small)" if args.small else ""))
    if not os.path.exists("/proc/self/status") and not args.no_rss:
        print("note: no /proc/self/status, peak RSS skipped")
        args.no_rss = True

    header = ("model", "batch", "ORT p50", "ORT p90", "noopt p50", "noopt p90",
              "Onyx p50", "Onyx p90", "onyx/ort", "max|diff|", "RSS ORT MB", "RSS Onyx MB")
    rows = []
    for name in names:
        d = os.path.join(args.model_dir, "small") if (args.small and name == "bert") else args.model_dir
        path = gen.ensure_model(d, name, small=args.small)
        sessions = {}
        for rt_name in RUNTIMES:
            if rt_name == "Onyx" and onyx is None:
                continue
            try:
                sessions[rt_name] = make_session(rt_name, path, args.threads, onyx)
            except Exception as e:  # report and keep measuring the others
                print("%s: %s session failed: %s" % (name, rt_name, e))
        for batch in batches:
            feeds = make_inputs(name, batch, args.seq, vocab)
            stats, outs = {}, {}
            for rt_name, sess in sessions.items():
                try:
                    t, outs[rt_name] = time_runs(sess, feeds, args.warmup, args.repeat)
                    stats[rt_name] = (np.percentile(t, 50), np.percentile(t, 90))
                except Exception as e:
                    print("%s batch %d: %s run failed: %s" % (name, batch, rt_name, e))
            p = lambda r, i: stats[r][i] if r in stats else None  # noqa: E731
            ratio = (p("Onyx", 0) / p("ORT", 0)) if ("Onyx" in stats and "ORT" in stats) else None
            diff = (max_rel_diff(outs["Onyx"], outs["ORT-noopt"])
                    if ("Onyx" in outs and "ORT-noopt" in outs) else None)
            rss_ort = rss_onyx = None
            if not args.no_rss:
                rss_ort = measure_rss("ORT", name, path, batch, vocab, args)
                if onyx is not None:
                    rss_onyx = measure_rss("Onyx", name, path, batch, vocab, args)
            row = (name, str(batch), fmt(p("ORT", 0)), fmt(p("ORT", 1)), fmt(p("ORT-noopt", 0)),
                   fmt(p("ORT-noopt", 1)), fmt(p("Onyx", 0)), fmt(p("Onyx", 1)),
                   fmt(ratio, "%.2fx"), fmt(diff, "%.1e"), fmt(rss_ort, "%.0f"),
                   fmt(rss_onyx, "%.0f"))
            rows.append(row)
            print("  " + " ".join(row), flush=True)
            if diff is not None and diff > 1e-3:
                print("  WARNING: %s batch %d: Onyx outputs differ from onnxruntime by %.1e "
                      "(relative); its timing is not comparable" % (name, batch, diff))
        sessions.clear()

    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h)
              for i, h in enumerate(header)]
    line = lambda cells: " | ".join(c.rjust(w) for c, w in zip(cells, widths))  # noqa: E731
    print()
    print("latency in ms; max|diff| = Onyx vs ORT-noopt, relative to max(1, |ref|max); "
          "RSS = peak RSS growth for session + 2 runs (fresh process)")
    print(line(header))
    print("-+-".join("-" * w for w in widths))
    for r in rows:
        print(line(r))
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""The CPU benchmark suite: onyxruntime against onnxruntime, side by side.

    PYTHONPATH=build/python .venv/bin/python tests/bench/bench_suite.py
        [--cases resnet50,mobilenetv2,bert,gpt2-prefill,gpt2-decode,bert-int8,resnet50-int8,mlp]
        [--batches 1,8] [--threads 2] [--rounds 5] [--round-seconds 1.0] [--quick]
        [--model-dir build/models] [--json results.json]

A benchmark, not a test: it measures and prints. Each runtime runs in its own
process (idle worker threads of one runtime would otherwise spin on the cores
the other is measured on), both processes live for the whole case, and their
timed rounds alternate (ORT, Onyx, Onyx, ORT, ...) with a short pause between,
so a noisy neighbour slows both alike; ratios come from one run.

Per case (model x batch) it prints median and p90 latency of each runtime,
the ratio Onyx/ORT (below 1: Onyx is faster), session creation (a fresh
process's first session, best of two processes per runtime run one at a
time), peak RSS growth from creation and runs (VmHWM), the
GFLOP/s Onyx achieves (multiply-adds counted from the graph's shapes) as a
share of the machine's SGEMM rate measured at the top, how far the two
runtimes' first outputs differ ("diff"), and how far Onyx's output at
optimization level 'all' is from its output at level 'disabled' on the same
feeds ("opt X", and onnxruntime's own "opt O" beside it: one more process
per runtime after the timed ones, so those sessions count in neither timing
nor RSS). The differences are max |a - b| over max(1, max |b|). The header names the CPU and the code path.

Models come from tests/models/generate.py (seeded, into --model-dir);
the int8 ones are made from them with onnxruntime.quantization (BERT:
quantize_dynamic; ResNet-50: quantize_static, QOperator, 4 seeded calibration
images) and cached beside them.
"""

import argparse
import importlib.util
import json
import os
import platform
import select
import subprocess
import sys
import tempfile
import time

import numpy as np

REPO_ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir, os.pardir))
ONYX_PYTHONPATH = os.environ.get("ONYX_PYTHONPATH", os.path.join(REPO_ROOT, "build", "python"))
CASES = ("resnet50", "mobilenetv2", "bert", "gpt2-prefill", "gpt2-decode", "bert-int8", "resnet50-int8", "mlp")
SEQ = 128        # BERT sequence and GPT-2 prefill length
PAST = 128       # GPT-2 decode: tokens already in the KV cache


def load_generator():
    path = os.path.join(REPO_ROOT, "tests", "models", "generate.py")
    spec = importlib.util.spec_from_file_location("onyx_test_model_generator", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


# --------------------------------------------------------------------------- models and inputs

def base_model(case):
    return {"gpt2-prefill": "gpt2", "gpt2-decode": "gpt2", "bert-int8": "bert",
            "resnet50-int8": "resnet50"}.get(case, case)


def make_feeds(case, batch, model_info):
    """Seeded inputs for `case`; model_info carries the sizes the feeds need."""
    rng = np.random.default_rng([sum(map(ord, case)), batch])
    base = base_model(case)
    if base in ("resnet50", "mobilenetv2"):
        return {"input": rng.standard_normal((batch, 3, 224, 224), dtype=np.float32)}
    if base == "mlp":
        return {"input": rng.standard_normal((batch, 64), dtype=np.float32)}
    if base == "bert":
        ids = rng.integers(0, model_info["vocab"], (batch, SEQ), dtype=np.int64)
        mask = np.ones((batch, SEQ), dtype=np.int64)
        types = np.zeros((batch, SEQ), dtype=np.int64)
        types[:, SEQ // 2:] = 1
        return {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
    # GPT-2: the prefill has an empty cache; a decode step one token and PAST cached.
    seq, past = (SEQ, 0) if case == "gpt2-prefill" else (1, PAST)
    feeds = {"input_ids": rng.integers(0, model_info["vocab"], (batch, seq), dtype=np.int64)}
    shape = (batch, model_info["heads"], past, model_info["head_dim"])
    for layer in range(model_info["layers"]):
        for kv in ("key", "value"):
            feeds["past_key_values.%d.%s" % (layer, kv)] = rng.standard_normal(shape, dtype=np.float32)
    return feeds


def model_info_of(case, small):
    gen = load_generator()
    base = base_model(case)
    if base == "bert":
        return {"vocab": gen.bert_config(small)["vocab"]}
    if base == "gpt2":
        c = gen.gpt2_config(small)
        return {"vocab": c["vocab"], "layers": c["layers"], "heads": c["heads"], "head_dim": c["hidden"] // c["heads"]}
    return {}


def ensure_case_model(case, model_dir, small):
    gen = load_generator()
    base = base_model(case)
    out_dir = os.path.join(model_dir, "small") if small and base in ("bert", "gpt2") else model_dir
    src = gen.ensure_model(out_dir, base, small=small, check=False)
    if not case.endswith("-int8"):
        return src
    dst = os.path.join(out_dir, "bench", base + "-int8.onnx")
    stamp = "%s %d" % (os.path.basename(src), os.path.getsize(src))
    if os.path.exists(dst) and os.path.exists(dst + ".stamp") and open(dst + ".stamp").read() == stamp:
        return dst
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    from onnxruntime import quantization as q
    tmp = dst + ".tmp.onnx"
    if base == "bert":
        q.quantize_dynamic(src, tmp, weight_type=q.QuantType.QInt8)
    else:
        class Reader(q.CalibrationDataReader):
            def __init__(self):
                rng = np.random.default_rng(11)
                self.items = iter([{"input": rng.standard_normal((1, 3, 224, 224), dtype=np.float32)}
                                   for _ in range(4)])

            def get_next(self):
                return next(self.items, None)
        q.quantize_static(src, tmp, Reader(), quant_format=q.QuantFormat.QOperator,
                          activation_type=q.QuantType.QUInt8, weight_type=q.QuantType.QInt8)
    os.replace(tmp, dst)
    with open(dst + ".stamp", "w") as f:
        f.write(stamp)
    return dst


FLOPS_PROBE = r"""
import json, sys, numpy as np, onnxruntime as ort
path, feeds_path, prof_dir = sys.argv[1:4]
feeds = dict(np.load(feeds_path))
so = ort.SessionOptions()
so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL  # the graph's own nodes
so.enable_profiling = True
so.profile_file_prefix = prof_dir + "/flops"
so.log_severity_level = 3
s = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
s.run(None, feeds)
print(s.end_profiling())
"""


def _dims(entry):
    return list(entry.values())[0] if entry else None


def count_flops(path, feeds, tmp):
    """2 x multiply-adds of MatMul, Gemm, Conv and their integer/quantized
    forms, from the shapes each node saw in one profiled onnxruntime run of
    the unoptimized graph (shape inference alone loses dims behind Range);
    None when the probe fails."""
    feeds_path = os.path.join(tmp, "flops_feeds.npz")
    np.savez(feeds_path, **feeds)
    out = subprocess.run([sys.executable, "-c", FLOPS_PROBE, path, feeds_path, tmp], capture_output=True, text=True,
                         timeout=1800)
    try:
        trace = json.load(open(out.stdout.strip().splitlines()[-1]))
    except (OSError, ValueError, IndexError):
        return None
    total = 0
    for ev in trace:
        args = ev.get("args", {})
        op = args.get("op_name")
        if ev.get("cat") != "Node" or not ev.get("name", "").endswith("_kernel_time") or op is None:
            continue
        ins = args.get("input_type_shape", [])
        outs = args.get("output_type_shape", [])
        y = _dims(outs[0]) if outs else None
        if y is None:
            continue
        if op in ("MatMul", "MatMulInteger", "DynamicQuantizeMatMul", "MatMulIntegerToFloat", "QLinearMatMul"):
            a = _dims(ins[0])
            total += 2 * int(np.prod(y)) * (a[-1] if a else 0)
        elif op in ("Gemm", "QGemm"):
            a = _dims(ins[0])
            k = a[1] if a[0] == y[0] else a[0]  # A is [M,K] or, transposed, [K,M]
            total += 2 * int(np.prod(y)) * k
        elif op in ("Conv", "ConvInteger", "QLinearConv"):
            w = _dims(ins[3] if op == "QLinearConv" else ins[1])
            total += 2 * int(np.prod(y)) * int(np.prod(w[1:]))
    return total


# --------------------------------------------------------------------------- worker process

def vm_hwm_kb():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return 0


def worker(args):
    """One runtime, one case: create, report, then run rounds on request."""
    spec = json.loads(args.worker_spec)
    if spec["runtime"] == "Onyx":
        sys.path.insert(0, ONYX_PYTHONPATH)
        import onyxruntime as rt
    else:
        import onnxruntime as rt
    feeds = make_feeds(spec["case"], spec["batch"], spec["info"])
    base_kb = vm_hwm_kb()
    so = rt.SessionOptions()
    so.intra_op_num_threads = spec["threads"]
    so.inter_op_num_threads = 1
    so.execution_mode = rt.ExecutionMode.ORT_SEQUENTIAL
    so.graph_optimization_level = (rt.GraphOptimizationLevel.ORT_DISABLE_ALL if spec.get("disabled")
                                   else rt.GraphOptimizationLevel.ORT_ENABLE_ALL)
    so.log_severity_level = 3
    t0 = time.perf_counter()
    sess = rt.InferenceSession(spec["path"], so, providers=["CPUExecutionProvider"])
    create_ms = (time.perf_counter() - t0) * 1e3
    # The first run waits for the parent's word: every runtime's session is
    # created while the other's process is idle (no thread of it spinning
    # after a run), so creation times compare like with like.
    print(json.dumps({"create_ms": create_ms}), flush=True)
    if spec.get("create_only"):
        return 0
    if json.loads(sys.stdin.readline())["cmd"] != "first":
        return 1
    t0 = time.perf_counter()
    out = sess.run(None, feeds)
    first_ms = (time.perf_counter() - t0) * 1e3
    np.save(spec["out"], out[0])
    print(json.dumps({"first_ms": first_ms}), flush=True)
    for line in sys.stdin:
        cmd = json.loads(line)
        if cmd["cmd"] == "quit":
            break
        times = []
        for _ in range(cmd["n"]):
            t0 = time.perf_counter()
            sess.run(None, feeds)
            times.append((time.perf_counter() - t0) * 1e3)
        print(json.dumps({"times": times}), flush=True)
    print(json.dumps({"rss_mb": (vm_hwm_kb() - base_kb) / 1024.0}), flush=True)
    return 0


class Worker:
    def __init__(self, runtime, case, batch, path, info, threads, out, create_only=False, disabled=False):
        spec = {"runtime": runtime, "case": case, "batch": batch, "path": path, "info": info,
                "threads": threads, "out": out, "create_only": create_only, "disabled": disabled}
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        self.proc = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--worker-spec", json.dumps(spec)],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
        self.runtime = runtime

    def read(self, timeout=1800):
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        line = self.proc.stdout.readline() if ready else ""
        if not line:
            self.proc.kill()
            raise RuntimeError("%s worker died or hung (exit %s)" % (self.runtime, self.proc.poll()))
        return json.loads(line)

    def send(self, obj):
        self.proc.stdin.write(json.dumps(obj) + "\n")
        self.proc.stdin.flush()

    def close(self):
        self.send({"cmd": "quit"})
        res = self.read()
        self.proc.wait(timeout=60)
        return res


# --------------------------------------------------------------------------- machine facts

def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


SGEMM_PROBE = r"""
import sys, time, numpy as np
sys.path.insert(0, sys.argv[1])
import onyxruntime as rt
from onnx import helper, TensorProto, numpy_helper
n = 2048
w = numpy_helper.from_array(np.random.default_rng(0).standard_normal((n, n), dtype=np.float32), "w")
g = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"])], "g",
                      [helper.make_tensor_value_info("x", TensorProto.FLOAT, [n, n])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, [n, n])], [w])
so = rt.SessionOptions(); so.intra_op_num_threads = int(sys.argv[2])
s = rt.InferenceSession(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString(), so)
x = np.random.default_rng(1).standard_normal((n, n), dtype=np.float32)
s.run(None, {"x": x})
best = min((lambda t0: (s.run(None, {"x": x}), time.perf_counter() - t0)[1])(time.perf_counter()) for _ in range(5))
print(2 * n ** 3 / best / 1e9)
"""


def sgemm_gflops(threads):
    """The machine's SGEMM rate with `threads` threads: a 2048^3 MatMul
    through the BLAS the engine links, best of 5."""
    out = subprocess.run([sys.executable, "-c", SGEMM_PROBE, ONYX_PYTHONPATH, str(threads)],
                         capture_output=True, text=True, timeout=600)
    try:
        return float(out.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return None


def onyx_build_info():
    out = subprocess.run([sys.executable, "-c", "import sys; sys.path.insert(0, sys.argv[1]); import onyxruntime as rt; "
                          "print(rt.get_build_info())", ONYX_PYTHONPATH], capture_output=True, text=True)
    return out.stdout.strip() or out.stderr.strip().splitlines()[-1]


# --------------------------------------------------------------------------- one case

def run_case(case, batch, path, info, args, sgemm, tmp):
    feeds = make_feeds(case, batch, info)
    flops = count_flops(path, feeds, tmp)
    # Creation is timed in processes of their own with no peer alive (a living
    # peer's memory and threads disturbed it by up to 4x for GPT-2): the best
    # of two fresh processes per runtime, in alternating order.
    alone = {"ORT": [], "Onyx": []}
    for rep in range(2):
        for runtime in (("ORT", "Onyx") if rep == 0 else ("Onyx", "ORT")):
            w = Worker(runtime, case, batch, path, info, args.threads, os.path.join(tmp, runtime + ".npy"),
                       create_only=True)
            alone[runtime].append(w.read()["create_ms"])
            w.proc.wait(timeout=600)
    workers, created = {}, {}
    for runtime in ("ORT", "Onyx"):
        w = Worker(runtime, case, batch, path, info, args.threads, os.path.join(tmp, runtime + ".npy"))
        created[runtime] = w.read()
        workers[runtime] = w
    for runtime in ("ORT", "Onyx"):
        created[runtime]["create_ms"] = min(alone[runtime])
        workers[runtime].send({"cmd": "first"})
        created[runtime].update(workers[runtime].read())
        time.sleep(args.pause)
    # Size the rounds from the first runs so each takes about --round-seconds.
    per_run = max(created["ORT"]["first_ms"], created["Onyx"]["first_ms"]) / 1e3
    n = max(1, int(args.round_seconds / max(per_run, 1e-6)))
    times = {"ORT": [], "Onyx": []}
    for r in range(args.rounds + 1):  # round 0 warms up and is dropped
        order = ("ORT", "Onyx") if r % 2 == 0 else ("Onyx", "ORT")
        for runtime in order:
            time.sleep(args.pause)
            workers[runtime].send({"cmd": "round", "n": n if r else max(1, min(n, 3))})
            got = workers[runtime].read()["times"]
            if r:
                times[runtime].extend(got)
    rss = {rt_: workers[rt_].close()["rss_mb"] for rt_ in workers}
    # Each runtime at level 'disabled' on the same feeds: its first output only.
    for runtime in ("ORT", "Onyx"):
        w = Worker(runtime, case, batch, path, info, args.threads, os.path.join(tmp, runtime + "_disabled.npy"),
                   disabled=True)
        w.read()
        w.send({"cmd": "first"})
        w.read()
        w.close()
    a, b = np.load(os.path.join(tmp, "ORT.npy")), np.load(os.path.join(tmp, "Onyx.npy"))
    res = {"case": case, "batch": batch, "runs_per_runtime": len(times["Onyx"]), "flops": flops,
           "max_rel_diff": rel_diff(b, a),
           "opt_rel_diff": rel_diff(b, np.load(os.path.join(tmp, "Onyx_disabled.npy"))),
           "ort_opt_rel_diff": rel_diff(a, np.load(os.path.join(tmp, "ORT_disabled.npy")))}
    for runtime in ("ORT", "Onyx"):
        t = np.array(times[runtime])
        res[runtime] = {"p50_ms": float(np.median(t)), "p90_ms": float(np.percentile(t, 90)),
                        "create_ms": created[runtime]["create_ms"], "rss_mb": rss[runtime]}
    res["ratio"] = res["Onyx"]["p50_ms"] / res["ORT"]["p50_ms"]
    if flops:
        res["onyx_gflops"] = flops / (res["Onyx"]["p50_ms"] / 1e3) / 1e9
        res["ort_gflops"] = flops / (res["ORT"]["p50_ms"] / 1e3) / 1e9
        res["onyx_share_of_sgemm"] = res["onyx_gflops"] / sgemm if sgemm else None
    return res


def rel_diff(a, ref):
    """max |a - ref| / max(1, max |ref|); inf when the shapes differ."""
    if a.shape != ref.shape:
        return float("inf")
    ref = ref.astype(np.float64)
    return float(np.abs(a.astype(np.float64) - ref).max()) / max(1.0, float(np.abs(ref).max()))


def ms(v):
    return "%9.4f" % v if v < 1 else "%9.2f" % v


def fmt_row(r):
    g = "%7.1f %4.0f%%" % (r["onyx_gflops"], 100 * r["onyx_share_of_sgemm"]) if r.get("onyx_share_of_sgemm") else \
        ("%7.1f    " % r["onyx_gflops"] if r.get("onyx_gflops") else "      -      ")
    return ("%-14s %3d | %s %s | %s %s | %6.3f | %7.1f %7.1f | %7.1f %7.1f | %s | %8.1e %8.1e %8.1e"
            % (r["case"], r["batch"], ms(r["ORT"]["p50_ms"]), ms(r["ORT"]["p90_ms"]), ms(r["Onyx"]["p50_ms"]),
               ms(r["Onyx"]["p90_ms"]), r["ratio"], r["ORT"]["create_ms"], r["Onyx"]["create_ms"],
               r["ORT"]["rss_mb"], r["Onyx"]["rss_mb"], g, r["max_rel_diff"], r["opt_rel_diff"],
               r["ort_opt_rel_diff"]))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", default=",".join(CASES))
    ap.add_argument("--batches", default="1,8")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--round-seconds", type=float, default=1.0, help="target length of one timed round")
    ap.add_argument("--pause", type=float, default=0.3, help="seconds between rounds (spinning threads settle)")
    ap.add_argument("--quick", action="store_true", help="small BERT/GPT-2, 2 rounds of ~0.3 s: a smoke run")
    ap.add_argument("--model-dir", default=os.environ.get("ONYX_MODEL_DIR", os.path.join(REPO_ROOT, "build", "models")))
    ap.add_argument("--json", help="also write the results here")
    ap.add_argument("--worker-spec", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker_spec:
        return worker(args)
    if args.quick:
        args.rounds, args.round_seconds = 2, 0.3
    cases = [c.strip() for c in args.cases.split(",") if c.strip()]
    bad = [c for c in cases if c not in CASES]
    if bad:
        ap.error("unknown case(s) %s; known: %s" % (", ".join(bad), ", ".join(CASES)))
    batches = [int(b) for b in args.batches.split(",")]

    import onnxruntime
    sgemm = sgemm_gflops(args.threads)
    print("CPU: %s (%d logical cores), %d threads per runtime" % (cpu_model(), os.cpu_count(), args.threads))
    print("Onyx: %s" % onyx_build_info())
    print("ORT:  onnxruntime %s" % onnxruntime.__version__)
    print("SGEMM 2048^3 through the engine's BLAS: %s GFLOP/s" % ("%.1f" % sgemm if sgemm else "n/a"))
    print("rounds %d x ~%.1f s per runtime, interleaved, each runtime in its own process%s"
          % (args.rounds, args.round_seconds, "; --quick (small BERT/GPT-2)" if args.quick else ""))
    print()
    head = ("%-14s %3s | %9s %9s | %9s %9s | %6s | %15s | %15s | %12s | %8s %8s %8s"
            % ("case", "b", "ORT p50", "ORT p90", "Onyx p50", "Onyx p90", "ratio", "create ms O/X",
               "RSS MB O/X", "GFLOP/s %SG", "diff", "opt X", "opt O"))
    print(head)
    print("-" * len(head))
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for case in cases:
            info = model_info_of(case, args.quick)
            path = ensure_case_model(case, args.model_dir, args.quick)
            for batch in batches:
                try:
                    r = run_case(case, batch, path, info, args, sgemm, tmp)
                except RuntimeError as e:
                    print("%-14s %3d | failed: %s" % (case, batch, e), flush=True)
                    results.append({"case": case, "batch": batch, "error": str(e)})
                    continue
                results.append(r)
                print(fmt_row(r), flush=True)
    ok = [r for r in results if "ratio" in r]
    if ok:
        ratios = np.array([r["ratio"] for r in ok])
        print()
        print("ratio Onyx/ORT (median latency): geometric mean %.3f, best %.3f, worst %.3f; %d of %d cases <= 1.0"
              % (float(np.exp(np.log(ratios).mean())), ratios.min(), ratios.max(), int((ratios <= 1.0).sum()),
                 len(results)))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"cpu": cpu_model(), "threads": args.threads, "sgemm_gflops": sgemm, "results": results}, f,
                      indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())

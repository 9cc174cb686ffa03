#!/usr/bin/env python3
"""Per-call overhead of `InferenceSession.run`, onyxruntime against onnxruntime,
and of SessionRun through the C API.

A benchmark, not a test: it measures and prints; it asserts only that both
runtimes return the same outputs.

    python tests/bench/bench_call_overhead.py [--threads 2] [--rounds 9] [--repeat 2000] [--no-c] [--no-ort-c]

Models (built here, so tiny that the run itself costs next to nothing):
  identity   one Identity node, float [1, 16]
  mlp3       3-layer MLP on [1, 16]: (MatMul, Add, Relu) x2 then MatMul, Add (16-32-32-4)
  io5        5 inputs and 5 outputs, float [1, 16] each: out_i = in_i + in_(i+1 mod 5)
Workers: onnxruntime (Python), onyxruntime (Python), onyx-C (a small C
program, tests/bench/call_overhead_worker.c, compiled here against the public
header and build/libonyxruntime.so: per call it creates the input values over
its own buffers, calls SessionRun and releases everything) and ort-C (the same
calls through onnxruntime's C API, tests/bench/ort_call_overhead_worker.c,
which dlopens the onnxruntime wheel's libonnxruntime.so; the wheel has no C
header, so the worker declares the OrtApi slots it uses and checks them at run
time; its input/output names and first outputs are checked here against the
model and onnx's reference evaluator). Each runs in its own process, intra-op
threads = --threads, inter-op threads = 1. Rounds are interleaved: every round
times each model on every worker, the order of the workers rotating between
rounds. Every call is timed on its own; printed are the median and 90th
percentile over all timed calls in microseconds, and the ratios of the medians
(below 1: onyx costs less): onyx/ort (Python against Python), onyxC/ortPy (our
C call against onnxruntime's Python call) and onyxC/ortC (C against C).
"""

import argparse
import glob
import importlib.metadata
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

REPO_ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir, os.pardir))
ONYX_PYTHONPATH = os.environ.get("ONYX_PYTHONPATH", os.path.join(REPO_ROOT, "build", "python"))
ONYX_LIBDIR = os.environ.get("ONYX_LIBDIR", os.path.join(REPO_ROOT, "build"))
MODELS = ("identity", "mlp3", "io5")


def build_models(directory):
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    def save(name, nodes, inputs, outputs, inits=()):
        graph = helper.make_graph(nodes, name, inputs, outputs, list(inits))
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
        model.ir_version = 8
        onnx.checker.check_model(model)
        path = os.path.join(directory, name + ".onnx")
        onnx.save(model, path)
        return path

    def vi(name, dims):
        return helper.make_tensor_value_info(name, TensorProto.FLOAT, dims)

    paths = {"identity": save("identity", [helper.make_node("Identity", ["x"], ["y"])], [vi("x", [1, 16])],
                              [vi("y", [1, 16])])}
    rng = np.random.RandomState(0)
    sizes = [16, 32, 32, 4]
    nodes, inits, prev = [], [], "x"
    for layer in range(3):
        w = (rng.randn(sizes[layer], sizes[layer + 1]) / np.sqrt(sizes[layer])).astype(np.float32)
        b = (rng.randn(sizes[layer + 1]) * 0.1).astype(np.float32)
        inits += [numpy_helper.from_array(w, "w%d" % layer), numpy_helper.from_array(b, "b%d" % layer)]
        nodes += [helper.make_node("MatMul", [prev, "w%d" % layer], ["mm%d" % layer]),
                  helper.make_node("Add", ["mm%d" % layer, "b%d" % layer], ["h%d" % layer if layer < 2 else "y"])]
        if layer < 2:
            nodes.append(helper.make_node("Relu", ["h%d" % layer], ["r%d" % layer]))
            prev = "r%d" % layer
    paths["mlp3"] = save("mlp3", nodes, [vi("x", [1, 16])], [vi("y", [1, 4])], inits)
    nodes = [helper.make_node("Add", ["in%d" % i, "in%d" % ((i + 1) % 5)], ["out%d" % i]) for i in range(5)]
    paths["io5"] = save("io5", nodes, [vi("in%d" % i, [1, 16]) for i in range(5)],
                        [vi("out%d" % i, [1, 16]) for i in range(5)])
    return paths


def feeds_for(sess):
    rng = np.random.RandomState(1)
    return {i.name: rng.randn(1, 16).astype(np.float32) for i in sess.get_inputs()}


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
    feeds = {name: feeds_for(sess) for name, sess in sessions.items()}
    for name, sess in sessions.items():
        np.savez(os.path.join(out_dir, "%s_%s.npz" % (runtime, name)), *sess.run(None, feeds[name]))
    print(json.dumps({"ready": True}), flush=True)
    clock = time.perf_counter_ns
    for line in sys.stdin:
        req = json.loads(line)
        run, feed = sessions[req["model"]].run, feeds[req["model"]]
        for _ in range(20):
            run(None, feed)
        times = [0] * req["repeat"]
        for k in range(req["repeat"]):
            t0 = clock()
            run(None, feed)
            times[k] = clock() - t0
        print(json.dumps(times), flush=True)


class PyWorker:
    def __init__(self, runtime, paths, threads, tmp):
        cmd = [sys.executable, os.path.abspath(__file__), "--worker", runtime, "--paths", json.dumps(paths),
               "--threads", str(threads), "--out", tmp]
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert json.loads(self.proc.stdout.readline())["ready"]

    def time(self, model, repeat):
        self.proc.stdin.write(json.dumps({"model": model, "repeat": repeat}) + "\n")
        self.proc.stdin.flush()
        return json.loads(self.proc.stdout.readline())

    def close(self):
        self.proc.stdin.close()
        self.proc.wait()


class CWorker(PyWorker):
    def __init__(self, exe, paths, threads):
        env = dict(os.environ, LD_LIBRARY_PATH=ONYX_LIBDIR)
        cmd = [exe, str(threads)] + ["%s=%s" % kv for kv in paths.items()]
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
        assert self.proc.stdout.readline().strip() == "ready"

    def time(self, model, repeat):
        self.proc.stdin.write("%s %d\n" % (model, repeat))
        self.proc.stdin.flush()
        return [int(t) for t in self.proc.stdout.readline().split()]


def c_worker_inputs(n_in):
    """The input values both C workers feed: input i, element j = (i*16 + j) % 7 - 3."""
    return [((np.arange(16) + 16 * i) % 7 - 3).astype(np.float32).reshape(1, 16) for i in range(n_in)]


class OrtCWorker(CWorker):
    """ort_call_overhead_worker: before "ready" it prints, per model, "model NAME N_IN N_OUT names..."
    and one "output NAME INDEX DIMS d.. VALUES v.." line per output of one run; all are checked
    against the model and onnx's reference evaluator, so a wrong OrtApi slot cannot go unnoticed."""

    def __init__(self, exe, lib, version, paths, threads):
        import onnx
        from onnx.reference import ReferenceEvaluator

        cmd = [exe, lib, version, str(threads)] + ["%s=%s" % kv for kv in paths.items()]
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        seen, outputs = {}, {}
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError("ort_call_overhead_worker exited with %s before ready (a crash here most likely"
                                   " means an OrtApi slot index that does not fit this library)" % self.proc.wait())
            words = line.split()
            if words == ["ready"]:
                break
            if words[0] == "model":
                seen[words[1]] = words[2:]
            elif words[0] == "output":
                dims_at, values_at = words.index("DIMS"), words.index("VALUES")
                outputs[(words[1], int(words[2]))] = np.array(
                    [float(v) for v in words[values_at + 1:]], np.float32).reshape(
                        [int(d) for d in words[dims_at + 1:values_at]])
            else:
                raise RuntimeError("ort_call_overhead_worker: unexpected line %r" % line)
        for name, path in paths.items():
            model = onnx.load(path)
            ins = [i.name for i in model.graph.input]
            outs = [o.name for o in model.graph.output]
            want = [str(len(ins)), str(len(outs))] + ins + outs
            if seen.get(name) != want:
                raise RuntimeError("ort C worker, model %s: inputs/outputs %s, expected %s"
                                   % (name, seen.get(name), want))
            ref = ReferenceEvaluator(model).run(None, dict(zip(ins, c_worker_inputs(len(ins)))))
            for k, expected in enumerate(ref):
                np.testing.assert_allclose(outputs[(name, k)], expected, rtol=1e-5, atol=1e-6,
                                           err_msg="ort C worker, model %s output %d" % (name, k))


def compile_worker(tmp, source, extra_args):
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if not cc:
        return None
    exe = os.path.join(tmp, os.path.splitext(source)[0])
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), source)
    subprocess.check_call([cc, "-O2", "-std=c99", "-D_POSIX_C_SOURCE=199309L", src, "-o", exe] + extra_args)
    return exe


def compile_c_worker(tmp):
    return compile_worker(tmp, "call_overhead_worker.c", ["-I", os.path.join(REPO_ROOT, "capi", "include"),
                                                          "-L", ONYX_LIBDIR, "-lonyxruntime",
                                                          "-Wl,-rpath," + ONYX_LIBDIR])


def onnxruntime_library():
    """(path of the onnxruntime wheel's libonnxruntime.so.VERSION, VERSION), or None."""
    spec = importlib.util.find_spec("onnxruntime")
    if spec is None or not spec.submodule_search_locations:
        return None
    version = importlib.metadata.version("onnxruntime")
    capi = os.path.join(list(spec.submodule_search_locations)[0], "capi")
    exact = os.path.join(capi, "libonnxruntime.so." + version)
    if os.path.exists(exact):
        return exact, version
    found = sorted(glob.glob(os.path.join(capi, "libonnxruntime.so*")))
    return (found[0], version) if found else None


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--repeat", type=int, default=2000)
    ap.add_argument("--no-c", action="store_true", help="skip our C worker")
    ap.add_argument("--no-ort-c", action="store_true", help="skip the onnxruntime C API worker")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--paths", help=argparse.SUPPRESS)
    ap.add_argument("--out", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        return worker(args.worker, json.loads(args.paths), args.threads, args.out)

    with tempfile.TemporaryDirectory() as tmp:
        paths = build_models(tmp)
        workers = {r: PyWorker(r, paths, args.threads, tmp) for r in ("onnxruntime", "onyx")}
        for name in paths:
            a = np.load(os.path.join(tmp, "onnxruntime_%s.npz" % name))
            b = np.load(os.path.join(tmp, "onyx_%s.npz" % name))
            assert a.files == b.files, name
            for k in a.files:
                np.testing.assert_allclose(b[k], a[k], rtol=1e-5, atol=1e-6, err_msg=name)
        exe = None if args.no_c else compile_c_worker(tmp)
        if exe:
            workers["onyx-C"] = CWorker(exe, paths, args.threads)
        ort_lib = None if args.no_ort_c else onnxruntime_library()
        ort_exe = ort_lib and compile_worker(tmp, "ort_call_overhead_worker.c", ["-ldl"])
        if ort_exe:
            workers["ort-C"] = OrtCWorker(ort_exe, ort_lib[0], ort_lib[1], paths, args.threads)
        names = list(workers)
        times = {(m, w): [] for m in MODELS for w in names}
        for rnd in range(args.rounds):
            order = names[rnd % len(names):] + names[:rnd % len(names)]
            for model in MODELS:
                for w in order:
                    times[(model, w)].extend(workers[w].time(model, args.repeat))
        for w in workers.values():
            w.close()

    def stats(ns):
        return float(np.median(ns)) / 1e3, float(np.percentile(ns, 90)) / 1e3

    print("threads=%d rounds=%d repeat=%d; microseconds per run call (median / p90 over all calls)"
          % (args.threads, args.rounds, args.repeat))
    labels = {"onnxruntime": "Python onnxruntime", "onyx": "Python onyx", "onyx-C": "C onyx",
              "ort-C": "C onnxruntime"}
    ratios = [("onyx/ort", "onyx", "onnxruntime"), ("onyxC/ortPy", "onyx-C", "onnxruntime"),
              ("onyxC/ortC", "onyx-C", "ort-C")]
    ratios = [r for r in ratios if r[1] in names and r[2] in names]
    if "ort-C" in names:
        print("onnxruntime C API: %s (%s)" % (ort_lib[0], ort_lib[1]))
    print("%-9s" % "model" + "".join("%20s" % labels[w] for w in names) + "".join("%13s" % r[0] for r in ratios))
    for model in MODELS:
        s = {w: stats(times[(model, w)]) for w in names}
        row = "%-9s" % model + "".join("%11.2f /%7.2f" % s[w] for w in names)
        row += "".join("%13.2f" % (s[a][0] / s[b][0]) for _, a, b in ratios)
        print(row)


if __name__ == "__main__":
    sys.exit(main())

"""Structured random fuzzer for the Python binding's feed conversion
(issue 12 item 1): numpy arrays of every dtype (and ml_dtypes' narrow ones),
non-contiguous, negative-stride, broadcast (stride 0), Fortran-order, 0-d,
empty and huge-but-unallocated shapes, object and string arrays, bytes,
scalars, nested and ragged lists, OrtValues, wrong, missing, extra and
non-string names, and bad output names, fed to `InferenceSession.run`,
`run_with_ort_values` and IOBinding.

Each case comes from its own generator seeded by (seed, case index), so one
case replays alone. A case must either run and return exactly what the model
computes on the feed as numpy sees it (the models are Identity and Add), or
raise an ordinary exception (the binding's error classes, TypeError,
ValueError, RuntimeError); after every error the session must still run a
good feed. A crash kills the process: the case being run is written to
`--last-case` first, so it can be replayed and turned into a regression
(a test case in tests/python/test_feed_fuzz.py, with the fix).

    python tests/fuzz/fuzz_python_feeds.py --cases 200000 --seed 0   # longer run
    python tests/fuzz/fuzz_python_feeds.py --replay SEED:INDEX       # one case
"""

import argparse
import collections
import json
import os
import sys
import time

import numpy as np
from onnx import TensorProto, helper

try:
    import ml_dtypes
except ImportError:  # narrow types are then left out
    ml_dtypes = None

# Element types the models take (ONNX type, numpy dtype).
MODEL_TYPES = [
    (TensorProto.FLOAT, np.float32), (TensorProto.DOUBLE, np.float64), (TensorProto.FLOAT16, np.float16),
    (TensorProto.INT8, np.int8), (TensorProto.UINT8, np.uint8), (TensorProto.INT16, np.int16),
    (TensorProto.UINT16, np.uint16), (TensorProto.INT32, np.int32), (TensorProto.UINT32, np.uint32),
    (TensorProto.INT64, np.int64), (TensorProto.UINT64, np.uint64), (TensorProto.BOOL, np.bool_),
    (TensorProto.STRING, np.str_),
]
if ml_dtypes is not None:
    MODEL_TYPES.append((TensorProto.BFLOAT16, ml_dtypes.bfloat16))

# Feed dtypes, the models' and others no model takes.
FEED_DTYPES = [d for _, d in MODEL_TYPES] + [
    np.complex64, np.complex128, np.object_, np.bytes_, np.dtype("datetime64[s]"), np.dtype("timedelta64[ms]"),
    np.dtype("V4"), np.dtype([("a", np.int32), ("b", np.float32)]), np.dtype(">f4"), np.dtype(">i8"), np.longdouble,
]
if ml_dtypes is not None:
    FEED_DTYPES += [ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e5m2, ml_dtypes.int4, ml_dtypes.uint4]

STATS = collections.Counter()  # outcomes: "ran", "checked against numpy", exception class names
OK_ERRORS = (TypeError, ValueError, RuntimeError, OverflowError, KeyError, IndexError, MemoryError)


def _model(elem, rank, add):
    dims = ["d%d" % i for i in range(rank)] if rank >= 0 else None
    xs = [helper.make_tensor_value_info("X", elem, dims)]
    if add:
        xs.append(helper.make_tensor_value_info("Z", elem, dims))
    node = helper.make_node("Add" if add else "Identity", ["X", "Z"] if add else ["X"], ["Y"])
    graph = helper.make_graph([node], "fuzz", xs, [helper.make_tensor_value_info("Y", elem, dims)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8).SerializeToString()


class Target:
    """One session: Identity (or Add) of one element type and rank (-1: no shape)."""

    def __init__(self, rt, elem, dtype, rank, add):
        so = rt.SessionOptions()
        so.intra_op_num_threads = 1
        so.add_session_config_entry("session.memory_limit_bytes", str(256 << 20))
        self.sess = rt.InferenceSession(_model(elem, rank, add), so, providers=["CPUExecutionProvider"])
        self.dtype, self.rank, self.add = np.dtype(dtype), rank, add
        self.names = ["X", "Z"] if add else ["X"]

    def good_feed(self):
        shape = (2,) * max(self.rank, 0) if self.rank >= 0 else (3,)
        a = np.ones(shape, self.dtype) if self.dtype.kind != "U" else np.full(shape, "ok")
        return {n: a for n in self.names}


def _shape(r):
    rank = int(r.choice([0, 1, 1, 2, 2, 3, 4, 6]))
    return tuple(int(r.choice([0, 1, 2, 3, 5, 7])) for _ in range(rank))


def _array(r, dtype, shape):
    dtype = np.dtype(dtype)
    n = int(np.prod(shape))
    if dtype.kind in "U":
        return np.array(["".join(chr(int(c)) for c in r.integers(32, 0x2FF, int(r.integers(0, 6))))
                         for _ in range(n)], dtype=dtype).reshape(shape)
    if dtype.kind == "S":
        return np.array([bytes(r.integers(0, 256, int(r.integers(0, 5))).astype(np.uint8)) for _ in range(n)],
                        dtype=dtype).reshape(shape)
    if dtype.kind == "O":
        pool = [1, 2.5, "s", b"b", None, [1], {"a": 1}, np.float32(1), object()]
        a = np.empty(n, dtype=object)
        for i in range(n):
            a[i] = pool[int(r.integers(0, len(pool)))]
        return a.reshape(shape)
    raw = r.integers(0, 256, n * dtype.itemsize, dtype=np.uint8).tobytes()
    a = np.frombuffer(raw, dtype=dtype).reshape(shape).copy() if n else np.zeros(shape, dtype)
    if dtype.kind == "b":
        a = a.view(np.uint8).astype(bool) if dtype == np.bool_ else a
    return a


def _mangle(r, a):
    """The same values in another memory layout, or a view numpy lets through."""
    try:
        return _mangle_or_fail(r, a)
    except (TypeError, ValueError):  # numpy cannot make that view of this dtype
        return a


def _mangle_or_fail(r, a):
    k = int(r.integers(0, 9))
    if k == 0 and a.ndim >= 2:
        return a.T
    if k == 1 and a.ndim >= 1 and a.shape[0] > 1:
        return a[::2]
    if k == 2 and a.ndim >= 1:
        return a[::-1]
    if k == 3:
        return np.asfortranarray(a)
    if k == 4 and a.size:
        b = a.copy()
        b.flags.writeable = False
        return b
    if k == 5 and a.ndim >= 1 and a.size:
        # A broadcast view: stride 0 over a real element.
        return np.broadcast_to(a.reshape(-1)[:1].reshape((1,) * a.ndim), tuple(s if s else 1 for s in a.shape))
    if k == 6 and a.size:
        # Huge declared shape over one element (stride 0): nothing to allocate.
        big = int(r.choice([1 << 40, 1 << 44, (1 << 62) - 1]))
        return np.lib.stride_tricks.as_strided(a.reshape(-1)[:1], shape=(big,), strides=(0,), writeable=False)
    if k == 7 and a.ndim >= 1 and a.dtype.itemsize > 1 and a.size:
        # Misaligned: one byte into a byte buffer.
        buf = np.zeros(a.nbytes + 1, np.uint8)[1:]
        return buf.view(a.dtype).reshape(a.shape)
    return a


def _value(r, rt, target):
    """One feed value: arrays of the model's or another dtype, lists, scalars, OrtValues."""
    k = int(r.integers(0, 12))
    rank = target.rank if target.rank >= 0 and r.random() < 0.6 else None
    shape = _shape(r) if rank is None else tuple(int(r.choice([0, 1, 2, 3])) for _ in range(rank))
    dtype = target.dtype if r.random() < 0.5 else FEED_DTYPES[int(r.integers(0, len(FEED_DTYPES)))]
    if k <= 6:
        return _mangle(r, _array(r, dtype, shape))
    if k == 7:
        return _array(r, dtype, shape).tolist() if np.dtype(dtype).kind not in "VMmO" else [[1, 2], [3]]
    if k == 8:
        return [[1, 2], [3]] if r.random() < 0.5 else [[[]]]
    if k == 9:
        return [None, 1.5, 7, "x", b"y", True, -(1 << 70), float("nan")][int(r.integers(0, 8))]
    if k == 10:
        a = _array(r, dtype, shape)
        try:
            return rt.OrtValue.ortvalue_from_numpy(a)
        except OK_ERRORS:
            return a
    return np.array(_array(r, dtype, shape), copy=True, order="C")


def make_case(seed, index, rt, targets):
    """(target index, feed dict, output names, how to run) for case `index`."""
    r = np.random.default_rng([seed, index])
    t = int(r.integers(0, len(targets)))
    target = targets[t]
    feed = {n: _value(r, rt, target) for n in target.names}
    k = int(r.integers(0, 10))
    if k == 0 and feed:
        feed.pop(next(iter(feed)))
    elif k == 1:
        feed["W" * int(r.integers(1, 3))] = np.zeros(1, np.float32)
    elif k == 2:
        feed = {(1 if r.random() < 0.5 else b"X"): v for v in feed.values()}
    elif k == 3:
        feed = list(feed.values())
    outputs = [None, [], ["Y"], ["Y", "Y"], ["nope"], [1], "Y"][int(r.choice([0, 0, 0, 1, 2, 2, 3, 4, 5, 6]))]
    how = ["run", "run", "run", "ort_values", "iobinding"][int(r.integers(0, 5))]
    return t, feed, outputs, how


def _expected(target, feed):
    """What the model computes on this feed as numpy sees it, or None when
    the feed is not exactly the model's type (then any ordinary outcome is fine)."""
    if not isinstance(feed, dict) or sorted(feed) != sorted(target.names):
        return None
    arrays = []
    for n in target.names:
        v = feed[n]
        if not isinstance(v, np.ndarray) or v.dtype != target.dtype or v.nbytes > (64 << 20):
            return None
        if target.rank >= 0 and v.ndim != target.rank:
            return None
        arrays.append(v)
    if target.add:
        if arrays[0].shape != arrays[1].shape or target.dtype.kind in "bU":
            return None
        with np.errstate(all="ignore"):
            return (arrays[0] + arrays[1]).astype(target.dtype)
    return arrays[0]


def run_case(rt, targets, seed, index, last_case=None):
    """Runs one case; returns None, or a string saying what went wrong."""
    if last_case:
        with open(last_case, "w") as f:
            f.write("%d:%d\n" % (seed, index))
    t, feed, outputs, how = make_case(seed, index, rt, targets)
    target = targets[t]
    try:
        if how == "ort_values" and isinstance(feed, dict):
            ov = {k: (v if isinstance(v, rt.OrtValue) else rt.OrtValue.ortvalue_from_numpy(v)) for k, v in feed.items()}
            got = [o.numpy() for o in target.sess.run_with_ort_values(outputs, ov)]
        elif how == "iobinding" and isinstance(feed, dict):
            b = target.sess.io_binding()
            for k, v in feed.items():
                b.bind_cpu_input(k, v)
            b.bind_output("Y")
            target.sess.run_with_iobinding(b)
            got = b.copy_outputs_to_cpu()
        else:
            got = target.sess.run(outputs, feed)
    except OK_ERRORS as e:
        got = e
    except AttributeError as e:
        # A feed that is not a dict: onnxruntime raises this same error
        # ("'list' object has no attribute 'keys'"), and so do we, on purpose.
        if isinstance(feed, dict):
            return "unexpected AttributeError: %s" % e
        got = e
    except Exception as e:  # the binding's own classes derive from these in onnxruntime's naming
        if type(e).__module__.split(".")[0] not in ("onyxruntime", "onnxruntime"):
            return "unexpected %s: %s" % (type(e).__name__, e)
        got = e
    STATS[type(got).__name__ if isinstance(got, BaseException) else "ran"] += 1
    if not isinstance(got, BaseException):
        want = _expected(target, feed) if how == "run" or isinstance(feed, dict) else None
        if want is not None and outputs in (None, [], ["Y"]) and how != "iobinding":
            y = np.asarray(got[0])
            same = y.dtype == want.dtype and y.shape == want.shape and (
                np.array_equal(y, want) if y.dtype.kind == "U" else
                np.ascontiguousarray(y).tobytes() == np.ascontiguousarray(want).tobytes())
            STATS["checked against numpy"] += 1
            if not same:
                return "wrong result: got %s %s, want %s %s" % (y.dtype, y.shape, want.dtype, want.shape)
    # The session stays usable after whatever happened.
    good = target.good_feed()
    y = target.sess.run(None, good)[0]
    x = good["X"]
    want = x + x if target.add else x
    if y.shape != want.shape or not np.array_equal(y, want):
        return "session unusable after the case: a good feed gave %r" % (y,)
    return None


def make_targets(rt):
    targets = []
    for elem, dtype in MODEL_TYPES:
        for rank in (-1, 0, 1, 2):
            targets.append(Target(rt, elem, dtype, rank, add=False))
        if dtype not in (np.str_, np.bool_):
            targets.append(Target(rt, elem, dtype, 2, add=True))
    return targets


def limit_address_space(gib=8):
    """Makes an allocation beyond `gib` GiB a MemoryError rather than a run of
    the machine's OOM killer (a copy of a huge stride-0 feed would be one)."""
    import resource
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    want = gib << 30
    if soft == resource.RLIM_INFINITY or soft > want:
        resource.setrlimit(resource.RLIMIT_AS, (want, hard))


def fuzz(rt, seed, cases, seconds=None, last_case=None, log=None):
    """Runs cases 0.. until `cases` or `seconds`; returns (runs, failures)."""
    limit_address_space()
    targets = make_targets(rt)
    failures, start, i = [], time.monotonic(), 0
    while i < cases and (seconds is None or time.monotonic() - start < seconds):
        why = run_case(rt, targets, seed, i, last_case)
        if why:
            failures.append((seed, i, why))
            if log:
                log("case %d:%d: %s" % (seed, i, why))
        i += 1
    return i, failures


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--cases", type=int, default=5000)
    p.add_argument("--seconds", type=float, default=None)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--replay", help="SEED:INDEX of one case")
    p.add_argument("--last-case", default=os.path.join("build", "python_feeds_last_case.txt"))
    args = p.parse_args()
    sys.path.insert(0, os.environ.get("ONYX_PYTHONPATH", os.path.join(os.path.dirname(__file__), "..", "..",
                                                                       "build", "python")))
    import onyxruntime as rt
    if args.replay:
        seed, index = map(int, args.replay.split(":"))
        limit_address_space()
        why = run_case(rt, make_targets(rt), seed, index)
        print(json.dumps({"seed": seed, "index": index, "result": why or "ok"}))
        return 1 if why else 0
    os.makedirs(os.path.dirname(os.path.abspath(args.last_case)), exist_ok=True)
    runs, failures = fuzz(rt, args.seed, args.cases, args.seconds, args.last_case, print)
    print("python_feeds: %d cases (seed %d), %d failures; outcomes: %s" % (
        runs, args.seed, len(failures), ", ".join("%s %d" % kv for kv in STATS.most_common())))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

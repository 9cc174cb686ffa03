"""The GIL is released while a session is created and while it runs.

A second Python thread appends time stamps while the main thread is inside
one call. The switch interval is raised so the main thread is never preempted
in Python code: the only way a stamp can fall inside the call is that the call
released the GIL. Not a timing test: it counts, and the counter sleeps (so it
hands the GIL back) between stamps.
"""

import sys
import threading
import time

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

SIZE = 512


def _heavy_model(depth=12, extra_bytes=0):
    rng = np.random.default_rng(0)
    w = (rng.standard_normal((SIZE, SIZE)) / np.sqrt(SIZE)).astype(np.float32)
    nodes, prev = [], "X"
    for i in range(depth):
        nodes.append(helper.make_node("MatMul", [prev, "W"], ["H%d" % i]))
        prev = "H%d" % i
    nodes.append(helper.make_node("Identity", [prev], ["Y"]))
    inits = [numpy_helper.from_array(w, "W")]
    if extra_bytes:
        # A large unused-by-nothing-heavy initializer makes loading take a while.
        big = np.arange(extra_bytes // 4, dtype=np.float32)
        inits.append(numpy_helper.from_array(big, "Big"))
        nodes.append(helper.make_node("ReduceSum", ["Big"], ["S"], keepdims=0))
    outputs = [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [SIZE, SIZE])]
    if extra_bytes:
        outputs.append(helper.make_tensor_value_info("S", TensorProto.FLOAT, []))
    graph = helper.make_graph(nodes, "heavy", [helper.make_tensor_value_info("X", TensorProto.FLOAT, [SIZE, SIZE])],
                              outputs, inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8).SerializeToString()


def _stamps_during(call):
    """Runs call() on this thread while another thread stamps; returns the
    number of stamps taken strictly inside the call."""
    stamps, stop, started = [], threading.Event(), threading.Event()

    def counter():
        started.set()
        while not stop.is_set():
            stamps.append(time.perf_counter())
            time.sleep(0.0005)  # hands the GIL back between stamps

    old = sys.getswitchinterval()
    th = threading.Thread(target=counter)
    th.start()
    started.wait()
    sys.setswitchinterval(30.0)
    try:
        t0 = time.perf_counter()
        call()
        t1 = time.perf_counter()
    finally:
        sys.setswitchinterval(old)
        stop.set()
        th.join()
    return sum(1 for s in stamps if t0 < s < t1), t1 - t0


def test_run_releases_the_gil(rt):
    sess = rt.InferenceSession(_heavy_model())
    x = np.ones((SIZE, SIZE), np.float32)
    inside, elapsed = _stamps_during(lambda: sess.run(None, {"X": x}))
    assert inside >= 3, "the counting thread advanced %d times during a %.3fs run" % (inside, elapsed)


def test_run_with_iobinding_releases_the_gil(rt):
    sess = rt.InferenceSession(_heavy_model())
    binding = sess.io_binding()
    binding.bind_cpu_input("X", np.ones((SIZE, SIZE), np.float32))
    binding.bind_output("Y")
    inside, elapsed = _stamps_during(lambda: sess.run_with_iobinding(binding))
    assert inside >= 3, "the counting thread advanced %d times during a %.3fs run" % (inside, elapsed)


def test_session_creation_releases_the_gil(rt):
    model = _heavy_model(extra_bytes=256 << 20)
    so = rt.SessionOptions()
    # Keep the big ReduceSum unfolded: loading and planning is the work measured.
    so.graph_optimization_level = rt.GraphOptimizationLevel.ORT_DISABLE_ALL
    created = []
    inside, elapsed = _stamps_during(lambda: created.append(rt.InferenceSession(model, so)))
    assert created
    assert inside >= 3, "the counting thread advanced %d times during a %.3fs session creation" % (inside, elapsed)

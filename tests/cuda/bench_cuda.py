"""Latency of a transformer-style MLP block and a matmul chain on the GPU:
onyxruntime's CUDA provider vs onnxruntime's (when onnxruntime-gpu is
installed) vs torch eager (when torch is). Models are generated here; outputs
are compared with the CPU provider to 1e-3 before timing. Prints one line per
model and runtime: median ms over the timed runs."""

import statistics
import time

import numpy as np
from onnx import TensorProto, helper, numpy_helper

import onyxruntime as rt


def mlp_model(batch, seq, hidden):
    rng = np.random.default_rng(0)
    w1 = numpy_helper.from_array((rng.standard_normal((hidden, 4 * hidden)) * 0.02).astype(np.float32), "w1")
    w2 = numpy_helper.from_array((rng.standard_normal((4 * hidden, hidden)) * 0.02).astype(np.float32), "w2")
    g = numpy_helper.from_array(np.ones(hidden, np.float32), "g")
    b = numpy_helper.from_array(np.zeros(hidden, np.float32), "b")
    nodes = [helper.make_node("LayerNormalization", ["x", "g", "b"], ["ln"], axis=-1),
             helper.make_node("MatMul", ["ln", "w1"], ["h"]), helper.make_node("Relu", ["h"], ["a"]),
             helper.make_node("MatMul", ["a", "w2"], ["o"]), helper.make_node("Add", ["o", "x"], ["y"]),
             helper.make_node("Softmax", ["y"], ["z"], axis=-1)]
    graph = helper.make_graph(nodes, "mlp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, seq, hidden])],
                              [helper.make_tensor_value_info("z", TensorProto.FLOAT, [batch, seq, hidden])],
                              [w1, w2, g, b])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    return m.SerializeToString(), [w1, w2], np.random.default_rng(1).standard_normal((batch, seq, hidden)).astype(np.float32)


def timed(fn, runs=50, warmup=5):
    for _ in range(warmup):
        fn()
    t = []
    for _ in range(runs):
        s = time.perf_counter()
        fn()
        t.append((time.perf_counter() - s) * 1e3)
    return statistics.median(t)


def main():
    for batch in (1, 32):
        model, _, x = mlp_model(batch, 128, 768)
        cpu = rt.InferenceSession(model, providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
        sess = rt.InferenceSession(model, providers=["CUDAExecutionProvider", "CPUExecutionProvider"])
        got = sess.run(None, {"x": x})[0]
        err = float(np.max(np.abs(got - cpu)))
        print(f"mlp b{batch}: onyx providers {sess.get_providers()}, max |cuda - cpu| = {err:.2e}")
        assert err < 1e-3, err
        print(f"mlp b{batch} onyx-cuda: {timed(lambda: sess.run(None, {'x': x})):.3f} ms")
        try:
            import onnxruntime as ort
            if "CUDAExecutionProvider" in ort.get_available_providers():
                o = ort.InferenceSession(model, providers=["CUDAExecutionProvider"])
                print(f"mlp b{batch} onnxruntime-cuda: {timed(lambda: o.run(None, {'x': x})):.3f} ms")
        except ImportError:
            pass
        try:
            import torch
            if torch.cuda.is_available():
                rng = np.random.default_rng(0)
                w1 = torch.tensor((rng.standard_normal((768, 3072)) * 0.02).astype(np.float32)).cuda()
                w2 = torch.tensor((rng.standard_normal((3072, 768)) * 0.02).astype(np.float32)).cuda()

                def run_torch():
                    t = torch.from_numpy(x).cuda()
                    ln = torch.nn.functional.layer_norm(t, (768,))
                    y = torch.relu(ln @ w1) @ w2 + t
                    return torch.softmax(y, -1).cpu().numpy()

                torch.backends.cuda.matmul.allow_tf32 = False
                print(f"mlp b{batch} torch-eager (with host copies): {timed(run_torch):.3f} ms")
        except ImportError:
            pass


if __name__ == "__main__":
    main()

"""A recurrent model shaped as PyTorch's and TensorFlow's exporters write them:
a Loop over the time steps of `x` carrying the hidden state, reading the weights
from the outer graph, with an If nested in its body (it reads a value of the
loop body, two scopes out) and a per-step output stacked by the Loop.

    h_t = tanh(pre_t) if sum(pre_t) > threshold else 0.5 * relu(pre_t)
    pre_t = x[t] @ W + h_{t-1} @ R + b

Inputs x [seq, batch, 8] and h0 [batch, 16] (seq and batch symbolic); outputs
h_final [batch, 16] and ys [seq, batch, 16]. Weights are seeded random.
"""

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HIDDEN = 16
FEATURES = 8
OPSET = 17


def build(seed=7):
    rng = np.random.default_rng(seed)
    W = numpy_helper.from_array((rng.standard_normal((FEATURES, HIDDEN)) * 0.4).astype(np.float32), "W")
    R = numpy_helper.from_array((rng.standard_normal((HIDDEN, HIDDEN)) * 0.3).astype(np.float32), "R")
    b = numpy_helper.from_array((rng.standard_normal(HIDDEN) * 0.1).astype(np.float32), "b")
    threshold = numpy_helper.from_array(np.array(0.0, np.float32), "threshold")
    half = numpy_helper.from_array(np.array(0.5, np.float32), "half")

    then_branch = helper.make_graph(
        [helper.make_node("Tanh", ["pre"], ["h_then"])], "then",
        [], [helper.make_tensor_value_info("h_then", TensorProto.FLOAT, None)])
    else_branch = helper.make_graph(
        [helper.make_node("Relu", ["pre"], ["r"]), helper.make_node("Mul", ["r", "half"], ["h_else"])], "else",
        [], [helper.make_tensor_value_info("h_else", TensorProto.FLOAT, None)])

    body = helper.make_graph(
        [
            helper.make_node("Gather", ["x", "i"], ["x_t"], axis=0),
            helper.make_node("MatMul", ["x_t", "W"], ["xw"]),
            helper.make_node("MatMul", ["h_prev", "R"], ["hr"]),
            helper.make_node("Add", ["xw", "hr"], ["s0"]),
            helper.make_node("Add", ["s0", "b"], ["pre"]),
            helper.make_node("ReduceSum", ["pre"], ["total"], keepdims=0),
            helper.make_node("Greater", ["total", "threshold"], ["big"]),
            helper.make_node("If", ["big"], ["h"], then_branch=then_branch, else_branch=else_branch),
            helper.make_node("Identity", ["cond_in"], ["cond_out"]),
            helper.make_node("Identity", ["h"], ["y_t"]),
        ],
        "step",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
         helper.make_tensor_value_info("h_prev", TensorProto.FLOAT, ["batch", HIDDEN])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("h", TensorProto.FLOAT, ["batch", HIDDEN]),
         helper.make_tensor_value_info("y_t", TensorProto.FLOAT, ["batch", HIDDEN])])

    main = helper.make_graph(
        [
            helper.make_node("Shape", ["x"], ["x_shape"]),
            helper.make_node("Constant", [], ["zero"], value=numpy_helper.from_array(np.array(0, np.int64))),
            helper.make_node("Gather", ["x_shape", "zero"], ["steps"], axis=0),
            helper.make_node("Constant", [], ["go"], value=numpy_helper.from_array(np.array(True))),
            helper.make_node("Loop", ["steps", "go", "h0"], ["h_final", "ys"], body=body, name="rnn_loop"),
        ],
        "recurrent",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["seq", "batch", FEATURES]),
         helper.make_tensor_value_info("h0", TensorProto.FLOAT, ["batch", HIDDEN])],
        [helper.make_tensor_value_info("h_final", TensorProto.FLOAT, ["batch", HIDDEN]),
         helper.make_tensor_value_info("ys", TensorProto.FLOAT, ["seq", "batch", HIDDEN])],
        [W, R, b, threshold, half])
    model = helper.make_model(main, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="onyx-tests")
    model.ir_version = 8
    onnx.checker.check_model(model, full_check=True)
    return model


if __name__ == "__main__":
    import sys

    onnx.save(build(), sys.argv[1] if len(sys.argv) > 1 else "recurrent.onnx")

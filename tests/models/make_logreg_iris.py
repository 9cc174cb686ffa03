"""Builds onyxruntime/datasets/logreg_iris.onnx, the example model of the backend
seed (`datasets.get_example("logreg_iris.onnx")`).

A three-class logistic regression over two features (sepal length and width),
with the interface of onnxruntime's example of the same name: input
'float_input' float[3, 2]; outputs 'label' int64[3] and 'probabilities', a
sequence of {class: probability} maps (ZipMap). The coefficients are fitted
here, by gradient descent with a fixed seed, on samples drawn around the iris
species' mean sepal sizes, so the file is reproducible byte for byte:

    python tests/models/make_logreg_iris.py [output path]
"""

import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

# Mean and spread of (sepal length, sepal width) per species, in cm.
SPECIES = [((5.01, 3.43), (0.35, 0.38)), ((5.94, 2.77), (0.52, 0.31)), ((6.59, 2.97), (0.64, 0.32))]
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, os.pardir,
                   "bindings", "python", "onyxruntime", "datasets", "logreg_iris.onnx")


def fit(seed=0, n=200, steps=3000, lr=0.1):
    rng = np.random.default_rng(seed)
    xs, ys = [], []
    for label, (mean, std) in enumerate(SPECIES):
        xs.append(rng.normal(mean, std, size=(n, 2)))
        ys.append(np.full(n, label))
    x, y = np.concatenate(xs), np.concatenate(ys)
    mu, sd = x.mean(0), x.std(0)
    z = (x - mu) / sd
    w, b = np.zeros((2, 3)), np.zeros(3)
    onehot = np.eye(3)[y]
    for _ in range(steps):
        logits = z @ w + b
        p = np.exp(logits - logits.max(1, keepdims=True))
        p /= p.sum(1, keepdims=True)
        g = (p - onehot) / len(z)
        w -= lr * z.T @ g
        b -= lr * g.sum(0)
    # Fold the standardisation into the weights: scores = x @ W + B.
    return (w / sd[:, None]).astype(np.float32), (b - (mu / sd) @ w).astype(np.float32)


def build():
    coef, intercept = fit()
    nodes = [
        helper.make_node("MatMul", ["float_input", "coef"], ["linear"], name="linear"),
        helper.make_node("Add", ["linear", "intercept"], ["scores"], name="scores"),
        helper.make_node("ArgMax", ["scores"], ["label"], axis=1, keepdims=0, name="label"),
        helper.make_node("Softmax", ["scores"], ["probability_tensor"], axis=1, name="softmax"),
        helper.make_node("ZipMap", ["probability_tensor"], ["probabilities"], classlabels_int64s=[0, 1, 2],
                         domain="ai.onnx.ml", name="zipmap"),
    ]
    prob_type = helper.make_sequence_type_proto(helper.make_map_type_proto(
        TensorProto.INT64, helper.make_tensor_type_proto(TensorProto.FLOAT, [])))
    graph = helper.make_graph(
        nodes, "logreg_iris",
        [helper.make_tensor_value_info("float_input", TensorProto.FLOAT, [3, 2])],
        [helper.make_tensor_value_info("label", TensorProto.INT64, [3]),
         helper.make_value_info("probabilities", prob_type)],
        [numpy_helper.from_array(coef, "coef"), numpy_helper.from_array(intercept, "intercept")])
    model = helper.make_model(graph, producer_name="onyxruntime-examples", ir_version=8,
                              opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid("ai.onnx.ml", 1)])
    model.doc_string = "Logistic regression on iris sepal length and width (see tests/models/make_logreg_iris.py)."
    return model.SerializeToString()


if __name__ == "__main__":
    path = sys.argv[1] if len(sys.argv) > 1 else OUT
    with open(path, "wb") as f:
        f.write(build())
    print(path)

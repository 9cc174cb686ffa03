"""Example models shipped with the package (as onnxruntime.datasets).

logreg_iris.onnx: a three-class logistic regression over two iris features,
made by tests/models/make_logreg_iris.py.
"""

import os

_HERE = os.path.dirname(os.path.abspath(__file__))


def get_example(name):
    """The full path of the example model `name` (e.g. 'logreg_iris.onnx')."""
    path = os.path.join(_HERE, name)
    if not os.path.isfile(path):
        known = sorted(f for f in os.listdir(_HERE) if f.endswith(".onnx"))
        raise FileNotFoundError("Unable to find example '%s' (examples: %s)" % (name, ", ".join(known)))
    return path

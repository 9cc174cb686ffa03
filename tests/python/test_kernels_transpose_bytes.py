"""Transpose of 1-byte elements (int8, uint8, bool) that is a batched matrix
transpose once dims of size 1 are dropped and neighbouring axes merged
(NCHW <-> NHWC, a plain 2-D transpose) takes the SIMD byte transposer; every
permutation of a few shapes, odd sizes and sizes past one 16 x 64 block
included, against numpy, on each SIMD path."""

import itertools
import json

import numpy as np
import pytest
from onnx import TensorProto, helper

from test_cpu_path import _paths, _probe

PROBE = r"""
import itertools, json
import numpy as np
from onnx import TensorProto, helper
import onyxruntime as rt
rng = np.random.default_rng(0)
bad = []
count = 0
shapes = [(2, 3, 4, 5), (1, 64, 7, 9), (3, 1, 17, 33), (1, 1, 5, 1), (2, 16, 1, 40), (37, 70), (1, 130, 65),
          (2, 3, 1, 4, 5), (1, 256, 28, 28), (2, 3, 50, 45)]
types = [(np.uint8, TensorProto.UINT8), (np.int8, TensorProto.INT8), (np.bool_, TensorProto.BOOL)]
so = rt.SessionOptions()
so.intra_op_num_threads = 2
for shape in shapes:
    perms = list(itertools.permutations(range(len(shape))))
    if len(shape) == 4 and shape[1] in (256, 3) and shape[2] > 20:
        perms = [(0, 2, 3, 1), (0, 3, 1, 2)]
    for perm in perms:
        for dt, tp in types:
            x = rng.integers(0, 256, shape).astype(np.uint8).astype(dt)
            g = helper.make_graph([helper.make_node("Transpose", ["x"], ["y"], perm=list(perm))], "g",
                                  [helper.make_tensor_value_info("x", tp, list(shape))],
                                  [helper.make_tensor_value_info("y", tp, None)])
            m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
            y = rt.InferenceSession(m.SerializeToString(), so).run(None, {"x": x})[0]
            count += 1
            if y.shape != x.transpose(perm).shape or not np.array_equal(y, x.transpose(perm)):
                bad.append([list(shape), list(perm), str(dt)])
print(json.dumps({"count": count, "bad": bad[:5]}))
"""


@pytest.mark.parametrize("isa", _paths())
def test_byte_transposes_match_numpy(isa):
    res = json.loads(_probe(isa, PROBE, timeout=300).strip().splitlines()[-1])
    assert res["count"] > 700 and not res["bad"], res

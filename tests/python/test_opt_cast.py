"""cast_elimination: a Cast to the type it already has goes, and a chain of
Casts goes or shortens only where the first Cast keeps every value exactly."""

import numpy as np
import pytest
from onnx import TensorProto as T, helper

from opt_fusion_util import ONYX_ONLY, check_fusion, make_model

pytestmark = ONYX_ONLY

rng = np.random.default_rng(71)
NP = {T.FLOAT: np.float32, T.DOUBLE: np.float64, T.FLOAT16: np.float16, T.INT32: np.int32, T.INT64: np.int64,
      T.INT8: np.int8, T.UINT8: np.uint8, T.BOOL: np.bool_}


def _chain(src, mids, n=6):
    nodes, prev = [], "x"
    for k, t in enumerate(mids):
        nodes.append(helper.make_node("Cast", [prev], ["c%d" % k], to=t))
        prev = "c%d" % k
    nodes.append(helper.make_node("Identity", [prev], ["y"]))
    model = make_model(nodes, [("x", src, [n])], [("y", mids[-1], None)])
    if src in (T.FLOAT, T.DOUBLE, T.FLOAT16):
        x = (rng.standard_normal(n) * 1e3).astype(NP[src])
    elif src == T.BOOL:
        x = rng.integers(0, 2, n).astype(np.bool_)
    else:
        x = rng.integers(0, 100, n).astype(NP[src])
    return model, {"x": x}


@pytest.mark.parametrize("src,mids,left", [
    (T.FLOAT, [T.FLOAT], 0),                  # no-op
    (T.FLOAT, [T.DOUBLE, T.FLOAT], 0),        # round trip through a wider type
    (T.INT32, [T.INT64, T.INT32], 0),
    (T.BOOL, [T.FLOAT, T.BOOL], 0),
    (T.INT32, [T.INT64, T.DOUBLE], 1),        # both widen: one Cast
    (T.FLOAT16, [T.FLOAT, T.DOUBLE], 1),
    (T.FLOAT, [T.FLOAT16, T.FLOAT], 2),       # float16 rounds
    (T.FLOAT, [T.INT32, T.FLOAT], 2),         # truncates
    (T.INT64, [T.FLOAT, T.INT64], 2),         # float cannot hold every int64
    (T.INT8, [T.INT32, T.UINT8], 2),          # the last Cast narrows: wraps differ by source type
])
def test_cast_chains(onyx, tmp_path, src, mids, left):
    model, feeds = _chain(src, mids)
    check_fusion(onyx, model, feeds, tmp_path, present={"Cast": left})


def test_levels(onyx, tmp_path):
    model, feeds = _chain(T.FLOAT, [T.DOUBLE, T.FLOAT])
    check_fusion(onyx, model, feeds, tmp_path, level="ORT_DISABLE_ALL", present={"Cast": 2})
    check_fusion(onyx, model, feeds, tmp_path, level="ORT_ENABLE_BASIC", present={"Cast": 0})
    check_fusion(onyx, model, feeds, tmp_path, disabled="CastElimination", present={"Cast": 2})

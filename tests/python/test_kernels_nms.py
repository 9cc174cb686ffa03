"""NonMaxSuppression (opsets 10 and 11): both box formats, per-class selection,
max_output_boxes_per_class, IoU and score thresholds, ties and flipped corners,
against onnx.reference.ReferenceEvaluator and onnxruntime; bad inputs fail with
an error naming the node and the input."""

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

import onyxruntime as rt

RNG = np.random.default_rng(3)


def _model(opset=11, center=0, n_inputs=5):
    names = ["boxes", "scores", "max_out", "iou", "score_th"][:n_inputs]
    elems = [TensorProto.FLOAT, TensorProto.FLOAT, TensorProto.INT64, TensorProto.FLOAT, TensorProto.FLOAT]
    node = helper.make_node("NonMaxSuppression", names, ["sel"], center_point_box=center, name="nms")
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info(n, e, None) for n, e in zip(names, elems)],
                              [helper.make_tensor_value_info("sel", TensorProto.INT64, None)])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m


def _feeds(boxes, scores, max_out=None, iou=None, score_th=None):
    f = {"boxes": boxes.astype(np.float32), "scores": scores.astype(np.float32)}
    if max_out is not None:
        f["max_out"] = np.array([max_out], np.int64)
    if iou is not None:
        f["iou"] = np.array([iou], np.float32)
    if score_th is not None:
        f["score_th"] = np.array([score_th], np.float32)
    return f


def _run(m, feeds):
    return rt.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)[0]


def _check(m, feeds, use_ref=True):
    y = _run(m, feeds)
    # onnx's reference reads max_output_boxes_per_class and iou_threshold even when omitted.
    ref = ReferenceEvaluator(m).run(None, feeds)[0] if use_ref else y
    theirs = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)[0]
    assert y.dtype == np.int64
    np.testing.assert_array_equal(y, ref.reshape(-1, 3))
    np.testing.assert_array_equal(y, theirs)
    return y


def _random_boxes(batches, n, center):
    if center:
        c = RNG.uniform(0, 10, (batches, n, 2))
        wh = RNG.uniform(0.5, 4, (batches, n, 2))
        return np.concatenate([c, wh], axis=2)
    p1 = RNG.uniform(0, 10, (batches, n, 2))
    p2 = p1 + RNG.uniform(-4, 4, (batches, n, 2))  # some corners flipped
    return np.concatenate([p1, p2], axis=2)


@pytest.mark.parametrize("opset", [10, 11])
@pytest.mark.parametrize("center", [0, 1])
@pytest.mark.parametrize("iou,score_th,max_out", [(0.5, 0.2, 5), (0.3, None, 100), (0.0, 0.5, 3), (1.0, 0.0, 50),
                                                  (0.7, None, 0)])
def test_nms_random(opset, center, iou, score_th, max_out):
    boxes = _random_boxes(3, 40, center)
    scores = RNG.uniform(0, 1, (3, 4, 40))
    _check(_model(opset, center, 5 if score_th is not None else 4), _feeds(boxes, scores, max_out, iou, score_th))


def test_nms_ties_take_lower_index_and_duplicates_suppress():
    boxes = np.tile(np.array([0, 0, 1, 1], np.float32), (1, 6, 1))
    scores = np.array([[[0.5, 0.9, 0.9, 0.1, 0.9, 0.3]]], np.float32)
    y = _check(_model(), _feeds(boxes, scores, 10, 0.5, 0.0))
    np.testing.assert_array_equal(y, [[0, 0, 1]])


def test_nms_optional_inputs_omitted():
    boxes = _random_boxes(1, 8, 0)
    scores = RNG.uniform(0, 1, (1, 2, 8))
    # Without max_output_boxes_per_class nothing is selected.
    y = _check(_model(n_inputs=2), _feeds(boxes, scores), use_ref=False)
    assert y.shape == (0, 3)
    _check(_model(n_inputs=3), _feeds(boxes, scores, 4), use_ref=False)
    _check(_model(n_inputs=4), _feeds(boxes, scores, 4, 0.2))


def test_nms_empty_boxes():
    y = _check(_model(), _feeds(np.zeros((2, 0, 4)), np.zeros((2, 3, 0)), 5, 0.5, 0.1))
    assert y.shape == (0, 3)


def test_nms_nan_scores_do_not_crash():
    boxes = _random_boxes(1, 6, 0)
    scores = np.array([[[0.2, np.nan, 0.9, np.nan, 0.1, 0.5]]], np.float32)
    y = _run(_model(n_inputs=4), _feeds(boxes, scores, 10, 1.0))
    # Every non-NaN score is selected first, in descending order.
    np.testing.assert_array_equal(y[:4, 2], [2, 5, 0, 4])


def _fails(m, feeds, *words):
    sess = rt.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    with pytest.raises(Exception) as e:
        sess.run(None, feeds)
    for w in ("nms",) + words:
        assert w in str(e.value), str(e.value)


def test_nms_bad_inputs():
    boxes, scores = _random_boxes(1, 5, 0), RNG.uniform(0, 1, (1, 2, 5))
    _fails(_model(), _feeds(boxes[..., :3], scores, 3, 0.5, 0.0), "input 0 (boxes)", "[1,5,3]")
    _fails(_model(), _feeds(boxes, scores[:, :, :4], 3, 0.5, 0.0), "input 1 (scores)", "[1,2,4]", "[1,5,4]")
    _fails(_model(), _feeds(boxes, scores[0], 3, 0.5, 0.0), "input 1 (scores)", "[2,5]")
    _fails(_model(), _feeds(boxes, scores, 3, 1.5, 0.0), "input 3 (iou_threshold)", "1.5")
    f = _feeds(boxes, scores, 3, 0.5, 0.0)
    f["iou"] = np.array([0.5, 0.6], np.float32)
    _fails(_model(), f, "input 3 (iou_threshold)", "one value")
    f = _feeds(boxes, scores, 3, 0.5, 0.0)
    f["max_out"] = np.array([1, 2], np.int64)
    _fails(_model(), f, "input 2 (max_output_boxes_per_class)")


def test_nms_bad_center_point_box():
    m = _model(center=2)
    with pytest.raises(Exception) as e:
        rt.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    assert "nms" in str(e.value) and "center_point_box" in str(e.value) and "2" in str(e.value)

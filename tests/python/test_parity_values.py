"""Non-tensor values (sequences, maps, optionals) in and out of a session,
checked against onnxruntime: they come back as lists, dicts and None."""

import numpy as np
import pytest
from onnx import TensorProto, helper

from conftest import is_ort


def _model(nodes, inputs, outputs, opset=18, ml=False):
    imports = [helper.make_opsetid("", opset)] + ([helper.make_opsetid("ai.onnx.ml", 1)] if ml else [])
    graph = helper.make_graph(nodes, "values", inputs, outputs)
    return helper.make_model(graph, opset_imports=imports, ir_version=8).SerializeToString()


def _seq_info(name, elem=TensorProto.FLOAT):
    return helper.make_value_info(name, helper.make_sequence_type_proto(helper.make_tensor_type_proto(elem, None)))


X = np.arange(12, dtype=np.float32).reshape(6, 2)


def test_sequence_output_is_a_list_of_arrays(rt):
    model = _model([helper.make_node("SplitToSequence", ["X"], ["S"], axis=0, keepdims=1)],
                   [helper.make_tensor_value_info("X", TensorProto.FLOAT, [6, 2])], [_seq_info("S")])
    (seq,) = rt.InferenceSession(model).run(None, {"X": X})
    assert isinstance(seq, list) and len(seq) == 6
    for i, item in enumerate(seq):
        np.testing.assert_array_equal(item, X[i:i + 1])


def test_sequence_input_from_a_list(rt):
    model = _model([helper.make_node("ConcatFromSequence", ["S"], ["Y"], axis=0),
                    helper.make_node("SequenceLength", ["S"], ["N"])],
                   [_seq_info("S")],
                   [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None),
                    helper.make_tensor_value_info("N", TensorProto.INT64, [])])
    sess = rt.InferenceSession(model)
    assert sess.get_inputs()[0].type == "seq(tensor(float))"
    items = [np.ones((1, 2), np.float32), np.full((2, 2), 2.0, np.float32)]
    y, n = sess.run(None, {"S": items})
    np.testing.assert_array_equal(y, np.concatenate(items))
    assert int(n) == 2


def test_sequence_output_as_ortvalue(rt):
    model = _model([helper.make_node("SplitToSequence", ["X"], ["S"], axis=0, keepdims=0)],
                   [helper.make_tensor_value_info("X", TensorProto.FLOAT, [6, 2])], [_seq_info("S")])
    sess = rt.InferenceSession(model)
    (out,) = sess.run_with_ort_values(None, {"X": rt.OrtValue.ortvalue_from_numpy(X)})
    assert not out.is_tensor()
    assert out.has_value()
    assert out.data_type() == "seq(tensor(float))"


def test_zipmap_gives_a_list_of_dicts(rt):
    model = _model([helper.make_node("ZipMap", ["P"], ["Z"], classlabels_int64s=[10, 20], domain="ai.onnx.ml")],
                   [helper.make_tensor_value_info("P", TensorProto.FLOAT, [2, 2])],
                   [helper.make_value_info("Z", helper.make_sequence_type_proto(helper.make_map_type_proto(
                       TensorProto.INT64, helper.make_tensor_type_proto(TensorProto.FLOAT, []))))],
                   opset=17, ml=True)
    p = np.array([[0.25, 0.75], [0.5, 0.5]], np.float32)
    (z,) = rt.InferenceSession(model).run(None, {"P": p})
    assert z == [{10: 0.25, 20: 0.75}, {10: 0.5, 20: 0.5}]


def test_zipmap_string_labels(rt):
    model = _model([helper.make_node("ZipMap", ["P"], ["Z"], classlabels_strings=["a", "b"], domain="ai.onnx.ml")],
                   [helper.make_tensor_value_info("P", TensorProto.FLOAT, [1, 2])],
                   [helper.make_value_info("Z", helper.make_sequence_type_proto(helper.make_map_type_proto(
                       TensorProto.STRING, helper.make_tensor_type_proto(TensorProto.FLOAT, []))))],
                   opset=17, ml=True)
    (z,) = rt.InferenceSession(model).run(None, {"P": np.array([[0.5, 0.25]], np.float32)})
    assert z == [{"a": 0.5, "b": 0.25}]


def test_empty_optional_output_is_none(rt):
    opt = helper.make_optional_type_proto(helper.make_tensor_type_proto(TensorProto.FLOAT, [2]))
    model = _model([helper.make_node("Optional", [], ["O"], type=helper.make_tensor_type_proto(TensorProto.FLOAT, [2])),
                    helper.make_node("OptionalHasElement", ["O"], ["H"])],
                   [helper.make_tensor_value_info("X", TensorProto.FLOAT, [1])],
                   [helper.make_value_info("O", opt), helper.make_tensor_value_info("H", TensorProto.BOOL, [])])
    o, h = rt.InferenceSession(model).run(None, {"X": np.zeros(1, np.float32)})
    assert o is None
    assert not bool(h)


def test_sequence_element_of_wrong_type_is_refused(rt):
    model = _model([helper.make_node("SequenceLength", ["S"], ["N"])], [_seq_info("S")],
                   [helper.make_tensor_value_info("N", TensorProto.INT64, [])])
    sess = rt.InferenceSession(model)
    with pytest.raises(Exception, match=None if is_ort(rt) else "element 0 is not a tensor\\(float\\)"):
        sess.run(None, {"S": [np.ones(2, np.int64)]})

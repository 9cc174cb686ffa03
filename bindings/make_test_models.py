"""Writes the Java and C# tests' models (onnx helper, opset 17) into the folder given."""
import sys
from onnx import TensorProto, helper, save

out = sys.argv[1]
f = TensorProto.FLOAT


def model(nodes, name, inputs, outputs):
    graph = helper.make_graph(nodes, name, inputs, outputs)
    save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), f"{out}/{name}.onnx")


model([helper.make_node("Add", ["x", "y"], ["z"])], "add",
      [helper.make_tensor_value_info("x", f, [2, 3]), helper.make_tensor_value_info("y", f, [2, 3])],
      [helper.make_tensor_value_info("z", f, [2, 3])])
model([helper.make_node("Cast", ["ids"], ["ids_f"], to=TensorProto.DOUBLE),
       helper.make_node("ReduceSum", ["ids"], ["total"], keepdims=0),
       helper.make_node("Neg", ["n"], ["neg"])],
      "mixed",
      [helper.make_tensor_value_info("ids", TensorProto.INT64, ["n"]),
       helper.make_tensor_value_info("n", TensorProto.INT32, [2])],
      [helper.make_tensor_value_info("ids_f", TensorProto.DOUBLE, ["n"]),
       helper.make_tensor_value_info("total", TensorProto.INT64, []),
       helper.make_tensor_value_info("neg", TensorProto.INT32, [2])])
# float16 in (as raw bits from the bindings), float out; a bool mask out.
model([helper.make_node("Cast", ["h"], ["h_f"], to=f),
       helper.make_node("Not", ["mask"], ["not_mask"])],
      "half",
      [helper.make_tensor_value_info("h", TensorProto.FLOAT16, [4]),
       helper.make_tensor_value_info("mask", TensorProto.BOOL, [3])],
      [helper.make_tensor_value_info("h_f", f, [4]), helper.make_tensor_value_info("not_mask", TensorProto.BOOL, [3])])
# A sequence output: bindings that read tensors only report its kind.
model([helper.make_node("SequenceConstruct", ["a", "a"], ["s"])], "seq",
      [helper.make_tensor_value_info("a", f, [2])],
      [helper.make_tensor_sequence_value_info("s", f, [2]) if hasattr(helper, "make_tensor_sequence_value_info")
       else helper.make_value_info("s", helper.make_sequence_type_proto(helper.make_tensor_type_proto(f, [2])))])

ml = helper.make_opsetid("ai.onnx.ml", 3)


def ml_model(nodes, name, inputs, outputs, opset=17):
    graph = helper.make_graph(nodes, name, inputs, outputs)
    save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset), ml]), f"{out}/{name}.onnx")


def seq_of(elem):
    return helper.make_sequence_type_proto(elem)


def map_of(key, value):
    return helper.make_map_type_proto(key, helper.make_tensor_type_proto(value, None))


# A scikit-learn-style classifier: LinearClassifier (softmax) then ZipMap, once with int64 class labels
# (seq(map(int64,float)), what skl2onnx writes) and once with string labels (seq(map(string,float))).
# The tests recompute the probabilities from these weights.
COEFS = [0.5, -1.0, 2.0, 1.5, 0.25, -0.5, -2.0, 1.0, 0.75]  # 3 classes x 3 features, row-major
INTERCEPTS = [0.1, -0.2, 0.3]
ml_model([helper.make_node("LinearClassifier", ["X"], ["label", "probs"], domain="ai.onnx.ml",
                           classlabels_ints=[10, 20, 30], coefficients=COEFS, intercepts=INTERCEPTS,
                           post_transform="SOFTMAX"),
          helper.make_node("ZipMap", ["probs"], ["by_id"], domain="ai.onnx.ml", classlabels_int64s=[10, 20, 30]),
          helper.make_node("ZipMap", ["probs"], ["by_name"], domain="ai.onnx.ml",
                           classlabels_strings=["cat", "dog", "eel"])],
         "zipmap", [helper.make_tensor_value_info("X", f, ["N", 3])],
         [helper.make_tensor_value_info("label", TensorProto.INT64, ["N"]),
          helper.make_value_info("by_id", seq_of(map_of(TensorProto.INT64, f))),
          helper.make_value_info("by_name", seq_of(map_of(TensorProto.STRING, f)))])
# Maps in: DictVectorizer turns each map into a dense row; the map inputs are also graph outputs, so a map
# comes back out as it went in.
ml_model([helper.make_node("DictVectorizer", ["ids"], ["ids_dense"], domain="ai.onnx.ml",
                           int64_vocabulary=[1, 2, 5, 7]),
          helper.make_node("DictVectorizer", ["words"], ["words_dense"], domain="ai.onnx.ml",
                           string_vocabulary=["a", "b", "c"])],
         "maps",
         [helper.make_value_info("ids", map_of(TensorProto.INT64, f)),
          helper.make_value_info("words", map_of(TensorProto.STRING, TensorProto.DOUBLE))],
         [helper.make_tensor_value_info("ids_dense", f, [1, 4]),
          helper.make_tensor_value_info("words_dense", TensorProto.DOUBLE, [1, 3]),
          helper.make_value_info("ids", map_of(TensorProto.INT64, f))])
# A sequence of tensors in: concatenated, counted, indexed, and split back into a sequence out.
model_in = helper.make_value_info("s", seq_of(helper.make_tensor_type_proto(f, [None, 2])))
model([helper.make_node("ConcatFromSequence", ["s"], ["cat"], axis=0),
       helper.make_node("SequenceLength", ["s"], ["len"]),
       helper.make_node("SequenceAt", ["s", "i"], ["at"]),
       helper.make_node("SplitToSequence", ["cat"], ["rows"], axis=0, keepdims=0)],
      "seqcat", [model_in, helper.make_tensor_value_info("i", TensorProto.INT64, [])],
      [helper.make_tensor_value_info("cat", f, [None, 2]), helper.make_tensor_value_info("len", TensorProto.INT64, []),
       helper.make_tensor_value_info("at", f, [None, 2]),
       helper.make_value_info("rows", seq_of(helper.make_tensor_type_proto(f, [2])))])
# Optionals: one present and one absent out, and whether an optional input holds a value.
opt_f = helper.make_optional_type_proto(helper.make_tensor_type_proto(f, [2]))
ml_model([helper.make_node("Optional", ["a"], ["present"]),
          helper.make_node("Optional", [], ["absent"], type=helper.make_tensor_type_proto(f, [2])),
          helper.make_node("OptionalHasElement", ["o"], ["has"])],
         "optional", [helper.make_tensor_value_info("a", f, [2]), helper.make_value_info("o", opt_f)],
         [helper.make_value_info("present", opt_f), helper.make_value_info("absent", opt_f),
          helper.make_tensor_value_info("has", TensorProto.BOOL, [])], opset=18)

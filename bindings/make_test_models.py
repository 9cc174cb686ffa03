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

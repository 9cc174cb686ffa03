"""Writes the Java tests' models (onnx helper, opset 17) into the folder given."""
import sys
from onnx import TensorProto, helper, save

out = sys.argv[1]
f = TensorProto.FLOAT
add = helper.make_graph([helper.make_node("Add", ["x", "y"], ["z"])], "add",
                        [helper.make_tensor_value_info("x", f, [2, 3]), helper.make_tensor_value_info("y", f, [2, 3])],
                        [helper.make_tensor_value_info("z", f, [2, 3])])
save(helper.make_model(add, opset_imports=[helper.make_opsetid("", 17)]), f"{out}/add.onnx")
mixed = helper.make_graph(
    [helper.make_node("Cast", ["ids"], ["ids_f"], to=TensorProto.DOUBLE),
     helper.make_node("ReduceSum", ["ids"], ["total"], keepdims=0),
     helper.make_node("Neg", ["n"], ["neg"])],
    "mixed",
    [helper.make_tensor_value_info("ids", TensorProto.INT64, ["n"]), helper.make_tensor_value_info("n", TensorProto.INT32, [2])],
    [helper.make_tensor_value_info("ids_f", TensorProto.DOUBLE, ["n"]),
     helper.make_tensor_value_info("total", TensorProto.INT64, []),
     helper.make_tensor_value_info("neg", TensorProto.INT32, [2])])
save(helper.make_model(mixed, opset_imports=[helper.make_opsetid("", 17)]), f"{out}/mixed.onnx")

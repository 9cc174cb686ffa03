"""Float16 versions of float32 ONNX models, for the CUDA provider's half
path: every float32 initializer, Constant/ConstantOfShape value, graph
input/output/value_info and Cast-to-float becomes float16 (values
clipped to float16's finite range) (integer tensors,
attributes such as epsilon, and LayerNormalization's float statistics stay
as they are). Only what the benchmark models use; subgraphs are not walked
(a model with one is refused).

    from fp16_model import to_float16
    half = to_float16(onnx_model)       # a new ModelProto
"""

import copy

import numpy as np
from onnx import TensorProto, helper, numpy_helper

F32, F16 = TensorProto.FLOAT, TensorProto.FLOAT16


def _tensor_to_half(t):
    if t.data_type != F32:
        return t
    # Values beyond float16's range (a mask's float32 minimum) clip to its
    # finite limits: -inf would turn a 0 * mask into NaN.
    lim = float(np.finfo(np.float16).max)
    return numpy_helper.from_array(np.clip(numpy_helper.to_array(t), -lim, lim).astype(np.float16), t.name)


def _type_to_half(vi):
    tt = vi.type.tensor_type
    if tt.elem_type == F32:
        tt.elem_type = F16


def to_float16(model):
    m = copy.deepcopy(model)
    g = m.graph
    for i, t in enumerate(g.initializer):
        if t.data_type == F32:
            g.initializer[i].CopyFrom(_tensor_to_half(t))
    for vi in list(g.input) + list(g.output) + list(g.value_info):
        _type_to_half(vi)
    for node in g.node:
        for a in node.attribute:
            if a.type in (helper.AttributeProto.GRAPH, helper.AttributeProto.GRAPHS):
                raise ValueError("node %r has a subgraph: not converted" % node.name)
            if node.op_type == "Cast" and a.name == "to" and a.i == F32:
                a.i = F16
            if node.op_type in ("Constant", "ConstantOfShape") and a.name == "value" and a.t.data_type == F32:
                a.t.CopyFrom(_tensor_to_half(a.t))
    return m

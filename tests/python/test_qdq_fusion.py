"""qdq_fusion: DQ -> op -> Q groups of a QDQ model become onnxruntime's integer
operators (QLinearMatMul, QLinearConv, com.microsoft QLinearAdd/Mul/Softmax/...),
and QDQ pairs with equal parameters around data movement (Reshape, Transpose,
MaxPool, ...) are dropped; only under onnxruntime's selector rules. The fused
model gives onnxruntime's outputs bit for bit (onnxruntime fuses the same
groups and requantizes the same way), and level 'disabled' leaves the QDQ
nodes in place."""

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

F = TensorProto.FLOAT
rng = np.random.default_rng(11)


def _init(name, value):
    return numpy_helper.from_array(np.asarray(value), name)


def _qparams(prefix, scale, zp, dtype=np.int8):
    return [_init(prefix + "_s", np.float32(scale)), _init(prefix + "_z", np.array(zp, dtype))]


def _q(x, prefix, out):
    return helper.make_node("QuantizeLinear", [x, prefix + "_s", prefix + "_z"], [out])


def _dq(x, prefix, out, **attrs):
    return helper.make_node("DequantizeLinear", [x, prefix + "_s", prefix + "_z"], [out], **attrs)


def _model(nodes, inits, x_shape, out="y", opset=17):
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", F, list(x_shape))],
                              [helper.make_tensor_value_info(out, F, None)], inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m


def _fused_ops(onyx, model, tmp_path):
    so = onyx.SessionOptions()
    so.graph_optimization_level = onyx.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
    so.optimized_model_filepath = str(tmp_path / "opt.onnx")
    sess = onyx.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    return sess, [n.op_type for n in onnx.load(so.optimized_model_filepath).graph.node]


def _check(onyx, model, sess, x):
    theirs = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": x})
    np.testing.assert_array_equal(sess.run(None, {"x": x})[0], theirs[0])
    so = onyx.SessionOptions()
    so.graph_optimization_level = onyx.GraphOptimizationLevel.ORT_DISABLE_ALL
    plain = onyx.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"]).run(None, {"x": x})
    # Unfused, float MatMul/Conv between the QDQ pairs: a step apart at most.
    step = 0.05
    assert np.abs(plain[0] - theirs[0]).max() <= step * 1.0001


def _matmul_model(shared_dq=False, per_column=False):
    K, N = 48, 20
    w = rng.integers(-127, 128, (K, N)).astype(np.int8)
    inits = _qparams("x", 0.03, 3) + _qparams("y", 0.05, -2) + [_init("w_q", w)]
    if per_column:
        inits += [_init("w_s", rng.uniform(0.005, 0.02, N).astype(np.float32)), _init("w_z", np.zeros(N, np.int8))]
    else:
        inits += _qparams("w", 0.01, 0)
    nodes = [_q("x", "x", "xq"), _dq("xq", "x", "xd"), _dq("w_q", "w", "wd", axis=1), helper.make_node("MatMul", ["xd", "wd"], ["m"]),
             _q("m", "y", "mq"), _dq("mq", "y", "y")]
    out = "y"
    if shared_dq:  # a second reader of xd: onnxruntime leaves the group unfused
        nodes += [helper.make_node("Add", ["y", "xd2"], ["y2"])]
        nodes.insert(2, helper.make_node("Slice", ["xd", "st", "en", "ax"], ["xd2"]))
        inits += [_init("st", np.array([0], np.int64)), _init("en", np.array([N], np.int64)),
                  _init("ax", np.array([1], np.int64))]
        out = "y2"
    return _model(nodes, inits, (3, K), out=out)


@pytest.mark.parametrize("per_column", [False, True])
def test_matmul_group_becomes_qlinearmatmul(onyx, tmp_path, per_column):
    model = _matmul_model(per_column=per_column)
    sess, ops = _fused_ops(onyx, model, tmp_path)
    assert ops == ["QuantizeLinear", "QLinearMatMul", "DequantizeLinear"], ops
    _check(onyx, model, sess, rng.standard_normal((3, 48)).astype(np.float32))


def test_disable_quant_qdq_keeps_the_group_as_written(onyx, tmp_path):
    # onnxruntime's session key: '1' turns its QDQ transformers off; here it
    # turns qdq_fusion off, and '0' (the default) leaves it on.
    model = _matmul_model()
    for value, fused in (("1", False), ("0", True)):
        so = onyx.SessionOptions()
        so.graph_optimization_level = onyx.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
        so.add_session_config_entry("session.disable_quant_qdq", value)
        so.optimized_model_filepath = str(tmp_path / ("opt%s.onnx" % value))
        onyx.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
        ops = [n.op_type for n in onnx.load(so.optimized_model_filepath).graph.node]
        assert ("QLinearMatMul" in ops) == fused, (value, ops)
        assert ("MatMul" in ops) != fused, (value, ops)


def test_shared_activation_dequantize_stays_for_its_other_reader(onyx, tmp_path):
    # onnxruntime leaves this group in float (a DQ with two readers); onyx
    # runs the MatMul on the codes and keeps the DQ for the Slice.
    model = _matmul_model(shared_dq=True)
    sess, ops = _fused_ops(onyx, model, tmp_path)
    assert "QLinearMatMul" in ops and "MatMul" not in ops and ops.count("DequantizeLinear") == 2, ops
    x = rng.standard_normal((3, 48)).astype(np.float32)
    theirs = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": x})
    # Their float MatMul against the exact integer sum: a step apart at most.
    assert np.abs(sess.run(None, {"x": x})[0] - theirs[0]).max() <= 0.05 * 1.0001


def test_gather_reads_the_quantized_table(onyx, tmp_path):
    # DQ(table) -> Gather: the codes are gathered, then dequantized: the same
    # floats, without dequantizing the whole table per run.
    table = rng.integers(-128, 128, (100, 8)).astype(np.int8)
    inits = _qparams("t", 0.02, 5) + [_init("table", table)]
    nodes = [_dq("table", "t", "td"), helper.make_node("Gather", ["td", "ids"], ["y"])]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("ids", TensorProto.INT64, [4])],
                              [helper.make_tensor_value_info("y", F, None)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    sess, ops = _fused_ops(onyx, model, tmp_path)
    assert ops == ["Gather", "DequantizeLinear"], ops
    ids = np.array([3, 99, 0, 3], np.int64)
    want = ((table[ids].astype(np.int32) - 5) * np.float32(0.02)).astype(np.float32)
    np.testing.assert_array_equal(sess.run(None, {"ids": ids})[0], want)


def _conv_model(bias_scale_factor=1.0):
    C, M = 4, 6
    w = rng.integers(-127, 128, (M, C, 3, 3)).astype(np.int8)
    ws = rng.uniform(0.005, 0.02, M).astype(np.float32)
    xs = np.float32(0.03)
    b = rng.integers(-500, 500, M).astype(np.int32)
    inits = _qparams("x", xs, 0) + _qparams("y", 0.05, 0) + [
        _init("w_q", w), _init("w_s", ws), _init("w_z", np.zeros(M, np.int8)), _init("b_q", b),
        _init("b_s", (xs * ws * np.float32(bias_scale_factor)).astype(np.float32)), _init("b_z", np.zeros(M, np.int32))]
    nodes = [_q("x", "x", "xq"), _dq("xq", "x", "xd"), _dq("w_q", "w", "wd", axis=0), _dq("b_q", "b", "bd", axis=0),
             helper.make_node("Conv", ["xd", "wd", "bd"], ["c"], pads=[1, 1, 1, 1]),
             _q("c", "y", "cq"), _dq("cq", "y", "y")]
    return _model(nodes, inits, (1, C, 7, 7))


def test_conv_group_with_bias_becomes_qlinearconv(onyx, tmp_path):
    model = _conv_model()
    sess, ops = _fused_ops(onyx, model, tmp_path)
    assert ops == ["QuantizeLinear", "QLinearConv", "DequantizeLinear"], ops
    _check(onyx, model, sess, rng.standard_normal((1, 4, 7, 7)).astype(np.float32))


def test_conv_bias_of_another_scale_is_not_fused(onyx, tmp_path):
    # The int32 bias means x_scale * w_scale units only when its scale says so.
    _, ops = _fused_ops(onyx, _conv_model(bias_scale_factor=2.0), tmp_path)
    assert "QLinearConv" not in ops, ops


def test_add_softmax_and_reshape(onyx, tmp_path):
    inits = _qparams("x", 0.04, 1) + _qparams("a", 0.06, -3) + _qparams("y", 1.0 / 256, -128) + [
        _init("c_q", rng.integers(-128, 128, (4, 6)).astype(np.int8)), _init("shape", np.array([2, 12], np.int64))]
    nodes = [_q("x", "x", "xq"), _dq("xq", "x", "xd"), _dq("c_q", "x", "cd"), helper.make_node("Add", ["xd", "cd"], ["s"]),
             _q("s", "a", "sq"), _dq("sq", "a", "sd"), helper.make_node("Reshape", ["sd", "shape"], ["r"]),
             _q("r", "a", "rq"), _dq("rq", "a", "rd"), helper.make_node("Softmax", ["rd"], ["p"]),
             _q("p", "y", "pq"), _dq("pq", "y", "y")]
    model = _model(nodes, inits, (4, 6))
    sess, ops = _fused_ops(onyx, model, tmp_path)
    assert ops == ["QuantizeLinear", "QLinearAdd", "Reshape", "QLinearSoftmax", "DequantizeLinear"], ops
    x = rng.standard_normal((4, 6)).astype(np.float32) * 3
    theirs = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": x})
    np.testing.assert_array_equal(sess.run(None, {"x": x})[0], theirs[0])


@pytest.mark.parametrize("trans_b", [0, 1])
def test_gemm_group_becomes_qgemm(onyx, tmp_path, trans_b):
    K, N = 40, 10
    w = rng.integers(-127, 128, (N, K) if trans_b else (K, N)).astype(np.int8)
    xs, ws = np.float32(0.03), np.float32(0.01)
    inits = _qparams("x", xs, 0) + _qparams("y", 0.05, 0) + _qparams("w", ws, 0) + [
        _init("w_q", w), _init("b_q", rng.integers(-300, 300, N).astype(np.int32)), _init("b_s", np.float32(xs * ws)),
        _init("b_z", np.int32(0))]
    nodes = [_q("x", "x", "xq"), _dq("xq", "x", "xd"), _dq("w_q", "w", "wd"), _dq("b_q", "b", "bd"),
             helper.make_node("Gemm", ["xd", "wd", "bd"], ["g"], transB=trans_b), _q("g", "y", "gq"),
             _dq("gq", "y", "y")]
    model = _model(nodes, inits, (3, K))
    sess, ops = _fused_ops(onyx, model, tmp_path)
    assert ops == ["QuantizeLinear", "QGemm", "DequantizeLinear"], ops
    _check(onyx, model, sess, rng.standard_normal((3, K)).astype(np.float32))


@pytest.mark.parametrize("act,zp,fused", [("Relu", -128, True), ("Relu", 0, False), ("Clip", -128, True),
                                          ("Clip6", -128, False)])
def test_redundant_relu_or_clip_joins_the_group(onyx, tmp_path, act, zp, fused):
    # MatMul -> Relu/Clip -> Q: the activation is redundant when the Q's
    # range starts at 0 and ends inside the clip bounds; then it folds away.
    K, N = 32, 12
    inits = _qparams("x", 0.03, 0) + _qparams("w", 0.01, 0) + _qparams("y", 0.02, zp) + [
        _init("w_q", rng.integers(-127, 128, (K, N)).astype(np.int8)), _init("lo", np.float32(0)),
        _init("hi", np.float32(4 if act == "Clip6" else 100))]  # 4 < the Q range's top, 255 * 0.02
    a = (helper.make_node("Relu", ["m"], ["r"]) if act == "Relu"
         else helper.make_node("Clip", ["m", "lo", "hi"], ["r"]))
    nodes = [_q("x", "x", "xq"), _dq("xq", "x", "xd"), _dq("w_q", "w", "wd"), helper.make_node("MatMul", ["xd", "wd"], ["m"]),
             a, _q("r", "y", "rq"), _dq("rq", "y", "y")]
    model = _model(nodes, inits, (3, K))
    sess, ops = _fused_ops(onyx, model, tmp_path)
    if fused:
        assert ops == ["QuantizeLinear", "QLinearMatMul", "DequantizeLinear"], ops
    else:
        assert "QLinearMatMul" not in ops and act.rstrip("6") in ops, ops
    x = rng.standard_normal((3, K)).astype(np.float32)
    theirs = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": x})
    assert np.abs(sess.run(None, {"x": x})[0] - theirs[0]).max() <= 0.02 * 1.0001


@pytest.mark.parametrize("act,zp,dropped", [("Relu", 0, True), ("Relu", 3, False), ("Clip", 0, True),
                                            ("Clip6", 0, False)])
def test_redundant_relu_or_clip_before_a_lone_q_goes(onyx, tmp_path, act, zp, dropped):
    # BatchNormalization -> Relu/Clip -> Q (no group: the BN stays float), as
    # quantize_static leaves a ResNet's BN: the Q saturates what the
    # activation would clip, so the activation goes and the bytes stay.
    C = 4
    inits = _qparams("y", 0.02, zp, np.uint8) + [
        _init("g", rng.uniform(0.5, 1.5, C).astype(np.float32)), _init("b", rng.standard_normal(C).astype(np.float32)),
        _init("mu", rng.standard_normal(C).astype(np.float32)), _init("var", rng.uniform(0.5, 2, C).astype(np.float32)),
        _init("lo", np.float32(0)), _init("hi", np.float32(4 if act == "Clip6" else 100))]
    a = (helper.make_node("Relu", ["n"], ["r"]) if act == "Relu"
         else helper.make_node("Clip", ["n", "lo", "hi"], ["r"]))
    nodes = [helper.make_node("BatchNormalization", ["x", "g", "b", "mu", "var"], ["n"]), a, _q("r", "y", "rq"),
             _dq("rq", "y", "y")]
    model = _model(nodes, inits, (2, C, 5, 5))
    sess, ops = _fused_ops(onyx, model, tmp_path)
    assert (act.rstrip("6") not in ops) == dropped, ops
    x = (rng.standard_normal((2, C, 5, 5)) * 3).astype(np.float32)
    x[0, 0, 0, :3] = [np.nan, -0.0, np.inf]
    so = onyx.SessionOptions()
    so.graph_optimization_level = onyx.GraphOptimizationLevel.ORT_DISABLE_ALL
    plain = onyx.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    np.testing.assert_array_equal(sess.run(None, {"x": x})[0], plain.run(None, {"x": x})[0])

"""Hostile and malformed models (issue 12): each is refused with a clear error
naming what is at fault, or runs within its limits, and never crashes the
process, reads outside the model's folder or allocates without bound.

Categories: external data escaping the model's folder, declared sizes that do
not match their data, dim products that overflow, huge allocations against
session.memory_limit_bytes, deep subgraph nesting, duplicate and unreachable
outputs, protobuf size limits, a model over 2 GiB with external data (sparse
files: no disk used), file descriptors after load, RSS over 10,000 runs.
"""

import gc
import os
import resource

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper


def _model(nodes, inputs, outputs, inits=(), opset=17, name="g"):
    g = helper.make_graph(nodes, name, inputs, outputs, list(inits))
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], ir_version=8)


def _f(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def _session(onyx, model_or_path, **config):
    so = onyx.SessionOptions()
    so.log_severity_level = 3
    for k, v in config.items():
        so.add_session_config_entry(k.replace("__", "."), str(v))
    if isinstance(model_or_path, (str, os.PathLike)):
        data = str(model_or_path)
    else:
        data = model_or_path.SerializeToString()
    return onyx.InferenceSession(data, so, providers=["CPUExecutionProvider"])


def _external_tensor(name, dims, location, offset=None, length=None):
    t = TensorProto()
    t.name = name
    t.data_type = TensorProto.FLOAT
    t.dims.extend(dims)
    t.data_location = TensorProto.EXTERNAL
    for k, v in (("location", location), ("offset", offset), ("length", length)):
        if v is not None:
            e = t.external_data.add()
            e.key, e.value = k, str(v)
    return t


def _add_w_model(w):
    """Y = X + W, W an initializer (often external)."""
    n = int(np.prod(list(w.dims)))
    return _model([helper.make_node("Add", ["X", "W"], ["Y"])], [_f("X", [n])], [_f("Y", [n])], [w])


# ---- external data -----------------------------------------------------------------


def _write(path, data):
    with open(path, "wb") as f:
        f.write(data)


@pytest.fixture
def folders(tmp_path):
    model_dir = tmp_path / "model"
    model_dir.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    secret = np.arange(4, dtype=np.float32)
    _write(outside / "secret.bin", secret.tobytes())
    _write(model_dir / "weights.bin", (secret + 10).tobytes())
    return model_dir, outside


def test_external_data_inside_the_folder_loads(onyx, folders):
    model_dir, _ = folders
    path = model_dir / "m.onnx"
    _write(path, _add_w_model(_external_tensor("W", [4], "weights.bin")).SerializeToString())
    (y,) = _session(onyx, path).run(None, {"X": np.ones(4, np.float32)})
    np.testing.assert_array_equal(y, np.arange(4, dtype=np.float32) + 11)


@pytest.mark.parametrize("how", ["dotdot", "absolute", "symlink_file", "symlink_dir", "dotdot_inside_name"])
def test_external_data_escaping_the_folder_is_refused(onyx, folders, how):
    model_dir, outside = folders
    if how == "dotdot":
        location = "../outside/secret.bin"
    elif how == "absolute":
        location = str(outside / "secret.bin")
    elif how == "symlink_file":
        os.symlink(outside / "secret.bin", model_dir / "link.bin")
        location = "link.bin"
    elif how == "symlink_dir":
        os.symlink(outside, model_dir / "sub")
        location = "sub/secret.bin"
    else:
        location = "sub/../../outside/secret.bin"
    path = model_dir / "m.onnx"
    _write(path, _add_w_model(_external_tensor("W", [4], location)).SerializeToString())
    with pytest.raises(Exception, match=r"tensor 'W'.*(inside the model's folder|outside the model's folder)"):
        _session(onyx, path)


def test_external_data_needs_a_model_path(onyx):
    with pytest.raises(Exception, match="tensor 'W' uses external data, which needs a model loaded from a path"):
        _session(onyx, _add_w_model(_external_tensor("W", [4], "weights.bin")))


@pytest.mark.parametrize("offset,length,expect", [
    ("abc", None, "offset 'abc' is not a non-negative integer"),
    ("-4", None, "offset '-4' is not a non-negative integer"),
    ("99999999999999999999", None, "is not a non-negative integer"),
    (0, 12, r"external data \(offset 0, length 12\) does not fit"),
    (8, None, r"external data \(offset 8, length 16\) does not fit"),
    (str(2 ** 62), None, "does not fit"),
    (0, "", "length '' is not a non-negative integer"),
])
def test_external_data_bad_offset_or_length(onyx, folders, offset, length, expect):
    model_dir, _ = folders
    path = model_dir / "m.onnx"
    _write(path, _add_w_model(_external_tensor("W", [4], "weights.bin", offset, length)).SerializeToString())
    with pytest.raises(Exception, match=expect):
        _session(onyx, path)


def test_external_data_missing_file_or_folder(onyx, folders):
    model_dir, _ = folders
    path = model_dir / "m.onnx"
    for location in ("missing.bin", "."):
        _write(path, _add_w_model(_external_tensor("W", [4], location)).SerializeToString())
        with pytest.raises(Exception, match="tensor 'W'"):
            _session(onyx, path)


# ---- declared sizes against data, overflowing dims ---------------------------------


def _init_model(t):
    return _model([helper.make_node("Identity", [t.name], ["Y"])], [], [helper.make_tensor_value_info(
        "Y", t.data_type, None)], [t])


@pytest.mark.parametrize("dims,field,values", [
    ([4], "raw_data", np.zeros(3, np.float32).tobytes()),
    ([4], "raw_data", np.zeros(5, np.float32).tobytes()),
    ([4], "float_data", [1.0, 2.0]),
    ([2 ** 40], "float_data", [1.0]),            # must not allocate 4 TiB first
    ([2 ** 31, 2 ** 31], "float_data", []),
    ([2 ** 62, 4], "raw_data", b""),            # element count overflows int64
    ([2 ** 33, 2 ** 33, 2 ** 33], "float_data", [0.0]),
    ([-1, 4], "float_data", [0.0] * 4),
])
def test_declared_size_must_match_data(onyx, dims, field, values):
    t = TensorProto()
    t.name, t.data_type = "C", TensorProto.FLOAT
    t.dims.extend(dims)
    if field == "raw_data":
        t.raw_data = values
    else:
        t.float_data.extend(values)
    with pytest.raises(Exception, match=r"tensor 'C'"):
        _session(onyx, _init_model(t))


def test_int_data_count_checked_for_small_types(onyx):
    t = TensorProto()  # by hand: onnx.helper checks the count itself
    t.name, t.data_type = "C", TensorProto.INT8
    t.dims.append(2 ** 40)
    t.int32_data.extend([1, 2, 3])
    with pytest.raises(Exception, match=r"tensor 'C'.*needs"):
        _session(onyx, _init_model(t))


def test_declared_input_dims_overflowing(onyx):
    m = _model([helper.make_node("Relu", ["X"], ["Y"])], [_f("X", [2 ** 62, 2 ** 62])], [_f("Y", None)])
    s = _session(onyx, m)
    with pytest.raises(Exception, match="Got invalid dimensions for input: X"):
        s.run(None, {"X": np.ones((2, 2), np.float32)})


@pytest.mark.parametrize("shape", [[2 ** 62, 2 ** 62], [2 ** 31, 2 ** 31, 2 ** 31], [-5, 2], [2 ** 20, 0, 2 ** 20]])
def test_shapes_computed_at_run_time_overflowing(onyx, shape):
    """ConstantOfShape / Expand / Reshape with shapes that overflow or go negative: an error, never a crash."""
    m = _model([helper.make_node("ConstantOfShape", ["S"], ["Y"])],
               [helper.make_tensor_value_info("S", TensorProto.INT64, ["r"])], [_f("Y", None)])
    s = _session(onyx, m)
    if 0 in shape:
        (y,) = s.run(None, {"S": np.array(shape, np.int64)})
        assert y.size == 0
    else:
        with pytest.raises(Exception, match="ConstantOfShape"):
            s.run(None, {"S": np.array(shape, np.int64)})
    (y,) = s.run(None, {"S": np.array([2, 3], np.int64)})
    assert y.shape == (2, 3)

    e = _model([helper.make_node("Expand", ["X", "S"], ["Y"])],
               [_f("X", [1]), helper.make_tensor_value_info("S", TensorProto.INT64, [len(shape)])], [_f("Y", None)])
    se = _session(onyx, e, session__memory_limit_bytes=1 << 26)
    if 0 not in shape:
        with pytest.raises(Exception, match="Expand"):
            se.run(None, {"X": np.ones(1, np.float32), "S": np.array(shape, np.int64)})


def test_constant_shapes_overflowing_are_not_folded_at_load(onyx):
    """A constant ConstantOfShape of 40 GB must not be computed while the session loads."""
    shape = numpy_helper.from_array(np.array([100000, 100000], np.int64), "S")
    m = _model([helper.make_node("ConstantOfShape", ["S"], ["Y"])], [], [_f("Y", None)], [shape])
    s = _session(onyx, m, session__memory_limit_bytes=1 << 26)
    with pytest.raises(Exception, match="session.memory_limit_bytes"):
        s.run(None, {})


# ---- the memory limit ----------------------------------------------------------------


def test_memory_limit_refuses_huge_allocation_and_session_stays_usable(onyx):
    m = _model([helper.make_node("ConstantOfShape", ["S"], ["Y"])],
               [helper.make_tensor_value_info("S", TensorProto.INT64, [2])], [_f("Y", None)])
    s = _session(onyx, m, session__memory_limit_bytes=10 ** 8)
    with pytest.raises(Exception, match=r"memory limit \(session config entry 'session.memory_limit_bytes'\) "
                                        r"of 100000000 bytes"):
        s.run(None, {"S": np.array([100000, 100000], np.int64)})
    (y,) = s.run(None, {"S": np.array([1000, 1000], np.int64)})  # 4 MB: fine
    assert y.shape == (1000, 1000) and not y.any()


@pytest.mark.parametrize("value", ["0", "-1", "1e9", "lots", " 5", "18446744073709551616"])
def test_memory_limit_bad_values_are_refused_by_name(onyx, value):
    m = _model([helper.make_node("Relu", ["X"], ["Y"])], [_f("X", [2])], [_f("Y", [2])])
    with pytest.raises(Exception, match="session config entry 'session.memory_limit_bytes' must be a positive"):
        _session(onyx, m, session__memory_limit_bytes=value)


# ---- nesting, duplicate and unreachable outputs -----------------------------------------


def _nested_if(depth):
    """depth If nodes, each then/else branch holding the next; the innermost adds 1."""
    def branch(level):
        if level == depth:
            return helper.make_graph([helper.make_node("Add", ["X", "one"], ["out%d" % level])], "leaf%d" % level,
                                     [], [_f("out%d" % level, None)])
        node = helper.make_node("If", ["C"], ["out%d" % level], then_branch=branch(level + 1),
                                else_branch=branch(level + 1))
        return helper.make_graph([node], "b%d" % level, [], [_f("out%d" % level, None)])
    top = helper.make_node("If", ["C"], ["Y"], then_branch=branch(1), else_branch=branch(1))
    return _model([top], [_f("X", [2]), helper.make_tensor_value_info("C", TensorProto.BOOL, [])], [_f("Y", None)],
                  [numpy_helper.from_array(np.ones(1, np.float32), "one")])


def test_nested_subgraphs_run(onyx):
    s = _session(onyx, _nested_if(8))
    (y,) = s.run(None, {"X": np.array([1, 2], np.float32), "C": np.array(True)})
    np.testing.assert_array_equal(y, [2, 3])


def _pb(field, payload):
    """A length-delimited protobuf field (wire type 2)."""
    def varint(v):
        out = bytearray()
        while v >= 0x80:
            out.append(v & 0x7F | 0x80)
            v >>= 7
        out.append(v)
        return bytes(out)
    if isinstance(payload, str):
        payload = payload.encode()
    return varint(field << 3 | 2) + varint(len(payload)) + payload


def test_too_deeply_nested_subgraphs_are_refused(onyx):
    """400 Ifs, each in the then_branch of the one above, written as bytes by
    hand (Python's protobuf cannot build it): past the parser's recursion
    limit, a clear INVALID_PROTOBUF rather than a stack overflow."""
    y = _pb(12, _pb(1, "Y"))
    graph = _pb(1, _pb(1, "X") + _pb(2, "Y") + _pb(4, "Identity")) + _pb(2, "leaf") + y
    for level in range(400):
        attr = _pb(1, "then_branch") + _pb(6, graph) + bytes([0xA0, 0x01, 5])  # type (20) = GRAPH
        graph = _pb(1, _pb(1, "C") + _pb(2, "Y") + _pb(4, "If") + _pb(5, attr)) + _pb(2, "n%d" % level) + y
    model = bytes([0x08, 8]) + _pb(8, _pb(1, "") + bytes([0x10, 17])) + _pb(7, graph)
    with pytest.raises(Exception, match="INVALID_PROTOBUF"):
        onyx.InferenceSession(model, providers=["CPUExecutionProvider"])


def test_duplicate_graph_output_and_duplicate_producers(onyx):
    dup_out = _model([helper.make_node("Relu", ["X"], ["Y"])], [_f("X", [2])], [_f("Y", [2]), _f("Y", [2])])
    try:
        s = _session(onyx, dup_out)
    except Exception as e:  # refused: the message names the output
        assert "'Y'" in str(e) or " Y" in str(e), str(e)
    else:
        a, b = s.run(None, {"X": np.array([-1, 1], np.float32)})
        np.testing.assert_array_equal(a, [0, 1])
        np.testing.assert_array_equal(b, [0, 1])
    two_producers = _model([helper.make_node("Relu", ["X"], ["Y"]), helper.make_node("Neg", ["X"], ["Y"])],
                           [_f("X", [2])], [_f("Y", [2])])
    with pytest.raises(Exception, match="'Y'"):
        _session(onyx, two_producers)


def test_unreachable_output_and_dead_nodes(onyx):
    unproduced = _model([helper.make_node("Relu", ["X"], ["Y"])], [_f("X", [2])], [_f("Y", [2]), _f("Z", [2])])
    with pytest.raises(Exception, match="'Z'"):
        _session(onyx, unproduced)
    dead = _model([helper.make_node("Relu", ["X"], ["Y"]), helper.make_node("Neg", ["X"], ["unused"])],
                  [_f("X", [2])], [_f("Y", [2])])
    (y,) = _session(onyx, dead).run(None, {"X": np.array([-1, 1], np.float32)})
    np.testing.assert_array_equal(y, [0, 1])


# ---- protobuf size limits, a model over 2 GiB -------------------------------------------


@pytest.mark.parametrize("data", [b"", b"\x08", b"\xff" * 64, b"\x0a\xff\xff\xff\xff\x0f", b"\x3a\x05abc"])
def test_truncated_or_garbage_bytes(onyx, data):
    with pytest.raises(Exception, match="INVALID_PROTOBUF|Protobuf parsing failed|not an ONNX model"):
        onyx.InferenceSession(data, providers=["CPUExecutionProvider"])


def test_model_file_over_2gib_is_refused_clearly(onyx, tmp_path):
    path = tmp_path / "huge.onnx"
    with open(path, "wb") as f:
        f.truncate((2 << 30) + 16)  # sparse: no disk used
    with pytest.raises(Exception, match="over 2 GiB must use external data"):
        onyx.InferenceSession(str(path), providers=["CPUExecutionProvider"])


def test_model_over_2gib_with_external_data_loads(onyx, tmp_path):
    """Two 1.2 GB initializers in one sparse file (the second past offset 2^31):
    loads by mapping, runs, and reads only the pages it uses."""
    n = 300_000_000
    data = tmp_path / "big.bin"
    with open(data, "wb") as f:
        f.truncate(2 * n * 4)
        f.seek(n * 4 + (n - 1) * 4)
        f.write(np.float32(7.5).tobytes())
    w1 = _external_tensor("W1", [n], "big.bin", 0, n * 4)
    w2 = _external_tensor("W2", [n], "big.bin", n * 4, n * 4)
    idx = numpy_helper.from_array(np.array([0, n - 1], np.int64), "I")
    m = _model([helper.make_node("Gather", ["W2", "I"], ["G"]), helper.make_node("Add", ["G", "X"], ["Y"]),
                helper.make_node("Shape", ["W1"], ["S"])],
               [_f("X", [2])], [_f("Y", [2]), helper.make_tensor_value_info("S", TensorProto.INT64, [1])],
               [w1, w2, idx])
    path = tmp_path / "big.onnx"
    _write(path, m.SerializeToString())
    rss_before = _rss_kb()
    s = _session(onyx, path)
    y, shape = s.run(None, {"X": np.ones(2, np.float32)})
    np.testing.assert_array_equal(y, [1, 8.5])
    np.testing.assert_array_equal(shape, [n])
    assert _rss_kb() - rss_before < 200_000, "the 2.4 GB of weights were read, not mapped"


# ---- file descriptors, RSS over many runs -----------------------------------------------


def _fds():
    return len(os.listdir("/proc/self/fd"))


def _rss_kb():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * (resource.getpagesize() // 1024)


def test_no_file_descriptor_left_open_after_load(onyx, folders):
    model_dir, _ = folders
    path = model_dir / "m.onnx"
    _write(path, _add_w_model(_external_tensor("W", [4], "weights.bin")).SerializeToString())
    _session(onyx, path)  # warm-up: whatever the process opens once
    gc.collect()
    before = _fds()
    sessions = [_session(onyx, path) for _ in range(20)]
    assert _fds() == before, "a session keeps files open after load"
    for s in sessions:
        s.run(None, {"X": np.ones(4, np.float32)})
    del sessions
    gc.collect()
    assert _fds() == before
    for bad in ("missing.onnx", "m.onnx/nothing"):
        with pytest.raises(Exception):
            _session(onyx, model_dir / bad)
    assert _fds() == before


def test_rss_flat_over_10000_runs(onyx):
    m = _model([helper.make_node("MatMul", ["X", "W"], ["H"]), helper.make_node("Relu", ["H"], ["Y"])],
               [_f("X", ["N", 64])], [_f("Y", None)],
               [numpy_helper.from_array(np.ones((64, 64), np.float32), "W")])
    s = _session(onyx, m)
    xs = [np.full((1 + i % 7, 64), i, np.float32) for i in range(7)]
    for i in range(1000):
        s.run(None, {"X": xs[i % 7]})
    gc.collect()
    start = _rss_kb()
    for i in range(10000):
        s.run(None, {"X": xs[i % 7]})
    gc.collect()
    grown = _rss_kb() - start
    assert grown < 4096, "RSS grew by %d KiB over 10,000 runs" % grown


@pytest.mark.parametrize("equation", ["a..b", ".......", "a-b", "a...b...->", "ab,bc->ac->b"])
def test_malformed_einsum_equation_does_not_hang_the_load(onyx, equation):
    """onnx 1.23's own Einsum shape inference loops forever on these (found by
    fuzz_node); the engine keeps them away from it and refuses them."""
    m = _model([helper.make_node("Einsum", ["X", "Y"], ["Z"], equation=equation)],
               [_f("X", [2, 2]), _f("Y", [2, 2])], [_f("Z", None)], opset=12)
    with pytest.raises(Exception, match="Einsum"):
        _session(onyx, m).run(None, {"X": np.ones((2, 2), np.float32), "Y": np.ones((2, 2), np.float32)})

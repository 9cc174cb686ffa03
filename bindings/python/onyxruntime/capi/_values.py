"""numpy <-> OnyxValue conversion without needless copies.

Inputs: a C-contiguous, aligned, native-endian array is wrapped in place
(ValueCreateTensorWithData over a buffer pinned with ffi.from_buffer); the
caller keeps the pin and the array alive until the run returns. Anything else
is first copied into such an array, never reinterpreted.

Outputs: the returned OnyxValue's buffer becomes a numpy array through an
object exposing __array_interface__; that object is the array's `.base` and
holds the value, so the value is released when the last view of it dies.
"""

import numpy as np

from ._ffi import api, check, ffi
from ._errors import not_implemented

# numpy dtype <-> OnyxElementType (values of onnx.TensorProto.DataType).
_NP_TO_ONYX = {
    np.dtype(np.float32): 1,
    np.dtype(np.uint8): 2,
    np.dtype(np.int8): 3,
    np.dtype(np.uint16): 4,
    np.dtype(np.int16): 5,
    np.dtype(np.int32): 6,
    np.dtype(np.int64): 7,
    np.dtype(np.bool_): 9,
    np.dtype(np.float16): 10,
    np.dtype(np.float64): 11,
    np.dtype(np.uint32): 12,
    np.dtype(np.uint64): 13,
    np.dtype(np.complex64): 14,
    np.dtype(np.complex128): 15,
}
# Narrow types through ml_dtypes, where installed (onnx itself depends on it):
# bfloat16 and the float8s are one byte each as in the engine; the sub-byte
# types (int4, uint4, float4e2m1: 4 bits; int2, uint2: 2 bits) are one per byte
# in numpy and packed several per byte (low bits first) in the engine, so they
# are packed on the way in and unpacked on the way out.
try:
    import ml_dtypes as _mld
except ImportError:  # pragma: no cover - onnx requires it
    _mld = None
_PACKED = {}  # numpy dtype -> element type code
_PACKED_BITS = {21: 4, 22: 4, 23: 4, 25: 2, 26: 2}  # element type code -> bits per element
if _mld is not None:
    _NP_TO_ONYX.update({
        np.dtype(_mld.bfloat16): 16,
        np.dtype(_mld.float8_e4m3fn): 17,
        np.dtype(_mld.float8_e4m3fnuz): 18,
        np.dtype(_mld.float8_e5m2): 19,
        np.dtype(_mld.float8_e5m2fnuz): 20,
    })
    if hasattr(_mld, "float8_e8m0fnu"):
        _NP_TO_ONYX[np.dtype(_mld.float8_e8m0fnu)] = 24
    _PACKED = {np.dtype(_mld.uint4): 21, np.dtype(_mld.int4): 22, np.dtype(_mld.float4_e2m1fn): 23}
    if hasattr(_mld, "int2"):
        _PACKED.update({np.dtype(_mld.uint2): 25, np.dtype(_mld.int2): 26})
_ONYX_TO_NP = {v: k for k, v in _NP_TO_ONYX.items()}
_ONYX_TO_NP.update({v: k for k, v in _PACKED.items()})
PACKED_CODES = frozenset(_PACKED.values())
# ml_dtypes types numpy's array interface cannot spell ("<f1", "V2").
_VIEW_THROUGH_UINT = frozenset(d for d, code in _NP_TO_ONYX.items() if 16 <= code <= 24)


def view_of(make_buffer, dtype):
    """A numpy view of library memory: `make_buffer(interface_dtype)` builds the
    __array_interface__ object. ml_dtypes types are read as an unsigned integer
    of their size, then viewed as the real type."""
    if dtype in _VIEW_THROUGH_UINT:
        return np.asarray(make_buffer(np.dtype("u%d" % dtype.itemsize))).view(dtype)
    return np.asarray(make_buffer(dtype))


def _pack_bits(arr, bits):
    """`8 // bits` elements per byte, the first in the lowest bits."""
    per = 8 // bits
    codes = np.ascontiguousarray(arr).reshape(-1).view(np.uint8) & ((1 << bits) - 1)
    if codes.size % per:
        codes = np.concatenate([codes, np.zeros(per - codes.size % per, np.uint8)])
    codes = codes.reshape(-1, per)
    packed = np.zeros(codes.shape[0], np.uint8)
    for k in range(per):
        packed |= codes[:, k] << (k * bits)
    return packed


def _unpack_bits(packed, count, dtype, bits):
    per = 8 // bits
    mask = (1 << bits) - 1
    codes = np.empty((packed.size, per), np.uint8)
    for k in range(per):
        codes[:, k] = (packed >> (k * bits)) & mask
    # ml_dtypes keeps a sub-byte value in the low bits of its byte (int2's -1 is 0x03).
    return codes.reshape(-1)[:count].view(dtype)
ONYX_STRING = 8

_cpu_info = None


def _cpu_memory_info():
    global _cpu_info
    if _cpu_info is None:
        out = ffi.new("OnyxMemoryInfo**")
        check(api.MemoryInfoCreateCpu(0, 0, out))  # ONYX_DEVICE_ALLOCATOR, ONYX_MEM_DEFAULT
        _cpu_info = ffi.gc(out[0], api.MemoryInfoRelease)
    return _cpu_info


def numpy_dtype_for(elem_type):
    """numpy dtype for an OnyxElementType (object for strings), or None."""
    if elem_type == ONYX_STRING:
        return np.dtype(object)
    return _ONYX_TO_NP.get(elem_type)


def _as_array(name, value, expected_elem_type):
    if isinstance(value, np.ndarray):
        return value
    if isinstance(value, (list, tuple)):
        # onnxruntime converts Python lists to the model's declared type.
        dtype = numpy_dtype_for(expected_elem_type)
        return np.array(value, dtype=dtype)
    raise RuntimeError("Unable to handle object of type %s (input '%s')" % (type(value), name))


def _shape_array(shape):
    arr = ffi.new("int64_t[]", max(1, len(shape)))
    for i, d in enumerate(shape):
        arr[i] = d
    return arr


def _string_value(arr):
    flat = arr.ravel(order="C")
    encoded = []
    for item in flat:
        if isinstance(item, bytes):
            encoded.append(item)
        elif isinstance(item, str):
            encoded.append(item.encode("utf-8"))
        else:
            encoded.append(str(item).encode("utf-8"))
    out = ffi.new("OnyxValue**")
    shape = _shape_array(arr.shape)
    check(api.ValueCreateTensor(ffi.NULL, shape, arr.ndim, ONYX_STRING, out))
    value = ffi.gc(out[0], api.ValueRelease)
    n = len(encoded)
    if n:
        # One buffer for all strings; the C side copies them.
        blob = ffi.new("char[]", b"".join(encoded))
        ptrs = ffi.new("const char*[]", n)
        lengths = ffi.new("size_t[]", n)
        offset = 0
        for i, b in enumerate(encoded):
            ptrs[i] = blob + offset
            lengths[i] = len(b)
            offset += len(b)
        check(api.StringTensorFill(value, ptrs, lengths, n))
    return value


def _sequence_value(name, items, declared, keep):
    inner = declared[4:-1] if declared and declared.startswith("seq(") else ""
    inner_elem = _TYPE_CODES.get(inner[7:-1]) if inner.startswith("tensor(") else 0
    handles = []
    for item in items:
        if isinstance(item, dict):
            handles.append(_map_value(name, item, inner, keep))
        else:
            handles.append(input_value(name, item, inner_elem or 0, keep))
    arr = ffi.new("OnyxValue*[]", max(1, len(handles)))
    for i, h in enumerate(handles):
        arr[i] = h
    keep.extend(handles)
    out = ffi.new("OnyxValue**")
    check(api.ValueCreateSequence(ffi.cast("const OnyxValue* const*", arr), len(handles), out))
    return ffi.gc(out[0], api.ValueRelease)


def _map_value(name, mapping, declared, keep):
    # "map(int64,tensor(float))": the declared key and value types, else inferred.
    key_type, value_type = None, None
    if declared and declared.startswith("map("):
        key_name, _, value_name = declared[4:-1].partition(",")
        key_type = _TYPE_CODES.get(key_name)
        value_type = _TYPE_CODES.get(value_name[7:-1]) if value_name.startswith("tensor(") else None
    keys = list(mapping.keys())
    vals = list(mapping.values())
    # A key of the wrong kind would be converted silently (1 -> "1") or fail
    # inside numpy; say which input and which key instead.
    for key in keys:
        is_str = isinstance(key, (str, bytes))
        if (key_type == 8 and not is_str) or (key_type not in (None, 8) and (is_str or isinstance(key, float))):
            raise RuntimeError("input '%s': map key %r is a %s but the input is declared %s"
                               % (name, key, type(key).__name__, declared))
    key_arr = np.array(keys, dtype=numpy_dtype_for(key_type) if key_type else None)
    if key_arr.dtype.kind in "US":
        key_arr = key_arr.astype(object)
    val_arr = np.array(vals, dtype=numpy_dtype_for(value_type) if value_type else None)
    k = input_value(name, key_arr.reshape(-1), 0, keep)
    v = input_value(name, val_arr.reshape(-1), 0, keep)
    keep.extend([k, v])
    out = ffi.new("OnyxValue**")
    check(api.ValueCreateMap(k, v, out))
    return ffi.gc(out[0], api.ValueRelease)


# Element type codes by onnxruntime's spelling inside "tensor(...)".
_TYPE_CODES = {
    "float": 1, "uint8": 2, "int8": 3, "uint16": 4, "int16": 5, "int32": 6, "int64": 7, "string": 8, "bool": 9,
    "float16": 10, "double": 11, "uint32": 12, "uint64": 13, "complex64": 14, "complex128": 15, "bfloat16": 16,
}


class ValueHolder:
    """Base of the objects that own an OnyxValue* in `_value` (OrtValue): feeds
    pass them through without a copy. It lives here so that this module needs
    nothing from _ortvalue: imports go one way, _ortvalue -> _values -> _ffi."""

    __slots__ = ()


def input_value(name, value, expected_elem_type, keep, declared=None):
    """An OnyxValue* (with its destructor attached) for one feed entry. Objects
    that must outlive the run are appended to `keep`. An OrtValue is passed
    through as it is (no copy). `declared` is the input's type string: a list
    fed to a "seq(...)" input becomes a sequence, a dict a map."""
    if isinstance(value, ValueHolder):
        keep.append(value)
        return value._value
    if declared and declared.startswith("seq(") and isinstance(value, (list, tuple)):
        return _sequence_value(name, value, declared, keep)
    if isinstance(value, dict):
        return _map_value(name, value, declared, keep)
    if declared and declared.startswith("optional(") and value is None:
        out = ffi.new("OnyxValue**")
        check(api.ValueCreateOptional(ffi.NULL, out))
        return ffi.gc(out[0], api.ValueRelease)
    if declared and declared.startswith("optional(seq(") and isinstance(value, (list, tuple)):
        return _sequence_value(name, value, declared[9:-1], keep)
    arr = _as_array(name, value, expected_elem_type)
    kind = arr.dtype.kind
    if kind in "OUS":
        return _string_value(arr)
    elem = _NP_TO_ONYX.get(arr.dtype if arr.dtype.isnative else arr.dtype.newbyteorder("="))
    if elem is None and arr.dtype in _PACKED:
        shape = arr.shape
        packed = _pack_bits(arr, _PACKED_BITS[_PACKED[arr.dtype]])
        keep.append(packed)
        buf = ffi.from_buffer("char[]", packed, require_writable=False) if packed.nbytes else ffi.new("char[1]")
        keep.append(buf)
        out = ffi.new("OnyxValue**")
        check(api.ValueCreateTensorWithData(_cpu_memory_info(), buf, packed.nbytes, _shape_array(shape), len(shape),
                                            _PACKED[arr.dtype], out))
        return ffi.gc(out[0], api.ValueRelease)
    if elem is None:
        raise RuntimeError("Unable to handle numpy dtype %s (input '%s')" % (arr.dtype, name))
    if not arr.dtype.isnative:
        arr = arr.astype(arr.dtype.newbyteorder("="))
    if not (arr.flags.c_contiguous and arr.flags.aligned):
        arr = np.array(arr, order="C", copy=True)
    keep.append(arr)
    buf = ffi.from_buffer("char[]", arr, require_writable=False) if arr.nbytes else ffi.new("char[1]")
    keep.append(buf)
    shape = _shape_array(arr.shape)
    out = ffi.new("OnyxValue**")
    check(api.ValueCreateTensorWithData(_cpu_memory_info(), buf, arr.nbytes, shape, arr.ndim, elem, out))
    return ffi.gc(out[0], api.ValueRelease)


class _ValueBuffer:
    """Owns one output OnyxValue and exposes its buffer to numpy."""

    __slots__ = ("_value", "__array_interface__")

    def __init__(self, value, ptr, shape, dtype):
        self._value = value
        self.__array_interface__ = {
            "version": 3,
            "shape": tuple(shape),
            "typestr": dtype.str,
            "data": (int(ffi.cast("uintptr_t", ptr)), False),
        }


def _tensor_shape_and_type(value):
    out = ffi.new("OnyxTensorTypeAndShapeInfo**")
    check(api.ValueGetTensorTypeAndShape(value, out))
    info = ffi.gc(out[0], api.TensorTypeAndShapeInfoRelease)
    elem = ffi.new("OnyxElementType*")
    check(api.TensorInfoGetElementType(info, elem))
    rank = ffi.new("size_t*")
    check(api.TensorInfoGetDimCount(info, rank))
    dims = ffi.new("int64_t[]", max(1, rank[0]))
    check(api.TensorInfoGetDims(info, dims, rank[0]))
    return int(elem[0]), [int(dims[i]) for i in range(rank[0])]


VALUE_TENSOR, VALUE_SEQUENCE, VALUE_MAP, VALUE_OPTIONAL = 1, 2, 3, 4


def value_kind(value):
    kind = ffi.new("OnyxValueKind*")
    check(api.ValueGetKind(value, kind))
    return int(kind[0])


def elements(value):
    """The element values (owned handles) of a sequence, map or optional."""
    n = ffi.new("size_t*")
    check(api.ValueGetElementCount(value, n))
    out = ffi.new("OnyxValue**")
    items = []
    for i in range(n[0]):
        check(api.ValueGetElement(value, i, out))
        items.append(ffi.gc(out[0], api.ValueRelease))
    return items


# Converters for value kinds modules above this one define (kind -> f(value)),
# registered by them so that imports keep going one way.
_OUTPUT_KINDS = {}


def register_output_kind(kind, convert):
    """Makes output_object turn values of `kind` into convert(value)."""
    _OUTPUT_KINDS[kind] = convert


def output_object(name, value):
    """An output as onnxruntime returns it: a numpy array for a tensor, a list
    for a sequence, a dict for a map, None for an empty optional."""
    kind = value_kind(value)
    if kind == VALUE_TENSOR:
        return output_array(name, value)
    if kind == VALUE_SEQUENCE:
        return [output_object(name, item) for item in elements(value)]
    if kind == VALUE_MAP:
        keys, vals = (output_array(name, v) for v in elements(value))
        return {k: v for k, v in zip(keys.tolist(), vals.tolist())}
    if kind == VALUE_OPTIONAL:
        items = elements(value)
        return output_object(name, items[0]) if items else None
    if kind in _OUTPUT_KINDS:
        return _OUTPUT_KINDS[kind](value)
    raise not_implemented("output '%s': value kind %d is not supported by the Python binding" % (name, kind))


def deep_copy(obj):
    """A copy of an output object that shares no memory with the library."""
    if isinstance(obj, np.ndarray):
        return obj.copy()
    if isinstance(obj, list):
        return [deep_copy(x) for x in obj]
    return obj


def output_array(name, value):
    """numpy array for an output tensor OnyxValue (already under ffi.gc)."""
    if value_kind(value) != VALUE_TENSOR:
        raise RuntimeError("output '%s' is not a tensor" % name)
    elem, shape = _tensor_shape_and_type(value)
    count = 1
    for d in shape:
        count *= d
    if elem == ONYX_STRING:
        result = np.empty(count, dtype=object)
        s = ffi.new("const char**")
        length = ffi.new("size_t*")
        for i in range(count):
            check(api.StringTensorGetElement(value, i, s, length))
            raw = ffi.unpack(s[0], length[0]) if length[0] else b""
            try:
                result[i] = raw.decode("utf-8")
            except UnicodeDecodeError:
                result[i] = raw
        return result.reshape(shape)
    dtype = _ONYX_TO_NP.get(elem)
    if dtype is None:
        raise not_implemented("output '%s': element type %d has no numpy equivalent" % (name, elem))
    if count == 0:
        return np.empty(shape, dtype=dtype)
    ptr = ffi.new("void**")
    check(api.ValueGetTensorData(value, ptr))
    if elem in PACKED_CODES:
        per = 8 // _PACKED_BITS[elem]
        nbytes = (count + per - 1) // per
        packed = np.frombuffer(ffi.buffer(ptr[0], nbytes), dtype=np.uint8)
        return _unpack_bits(packed, count, dtype, _PACKED_BITS[elem]).reshape(shape)
    return view_of(lambda d: _ValueBuffer(value, ptr[0], shape, d), dtype)

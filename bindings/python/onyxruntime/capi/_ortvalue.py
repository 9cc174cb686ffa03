"""OrtValue: a tensor held by the library, with onnxruntime's Python interface.

An OrtValue made from a C-contiguous numpy array wraps the array's memory
(zero copy) and keeps the array alive; anything else is copied first, so a
strided, misaligned or byte-swapped array is never misread. Values returned by
InferenceSession.run_with_ort_values own the library's output buffers.
Only CPU memory exists in this build, and that is all the C API can describe
for a value made from Python.
"""

import numpy as np

from . import _dlpack, _providers, _values
from ._ffi import api, check, ffi, to_str
from ._sparse import SparseTensor, _CSparseTensor, not_sparse
from ._errors import exception_for_code

# onnxruntime's spelling of each element type inside "tensor(...)".
_TYPE_NAMES = {
    1: "float", 2: "uint8", 3: "int8", 4: "uint16", 5: "int16", 6: "int32", 7: "int64", 8: "string",
    9: "bool", 10: "float16", 11: "double", 12: "uint32", 13: "uint64", 14: "complex64", 15: "complex128",
    16: "bfloat16", 17: "float8e4m3fn", 18: "float8e4m3fnuz", 19: "float8e5m2", 20: "float8e5m2fnuz",
    21: "uint4", 22: "int4", 23: "float4e2m1", 24: "float8e8m0", 25: "uint2", 26: "int2",
}

# Device names onnxruntime's Python API knows; used only to word the error,
# since none of them but 'cpu' can hold an OrtValue in this build.
_KNOWN_DEVICES = ("cpu", "cuda", "gpu", "cann", "dml", "npu", "webgpu")

_VALUE_KIND_TENSOR = 1
_VALUE_KIND_SEQUENCE = 2
_VALUE_KIND_OPTIONAL = 4
_VALUE_KIND_SPARSE = 5


def tensor_device(value):
    """Lower-case name of the memory holding tensor `value` ('cpu', 'cuda')."""
    info = ffi.new("const OnyxMemoryInfo**")
    check(api.ValueGetTensorMemoryInfo(value, info))
    name = ffi.new("const char**")
    check(api.MemoryInfoGetName(info[0], name))
    return (to_str(name[0]) or "cpu").lower()


def device_to_numpy(value):
    """A numpy copy of tensor `value`, which is in device memory."""
    elem, shape = _values._tensor_shape_and_type(value)
    dtype = _values.numpy_dtype_for(elem)
    if dtype is None or elem == _values.ONYX_STRING or elem in _values.PACKED_CODES:
        raise exception_for_code(9, "a device tensor of element type %d cannot be copied into a numpy array" % elem,
                                 RuntimeError)
    out = np.empty(shape, dtype=dtype)
    if out.nbytes:
        check(api.ValueCopyTensorToHost(value, ffi.from_buffer(out), out.nbytes))
    return out


def _check_device(device_type, device_id):
    if not isinstance(device_type, str):
        raise TypeError("device_type must be a str such as 'cpu', got %r" % (device_type,))
    if isinstance(device_id, bool) or not isinstance(device_id, (int, np.integer)):
        raise TypeError("device_id must be an int, got %r" % (device_id,))
    if device_type != "cpu":
        # onnxruntime raises a plain Exception for names it does not know and a
        # RuntimeError for devices its package lacks; one RuntimeError (still an
        # Exception) serves both callers' except clauses.
        if device_type.lower() == "cpu":
            why = "device names are lower case: use 'cpu'"
        elif device_type == "cuda":
            # No GPU, no driver or no provider library: the library says which.
            why = "CUDA is not available here: %s" % _providers.unavailable_reason("CUDAExecutionProvider")
        elif device_type.lower() in _KNOWN_DEVICES:
            why = "this build of onyxruntime has no '%s' support; only 'cpu' memory is available" % device_type
        else:
            why = "not a device type known to this build of onyxruntime; only 'cpu' memory is available"
        raise RuntimeError("OrtValue: unsupported device_type '%s': %s" % (device_type, why))


def _invalid(message):
    # InvalidArgument, and also a ValueError so generic Python handlers catch it.
    return exception_for_code(2, message, ValueError)


def _element_type_code(element_type):
    """ONNX TensorProto code for a numpy type/dtype/name or an int code."""
    if isinstance(element_type, (int, np.integer)) and not isinstance(element_type, (bool, np.bool_)):
        code = int(element_type)
        if code not in _TYPE_NAMES:
            raise _invalid("element_type %d is not an ONNX tensor element type" % code)
        return code
    try:
        dtype = np.dtype(element_type)
    except TypeError:
        raise TypeError("element_type must be a numpy type or an onnx.TensorProto data type int, got %r"
                        % (element_type,)) from None
    if dtype.kind in "OUS":
        return _values.ONYX_STRING
    code = _values._NP_TO_ONYX.get(dtype.newbyteorder("="))
    if code is None:
        raise _invalid("numpy dtype %s has no ONNX tensor element type" % dtype)
    return code


def _shape_list(shape):
    try:
        dims = [int(d) for d in shape]
    except (TypeError, ValueError):
        raise TypeError("shape must be a sequence of ints, got %r" % (shape,)) from None
    if any(d < 0 for d in dims):
        raise _invalid("shape %r has a negative dimension" % (dims,))
    return dims


class _Buffer:
    """Exposes a tensor's memory to numpy; holding the OrtValue keeps the
    memory (the library's buffer or the wrapped array) alive."""

    __slots__ = ("_owner", "__array_interface__")

    def __init__(self, owner, ptr, shape, dtype, readonly):
        self._owner = owner
        self.__array_interface__ = {
            "version": 3,
            "shape": tuple(shape),
            "typestr": dtype.str,
            "data": (ptr, readonly),
        }


class OrtValue(_values.ValueHolder):
    """A value (a tensor, sequence, map or optional) owned by the library.

    Build one with :meth:`ortvalue_from_numpy` or
    :meth:`ortvalue_from_shape_and_type`; InferenceSession.run accepts it
    wherever it accepts a numpy array, and run_with_ort_values returns them.
    """

    __slots__ = ("_value", "_numpy_obj", "_readonly", "__weakref__")

    def __init__(self, ortvalue, numpy_obj=None):
        """Wraps an ``OnyxValue*`` (already owning its release). `numpy_obj` is
        whatever backs the value's memory (kept alive as long as the value)."""
        if not isinstance(ortvalue, ffi.CData):
            raise TypeError("OrtValue(...) wraps a library value; use OrtValue.ortvalue_from_numpy or "
                            "OrtValue.ortvalue_from_shape_and_type to make one")
        self._value = ortvalue
        self._numpy_obj = numpy_obj
        # Set when the memory is a read-only array's: numpy() views are then
        # read-only and update_inplace refuses to write.
        self._readonly = False

    # ---- construction ---------------------------------------------------

    @classmethod
    def ortvalue_from_numpy(cls, numpy_obj, device_type="cpu", device_id=0):
        """An OrtValue over `numpy_obj`.

        A C-contiguous, aligned, native-endian array is wrapped without a copy
        and kept alive by the OrtValue (later writes to the array are seen by
        the value and the other way round); any other array is copied first.
        String arrays are copied into a string tensor.

        :param numpy_obj: a numpy.ndarray.
        :param device_type: 'cpu' (the only device of this build).
        :param device_id: device index, ignored for 'cpu'.
        """
        cuda = _providers.wants_cuda(device_type)
        if not cuda:
            _check_device(device_type, device_id)
        if not isinstance(numpy_obj, np.ndarray):
            # As onnxruntime (and with its exception class): no implicit
            # conversion of lists or numpy scalars.
            raise RuntimeError("OrtValue.ortvalue_from_numpy expects a numpy.ndarray, got %s"
                            % type(numpy_obj).__name__)
        if cuda:
            # A copy in CUDA memory, owned by the value.
            arr = np.ascontiguousarray(numpy_obj)
            code = _element_type_code(arr.dtype)
            if code == _values.ONYX_STRING:
                raise RuntimeError("OrtValue: string tensors cannot live in CUDA memory")
            out = ffi.new("OnyxValue**")
            buf = ffi.from_buffer("char[]", arr, require_writable=False) if arr.nbytes else ffi.NULL
            check(api.ValueCreateTensorOnDevice(_providers.cuda_memory_info(int(device_id)), buf, arr.nbytes,
                                                _values._shape_array(arr.shape), arr.ndim, code, out))
            return cls(ffi.gc(out[0], api.ValueRelease))
        keep = []
        value = _values.input_value("ortvalue_from_numpy", numpy_obj, 0, keep)
        # `keep` holds what the value's memory depends on: the array actually
        # wrapped (the original, or its C-ordered copy) and its pinned cffi
        # buffer. String tensors own a copy and leave it empty.
        result = cls(value, tuple(keep) if keep else None)
        result._readonly = bool(keep) and not keep[0].flags.writeable
        return result

    @classmethod
    def ortvalue_from_numpy_with_onnx_type(cls, data, onnx_element_type):
        """An OrtValue of ONNX element type `onnx_element_type` over the bytes
        of `data`, for types numpy lacks (bfloat16, float8, int4, ...): no
        copy, no conversion, the bits are taken as they are. `data`'s item
        size must equal the type's element size (1 for the packed 4- and 2-bit
        types, whose first ceil(n * bits / 8) bytes are then read, as in
        onnxruntime). Numpy void arrays ('|V2', ...) are accepted for this.

        :param data: numpy.ndarray (kept alive by the OrtValue).
        :param onnx_element_type: an onnx.TensorProto data type int.
        """
        if not isinstance(data, np.ndarray):
            raise TypeError("ortvalue_from_numpy_with_onnx_type: data must be a numpy.ndarray, got %s"
                            % type(data).__name__)
        if isinstance(onnx_element_type, bool) or not isinstance(onnx_element_type, (int, np.integer)):
            raise TypeError("ortvalue_from_numpy_with_onnx_type: onnx_element_type must be an int, got %r"
                            % (onnx_element_type,))
        code = int(onnx_element_type)
        if code == 0:
            raise RuntimeError("tensor type 0 is not supported")
        if code not in _TYPE_NAMES:
            raise RuntimeError("Not a valid ONNX Tensor data type: %d" % code)
        if code == _values.ONYX_STRING:
            raise RuntimeError("ortvalue_from_numpy_with_onnx_type: tensor(string) has no fixed-size elements; "
                               "use ortvalue_from_numpy with an array of str")
        bits = _values._PACKED_BITS.get(code)
        item = 1 if bits else _values.numpy_dtype_for(code).itemsize
        if data.dtype.itemsize != item or data.dtype.kind in "OUS" or data.dtype.hasobject:
            raise RuntimeError("Items size in the incoming array: %d specified by onnxtype: %d (%s)"
                               % (data.dtype.itemsize, item, "tensor(%s)" % _TYPE_NAMES[code]))
        # onnxruntime takes the buffer whatever its strides; a strided array
        # is copied to C order here so its elements are read, not its gaps.
        arr = data if data.flags.c_contiguous and data.flags.aligned else np.ascontiguousarray(data)
        count = int(arr.size)
        nbytes = (count * bits + 7) // 8 if bits else arr.nbytes
        buf = ffi.from_buffer("char[]", arr, require_writable=False) if nbytes else ffi.new("char[1]")
        out = ffi.new("OnyxValue**")
        check(api.ValueCreateTensorWithData(_values._cpu_memory_info(), buf, nbytes,
                                            _values._shape_array(arr.shape), arr.ndim, code, out))
        result = cls(ffi.gc(out[0], api.ValueRelease), (arr, buf))
        result._readonly = not arr.flags.writeable
        return result

    @classmethod
    def ortvalue_from_shape_and_type(cls, shape, element_type, device_type="cpu", device_id=0):
        """A new tensor of `shape` allocated by the library (contents not
        initialised; strings start empty).

        :param shape: sequence of non-negative ints.
        :param element_type: numpy type (np.float32, 'int64', ...) or an
            onnx.TensorProto data type int (e.g. TensorProto.BFLOAT16).
        :param device_type: 'cpu' (the only device of this build).
        :param device_id: device index, ignored for 'cpu'.
        """
        cuda = _providers.wants_cuda(device_type)
        if not cuda:
            _check_device(device_type, device_id)
        dims = _shape_list(shape)
        code = _element_type_code(element_type)
        out = ffi.new("OnyxValue**")
        if cuda:
            check(api.ValueCreateTensorOnDevice(_providers.cuda_memory_info(int(device_id)), ffi.NULL, 0,
                                                _values._shape_array(dims), len(dims), code, out))
        else:
            check(api.ValueCreateTensor(ffi.NULL, _values._shape_array(dims), len(dims), code, out))
        return cls(ffi.gc(out[0], api.ValueRelease))

    @classmethod
    def ortvalue_from_shape_and_onnx_type(cls, shape, onnx_element_type):
        """A new tensor of `shape` and ONNX element type (an
        onnx.TensorProto data type int), allocated by the library."""
        return cls.ortvalue_from_shape_and_type(shape, onnx_element_type)

    @classmethod
    def ortvalue_from_shape_and_type_for_memory_info(cls, shape, element_type, memory_info):
        """A new tensor in the memory `memory_info` (an OrtMemoryInfo)
        describes; only CPU memory exists in this build."""
        name = getattr(memory_info, "name", None)
        if name is None:
            raise TypeError("memory_info must be an OrtMemoryInfo, got %s" % type(memory_info).__name__)
        if name.lower() != "cpu":
            raise RuntimeError("OrtValue: memory '%s' is not available in this build of onyxruntime; only CPU memory"
                               % name)
        return cls.ortvalue_from_shape_and_type(shape, element_type)

    @classmethod
    def ortvalue_from_shape_and_onnx_type_for_memory_info(cls, shape, onnx_element_type, memory_info):
        """As ortvalue_from_shape_and_type_for_memory_info, with an
        onnx.TensorProto element type int."""
        return cls.ortvalue_from_shape_and_type_for_memory_info(shape, onnx_element_type, memory_info)

    @classmethod
    def ort_value_from_sparse_tensor(cls, sparse_tensor):
        """An OrtValue holding `sparse_tensor` (shared, not copied), to feed
        an input declared sparse_tensor(...)."""
        if isinstance(sparse_tensor, SparseTensor):
            sparse_tensor = sparse_tensor._get_c_tensor()
        if not isinstance(sparse_tensor, _CSparseTensor):
            raise TypeError("ort_value_from_sparse_tensor expects a SparseTensor, got %s"
                            % type(sparse_tensor).__name__)
        return cls(sparse_tensor._value, sparse_tensor)

    @classmethod
    def from_dlpack(cls, data, is_bool_tensor=False):
        """An OrtValue sharing the memory of a DLPack capsule or of any
        object with __dlpack__ (numpy arrays, torch tensors, OrtValues): no
        copy. CPU tensors, and CUDA ones where CUDA is usable (the value is
        then in CUDA memory: device_name() 'cuda'); a capsule already
        consumed raises TypeError.
        Bool arrays are recognised from their dtype (or `is_bool_tensor` for
        a bare capsule of uint8 elements)."""
        if isinstance(data, OrtValue):
            is_bool_tensor = is_bool_tensor or data.data_type() == "tensor(bool)"
        elif hasattr(data, "dtype"):
            dtype = data.dtype
            is_bool_tensor = is_bool_tensor or getattr(dtype, "name", str(dtype)) in ("bool", "bool_", "torch.bool")
        return cls(_dlpack.from_dlpack(data, bool(is_bool_tensor)))

    # ---- DLPack ---------------------------------------------------------

    def to_dlpack(self):
        """A DLPack capsule ("dltensor") over this tensor's memory, no copy;
        the capsule keeps this OrtValue alive until its consumer is done."""
        elem, shape = self._type_and_shape()
        if elem == _values.ONYX_STRING:
            raise exception_for_code(2, "to_dlpack: string tensors have no DLPack form", RuntimeError)
        return _dlpack.to_dlpack(self, elem, shape, self.data_ptr() if 0 not in shape else 0,
                                 _dlpack.device_of(self._value))

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        """The DLPack protocol (numpy.from_dlpack(ortvalue),
        torch.from_dlpack(ortvalue) and the like): a capsule as to_dlpack.
        CPU tensors take no `stream`; a CUDA tensor takes the consumer's
        (an int) and needs no wait on it: its data is complete (runs end by
        synchronizing). `copy=True` is refused (the point is sharing)."""
        device = self.__dlpack_device__()
        if device[0] == _dlpack._K_DL_CUDA:
            if stream is not None and (isinstance(stream, bool) or not isinstance(stream, int)):
                raise TypeError("__dlpack__: stream must be an int or None, got %r" % (stream,))
        elif stream is not None and stream != -1:
            raise BufferError("__dlpack__: CPU tensors take no stream, got %r" % (stream,))
        if copy:
            raise BufferError("__dlpack__: copy=True is not supported; the tensor is shared")
        if dl_device is not None and tuple(dl_device) != self.__dlpack_device__():
            raise BufferError("__dlpack__: the tensor is on %s, not %s" % (self.__dlpack_device__(), dl_device))
        return self.to_dlpack()

    def __dlpack_device__(self):
        """(1, 0) for kDLCPU; (2, device id) for a tensor in CUDA memory."""
        if self._kind() != _VALUE_KIND_TENSOR:
            return (_dlpack._K_DL_CPU, 0)
        return _dlpack.device_of(self._value)

    # ---- inspection -----------------------------------------------------

    def _kind(self):
        kind = ffi.new("OnyxValueKind*")
        check(api.ValueGetKind(self._value, kind))
        return int(kind[0])

    def _type_and_shape(self):
        if self._kind() != _VALUE_KIND_TENSOR:
            raise exception_for_code(2, "this OrtValue is a %s, not a tensor" % self.data_type(), RuntimeError)
        return _values._tensor_shape_and_type(self._value)

    def is_tensor(self):
        """True when the value is a tensor."""
        return self._kind() == _VALUE_KIND_TENSOR

    def is_sparse_tensor(self):
        """True when the value is a sparse tensor."""
        return self._kind() == _VALUE_KIND_SPARSE

    def is_tensor_sequence(self):
        """True when the value is a sequence of tensors."""
        if self._kind() != _VALUE_KIND_SEQUENCE:
            return False
        return all(_values.value_kind(v) == _VALUE_KIND_TENSOR for v in _values.elements(self._value))

    def as_sparse_tensor(self):
        """The SparseTensor this value holds; RuntimeError for other values."""
        if self._kind() != _VALUE_KIND_SPARSE:
            raise not_sparse()
        return SparseTensor(_CSparseTensor(self._value, self))

    def has_value(self):
        """False for an optional holding nothing, and for an IOBinding output
        not produced yet."""
        kind = self._kind()
        if kind == 0:
            return False
        if kind == _VALUE_KIND_OPTIONAL:
            return bool(_values.elements(self._value))
        return True

    def _get_c_value(self):
        """The value itself: this binding has no separate C-level object, so
        what onnxruntime's C-level functions take is this OrtValue."""
        return self

    def tensor_size_in_bytes(self):
        """Bytes the tensor's elements occupy (packed types: ceil(n * bits /
        8)). Not defined for string tensors or non-tensor values."""
        elem, shape = self._type_and_shape()
        if elem == _values.ONYX_STRING:
            raise exception_for_code(2, "tensor_size_in_bytes: a string tensor has no flat buffer of elements",
                                     RuntimeError)
        count = 1
        for d in shape:
            count *= d
        bits = _values._PACKED_BITS.get(elem)
        if bits:
            return (count * bits + 7) // 8
        return count * _values.numpy_dtype_for(elem).itemsize

    def __array__(self, dtype=None, copy=None):
        """np.asarray(ortvalue) / np.array(ortvalue): the tensor's memory
        without a copy (as numpy()), cast to `dtype` or copied when asked."""
        arr = self.numpy()
        if copy is not None:
            return np.array(arr, dtype=dtype, copy=copy)
        if dtype is not None:
            return np.asarray(arr, dtype=dtype)
        return arr

    def shape(self):
        """The tensor's dims as a list of ints (a sparse tensor's dense shape)."""
        if self._kind() == _VALUE_KIND_SPARSE:
            return _values._tensor_shape_and_type(self._value)[1]
        return self._type_and_shape()[1]

    def element_type(self):
        """The element type as an onnx.TensorProto data type int (1 for
        float), which is what onnxruntime returns."""
        return self._type_and_shape()[0]

    def data_type(self):
        """The value's type in onnxruntime's spelling, e.g. 'tensor(float)' or
        'seq(tensor(float))'."""
        if self._kind() in (_VALUE_KIND_TENSOR, _VALUE_KIND_SPARSE):
            elem = _values._tensor_shape_and_type(self._value)[0]
            kind = "tensor" if self._kind() == _VALUE_KIND_TENSOR else "sparse_tensor"
            return "%s(%s)" % (kind, _TYPE_NAMES.get(elem, "undefined"))
        out = ffi.new("OnyxTypeInfo**")
        check(api.ValueGetTypeInfo(self._value, out))
        info = ffi.gc(out[0], api.TypeInfoRelease)
        text = ffi.new("const char**")
        check(api.TypeInfoGetTypeString(info, text))
        return to_str(text[0])

    def device_name(self):
        """The device holding the data, in lower case: 'cpu' or 'cuda'."""
        if self._kind() == _VALUE_KIND_SPARSE:
            return "cpu"
        return tensor_device(self._value)

    def data_ptr(self):
        """Address of the first element (0 for an empty tensor, as
        onnxruntime). Not available for string tensors."""
        elem, shape = self._type_and_shape()
        if elem == _values.ONYX_STRING:
            raise exception_for_code(2, "data_ptr: a string tensor has no flat buffer of elements",
                                     RuntimeError)
        if 0 in shape:
            return 0
        ptr = ffi.new("void**")
        check(api.ValueGetTensorData(self._value, ptr))
        return int(ffi.cast("uintptr_t", ptr[0]))

    def numpy(self):
        """The tensor as a numpy array. For numeric tensors the array is a view
        of the value's memory (no copy), as in onnxruntime; it keeps the value
        alive. String tensors come back as a new array of str objects."""
        elem, shape = self._type_and_shape()
        if elem == _values.ONYX_STRING:
            return _values.output_array("OrtValue", self._value)
        dtype = _values.numpy_dtype_for(elem)
        if dtype is None:
            raise exception_for_code(9, "numpy: element type %s has no numpy equivalent"
                                     % self.data_type(), RuntimeError)
        if 0 in shape:
            return np.empty(shape, dtype=dtype)
        if tensor_device(self._value) != "cpu":
            # As onnxruntime: a device value's numpy() is a host copy.
            return device_to_numpy(self._value)
        if elem in _values.PACKED_CODES:
            # Packed several per byte in memory: numpy gets an unpacked copy.
            return _values.output_array("OrtValue", self._value)
        return _values.view_of(lambda d: _Buffer(self, self.data_ptr(), shape, d, self._readonly), dtype)

    # ---- mutation -------------------------------------------------------

    def update_inplace(self, data):
        """Copies `data` (a numpy array or an OrtValue of the same shape and
        element type) into this value's existing memory; the address does not
        change. A strided `data` is read element by element, not byte-copied.

        onnxruntime copies the bytes whatever the shape or dtype; here a
        mismatch is an error (InvalidArgument, also a ValueError) because a
        silent reinterpretation corrupts the tensor.
        """
        if isinstance(data, OrtValue):
            data = data.numpy()
        if not isinstance(data, np.ndarray):
            raise TypeError("data must be a numpy.ndarray or an OrtValue.")
        elem, shape = self._type_and_shape()
        if list(data.shape) != shape:
            raise _invalid("update_inplace: shape %s does not match the OrtValue's shape %s"
                           % (list(data.shape), shape))
        if elem == _values.ONYX_STRING:
            if data.dtype.kind not in "OUS":
                raise _invalid("update_inplace: a %s array cannot update a tensor(string)" % data.dtype)
            self._refill_strings(data)
            return
        want = _values.numpy_dtype_for(elem)
        if want is None or data.dtype.kind in "OUS" or data.dtype.newbyteorder("=") != want:
            raise _invalid("update_inplace: dtype %s does not match the OrtValue's %s"
                           % (data.dtype, self.data_type()))
        if self._readonly:
            raise _invalid("update_inplace: this OrtValue wraps a read-only numpy array")
        if data.size:
            # copyto follows `data`'s strides and byte order; "equiv" allows
            # only a byte-order change, never a value conversion.
            np.copyto(self.numpy(), data, casting="equiv")

    def _refill_strings(self, data):
        encoded = [s if isinstance(s, bytes) else str(s).encode("utf-8") for s in data.ravel(order="C")]
        n = len(encoded)
        if not n:
            return
        blob = ffi.new("char[]", b"".join(encoded))
        ptrs = ffi.new("const char*[]", n)
        lengths = ffi.new("size_t[]", n)
        offset = 0
        for i, b in enumerate(encoded):
            ptrs[i] = blob + offset
            lengths[i] = len(b)
            offset += len(b)
        check(api.StringTensorFill(self._value, ptrs, lengths, n))

    def __repr__(self):
        try:
            return "<onyxruntime.OrtValue %s shape=%s on %s>" % (self.data_type(), self.shape(), self.device_name())
        except Exception:  # noqa: BLE001 - repr must not raise
            return "<onyxruntime.OrtValue>"


class OrtValueVector:
    """A list of OrtValues (onnxruntime.capi._pybind_state.OrtValueVector),
    as onnxruntime's C-level functions take and return them."""

    __slots__ = ("_items",)

    def __init__(self):
        self._items = []

    def push_back(self, ortvalue):
        """Appends an OrtValue (shared, not copied)."""
        if not isinstance(ortvalue, OrtValue):
            raise TypeError("OrtValueVector.push_back expects an OrtValue, got %s" % type(ortvalue).__name__)
        self._items.append(ortvalue)

    def reserve(self, n):
        """Kept for onnxruntime compatibility (a Python list grows by itself)."""
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
            raise TypeError("reserve expects a non-negative int, got %r" % (n,))

    def shrink_to_fit(self):
        """Kept for onnxruntime compatibility."""

    def push_back_batch(self, values, data_ptrs, element_types, shapes, devices):
        """Appends tensors given by raw addresses, element types (numpy
        dtypes or onnx.TensorProto ints), shapes and devices (CPU only):
        each OrtValue borrows the memory at its address, and `values` (the
        objects owning it) are kept alive by this vector."""
        if not (len(values) == len(data_ptrs) == len(element_types) == len(shapes) == len(devices)):
            raise ValueError("push_back_batch: all five lists must have the same length")
        for owner, ptr, elem, shape, device in zip(values, data_ptrs, element_types, shapes, devices):
            if device is not None and getattr(device, "device_type", lambda: 0)() != 0:
                raise RuntimeError("push_back_batch: only CPU memory is available in this build of onyxruntime")
            code = _element_type_code(elem)
            dims = _shape_list(shape)
            count = 1
            for d in dims:
                count *= d
            bits = _values._PACKED_BITS.get(code)
            nbytes = (count * bits + 7) // 8 if bits else count * _values.numpy_dtype_for(code).itemsize
            out = ffi.new("OnyxValue**")
            check(api.ValueCreateTensorWithData(_values._cpu_memory_info(), ffi.cast("void*", int(ptr)), nbytes,
                                                _values._shape_array(dims), len(dims), code, out))
            self._items.append(OrtValue(ffi.gc(out[0], api.ValueRelease), owner))

    def dlpack_at(self, index):
        """A DLPack capsule over tensor `index` (no copy)."""
        return self[index].to_dlpack()

    def to_dlpacks(self, to_tensor=None):
        """A DLPack capsule per tensor, each passed through `to_tensor` (such
        as torch.from_dlpack) when given."""
        caps = [v.to_dlpack() for v in self._items]
        return caps if to_tensor is None else [to_tensor(c) for c in caps]

    def element_type_at(self, index):
        """The onnx.TensorProto element type of tensor `index`."""
        return self[index].element_type()

    def bool_tensor_indices(self):
        """Positions of the bool tensors."""
        return [i for i, v in enumerate(self._items) if v.is_tensor() and v.element_type() == 9]

    def __len__(self):
        return len(self._items)

    def __getitem__(self, index):
        if isinstance(index, bool) or not isinstance(index, (int, np.integer)):
            raise TypeError("OrtValueVector indices must be ints, got %r" % (index,))
        if not 0 <= index < len(self._items):
            raise IndexError("OrtValueVector index %d is out of range (size %d)" % (index, len(self._items)))
        return self._items[index]

    def __iter__(self):
        return iter(self._items)


def copy_tensors(src, dst, stream=None):
    """Copies each tensor of `src` into the one of `dst` at the same position
    (same element type and shape; CPU memory, so `stream` must be None)."""
    src, dst = list(src), list(dst)
    if len(src) != len(dst):
        raise RuntimeError("copy_tensors: %d sources but %d destinations" % (len(src), len(dst)))
    if stream is not None:
        raise RuntimeError("copy_tensors: CPU tensors take no stream")
    for i, (s, d) in enumerate(zip(src, dst)):
        if not isinstance(s, OrtValue) or not isinstance(d, OrtValue):
            raise TypeError("copy_tensors: item %d is not a pair of OrtValues" % i)
        if s.element_type() != d.element_type() or s.shape() != d.shape():
            raise _invalid("copy_tensors: item %d is %s%s but its destination is %s%s"
                           % (i, s.data_type(), s.shape(), d.data_type(), d.shape()))
        d.update_inplace(s.numpy())

"""Sparse tensors (COO, CSR, block sparse) with onnxruntime's Python API.

The tensor lives in the library (C API ValueCreateSparseTensor, which checks
the indices: in range, and in order where the format requires it); values
and indices wrap the caller's numpy arrays without a copy and keep them
alive. InferenceSession.run takes one, wrapped in an OrtValue, for inputs
declared sparse_tensor(...).
"""

import enum

import numpy as np

from . import _values
from ._device import OrtDevice, _COrtDevice
from ._errors import exception_for_code
from ._ffi import api, check, ffi


class OrtSparseFormat(enum.IntEnum):
    """Layouts of a sparse tensor (values as onnxruntime's)."""

    ORT_SPARSE_UNDEFINED = 0
    ORT_SPARSE_COO = 1
    ORT_SPARSE_CSRC = 2
    ORT_SPARSE_BLOCK_SPARSE = 4


def _cpu_device(device, fn):
    """Refuses any device but the CPU, naming the call."""
    if isinstance(device, OrtDevice):
        device = device._get_c_device()
    if not isinstance(device, _COrtDevice):
        raise TypeError("%s: ort_device must be an OrtDevice, got %s" % (fn, type(device).__name__))
    if device.device_type() != _COrtDevice.cpu():
        raise RuntimeError("%s: only CPU memory is available in this build of onyxruntime (device type %d)"
                           % (fn, device.device_type()))


def _tensor(fn, what, arr, dtype=None):
    """(OnyxValue*, kept objects) over a numpy array, without a copy when it
    is C-contiguous and of the wanted dtype."""
    if not isinstance(arr, np.ndarray):
        raise TypeError("%s: %s must be a numpy.ndarray, got %s" % (fn, what, type(arr).__name__))
    if dtype is not None and arr.dtype != dtype:
        raise RuntimeError("%s: %s must be %s, got %s" % (fn, what, np.dtype(dtype), arr.dtype))
    keep = []
    value = _values.input_value(what, arr, 0, keep)
    return value, keep


class _View:
    """Index arrays of one format, views of the tensor's memory."""

    __slots__ = ("_arrays",)

    def __init__(self, arrays):
        self._arrays = arrays


class SparseCooView(_View):
    """COO indices: [nnz] linear offsets or [nnz, rank] coordinates."""

    __slots__ = ()

    def indices(self):
        return self._arrays[0]


class SparseCsrView(_View):
    """CSR indices: inner (column of each value) and outer (row starts)."""

    __slots__ = ()

    def inner(self):
        return self._arrays[0]

    def outer(self):
        return self._arrays[1]


class SparseBlockSparseView(_View):
    """Block sparse indices: int32 [2, blocks] (block rows, block columns)."""

    __slots__ = ()

    def indices(self):
        return self._arrays[0]


class _CSparseTensor:
    """onnxruntime.capi._pybind_state.SparseTensor: the library's sparse tensor."""

    __slots__ = ("_value", "_keep")

    def __init__(self, value, keep=None):
        self._value = value
        self._keep = keep

    @classmethod
    def _make(cls, fn, fmt, dense_shape, values, indices, device):
        _cpu_device(device, fn)
        try:
            dims = [int(d) for d in dense_shape]
        except (TypeError, ValueError):
            raise TypeError("%s: dense_shape must be a sequence of ints, got %r" % (fn, dense_shape)) from None
        vals, keep = _tensor(fn, "values", values)
        handles = []
        for what, arr, dtype in indices:
            h, k = _tensor(fn, what, arr, dtype)
            handles.append(h)
            keep.extend(k + [h])
        idx = ffi.new("OnyxValue*[]", max(1, len(handles)))
        for i, h in enumerate(handles):
            idx[i] = h
        out = ffi.new("OnyxValue**")
        status = api.ValueCreateSparseTensor(int(fmt), _values._shape_array(dims), len(dims), vals,
                                             ffi.cast("const OnyxValue* const*", idx), len(handles), out)
        if status != ffi.NULL:
            from ._ffi import status_to_exception
            raise status_to_exception(status, RuntimeError)
        return cls(ffi.gc(out[0], api.ValueRelease), keep + [vals])

    @staticmethod
    def sparse_coo_from_numpy(dense_shape, values, coo_indices, ort_device):
        """A COO tensor over `values` ([nnz]) and int64 `coo_indices` ([nnz]
        linear offsets or [nnz, 2] coordinates, sorted); no copy."""
        return _CSparseTensor._make("sparse_coo_from_numpy", OrtSparseFormat.ORT_SPARSE_COO, dense_shape, values,
                                    [("coo_indices", coo_indices, np.int64)], ort_device)

    @staticmethod
    def sparse_csr_from_numpy(dense_shape, values, inner_indices, outer_indices, ort_device):
        """A CSR tensor of a 2-D dense shape: int64 inner (column) and outer
        (row start) indices; no copy."""
        return _CSparseTensor._make("sparse_csr_from_numpy", OrtSparseFormat.ORT_SPARSE_CSRC, dense_shape, values,
                                    [("inner_indices", inner_indices, np.int64),
                                     ("outer_indices", outer_indices, np.int64)], ort_device)

    @staticmethod
    def blocksparse_from_numpy(dense_shape, values, indices, ort_device):
        """A block-sparse tensor: values [blocks, bh, bw] and int32 indices
        [2, blocks] (block rows then block columns); no copy."""
        return _CSparseTensor._make("blocksparse_from_numpy", OrtSparseFormat.ORT_SPARSE_BLOCK_SPARSE, dense_shape,
                                    values, [("indices", indices, np.int32)], ort_device)

    def _parts(self):
        return [_values.output_array("sparse tensor", v) for v in _values.elements(self._value)]

    def values(self):
        """The non-zero values as a numpy array (a view, no copy)."""
        return self._parts()[0]

    def get_coo_data(self):
        self._require(OrtSparseFormat.ORT_SPARSE_COO, "get_coo_data")
        return SparseCooView(self._parts()[1:])

    def get_csrc_data(self):
        self._require(OrtSparseFormat.ORT_SPARSE_CSRC, "get_csrc_data")
        return SparseCsrView(self._parts()[1:])

    def get_blocksparse_data(self):
        self._require(OrtSparseFormat.ORT_SPARSE_BLOCK_SPARSE, "get_blocksparse_data")
        return SparseBlockSparseView(self._parts()[1:])

    def _require(self, fmt, fn):
        if self.format != fmt:
            raise RuntimeError("%s: this sparse tensor is %s, not %s" % (fn, self.format.name, fmt.name))

    @property
    def format(self):
        out = ffi.new("OnyxSparseFormat*")
        check(api.ValueGetSparseFormat(self._value, out))
        return OrtSparseFormat(int(out[0]))

    def dense_shape(self):
        """The shape of the dense tensor this one stands for, as a list."""
        return _values._tensor_shape_and_type(self._value)[1]

    def data_type(self):
        """'sparse_tensor(float)' and so on."""
        from ._ortvalue import _TYPE_NAMES
        return "sparse_tensor(%s)" % _TYPE_NAMES.get(_values._tensor_shape_and_type(self._value)[0], "undefined")

    def device_name(self):
        """'cpu': the only memory of this build."""
        return "cpu"

    def to_cuda(self, ort_device):
        """Refused: this build has no CUDA."""
        raise RuntimeError("SparseTensor.to_cuda: Cuda is not available in this build of onyxruntime")


# onnxruntime names its C-level class SparseTensor too (capi._pybind_state).
_CSparseTensor.__name__ = _CSparseTensor.__qualname__ = "SparseTensor"


class SparseTensor:
    """onnxruntime.SparseTensor: a sparse tensor in COO, CSR or block-sparse
    layout. Make one with sparse_coo_from_numpy or sparse_csr_from_numpy, and
    wrap it with OrtValue.ort_value_from_sparse_tensor to feed a model."""

    __slots__ = ("_tensor",)

    def __init__(self, sparse_tensor):
        if not isinstance(sparse_tensor, _CSparseTensor):
            raise TypeError("SparseTensor wraps a capi._pybind_state.SparseTensor; use "
                            "SparseTensor.sparse_coo_from_numpy or sparse_csr_from_numpy")
        self._tensor = sparse_tensor

    def _get_c_tensor(self):
        return self._tensor

    @staticmethod
    def sparse_coo_from_numpy(dense_shape, values, coo_indices, ort_device):
        """COO: `values` [nnz] and int64 `coo_indices` ([nnz] linear offsets
        or [nnz, 2] coordinates, row-major order, no duplicates) of a tensor
        of `dense_shape`, on `ort_device` (an OrtDevice; CPU only). The
        arrays are shared, not copied. Indices out of range or out of order
        are refused (RuntimeError naming the index)."""
        return SparseTensor(_CSparseTensor.sparse_coo_from_numpy(dense_shape, values, coo_indices, ort_device))

    @staticmethod
    def sparse_csr_from_numpy(dense_shape, values, inner_indices, outer_indices, ort_device):
        """CSR of a 2-D `dense_shape`: int64 `inner_indices` (the column of
        each value, increasing within a row) and `outer_indices` (rows + 1
        row starts). Shared, not copied; bad indices are refused."""
        return SparseTensor(_CSparseTensor.sparse_csr_from_numpy(dense_shape, values, inner_indices, outer_indices,
                                                                 ort_device))

    def values(self):
        """The non-zero values (a numpy view of the tensor's memory)."""
        return self._tensor.values()

    def as_coo_view(self):
        """The COO indices (SparseCooView.indices()); RuntimeError for other formats."""
        return self._tensor.get_coo_data()

    def as_csrc_view(self):
        """The CSR indices (SparseCsrView.inner() and .outer())."""
        return self._tensor.get_csrc_data()

    def as_blocksparse_view(self):
        """The block-sparse indices (SparseBlockSparseView.indices())."""
        return self._tensor.get_blocksparse_data()

    def to_cuda(self, ort_device):
        """Refused with RuntimeError: this build has no CUDA."""
        return SparseTensor(self._tensor.to_cuda(ort_device))

    def format(self):
        """An OrtSparseFormat."""
        return self._tensor.format

    def dense_shape(self):
        """The dense tensor's shape, as a list of ints."""
        return self._tensor.dense_shape()

    def data_type(self):
        """'sparse_tensor(float)' and so on."""
        return self._tensor.data_type()

    def device_name(self):
        """'cpu'."""
        return self._tensor.device_name()


def is_sparse_value(value):
    kind = ffi.new("OnyxValueKind*")
    check(api.ValueGetKind(value, kind))
    return int(kind[0]) == 5


def not_sparse():
    return exception_for_code(2, "This OrtValue does not contain SparseTensor. Check data_type() value.",
                              RuntimeError)


# run() returns a sparse output as the C-level SparseTensor, as onnxruntime does.
_values.register_output_kind(5, _CSparseTensor)

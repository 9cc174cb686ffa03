"""DLPack both ways for CPU and CUDA tensors, without copying.

Export: OrtValue.__dlpack__ / to_dlpack hand out a "dltensor" capsule whose
DLManagedTensor points at the value's memory and keeps the OrtValue alive
until the consumer calls its deleter (or the capsule dies unconsumed).
Import: OrtValue.from_dlpack takes the capsule (or an object with
__dlpack__), renames it "used_dltensor" as the protocol requires, and wraps
its memory with ValueCreateTensorWithDeleter, whose deleter calls the
producer's when the library releases the tensor.

CUDA memory (kDLCUDA) travels the same way where CUDA is usable: exported
device values carry their device id, and imported ones become OrtValues in
CUDA memory (device_name() 'cuda') over the producer's buffer. Device values
this library hands out are complete (runs end by synchronizing their
stream); a producer's still-running kernels are the caller's to finish
first (torch.cuda.synchronize()), as with device pointers given to
IOBinding. Where CUDA is not usable a kDLCUDA capsule is refused naming why
and stays unconsumed.
"""

import ctypes
import threading

from . import _providers, _values
from ._errors import exception_for_code
from ._ffi import api, check, ffi

_K_DL_CPU = 1
_K_DL_CUDA = 2
_K_DL_CUDA_HOST = 3  # pinned host memory: read by the CPU like any host memory
_CAPSULE = b"dltensor"
_USED = b"used_dltensor"


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int32), ("dtype", _DLDataType),
                ("shape", ctypes.POINTER(ctypes.c_int64)), ("strides", ctypes.POINTER(ctypes.c_int64)),
                ("byte_offset", ctypes.c_uint64)]


class _DLManagedTensor(ctypes.Structure):
    pass


_DELETER = ctypes.CFUNCTYPE(None, ctypes.POINTER(_DLManagedTensor))
_DLManagedTensor._fields_ = [("dl_tensor", _DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", _DELETER)]

_py = ctypes.pythonapi
_py.PyCapsule_New.restype = ctypes.py_object
_py.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
_py.PyCapsule_IsValid.restype = ctypes.c_int
_py.PyCapsule_IsValid.argtypes = [ctypes.py_object, ctypes.c_char_p]
_py.PyCapsule_GetPointer.restype = ctypes.c_void_p
_py.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_py.PyCapsule_SetName.restype = ctypes.c_int
_py.PyCapsule_SetName.argtypes = [ctypes.py_object, ctypes.c_char_p]
_CAPSULE_DESTRUCTOR = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
# The destructor gets the dying capsule as a raw address: these take it as
# such, never as a Python object (that would revive it mid-deallocation).
_raw_is_valid = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p)(
    ("PyCapsule_IsValid", ctypes.pythonapi))
_raw_get_pointer = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_char_p)(
    ("PyCapsule_GetPointer", ctypes.pythonapi))

# Exported tensors alive in some consumer: address of the DLManagedTensor ->
# (the struct, its shape array, the OrtValue holding the memory).
_exported = {}
_exported_lock = threading.Lock()

# numpy dtype <-> DLPack (code, bits): 0 int, 1 uint, 2 float, 4 bfloat, 5 complex, 6 bool.
_TO_DL = {1: (2, 32), 2: (1, 8), 3: (0, 8), 4: (1, 16), 5: (0, 16), 6: (0, 32), 7: (0, 64), 9: (6, 8), 10: (2, 16),
          11: (2, 64), 12: (1, 32), 13: (1, 64), 14: (5, 64), 15: (5, 128), 16: (4, 16)}
_FROM_DL = {v: k for k, v in _TO_DL.items()}


def _release_exported(address):
    with _exported_lock:
        _exported.pop(address, None)


@_DELETER
def _exported_deleter(managed):
    _release_exported(ctypes.addressof(managed.contents))


def _capsule_destructor_impl(capsule):
    # An unconsumed capsule still owns its tensor: free it. A consumed one
    # ("used_dltensor") belongs to the consumer, which calls the deleter.
    try:
        if _raw_is_valid(capsule, _CAPSULE):
            address = _raw_get_pointer(capsule, _CAPSULE)
            if address:
                _release_exported(address)
    except Exception:  # noqa: BLE001 - at interpreter exit the module may be half torn down
        pass


_capsule_destructor = _CAPSULE_DESTRUCTOR(_capsule_destructor_impl)


def to_dlpack(ortvalue, elem, shape, data_ptr, device=(_K_DL_CPU, 0)):
    """A "dltensor" capsule over a tensor's memory (no copy) on `device`,
    a DLPack (device type, device id)."""
    dl = _TO_DL.get(elem)
    if dl is None:
        raise exception_for_code(2, "to_dlpack: element type %d has no DLPack type" % elem, RuntimeError)
    managed = _DLManagedTensor()
    dims = (ctypes.c_int64 * max(1, len(shape)))(*shape)
    t = managed.dl_tensor
    t.data = data_ptr or None
    t.device = _DLDevice(device[0], device[1])
    t.ndim = len(shape)
    t.dtype = _DLDataType(dl[0], dl[1], 1)
    t.shape = ctypes.cast(dims, ctypes.POINTER(ctypes.c_int64))
    t.strides = None  # compact row-major
    t.byte_offset = 0
    managed.deleter = _exported_deleter
    address = ctypes.addressof(managed)
    with _exported_lock:
        _exported[address] = (managed, dims, ortvalue)
    return _py.PyCapsule_New(address, _CAPSULE, ctypes.cast(_capsule_destructor, ctypes.c_void_p))


# Imported tensors: id -> the DLManagedTensor pointer whose deleter the library's release calls.
_imported = {}
_imported_lock = threading.Lock()
_next_id = [0]


@ffi.callback("void(void*, void*)")
def _imported_deleter(context, data):
    key = int(ffi.cast("uintptr_t", context))
    with _imported_lock:
        managed = _imported.pop(key, None)
    if managed is not None and managed.contents.deleter:
        managed.contents.deleter(managed)


def _capsule_of(data):
    if hasattr(data, "__dlpack__"):
        data = data.__dlpack__()
    if type(data).__name__ != "PyCapsule":
        raise TypeError("from_dlpack expects an object with __dlpack__ or a DLPack capsule, got %s"
                        % type(data).__name__)
    if not _py.PyCapsule_IsValid(data, _CAPSULE):
        # onnxruntime's exception class and text; a capsule read once is renamed "used_dltensor".
        raise TypeError("from_dlpack expected a valid DLPack capsule named 'dltensor' (this capsule was already "
                        "consumed, or is not a DLPack capsule)")
    return data


def from_dlpack(data, is_bool_tensor=False):
    """An OnyxValue* (with its release attached) sharing the memory of a
    DLPack capsule or of an object with __dlpack__."""
    capsule = _capsule_of(data)
    managed = ctypes.cast(_py.PyCapsule_GetPointer(capsule, _CAPSULE), ctypes.POINTER(_DLManagedTensor))
    t = managed.contents.dl_tensor
    info = _memory_info_for(t.device.device_type, t.device.device_id)
    key = (t.dtype.code, t.dtype.bits)
    elem = _FROM_DL.get(key)
    if elem is None or t.dtype.lanes != 1:
        raise RuntimeError("from_dlpack: DLPack data type (code %d, bits %d, lanes %d) is not supported"
                           % (t.dtype.code, t.dtype.bits, t.dtype.lanes))
    if is_bool_tensor and elem == 2:
        elem = 9
    shape = [t.shape[i] for i in range(t.ndim)]
    if t.strides:
        expect = 1
        for i in reversed(range(t.ndim)):
            if shape[i] != 1 and t.strides[i] != expect:
                raise RuntimeError("from_dlpack: only contiguous (compact row-major) tensors can be shared without a copy; this "
                                   "one has strides %s for shape %s"
                                   % ([t.strides[i] for i in range(t.ndim)], shape))
            expect *= shape[i]
    count = 1
    for d in shape:
        count *= d
    itemsize = t.dtype.bits // 8
    ptr = (t.data or 0) + t.byte_offset
    # The library now owns the tensor: mark the capsule consumed first, so
    # its destructor leaves the tensor alone.
    _py.PyCapsule_SetName(capsule, _USED)
    with _imported_lock:
        _next_id[0] += 1
        ident = _next_id[0]
        _imported[ident] = managed
    out = ffi.new("OnyxValue**")
    buf = ffi.cast("void*", ptr if count else 0)
    status = api.ValueCreateTensorWithDeleter(info, buf if count else ffi.NULL, count * itemsize,
                                              _values._shape_array(shape), len(shape), elem, _imported_deleter,
                                              ffi.cast("void*", ident), out)
    if status != ffi.NULL:
        # The library did not take the tensor: hand it back to its producer.
        _imported_deleter(ffi.cast("void*", ident), ffi.NULL)
        check(status)
    return ffi.gc(out[0], api.ValueRelease)


def _memory_info_for(device_type, device_id):
    """The OnyxMemoryInfo of a DLPack device, or an error naming why it
    cannot be used here (raised before the capsule is consumed)."""
    if device_type in (_K_DL_CPU, _K_DL_CUDA_HOST):
        return _values._cpu_memory_info()
    if device_type == _K_DL_CUDA:
        why = _providers.unavailable_reason("CUDAExecutionProvider")
        if why is not None:
            raise RuntimeError("from_dlpack: DLPack device type 2 (kDLCUDA, device %d): the tensor is in CUDA "
                               "memory but CUDA is not available here: %s" % (device_id, why))
        return _providers.cuda_memory_info(int(device_id))
    raise RuntimeError("from_dlpack: DLPack device type %d (device %d) is not available in this build of "
                       "onyxruntime; only CPU (kDLCPU = 1, kDLCUDAHost = 3) and CUDA (kDLCUDA = 2) tensors can "
                       "be shared" % (device_type, device_id))


def is_dlpack_uint8_tensor(capsule):
    """True when the DLPack capsule holds uint8 elements (bool tensors
    travel as uint8 in older DLPack versions)."""
    if not _py.PyCapsule_IsValid(capsule, _CAPSULE):
        raise TypeError("is_dlpack_uint8_tensor expects a valid DLPack capsule named 'dltensor'")
    managed = ctypes.cast(_py.PyCapsule_GetPointer(capsule, _CAPSULE), ctypes.POINTER(_DLManagedTensor))
    dt = managed.contents.dl_tensor.dtype
    return dt.code == 1 and dt.bits == 8 and dt.lanes == 1


def device_of(value):
    """The DLPack (device type, device id) of tensor `value` (an OnyxValue*):
    (kDLCPU, 0) or (kDLCUDA, its device id)."""
    info = ffi.new("const OnyxMemoryInfo**")
    check(api.ValueGetTensorMemoryInfo(value, info))
    name = ffi.new("const char**")
    check(api.MemoryInfoGetName(info[0], name))
    mem_type = ffi.new("OnyxMemType*")
    check(api.MemoryInfoGetMemType(info[0], mem_type))
    if ffi.string(name[0]).lower() != b"cuda" or mem_type[0] != 0:
        return (_K_DL_CPU, 0)
    device_id = ffi.new("int*")
    check(api.MemoryInfoGetDeviceId(info[0], device_id))
    return (_K_DL_CUDA, device_id[0])


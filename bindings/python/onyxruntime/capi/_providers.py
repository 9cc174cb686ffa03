"""Why a provider cannot be used here, as the library says it (for warnings
and errors that name the cause: a missing library and dlerror()'s text, or
no CUDA device)."""

from ._ffi import api, check, ffi, new_handle, to_str


def unavailable_reason(name):
    """None when provider `name` is available; otherwise the library's message."""
    handle = new_handle("OnyxSessionOptions", api.SessionOptionsCreate, api.SessionOptionsRelease)
    status = api.SessionOptionsAppendProvider(handle, name.encode("utf-8"), ffi.NULL, ffi.NULL, 0)
    if status == ffi.NULL:
        return None
    message = to_str(api.StatusGetMessage(status)) or ""
    api.StatusRelease(status)
    return message


def cuda_memory_info(device_id):
    """OnyxMemoryInfo of CUDA device `device_id` (an int >= 0)."""
    if isinstance(device_id, bool) or not isinstance(device_id, int) or device_id < 0:
        raise TypeError("device_id must be an int >= 0, got %r" % (device_id,))
    out = ffi.new("OnyxMemoryInfo**")
    check(api.MemoryInfoCreate(b"Cuda", 0, device_id, 0, out))
    return ffi.gc(out[0], api.MemoryInfoRelease)


def wants_cuda(device_type):
    """True for 'cuda' where CUDA is usable (else the caller reports why)."""
    return device_type == "cuda" and unavailable_reason("CUDAExecutionProvider") is None

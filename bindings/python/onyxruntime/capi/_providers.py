"""Why a provider cannot be used here, as the library says it (for warnings
and errors that name the cause: a missing library and dlerror()'s text, or
no CUDA device)."""

from ._ffi import api, ffi, new_handle, to_str


def unavailable_reason(name):
    """None when provider `name` is available; otherwise the library's message."""
    handle = new_handle("OnyxSessionOptions", api.SessionOptionsCreate, api.SessionOptionsRelease)
    status = api.SessionOptionsAppendProvider(handle, name.encode("utf-8"), ffi.NULL, ffi.NULL, 0)
    if status == ffi.NULL:
        return None
    message = to_str(api.StatusGetMessage(status)) or ""
    api.StatusRelease(status)
    return message


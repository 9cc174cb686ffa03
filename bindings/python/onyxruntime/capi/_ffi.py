"""Loads libonyxruntime.so through cffi (ABI mode) and checks C statuses.

The library and the cdef (the public header run through the preprocessor with
-DONYX_CFFI_CDEF) are staged next to the package by the build, so the binding
and the library always come from the same build. ONYXRUNTIME_LIBRARY may point
at another copy of the library (same header version).

cffi releases the GIL around every C call (documented since cffi 0.3), so
session creation and runs do not block other Python threads.
"""

import os
import threading

from ._errors import exception_for_code

_PKG_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

try:
    # The cdef parsed at build time (bindings/python/ext/build_abi_ffi.py).
    from ._onyx_abi_ffi import ffi
except ImportError:
    import cffi

    ffi = cffi.FFI()
    with open(os.path.join(_PKG_DIR, "_onyx_cdef.h"), encoding="utf-8") as _f:
        ffi.cdef(_f.read())

_lib_path = os.environ.get("ONYXRUNTIME_LIBRARY") or os.path.join(_PKG_DIR, "libonyxruntime.so")
lib = ffi.dlopen(_lib_path)

# The table version this binding is written against. The preprocessed cdef
# drops #defines, so ONYX_API_VERSION itself is not visible here; asking for
# the version the code below uses is what the versioning scheme wants anyway.
API_VERSION = 7

_base = lib.OnyxGetApiBase()
api = _base.GetApi(API_VERSION)
if api == ffi.NULL:
    _why = _base.GetApiError(API_VERSION)
    raise ImportError(
        "onyxruntime: %s does not provide API version %d: %s"
        % (_lib_path, API_VERSION, ffi.string(_why).decode("utf-8", "replace") if _why != ffi.NULL else "")
    )


def to_str(cstr):
    """Decodes a borrowed C string (NULL -> None)."""
    if cstr == ffi.NULL:
        return None
    return ffi.string(cstr).decode("utf-8", "replace")


def status_to_exception(status, exc_extra_base=None):
    """Builds (and releases) the exception for a non-NULL OnyxStatus*."""
    code = int(api.StatusGetCode(status))
    message = to_str(api.StatusGetMessage(status)) or ""
    api.StatusRelease(status)
    return exception_for_code(code, message, exc_extra_base)


def check(status):
    """Raises the matching onyxruntime exception when `status` is not NULL."""
    if status != ffi.NULL:
        raise status_to_exception(status)


def new_handle(ctype, create, release):
    """Calls create(out) for a `ctype**` out pointer; returns the handle with
    `release` attached as its cffi destructor."""
    out = ffi.new(ctype + "**")
    check(create(out))
    return ffi.gc(out[0], release)


_env = None
_env_lock = threading.Lock()


def default_env():
    """The process-wide environment (created on first use, like onnxruntime's)."""
    global _env
    with _env_lock:
        if _env is None:
            _env = new_handle(
                "OnyxEnv", lambda out: api.EnvCreate(2, b"onyxruntime", out), api.EnvRelease
            )
        return _env


def cstring_array(strings):
    """(const char*[] cdata, keep-alive list) for a list of Python strings;
    an item that is not a str is a TypeError naming it (as onnxruntime's
    "incompatible function arguments"), not an AttributeError from inside."""
    for s in strings:
        if not isinstance(s, str):
            raise TypeError("expected a sequence of str names, got %r (%s) among them" % (s, type(s).__name__))
    keep = [ffi.new("char[]", s.encode("utf-8")) for s in strings]
    # Never NULL, even when empty: the C side rejects NULL arrays.
    arr = ffi.new("const char*[]", max(1, len(keep)))
    for i, c in enumerate(keep):
        arr[i] = c
    return arr, keep

# Like onnxruntime, whose environment is made when the module is imported:
# the process-wide set-up (ONNX schema registration) happens here, not in the
# first InferenceSession.
default_env()

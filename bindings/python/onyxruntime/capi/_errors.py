"""The exceptions the binding raises and the one place their text is built.
Their public home is onnxruntime_pybind11_state (onnxruntime's module name),
which re-exports them; they live here so that the binding's modules import
in one direction: everything imports this module, and it imports nothing of
the package (onnxruntime_pybind11_state sits on top of all of them).
"""


class Fail(Exception):
    """ONYX_FAIL (1)."""


class InvalidArgument(Exception):
    """ONYX_INVALID_ARGUMENT (2): a bad input name, type, shape or argument."""


class NoSuchFile(Exception):
    """ONYX_NO_SUCHFILE (3)."""


class NoModel(Exception):
    """ONYX_NO_MODEL (4)."""


class EngineError(Exception):
    """ONYX_ENGINE_ERROR (5)."""


class RuntimeException(Exception):
    """ONYX_RUNTIME_EXCEPTION (6): a failure while running."""


class InvalidProtobuf(Exception):
    """ONYX_INVALID_PROTOBUF (7): the model bytes do not parse."""


class ModelLoaded(Exception):
    """ONYX_MODEL_LOADED (8)."""


class NotImplemented(Exception):  # noqa: A001 - onnxruntime's name, shadowing is intended
    """ONYX_NOT_IMPLEMENTED (9)."""


class InvalidGraph(Exception):
    """ONYX_INVALID_GRAPH (10)."""


class EPFail(Exception):
    """ONYX_EP_FAIL (11)."""


# onnxruntime's other exception classes, so that `except` clauses naming
# them resolve; nothing in this build raises the last three (no
# precompiled-model, lookup or device-reset paths).
class ModelLoadCanceled(Exception):
    """ONYX_MODEL_LOAD_CANCELED (12): SessionOptions.set_load_cancellation_flag stopped a session creation."""


class ModelRequiresCompilation(Exception):
    """onnxruntime's MODEL_REQUIRES_COMPILATION (13); never raised by onyxruntime."""


class NotFound(Exception):
    """onnxruntime's NOT_FOUND (14); never raised by onyxruntime."""


class DeviceReset(Exception):
    """onnxruntime's device-reset error (a GPU was reset); never raised by onyxruntime."""


_BY_CODE = {
    1: (Fail, "FAIL"),
    2: (InvalidArgument, "INVALID_ARGUMENT"),
    3: (NoSuchFile, "NO_SUCHFILE"),
    4: (NoModel, "NO_MODEL"),
    5: (EngineError, "ENGINE_ERROR"),
    6: (RuntimeException, "RUNTIME_EXCEPTION"),
    7: (InvalidProtobuf, "INVALID_PROTOBUF"),
    8: (ModelLoaded, "MODEL_LOADED"),
    9: (NotImplemented, "NOT_IMPLEMENTED"),
    10: (InvalidGraph, "INVALID_GRAPH"),
    11: (EPFail, "EP_FAIL"),
    12: (ModelLoadCanceled, "MODEL_LOAD_CANCELED"),
}

_combined = {}


def format_message(code, message):
    """The one place the user-visible error text is built."""
    name = _BY_CODE.get(code, (Fail, "FAIL"))[1]
    return "[OnyxRuntimeError] : %d : %s : %s" % (code, name, message)


def exception_for_code(code, message, extra_base=None):
    """An exception instance for C status `code`. `extra_base` (e.g.
    RuntimeError) adds a second base class where onnxruntime raises a builtin
    exception for the same situation."""
    cls = _BY_CODE.get(code, (Fail, "FAIL"))[0]
    if extra_base is not None:
        key = (cls, extra_base)
        if key not in _combined:
            _combined[key] = type(cls.__name__, (cls, extra_base), {"__module__": _PUBLIC_MODULE})
        cls = _combined[key]
    return cls(format_message(code, message))


def not_implemented(message):
    """A NotImplemented error (code 9) for features this binding lacks."""
    return exception_for_code(9, message)


# Named as onnxruntime names them: onnxruntime.capi.onnxruntime_pybind11_state.X.
_PUBLIC_MODULE = __name__.rsplit(".", 1)[0] + ".onnxruntime_pybind11_state"
for _cls in [c for c, _ in _BY_CODE.values()] + [ModelRequiresCompilation, NotFound, DeviceReset]:
    _cls.__module__ = _PUBLIC_MODULE

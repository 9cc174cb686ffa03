"""Exceptions raised by onyxruntime, under onnxruntime's module and class names.

Code written for onnxruntime that does
``from onnxruntime.capi.onnxruntime_pybind11_state import InvalidArgument``
works after changing only the package name. As in onnxruntime, every class
derives directly from Exception, and the message reads
``[OnyxRuntimeError] : <code> : <CODE_NAME> : <message>``.
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
            _combined[key] = type(cls.__name__, (cls, extra_base), {"__module__": __name__})
        cls = _combined[key]
    return cls(format_message(code, message))


def not_implemented(message):
    """A NotImplemented error (code 9) for features this binding lacks."""
    return exception_for_code(9, message)


def __getattr__(name):
    # onnxruntime also exposes its classes here; loaded lazily because the
    # binding itself imports the exceptions from this module.
    if name in ("SessionOptions", "RunOptions", "GraphOptimizationLevel", "ExecutionMode"):
        from . import _options

        return getattr(_options, name)
    if name == "OrtValue":
        from . import _ortvalue

        return _ortvalue.OrtValue
    if name in ("InferenceSession", "NodeArg", "ModelMetadata", "get_available_providers", "get_all_providers",
                "get_device", "get_version_string", "get_build_info"):
        from . import onnxruntime_inference_collection

        return getattr(onnxruntime_inference_collection, name)
    raise AttributeError("module %r has no attribute %r" % (__name__, name))

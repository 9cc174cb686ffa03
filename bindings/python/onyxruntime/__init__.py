"""Onyx Runtime: run ONNX models. A drop-in for ``import onnxruntime``.

    import onyxruntime as rt
    sess = rt.InferenceSession("model.onnx", providers=rt.get_available_providers())
    out = sess.run(None, {sess.get_inputs()[0].name: x})
"""

from .capi._ffi import api as _api, to_str as _to_str
from .capi._options import ExecutionMode, GraphOptimizationLevel, RunOptions, SessionOptions
from .capi.onnxruntime_inference_collection import (
    InferenceSession,
    ModelMetadata,
    NodeArg,
    OrtValue,
    get_all_providers,
    get_available_providers,
    get_build_info,
    get_device,
    get_version_string,
)
from .capi import onnxruntime_pybind11_state  # noqa: F401 - importable as onyxruntime.capi.onnxruntime_pybind11_state

__version__ = _to_str(_api.GetVersionString())
version = __version__

__all__ = [
    "ExecutionMode",
    "GraphOptimizationLevel",
    "InferenceSession",
    "ModelMetadata",
    "NodeArg",
    "OrtValue",
    "RunOptions",
    "SessionOptions",
    "get_all_providers",
    "get_available_providers",
    "get_build_info",
    "get_device",
    "get_version_string",
    "__version__",
]

"""Onyx Runtime: run ONNX models. A drop-in for ``import onnxruntime``.

    import onyxruntime as rt
    sess = rt.InferenceSession("model.onnx", providers=rt.get_available_providers())
    out = sess.run(None, {sess.get_inputs()[0].name: x})
"""

from .capi._ffi import api as _api, to_str as _to_str
from .capi._env import (
    OrtAllocatorType,
    OrtDeviceMemoryType,
    OrtMemoryInfoDeviceType,
    OrtArenaCfg,
    OrtMemoryInfo,
    OrtMemType,
    create_and_register_allocator,
    create_and_register_allocator_v2,
    disable_telemetry_events,
    enable_telemetry_events,
    has_collective_ops,
    set_default_logger_severity,
    set_default_logger_verbosity,
    set_global_thread_pool_sizes,
    set_seed,
)
from .capi._iobinding import IOBinding, SessionIOBinding
from .capi._ep_device import (
    OrtEpDevice,
    OrtExecutionProviderDevicePolicy,
    OrtHardwareDevice,
    OrtHardwareDeviceType,
    get_ep_devices,
)
from .capi._lora import AdapterFormat, LoraAdapter
from .capi._sparse import OrtSparseFormat, SparseTensor
from .capi._options import ExecutionMode, ExecutionOrder, GraphOptimizationLevel, RunOptions, SessionOptions
from .capi.onnxruntime_inference_collection import (
    InferenceSession,
    ModelMetadata,
    NodeArg,
    OrtDevice,
    OrtDeviceVendorId,
    OrtEpAssignedNode,
    OrtEpAssignedSubgraph,
    OrtValue,
    get_all_providers,
    get_available_providers,
    get_build_info,
    get_device,
    get_supported_operators,
    get_version_string,
)
from . import datasets  # noqa: F401 - onnxruntime.datasets.get_example
from .capi import onnxruntime_pybind11_state  # noqa: F401 - importable as onyxruntime.capi.onnxruntime_pybind11_state
from .capi import _pybind_state  # noqa: F401 - onnxruntime.capi._pybind_state's counterpart

from .capi._ortvalue import copy_tensors  # noqa: E402

__version__ = _to_str(_api.GetVersionString())
version = __version__
package_name = "onyxruntime"
# onnxruntime's CUDA version of the build: this build has no CUDA.
cuda_version = ""


def print_debug_info():
    """Prints the package, its version and location, and the platform."""
    import os as _os
    import platform as _platform

    print(f"{package_name} version: {__version__}")
    print("platform:", _platform.platform())
    print("package location:", _os.path.dirname(_os.path.abspath(__file__)))
    print("providers:", ", ".join(get_available_providers()))
    print(get_build_info())

__all__ = [
    "AdapterFormat",
    "LoraAdapter",
    "OrtDeviceMemoryType",
    "OrtDeviceVendorId",
    "OrtMemoryInfoDeviceType",
    "OrtSparseFormat",
    "SparseTensor",
    "ExecutionMode",
    "ExecutionOrder",
    "IOBinding",
    "OrtAllocatorType",
    "OrtArenaCfg",
    "OrtMemoryInfo",
    "OrtMemType",
    "SessionIOBinding",
    "create_and_register_allocator",
    "create_and_register_allocator_v2",
    "disable_telemetry_events",
    "enable_telemetry_events",
    "has_collective_ops",
    "set_default_logger_severity",
    "set_default_logger_verbosity",
    "set_seed",
    "GraphOptimizationLevel",
    "InferenceSession",
    "ModelMetadata",
    "NodeArg",
    "OrtDevice",
    "OrtValue",
    "RunOptions",
    "SessionOptions",
    "get_all_providers",
    "get_available_providers",
    "get_build_info",
    "get_device",
    "get_supported_operators",
    "get_version_string",
    "__version__",
]

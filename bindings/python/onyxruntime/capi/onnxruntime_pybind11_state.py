"""Exceptions raised by onyxruntime, under onnxruntime's module and class names.

Code written for onnxruntime that does
``from onnxruntime.capi.onnxruntime_pybind11_state import InvalidArgument``
works after changing only the package name. As in onnxruntime, every class
derives directly from Exception, and the message reads
``[OnyxRuntimeError] : <code> : <CODE_NAME> : <message>``.
"""

from ._errors import (  # noqa: F401 - re-exported: this is their public home
    Fail,
    InvalidArgument,
    NoSuchFile,
    NoModel,
    EngineError,
    RuntimeException,
    InvalidProtobuf,
    ModelLoaded,
    NotImplemented,
    InvalidGraph,
    EPFail,
    ModelLoadCanceled,
    ModelRequiresCompilation,
    NotFound,
    DeviceReset,
    exception_for_code,
    format_message,
    not_implemented,
)


# onnxruntime also exposes its classes here. Nothing in the binding imports
# this module, so it may import all the others (imports go one way). This
# binding has one layer, so the C-level names are the public classes, except
# OrtDevice, whose C-level form (device-type codes, a 4-int constructor)
# differs from onnxruntime.OrtDevice.
from ._device import _COrtDevice as OrtDevice  # noqa: E402,F401
from ._env import (  # noqa: E402,F401
    ArenaExtendStrategy,
    OrtAllocatorType,
    OrtDeviceMemoryType,
    OrtMemoryInfoDeviceType,
    kNextPowerOfTwo,
    kSameAsRequested,
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
from ._iobinding import SessionIOBinding  # noqa: E402,F401
from ._options import ExecutionMode, ExecutionOrder, GraphOptimizationLevel, RunOptions, SessionOptions  # noqa: E402,F401
from ._ortvalue import OrtValue, OrtValueVector, copy_tensors  # noqa: E402,F401
from ._dlpack import is_dlpack_uint8_tensor  # noqa: E402,F401
from ._lora import AdapterFormat, LoraAdapter  # noqa: E402,F401
from ._sparse import (  # noqa: E402,F401
    OrtSparseFormat,
    SparseBlockSparseView,
    SparseCooView,
    SparseCsrView,
    _CSparseTensor as SparseTensor,
)
from .onnxruntime_inference_collection import (  # noqa: E402,F401
    InferenceSession,
    ModelMetadata,
    NodeArg,
    OrtEpAssignedNode,
    OrtEpAssignedSubgraph,
    get_all_providers,
    get_available_providers,
    get_build_info,
    get_device,
    get_version_string,
)


def get_default_session_options():
    """A SessionOptions with every default (onnxruntime's C-level helper)."""
    return SessionOptions()


class SessionObjectInitializer:
    """onnxruntime's C-level marker for "default session options and
    logging"; get_session_initializer() returns one."""

    @staticmethod
    def get_default_session_options():
        return SessionOptions()


def get_session_initializer():
    """A SessionObjectInitializer."""
    return SessionObjectInitializer()


from ._ep_device import (  # noqa: E402,F401
    OrtEpDevice,
    OrtExecutionProviderDevicePolicy,
    OrtHardwareDevice,
    OrtHardwareDeviceType,
    get_ep_devices,
)


def get_hardware_devices():
    """The machine's devices this build can use: its CPU."""
    return [get_ep_devices()[0].device]

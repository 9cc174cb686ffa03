"""The ONNX backend API (onnx.backend.base) over onyxruntime.

    import onyxruntime.backend as backend
    rep = backend.prepare(model)          # ModelProto, bytes or a path
    outputs = rep.run([x])                # list, dict or a single array

``onnx.backend.test.BackendTest(onyxruntime.backend, __name__)`` drives it.
This subpackage needs the ``onnx`` package; ``import onyxruntime`` does not.
"""

from .backend import OnyxRuntimeBackend
from .backend_rep import OnyxRuntimeBackendRep

is_compatible = OnyxRuntimeBackend.is_compatible
prepare = OnyxRuntimeBackend.prepare
run = OnyxRuntimeBackend.run_model
run_model = OnyxRuntimeBackend.run_model
run_node = OnyxRuntimeBackend.run_node
supports_device = OnyxRuntimeBackend.supports_device

__all__ = [
    "OnyxRuntimeBackend",
    "OnyxRuntimeBackendRep",
    "is_compatible",
    "prepare",
    "run",
    "run_model",
    "run_node",
    "supports_device",
]

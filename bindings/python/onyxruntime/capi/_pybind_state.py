"""onnxruntime.capi._pybind_state under onyxruntime's name: every name of
onnxruntime_pybind11_state, so ``from onyxruntime.capi._pybind_state import X``
works where ``from onnxruntime.capi._pybind_state import X`` does."""

from .onnxruntime_pybind11_state import *  # noqa: F401,F403

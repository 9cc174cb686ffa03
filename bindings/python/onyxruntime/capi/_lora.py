"""LoRA adapters in onnxruntime's adapter file format (read and written by
the library, C API LoraAdapter*): LoraAdapter for runs
(RunOptions.add_active_adapter) and AdapterFormat to read and write files."""

import os

from ._ffi import api, check, ffi, new_handle, to_str
from ._ortvalue import OrtValue


def _path(p, what):
    if not isinstance(p, (str, os.PathLike)):
        raise TypeError("%s: expected a path, got %s" % (what, type(p).__name__))
    return os.fsencode(p)


class LoraAdapter:
    """A LoRA adapter: named tensors that RunOptions.add_active_adapter feeds
    to the model's inputs of the same names for the runs using them."""

    __slots__ = ("_handle",)

    def __init__(self):
        self._handle = None

    def Load(self, adapter_file_path):  # noqa: N802 - onnxruntime's name
        """Reads an adapter file (.onnx_adapter)."""
        path = _path(adapter_file_path, "LoraAdapter.Load")
        self._handle = new_handle("OnyxLoraAdapter", lambda out: api.LoraAdapterCreate(path, out),
                                  api.LoraAdapterRelease)

    @classmethod
    def from_bytes(cls, data):
        """An adapter from the bytes of an adapter file (copied)."""
        buf = ffi.from_buffer(data)
        a = cls()
        a._handle = new_handle("OnyxLoraAdapter", lambda out: api.LoraAdapterCreateFromBytes(buf, len(buf), out),
                               api.LoraAdapterRelease)
        return a

    def _c_handle(self):
        if self._handle is None:
            raise RuntimeError("LoraAdapter: nothing loaded (call Load first)")
        return self._handle


class AdapterFormat:
    """Reads and writes adapter files: format_version, adapter_version,
    model_version and `parameters` (name -> OrtValue)."""

    __slots__ = ("adapter_version", "model_version", "_format_version", "_parameters")

    def __init__(self):
        self.adapter_version = 0
        self.model_version = 0
        self._format_version = 1
        self._parameters = {}

    @property
    def format_version(self):
        return self._format_version

    @property
    def parameters(self):
        return dict(self._parameters)

    @parameters.setter
    def parameters(self, params):
        if not isinstance(params, dict):
            raise TypeError("parameters must be a dict of name -> OrtValue")
        for k, v in params.items():
            if not isinstance(k, str) or not isinstance(v, OrtValue):
                raise TypeError("parameters must map str to OrtValue, got %r -> %s" % (k, type(v).__name__))
        self._parameters = dict(params)

    @staticmethod
    def read_adapter(file_path):
        """The adapter file at `file_path` (its tensors are the library's)."""
        path = _path(file_path, "AdapterFormat.read_adapter")
        handle = new_handle("OnyxLoraAdapter", lambda out: api.LoraAdapterCreate(path, out), api.LoraAdapterRelease)
        versions = [ffi.new("int*") for _ in range(3)]
        check(api.LoraAdapterGetVersions(handle, *versions))
        a = AdapterFormat()
        a._format_version, a.adapter_version, a.model_version = (int(v[0]) for v in versions)
        n = ffi.new("size_t*")
        check(api.LoraAdapterGetParameterCount(handle, n))
        name, value = ffi.new("const char**"), ffi.new("OnyxValue**")
        for i in range(n[0]):
            check(api.LoraAdapterGetParameter(handle, i, name, value))
            a._parameters[to_str(name[0])] = OrtValue(ffi.gc(value[0], api.ValueRelease))
        return a

    def export_adapter(self, file_path):
        """Writes the parameters and versions to `file_path`."""
        path = _path(file_path, "AdapterFormat.export_adapter")
        names = [ffi.new("char[]", k.encode("utf-8")) for k in self._parameters]
        name_arr = ffi.new("const char*[]", max(1, len(names)))
        value_arr = ffi.new("OnyxValue*[]", max(1, len(names)))
        for i, (k, v) in enumerate(self._parameters.items()):
            name_arr[i] = names[i]
            value_arr[i] = v._value
        handle = new_handle(
            "OnyxLoraAdapter",
            lambda out: api.LoraAdapterCreateFromValues(name_arr, ffi.cast("const OnyxValue* const*", value_arr),
                                                        len(names), int(self.adapter_version),
                                                        int(self.model_version), out),
            api.LoraAdapterRelease)
        check(api.LoraAdapterSave(handle, path))

    # onnxruntime.AdapterFormat's accessors (its Python wrapper class).
    def get_format_version(self):
        return self.format_version

    def set_adapter_version(self, adapter_version):
        self.adapter_version = int(adapter_version)

    def get_adapter_version(self):
        return self.adapter_version

    def set_model_version(self, model_version):
        self.model_version = model_version

    def get_model_version(self):
        return self.model_version

    def set_parameters(self, params):
        self.parameters = params

    def get_parameters(self):
        return self.parameters

"""OrtDevice: a device as onnxruntime's Python API names one (type, memory
type, PCI vendor id, index).

`_COrtDevice` is the class onnxruntime exposes as
``onnxruntime.capi._pybind_state.OrtDevice`` (device-type codes as static
methods); `OrtDevice` is the public wrapper of
``onnxruntime.OrtDevice`` with its ``make`` factory. Only CPU memory exists in
this build, but describing other devices is allowed, as in onnxruntime.
"""

import enum


class OrtDeviceVendorId(enum.IntEnum):
    """PCI vendor ids (onnxruntime's values)."""

    NONE = 0x0000
    AMD = 0x1002
    NVIDIA = 0x10DE
    ARM = 0x13B5
    MICROSOFT = 0x1414
    HUAWEI = 0x19E5
    QUALCOMM = 0x5143
    INTEL = 0x8086


def _int(value, what):
    if isinstance(value, bool) or not hasattr(value, "__index__"):
        raise TypeError("OrtDevice: %s must be an int, got %r" % (what, value))
    return int(value.__index__())


class _COrtDevice:
    """OrtDevice(device_type, mem_type, vendor_id, device_id) or
    OrtDevice(device_type, mem_type, device_id) (vendor id 0)."""

    __slots__ = ("_type", "_mem", "_vendor", "_id")

    def __init__(self, device_type, mem_type, *rest):
        if len(rest) == 1:
            vendor_id, device_id = 0, rest[0]
        elif len(rest) == 2:
            vendor_id, device_id = rest
        else:
            raise TypeError("OrtDevice() takes (device_type, mem_type, device_id) or "
                            "(device_type, mem_type, vendor_id, device_id)")
        self._type = _int(device_type, "device_type")
        self._mem = _int(mem_type, "mem_type")
        self._vendor = _int(vendor_id, "vendor_id")
        self._id = _int(device_id, "device_id")

    def device_type(self):
        return self._type

    def mem_type(self):
        return self._mem

    def vendor_id(self):
        return self._vendor

    def device_id(self):
        return self._id

    # Device-type codes (onnxruntime's OrtDevice::CPU, GPU, FPGA, NPU; cuda
    # and webgpu are GPUs, cann an NPU, dml its own code).
    @staticmethod
    def cpu():
        return 0

    @staticmethod
    def gpu():
        return 1

    @staticmethod
    def fpga():
        return 2

    @staticmethod
    def npu():
        return 3

    @staticmethod
    def cuda():
        return 1

    @staticmethod
    def cann():
        return 3

    @staticmethod
    def dml():
        return 4

    @staticmethod
    def webgpu():
        return 1

    @staticmethod
    def default_memory():
        return 0

    def __eq__(self, other):
        return isinstance(other, _COrtDevice) and (self._type, self._mem, self._vendor, self._id) == (
            other._type, other._mem, other._vendor, other._id)

    def __hash__(self):
        return hash((self._type, self._mem, self._vendor, self._id))

    def __repr__(self):
        return "OrtDevice(device_type=%d, mem_type=%d, vendor_id=%d, device_id=%d)" % (
            self._type, self._mem, self._vendor, self._id)


_TYPE_CODES = {"cuda": _COrtDevice.cuda, "cann": _COrtDevice.cann, "cpu": _COrtDevice.cpu, "dml": _COrtDevice.dml,
               "webgpu": _COrtDevice.webgpu, "gpu": _COrtDevice.gpu, "npu": _COrtDevice.npu}
_ALIAS_VENDORS = {"cuda": OrtDeviceVendorId.NVIDIA, "dml": OrtDeviceVendorId.MICROSOFT,
                  "cann": OrtDeviceVendorId.HUAWEI, "webgpu": OrtDeviceVendorId.NONE}


def get_ort_device_type(device_type):
    """The device-type code for a name ('cpu', 'cuda', 'gpu', ...); onnxruntime's
    error (a plain Exception) for any other name, case included."""
    code = _TYPE_CODES.get(device_type) if isinstance(device_type, str) else None
    if code is None:
        raise Exception("Unsupported device type: " + str(device_type))  # noqa: TRY002 - onnxruntime's class
    return code()


class OrtDevice:
    """A device description (onnxruntime.OrtDevice); build one with make()."""

    __slots__ = ("_ort_device",)

    def __init__(self, c_ort_device):
        if not isinstance(c_ort_device, _COrtDevice):
            raise ValueError("`Provided object` needs to be of type "
                             "`onnxruntime.capi.onnxruntime_pybind11_state.OrtDevice`")
        self._ort_device = c_ort_device

    def _get_c_device(self):
        return self._ort_device

    @staticmethod
    def make(ort_device_name, device_id, vendor_id=-1):
        """OrtDevice for 'cpu', 'cuda', 'gpu', 'npu', 'dml', 'cann' or 'webgpu'
        and an index; `vendor_id` (an int or OrtDeviceVendorId) for a generic
        'gpu' or 'npu'. cuda, dml, cann and webgpu imply their vendor."""
        code = get_ort_device_type(ort_device_name)
        mem = _COrtDevice.default_memory()
        if vendor_id < 0:
            alias = _ALIAS_VENDORS.get(ort_device_name)
            if alias is not None:
                return OrtDevice(_COrtDevice(code, mem, int(alias), device_id))
            return OrtDevice(_COrtDevice(code, mem, device_id))
        return OrtDevice(_COrtDevice(code, mem, int(vendor_id), device_id))

    def device_id(self):
        return self._ort_device.device_id()

    def device_type(self):
        return self._ort_device.device_type()

    def device_vendor_id(self):
        return self._ort_device.vendor_id()

    def device_mem_type(self):
        return self._ort_device.mem_type()

    def __eq__(self, other):
        return isinstance(other, OrtDevice) and self._ort_device == other._ort_device

    def __hash__(self):
        return hash(self._ort_device)

    def __repr__(self):
        return repr(self._ort_device)

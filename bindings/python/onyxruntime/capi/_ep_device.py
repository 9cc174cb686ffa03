"""onnxruntime's execution-provider device objects for the one device this
build has: the CPU. get_ep_devices() lists the CPU provider on the host's
processor (vendor read from /proc/cpuinfo); InferenceSession.get_input_epdevices
reports it for every input, since every input is read from CPU memory."""

import enum
import functools

from ._ffi import api, to_str


class OrtHardwareDeviceType(enum.IntEnum):
    CPU = 0
    GPU = 1
    NPU = 2


class OrtExecutionProviderDevicePolicy(enum.IntEnum):
    DEFAULT = 0
    PREFER_CPU = 1
    PREFER_NPU = 2
    PREFER_GPU = 3
    MAX_PERFORMANCE = 4
    MAX_EFFICIENCY = 5
    MIN_OVERALL_POWER = 6


# PCI vendor ids of the CPU vendors /proc/cpuinfo names.
_CPU_VENDORS = {"AuthenticAMD": ("AMD", 0x1022), "GenuineIntel": ("Intel", 0x8086), "ARM": ("ARM", 0x13B5)}


class OrtHardwareDevice:
    """A device of the machine: type, vendor, vendor_id, device_id, metadata."""

    __slots__ = ("type", "vendor", "vendor_id", "device_id", "metadata")

    def __init__(self, type_, vendor, vendor_id, device_id, metadata):
        self.type, self.vendor, self.vendor_id, self.device_id = type_, vendor, vendor_id, device_id
        self.metadata = dict(metadata)

    def __repr__(self):
        return "OrtHardwareDevice(type=%s, vendor=%r)" % (self.type.name, self.vendor)


class OrtEpDevice:
    """An execution provider on a hardware device: ep_name, ep_vendor,
    ep_metadata, ep_options, device."""

    __slots__ = ("ep_name", "ep_vendor", "ep_metadata", "ep_options", "device")

    def __init__(self, ep_name, ep_vendor, ep_metadata, ep_options, device):
        self.ep_name, self.ep_vendor, self.device = ep_name, ep_vendor, device
        self.ep_metadata, self.ep_options = dict(ep_metadata), dict(ep_options)

    def memory_info(self, device_mem_type):
        """The memory info of a non-CPU device's memory of that type; None for
        the CPU, whose memory needs no device-specific description (as onnxruntime)."""
        return None

    def create_sync_stream(self):
        """Refused as onnxruntime refuses it: a CPU has no streams."""
        raise RuntimeError("ep_device does not use DEFAULT memory of a non-CPU device.")

    def __repr__(self):
        return "OrtEpDevice(ep_name=%r, device=%r)" % (self.ep_name, self.device)


def _cpu_vendor():
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key.strip() in ("vendor_id", "CPU implementer"):
                    v = value.strip()
                    return _CPU_VENDORS.get(v, ("ARM", 0x13B5) if v.startswith("0x") else (v, 0))
    except OSError:
        pass
    return ("unknown", 0)


@functools.lru_cache(maxsize=1)
def _cpu_ep_device():
    vendor, vendor_id = _cpu_vendor()
    hw = OrtHardwareDevice(OrtHardwareDeviceType.CPU, vendor, vendor_id, 0, {})
    return OrtEpDevice("CPUExecutionProvider", "Onyx", {"version": to_str(api.GetVersionString())}, {}, hw)


def get_ep_devices():
    """The execution providers and the devices they can use: the CPU provider
    on this machine's processor."""
    return [_cpu_ep_device()]

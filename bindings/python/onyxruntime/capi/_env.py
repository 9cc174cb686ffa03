"""Process-wide functions (seed, logging, telemetry) and shared allocators.

The environment is onnxruntime's: one per process (capi._ffi.default_env),
holding the default logger and the allocators registered for sessions that
set the config entry "session.use_env_allocators" to "1".
"""

import enum

from ._ffi import api, check, default_env, ffi, new_handle, status_to_exception, to_str


def _int_arg(fn, value):
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError("%s(): expected an int, got %r" % (fn, value))
    return value


def set_seed(seed):
    """Seeds the random operators (RandomNormal, RandomUniform, *Like,
    Bernoulli, Multinomial) without a `seed` attribute in sessions created
    afterwards, making their outputs reproducible."""
    check(api.SetGlobalSeed(_int_arg("set_seed", seed)))


def set_default_logger_severity(severity):
    """Default log severity: 0 verbose, 1 info, 2 warning, 3 error, 4 fatal."""
    default_env()  # creating the environment sets the default; do that first
    status = api.SetDefaultLogSeverity(_int_arg("set_default_logger_severity", severity))
    if status != ffi.NULL:
        raise status_to_exception(status, RuntimeError)


def set_default_logger_verbosity(verbosity):
    """Default verbosity of VERBOSE messages (shown at severity 0)."""
    check(api.SetDefaultLogVerbosity(_int_arg("set_default_logger_verbosity", verbosity)))


def enable_telemetry_events():
    """Records that telemetry is allowed. Onyx Runtime never sends any."""
    check(api.SetTelemetryEnabled(1))


def disable_telemetry_events():
    """Records that telemetry is not allowed (Onyx Runtime never sends any)."""
    check(api.SetTelemetryEnabled(0))


def set_global_thread_pool_sizes(intra_op_num_threads, inter_op_num_threads):
    """Creates the process's global thread pool (0 = one thread per core),
    shared by sessions whose SessionOptions set use_per_session_threads to
    False. Once per process: Fail when it exists already."""
    intra = _int_arg("set_global_thread_pool_sizes", intra_op_num_threads)
    inter = _int_arg("set_global_thread_pool_sizes", inter_op_num_threads)
    check(api.EnvCreateGlobalThreadPools(default_env(), intra, inter))


def has_collective_ops():
    """False: this build has no collective (multi-device) operators."""
    return False


class OrtAllocatorType(enum.IntEnum):
    INVALID = -1
    ORT_DEVICE_ALLOCATOR = 0
    ORT_ARENA_ALLOCATOR = 1


class OrtMemType(enum.IntEnum):
    CPU_INPUT = -2
    CPU_OUTPUT = -1
    CPU = -1
    DEFAULT = 0


class OrtMemoryInfoDeviceType(enum.IntEnum):
    """Device kinds of OrtMemoryInfo.create_v2."""

    CPU = 0
    GPU = 1
    FPGA = 2
    NPU = 3


class OrtDeviceMemoryType(enum.IntEnum):
    """Kinds of device memory: the device's own, or memory the host can read."""

    DEFAULT = 0
    HOST_ACCESSIBLE = 5


class ArenaExtendStrategy(enum.IntEnum):
    """How an arena grows (onnxruntime's; the CPU arena here rounds to size classes either way)."""

    kNextPowerOfTwo = 0
    kSameAsRequested = 1


kNextPowerOfTwo = ArenaExtendStrategy.kNextPowerOfTwo
kSameAsRequested = ArenaExtendStrategy.kSameAsRequested


class OrtMemoryInfo:
    """Describes memory: name ('Cpu'), allocator type, device id, memory type."""

    __slots__ = ("_handle", "_owner")

    def __init__(self, name, alloc_type, id, mem_type):  # noqa: A002 - onnxruntime's parameter name
        if not isinstance(name, str):
            raise TypeError("name must be a str, got %r" % (name,))
        self._handle = new_handle(
            "OnyxMemoryInfo",
            lambda out: api.MemoryInfoCreate(name.encode("utf-8"), int(alloc_type), int(id), int(mem_type), out),
            api.MemoryInfoRelease,
        )
        self._owner = None

    @classmethod
    def create_v2(cls, name, device_type, vendor_id, device_id, device_mem_type, alignment, allocator_type):
        """onnxruntime's CreateMemoryInfo_V2: `device_type` an
        OrtMemoryInfoDeviceType, `vendor_id` the PCI vendor id,
        `device_mem_type` an OrtDeviceMemoryType, `alignment` in bytes (0 =
        the allocator's). Host-accessible CPU memory has mem_type CPU_OUTPUT."""
        if not isinstance(name, str):
            raise TypeError("name must be a str, got %r" % (name,))
        args = [_int_arg("create_v2", int(v) if isinstance(v, enum.Enum) else v)
                for v in (device_type, vendor_id, device_id, device_mem_type, alignment, allocator_type)]
        if args[4] < 0:
            raise TypeError("create_v2(): alignment must be >= 0, got %d" % args[4])
        info = cls.__new__(cls)
        info._handle = new_handle(
            "OnyxMemoryInfo",
            lambda out: api.MemoryInfoCreateV2(name.encode("utf-8"), args[0], args[1], args[2], args[3], args[4],
                                               args[5], out),
            api.MemoryInfoRelease)
        info._owner = None
        return info

    @classmethod
    def _borrowed(cls, handle, owner):
        """Wraps a `const OnyxMemoryInfo*` that lives as long as `owner` (kept)."""
        info = cls.__new__(cls)
        info._handle = handle
        info._owner = owner
        return info

    def _get(self, fn, ctype):
        out = ffi.new(ctype)
        check(fn(self._handle, out))
        return out[0]

    @property
    def name(self):
        return to_str(self._get(api.MemoryInfoGetName, "const char**"))

    @property
    def device_id(self):
        return int(self._get(api.MemoryInfoGetDeviceId, "int*"))

    @property
    def mem_type(self):
        return OrtMemType(int(self._get(api.MemoryInfoGetMemType, "OnyxMemType*")))

    @property
    def allocator_type(self):
        return OrtAllocatorType(int(self._get(api.MemoryInfoGetAllocatorType, "OnyxAllocatorType*")))

    @property
    def device_mem_type(self):
        """An OrtDeviceMemoryType: DEFAULT, or HOST_ACCESSIBLE when made so by create_v2."""
        return OrtDeviceMemoryType(int(self._get(api.MemoryInfoGetDeviceMemType, "int*")))

    @property
    def device_vendor_id(self):
        """PCI vendor id of the device (0 for the CPU, 0x10DE for Cuda memory)."""
        return int(self._get(api.MemoryInfoGetVendorId, "int*"))


class OrtArenaCfg:
    """Arena settings: OrtArenaCfg(max_mem, arena_extend_strategy,
    initial_chunk_size_bytes, max_dead_bytes_per_chunk) or OrtArenaCfg(dict)
    with onnxruntime's keys (those four, initial_growth_chunk_size_bytes and
    max_power_of_two_extend_bytes). max_mem (bytes, 0 = no limit) caps what
    the arena holds; the others are checked and kept, since the CPU arena's
    size classes replace onnxruntime's chunk growth."""

    __slots__ = ("max_mem", "arena_extend_strategy", "initial_chunk_size_bytes", "max_dead_bytes_per_chunk",
                 "initial_growth_chunk_size_bytes", "max_power_of_two_extend_bytes")

    def __init__(self, *args):
        names = OrtArenaCfg.__slots__
        values = {"max_mem": 0, "arena_extend_strategy": -1, "initial_chunk_size_bytes": -1,
                  "max_dead_bytes_per_chunk": -1, "initial_growth_chunk_size_bytes": -1,
                  "max_power_of_two_extend_bytes": -1}
        if len(args) == 1 and isinstance(args[0], dict):
            for key, value in args[0].items():
                if key not in values:
                    # onnxruntime's class and text.
                    raise RuntimeError("Invalid OrtArenaCfg option: %s" % key)
                values[key] = value
        elif len(args) == 4:
            values.update(zip(names, args))
        else:
            raise TypeError("OrtArenaCfg(max_mem, arena_extend_strategy, initial_chunk_size_bytes, "
                            "max_dead_bytes_per_chunk) or OrtArenaCfg(dict)")
        for key in names:
            setattr(self, key, _int_arg("OrtArenaCfg", values[key]))
        self._c_handle()  # the library checks every value now, not at registration

    def _c_handle(self):
        names = OrtArenaCfg.__slots__
        keep = [ffi.new("char[]", k.encode()) for k in names]
        keys = ffi.new("const char*[]", keep)
        vals = ffi.new("int64_t[]", [getattr(self, k) for k in names])
        status = ffi.new("OnyxArenaCfg**")
        err = api.ArenaCfgCreateFromKeys(keys, vals, len(names), status)
        if err != ffi.NULL:
            raise status_to_exception(err, RuntimeError)
        return ffi.gc(status[0], api.ArenaCfgRelease)


def create_and_register_allocator(mem_info, arena_cfg):
    """Creates a CPU allocator (an arena when mem_info says ORT_ARENA_ALLOCATOR)
    and registers it with the environment: sessions whose options set
    "session.use_env_allocators" to "1" then share it."""
    if not isinstance(mem_info, OrtMemoryInfo):
        raise TypeError("mem_info must be an OrtMemoryInfo, got %s" % type(mem_info).__name__)
    cfg = arena_cfg._c_handle() if arena_cfg is not None else ffi.NULL
    status = api.EnvCreateAndRegisterAllocator(default_env(), mem_info._handle, cfg)
    if status != ffi.NULL:
        err = status_to_exception(status, RuntimeError)
        err.args = ("Error when creating and registering allocator: " + str(err),)
        raise err


def create_and_register_allocator_v2(provider_type, mem_info, provider_options, arena_cfg):
    """create_and_register_allocator for a provider: only the CPU provider exists here."""
    if provider_type != "CPUExecutionProvider":
        raise RuntimeError("create_and_register_allocator_v2: provider '%s' is not available in this build"
                           % provider_type)
    create_and_register_allocator(mem_info, arena_cfg)

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


class OrtArenaCfg:
    """Arena settings: OrtArenaCfg(max_mem, arena_extend_strategy,
    initial_chunk_size_bytes, max_dead_bytes_per_chunk) or OrtArenaCfg(dict).
    max_mem (bytes, 0 = no limit) caps what the arena holds; the others are
    checked and kept (the arena's size classes make them moot)."""

    __slots__ = ("max_mem", "arena_extend_strategy", "initial_chunk_size_bytes", "max_dead_bytes_per_chunk")

    def __init__(self, *args):
        names = OrtArenaCfg.__slots__
        values = {"max_mem": 0, "arena_extend_strategy": -1, "initial_chunk_size_bytes": -1,
                  "max_dead_bytes_per_chunk": -1}
        if len(args) == 1 and isinstance(args[0], dict):
            for key, value in args[0].items():
                if key not in values:
                    raise ValueError("OrtArenaCfg: unknown key '%s' (known: %s)" % (key, ", ".join(names)))
                values[key] = value
        elif len(args) == 4:
            values = dict(zip(names, args))
        else:
            raise TypeError("OrtArenaCfg(max_mem, arena_extend_strategy, initial_chunk_size_bytes, "
                            "max_dead_bytes_per_chunk) or OrtArenaCfg(dict)")
        for key in names:
            setattr(self, key, _int_arg("OrtArenaCfg", values[key]))

    def _c_handle(self):
        if self.max_mem < 0:
            raise ValueError("OrtArenaCfg.max_mem must be >= 0, got %d" % self.max_mem)
        return new_handle(
            "OnyxArenaCfg",
            lambda out: api.ArenaCfgCreate(self.max_mem, self.arena_extend_strategy, self.initial_chunk_size_bytes,
                                           self.max_dead_bytes_per_chunk, out),
            api.ArenaCfgRelease,
        )


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

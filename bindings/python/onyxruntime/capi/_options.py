"""SessionOptions, RunOptions and their enums (onnxruntime's names and values).

Each options object owns a C handle and forwards every setter to it at once,
so a bad value fails where it is set. The Python side keeps a mirror of each
attribute because the C API has setters but (mostly) no getters.
"""

import enum

from ._ffi import api, check, ffi, new_handle, to_str
from ._ortvalue import OrtValue


class GraphOptimizationLevel(enum.IntEnum):
    """Graph optimization levels (values as onnxruntime's)."""

    ORT_DISABLE_ALL = 0
    ORT_ENABLE_BASIC = 1
    ORT_ENABLE_EXTENDED = 2
    ORT_ENABLE_LAYOUT = 3
    ORT_ENABLE_ALL = 99


class ExecutionMode(enum.IntEnum):
    """Sequential or parallel execution of independent nodes."""

    ORT_SEQUENTIAL = 0
    ORT_PARALLEL = 1


class ExecutionOrder(enum.IntEnum):
    """The order nodes run in: the graph's, shape computations first, or the
    one keeping the least memory live (greedy)."""

    DEFAULT = 0
    PRIORITY_BASED = 1
    MEMORY_EFFICIENT = 2


def _to_enum(enum_cls, value, what):
    if isinstance(value, enum_cls):
        return value
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError("%s must be a %s, got %r" % (what, enum_cls.__name__, value))
    try:
        return enum_cls(value)
    except ValueError:
        raise TypeError("%s: %r is not a valid %s" % (what, value, enum_cls.__name__)) from None


def _to_int(value, what):
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError("%s must be an int, got %r" % (what, value))
    return value


def _to_bool(value, what):
    if isinstance(value, (bool, int)) and value in (0, 1):
        return bool(value)
    raise TypeError("%s must be a bool, got %r" % (what, value))


def _c_backed_option(name, convert, c_setter, doc):
    """A SessionOptions property: `convert(value, name)` checks the value, the
    OnyxApi function `c_setter` stores it on the C handle (rejecting what the
    engine cannot do), and the Python side keeps it for reading back."""
    attr = "_" + name

    def get(self):
        return getattr(self, attr)

    def set(self, value):
        value = convert(value, name)
        check(getattr(api, c_setter)(self._handle, int(value)))
        setattr(self, attr, value)

    return property(get, set, doc=doc)


class _LogLevels:
    """logid, log_severity_level and log_verbosity_level, shared by
    SessionOptions and RunOptions; each names the C setters for its own handle."""

    __slots__ = ()
    _set_log_severity = None  # the OnyxApi setters for this class's handle
    _set_log_verbosity = None
    _set_logid = None

    @property
    def logid(self):
        """Identifier shown in the log lines of the session (or run) using these options."""
        return self._logid

    @logid.setter
    def logid(self, value):
        if not isinstance(value, str):
            raise TypeError("logid must be a str, got %r" % (value,))
        check(getattr(api, self._set_logid)(self._handle, value.encode("utf-8")))
        self._logid = value

    @property
    def log_severity_level(self):
        """0 verbose .. 4 fatal; -1 (default) keeps the enclosing level
        (the environment's for a session, the session's for a run)."""
        return self._log_severity_level

    @log_severity_level.setter
    def log_severity_level(self, value):
        value = _to_int(value, "log_severity_level")
        check(getattr(api, self._set_log_severity)(self._handle, value))
        self._log_severity_level = value

    @property
    def log_verbosity_level(self):
        """How many VERBOSE messages show (>= 0; they need severity 0)."""
        return self._log_verbosity_level

    @log_verbosity_level.setter
    def log_verbosity_level(self, value):
        value = _to_int(value, "log_verbosity_level")
        check(getattr(api, self._set_log_verbosity)(self._handle, value))
        self._log_verbosity_level = value


class SessionOptions(_LogLevels):
    """Configuration for an InferenceSession, with onnxruntime's attributes.

    Each setting reaches the engine when the session is created; one it cannot
    honour is refused with an error there or when set, never ignored. Unknown
    attributes raise AttributeError.
    """

    __slots__ = (
        "_handle",
        "_config",
        "_initializers",
        "_external_files",
        "_providers",
        "_intra_op_num_threads",
        "_inter_op_num_threads",
        "_graph_optimization_level",
        "_execution_mode",
        "_execution_order",
        "_log_severity_level",
        "_log_verbosity_level",
        "_logid",
        "_optimized_model_filepath",
        "_enable_mem_pattern",
        "_enable_mem_reuse",
        "_enable_cpu_mem_arena",
        "_use_deterministic_compute",
        "_use_per_session_threads",
        "enable_profiling",
        "profile_file_prefix",
    )
    _set_log_severity = "SessionOptionsSetLogSeverity"
    _set_log_verbosity = "SessionOptionsSetLogVerbosity"
    _set_logid = "SessionOptionsSetLogId"

    def __init__(self):
        self._handle = new_handle("OnyxSessionOptions", api.SessionOptionsCreate, api.SessionOptionsRelease)
        self._config = {}
        self._initializers = {}  # name -> OrtValue, kept alive for the sessions using it
        self._external_files = {}  # file name -> buffer lent to the library, kept alive likewise
        self._providers = []  # names given to add_provider, in order
        self._intra_op_num_threads = 0
        self._inter_op_num_threads = 0
        self._graph_optimization_level = GraphOptimizationLevel.ORT_ENABLE_ALL
        self._execution_mode = ExecutionMode.ORT_SEQUENTIAL
        self._execution_order = ExecutionOrder.DEFAULT
        self._log_severity_level = -1
        self._log_verbosity_level = 0
        self._logid = ""
        self._optimized_model_filepath = ""
        self._enable_mem_pattern = True
        self._enable_mem_reuse = True
        self._enable_cpu_mem_arena = True
        self._use_deterministic_compute = False
        self._use_per_session_threads = True
        # Profiling settings reach the C options when a session is created.
        self.enable_profiling = False
        self.profile_file_prefix = "onnxruntime_profile_"

    intra_op_num_threads = _c_backed_option(
        "intra_op_num_threads", _to_int, "SessionOptionsSetIntraOpThreads",
        "Threads used inside one operator (0 = one per core).")
    inter_op_num_threads = _c_backed_option(
        "inter_op_num_threads", _to_int, "SessionOptionsSetInterOpThreads",
        "Threads across operators in parallel mode (0 = default).")
    graph_optimization_level = _c_backed_option(
        "graph_optimization_level", lambda v, what: _to_enum(GraphOptimizationLevel, v, what),
        "SessionOptionsSetGraphOptimizationLevel", "A GraphOptimizationLevel (default ORT_ENABLE_ALL).")
    execution_mode = _c_backed_option(
        "execution_mode", lambda v, what: _to_enum(ExecutionMode, v, what),
        "SessionOptionsSetExecutionMode", "An ExecutionMode (default ORT_SEQUENTIAL).")
    execution_order = _c_backed_option(
        "execution_order", lambda v, what: _to_enum(ExecutionOrder, v, what),
        "SessionOptionsSetExecutionOrder", "An ExecutionOrder (default DEFAULT: the graph's order).")
    enable_mem_pattern = _c_backed_option(
        "enable_mem_pattern", _to_bool, "SessionOptionsSetMemPattern",
        "Plan the intermediates of repeated runs with the same input shapes into one block (default True).")
    enable_mem_reuse = _c_backed_option(
        "enable_mem_reuse", _to_bool, "SessionOptionsSetMemReuse",
        "Free each intermediate after its last reader (default True); False keeps all to the run's end.")
    enable_cpu_mem_arena = _c_backed_option(
        "enable_cpu_mem_arena", _to_bool, "SessionOptionsSetCpuMemArena",
        "Cache freed CPU buffers for reuse (default True); False returns each to the system.")
    use_deterministic_compute = _c_backed_option(
        "use_deterministic_compute", _to_bool, "SessionOptionsSetDeterministicCompute",
        "Deterministic kernels only; every CPU kernel of this build already is, for a given thread count.")

    use_per_session_threads = _c_backed_option(
        "use_per_session_threads", _to_bool, "SessionOptionsSetUsePerSessionThreads",
        "True (default): the session has its own thread pool. False: it runs on the global pool made by "
        "set_global_thread_pool_sizes (session creation fails without one), ignoring its thread counts.")

    @property
    def optimized_model_filepath(self):
        """When set, creating a session writes the optimized graph there as an ONNX model."""
        return self._optimized_model_filepath

    @optimized_model_filepath.setter
    def optimized_model_filepath(self, value):
        if not isinstance(value, str):
            raise TypeError("optimized_model_filepath must be a str, got %r" % (value,))
        check(api.SessionOptionsSetOptimizedModelFilePath(self._handle, value.encode("utf-8")))
        self._optimized_model_filepath = value

    def add_session_config_entry(self, key, value):
        """Sets a string-keyed option (e.g. 'session.intra_op.allow_spinning')."""
        check(api.SessionOptionsAddConfigEntry(self._handle, key.encode("utf-8"), value.encode("utf-8")))
        self._config[key] = value

    def get_session_config_entry(self, key):
        """The value set for `key`; RuntimeError when it is not set (as onnxruntime)."""
        out = ffi.new("const char**")
        check(api.SessionOptionsGetConfigEntry(self._handle, key.encode("utf-8"), out))
        if out[0] == ffi.NULL:
            raise RuntimeError("SessionOptions does not have configuration with key: " + key)
        return to_str(out[0])

    def add_free_dimension_override_by_denotation(self, dim_denotation, dim_value):
        """Fixes every free input dimension denoted `dim_denotation` (e.g.
        'DATA_BATCH') to `dim_value` in sessions made with these options."""
        check(api.SessionOptionsAddFreeDimensionOverride(self._handle, _to_str(dim_denotation, "dim_denotation"),
                                                         _to_int(dim_value, "dim_value")))

    def add_free_dimension_override_by_name(self, dim_name, dim_value):
        """Fixes every free input dimension named `dim_name` (its dim_param) to `dim_value`."""
        check(api.SessionOptionsAddFreeDimensionOverrideByName(self._handle, _to_str(dim_name, "dim_name"),
                                                               _to_int(dim_value, "dim_value")))

    def add_initializer(self, name, ortvalue):
        """Uses `ortvalue` for the model's initializer `name` (same type and
        shape) instead of the model's data; the OrtValue is kept alive by these
        options and shared, not copied."""
        if not isinstance(ortvalue, OrtValue):
            raise RuntimeError("The provided Python object must be an OrtValue")
        check(api.SessionOptionsAddInitializer(self._handle, _to_str(name, "name"), ortvalue._value))
        self._initializers[name] = ortvalue

    def add_provider(self, provider_name, provider_options):
        """Appends an execution provider (with its options) to these
        options; a session made from them without `providers` uses it.
        RuntimeError 'Unknown Provider Type: NAME' for a name the library
        does not know."""
        name = _to_str(provider_name, "provider_name")
        if not isinstance(provider_options, dict):
            raise TypeError("provider_options must be a dict of str to str, got %r" % (provider_options,))
        count, out = ffi.new("size_t*"), ffi.new("const char**")
        check(api.GetAllProviderCount(count))
        known = []
        for i in range(count[0]):
            check(api.GetAllProviderName(i, out))
            known.append(to_str(out[0]))
        if provider_name not in known:
            raise RuntimeError("Unknown Provider Type: " + provider_name)
        keys = [ffi.new("char[]", str(k).encode()) for k in provider_options]
        vals = [ffi.new("char[]", str(v).encode()) for v in provider_options.values()]
        check(api.SessionOptionsAppendProvider(self._handle, name, ffi.new("const char*[]", keys or [ffi.NULL]),
                                               ffi.new("const char*[]", vals or [ffi.NULL]), len(keys)))
        self._providers.append(provider_name)

    def add_provider_for_devices(self, ep_devices, provider_options):
        """Adds the provider of `ep_devices` (OrtEpDevice from
        get_ep_devices(), all of one provider) with its options."""
        from ._ep_device import OrtEpDevice
        devices = list(ep_devices)
        if not devices or not all(isinstance(d, OrtEpDevice) for d in devices):
            raise RuntimeError("add_provider_for_devices: expects a non-empty list of OrtEpDevice")
        names = {d.ep_name for d in devices}
        if len(names) != 1:
            raise RuntimeError("add_provider_for_devices: all OrtEpDevice instances must refer to the same execution "
                               "provider, got %s" % sorted(names))
        self.add_provider(names.pop(), provider_options)

    def set_provider_selection_policy(self, policy):
        """Chooses providers by policy (OrtExecutionProviderDevicePolicy).
        Every policy selects among get_ep_devices(), which here holds the
        CPU provider alone, so each one adds the CPU provider."""
        from ._ep_device import OrtExecutionProviderDevicePolicy, get_ep_devices
        _to_enum(OrtExecutionProviderDevicePolicy, policy, "policy")
        self.add_provider_for_devices(get_ep_devices(), {})

    def set_load_cancellation_flag(self, value):
        """True cancels session creations with these options, one in progress
        on another thread included (ModelLoadCanceled), and later ones until
        set back to False."""
        check(api.SessionOptionsSetLoadCancellation(self._handle, 1 if _to_bool(value, "value") else 0))

    def has_providers(self):
        """True once add_provider has been called."""
        return bool(self._providers)

    def add_external_initializers(self, names, ortvalues):
        """Supplies the data of the model's initializers `names` (kept in
        external files) as `ortvalues`, shared, not copied: each must match
        the initializer's type and shape. Unlike onnxruntime, an initializer
        stored inside the model may be replaced too (as add_initializer)."""
        names, ortvalues = list(names), list(ortvalues)
        if len(names) != len(ortvalues):
            raise RuntimeError("Expecting names and ort_values lists to have equal length")
        for name, value in zip(names, ortvalues):
            self.add_initializer(name, value)

    def add_external_initializers_from_files_in_memory(self, names, buffers, lengths):
        """Gives the contents of the external data files a model names
        (`names`, as in its tensors' external_data locations) from memory:
        `buffers` are bytes-like objects (bytes, bytearray, memoryview, numpy
        uint8 arrays) of `lengths` bytes. They are shared, not copied, and
        kept alive by these options; sessions read them instead of the file
        system."""
        names, buffers, lengths = list(names), list(buffers), list(lengths)
        if not (len(names) == len(buffers) == len(lengths)):
            raise RuntimeError("Expecting names, buffers and lengths lists to have equal length")
        for name, buf, length in zip(names, buffers, lengths):
            data = ffi.from_buffer(buf)
            length = _to_int(length, "lengths")
            if length < 0 or length > len(data):
                raise RuntimeError("add_external_initializers_from_files_in_memory: length %d of '%s' does not fit "
                                   "its %d-byte buffer" % (length, name, len(data)))
            check(api.SessionOptionsAddExternalFileInMemory(self._handle, _to_str(name, "names"), data, length))
            self._external_files[name] = (buf, data)

    def _clone_handle(self):
        handle = new_handle(
            "OnyxSessionOptions", lambda out: api.SessionOptionsClone(self._handle, out), api.SessionOptionsRelease
        )
        # Profiling settings live on the Python object (set as attributes), and
        # reach the C options only for the session being created.
        if self.enable_profiling:
            check(api.SessionOptionsEnableProfiling(handle, self.profile_file_prefix.encode("utf-8")))
        return handle

    def _copy(self):
        other = SessionOptions.__new__(SessionOptions)
        other._handle = self._clone_handle()
        for name in SessionOptions.__slots__:
            if name != "_handle":
                value = getattr(self, name)
                setattr(other, name, dict(value) if isinstance(value, dict) else
                        list(value) if isinstance(value, list) else value)
        return other


def _to_str(value, what):
    if not isinstance(value, str):
        raise TypeError("%s must be a str, got %r" % (what, value))
    return value.encode("utf-8")


class RunOptions(_LogLevels):
    """Per-run settings: logid (the run's log tag), log_severity_level,
    log_verbosity_level, terminate (may be set from another thread to stop
    runs in progress), only_execute_path_to_fetches."""

    __slots__ = ("_handle", "_logid", "_log_severity_level", "_log_verbosity_level",
                 "only_execute_path_to_fetches")
    _set_log_severity = "RunOptionsSetLogSeverity"
    _set_log_verbosity = "RunOptionsSetLogVerbosity"
    _set_logid = "RunOptionsSetTag"

    def __init__(self):
        self._handle = new_handle("OnyxRunOptions", api.RunOptionsCreate, api.RunOptionsRelease)
        self._logid = ""
        self._log_severity_level = -1
        self._log_verbosity_level = 0
        # Only a scheduling hint in onnxruntime; results do not depend on it.
        self.only_execute_path_to_fetches = False

    @property
    def terminate(self):
        """When True, runs using these options stop before their next node."""
        out = ffi.new("int*")
        check(api.RunOptionsGetTerminate(self._handle, out))
        return bool(out[0])

    @terminate.setter
    def terminate(self, value):
        check(api.RunOptionsSetTerminate(self._handle, 1 if value else 0))

    def add_run_config_entry(self, key, value):
        """Sets a string-keyed run setting, stored in the engine's run options.
        "memory.enable_memory_arena_shrinkage" = "cpu:0" returns the CPU
        arena's idle memory to the system after each run; other keys are kept
        and read back, as onnxruntime does. RuntimeError for an empty key or
        one longer than 1024 bytes."""
        if not isinstance(key, str) or not isinstance(value, str):
            raise TypeError("add_run_config_entry(key, value) takes two str, got %r, %r" % (key, value))
        status = api.RunOptionsAddConfigEntry(self._handle, key.encode("utf-8"), value.encode("utf-8"))
        if status != ffi.NULL:
            # onnxruntime raises a plain RuntimeError with the bare message.
            message = to_str(api.StatusGetMessage(status)) or ""
            api.StatusRelease(status)
            raise RuntimeError(message)

    def add_active_adapter(self, adapter):
        """Activates a LoraAdapter for runs with these options: its
        parameters are fed to the model's inputs (or overridable
        initializers) of the same names for those runs only."""
        from ._lora import LoraAdapter
        if not isinstance(adapter, LoraAdapter):
            raise TypeError("add_active_adapter expects a LoraAdapter, got %s" % type(adapter).__name__)
        check(api.RunOptionsAddActiveLoraAdapter(self._handle, adapter._c_handle()))

    def get_run_config_entry(self, key):
        """The value set for `key`; RuntimeError when it is not set (as onnxruntime)."""
        if not isinstance(key, str):
            raise TypeError("get_run_config_entry(key) takes a str, got %r" % (key,))
        out = ffi.new("const char**")
        check(api.RunOptionsGetConfigEntry(self._handle, key.encode("utf-8"), out))
        if out[0] == ffi.NULL:
            raise RuntimeError("RunOptions does not have configuration with key: " + key)
        return to_str(out[0])

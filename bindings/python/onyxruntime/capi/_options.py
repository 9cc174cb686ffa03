"""SessionOptions, RunOptions and their enums (onnxruntime's names and values).

Each options object owns a C handle and forwards every setter to it at once,
so a bad value fails where it is set. The Python side keeps a mirror of each
attribute because the C API has setters but (mostly) no getters.
"""

import enum

from ._ffi import api, check, ffi, new_handle, to_str
from .onnxruntime_pybind11_state import not_implemented


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
    """log_severity_level / log_verbosity_level, shared by SessionOptions and
    RunOptions; each names the C setter for its own handle."""

    __slots__ = ()
    _set_log_severity = None  # the OnyxApi setter for this class's handle

    @property
    def log_severity_level(self):
        """0 verbose .. 4 fatal; -1 (default) keeps the enclosing level
        (the environment's for a session, the session's for a run)."""
        return self._log_severity_level

    @log_severity_level.setter
    def log_severity_level(self, value):
        value = _to_int(value, "log_severity_level")
        if value != -1:
            check(getattr(api, self._set_log_severity)(self._handle, value))
        self._log_severity_level = value

    @property
    def log_verbosity_level(self):
        """Verbosity of VERBOSE logs (kept for compatibility)."""
        return self._log_verbosity_level

    @log_verbosity_level.setter
    def log_verbosity_level(self, value):
        self._log_verbosity_level = _to_int(value, "log_verbosity_level")


class SessionOptions(_LogLevels):
    """Configuration for an InferenceSession.

    Attributes: intra_op_num_threads, inter_op_num_threads,
    graph_optimization_level, execution_mode, log_severity_level,
    log_verbosity_level, logid, enable_profiling, optimized_model_filepath,
    profile_file_prefix. Unknown attributes raise AttributeError rather than
    being silently ignored.
    """

    __slots__ = (
        "_handle",
        "_config",
        "_intra_op_num_threads",
        "_inter_op_num_threads",
        "_graph_optimization_level",
        "_execution_mode",
        "_log_severity_level",
        "_log_verbosity_level",
        "_logid",
        "enable_profiling",
        "optimized_model_filepath",
        "profile_file_prefix",
    )
    _set_log_severity = "SessionOptionsSetLogSeverity"

    def __init__(self):
        self._handle = new_handle("OnyxSessionOptions", api.SessionOptionsCreate, api.SessionOptionsRelease)
        self._config = {}
        self._intra_op_num_threads = 0
        self._inter_op_num_threads = 0
        self._graph_optimization_level = GraphOptimizationLevel.ORT_ENABLE_ALL
        self._execution_mode = ExecutionMode.ORT_SEQUENTIAL
        self._log_severity_level = -1
        self._log_verbosity_level = 0
        self._logid = ""
        # Profiling is a later feature: a session refuses to start with these
        # set rather than quietly producing no profile / no saved model.
        self.enable_profiling = False
        self.optimized_model_filepath = ""
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

    @property
    def logid(self):
        """Identifier shown in this session's log lines."""
        return self._logid

    @logid.setter
    def logid(self, value):
        if not isinstance(value, str):
            raise TypeError("logid must be a str, got %r" % (value,))
        check(api.SessionOptionsSetLogId(self._handle, value.encode("utf-8")))
        self._logid = value

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

    def _check_supported(self):
        if self.optimized_model_filepath:
            raise not_implemented("SessionOptions.optimized_model_filepath: saving the optimized model "
                                  "is not implemented yet")

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
                setattr(other, name, dict(self._config) if name == "_config" else getattr(self, name))
        return other


class RunOptions(_LogLevels):
    """Per-run settings: logid (the run's log tag), log_severity_level,
    log_verbosity_level, terminate (may be set from another thread to stop
    runs in progress), only_execute_path_to_fetches."""

    __slots__ = ("_handle", "_logid", "_log_severity_level", "_log_verbosity_level",
                 "only_execute_path_to_fetches")
    _set_log_severity = "RunOptionsSetLogSeverity"

    def __init__(self):
        self._handle = new_handle("OnyxRunOptions", api.RunOptionsCreate, api.RunOptionsRelease)
        self._logid = ""
        self._log_severity_level = -1
        self._log_verbosity_level = 0
        # Only a scheduling hint in onnxruntime; results do not depend on it.
        self.only_execute_path_to_fetches = False

    @property
    def logid(self):
        """Tag shown in the log for runs using these options."""
        return self._logid

    @logid.setter
    def logid(self, value):
        if not isinstance(value, str):
            raise TypeError("logid must be a str, got %r" % (value,))
        check(api.RunOptionsSetTag(self._handle, value.encode("utf-8")))
        self._logid = value

    @property
    def terminate(self):
        """When True, runs using these options stop before their next node."""
        out = ffi.new("int*")
        check(api.RunOptionsGetTerminate(self._handle, out))
        return bool(out[0])

    @terminate.setter
    def terminate(self, value):
        check(api.RunOptionsSetTerminate(self._handle, 1 if value else 0))

"""InferenceSession, NodeArg and ModelMetadata over the Onyx C API."""

import atexit
import collections.abc
import os
import threading
import time
import warnings

from . import _providers, _values
from ._fastrun import FastRunner
from ._device import OrtDevice, OrtDeviceVendorId, get_ort_device_type  # noqa: F401 - onnxruntime's names here
from ._env import OrtMemoryInfo
from ._errors import exception_for_code
from ._ffi import api, check, cstring_array, default_env, ffi, status_to_exception, to_str
from ._options import RunOptions, SessionOptions
from ._iobinding import IOBinding
from ._ortvalue import OrtValue, OrtValueVector
from ._sparse import SparseTensor  # noqa: F401 - onnxruntime's name here
from ._lora import AdapterFormat  # noqa: F401 - onnxruntime's name here
from ._ep_device import get_ep_devices


def _provider_list(count_fn, name_fn):
    n = ffi.new("size_t*")
    check(count_fn(n))
    out = ffi.new("const char**")
    names = []
    for i in range(n[0]):
        check(name_fn(i, out))
        names.append(to_str(out[0]))
    return names


def get_available_providers():
    """Providers this build can use on this machine, in default priority order."""
    return _provider_list(api.GetAvailableProviderCount, api.GetAvailableProviderName)


def get_all_providers():
    """Every provider name the library knows, available or not."""
    return _provider_list(api.GetAllProviderCount, api.GetAllProviderName)


def get_supported_operators(provider="CPUExecutionProvider"):
    """(domain, op_type, since_version, end_version) for each kernel of
    `provider`, read from its registry through the C API (domain "" is
    ai.onnx). Operators ONNX defines as functions run as their bodies even
    when they are not listed. An onyxruntime extension."""
    count = ffi.new("size_t*")
    check(api.ProviderGetSupportedOperatorCount(provider.encode(), count))
    domain, op = ffi.new("const char**"), ffi.new("const char**")
    since, end = ffi.new("int*"), ffi.new("int*")
    result = []
    for i in range(count[0]):
        check(api.ProviderGetSupportedOperator(provider.encode(), i, domain, op, since, end))
        result.append((to_str(domain[0]), to_str(op[0]), int(since[0]), int(end[0])))
    return result


def get_device():
    """'GPU' when the CUDA provider can run here, else 'CPU' (as onnxruntime)."""
    return "GPU" if "CUDAExecutionProvider" in get_available_providers() else "CPU"


def get_version_string():
    """The library's version, e.g. '0.1.0'."""
    return to_str(api.GetVersionString())


def get_build_info():
    """The library's build configuration in one line, after onnxruntime's
    "Build Info: " prefix (its own reads "ORT Build Info: ")."""
    return "Build Info: " + to_str(api.GetBuildInfoString())


class NodeArg:
    """A graph input or output: `name`, `type` ('tensor(float)') and `shape`
    (ints for known dims, the symbol for named dims, None for unnamed ones;
    [] when the rank is unknown)."""

    __slots__ = ("name", "type", "shape")

    def __init__(self, name, type_str, shape):
        self.name = name
        self.type = type_str
        self.shape = shape

    def __str__(self):
        return "NodeArg(name=%r, type=%r, shape=%r)" % (self.name, self.type, self.shape)

    __repr__ = __str__


class ModelMetadata:
    """producer_name, graph_name, domain, description, graph_description,
    version and custom_metadata_map of a model."""

    __slots__ = ("producer_name", "graph_name", "domain", "description", "graph_description", "version",
                 "custom_metadata_map")

    def __init__(self, handle):
        def text(fn):
            out = ffi.new("const char**")
            check(fn(handle, out))
            return to_str(out[0]) or ""

        self.producer_name = text(api.ModelMetadataGetProducerName)
        self.graph_name = text(api.ModelMetadataGetGraphName)
        self.domain = text(api.ModelMetadataGetDomain)
        self.description = text(api.ModelMetadataGetDescription)
        self.graph_description = text(api.ModelMetadataGetGraphDescription)
        version = ffi.new("int64_t*")
        check(api.ModelMetadataGetVersion(handle, version))
        self.version = int(version[0])
        count = ffi.new("size_t*")
        check(api.ModelMetadataGetCustomCount(handle, count))
        custom = {}
        key = ffi.new("const char**")
        value = ffi.new("const char**")
        for i in range(count[0]):
            check(api.ModelMetadataGetCustomKey(handle, i, key))
            check(api.ModelMetadataGetCustomValue(handle, i, value))
            custom[to_str(key[0])] = to_str(value[0]) or ""
        self.custom_metadata_map = custom


def _node_arg(session, index, name_fn, type_fn):
    name = ffi.new("const char**")
    check(name_fn(session, index, name))
    out = ffi.new("OnyxTypeInfo**")
    check(type_fn(session, index, out))
    info = ffi.gc(out[0], api.TypeInfoRelease)
    type_str = ffi.new("const char**")
    check(api.TypeInfoGetTypeString(info, type_str))
    tensor = ffi.new("const OnyxTensorTypeAndShapeInfo**")
    check(api.TypeInfoGetTensorInfo(info, tensor))
    shape = []
    elem_type = 0
    if tensor[0] != ffi.NULL:
        t = tensor[0]
        elem = ffi.new("OnyxElementType*")
        check(api.TensorInfoGetElementType(t, elem))
        elem_type = int(elem[0])
        has = ffi.new("int*")
        check(api.TensorInfoHasShape(t, has))
        if has[0]:
            rank = ffi.new("size_t*")
            check(api.TensorInfoGetDimCount(t, rank))
            n = rank[0]
            dims = ffi.new("int64_t[]", max(1, n))
            syms = ffi.new("const char*[]", max(1, n))
            check(api.TensorInfoGetDims(t, dims, n))
            check(api.TensorInfoGetSymbolicDims(t, syms, n))
            for i in range(n):
                sym = to_str(syms[i])
                if dims[i] >= 0:
                    shape.append(int(dims[i]))
                else:
                    shape.append(sym if sym else None)
    return NodeArg(to_str(name[0]), to_str(type_str[0]), shape), elem_type


def _node_args(session, count_fn, name_fn, type_fn):
    n = ffi.new("size_t*")
    check(count_fn(session, n))
    return [_node_arg(session, i, name_fn, type_fn) for i in range(n[0])]


def check_and_normalize_provider_args(providers, provider_options, available_provider_names):
    """Validates `providers` and `provider_options` and returns them
    normalized, as onnxruntime's function of the same name (same checks, same
    warnings and error texts).

    :param providers: None, or a sequence of provider names or (name, options
        dict) tuples, highest priority first.
    :param provider_options: None, or a sequence of options dicts, one per
        name in `providers` (then `providers` must hold names only).
    :param available_provider_names: names that may be used; others are
        warned about, not refused.
    :return: (list of names, list of options dicts with str keys and values);
        a name given twice keeps its first options (with a warning).
    """
    return _normalize_providers(providers, provider_options, available_provider_names, strict_str=False)


def _normalize_providers(providers, provider_options, available, strict_str=True):
    """onnxruntime's validation of `providers`/`provider_options`: names or
    (name, dict) tuples; options become str -> str. With `strict_str` a bare
    string is refused (onnxruntime would take each of its characters as a
    provider name)."""
    if providers is None:
        return [], []
    ordered = collections.OrderedDict()

    def add(name, options):
        if name not in available:
            # onnxruntime's text, then why (the library's reason, for CUDA).
            why = _providers.unavailable_reason(name) if name == "CUDAExecutionProvider" else None
            warnings.warn(
                "Specified provider '{}' is not in available provider names.Available providers: '{}'{}".format(
                    name, ", ".join(available), ". " + why if why else ""
                )
            )
        if name in ordered:
            warnings.warn(f"Duplicate provider '{name}' encountered, ignoring.")
            return
        ordered[name] = {str(k): str(v) for k, v in options.items()}

    if not isinstance(providers, collections.abc.Sequence) or (strict_str and isinstance(providers, str)):
        raise ValueError("'providers' should be a sequence.")
    if provider_options is not None:
        if not isinstance(provider_options, collections.abc.Sequence):
            raise ValueError("'provider_options' should be a sequence.")
        if len(providers) != len(provider_options):
            raise ValueError("'providers' and 'provider_options' should be the same length if both are given.")
        if not all(isinstance(p, str) for p in providers):
            raise ValueError("Only string values for 'providers' are supported if 'provider_options' is given.")
        if not all(isinstance(o, dict) for o in provider_options):
            raise ValueError("'provider_options' values must be dicts.")
        for name, options in zip(providers, provider_options):
            add(name, options)
    else:
        for p in providers:
            if isinstance(p, str):
                add(p, {})
            elif isinstance(p, tuple) and len(p) == 2 and isinstance(p[0], str) and isinstance(p[1], dict):
                add(p[0], p[1])
            else:
                raise ValueError("'providers' values must be either strings or (string, dict) tuples.")
    return list(ordered.keys()), list(ordered.values())


class OrtEpAssignedNode:
    """A node and where it runs: name, op_type, domain ('' = ai.onnx)."""

    __slots__ = ("name", "op_type", "domain")

    def __init__(self, name, op_type, domain):
        self.name, self.op_type, self.domain = name, op_type, domain

    def __repr__(self):
        return "OrtEpAssignedNode(name=%r, op_type=%r, domain=%r)" % (self.name, self.op_type, self.domain)


class OrtEpAssignedSubgraph:
    """Nodes one execution provider runs (`ep_name`, get_nodes())."""

    __slots__ = ("ep_name", "_nodes")

    def __init__(self, ep_name, nodes):
        self.ep_name, self._nodes = ep_name, list(nodes)

    def get_nodes(self):
        return list(self._nodes)

    def __repr__(self):
        return "OrtEpAssignedSubgraph(ep_name=%r, nodes=%r)" % (self.ep_name, self._nodes)


class InferenceSession:
    """Loads a model and runs it; same interface as onnxruntime.InferenceSession.

    :param path_or_bytes: model file path (str or os.PathLike) or serialized ModelProto bytes.
    :param sess_options: a SessionOptions (copied; later changes do not affect this session).
    :param providers: provider names or (name, options dict) tuples, highest priority first;
        CPUExecutionProvider is always added last.
    :param provider_options: options dicts matching `providers` (names only then).
    :param kwargs: enable_fallback=0 disables falling back to the CPU provider when a
        requested provider cannot be used.
    """

    def __init__(self, path_or_bytes, sess_options=None, providers=None, provider_options=None, **kwargs):
        self._enable_fallback = int(kwargs.get("enable_fallback", 1)) == 1
        if isinstance(path_or_bytes, (str, os.PathLike)):
            self._model_path = os.fspath(path_or_bytes)
            self._model_bytes = None
        elif isinstance(path_or_bytes, (bytes, bytearray, memoryview)):
            self._model_path = None
            self._model_bytes = bytes(path_or_bytes)
        else:
            raise TypeError(f"Unable to load from type '{type(path_or_bytes)}'")
        if sess_options is not None and not isinstance(sess_options, SessionOptions):
            raise TypeError("sess_options must be an onyxruntime.SessionOptions, got %r" % type(sess_options))
        self._sess_options = (sess_options or SessionOptions())._copy()
        self._fallback_providers = ["CPUExecutionProvider"]
        try:
            self._create_session(providers, provider_options)
        except (ValueError, RuntimeError) as e:
            if not self._enable_fallback:
                raise
            print("*************** EP Error ***************")
            print(f"EP Error {e} when using {providers}")
            print(f"Falling back to {self._fallback_providers} and retrying.")
            print("****************************************")
            self._create_session(self._fallback_providers, None)
            self._enable_fallback = False

    def _create_session(self, providers, provider_options):
        # A CPU-only request need not ask about CUDA (which loads its library
        # and wakes the GPU driver).
        cpu_only = providers is None or all(
            (p[0] if isinstance(p, tuple) and p else p) == "CPUExecutionProvider" for p in providers)
        available = ["CPUExecutionProvider"] if cpu_only else get_available_providers()
        known = set(get_all_providers())
        names, options = _normalize_providers(providers, provider_options, available)
        handle = self._sess_options._clone_handle()
        used_options = {}
        for name in names:
            if name not in known:
                # onnxruntime's class and text for a name it has never heard of.
                raise RuntimeError("Unknown Provider Type: " + name)
        for name, opts in zip(names, options):
            if name in known and name not in available:
                # onnxruntime skips a known provider this build/machine lacks
                # (after the warning above) instead of failing.
                continue
            keys, keep_k = cstring_array(list(opts.keys()))
            values, keep_v = cstring_array(list(opts.values()))
            status = api.SessionOptionsAppendProvider(handle, name.encode("utf-8"), keys, values, len(opts))
            if status != ffi.NULL:
                # onnxruntime raises a plain RuntimeError here; ours is also an
                # InvalidArgument so the C code is not lost.
                raise status_to_exception(status, RuntimeError)
            used_options[name] = opts
        out = ffi.new("OnyxSession**")
        env = default_env()
        if self._model_path is not None:
            check(api.SessionCreate(env, self._model_path.encode("utf-8"), handle, out))
        else:
            data = ffi.from_buffer(self._model_bytes)
            check(api.SessionCreateFromBytes(env, data, len(self._model_bytes), handle, out))
        sess = ffi.gc(out[0], api.SessionRelease)

        inputs = _node_args(sess, api.SessionGetInputCount, api.SessionGetInputName, api.SessionGetInputTypeInfo)
        outputs = _node_args(sess, api.SessionGetOutputCount, api.SessionGetOutputName, api.SessionGetOutputTypeInfo)
        overridable = _node_args(sess, api.SessionGetOverridableInitializerCount,
                                 api.SessionGetOverridableInitializerName,
                                 api.SessionGetOverridableInitializerTypeInfo)
        meta_out = ffi.new("OnyxModelMetadata**")
        check(api.SessionGetModelMetadata(sess, meta_out))
        meta = ModelMetadata(ffi.gc(meta_out[0], api.ModelMetadataRelease))
        session_providers = _provider_list(lambda n: api.SessionGetProviderCount(sess, n),
                                           lambda i, o: api.SessionGetProviderName(sess, i, o))

        in_mem, out_mem = [], []
        for i in range(len(inputs)):
            info = ffi.new("const OnyxMemoryInfo**")
            check(api.SessionGetInputMemoryInfo(sess, i, info))
            in_mem.append(OrtMemoryInfo._borrowed(info[0], sess))
        for i in range(len(outputs)):
            info = ffi.new("const OnyxMemoryInfo**")
            check(api.SessionGetOutputMemoryInfo(sess, i, info))
            out_mem.append(OrtMemoryInfo._borrowed(info[0], sess))

        self._sess = sess
        self._input_meminfos = in_mem
        self._output_meminfos = out_mem
        self._fast = FastRunner(sess, [a.name for a, _ in inputs], [a.name for a, _ in overridable],
                                [a.name for a, _ in outputs])
        self._inputs_meta = [a for a, _ in inputs]
        self._outputs_meta = [a for a, _ in outputs]
        self._overridable_initializers = [a for a, _ in overridable]
        self._feed_types = {a.name: t for a, t in inputs + overridable}
        self._feed_decl = {a.name: a.type for a, _ in inputs + overridable}
        self._model_meta = meta
        self._providers = session_providers
        self._provider_options = {p: dict(used_options.get(p, {})) for p in session_providers}

    def get_session_options(self):
        """A copy of the SessionOptions this session was created with."""
        return self._sess_options._copy()

    def get_inputs(self):
        """Graph inputs (not initializers) as a list of NodeArg."""
        return list(self._inputs_meta)

    def get_outputs(self):
        """Graph outputs as a list of NodeArg."""
        return list(self._outputs_meta)

    def get_overridable_initializers(self):
        """Initializers that a feed may replace, as a list of NodeArg."""
        return list(self._overridable_initializers)

    def get_input_memory_infos(self):
        """Where the session wants each input's memory, as OrtMemoryInfo
        (one per get_inputs() entry)."""
        return list(self._input_meminfos)

    def get_output_memory_infos(self):
        """Where each output's memory is put, as OrtMemoryInfo (one per
        get_outputs() entry)."""
        return list(self._output_meminfos)

    def get_modelmeta(self):
        """The model's ModelMetadata."""
        return self._model_meta

    def get_providers(self):
        """Providers in use, in priority order."""
        return list(self._providers)

    def get_provider_options(self):
        """{provider name: options dict} for the providers in use."""
        return {k: dict(v) for k, v in self._provider_options.items()}

    def set_providers(self, providers=None, provider_options=None):
        """Re-creates the session with other providers (same model and options)."""
        self._create_session(providers, provider_options)

    def disable_fallback(self):
        """Makes a failing provider an error instead of falling back to CPU."""
        self._enable_fallback = False

    def enable_fallback(self):
        """Falls back to the CPU provider when a requested provider fails."""
        self._enable_fallback = True

    def end_profiling(self):
        """Writes the Chrome-trace profile and returns its path ('' when
        profiling was not enabled, as onnxruntime)."""
        out = ffi.new("const char**")
        status = api.SessionEndProfiling(self._sess, out)
        if status != ffi.NULL:
            if not self._sess_options.enable_profiling and api.StatusGetCode(status) == 1:
                # Profiling is off (neither the options nor the model's
                # ort_config turned it on).
                api.StatusRelease(status)
                return ""
            raise status_to_exception(status)
        return to_str(out[0])

    def get_profiling_start_time_ns(self):
        """Wall-clock ns since the epoch when profiling started (0 if disabled)."""
        out = ffi.new("uint64_t*")
        check(api.SessionGetProfilingStartTimeNs(self._sess, out))
        return int(out[0])

    def run(self, output_names, input_feed, run_options=None):
        """Runs the model.

        :param output_names: names of the outputs wanted; None or [] for all, in model order.
        :param input_feed: {input name: numpy array, list or OrtValue}.
        :param run_options: a RunOptions, or None.
        :return: list of numpy arrays, one per output name.
        """
        if run_options is None:
            result = self._fast.run(output_names, input_feed, ffi.NULL)
        elif isinstance(run_options, RunOptions):
            result = self._fast.run(output_names, input_feed, run_options._handle)
        else:
            result = None
        if result is not None:
            return result
        output_names, owned = self._run(output_names, input_feed, run_options)
        return [_values.output_object(name, v) for name, v in zip(output_names, owned)]

    def run_with_ort_values(self, output_names, input_dict_ort_values, run_options=None):
        """Runs the model on OrtValues and returns OrtValues (no conversion to
        numpy on either side).

        :param output_names: names of the outputs wanted; None or [] for all, in model order.
        :param input_dict_ort_values: {input name: OrtValue}.
        :param run_options: a RunOptions, or None.
        :return: list of OrtValue, one per output name.
        """
        for name, value in input_dict_ort_values.items():
            if not isinstance(value, OrtValue):
                # onnxruntime fails here with an AttributeError from deep
                # inside; a TypeError naming the input says what is wrong.
                raise TypeError("run_with_ort_values: input '%s' must be an OrtValue, got %s "
                                "(use run() for numpy arrays)" % (name, type(value).__name__))
        _, owned = self._run(output_names, input_dict_ort_values, run_options)
        return [OrtValue(v) for v in owned]

    def run_async(self, output_names, input_feed, callback, user_data, run_options=None):
        """Starts a run on one of the session's intra-op threads and returns
        None at once; when it ends, ``callback(results, user_data, err)`` is
        called on that thread: `results` a list of numpy arrays (one per
        output name) and `err` '' on success, or [] and the error's message.

        :param output_names: names of the outputs wanted; None or [] for all.
        :param input_feed: {input name: numpy array, list or OrtValue}; the
            arrays are shared with the run until the callback.
        :param callback: callable(results, user_data, err).
        :param user_data: any object, handed to the callback.
        :param run_options: a RunOptions (kept alive until the callback), or None.

        Missing inputs raise ValueError here; errors of the run itself reach
        the callback. A session with one intra-op thread has no worker to run
        on and raises InvalidArgument, as onnxruntime.
        """
        if not callable(callback):
            raise TypeError("run_async: callback must be callable, got %s" % type(callback).__name__)
        if self._sess is None:
            raise exception_for_code(2, "run_async: the session has been released", RuntimeError)
        output_names, in_names, in_values, out_names, keep = self._prepare_run(output_names, input_feed, run_options)
        state = _AsyncRun(self._sess, output_names, callback, user_data, run_options, keep)
        handle = ffi.new_handle(state)
        state.handle = handle
        with _async_lock:
            _async_pending.add(state)
            if not _async_ever:
                _async_ever.append(True)
        ro = run_options._handle if run_options is not None else ffi.NULL
        status = api.SessionRunAsync(self._sess, ro, in_names, ffi.cast("const OnyxValue* const*", in_values),
                                     len(keep.values), out_names, len(output_names), _async_done, handle)
        if status != ffi.NULL:
            with _async_lock:
                _async_pending.discard(state)
            raise status_to_exception(status)

    def run_with_ortvaluevector(self, run_options, feed_names, feeds, fetch_names, fetches, fetch_devices):
        """run_with_ort_values over OrtValueVectors: `feeds` (one per name
        of `feed_names`) in, and `fetches` cleared and filled with one
        OrtValue per name of `fetch_names`. `fetch_devices` must be CPU
        devices (or empty)."""
        if not isinstance(feeds, OrtValueVector) or not isinstance(fetches, OrtValueVector):
            raise TypeError("run_with_ortvaluevector: feeds and fetches must be OrtValueVector")
        feed_names, fetch_names = list(feed_names), list(fetch_names)
        if len(feed_names) != len(feeds):
            raise RuntimeError("run_with_ortvaluevector: %d feed names for %d feeds" % (len(feed_names), len(feeds)))
        for d in fetch_devices or []:
            if d.device_type() != 0:
                raise RuntimeError("run_with_ortvaluevector: only CPU fetch devices exist in this build")
        outputs = self.run_with_ort_values(fetch_names, dict(zip(feed_names, feeds)), run_options)
        fetches._items[:] = outputs

    def create_ortvalue_from_shape_and_type(self, shape, element_type, device_type, device_id=0, vendor_id=-1):
        """A new tensor of `shape` and `element_type` (numpy type or
        onnx.TensorProto int) on `device_type` ('cpu' only in this build)."""
        OrtDevice.make(device_type, device_id, vendor_id)  # onnxruntime's checks of the name
        return OrtValue.ortvalue_from_shape_and_type(shape, element_type, device_type, device_id)

    def get_input_epdevices(self):
        """The OrtEpDevice each input is read on (one per get_inputs() entry):
        the CPU provider's, the only one of this build."""
        return [get_ep_devices()[0] for _ in self._inputs_meta]

    def get_provider_graph_assignment_info(self):
        """Where each node runs, as onnxruntime reports it: one
        OrtEpAssignedSubgraph per node, in execution order (the graph as
        optimized). Needs the session config entry
        'session.record_ep_graph_assignment_info' = '1' (Fail otherwise). Nodes
        the model leaves unnamed carry the engine's generated name
        ('Relu_0'), where onnxruntime reports ''."""
        n = ffi.new("size_t*")
        check(api.SessionGetAssignedNodeCount(self._sess, n))
        ep, name, op, domain = (ffi.new("const char**") for _ in range(4))
        result = []
        for i in range(n[0]):
            check(api.SessionGetAssignedNode(self._sess, i, ep, name, op, domain))
            result.append(OrtEpAssignedSubgraph(to_str(ep[0]),
                                                [OrtEpAssignedNode(to_str(name[0]), to_str(op[0]), to_str(domain[0]))]))
        return result

    def get_tuning_results(self):
        """Kernel tuning results (onnxruntime's TunableOp, a GPU feature): none
        exist for the CPU provider, so []."""
        return []

    def set_tuning_results(self, results, *, error_on_invalid=False):
        """Accepts tuning results; only the empty list applies to the CPU
        provider. Entries for providers this session does not use are
        ignored, or refused with error_on_invalid=True."""
        if not isinstance(results, (list, tuple)):
            raise TypeError("set_tuning_results expects a list, got %s" % type(results).__name__)
        bad = [r for r in results if not isinstance(r, dict) or r.get("ep") not in self._providers]
        if bad and error_on_invalid:
            raise exception_for_code(2, "set_tuning_results: %d entries name no provider of this session (%s)"
                                     % (len(bad), ", ".join(self._providers)), RuntimeError)
        return None

    def release_captured_graph(self, graph_annotation_id=0):
        """Releases a captured device graph (CUDA graphs); the CPU provider
        captures none, so there is nothing to release."""
        if isinstance(graph_annotation_id, bool) or not isinstance(graph_annotation_id, int):
            raise TypeError("graph_annotation_id must be an int, got %r" % (graph_annotation_id,))

    def set_ep_dynamic_options(self, options):
        """Options a provider accepts while the session lives. The CPU
        provider has none: every key is refused by name (onnxruntime accepts
        and ignores them)."""
        if not isinstance(options, dict):
            raise TypeError("set_ep_dynamic_options expects a dict, got %s" % type(options).__name__)
        if options:
            raise exception_for_code(2, "set_ep_dynamic_options: the providers of this session (%s) have no dynamic "
                                     "option %s" % (", ".join(self._providers), ", ".join(map(repr, options))),
                                     RuntimeError)

    def _prepare_run(self, output_names, input_feed, run_options):
        """Checks a run's arguments and builds its C arguments: (output names,
        input names, input values, output names as C strings, what must stay
        alive until the run ends)."""
        feed_names = list(input_feed.keys())
        missing = [i.name for i in self._inputs_meta if i.name not in input_feed]
        if missing:
            raise ValueError(f"Required inputs ({missing}) are missing from input feed ({feed_names}).")
        if isinstance(output_names, (str, bytes)):
            raise TypeError("output_names must be a list of str, not %s" % type(output_names).__name__)
        if not output_names:
            output_names = [o.name for o in self._outputs_meta]
        output_names = list(output_names)
        if run_options is not None and not isinstance(run_options, RunOptions):
            raise TypeError("run_options must be an onyxruntime.RunOptions, got %r" % type(run_options))
        keep = _RunArgs()
        for name in feed_names:
            keep.values.append(_values.input_value(name, input_feed[name], self._feed_types.get(name, 0), keep.objects,
                                                   self._feed_decl.get(name)))
        in_names, keep.in_strings = cstring_array(feed_names)
        in_values = ffi.new("OnyxValue*[]", max(1, len(keep.values)))
        for i, v in enumerate(keep.values):
            in_values[i] = v
        out_names, keep.out_strings = cstring_array(output_names)
        keep.arrays = (in_names, in_values, out_names)
        return output_names, in_names, in_values, out_names, keep

    def _run(self, output_names, input_feed, run_options):
        """Validates the arguments, runs, and returns (output names, owned output values)."""
        output_names, in_names, in_values, out_names, keep = self._prepare_run(output_names, input_feed, run_options)
        n_out = len(output_names)
        outputs = ffi.new("OnyxValue*[]", max(1, n_out))
        ro = run_options._handle if run_options is not None else ffi.NULL
        check(api.SessionRun(self._sess, ro, in_names, ffi.cast("const OnyxValue* const*", in_values),
                             len(keep.values), out_names, n_out, outputs))
        # Own every output before converting any, so a conversion error cannot leak.
        owned = [ffi.gc(outputs[i], api.ValueRelease) for i in range(n_out)]
        del keep  # pinned buffers, arrays and OrtValues that had to outlive the C call
        return output_names, owned

    def io_binding(self):
        """A new IOBinding for this session."""
        return IOBinding(self)

    def run_with_iobinding(self, iobinding, run_options=None):
        """Runs with the inputs and outputs bound in `iobinding` (made by this
        session's io_binding()); results are read from the binding.

        :param iobinding: an IOBinding of this session.
        :param run_options: a RunOptions, or None.
        """
        if not isinstance(iobinding, IOBinding):
            raise TypeError("run_with_iobinding expects an IOBinding, got %s" % type(iobinding).__name__)
        if iobinding._session is not self or iobinding._iobinding_session_handle() != self._sess:
            raise ValueError("IOBinding must be used with the session that created it.")
        if run_options is not None and not isinstance(run_options, RunOptions):
            raise TypeError("run_options must be an onyxruntime.RunOptions, got %r" % type(run_options))
        iobinding._run(run_options)


class _RunArgs:
    """What a run's C arguments point into (values, arrays, strings)."""

    __slots__ = ("values", "objects", "in_strings", "out_strings", "arrays")

    def __init__(self):
        self.values, self.objects = [], []
        self.in_strings = self.out_strings = self.arrays = None


class _AsyncRun:
    """One run_async in flight: everything the C run and the callback need,
    kept alive (in _async_pending) until the callback has returned."""

    __slots__ = ("session", "output_names", "callback", "user_data", "run_options", "args", "handle")

    def __init__(self, session, output_names, callback, user_data, run_options, args):
        self.session, self.output_names, self.callback = session, output_names, callback
        self.user_data, self.run_options, self.args = user_data, run_options, args
        self.handle = None


_async_lock = threading.Lock()
_async_pending = set()
_async_ever = []  # non-empty once run_async has been called


def _drain_async_runs(timeout=30.0):
    """At interpreter exit: wait (GIL released) for run_async callbacks still
    in flight. Once finalization starts, a worker thread that asks for the GIL
    back is stopped for good, so its run would never be marked done and
    SessionRelease would wait for it forever."""
    if not _async_ever:
        return
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with _async_lock:
            if not _async_pending:
                break
        time.sleep(0.005)
    # The last callback may still be returning to the library.
    time.sleep(0.05)


atexit.register(_drain_async_runs)


@ffi.callback("void(void*, OnyxValue**, size_t, OnyxStatus*)")
def _async_done(handle, outputs, count, status):
    # Runs on a session worker thread (cffi takes the GIL). Nothing may escape:
    # a Python error here could only be printed.
    state = ffi.from_handle(handle)
    try:
        results, err = [], ""
        if status != ffi.NULL:
            err = to_str(api.StatusGetMessage(status)) or ""
            api.StatusRelease(status)
        else:
            # Own every output before converting any, so a conversion error cannot leak.
            owned = [ffi.gc(outputs[i], api.ValueRelease) for i in range(count)]
            try:
                results = [_values.output_object(name, v) for name, v in zip(state.output_names, owned)]
            except Exception as e:  # noqa: BLE001 - handed to the callback as its error
                results, err = [], str(e)
        state.args = None  # the run is over: release its inputs before the callback
        state.callback(results, state.user_data, err)
    finally:
        with _async_lock:
            _async_pending.discard(state)

"""IOBinding: inputs and output destinations bound once for repeated runs.

Everything bound stays referenced by the binding (numpy arrays, OrtValues), so
freeing the caller's object while it is bound cannot leave the run reading
freed memory. Raw pointers given to bind_input/bind_output are the caller's to
keep alive, as in onnxruntime.
"""

import numpy as np

from . import _providers, _values
from ._ffi import api, check, ffi, new_handle, status_to_exception, to_str
from ._ortvalue import (_VALUE_KIND_TENSOR, OrtValue, OrtValueVector, _check_device, _element_type_code, _shape_list,
                        device_to_numpy, tensor_device)


def _device_memory_info(device_type, device_id):
    """OnyxMemoryInfo for a device name: 'cpu', or 'cuda' where CUDA is usable
    (caller memory at a device address: a torch tensor's data_ptr()); other
    or absent devices fail in _check_device with the reason."""
    if _providers.wants_cuda(device_type):
        return _providers.cuda_memory_info(int(device_id) if isinstance(device_id, np.integer) else device_id)
    _check_device(device_type, device_id)
    return _values._cpu_memory_info()


def _value_over_pointer(device_type, device_id, element_type, shape, buffer_ptr):
    """An OnyxValue over caller memory at `buffer_ptr` (not owned, not copied)."""
    info = _device_memory_info(device_type, device_id)
    code = _element_type_code(element_type)
    if code == _values.ONYX_STRING:
        raise RuntimeError("a string tensor cannot be bound through a raw buffer pointer; "
                           "use bind_cpu_input or bind_ortvalue_input")
    dims = _shape_list(shape)
    if isinstance(buffer_ptr, bool) or not isinstance(buffer_ptr, (int, np.integer)):
        raise TypeError("buffer_ptr must be an int address, got %r" % (buffer_ptr,))
    count = 1
    for d in dims:
        count *= d
    nbytes = count * _element_size(code)
    if buffer_ptr == 0 and nbytes:
        raise ValueError("buffer_ptr is 0 (NULL) for a tensor of %d bytes" % nbytes)
    out = ffi.new("OnyxValue**")
    check(api.ValueCreateTensorWithData(info, ffi.cast("void*", int(buffer_ptr)), nbytes,
                                        _values._shape_array(dims), len(dims), code, out))
    return ffi.gc(out[0], api.ValueRelease)


# Bytes per element by ONNX type code (4-bit types pack two per byte and are
# not bindable through a pointer of whole elements).
_ELEMENT_SIZES = {1: 4, 2: 1, 3: 1, 4: 2, 5: 2, 6: 4, 7: 8, 9: 1, 10: 2, 11: 8, 12: 4, 13: 8, 14: 8, 15: 16,
                  16: 2, 17: 1, 18: 1, 19: 1, 20: 1}


def _element_size(code):
    size = _ELEMENT_SIZES.get(code)
    if size is None:
        raise RuntimeError("element type %d cannot be bound through a buffer pointer (sub-byte or unknown)" % code)
    return size


def _c_name(name):
    """A bound input or output name as C bytes; names that are not str are a
    TypeError naming them (onnxruntime's pybind layer refuses them too)."""
    if not isinstance(name, str):
        raise TypeError("IOBinding: an input or output name must be a str, got %r (%s)" % (name, type(name).__name__))
    return name.encode("utf-8")


def _check_runtime(status):
    # Binding errors are RuntimeError in onnxruntime; ours are also the typed class.
    if status != ffi.NULL:
        raise status_to_exception(status, RuntimeError)


def _execution_error(status):
    # onnxruntime raises RuntimeError("Error in execution: ...") from
    # run_with_iobinding; ours is that and the typed class for the code.
    err = status_to_exception(status, RuntimeError)
    err.args = ("Error in execution: " + str(err),)
    return err


def _c_device_args(device):
    """(device_type name, device id) of a C-level OrtDevice (or a public one)."""
    from ._device import OrtDevice, _COrtDevice
    if isinstance(device, OrtDevice):
        device = device._get_c_device()
    if not isinstance(device, _COrtDevice):
        raise TypeError("expected an OrtDevice, got %s" % type(device).__name__)
    names = {0: "cpu", 1: "gpu", 2: "fpga", 3: "npu"}
    return names.get(device.device_type(), "device type %d" % device.device_type()), device.device_id()


class SessionIOBinding:
    """The C-level binding of one session (onnxruntime's C.SessionIOBinding),
    with its C-level methods (devices as OrtDevice, get_outputs as an
    OrtValueVector). Everything bound stays referenced here."""

    def __init__(self, session):
        self._session = session
        # The C session it was made for (set_providers replaces a session's).
        self._c_session = session._sess
        self._handle = new_handle("OnyxIoBinding", lambda out: api.SessionCreateIoBinding(session._sess, out),
                                  api.IoBindingRelease)
        # Whatever backs a bound value, by name: freed only when unbound.
        self._input_refs = {}
        self._output_refs = {}

    # ---- inputs -----------------------------------------------------------

    def _bind_input_value(self, name, value, refs):
        _check_runtime(api.IoBindingBindInput(self._handle, _c_name(name), value))
        self._input_refs[name] = (value, refs)

    def bind_input(self, name, device, element_type, shape, buffer_ptr):
        """Binds input `name` to `shape` elements of `element_type` at
        `buffer_ptr` on `device` (an OrtDevice; CPU only)."""
        device_type, device_id = _c_device_args(device)
        self._bind_input_value(name, _value_over_pointer(device_type, device_id, element_type, shape, buffer_ptr),
                               None)

    def bind_ortvalue_input(self, name, ortvalue):
        """Binds input `name` to an OrtValue (shared, not copied)."""
        if not isinstance(ortvalue, OrtValue):
            raise TypeError("bind_ortvalue_input: expected an OrtValue, got %s" % type(ortvalue).__name__)
        self._bind_input_value(name, ortvalue._value, ortvalue)

    def synchronize_inputs(self):
        """Waits for copies of bound inputs to their devices (none on CPU)."""
        check(api.IoBindingSynchronizeInputs(self._handle))

    # ---- outputs ----------------------------------------------------------

    def _bind_output_to_device(self, name, device_type, device_id):
        """Each run allocates output `name` on the device with the shape it
        computes ('cuda': in the session's CUDA memory, left there without a
        host copy), as onnxruntime's BindOutputToDevice."""
        try:
            info = _device_memory_info(device_type, device_id)
        except RuntimeError as e:
            # Name the output: the device error alone says only which memory.
            raise RuntimeError("bind_output: cannot allocate output %r in %r memory: %s"
                               % (name, device_type, str(e).split(": ", 1)[-1])) from e
        _check_runtime(api.IoBindingBindOutputToDevice(self._handle, _c_name(name), info))
        self._output_refs[name] = None

    def _bind_output_value(self, name, value, ref):
        _check_runtime(api.IoBindingBindOutput(self._handle, _c_name(name), value))
        self._output_refs[name] = ref

    def bind_output(self, name, device, element_type=None, shape=None, buffer_ptr=None):
        """Binds output `name` to `device` (allocated at each run) or, with
        `buffer_ptr`, to `shape` elements of `element_type` there."""
        device_type, device_id = _c_device_args(device)
        if buffer_ptr is None:
            self._bind_output_to_device(name, device_type, device_id)
            return
        if element_type is None or shape is None:
            raise ValueError("`element_type` and `shape` are to be provided if pre-allocated memory is provided")
        value = _value_over_pointer(device_type, device_id, element_type, shape, buffer_ptr)
        self._bind_output_value(name, value, value)

    def bind_ortvalue_output(self, name, ortvalue):
        """Binds output `name` to an OrtValue's memory (written in place)."""
        if not isinstance(ortvalue, OrtValue):
            raise TypeError("bind_ortvalue_output: expected an OrtValue, got %s" % type(ortvalue).__name__)
        self._bind_output_value(name, ortvalue._value, ortvalue)

    def synchronize_outputs(self):
        """Waits for outputs still being written on their devices (none on CPU)."""
        check(api.IoBindingSynchronizeOutputs(self._handle))

    def _output_values(self):
        n = ffi.new("size_t*")
        check(api.IoBindingGetBoundOutputCount(self._handle, n))
        values = []
        out = ffi.new("OnyxValue**")
        for i in range(n[0]):
            check(api.IoBindingGetBoundOutputValue(self._handle, i, out))
            values.append(ffi.gc(out[0], api.ValueRelease))
        return values

    def _output_name(self, index):
        out = ffi.new("const char**")
        check(api.IoBindingGetBoundOutputName(self._handle, index, out))
        return to_str(out[0])

    def _output_ortvalues(self):
        result = []
        for i, value in enumerate(self._output_values()):
            ref = self._output_refs.get(self._output_name(i))
            # Keep the bound buffer's owner alive as long as its OrtValue.
            result.append(OrtValue(value, ref if isinstance(ref, OrtValue) else None))
        return result

    def get_outputs(self):
        """The outputs of the last run as an OrtValueVector."""
        vec = OrtValueVector()
        for v in self._output_ortvalues():
            vec.push_back(v)
        return vec

    def copy_outputs_to_cpu(self):
        """Copies of the last run's outputs as numpy arrays (lists and dicts for
        sequences and maps), independent of the bound memory."""
        result = []
        for i, value in enumerate(self._output_values()):
            name = self._output_name(i)
            if _values.value_kind(value) == 0:
                raise RuntimeError("copy_outputs_to_cpu: output '%s' has not been produced yet: "
                                   "call run_with_iobinding first" % name)
            if _values.value_kind(value) == _VALUE_KIND_TENSOR and tensor_device(value) != "cpu":
                result.append(device_to_numpy(value))
                continue
            result.append(_values.deep_copy(_values.output_object(name, value)))
        return result

    # ---- clearing ---------------------------------------------------------

    def clear_binding_inputs(self):
        api.IoBindingClearBoundInputs(self._handle)
        self._input_refs.clear()

    def clear_binding_outputs(self):
        api.IoBindingClearBoundOutputs(self._handle)
        self._output_refs.clear()


class IOBinding:
    """Binds inputs and outputs of a session to memory, for run_with_iobinding.

    Outputs bound to a buffer are written there in place (no copy); outputs
    bound to a device only are allocated by the library at each run, for
    shapes known only then, and read back with get_outputs() or
    copy_outputs_to_cpu().
    """

    def __init__(self, session):
        self._session = session
        self._iobinding = SessionIOBinding(session)
        self._handle = self._iobinding._handle

    # ---- inputs -----------------------------------------------------------

    def bind_cpu_input(self, name, arr_on_cpu):
        """Binds input `name` to a numpy array (wrapped without a copy when it is
        C-contiguous, copied first otherwise; kept alive while bound)."""
        keep = []
        value = _values.input_value(name, arr_on_cpu, self._session._feed_types.get(name, 0), keep,
                                    self._session._feed_decl.get(name))
        self._iobinding._bind_input_value(name, value, keep)

    def bind_input(self, name, device_type, device_id, element_type, shape, buffer_ptr):
        """Binds input `name` to `shape` elements of `element_type` (a numpy type
        or an onnx.TensorProto int) at address `buffer_ptr` on the device, which
        the caller keeps valid while it is bound."""
        value = _value_over_pointer(device_type, device_id, element_type, shape, buffer_ptr)
        self._iobinding._bind_input_value(name, value, None)

    def bind_ortvalue_input(self, name, ortvalue):
        """Binds input `name` to an OrtValue (shared, not copied)."""
        self._iobinding.bind_ortvalue_input(name, ortvalue)

    def synchronize_inputs(self):
        """Waits for copies of bound inputs to their devices (none on CPU)."""
        self._iobinding.synchronize_inputs()

    # ---- outputs ----------------------------------------------------------

    def bind_output(self, name, device_type="cpu", device_id=0, element_type=None, shape=None, buffer_ptr=None):
        """Binds output `name`: to memory at `buffer_ptr` holding `shape`
        elements of `element_type` (written in place by each run), or, without
        `buffer_ptr`, to the device, where each run allocates it."""
        if buffer_ptr is None:
            self._iobinding._bind_output_to_device(name, device_type, device_id)
            return
        if element_type is None or shape is None:
            raise ValueError("`element_type` and `shape` are to be provided if pre-allocated memory is provided")
        value = _value_over_pointer(device_type, device_id, element_type, shape, buffer_ptr)
        self._iobinding._bind_output_value(name, value, value)

    def bind_ortvalue_output(self, name, ortvalue):
        """Binds output `name` to an OrtValue's memory (written in place)."""
        self._iobinding.bind_ortvalue_output(name, ortvalue)

    def synchronize_outputs(self):
        """Waits for outputs still being written on their devices (none on CPU)."""
        self._iobinding.synchronize_outputs()

    def get_outputs(self):
        """The outputs of the last run_with_iobinding as OrtValues. A
        pre-allocated output's OrtValue views the bound memory; before the
        first run, an output the run will allocate is an OrtValue without a
        value (has_value() is False)."""
        return self._iobinding._output_ortvalues()

    def copy_outputs_to_cpu(self):
        """Copies of the last run's outputs as numpy arrays (lists and dicts for
        sequences and maps), independent of the bound memory."""
        return self._iobinding.copy_outputs_to_cpu()

    def get_outputs_as_ortvaluevector(self):
        """The outputs as an OrtValueVector (onnxruntime's C-level vector)."""
        return self._iobinding.get_outputs()

    def _iobinding_session_handle(self):
        return self._iobinding._c_session

    # ---- clearing ---------------------------------------------------------

    def clear_binding_inputs(self):
        self._iobinding.clear_binding_inputs()

    def clear_binding_outputs(self):
        self._iobinding.clear_binding_outputs()

    def _run(self, run_options):
        ro = run_options._handle if run_options is not None else ffi.NULL
        status = api.SessionRunWithBinding(self._session._sess, ro, self._handle)
        if status != ffi.NULL:
            raise _execution_error(status)

"""The fast path of InferenceSession.run: numeric numpy feeds in, numpy out,
through one C call (SessionRunTensors) per run.

Everything that does not change between runs is resolved when the session is
created (feed and output positions, the C arrays the call reads and writes),
so a run does per input a handful of attribute writes into those arrays and
per output a copy into a new numpy array (or, for large outputs, a zero-copy
view that owns the library's value). Whatever this path does not handle
(lists, OrtValues, strings, sub-byte types, non-contiguous or byte-swapped
arrays, unknown names, missing inputs) makes it return None, and the general
path in onnxruntime_inference_collection handles the call, with its checks
and error messages.

Thread-safety: sessions may be run from many threads at once, and the GIL is
released during the C call, so the C arrays are taken from a per-session pool
(list.pop and list.append are atomic) instead of being shared.
"""

import numpy as np

from ._errors import exception_for_code
from ._ffi import API_VERSION, api, ffi, status_to_exception
from . import _values

# The same path compiled (bindings/python/ext/onyx_fast.c), built with the
# package for the Python it was built with; this module's Python code stands
# in where it is missing or does not load (another Python, another numpy ABI).
try:
    from . import _onyx_fast
    _onyx_fast.init(int(ffi.cast("uintptr_t", api)), API_VERSION, exception_for_code)
except ImportError:
    _onyx_fast = None

# Outputs up to this size are copied into a numpy array and their value
# released at once (cheaper than a view's bookkeeping); larger ones are
# handed to numpy without a copy.
COPY_LIMIT_BYTES = 16384
# Shape entries preallocated per input; a higher rank gets its own array.
_DIMS_PER_INPUT = 8
# OnyxElementType -> numpy dtype for outputs this path converts itself
# (numeric, one element per byte or more: not strings, not packed types).
_OUT_DTYPES = {code: dtype for code, dtype in _values._ONYX_TO_NP.items()
               if code != _values.ONYX_STRING and code not in _values.PACKED_CODES}
# numpy dtype -> OnyxElementType for inputs this path feeds (native byte order
# dtypes only: a byte-swapped dtype compares unequal and is not found).
_IN_CODES = {dtype: code for dtype, code in _values._NP_TO_ONYX.items()}
_C_CONTIGUOUS_ALIGNED = 0x1 | 0x100  # NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_ALIGNED
# cffi's backend functions, called without the argument handling of the
# in-line ABI-mode FFI object's Python wrappers (a few hundred ns per call
# each); the out-of-line FFI (_onyx_abi_ffi) is itself the C object.
_backend = getattr(ffi, "_backend", ffi)
_from_buffer = _backend.from_buffer
_memmove = _backend.memmove
_unpack = _backend.unpack
_CHAR_ARRAY = ffi.typeof("char[]")


class _Scratch:
    """The C arrays of one run in flight."""

    __slots__ = ("in_idx", "args", "arg_items", "dims", "out_idx", "results", "result_items")

    def __init__(self, n_feeds, n_outputs):
        n_in = max(1, n_feeds)
        self.in_idx = ffi.new("size_t[]", n_in)
        self.args = ffi.new("OnyxTensorArg[]", n_in)
        self.dims = [ffi.new("int64_t[]", _DIMS_PER_INPUT) for _ in range(n_in)]
        self.arg_items = [self.args[k] for k in range(n_in)]
        for item, dims in zip(self.arg_items, self.dims):
            item.shape = dims
        n_out = max(1, n_outputs)
        self.out_idx = ffi.new("size_t[]", n_out)
        self.results = ffi.new("OnyxTensorResult[]", n_out)
        self.result_items = [self.results[k] for k in range(n_out)]


class FastRunner:
    """Per-session state of the fast path."""

    __slots__ = ("_sess", "_feed_index", "_n_required", "_n_feeds", "_output_index", "_output_names", "_pool", "_c")

    def __init__(self, sess, input_names, overridable_names, output_names):
        self._sess = sess
        self._c = None
        if _onyx_fast is not None:
            self._c = _onyx_fast.Runner(int(ffi.cast("uintptr_t", sess)), sess,
                                        tuple(input_names) + tuple(overridable_names), len(input_names),
                                        tuple(output_names))
        self._feed_index = {name: i for i, name in enumerate(list(input_names) + list(overridable_names))}
        self._n_required = len(input_names)
        self._n_feeds = len(self._feed_index)
        self._output_index = {name: i for i, name in enumerate(output_names)}
        self._output_names = list(output_names)
        self._pool = []

    def run(self, output_names, input_feed, run_options_handle):
        """The outputs as a list, or None when this path does not apply."""
        c = self._c
        if c is not None:
            ro = 0 if run_options_handle is ffi.NULL else int(ffi.cast("uintptr_t", run_options_handle))
            result = c.run(output_names, input_feed, ro)
            if result is not None:
                for k, o in enumerate(result):
                    if type(o) is int:  # a value the C path hands over unconverted
                        try:
                            result[k] = self._wrap(output_names, k, o)
                        except BaseException:
                            for later in result[k + 1:]:
                                if type(later) is int:
                                    api.ValueRelease(ffi.cast("OnyxValue*", later))
                            raise
            return result
        feed_index = self._feed_index
        if type(input_feed) is not dict or len(input_feed) > self._n_feeds:
            return None
        if output_names:
            if type(output_names) is not list and type(output_names) is not tuple:
                return None
            out_index = self._output_index
            try:
                wanted = [out_index[n] for n in output_names]
            except (KeyError, TypeError):
                return None
            n_out = len(wanted)
            if n_out > len(self._output_names):
                return None
        else:
            wanted = None
            n_out = len(self._output_names)
        pool = self._pool
        try:
            scratch = pool.pop()
        except IndexError:
            scratch = _Scratch(self._n_feeds, len(self._output_names))
        try:
            return self._run(scratch, wanted, n_out, input_feed, run_options_handle)
        finally:
            pool.append(scratch)

    def _wrap(self, output_names, k, address):
        owned = ffi.gc(ffi.cast("OnyxValue*", address), api.ValueRelease)
        name = output_names[k] if output_names else self._output_names[k]
        return _values.output_object(name, owned)

    def _run(self, scratch, wanted, n_out, input_feed, ro):
        feed_index = self._feed_index
        in_idx = scratch.in_idx
        items = scratch.arg_items
        dims = scratch.dims
        keep = []
        high_rank = False
        required = 0
        k = 0
        for name, x in input_feed.items():
            i = feed_index.get(name)
            if i is None or type(x) is not np.ndarray:
                return None
            code = _IN_CODES.get(x.dtype)
            if code is None or (x.flags.num & _C_CONTIGUOUS_ALIGNED) != _C_CONTIGUOUS_ALIGNED:
                return None
            if i < self._n_required:
                required += 1
            buf = _from_buffer(_CHAR_ARRAY, x, False)
            keep.append(buf)
            item = items[k]
            item.data = buf
            item.data_bytes = x.nbytes
            item.type = code
            nd = x.ndim
            item.rank = nd
            if nd <= _DIMS_PER_INPUT:
                dims[k][0:nd] = x.shape
            else:
                big = ffi.new("int64_t[]", x.shape)
                keep.append(big)
                item.shape = big
                high_rank = True
            in_idx[k] = i
            k += 1
        if required != self._n_required:
            status = None
        else:
            if wanted is not None:
                scratch.out_idx[0:n_out] = wanted
                out_idx = scratch.out_idx
            else:
                out_idx = ffi.NULL
            status = api.SessionRunTensors(self._sess, ro, in_idx, scratch.args, k, out_idx, n_out, scratch.results)
        if high_rank:
            for j in range(k):
                items[j].shape = dims[j]
        if status is None:
            return None
        if status != ffi.NULL:
            raise status_to_exception(status)
        del keep
        return _convert_results(scratch.result_items, n_out, wanted, self._output_names)


def _convert_results(items, n_out, wanted, names):
    out = [None] * n_out
    pending = 0  # the first value not yet released or owned
    try:
        for k in range(n_out):
            r = items[k]
            value = r.value
            dtype = _OUT_DTYPES.get(r.type) if r.kind == _values.VALUE_TENSOR else None
            if dtype is None:
                owned = ffi.gc(value, api.ValueRelease)
                pending = k + 1
                out[k] = _values.output_object(names[wanted[k] if wanted is not None else k], owned)
                continue
            rank = r.rank
            shape = _unpack(r.shape, rank) if rank else ()
            nbytes = dtype.itemsize
            for d in shape:
                nbytes *= d
            if nbytes <= COPY_LIMIT_BYTES:
                arr = np.empty(shape, dtype)
                if nbytes:
                    _memmove(arr, r.data, nbytes)
                api.ValueRelease(value)
                pending = k + 1
                out[k] = arr
            else:
                owned = ffi.gc(value, api.ValueRelease)
                pending = k + 1
                data = r.data
                out[k] = _values.view_of(lambda d: _values._ValueBuffer(owned, data, shape, d), dtype)
    except BaseException:
        # Values not yet converted would leak: release them, then re-raise.
        for j in range(pending, n_out):
            api.ValueRelease(items[j].value)
        raise
    return out

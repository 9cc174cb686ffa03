"""A "PyTorch eager" baseline for ONNX models: runs the ORIGINAL (unoptimized)
ONNX graph node by node, one framework call per node, as an nn.Module's
forward written op by op would (no fusion, no graph capture, no compilation).

The op table is backend-agnostic: `TorchBackend(device)` runs each node with
torch ops on a torch device (the benchmark peer of tests/cuda/bench_cuda.py
where onnxruntime-gpu is not installed), `NumpyBackend()` runs the same table
with numpy (to check the interpreter's ONNX semantics against onnxruntime on a
machine without torch: tests/python/test_torch_eager_interpreter.py).

Values live in one of two places, as in eager code: "host" values are numpy
arrays (shape arithmetic: Shape and what is computed from it and small int64
constants, as Python ints in an nn.Module), "device" values are the backend's
tensors (float weights converted once, graph inputs copied in per run, larger
int64 buffers like BERT's position_ids). A node whose inputs are all host
values runs with numpy; otherwise its host inputs are copied to the device
(once per initializer). Inputs that ops read as parameters (Reshape's shape,
Slice's starts/ends/axes/steps, Split's split, axes, Expand's shape, Range)
are read on the host. An op type the table lacks is refused by name.

    interp = OnnxEagerInterpreter(model_proto, TorchBackend("cuda"))
    outputs = interp.run({"input": array})     # list of numpy arrays, graph output order
"""

import math

import numpy as np
from onnx import TensorProto, helper, numpy_helper

# ONNX element type -> numpy dtype (the types the op table handles).
NP_DTYPES = {
    TensorProto.FLOAT: np.float32, TensorProto.DOUBLE: np.float64, TensorProto.FLOAT16: np.float16,
    TensorProto.INT64: np.int64, TensorProto.INT32: np.int32, TensorProto.INT16: np.int16,
    TensorProto.INT8: np.int8, TensorProto.UINT8: np.uint8, TensorProto.BOOL: np.bool_,
}

# int64 initializers with at most this many elements stay on the host (shape constants,
# axes, indices); larger ones are buffers and go to the device like the weights.
HOST_INT_LIMIT = 64


class UnsupportedOpError(NotImplementedError):
    pass


def _pool_out_len(n, k, s, d, pad_b, pad_e, ceil):
    """Output length of a pooling window (PyTorch's / onnxruntime's rule: with
    ceil_mode, a last window that would start inside the end padding is dropped)."""
    ext = (k - 1) * d + 1
    span = n + pad_b + pad_e - ext
    out = (-(-span // s) if ceil else span // s) + 1
    if ceil and (out - 1) * s >= n + pad_b:
        out -= 1
    return out


def _same_pads(in_shape, kernel, strides, dilations, auto_pad):
    """Explicit ONNX pads [b..., e...] for auto_pad SAME_UPPER / SAME_LOWER."""
    begins, ends = [], []
    for n, k, s, d in zip(in_shape, kernel, strides, dilations):
        out = -(-n // s)
        total = max(0, (out - 1) * s + (k - 1) * d + 1 - n)
        small, big = total // 2, total - total // 2
        begins.append(small if auto_pad == "SAME_UPPER" else big)
        ends.append(big if auto_pad == "SAME_UPPER" else small)
    return begins + ends


# --------------------------------------------------------------------------- backends

class NumpyBackend:
    """The op primitives with numpy (host == device)."""

    name = "numpy"

    def from_numpy(self, a):
        return np.asarray(a)

    def to_numpy(self, x):
        return np.asarray(x)

    def shape(self, x):
        return tuple(int(d) for d in x.shape)

    def cast(self, x, elem_type):
        return np.asarray(x).astype(NP_DTYPES[elem_type])

    def is_integer(self, x):
        return np.issubdtype(np.asarray(x).dtype, np.integer)

    def cast_like(self, x, like):
        return np.asarray(x).astype(like.dtype)

    def full(self, shape, value):
        return np.full(shape, value)

    def arange(self, start, limit, delta, like):
        return np.arange(start, limit, delta, dtype=np.asarray(like).dtype)

    def int_div(self, a, b):
        q = np.abs(a) // np.abs(b)  # ONNX integer Div truncates toward zero
        return np.where((a < 0) != (b < 0), -q, q).astype(np.result_type(a, b))

    def matmul(self, a, b):
        return np.matmul(a, b)

    def transpose(self, x, perm):
        return np.transpose(x, perm)

    def reshape(self, x, shape):
        return np.reshape(x, shape)

    def concat(self, xs, axis):
        return np.concatenate(xs, axis=axis)

    def split(self, x, sizes, axis):
        return np.split(x, np.cumsum(sizes)[:-1], axis=axis)

    def flip(self, x, axis):
        return np.flip(x, axis)

    def expand(self, x, shape):
        return np.broadcast_to(x, shape)

    def where(self, c, a, b):
        return np.where(c, a, b)

    def mean(self, x, axes, keepdims):
        return np.mean(x, axis=tuple(axes), keepdims=keepdims).astype(x.dtype)

    def sum(self, x, axes, keepdims):
        return np.sum(x, axis=tuple(axes), keepdims=keepdims).astype(x.dtype)

    def amax(self, x, axes, keepdims):
        return np.max(x, axis=tuple(axes), keepdims=keepdims)

    def sqrt(self, x):
        return np.sqrt(x)

    def exp(self, x):
        return np.exp(x)

    def log(self, x):
        return np.log(x)

    def abs(self, x):
        return np.abs(x)

    def tanh(self, x):
        return np.tanh(x)

    def sigmoid(self, x):
        return (1.0 / (1.0 + np.exp(-x.astype(np.float64)))).astype(x.dtype)

    def erf(self, x):
        return np.frompyfunc(math.erf, 1, 1)(x.astype(np.float64)).astype(x.dtype)

    def relu(self, x):
        return np.maximum(x, np.zeros((), x.dtype))

    def clip(self, x, lo, hi):
        if lo is not None:
            x = np.maximum(x, np.asarray(lo, x.dtype))
        if hi is not None:
            x = np.minimum(x, np.asarray(hi, x.dtype))
        return x

    def minimum(self, a, b):
        return np.minimum(a, b)

    def maximum(self, a, b):
        return np.maximum(a, b)

    def logical(self, op, a, b=None):
        return {"And": np.logical_and, "Or": np.logical_or, "Xor": np.logical_xor}[op](a, b) \
            if b is not None else np.logical_not(a)

    def softmax(self, x, axis):
        e = np.exp(x - np.max(x, axis=axis, keepdims=True))
        return (e / np.sum(e, axis=axis, keepdims=True)).astype(x.dtype)

    def layer_norm(self, x, axis, scale, bias, eps):
        axes = tuple(range(axis, x.ndim))
        x64 = x.astype(np.float64)
        mu = x64.mean(axis=axes, keepdims=True)
        var = ((x64 - mu) ** 2).mean(axis=axes, keepdims=True)
        y = (x64 - mu) / np.sqrt(var + eps) * scale
        if bias is not None:
            y = y + bias
        return y.astype(x.dtype)

    def batch_norm(self, x, scale, bias, mean, var, eps):
        shp = (1, -1) + (1,) * (x.ndim - 2)
        inv = (scale / np.sqrt(var + np.float32(eps))).reshape(shp)
        return ((x - mean.reshape(shp)) * inv + bias.reshape(shp)).astype(x.dtype)

    def linear(self, a, w_t, bias):
        y = a @ w_t.T
        return y + bias if bias is not None else y

    def _windows(self, x, kernel, strides, dilations, pads, pad_value):
        """[N, C, *out, *kernel] view of x padded by pads (ONNX order)."""
        nsp = len(kernel)
        widths = [(0, 0), (0, 0)] + [(pads[i], pads[i + nsp]) for i in range(nsp)]
        xp = np.pad(x, widths, constant_values=pad_value)
        ext = [(k - 1) * d + 1 for k, d in zip(kernel, dilations)]
        win = np.lib.stride_tricks.sliding_window_view(xp, ext, axis=tuple(range(2, 2 + nsp)))
        idx = (slice(None), slice(None)) + tuple(slice(None, None, s) for s in strides) + \
            tuple(slice(None, None, d) for d in dilations)
        return win[idx]

    def conv(self, x, w, b, strides, pads, dilations, group):
        nsp = w.ndim - 2
        win = self._windows(x, w.shape[2:], strides, dilations, pads, 0)
        cg, og = x.shape[1] // group, w.shape[0] // group
        parts = []
        for g in range(group):
            wg = w[g * og:(g + 1) * og]                       # [og, cg, *k]
            xg = win[:, g * cg:(g + 1) * cg]                  # [n, cg, *out, *k]
            # contract cg and the kernel axes -> [n, *out, og]
            y = np.tensordot(xg, wg, axes=([1] + [2 + nsp + i for i in range(nsp)],
                                           [1] + [2 + i for i in range(nsp)]))
            parts.append(np.moveaxis(y, -1, 1))
        y = np.concatenate(parts, axis=1) if group > 1 else parts[0]
        if b is not None:
            y = y + b.reshape((1, -1) + (1,) * nsp)
        return np.ascontiguousarray(y.astype(x.dtype))

    def _pool_crop(self, x, kernel, strides, dilations, pads, ceil):
        """Pads for the windows: explicit pads plus, with ceil_mode, the extra end
        padding that the last (partial) window needs; returns (pads, out_sizes)."""
        nsp = len(kernel)
        outs, full = [], list(pads)
        for i in range(nsp):
            n = x.shape[2 + i]
            out = _pool_out_len(n, kernel[i], strides[i], dilations[i], pads[i], pads[i + nsp], ceil)
            need = (out - 1) * strides[i] + (kernel[i] - 1) * dilations[i] + 1 - (n + pads[i])
            full[i + nsp] = max(pads[i + nsp], need)
            outs.append(out)
        return full, outs

    def max_pool(self, x, kernel, strides, pads, dilations, ceil):
        full, outs = self._pool_crop(x, kernel, strides, dilations, pads, ceil)
        win = self._windows(x, kernel, strides, dilations, full, -np.inf)
        win = win[(slice(None), slice(None)) + tuple(slice(0, o) for o in outs)]
        return np.max(win, axis=tuple(range(-len(kernel), 0)))

    def avg_pool(self, x, kernel, strides, pads, ceil, count_include_pad):
        nsp = len(kernel)
        dil = [1] * nsp
        full, outs = self._pool_crop(x, kernel, strides, dil, pads, ceil)
        crop = (slice(None), slice(None)) + tuple(slice(0, o) for o in outs)
        axes = tuple(range(-nsp, 0))
        s = np.sum(self._windows(x.astype(np.float64), kernel, strides, dil, full, 0)[crop], axis=axes)
        # divisor: the in-bounds elements, plus the explicit pads with count_include_pad
        # (never the ceil_mode overhang), as PyTorch and onnxruntime count them
        ones = np.ones((1, 1) + x.shape[2:])
        if count_include_pad:
            ones = np.pad(ones, [(0, 0), (0, 0)] + [(pads[i], pads[i + nsp]) for i in range(nsp)],
                          constant_values=1)
            grow = [0] * nsp + [full[i + nsp] - pads[i + nsp] for i in range(nsp)]
            cnt = np.sum(self._windows(ones, kernel, strides, dil, grow, 0)[crop], axis=axes)
        else:
            cnt = np.sum(self._windows(ones, kernel, strides, dil, full, 0)[crop], axis=axes)
        return (s / cnt).astype(x.dtype)


def disable_tf32(torch):
    """TF32 off for matmuls and convolutions (cuDNN allows it by default): the
    fp32_precision settings where torch has them (2.9+; mixing them with the
    legacy allow_tf32 flags is refused), else the legacy flags."""
    try:
        torch.backends.cuda.matmul.fp32_precision = "ieee"
        torch.backends.cudnn.conv.fp32_precision = "ieee"
    except (AttributeError, RuntimeError):
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False


class TorchBackend:
    """The op primitives with torch on `device` (eager: one torch call per node)."""

    name = "torch"

    def __init__(self, device="cuda"):
        import torch
        import torch.nn.functional as F

        self.torch, self.F, self.device = torch, F, torch.device(device)
        self.dtypes = {k: getattr(torch, {np.float32: "float32", np.float64: "float64",
                                          np.float16: "float16", np.int64: "int64", np.int32: "int32",
                                          np.int16: "int16", np.int8: "int8", np.uint8: "uint8",
                                          np.bool_: "bool"}[v]) for k, v in NP_DTYPES.items()}

    def from_numpy(self, a):
        a = np.asarray(a)  # (np.ascontiguousarray would make a 0-d array 1-d)
        if not (a.flags.c_contiguous and a.flags.writeable):  # torch warns on read-only arrays
            a = np.array(a, order="C")
        return self.torch.from_numpy(a).to(self.device)

    def to_numpy(self, x):
        return x.cpu().numpy() if isinstance(x, self.torch.Tensor) else np.asarray(x)

    def shape(self, x):
        return tuple(x.shape)

    def cast(self, x, elem_type):
        return x.to(self.dtypes[elem_type])

    def is_integer(self, x):
        return not x.dtype.is_floating_point and x.dtype != self.torch.bool

    def cast_like(self, x, like):
        return x.to(like.dtype)

    def full(self, shape, value):
        v = np.asarray(value)
        return self.torch.full(tuple(shape), v.item(), dtype=self.dtypes[helper.np_dtype_to_tensor_dtype(v.dtype)],
                               device=self.device)

    def arange(self, start, limit, delta, like):
        dt = self.dtypes[helper.np_dtype_to_tensor_dtype(np.asarray(like).dtype)]
        return self.torch.arange(start, limit, delta, dtype=dt, device=self.device)

    def int_div(self, a, b):
        return self.torch.div(a, b, rounding_mode="trunc")

    def matmul(self, a, b):
        return self.torch.matmul(a, b)

    def transpose(self, x, perm):
        return x.permute(*perm)

    def reshape(self, x, shape):
        return x.reshape(tuple(shape))

    def concat(self, xs, axis):
        return self.torch.cat(xs, dim=axis)

    def split(self, x, sizes, axis):
        return list(self.torch.split(x, list(sizes), dim=axis))

    def flip(self, x, axis):
        return self.torch.flip(x, dims=(axis,))

    def expand(self, x, shape):
        return x.expand(*shape)

    def where(self, c, a, b):
        return self.torch.where(c, a, b)

    def mean(self, x, axes, keepdims):
        return x.mean(dim=tuple(axes), keepdim=keepdims)

    def sum(self, x, axes, keepdims):
        return x.sum(dim=tuple(axes), keepdim=keepdims)

    def amax(self, x, axes, keepdims):
        return self.torch.amax(x, dim=tuple(axes), keepdim=keepdims)

    def sqrt(self, x):
        return self.torch.sqrt(x)

    def exp(self, x):
        return self.torch.exp(x)

    def log(self, x):
        return self.torch.log(x)

    def abs(self, x):
        return self.torch.abs(x)

    def tanh(self, x):
        return self.torch.tanh(x)

    def sigmoid(self, x):
        return self.torch.sigmoid(x)

    def erf(self, x):
        return self.torch.erf(x)

    def relu(self, x):
        return self.torch.relu(x)

    def clip(self, x, lo, hi):
        return self.torch.clamp(x, min=lo, max=hi)

    def minimum(self, a, b):
        return self.torch.minimum(a, b)

    def maximum(self, a, b):
        return self.torch.maximum(a, b)

    def logical(self, op, a, b=None):
        t = self.torch
        return {"And": t.logical_and, "Or": t.logical_or, "Xor": t.logical_xor}[op](a, b) \
            if b is not None else t.logical_not(a)

    def softmax(self, x, axis):
        return self.torch.softmax(x, dim=axis)

    def layer_norm(self, x, axis, scale, bias, eps):
        norm_shape = tuple(x.shape[axis:])
        if tuple(scale.shape) == norm_shape and (bias is None or tuple(bias.shape) == norm_shape):
            return self.F.layer_norm(x, norm_shape, scale, bias, eps)
        y = self.F.layer_norm(x, norm_shape, None, None, eps) * scale
        return y + bias if bias is not None else y

    def batch_norm(self, x, scale, bias, mean, var, eps):
        return self.F.batch_norm(x, mean, var, scale, bias, training=False, momentum=0.0, eps=eps)

    def linear(self, a, w_t, bias):
        return self.F.linear(a, w_t, bias)

    def _pads(self, x, pads, value):
        """Explicit pads -> (x padded where they are asymmetric, symmetric padding list)."""
        nsp = len(pads) // 2
        b, e = list(pads[:nsp]), list(pads[nsp:])
        if b == e:
            return x, b
        widths = []
        for i in reversed(range(nsp)):  # F.pad takes the last dim first
            widths += [b[i], e[i]]
        return self.F.pad(x, widths, value=value), [0] * nsp

    def conv(self, x, w, b, strides, pads, dilations, group):
        fn = {1: self.F.conv1d, 2: self.F.conv2d, 3: self.F.conv3d}[w.dim() - 2]
        x, padding = self._pads(x, pads, 0.0)
        return fn(x, w, b, stride=tuple(strides), padding=tuple(padding), dilation=tuple(dilations),
                  groups=group)

    def max_pool(self, x, kernel, strides, pads, dilations, ceil):
        nsp = len(kernel)
        fn = {1: self.F.max_pool1d, 2: self.F.max_pool2d, 3: self.F.max_pool3d}[nsp]
        if list(pads[:nsp]) != list(pads[nsp:]) or any(2 * p > k for p, k in zip(pads[:nsp], kernel)):
            # F.max_pool*d pads symmetrically and by at most half the kernel
            x = self.F.pad(x, [p for i in reversed(range(nsp)) for p in (pads[i], pads[i + nsp])],
                           value=float("-inf"))
            padding = [0] * nsp
        else:
            padding = list(pads[:nsp])
        return fn(x, tuple(kernel), stride=tuple(strides), padding=tuple(padding),
                  dilation=tuple(dilations), ceil_mode=bool(ceil))

    def avg_pool(self, x, kernel, strides, pads, ceil, count_include_pad):
        nsp = len(kernel)
        fn = {1: self.F.avg_pool1d, 2: self.F.avg_pool2d, 3: self.F.avg_pool3d}[nsp]
        if list(pads[:nsp]) != list(pads[nsp:]) or any(2 * p > k for p, k in zip(pads[:nsp], kernel)):
            if not count_include_pad:
                raise UnsupportedOpError("AveragePool with asymmetric pads and count_include_pad=0 "
                                         "has no torch equivalent here")
            x, padding = self.F.pad(x, [p for i in reversed(range(nsp)) for p in (pads[i], pads[i + nsp])]), \
                [0] * nsp
        else:
            padding = list(pads[:nsp])
        return fn(x, tuple(kernel), stride=tuple(strides), padding=tuple(padding), ceil_mode=bool(ceil),
                  count_include_pad=bool(count_include_pad))


# --------------------------------------------------------------------------- op table

def _ints(x):
    return [int(v) for v in np.asarray(x).reshape(-1)]


def _axis(a, rank):
    a = int(a)
    if not -rank <= a < max(rank, 1):
        raise ValueError("axis %d out of range for rank %d" % (a, rank))
    return a + rank if a < 0 else a


def _binary(fn):
    return lambda B, n, a, b: fn(a, b)


def _div(B, n, a, b):
    return B.int_div(a, b) if B.is_integer(a) else a / b


def _pow(B, n, a, b):
    # the result has the base's type (numpy would promote float32 ** int64 to float64)
    return a ** (B.cast_like(b, a) if B.is_integer(b) != B.is_integer(a) else b)


def _variadic(fn):
    def run(B, n, *xs):
        y = xs[0]
        for x in xs[1:]:
            y = fn(B, y, x)
        return y
    return run


def _reshape(B, n, x, shape):
    shape = _ints(shape)
    in_shape = B.shape(x)
    if not n.attrs.get("allowzero", 0):
        shape = [in_shape[i] if d == 0 else d for i, d in enumerate(shape)]
    return B.reshape(x, shape)


def _flatten(B, n, x):
    s = B.shape(x)
    axis = _axis(n.attrs.get("axis", 1), len(s)) if len(s) else 0
    return B.reshape(x, (int(np.prod(s[:axis], dtype=np.int64)), int(np.prod(s[axis:], dtype=np.int64))))


def _axes_param(n, axes_input, rank):
    axes = _ints(axes_input) if axes_input is not None else list(n.attrs.get("axes", []))
    return sorted(_axis(a, rank) for a in axes)


def _unsqueeze(B, n, x, axes=None):
    s = list(B.shape(x))
    axes = _ints(axes) if axes is not None else list(n.attrs.get("axes", []))
    for a in sorted(_axis(a, len(s) + len(axes)) for a in axes):
        s.insert(a, 1)
    return B.reshape(x, s)


def _squeeze(B, n, x, axes=None):
    s = B.shape(x)
    if axes is None and "axes" not in n.attrs:
        keep = [d for d in s if d != 1]
    else:
        drop = set(_axes_param(n, axes, len(s)))
        for a in drop:
            if s[a] != 1:
                raise ValueError("Squeeze of axis %d with size %d" % (a, s[a]))
        keep = [d for i, d in enumerate(s) if i not in drop]
    return B.reshape(x, keep)


def _transpose(B, n, x):
    rank = len(B.shape(x))
    perm = n.attrs.get("perm", list(reversed(range(rank))))
    return B.transpose(x, [_axis(p, rank) for p in perm])


def _concat(B, n, *xs):
    return B.concat(list(xs), _axis(n.attrs["axis"], len(B.shape(xs[0]))))


def _gather(B, n, x, idx):
    s = B.shape(x)
    axis = _axis(n.attrs.get("axis", 0), len(s))
    if len(B.shape(idx)) == 0:  # a scalar index drops the axis
        y = x[(slice(None),) * axis + (B.reshape(idx, (1,)),)]
        return B.reshape(y, s[:axis] + s[axis + 1:])
    # advanced indexing wraps negative indices in numpy and torch alike
    return x[(slice(None),) * axis + (idx,)]


def _slice(B, n, x, starts, ends, axes=None, steps=None):
    s = B.shape(x)
    starts, ends = _ints(starts), _ints(ends)
    axes = [_axis(a, len(s)) for a in _ints(axes)] if axes is not None else list(range(len(starts)))
    steps = _ints(steps) if steps is not None else [1] * len(starts)
    idx = [slice(None)] * len(s)
    flips = []
    for a, st, en, sp in zip(axes, starts, ends, steps):
        dim = s[a]
        if sp == 0:
            raise ValueError("Slice step 0 on axis %d" % a)
        st = st + dim if st < 0 else st
        en = en + dim if en < 0 else en
        if sp > 0:
            st, en = min(max(st, 0), dim), min(max(en, 0), dim)
            idx[a] = slice(st, max(st, en), sp)
        else:  # run it forward on the flipped axis (torch has no negative steps)
            st, en = min(max(st, 0), dim - 1), min(max(en, -1), dim - 1)
            fst, fen = dim - 1 - st, dim - 1 - en
            idx[a] = slice(fst, max(fst, fen), -sp)
            flips.append(a)
    for a in flips:
        x = B.flip(x, a)
    return x[tuple(idx)]


def _split(B, n, x, split=None):
    s = B.shape(x)
    axis = _axis(n.attrs.get("axis", 0), len(s))
    if split is not None:
        sizes = _ints(split)
    elif "split" in n.attrs:
        sizes = list(n.attrs["split"])
    else:
        k = n.attrs.get("num_outputs", len(n.outputs))
        chunk = -(-s[axis] // k)
        sizes = [chunk] * (k - 1) + [s[axis] - chunk * (k - 1)]
    if sum(sizes) != s[axis]:
        raise ValueError("Split sizes %s do not sum to dim %d" % (sizes, s[axis]))
    return tuple(B.split(x, sizes, axis))


def _expand(B, n, x, shape):
    return B.expand(x, np.broadcast_shapes(B.shape(x), tuple(_ints(shape))))


def _shape(B, n, x):
    s = B.shape(x)
    start, end = n.attrs.get("start", 0), n.attrs.get("end", len(s))
    return np.array(s, dtype=np.int64)[slice(start, end)]


def _constant_of_shape(B, n, shape):
    v = n.attrs.get("value")
    v = numpy_helper.to_array(v).reshape(-1)[0] if v is not None else np.float32(0)
    shape = _ints(shape)
    if int(np.prod(shape, dtype=np.int64)) <= HOST_INT_LIMIT:
        return np.full(shape, v, dtype=np.asarray(v).dtype)
    return B.full(shape, np.asarray(v))


def _range(B, n, start, limit, delta):
    s, l, d = (np.asarray(v).reshape(()) for v in (start, limit, delta))
    return B.arange(s.item(), l.item(), d.item(), s)


def _reduce(kind):
    def run(B, n, x, axes=None):
        rank = len(B.shape(x))
        if axes is not None:
            ax = [_axis(a, rank) for a in _ints(axes)]
        else:
            ax = [_axis(a, rank) for a in n.attrs.get("axes", [])]
        if not ax:
            if n.attrs.get("noop_with_empty_axes", 0):
                return x
            ax = list(range(rank))
        keep = bool(n.attrs.get("keepdims", 1))
        return {"mean": B.mean, "sum": B.sum, "max": B.amax}[kind](x, ax, keep)
    return run


def _softmax(B, n, x):
    s = B.shape(x)
    if n.opset >= 13:
        return B.softmax(x, _axis(n.attrs.get("axis", -1), len(s)))
    axis = _axis(n.attrs.get("axis", 1), len(s))  # opset < 13: coerced to 2-D
    rows = int(np.prod(s[:axis], dtype=np.int64))
    return B.reshape(B.softmax(B.reshape(x, (rows, -1)), 1), s)


def _layer_norm(B, n, x, scale, bias=None):
    if len([o for o in n.outputs if o]) > 1:
        raise UnsupportedOpError("LayerNormalization node %r: Mean/InvStdDev outputs" % n.name)
    axis = _axis(n.attrs.get("axis", -1), len(B.shape(x)))
    return B.layer_norm(x, axis, scale, bias, float(n.attrs.get("epsilon", 1e-5)))


def _batch_norm(B, n, x, scale, bias, mean, var):
    if n.attrs.get("training_mode", 0) or len([o for o in n.outputs if o]) > 1:
        raise UnsupportedOpError("BatchNormalization node %r: training mode" % n.name)
    return B.batch_norm(x, scale, bias, mean, var, float(n.attrs.get("epsilon", 1e-5)))


def _gemm(B, n, a, b, c=None):
    alpha, beta = float(n.attrs.get("alpha", 1.0)), float(n.attrs.get("beta", 1.0))
    ta, tb = n.attrs.get("transA", 0), n.attrs.get("transB", 0)
    if tb and not ta and alpha == 1.0 and beta == 1.0 and (c is None or len(B.shape(c)) <= 1):
        return B.linear(a, b, c)  # nn.Linear
    a = B.transpose(a, (1, 0)) if ta else a
    b = B.transpose(b, (1, 0)) if tb else b
    y = B.matmul(a, b)
    if alpha != 1.0:
        y = y * alpha
    if c is not None:
        y = y + (c * beta if beta != 1.0 else c)
    return y


def _spatial(n, x_shape, w_shape=None):
    nsp = len(x_shape) - 2
    kernel = list(n.attrs.get("kernel_shape", w_shape[2:] if w_shape is not None else []))
    strides = list(n.attrs.get("strides", [1] * nsp))
    dil = list(n.attrs.get("dilations", [1] * nsp))
    auto_pad = n.attrs.get("auto_pad", "NOTSET")
    if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        pads = _same_pads(x_shape[2:], kernel, strides, dil, auto_pad)
    elif auto_pad in ("NOTSET", "VALID"):
        pads = list(n.attrs.get("pads", [0] * 2 * nsp)) if auto_pad == "NOTSET" else [0] * 2 * nsp
    else:
        raise ValueError("node %r: unknown auto_pad %r" % (n.name, auto_pad))
    return kernel, strides, dil, pads


def _conv(B, n, x, w, b=None):
    kernel, strides, dil, pads = _spatial(n, B.shape(x), B.shape(w))
    return B.conv(x, w, b, strides, pads, dil, int(n.attrs.get("group", 1)))


def _max_pool(B, n, x):
    if len([o for o in n.outputs if o]) > 1:
        raise UnsupportedOpError("MaxPool node %r: Indices output" % n.name)
    kernel, strides, dil, pads = _spatial(n, B.shape(x))
    return B.max_pool(x, kernel, strides, pads, dil, n.attrs.get("ceil_mode", 0))


def _avg_pool(B, n, x):
    kernel, strides, dil, pads = _spatial(n, B.shape(x))
    if any(d != 1 for d in dil):
        raise UnsupportedOpError("AveragePool node %r: dilations" % n.name)
    return B.avg_pool(x, kernel, strides, pads, n.attrs.get("ceil_mode", 0),
                      n.attrs.get("count_include_pad", 0))


def _global_avg_pool(B, n, x):
    return B.mean(x, list(range(2, len(B.shape(x)))), True)


def _clip(B, n, x, lo=None, hi=None):
    if n.opset < 11:  # min/max were attributes
        lo, hi = n.attrs.get("min"), n.attrs.get("max")
    return B.clip(x, lo, hi)


def _cast(B, n, x):
    to = n.attrs["to"]
    if to not in NP_DTYPES:
        raise UnsupportedOpError("Cast node %r: to type %d" % (n.name, to))
    return B.cast(x, to)


def _where(B, n, c, a, b):
    return B.where(c, a, b)


def _constant(B, n):
    if "value" in n.attrs:
        return numpy_helper.to_array(n.attrs["value"])
    for k, dt in (("value_float", np.float32), ("value_int", np.int64)):
        if k in n.attrs:
            return np.array(n.attrs[k], dt)
    for k, dt in (("value_floats", np.float32), ("value_ints", np.int64)):
        if k in n.attrs:
            return np.array(list(n.attrs[k]), dt)
    raise UnsupportedOpError("Constant node %r: attribute %s" % (n.name, list(n.attrs)))


OPS = {
    "Add": _binary(lambda a, b: a + b), "Sub": _binary(lambda a, b: a - b),
    "Mul": _binary(lambda a, b: a * b), "Div": _div, "Pow": _pow,
    "Equal": _binary(lambda a, b: a == b), "Less": _binary(lambda a, b: a < b),
    "LessOrEqual": _binary(lambda a, b: a <= b), "Greater": _binary(lambda a, b: a > b),
    "GreaterOrEqual": _binary(lambda a, b: a >= b),
    "And": lambda B, n, a, b: B.logical("And", a, b), "Or": lambda B, n, a, b: B.logical("Or", a, b),
    "Xor": lambda B, n, a, b: B.logical("Xor", a, b), "Not": lambda B, n, a: B.logical("Not", a),
    "Min": _variadic(lambda B, a, b: B.minimum(a, b)), "Max": _variadic(lambda B, a, b: B.maximum(a, b)),
    "Sum": _variadic(lambda B, a, b: a + b),
    "Neg": lambda B, n, x: -x, "Abs": lambda B, n, x: B.abs(x), "Reciprocal": lambda B, n, x: 1.0 / x,
    "Sqrt": lambda B, n, x: B.sqrt(x), "Exp": lambda B, n, x: B.exp(x), "Log": lambda B, n, x: B.log(x),
    "Erf": lambda B, n, x: B.erf(x), "Tanh": lambda B, n, x: B.tanh(x),
    "Sigmoid": lambda B, n, x: B.sigmoid(x), "Relu": lambda B, n, x: B.relu(x), "Clip": _clip,
    "Identity": lambda B, n, x: x, "Dropout": lambda B, n, x, *rest: x,
    "Cast": _cast, "Where": _where, "Constant": _constant,
    "MatMul": lambda B, n, a, b: B.matmul(a, b), "Gemm": _gemm,
    "Softmax": _softmax, "LayerNormalization": _layer_norm, "BatchNormalization": _batch_norm,
    "ReduceMean": _reduce("mean"), "ReduceSum": _reduce("sum"), "ReduceMax": _reduce("max"),
    "Conv": _conv, "MaxPool": _max_pool, "AveragePool": _avg_pool, "GlobalAveragePool": _global_avg_pool,
    "Flatten": _flatten, "Reshape": _reshape, "Transpose": _transpose, "Unsqueeze": _unsqueeze,
    "Squeeze": _squeeze, "Concat": _concat, "Gather": _gather, "Slice": _slice, "Split": _split,
    "Expand": _expand, "Shape": _shape, "ConstantOfShape": _constant_of_shape, "Range": _range,
}

# Inputs read as host parameters (by position), per op type.
HOST_PARAMS = {"Reshape": {1}, "Slice": {1, 2, 3, 4}, "Split": {1}, "Unsqueeze": {1}, "Squeeze": {1},
               "Expand": {1}, "ConstantOfShape": {0}, "Range": {0, 1, 2}, "ReduceMean": {1},
               "ReduceSum": {1}, "ReduceMax": {1}}
# Ops that only read their input's shape (it may stay on the device).
SHAPE_ONLY = {"Shape"}
# Ops that make a tensor from host parameters: on the device (torch.arange / torch.full),
# except a ConstantOfShape result small enough to be shape arithmetic.
DEVICE_SOURCES = {"Range", "ConstantOfShape"}


class _Node:
    __slots__ = ("name", "op_type", "fn", "inputs", "outputs", "attrs", "opset", "params")

    def __init__(self, node, opset):
        self.name, self.op_type, self.opset = node.name or node.op_type, node.op_type, opset
        if node.domain not in ("", "ai.onnx"):
            raise UnsupportedOpError("node %r: op %s of domain %r is not supported"
                                     % (self.name, node.op_type, node.domain))
        if node.op_type not in OPS:
            raise UnsupportedOpError("node %r: op type %s is not supported by the eager interpreter"
                                     % (self.name, node.op_type))
        self.fn = OPS[node.op_type]
        self.inputs, self.outputs = list(node.input), list(node.output)
        self.attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
        for k, v in list(self.attrs.items()):
            if isinstance(v, bytes):
                self.attrs[k] = v.decode()
        self.params = HOST_PARAMS.get(node.op_type, set())


class OnnxEagerInterpreter:
    """Runs `model` (an onnx.ModelProto) node by node on `backend`."""

    def __init__(self, model, backend):
        self.backend, self.host = backend, NumpyBackend()
        g = model.graph
        opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 1)
        nodes = [_Node(n, opset) for n in g.node]
        self.consts = {}
        arrays = [(t.name, numpy_helper.to_array(t)) for t in g.initializer]
        # Constant nodes are module constants: evaluated once, like the initializers
        arrays += [(n.outputs[0], _constant(None, n)) for n in nodes if n.op_type == "Constant"]
        self.nodes = [n for n in nodes if n.op_type != "Constant"]
        for name, a in arrays:
            if np.issubdtype(a.dtype, np.integer) and a.size <= HOST_INT_LIMIT:
                self.consts[name] = a                    # shape arithmetic stays on the host
            else:
                self.consts[name] = backend.from_numpy(a)  # weights and buffers: once, on the device
        self.input_names = [i.name for i in g.input if i.name not in self.consts]
        self.output_names = [o.name for o in g.output]
        # last use of each value: intermediates are dropped after it (device memory)
        self.last_use = {}
        for i, n in enumerate(self.nodes):
            for name in n.inputs:
                self.last_use[name] = i
        for name in self.output_names:
            self.last_use[name] = len(self.nodes)
        self._dev_cache = {}

    def _to_device(self, name, v):
        if name in self.consts:  # an initializer: copied once
            d = self._dev_cache.get(name)
            if d is None:
                d = self._dev_cache[name] = self.backend.from_numpy(v)
            return d
        return self.backend.from_numpy(v)

    def run(self, feeds, output_names=None):
        """feeds: name -> numpy array. Returns numpy arrays in graph output order."""
        B, H = self.backend, self.host
        env = dict(self.consts)
        for name in self.input_names:
            if name not in feeds:
                raise ValueError("missing input %r" % name)
            env[name] = B.from_numpy(np.asarray(feeds[name]))
        for i, n in enumerate(self.nodes):
            args = []
            for name in n.inputs:
                if not name:
                    args.append(None)
                    continue
                if name not in env:
                    raise ValueError("node %r: input %r has no value" % (n.name, name))
                args.append(env[name])
            for p in n.params:
                if p < len(args) and args[p] is not None and not isinstance(args[p], np.ndarray):
                    args[p] = B.to_numpy(args[p])
            data = [a for k, a in enumerate(args) if a is not None and k not in n.params]
            on_host = n.op_type in SHAPE_ONLY or all(isinstance(a, np.ndarray) for a in data)
            if on_host and n.op_type not in DEVICE_SOURCES:
                be = H
            else:
                be = B
                if B is not H:
                    args = [self._to_device(name, a) if (k not in n.params and isinstance(a, np.ndarray))
                            else a for k, (name, a) in enumerate(zip(n.inputs, args))]
            try:
                out = n.fn(be, n, *args)
            except UnsupportedOpError:
                raise
            except Exception as e:  # name the node at fault
                raise RuntimeError("node %r (%s) failed: %s: %s" % (n.name, n.op_type, type(e).__name__, e)) from e
            outs = out if isinstance(out, tuple) else (out,)
            for name, v in zip(n.outputs, outs):
                if name:
                    env[name] = np.asarray(v) if be is H else v
            for name in n.inputs:
                if name and self.last_use.get(name) == i and name not in self.consts:
                    env.pop(name, None)
        names = output_names or self.output_names
        return [B.to_numpy(env[name]) if not isinstance(env[name], np.ndarray) else env[name] for name in names]

"""OnyxRuntimeBackend: onnx.backend.base.Backend over onyxruntime."""

import os

import numpy as np
import onnx
from onnx import helper, shape_inference

from ..capi._options import SessionOptions
from ..capi.onnxruntime_inference_collection import InferenceSession, get_available_providers, get_supported_operators
from ..capi._errors import not_implemented
from .backend_rep import OnyxRuntimeBackendRep

# SessionOptions attributes prepare(**kwargs) may set: onnxruntime's backend
# allowlist. Options that write files (profiling, optimized model) are not
# reachable from the backend API, in either runtime.
ALLOWED_SESSION_OPTIONS = frozenset({
    "enable_cpu_mem_arena", "enable_mem_pattern", "enable_mem_reuse", "execution_mode", "execution_order",
    "graph_optimization_level", "inter_op_num_threads", "intra_op_num_threads", "log_severity_level",
    "log_verbosity_level", "logid", "use_deterministic_compute", "use_per_session_threads",
})

_DEVICE = "CPU"


def _session_options_from_kwargs(kwargs):
    options = SessionOptions()
    for key, value in kwargs.items():
        if key in ALLOWED_SESSION_OPTIONS:
            if not hasattr(options, key):
                # In onnxruntime's list but not an onyxruntime SessionOptions
                # attribute (memory-arena and determinism knobs): refusing is
                # better than pretending the setting took effect.
                raise not_implemented("SessionOptions attribute '%s' is not supported by onyxruntime" % key)
            setattr(options, key, value)
        elif hasattr(options, key):
            raise RuntimeError("SessionOptions attribute '%s' is not permitted via the backend API. "
                               "Allowed attributes: %s" % (key, ", ".join(sorted(ALLOWED_SESSION_OPTIONS))))
        # Other keys are ignored, as onnxruntime does: run_model hands one
        # kwargs dict to both prepare() and run(), so run-only keys land here.
    return options


class OnyxRuntimeBackend:
    """The ONNX backend API (see onnx.backend.base.Backend), running on the
    CPU provider. All methods are class methods, as in onnx's base class."""

    @classmethod
    def is_compatible(cls, model, device=None, **kwargs):
        """Whether `model` can be run on `device` (None: the default 'CPU'):
        every node, subgraphs included, has a kernel in the CPU provider's
        registry (read through the C API) at the opset the model imports, is
        an operator ONNX defines as a function, or calls one of the model's
        own functions. prepare() is the final word: it also checks types."""
        if not cls.supports_device(_DEVICE if device is None else device):
            return False
        return not _unsupported_nodes(model)

    @classmethod
    def supports_device(cls, device):
        """True for 'CPU', and for 'CUDA' where CUDAExecutionProvider is
        available (nodes without a CUDA kernel then run on the CPU)."""
        if device == _DEVICE:
            return True
        return device == "CUDA" and "CUDAExecutionProvider" in get_available_providers()

    @classmethod
    def prepare(cls, model, device=None, **kwargs):
        """Loads `model` and returns an OnyxRuntimeBackendRep ready to run.

        :param model: an onnx.ModelProto, serialized model bytes, a file path,
            an onyxruntime.InferenceSession or an OnyxRuntimeBackendRep (both
            returned wrapped as they are; kwargs are then ignored).
        :param device: None or 'CPU', or 'CUDA' where available.
        :param kwargs: SessionOptions attributes of the same name, from
            onnxruntime's backend allowlist (graph_optimization_level,
            intra_op_num_threads, execution_mode, logid, ...); other
            SessionOptions attributes raise RuntimeError, unknown keys are
            ignored (both as onnxruntime).
        """
        if device is not None and not cls.supports_device(device):
            raise RuntimeError("Incompatible device: '%s' was requested but the onyxruntime backend runs here only "
                               "on %s" % (device, "'CPU' and 'CUDA'" if cls.supports_device("CUDA") else "'CPU'"))
        if isinstance(model, OnyxRuntimeBackendRep):
            return model
        if isinstance(model, InferenceSession):
            return OnyxRuntimeBackendRep(model)
        if isinstance(model, onnx.ModelProto):
            model = model.SerializeToString()
        elif not isinstance(model, (bytes, bytearray, memoryview, str, os.PathLike)):
            raise TypeError("model must be an onnx.ModelProto, bytes or a path, got %s" % type(model).__name__)
        options = _session_options_from_kwargs(kwargs)
        providers = ["CPUExecutionProvider"]
        if device == "CUDA":
            providers.insert(0, "CUDAExecutionProvider")
        session = InferenceSession(model, sess_options=options, providers=providers)
        return OnyxRuntimeBackendRep(session)

    @classmethod
    def run_model(cls, model, inputs, device=None, **kwargs):
        """prepare(model, device) then run(inputs); returns the outputs as a list.

        kwargs may mix SessionOptions attributes (for prepare) and RunOptions
        attributes (for run), as onnxruntime's run does."""
        return cls.prepare(model, device, **kwargs).run(inputs, **kwargs)

    @classmethod
    def run_node(cls, node, inputs, device="CPU", outputs_info=None, **kwargs):
        """Runs one NodeProto by wrapping it in a one-node model.

        :param node: the onnx.NodeProto.
        :param inputs: arrays for the node's non-empty inputs, in order (a
            list), or {input name: array}.
        :param device: 'CPU'.
        :param outputs_info: optional [(numpy dtype, shape), ...] for the
            node's non-empty outputs; without it onnx shape inference types
            them.
        :param kwargs: opset_version (default: onnx's newest opset of the
            default domain), then anything run_model accepts.
        :return: list of output arrays.
        """
        opset_version = kwargs.pop("opset_version", None)
        model = make_node_model(node, inputs, outputs_info, opset_version)
        feed = inputs if isinstance(inputs, dict) else list(inputs)
        return cls.run_model(model, feed, device, **kwargs)


def _kernel_index():
    index = {}
    for domain, op, since, end in get_supported_operators("CPUExecutionProvider"):
        index.setdefault((domain, op), []).append((since, end))
    return index


def _unsupported_nodes(model):
    """(domain, op_type, opset) of the nodes of `model` nothing can run."""
    kernels = _kernel_index()
    opsets = {("" if o.domain == "ai.onnx" else o.domain): o.version for o in model.opset_import}
    local = {(f.domain, f.name) for f in model.functions}
    missing = []

    def visit(graph):
        for node in graph.node:
            domain = "" if node.domain == "ai.onnx" else node.domain
            for attr in node.attribute:
                if attr.type == onnx.AttributeProto.GRAPH:
                    visit(attr.g)
                for g in attr.graphs:
                    visit(g)
            if (node.domain, node.op_type) in local:
                continue
            version = opsets.get(domain)
            if version is None:
                missing.append((domain, node.op_type, None))
                continue
            if any(s <= version <= e for s, e in kernels.get((domain, node.op_type), ())):
                continue
            try:
                schema = onnx.defs.get_schema(node.op_type, version, domain)
            except Exception:  # no schema at all
                missing.append((domain, node.op_type, version))
                continue
            if not (schema.has_function or schema.has_context_dependent_function):
                missing.append((domain, node.op_type, version))

    visit(model.graph)
    return missing


def _value_info(name, dtype, shape):
    dtype = np.dtype(dtype)
    elem = onnx.TensorProto.STRING if dtype.kind in "OUS" else helper.np_dtype_to_tensor_dtype(dtype)
    return helper.make_tensor_value_info(name, elem, list(shape))


def make_node_model(node, inputs, outputs_info=None, opset_version=None):
    """A ModelProto whose graph is `node` alone: graph inputs typed from
    `inputs`, graph outputs from `outputs_info` or from shape inference."""
    input_names = [n for n in node.input if n]
    if isinstance(inputs, dict):
        arrays = [np.asarray(inputs[n]) for n in input_names]
    else:
        arrays = [np.asarray(a) for a in inputs]
        if len(arrays) != len(input_names):
            raise ValueError("node %r has %d non-empty input(s) %s but %d value(s) were given"
                             % (node.op_type, len(input_names), input_names, len(arrays)))
    graph_inputs = [_value_info(n, a.dtype, a.shape) for n, a in zip(input_names, arrays)]
    output_names = [n for n in node.output if n]
    if outputs_info is not None:
        if len(outputs_info) != len(output_names):
            raise ValueError("outputs_info has %d entries for %d output(s)" % (len(outputs_info), len(output_names)))
        graph_outputs = [_value_info(n, dt, shape) for n, (dt, shape) in zip(output_names, outputs_info)]
    else:
        graph_outputs = [helper.make_empty_tensor_value_info(n) for n in output_names]
    opsets = [helper.make_opsetid("", opset_version or onnx.defs.onnx_opset_version())]
    if node.domain not in ("", "ai.onnx"):
        opsets.append(helper.make_opsetid(node.domain, 1))
    graph = helper.make_graph([node], "onyx_run_node_" + (node.op_type or "node"), graph_inputs, graph_outputs)
    model = helper.make_model(graph, opset_imports=opsets)
    if outputs_info is None:
        model = _typed_outputs(model)
    return model


def _typed_outputs(model):
    # Shape inference types intermediate values but leaves untyped graph
    # outputs alone, so copy what it found for each output back onto it.
    inferred = shape_inference.infer_shapes(model)
    found = {vi.name: vi for vi in list(inferred.graph.value_info) + list(inferred.graph.output)
             if vi.type.WhichOneof("value") is not None}
    for out in model.graph.output:
        if out.name in found and out.type.WhichOneof("value") is None:
            out.type.CopyFrom(found[out.name].type)
    return model


# onnxruntime's class name, for code that imports it from this module.
OnnxRuntimeBackend = OnyxRuntimeBackend

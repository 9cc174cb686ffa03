#!/usr/bin/env python3
"""Deterministic generators for the end-to-end test models.

Builds ResNet-50, MobileNetV2 and a BERT-base-style encoder with onnx.helper and
seeded numpy weights (opset 17, IR version 8, symbolic "batch"/"sequence" dims).
The weights are random but scaled like trained networks (He init for convs,
BatchNorm running stats with positive variance, LayerNorm gammas near 1), so
activations stay finite and the outputs are not degenerate.

    python tests/models/generate.py --out DIR [--only resnet50,bert,mobilenetv2] [--small]

writes DIR/<name>.onnx plus DIR/<name>.onnx.stamp; a model whose stamp matches
this generator's version and parameters is not rebuilt, so reruns are instant.
--small only shrinks BERT (2 layers, vocab 1000); the CNNs have one size.
"""

import argparse
import json
import math
import os
import sys
import time

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

# Bump when any generator changes what it writes: cached files are rebuilt.
GENERATOR_VERSION = 3

OPSET = 17
IR_VERSION = 8
MODEL_NAMES = ("resnet50", "mobilenetv2", "bert")
# Benchmark-only models (tests/bench/bench_suite.py); not generated for the tests.
BENCH_MODEL_NAMES = ("gpt2", "mlp")

SEEDS = {"resnet50": 50, "mobilenetv2": 2, "bert": 768, "gpt2": 124, "mlp": 3}


def bert_config(small=False):
    """Sizes of the BERT model; tests use these to pick valid input ids."""
    return {
        "layers": 2 if small else 12,
        "hidden": 768,
        "heads": 12,
        "intermediate": 3072,
        "vocab": 1000 if small else 30522,
        "max_positions": 512,
        "type_vocab": 2,
        "ln_eps": 1e-12,
    }


class GraphBuilder:
    """Collects nodes and initializers; hands out unique value names."""

    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)
        self.nodes = []
        self.initializers = []
        self._names = set()
        self._consts = {}

    def _unique(self, name):
        base, i = name, 1
        while name in self._names:
            name = "%s_%d" % (base, i)
            i += 1
        self._names.add(name)
        return name

    def init(self, name, array):
        """Adds an initializer; returns its (unique) name."""
        name = self._unique(name)
        self.initializers.append(numpy_helper.from_array(np.asarray(array, order="C"), name))
        return name

    def const(self, values, dtype):
        """Shared small constant initializer (like exporter-folded Constants)."""
        arr = np.array(values, dtype=dtype)
        key = (arr.dtype.str, arr.shape, arr.tobytes())
        if key not in self._consts:
            flat = "_".join(str(v) for v in arr.ravel()[:4]).replace("-", "m").replace(".", "p")
            self._consts[key] = self.init("const_%s_%s" % (arr.dtype.name, flat or "empty"), arr)
        return self._consts[key]

    def op(self, op_type, inputs, name, n_out=1, **attrs):
        """Adds one node named `name`; returns its output name(s)."""
        node_name = self._unique(name)
        outs = [self._unique("%s_output_%d" % (node_name, i)) for i in range(n_out)]
        self.nodes.append(helper.make_node(op_type, list(inputs), outs, name=node_name, **attrs))
        return outs[0] if n_out == 1 else outs

    def normal(self, shape, std, mean=0.0):
        return (self.rng.standard_normal(shape, dtype=np.float32) * np.float32(std)
                + np.float32(mean)).astype(np.float32)

    def uniform(self, shape, low, high):
        return self.rng.uniform(low, high, size=shape).astype(np.float32)


def _finish_model(b, graph_name, inputs, outputs, doc, arch, extra_meta):
    graph = helper.make_graph(b.nodes, graph_name, inputs, outputs, b.initializers,
                              doc_string=doc)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                              ir_version=IR_VERSION, producer_name="onyx-tests",
                              producer_version=str(GENERATOR_VERSION), doc_string=doc,
                              model_version=GENERATOR_VERSION)
    meta = {"architecture": arch, "generator": "tests/models/generate.py",
            "seed": str(SEEDS[arch]), "weights": "random, seeded (not trained)"}
    meta.update(extra_meta)
    helper.set_model_props(model, meta)
    return model


# --------------------------------------------------------------------------- CNN parts

def conv_bn(b, x, cin, cout, k, stride, prefix, group=1, gamma_scale=1.0):
    """Conv (no bias, He init) followed by an unfolded BatchNormalization."""
    fan_in = (cin // group) * k * k
    w = b.init(prefix + ".conv.weight", b.normal((cout, cin // group, k, k), math.sqrt(2.0 / fan_in)))
    pad = (k - 1) // 2
    y = b.op("Conv", [x, w], "/%s/Conv" % prefix.replace(".", "/"),
             kernel_shape=[k, k], strides=[stride, stride], pads=[pad] * 4,
             dilations=[1, 1], group=group)
    return batch_norm(b, y, cout, prefix, gamma_scale)


def batch_norm(b, x, c, prefix, gamma_scale=1.0):
    scale = b.init(prefix + ".bn.weight", b.normal((c,), 0.05, 1.0) * np.float32(gamma_scale))
    bias = b.init(prefix + ".bn.bias", b.normal((c,), 0.05))
    mean = b.init(prefix + ".bn.running_mean", b.normal((c,), 0.05))
    var = b.init(prefix + ".bn.running_var", b.uniform((c,), 0.8, 1.2))
    return b.op("BatchNormalization", [x, scale, bias, mean, var],
                "/%s/BatchNormalization" % prefix.replace(".", "/"),
                epsilon=1e-5, momentum=0.9)


def classifier(b, x, cin, ncls=1000, out_name="logits"):
    g = b.op("GlobalAveragePool", [x], "/GlobalAveragePool")
    f = b.op("Flatten", [g], "/Flatten", axis=1)
    bound = 1.0 / math.sqrt(cin)
    w = b.init("fc.weight", b.uniform((ncls, cin), -bound, bound) * np.float32(math.sqrt(3.0)))
    bias = b.init("fc.bias", b.uniform((ncls,), -bound, bound))
    b.nodes.append(helper.make_node("Gemm", [f, w, bias], [out_name], name="/fc/Gemm",
                                    alpha=1.0, beta=1.0, transB=1))
    return out_name


def build_resnet50():
    b = GraphBuilder(SEEDS["resnet50"])
    x = "input"
    y = conv_bn(b, x, 3, 64, 7, 2, "conv1")
    y = b.op("Relu", [y], "/relu/Relu")
    y = b.op("MaxPool", [y], "/maxpool/MaxPool", kernel_shape=[3, 3], strides=[2, 2],
             pads=[1, 1, 1, 1], ceil_mode=0)
    cin = 64
    for stage, (blocks, width) in enumerate(zip([3, 4, 6, 3], [64, 128, 256, 512]), start=1):
        cout = width * 4
        for i in range(blocks):
            p = "layer%d.%d" % (stage, i)
            stride = 2 if (i == 0 and stage > 1) else 1
            # torchvision v1.5: the stride sits on the 3x3 conv.
            h = conv_bn(b, y, cin, width, 1, 1, p + ".conv1")
            h = b.op("Relu", [h], "/%s/relu/Relu" % p.replace(".", "/"))
            h = conv_bn(b, h, width, width, 3, stride, p + ".conv2")
            h = b.op("Relu", [h], "/%s/relu_1/Relu" % p.replace(".", "/"))
            # Small last-BN gamma (as with zero-init residual) keeps the sum bounded.
            h = conv_bn(b, h, width, cout, 1, 1, p + ".conv3", gamma_scale=0.3)
            if i == 0:
                if stage == 3:
                    # ResNet-D style downsample: AvgPool 2x2/2 then a stride-1 1x1 conv.
                    s = b.op("AveragePool", [y], "/%s/downsample/AveragePool" % p.replace(".", "/"),
                             kernel_shape=[2, 2], strides=[2, 2], ceil_mode=1,
                             count_include_pad=0)
                    sc = conv_bn(b, s, cin, cout, 1, 1, p + ".downsample")
                else:
                    sc = conv_bn(b, y, cin, cout, 1, stride, p + ".downsample")
            else:
                sc = y
            y = b.op("Add", [h, sc], "/%s/Add" % p.replace(".", "/"))
            y = b.op("Relu", [y], "/%s/relu_2/Relu" % p.replace(".", "/"))
            cin = cout
    out = classifier(b, y, cin)
    inputs = [helper.make_tensor_value_info("input", TensorProto.FLOAT, ["batch", 3, 224, 224])]
    outputs = [helper.make_tensor_value_info(out, TensorProto.FLOAT, ["batch", 1000])]
    doc = ("ResNet-50 (v1.5 bottlenecks [3,4,6,3], ResNet-D avg-pool shortcut in layer3), "
           "unfolded BatchNorm, random seeded weights. Generated for Onyx Runtime tests.")
    return _finish_model(b, "resnet50", inputs, outputs, doc, "resnet50",
                         {"input_layout": "NCHW", "num_classes": "1000"})


def build_mobilenetv2():
    b = GraphBuilder(SEEDS["mobilenetv2"])
    zero = b.init("clip_min", np.array(0.0, dtype=np.float32))
    six = b.init("clip_max", np.array(6.0, dtype=np.float32))

    def relu6(x, prefix):
        return b.op("Clip", [x, zero, six], "/%s/Clip" % prefix.replace(".", "/"))

    y = conv_bn(b, "input", 3, 32, 3, 2, "features.0")
    y = relu6(y, "features.0")
    cin = 32
    idx = 1
    settings = [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2),
                (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1)]
    for t, c, n, s in settings:
        for i in range(n):
            stride = s if i == 0 else 1
            p = "features.%d" % idx
            hidden = cin * t
            h = y
            if t != 1:
                h = conv_bn(b, h, cin, hidden, 1, 1, p + ".expand")
                h = relu6(h, p + ".expand")
            h = conv_bn(b, h, hidden, hidden, 3, stride, p + ".dw", group=hidden)
            h = relu6(h, p + ".dw")
            use_res = stride == 1 and cin == c
            # Linear bottleneck; a smaller gamma on residual blocks bounds the sum.
            h = conv_bn(b, h, hidden, c, 1, 1, p + ".project",
                        gamma_scale=0.5 if use_res else 1.0)
            if use_res:
                h = b.op("Add", [y, h], "/%s/Add" % p.replace(".", "/"))
            y = h
            cin = c
            idx += 1
    y = conv_bn(b, y, cin, 1280, 1, 1, "features.%d" % idx)
    y = relu6(y, "features.%d" % idx)
    out = classifier(b, y, 1280)
    inputs = [helper.make_tensor_value_info("input", TensorProto.FLOAT, ["batch", 3, 224, 224])]
    outputs = [helper.make_tensor_value_info(out, TensorProto.FLOAT, ["batch", 1000])]
    doc = ("MobileNetV2 (width 1.0, 224x224): inverted residuals with depthwise convs, "
           "ReLU6 as Clip(0, 6), unfolded BatchNorm, random seeded weights. "
           "Generated for Onyx Runtime tests.")
    return _finish_model(b, "mobilenetv2", inputs, outputs, doc, "mobilenetv2",
                         {"input_layout": "NCHW", "num_classes": "1000", "width_mult": "1.0"})


# --------------------------------------------------------------------------- BERT

def build_bert(small=False):
    cfg = bert_config(small)
    b = GraphBuilder(SEEDS["bert"])
    H, NH = cfg["hidden"], cfg["heads"]
    HD = H // NH
    I64, F32 = np.int64, np.float32

    def linear(x, cin, cout, prefix):
        w = b.init(prefix + ".weight", b.normal((cin, cout), 1.0 / math.sqrt(cin)))
        bias = b.init(prefix + ".bias", b.normal((cout,), 0.02))
        path = "/" + prefix.replace(".", "/")
        y = b.op("MatMul", [x, w], path + "/MatMul")
        return b.op("Add", [bias, y], path + "/Add")

    def dims(x, prefix):
        """Shape -> Gather -> Unsqueeze for dims 0 and 1, as torch.onnx emits for x.size()."""
        shp = b.op("Shape", [x], prefix + "/Shape")
        out = []
        for d in (0, 1):
            g = b.op("Gather", [shp, b.const(d, I64)], prefix + "/Gather", axis=0)
            out.append(b.op("Unsqueeze", [g, b.const([0], I64)], prefix + "/Unsqueeze"))
        return out

    # ---- embeddings
    word = b.init("embeddings.word_embeddings.weight", b.normal((cfg["vocab"], H), 0.02))
    pos_table = b.init("embeddings.position_embeddings.weight",
                       b.normal((cfg["max_positions"], H), 0.02))
    type_table = b.init("embeddings.token_type_embeddings.weight",
                        b.normal((cfg["type_vocab"], H), 0.02))
    pos_ids_buf = b.init("embeddings.position_ids",
                         np.arange(cfg["max_positions"], dtype=I64).reshape(1, -1))

    ids_shape = b.op("Shape", ["input_ids"], "/embeddings/Shape")
    seq_len = b.op("Gather", [ids_shape, b.const(1, I64)], "/embeddings/Gather", axis=0)
    seq_len_1d = b.op("Unsqueeze", [seq_len, b.const([0], I64)], "/embeddings/Unsqueeze")
    # position_ids = self.position_ids[:, 0:seq_len]
    pos_ids = b.op("Slice", [pos_ids_buf,
                             b.const([0], I64), seq_len_1d, b.const([1], I64), b.const([1], I64)],
                   "/embeddings/Slice")
    # position_ids.expand(batch, seq): torch.onnx's ConstantOfShape/Equal/Where guard
    # that keeps -1 entries of the target as "leave this dim alone".
    batch_1d = b.op("Unsqueeze", [b.op("Gather", [ids_shape, b.const(0, I64)],
                                       "/embeddings/Gather", axis=0),
                                  b.const([0], I64)], "/embeddings/Unsqueeze")
    target = b.op("Concat", [batch_1d, seq_len_1d], "/embeddings/Concat", axis=0)
    ones = b.op("ConstantOfShape", [b.op("Shape", [target], "/embeddings/Shape")],
                "/embeddings/ConstantOfShape",
                value=numpy_helper.from_array(np.array([1], dtype=I64)))
    minus_ones = b.op("Mul", [ones, b.const(-1, I64)], "/embeddings/Mul")
    is_keep = b.op("Equal", [target, minus_ones], "/embeddings/Equal")
    exp_shape = b.op("Where", [is_keep, ones, target], "/embeddings/Where")
    pos_ids = b.op("Expand", [pos_ids, exp_shape], "/embeddings/Expand")

    e = b.op("Gather", [word, "input_ids"], "/embeddings/word_embeddings/Gather", axis=0)
    t = b.op("Gather", [type_table, "token_type_ids"],
             "/embeddings/token_type_embeddings/Gather", axis=0)
    e = b.op("Add", [e, t], "/embeddings/Add")
    p = b.op("Gather", [pos_table, pos_ids], "/embeddings/position_embeddings/Gather", axis=0)
    e = b.op("Add", [e, p], "/embeddings/Add_1")

    # Embedding LayerNorm as older exporters decompose it.
    ln = "/embeddings/LayerNorm"
    mu = b.op("ReduceMean", [e], ln + "/ReduceMean", axes=[-1], keepdims=1)
    d = b.op("Sub", [e, mu], ln + "/Sub")
    sq = b.op("Pow", [d, b.const(2.0, F32)], ln + "/Pow")
    var = b.op("ReduceMean", [sq], ln + "/ReduceMean_1", axes=[-1], keepdims=1)
    var = b.op("Add", [var, b.const(cfg["ln_eps"], F32)], ln + "/Add")
    std = b.op("Sqrt", [var], ln + "/Sqrt")
    nrm = b.op("Div", [d, std], ln + "/Div")
    g = b.init("embeddings.LayerNorm.weight", b.normal((H,), 0.05, 1.0))
    beta = b.init("embeddings.LayerNorm.bias", b.normal((H,), 0.02))
    h = b.op("Add", [b.op("Mul", [nrm, g], ln + "/Mul"), beta], ln + "/Add_1")

    # ---- extended attention mask: (1 - mask[:, None, None, :].float()) * finfo.min
    m = b.op("Unsqueeze", ["attention_mask", b.const([1, 2], I64)], "/Unsqueeze")
    m = b.op("Cast", [m], "/Cast", to=TensorProto.FLOAT)
    m = b.op("Sub", [b.const(1.0, F32), m], "/Sub")
    ext_mask = b.op("Mul", [m, b.const(np.finfo(np.float32).min, F32)], "/Mul")

    # ---- encoder
    inv_scale = b.const(math.sqrt(HD), F32)
    for li in range(cfg["layers"]):
        P = "encoder.layer.%d" % li
        A = "/" + P.replace(".", "/") + "/attention/self"
        bsz, seq = dims(h, A)
        heads_shape = b.op("Concat", [bsz, seq, b.const([NH], I64), b.const([HD], I64)],
                           A + "/Concat", axis=0)
        q = linear(h, H, H, P + ".attention.self.query")
        k = linear(h, H, H, P + ".attention.self.key")
        v = linear(h, H, H, P + ".attention.self.value")
        q = b.op("Transpose", [b.op("Reshape", [q, heads_shape], A + "/Reshape")],
                 A + "/Transpose", perm=[0, 2, 1, 3])
        kt = b.op("Transpose", [b.op("Reshape", [k, heads_shape], A + "/Reshape")],
                  A + "/Transpose", perm=[0, 2, 3, 1])
        v = b.op("Transpose", [b.op("Reshape", [v, heads_shape], A + "/Reshape")],
                 A + "/Transpose", perm=[0, 2, 1, 3])
        s = b.op("MatMul", [q, kt], A + "/MatMul")
        s = b.op("Div", [s, inv_scale], A + "/Div")
        s = b.op("Add", [s, ext_mask], A + "/Add")
        probs = b.op("Softmax", [s], A + "/Softmax", axis=-1)
        ctx = b.op("MatMul", [probs, v], A + "/MatMul_1")
        ctx = b.op("Transpose", [ctx], A + "/Transpose", perm=[0, 2, 1, 3])
        merged_shape = b.op("Concat", [bsz, seq, b.const([H], I64)], A + "/Concat", axis=0)
        ctx = b.op("Reshape", [ctx, merged_shape], A + "/Reshape")

        O = "/" + P.replace(".", "/") + "/attention/output"
        a = linear(ctx, H, H, P + ".attention.output.dense")
        a = b.op("Add", [a, h], O + "/Add")
        a = b.op("LayerNormalization",
                 [a, b.init(P + ".attention.output.LayerNorm.weight", b.normal((H,), 0.05, 1.0)),
                  b.init(P + ".attention.output.LayerNorm.bias", b.normal((H,), 0.02))],
                 O + "/LayerNorm/LayerNormalization", axis=-1, epsilon=cfg["ln_eps"])

        F = "/" + P.replace(".", "/") + "/intermediate"
        f = linear(a, H, cfg["intermediate"], P + ".intermediate.dense")
        # GELU (exact): x * 0.5 * (1 + erf(x / sqrt(2))), as torch.onnx writes it.
        gate = b.op("Erf", [b.op("Div", [f, b.const(math.sqrt(2.0), F32)], F + "/Div")],
                    F + "/Erf")
        gate = b.op("Add", [gate, b.const(1.0, F32)], F + "/Add")
        f = b.op("Mul", [b.op("Mul", [f, gate], F + "/Mul"), b.const(0.5, F32)], F + "/Mul_1")

        O2 = "/" + P.replace(".", "/") + "/output"
        o = linear(f, cfg["intermediate"], H, P + ".output.dense")
        o = b.op("Add", [o, a], O2 + "/Add")
        h = b.op("LayerNormalization",
                 [o, b.init(P + ".output.LayerNorm.weight", b.normal((H,), 0.05, 1.0)),
                  b.init(P + ".output.LayerNorm.bias", b.normal((H,), 0.02))],
                 O2 + "/LayerNorm/LayerNormalization", axis=-1, epsilon=cfg["ln_eps"])

    b.nodes[-1].output[0] = "last_hidden_state"
    h = "last_hidden_state"

    # ---- pooler: tanh(dense(hidden[:, 0]))
    first = b.op("Slice", [h, b.const([0], I64), b.const([1], I64), b.const([1], I64)],
                 "/pooler/Slice")
    first = b.op("Squeeze", [first, b.const([1], I64)], "/pooler/Squeeze")
    pooled = linear(first, H, H, "pooler.dense")
    b.nodes.append(helper.make_node("Tanh", [pooled], ["pooler_output"], name="/pooler/Tanh"))

    inputs = [helper.make_tensor_value_info(n, TensorProto.INT64, ["batch", "sequence"])
              for n in ("input_ids", "attention_mask", "token_type_ids")]
    outputs = [helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT,
                                             ["batch", "sequence", H]),
               helper.make_tensor_value_info("pooler_output", TensorProto.FLOAT, ["batch", H])]
    doc = ("BERT-base-style encoder (%d layers, hidden %d, %d heads, vocab %d) in the form "
           "torch.onnx exports it; random seeded weights. Generated for Onyx Runtime tests."
           % (cfg["layers"], H, NH, cfg["vocab"]))
    return _finish_model(b, "bert", inputs, outputs, doc, "bert",
                         {"num_layers": str(cfg["layers"]), "vocab_size": str(cfg["vocab"]),
                          "max_position_embeddings": str(cfg["max_positions"])})


# --------------------------------------------------------------------------- GPT-2

def gpt2_config(small=False):
    """GPT-2 small's sizes; --small keeps the shape of the graph with 2 layers and vocab 1000."""
    return {"layers": 2 if small else 12, "hidden": 768, "heads": 12, "vocab": 1000 if small else 50257,
            "max_positions": 1024, "ln_eps": 1e-5}


def build_gpt2(small=False):
    """A GPT-2-small-style decoder with a KV cache, in the form exporters write
    it for generation: inputs input_ids [batch, seq] and, per layer,
    past_key_values.<i>.key/value [batch, heads, past, head_dim] (past may be
    0: the prefill); outputs logits [batch, seq, vocab] and present.<i>.key/value
    [batch, heads, past + seq, head_dim]. Causal mask from the positions,
    tanh-approximated GELU, pre-LayerNorm blocks, a separate LM head."""
    cfg = gpt2_config(small)
    b = GraphBuilder(SEEDS["gpt2"])
    H, NH, V = cfg["hidden"], cfg["heads"], cfg["vocab"]
    HD = H // NH
    I64, F32 = np.int64, np.float32

    def linear(x, cin, cout, prefix):
        w = b.init(prefix + ".weight", b.normal((cin, cout), 0.02))
        bias = b.init(prefix + ".bias", b.normal((cout,), 0.02))
        return b.op("Add", [b.op("MatMul", [x, w], "/" + prefix + "/MatMul"), bias], "/" + prefix + "/Add")

    def layer_norm(x, prefix):
        g = b.init(prefix + ".weight", b.normal((H,), 0.05, 1.0))
        beta = b.init(prefix + ".bias", b.normal((H,), 0.02))
        return b.op("LayerNormalization", [x, g, beta], "/" + prefix + "/LayerNormalization", axis=-1,
                    epsilon=cfg["ln_eps"])

    ids_shape = b.op("Shape", ["input_ids"], "/Shape")
    batch = b.op("Gather", [ids_shape, b.const([0], I64)], "/Gather_batch", axis=0)
    seq = b.op("Gather", [ids_shape, b.const(1, I64)], "/Gather_seq", axis=0)
    past = b.op("Gather", [b.op("Shape", ["past_key_values.0.key"], "/Shape_past"), b.const(2, I64)],
                "/Gather_past", axis=0)
    total = b.op("Add", [past, seq], "/Add_total")
    # Positions past .. past+seq-1 for the queries, 0 .. total-1 for the keys.
    q_pos = b.op("Range", [past, total, b.const(1, I64)], "/Range_q")
    k_pos = b.op("Range", [b.const(0, I64), total, b.const(1, I64)], "/Range_k")
    wte = b.init("transformer.wte.weight", b.normal((V, H), 0.02))
    wpe = b.init("transformer.wpe.weight", b.normal((cfg["max_positions"], H), 0.01))
    h = b.op("Add", [b.op("Gather", [wte, "input_ids"], "/wte/Gather", axis=0),
                     b.op("Gather", [wpe, q_pos], "/wpe/Gather", axis=0)], "/Add_embed")
    # mask[q, k] = 0 where k <= q, the float minimum elsewhere: [seq, total]
    allowed = b.op("LessOrEqual", [b.op("Unsqueeze", [k_pos, b.const([0], I64)], "/Unsqueeze_k"),
                                   b.op("Unsqueeze", [q_pos, b.const([1], I64)], "/Unsqueeze_q")], "/LessOrEqual")
    mask = b.op("Where", [allowed, b.const(0.0, F32), b.const(np.finfo(np.float32).min, F32)], "/Where_mask")
    heads_shape = b.op("Concat", [batch, b.op("Unsqueeze", [seq, b.const([0], I64)], "/Unsqueeze_seq"),
                                  b.const([NH, HD], I64)], "/Concat_heads", axis=0)
    merged_shape = b.op("Concat", [batch, b.op("Unsqueeze", [seq, b.const([0], I64)], "/Unsqueeze_seq"),
                                   b.const([H], I64)], "/Concat_merged", axis=0)
    inputs = [helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "sequence"])]
    outputs = [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", "sequence", V])]
    scale = b.const(1.0 / math.sqrt(HD), F32)
    for li in range(cfg["layers"]):
        P = "transformer.h.%d" % li
        a = layer_norm(h, P + ".ln_1")
        qkv = linear(a, H, 3 * H, P + ".attn.c_attn")
        q, k, v = b.op("Split", [qkv, b.const([H, H, H], I64)], "/%s/attn/Split" % P, n_out=3, axis=-1)
        q, k, v = [b.op("Transpose", [b.op("Reshape", [t, heads_shape], "/%s/attn/Reshape" % P)],
                        "/%s/attn/Transpose" % P, perm=[0, 2, 1, 3]) for t in (q, k, v)]
        past_k, past_v = "past_key_values.%d.key" % li, "past_key_values.%d.value" % li
        for name in (past_k, past_v):
            inputs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, ["batch", NH, "past", HD]))
        k = b.op("Concat", [past_k, k], "/%s/attn/Concat_k" % P, axis=2)
        v = b.op("Concat", [past_v, v], "/%s/attn/Concat_v" % P, axis=2)
        b.nodes[-2].output[0] = "present.%d.key" % li
        b.nodes[-1].output[0] = "present.%d.value" % li
        k, v = "present.%d.key" % li, "present.%d.value" % li
        for name in (k, v):
            outputs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, ["batch", NH, "total", HD]))
        s = b.op("MatMul", [q, b.op("Transpose", [k], "/%s/attn/Transpose_k" % P, perm=[0, 1, 3, 2])],
                 "/%s/attn/MatMul" % P)
        s = b.op("Add", [b.op("Mul", [s, scale], "/%s/attn/Mul" % P), mask], "/%s/attn/Add_mask" % P)
        ctx = b.op("MatMul", [b.op("Softmax", [s], "/%s/attn/Softmax" % P, axis=-1), v], "/%s/attn/MatMul_1" % P)
        ctx = b.op("Reshape", [b.op("Transpose", [ctx], "/%s/attn/Transpose_ctx" % P, perm=[0, 2, 1, 3]),
                               merged_shape], "/%s/attn/Reshape_ctx" % P)
        h = b.op("Add", [h, linear(ctx, H, H, P + ".attn.c_proj")], "/%s/Add_attn" % P)
        m = linear(layer_norm(h, P + ".ln_2"), H, 4 * H, P + ".mlp.c_fc")
        # GELU, tanh form: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
        cube = b.op("Mul", [b.op("Pow", [m, b.const(3.0, F32)], "/%s/mlp/Pow" % P), b.const(0.044715, F32)],
                    "/%s/mlp/Mul" % P)
        inner = b.op("Mul", [b.op("Add", [m, cube], "/%s/mlp/Add" % P), b.const(math.sqrt(2 / math.pi), F32)],
                     "/%s/mlp/Mul_1" % P)
        gate = b.op("Add", [b.op("Tanh", [inner], "/%s/mlp/Tanh" % P), b.const(1.0, F32)], "/%s/mlp/Add_1" % P)
        m = b.op("Mul", [b.op("Mul", [m, b.const(0.5, F32)], "/%s/mlp/Mul_2" % P), gate], "/%s/mlp/Mul_3" % P)
        h = b.op("Add", [h, linear(m, 4 * H, H, P + ".mlp.c_proj")], "/%s/Add_mlp" % P)
    h = layer_norm(h, "transformer.ln_f")
    lm = b.init("lm_head.weight", b.normal((H, V), 0.02))
    b.nodes.append(helper.make_node("MatMul", [h, lm], ["logits"], name="/lm_head/MatMul"))
    doc = ("GPT-2-small-style decoder (%d layers, hidden %d, %d heads, vocab %d) with a KV cache; random "
           "seeded weights. Generated for Onyx Runtime benchmarks." % (cfg["layers"], H, NH, V))
    return _finish_model(b, "gpt2", inputs, outputs, doc, "gpt2",
                         {"num_layers": str(cfg["layers"]), "vocab_size": str(V), "num_heads": str(NH),
                          "head_dim": str(HD)})


def build_mlp():
    """A tiny MLP (64 -> 128 -> 10, ReLU, Softmax): per-call overhead dominates."""
    b = GraphBuilder(SEEDS["mlp"])
    w1 = b.init("fc1.weight", b.normal((64, 128), 0.125))
    b1 = b.init("fc1.bias", b.normal((128,), 0.1))
    w2 = b.init("fc2.weight", b.normal((128, 10), 0.09))
    b2 = b.init("fc2.bias", b.normal((10,), 0.1))
    h = b.op("Relu", [b.op("Gemm", ["input", w1, b1], "/fc1/Gemm")], "/relu/Relu")
    logits = b.op("Gemm", [h, w2, b2], "/fc2/Gemm")
    b.nodes.append(helper.make_node("Softmax", [logits], ["probabilities"], name="/softmax/Softmax", axis=-1))
    inputs = [helper.make_tensor_value_info("input", TensorProto.FLOAT, ["batch", 64])]
    outputs = [helper.make_tensor_value_info("probabilities", TensorProto.FLOAT, ["batch", 10])]
    return _finish_model(b, "mlp", inputs, outputs, "Tiny MLP 64-128-10; random seeded weights.", "mlp", {})


BUILDERS = {
    "resnet50": lambda small: build_resnet50(),
    "mobilenetv2": lambda small: build_mobilenetv2(),
    "bert": build_bert,
    "gpt2": build_gpt2,
    "mlp": lambda small: build_mlp(),
}


# --------------------------------------------------------------------------- files

def _stamp_for(name, small):
    # --small only changes BERT and GPT-2; the other stamps ignore it so both runs share files.
    return {"generator_version": GENERATOR_VERSION, "model": name,
            "small": bool(small) if name in ("bert", "gpt2") else False,
            "opset": OPSET, "ir_version": IR_VERSION}


def model_path(out_dir, name):
    return os.path.join(out_dir, name + ".onnx")


def is_current(out_dir, name, small=False):
    path = model_path(out_dir, name)
    try:
        with open(path + ".stamp") as f:
            stamp = json.load(f)
        size = os.path.getsize(path)
    except (OSError, ValueError):
        return False
    want = _stamp_for(name, small)
    want["size"] = size
    return stamp == want


def build(name, small=False):
    """Returns the ModelProto for `name` (no file written)."""
    if name not in BUILDERS:
        raise ValueError("unknown model %r (expected one of %s)" % (name, ", ".join(BUILDERS)))
    return BUILDERS[name](small)


def ensure_model(out_dir, name, small=False, check=True, verbose=False):
    """Writes out_dir/<name>.onnx unless a current one is there; returns its path."""
    path = model_path(out_dir, name)
    if is_current(out_dir, name, small):
        if verbose:
            print("%s: up to date" % path)
        return path
    os.makedirs(out_dir, exist_ok=True)
    t0 = time.time()
    model = build(name, small)
    if check:
        onnx.checker.check_model(model, full_check=True)
    data = model.SerializeToString()
    del model
    # Write then rename so a concurrent reader never sees half a file.
    tmp = "%s.tmp.%d" % (path, os.getpid())
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)
    stamp = _stamp_for(name, small)
    stamp["size"] = len(data)
    with open(path + ".stamp.tmp.%d" % os.getpid(), "w") as f:
        json.dump(stamp, f)
    os.replace(path + ".stamp.tmp.%d" % os.getpid(), path + ".stamp")
    if verbose:
        print("%s: wrote %.1f MB in %.1fs" % (path, len(data) / 1e6, time.time() - t0))
    return path


def ensure_models(out_dir, names=MODEL_NAMES, small=False, check=True, verbose=False):
    return {n: ensure_model(out_dir, n, small, check, verbose) for n in names}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True, help="output folder")
    ap.add_argument("--only", default=",".join(MODEL_NAMES),
                    help="comma-separated subset of: " + ",".join(BUILDERS))
    ap.add_argument("--small", action="store_true", help="small BERT and GPT-2 (2 layers, vocab 1000)")
    ap.add_argument("--no-check", action="store_true", help="skip onnx.checker full check")
    args = ap.parse_args(argv)
    names = [n.strip() for n in args.only.split(",") if n.strip()]
    bad = [n for n in names if n not in BUILDERS]
    if bad:
        ap.error("unknown model(s): %s" % ", ".join(bad))
    ensure_models(args.out, names, args.small, not args.no_check, verbose=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

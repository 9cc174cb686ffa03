"""Models saved by onnxruntime's transformer optimizer
(onnxruntime.transformers.optimizer.optimize_model, CPU: use_gpu=False, no
float16 conversion) run on onyxruntime and match onnxruntime.

Sources: the project's generated BERT and GPT-2 (tests/models/generate.py).
The BERT generator writes the attention mask's [:, None, None, :] as one
Unsqueeze with axes [1, 2]; onnxruntime's attention fusion only matches the
two Unsqueezes torch.onnx writes, so a second BERT, 'bert_torch_mask', is the
same model with that one node split in two: there the optimizer fuses
Attention (or MultiHeadAttention). Fused operators seen with onnxruntime
1.31.1 (each case asserts its own):
  bert             SkipLayerNormalization, BiasGelu (FastGelu with gelu approximation)
  bert_torch_mask  + Attention, or MultiHeadAttention (use_multi_head_attention)
  gpt2             SkipLayerNormalization, FastGelu
opt_level 0 is the Python fusions alone; 1, 2 and 99 first save the model
from an onnxruntime session at BASIC / EXTENDED / ALL, then fuse.
enable_gemm_fast_gelu writes GemmFastGelu, which onnxruntime's CPU provider
cannot run: onyxruntime runs that model and matches onnxruntime running the
gelu-approximation model (the same MatMul and FastGelu with bias, unfused).

optimize_by_onnxruntime (opt_level >= 1) imports torch.version and reads it
only to choose a GPU provider; torch is not a test dependency (a multi-GB
wheel), so with use_gpu=False a stand-in module answers that import.

Stable Diffusion (model_type 'unet'): a generated UNet block in torch.onnx's
form (_unet_block) comes out with NhwcConv, GroupNorm or SkipGroupNorm,
BiasSplitGelu, BiasAdd and SkipLayerNormalization, operators onnxruntime runs
on GPUs only: onyxruntime runs the saved model and matches onnxruntime running
the block before optimization.

Sizes: the sweep over levels and fusion options runs on the small models
(2 layers, vocab 1000, cached under <model dir>/small/); one case runs the
project's BERT at its configured size (model_files: 12 layers unless
ONYX_TEST_SMALL_MODELS=1). Optimized files go to pytest's tmp dir.
"""

import importlib.util
import math
import os
import sys
import types

import numpy as np
import onnx
import onnxruntime as ort
import pytest
import sympy  # noqa: F401  onnxruntime's optimizer needs it (pinned in scripts/requirements.txt)
from onnx import TensorProto, helper, numpy_helper

HEADS, HIDDEN = 12, 768


@pytest.fixture(scope="module")
def optimizer():
    stub = importlib.util.find_spec("torch") is None
    if stub:
        torch, version = types.ModuleType("torch"), types.ModuleType("torch.version")
        version.hip = version.cuda = None
        torch.version = version
        sys.modules["torch"], sys.modules["torch.version"] = torch, version
    from onnxruntime.transformers import optimizer as opt
    yield opt
    if stub:
        del sys.modules["torch"], sys.modules["torch.version"]


@pytest.fixture(scope="module")
def small_models(model_generator, model_dir, tmp_path_factory):
    d = os.path.join(model_dir, "small")
    paths = {n: model_generator.ensure_model(d, n, small=True) for n in ("bert", "gpt2")}
    paths["bert_torch_mask"] = _torch_mask(paths["bert"], tmp_path_factory.mktemp("src"))
    return paths


def _torch_mask(src, out_dir):
    """The BERT with its mask Unsqueeze(axes [1, 2]) written as torch.onnx does:
    Unsqueeze(axes [1]) then Unsqueeze(axes [2])."""
    m = onnx.load(src)
    g = m.graph
    i, n = next((i, n) for i, n in enumerate(g.node) if n.op_type == "Unsqueeze" and n.input[0] == "attention_mask")
    g.initializer.extend([helper.make_tensor("mask_axis_1", onnx.TensorProto.INT64, [1], [1]),
                          helper.make_tensor("mask_axis_2", onnx.TensorProto.INT64, [1], [2])])
    first = helper.make_node("Unsqueeze", ["attention_mask", "mask_axis_1"], ["attention_mask_3d"], name=n.name)
    second = helper.make_node("Unsqueeze", ["attention_mask_3d", "mask_axis_2"], [n.output[0]], name=n.name + "_1")
    del g.node[i]
    g.node.insert(i, second)
    g.node.insert(i, first)
    path = str(out_dir / "bert_torch_mask.onnx")
    onnx.save(m, path)
    return path


def _options(optimizer_mod, model_type, variant):
    from onnxruntime.transformers.fusion_options import FusionOptions
    o = FusionOptions(model_type)
    if variant == "raw_mask":
        o.use_raw_attention_mask(True)
    elif variant == "no_mask":
        o.disable_attention_mask()
    elif variant == "mha":
        o.use_multi_head_attention = True
    elif variant == "gelu_approximation":
        o.enable_gelu_approximation = True
    elif variant == "gemm_fast_gelu":
        o.enable_gelu_approximation = o.enable_gemm_fast_gelu = True
    return o


def _optimize(optimizer_mod, src, model_type, level, variant, out_dir):
    m = optimizer_mod.optimize_model(src, model_type=model_type, num_heads=HEADS, hidden_size=HIDDEN,
                                     opt_level=level, use_gpu=False,
                                     optimization_options=_options(optimizer_mod, model_type, variant))
    path = str(out_dir / ("%s_%s_o%d.onnx" % (os.path.basename(src)[:-5], variant, level)))
    m.save_model_to_file(path)
    return path, {n.op_type for n in onnx.load(path, load_external_data=False).graph.node
                  if n.domain == "com.microsoft"}


def _feeds(sess, seed):
    rng = np.random.default_rng(seed)
    B, S, PAST = 2, 7, 3
    feeds = {}
    for i in sess.get_inputs():
        if i.type == "tensor(float)":  # GPT-2's past key/value [batch, heads, past, head size]
            shape = [B if k == 0 else (PAST if isinstance(d, str) else d) for k, d in enumerate(i.shape)]
            feeds[i.name] = rng.standard_normal(shape).astype(np.float32)
        elif "mask" in i.name:
            m = np.ones((B, S), np.int64)
            m[0, -2:] = 0  # right padding, the form BERT's mask index fusion assumes
            feeds[i.name] = m
        elif "token_type" in i.name:
            feeds[i.name] = np.zeros((B, S), np.int64)
        else:
            feeds[i.name] = rng.integers(0, 1000, (B, S), dtype=np.int64)
    return feeds


def _run_both(onyx, path, seed=0, ort_path=None):
    """`path` on both runtimes (onnxruntime runs `ort_path` instead when given)."""
    theirs = ort.InferenceSession(ort_path or path, providers=["CPUExecutionProvider"])
    feeds = _feeds(theirs, seed)
    want = theirs.run(None, feeds)
    got = onyx.InferenceSession(path, providers=["CPUExecutionProvider"]).run(None, feeds)
    assert len(got) == len(want)
    for k, (g, w) in enumerate(zip(got, want)):
        assert g.shape == w.shape and g.dtype == w.dtype, (k, g.shape, w.shape)
        scale = max(1.0, float(np.abs(w).max()))
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-4 * scale, err_msg="%s output %d" % (path, k))


FUSED = {
    ("bert", "default"): {"SkipLayerNormalization", "BiasGelu"},
    ("bert", "gelu_approximation"): {"SkipLayerNormalization", "FastGelu"},
    ("bert_torch_mask", "default"): {"Attention", "SkipLayerNormalization", "BiasGelu"},
    ("bert_torch_mask", "raw_mask"): {"Attention"},
    ("bert_torch_mask", "no_mask"): {"Attention"},
    ("bert_torch_mask", "mha"): {"MultiHeadAttention", "SkipLayerNormalization", "BiasGelu"},
    ("bert_torch_mask", "gelu_approximation"): {"Attention", "FastGelu"},
    ("gpt2", "default"): {"SkipLayerNormalization", "FastGelu"},
}

CASES = ([(name, variant, level) for (name, variant) in (("bert", "default"), ("bert_torch_mask", "default"),
                                                          ("bert_torch_mask", "mha"), ("gpt2", "default"))
          for level in (0, 1, 2, 99)] +
         [(name, variant, 0) for (name, variant) in FUSED if variant in ("gelu_approximation", "raw_mask", "no_mask")])


@pytest.mark.parametrize("name,variant,level", CASES, ids=["%s-%s-o%d" % c for c in CASES])
def test_optimized_small_models_match_onnxruntime(onyx, optimizer, small_models, tmp_path, name, variant, level):
    model_type = "gpt2" if name == "gpt2" else "bert"
    path, ops = _optimize(optimizer, small_models[name], model_type, level, variant, tmp_path)
    assert FUSED[(name, variant)] <= ops, "onnxruntime's optimizer wrote %s" % sorted(ops)
    _run_both(onyx, path)


@pytest.mark.parametrize("name", ["bert_torch_mask", "gpt2"])
def test_gemm_fast_gelu_model_matches_onnxruntime(onyx, optimizer, small_models, tmp_path, name):
    model_type = "gpt2" if name == "gpt2" else "bert"
    path, ops = _optimize(optimizer, small_models[name], model_type, 0, "gemm_fast_gelu", tmp_path)
    assert "GemmFastGelu" in ops and "FastGelu" not in ops, sorted(ops)
    unfused, ops = _optimize(optimizer, small_models[name], model_type, 0, "gelu_approximation", tmp_path)
    assert "FastGelu" in ops, sorted(ops)
    _run_both(onyx, path, ort_path=unfused)


def test_optimized_project_bert_matches_onnxruntime(onyx, optimizer, model_files, tmp_path):
    """The project's BERT at its configured size (torch's mask form, so
    Attention is fused), at opt_level 1."""
    src = _torch_mask(model_files.path("bert"), tmp_path)
    path, ops = _optimize(optimizer, src, "bert", 1, "default", tmp_path)
    assert FUSED[("bert_torch_mask", "default")] <= ops, sorted(ops)
    _run_both(onyx, path, seed=1)


def test_optimized_project_gpt2_matches_onnxruntime(onyx, optimizer, model_generator, model_files, tmp_path):
    """The project's GPT-2 at the configured size (kept under small/ when
    small, as the BERT is, so the two sizes do not overwrite each other), at
    opt_level 1."""
    d = os.path.join(model_files.dir, "small") if model_files.small else model_files.dir
    src = model_generator.ensure_model(d, "gpt2", small=model_files.small)
    path, ops = _optimize(optimizer, src, "gpt2", 1, "default", tmp_path)
    assert FUSED[("gpt2", "default")] <= ops, sorted(ops)
    _run_both(onyx, path, seed=2)


# --- Stable Diffusion ---

def _unet_block(path, temb=True, C=32, H=4, W=4, G=8, F=48, seed=0):
    """A Stable Diffusion UNet block (a ResNet half: Conv, + time embedding,
    GroupNorm + SiLU, Conv; a transformer half: tokens, residual + LayerNorm,
    GEGLU feed-forward, residual) in the form torch.onnx exports it, saved at
    `path`. Without `temb` the GroupNorm has no Add before it."""
    rng = np.random.default_rng(seed)
    nodes, inits = [], []
    cnt = [0]

    def init(name, arr):
        inits.append(numpy_helper.from_array(np.asarray(arr), name))
        return name

    def op(t, ins, **attrs):
        cnt[0] += 1
        out = "%s_%d" % (t.lower(), cnt[0])
        nodes.append(helper.make_node(t, ins, [out], name="/blk/%s_%d" % (t, cnt[0]), **attrs))
        return out

    f32 = lambda *s, std=1.0: (rng.standard_normal(s) * std).astype(np.float32)  # noqa: E731
    i64 = lambda v: np.array(v, np.int64)  # noqa: E731

    def group_norm(x, name):
        r = op("Reshape", [x, init(name + ".gshape", i64([0, G, -1]))])
        n = op("InstanceNormalization", [r, init(name + ".ones", np.ones(G, np.float32)),
                                         init(name + ".zeros", np.zeros(G, np.float32))], epsilon=1e-5)
        r = op("Reshape", [n, op("Shape", [x])])
        m = op("Mul", [r, init(name + ".weight", f32(C, 1, 1, std=0.2) + 1)])
        a = op("Add", [m, init(name + ".bias", f32(C, 1, 1, std=0.1))])
        return op("Mul", [a, op("Sigmoid", [a])])

    def conv(x, name):
        return op("Conv", [x, init(name + ".w", f32(C, C, 3, 3, std=1 / math.sqrt(9 * C))),
                           init(name + ".b", f32(C, std=0.1))], pads=[1, 1, 1, 1])

    def linear(x, cin, cout, name):
        return op("Add", [op("MatMul", [x, init(name + ".w", f32(cin, cout, std=1 / math.sqrt(cin)))]),
                          init(name + ".b", f32(cout, std=0.1))])

    h = conv("x", "conv1")
    if temb:
        h = op("Add", [h, op("Unsqueeze", ["temb", init("temb.axes", i64([2, 3]))])])
    h = group_norm(h, "norm1")
    h = conv(h, "conv2")
    t = op("Reshape", [op("Transpose", [h], perm=[0, 2, 3, 1]), init("tok.shape", i64([0, -1, C]))])
    r = linear(t, C, C, "proj")
    s = op("Add", [t, r])
    ln = op("LayerNormalization", [s, init("ln.g", f32(C, std=0.1) + 1), init("ln.b", f32(C, std=0.1))],
            axis=-1, epsilon=1e-5)
    fa = linear(ln, C, 2 * F, "ff1")
    # chunk(2, dim=-1) as torch.onnx writes it
    last = op("Gather", [op("Shape", [fa]), init("chunk.idx", i64([-1]))], axis=0)
    half = op("Div", [op("Add", [last, init("chunk.one", i64([1]))]), init("chunk.two", i64([2]))])
    start = op("Mul", [half, init("chunk.one_b", i64([1]))])
    end = op("Mul", [half, init("chunk.two_b", i64([2]))])
    axes = init("chunk.axes", i64([-1]))
    left = op("Slice", [fa, init("chunk.zero", i64([0])), start, axes])
    right = op("Slice", [fa, start, end, axes])
    # exact GELU as torch.onnx writes it
    g = op("Erf", [op("Div", [right, init("gelu.sqrt2", np.array(math.sqrt(2.0), np.float32))])])
    g = op("Mul", [op("Mul", [right, op("Add", [g, init("gelu.one", np.array(1.0, np.float32))])]),
                   init("gelu.half", np.array(0.5, np.float32))])
    hh = op("Mul", [left, g])
    o = linear(hh, F, C, "ff2")
    o = op("Add", [o, s])
    y = op("Transpose", [op("Reshape", [o, op("Shape", [op("Transpose", [h], perm=[0, 2, 3, 1])])])],
           perm=[0, 3, 1, 2])
    nodes.append(helper.make_node("Add", [y, "x"], ["y"], name="/blk/out"))
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", C, H, W])]
    if temb:
        inputs.append(helper.make_tensor_value_info("temb", TensorProto.FLOAT, ["batch", C]))
    graph = helper.make_graph(nodes, "unet_block", inputs,
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", C, H, W])], inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="pytorch")
    m.ir_version = 8
    onnx.checker.check_model(m)
    onnx.save(m, path)
    return path


UNET_CASES = {
    # variant: (time embedding, FusionOptions changes, fused ops expected)
    "default": (True, {}, {"NhwcConv", "SkipGroupNorm", "BiasSplitGelu", "BiasAdd", "SkipLayerNormalization"}),
    "no_temb": (False, {}, {"NhwcConv", "GroupNorm", "BiasSplitGelu", "BiasAdd"}),
    "channels_first": (False, {"group_norm_channels_last": False, "enable_nhwc_conv": False},
                       {"GroupNorm", "BiasSplitGelu", "BiasAdd"}),
}


@pytest.mark.parametrize("level", [0, 1])
@pytest.mark.parametrize("variant", sorted(UNET_CASES))
def test_optimized_unet_block_matches_onnxruntime(onyx, optimizer, tmp_path, variant, level):
    from onnxruntime.transformers.fusion_options import FusionOptions
    temb, changes, fused = UNET_CASES[variant]
    src = _unet_block(str(tmp_path / "unet_block.onnx"), temb=temb)
    o = FusionOptions("unet")
    o.enable_bias_add = True
    for k, v in changes.items():
        setattr(o, k, v)
    m = optimizer.optimize_model(src, model_type="unet", opt_level=level, use_gpu=False, optimization_options=o)
    path = str(tmp_path / "unet_block_opt.onnx")
    m.save_model_to_file(path)
    ops = {n.op_type for n in onnx.load(path).graph.node if n.domain == "com.microsoft"}
    assert fused <= ops, "onnxruntime's optimizer wrote %s" % sorted(ops)
    if variant == "channels_first":
        gn = next(n for n in onnx.load(path).graph.node if n.op_type == "GroupNorm")
        assert helper.get_attribute_value(next(a for a in gn.attribute if a.name == "channels_last")) == 0
    rng = np.random.default_rng(level)
    feeds = {"x": rng.standard_normal((2, 32, 4, 4)).astype(np.float32)}
    if temb:
        feeds["temb"] = rng.standard_normal((2, 32)).astype(np.float32)
    want = ort.InferenceSession(src, providers=["CPUExecutionProvider"]).run(None, feeds)[0]
    got = onyx.InferenceSession(path, providers=["CPUExecutionProvider"]).run(None, feeds)[0]
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * max(1.0, float(np.abs(want).max())))

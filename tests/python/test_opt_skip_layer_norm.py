"""skip_layer_norm_fusion: Add (+ a Linear layer's bias Add) in front of a
LayerNormalization becomes com.microsoft SkipLayerNormalization (and before
SimplifiedLayerNormalization, SkipSimplifiedLayerNormalization); the sum,
when read elsewhere, comes out of the fused node's output 3. Only when the
Add provably does not broadcast, which the optimizer follows through
computed Reshapes (Shape -> Gather -> Concat) as exporters write them."""

import numpy as np
import pytest
from onnx import TensorProto, helper

from opt_fusion_util import ONYX_ONLY, F, check_fusion, const, make_model

pytestmark = ONYX_ONLY

H = 16
rng = np.random.default_rng(23)
X = rng.standard_normal((2, 5, H)).astype(np.float32)
R = rng.standard_normal((2, 5, H)).astype(np.float32)
SKIP = "com.microsoft:SkipLayerNormalization"


def _ln(inp, out, axis=-1, n_out=1):
    outs = [out] + ["%s_stat%d" % (out, k) for k in range(1, n_out)]
    return helper.make_node("LayerNormalization", [inp, "gamma", "beta"], outs, axis=axis, epsilon=1e-5)


def _inits(gamma_shape=(H,)):
    return [const("gamma", rng.standard_normal(gamma_shape) * 0.3 + 1), const("beta", rng.standard_normal(gamma_shape) * 0.1)]


def _model(nodes, inits, r_shape=("b", "s", H), outputs=("y",), x_shape=("b", "s", H)):
    return make_model(nodes, [("x", F, list(x_shape)), ("r", F, list(r_shape))], [(o, F, None) for o in outputs], inits)


def test_residual_add_fuses(onyx, tmp_path):
    m = _model([helper.make_node("Add", ["x", "r"], ["s"]), _ln("s", "y")], _inits())
    saved = check_fusion(onyx, m, {"x": X, "r": R}, tmp_path, present={SKIP: 1}, absent=["Add", "LayerNormalization"])
    node = saved.graph.node[0]
    assert list(node.input) == ["x", "r", "gamma", "beta"]
    assert abs({a.name: a for a in node.attribute}["epsilon"].f - 1e-5) < 1e-12


def test_linear_bias_folds_in(onyx, tmp_path):
    nodes = [helper.make_node("MatMul", ["x", "w"], ["mm"]), helper.make_node("Add", ["bias", "mm"], ["lin"]),
             helper.make_node("Add", ["lin", "r"], ["s"]), _ln("s", "y")]
    inits = _inits() + [const("w", rng.standard_normal((H, H)) * 0.2), const("bias", rng.standard_normal(H))]
    saved = check_fusion(onyx, _model(nodes, inits), {"x": X, "r": R}, tmp_path, present={SKIP: 1, "MatMul": 1},
                         absent=["Add", "LayerNormalization"])
    skip = [n for n in saved.graph.node if n.op_type == "SkipLayerNormalization"][0]
    assert len(skip.input) == 5 and skip.input[4] == "bias"


def test_bias_with_another_reader_stays(onyx, tmp_path):
    nodes = [helper.make_node("MatMul", ["x", "w"], ["mm"]), helper.make_node("Add", ["mm", "bias"], ["lin"]),
             helper.make_node("Add", ["lin", "r"], ["s"]), _ln("s", "y"), helper.make_node("Relu", ["lin"], ["z"])]
    inits = _inits() + [const("w", rng.standard_normal((H, H)) * 0.2), const("bias", rng.standard_normal(H))]
    check_fusion(onyx, _model(nodes, inits, outputs=("y", "z")), {"x": X, "r": R}, tmp_path,
                 present={SKIP: 1, "Add": 1}, absent=["LayerNormalization"])


def test_sum_read_later_comes_from_output_3(onyx, tmp_path):
    """Pre-LayerNorm blocks (GPT-2) keep the residual stream: s feeds the next Add too."""
    nodes = [helper.make_node("Add", ["x", "r"], ["s"]), _ln("s", "y"), helper.make_node("Add", ["s", "y"], ["z"])]
    saved = check_fusion(onyx, _model(nodes, _inits(), outputs=("z", "s")), {"x": X, "r": R}, tmp_path,
                         present={SKIP: 1, "Add": 1}, absent=["LayerNormalization"])
    skip = [n for n in saved.graph.node if n.op_type == "SkipLayerNormalization"][0]
    assert len(skip.output) == 4 and skip.output[3] == "s"


def test_skip_simplified(onyx, tmp_path):
    nodes = [helper.make_node("Add", ["x", "r"], ["s"]),
             helper.make_node("Pow", ["s", "two"], ["sq"]),
             helper.make_node("ReduceMean", ["sq"], ["ms"], axes=[-1]),
             helper.make_node("Add", ["ms", "eps"], ["mse"]),
             helper.make_node("Sqrt", ["mse"], ["rms"]),
             helper.make_node("Div", ["s", "rms"], ["n"]),
             helper.make_node("Mul", ["n", "gamma"], ["y"])]
    inits = [const("two", 2.0), const("eps", 1e-6), const("gamma", rng.standard_normal(H))]
    check_fusion(onyx, _model(nodes, inits), {"x": X, "r": R}, tmp_path,
                 present={"com.microsoft:SkipSimplifiedLayerNormalization": 1}, absent=["Add", "Pow"])


def _computed_reshape(target):
    """x -> Reshape(x, target) where target is built from Shape(x) as torch.onnx does."""
    nodes = [helper.make_node("Shape", ["x"], ["shp"]),
             helper.make_node("Gather", ["shp", "i0"], ["d0"], axis=0),
             helper.make_node("Gather", ["shp", "i1"], ["d1"], axis=0),
             helper.make_node("Unsqueeze", ["d0", "ax0"], ["u0"]),
             helper.make_node("Unsqueeze", ["d1", "ax0"], ["u1"])]
    inits = [const("i0", 0, np.int64), const("i1", 1, np.int64), const("ax0", [0], np.int64)]
    if target == "from_shape":
        nodes.append(helper.make_node("Concat", ["u0", "u1", "hid"], ["tgt"], axis=0))
    else:  # keeps dim 0, lets dim 1 be inferred: not provably the same
        nodes.append(helper.make_node("Concat", ["u0", "minus1", "hid"], ["tgt"], axis=0))
        inits.append(const("minus1", [-1], np.int64))
    nodes.append(helper.make_node("Reshape", ["x", "tgt"], ["xr"]))
    inits.append(const("hid", [H], np.int64))
    return nodes, inits


@pytest.mark.parametrize("target", ["from_shape", "inferred"])
def test_shapes_followed_through_computed_reshape(onyx, tmp_path, target):
    nodes, inits = _computed_reshape(target)
    nodes += [helper.make_node("Relu", ["xr"], ["xa"]), helper.make_node("Add", ["xa", "x"], ["s"]), _ln("s", "y")]
    m = _model(nodes, inits + _inits())
    if target == "from_shape":
        check_fusion(onyx, m, {"x": X, "r": R}, tmp_path, present={SKIP: 1}, absent=["LayerNormalization"])
    else:
        check_fusion(onyx, m, {"x": X, "r": R}, tmp_path, present={"LayerNormalization": 1}, absent=[SKIP])


@pytest.mark.parametrize("case", ["broadcast_vector", "broadcast_batch", "unrelated_dims", "axis", "stats_read",
                                  "rank4", "gamma_2d"])
def test_near_misses_are_not_fused(onyx, tmp_path, case):
    r, r_shape, x_shape, axis, n_out, outputs, gamma = R, ("b", "s", H), ("b", "s", H), -1, 1, ("y",), (H,)
    x = X
    if case == "broadcast_vector":
        r, r_shape = R[0, 0], (H,)
    elif case == "broadcast_batch":
        r, r_shape = R[:1], (1, "s", H)
    elif case == "unrelated_dims":
        r_shape = ("p", "q", H)
    elif case == "axis":
        axis, gamma = 1, (5, H)
        x_shape = r_shape = ("b", 5, H)
    elif case == "stats_read":
        n_out, outputs = 2, ("y", "y_stat1")
    elif case == "rank4":
        x, r = X.reshape(2, 5, 1, H), R.reshape(2, 5, 1, H)
        x_shape = r_shape = ("b", "s", 1, H)
    elif case == "gamma_2d":
        gamma = (1, H)
    nodes = [helper.make_node("Add", ["x", "r"], ["s"]), _ln("s", "y", axis=axis, n_out=n_out)]
    m = _model(nodes, _inits(gamma), r_shape=r_shape, x_shape=x_shape, outputs=outputs)
    check_fusion(onyx, m, {"x": x, "r": r}, tmp_path, present={"LayerNormalization": 1, "Add": 1}, absent=[SKIP])


def test_double_not_fused(onyx, tmp_path):
    D = TensorProto.DOUBLE
    gamma = helper.make_tensor("gamma", D, [H], np.ones(H))
    beta = helper.make_tensor("beta", D, [H], np.zeros(H))
    m = make_model([helper.make_node("Add", ["x", "r"], ["s"]), _ln("s", "y")],
                   [("x", D, ["b", "s", H]), ("r", D, ["b", "s", H])], [("y", D, None)], [gamma, beta])
    check_fusion(onyx, m, {"x": X.astype(np.float64), "r": R.astype(np.float64)}, tmp_path,
                 present={"LayerNormalization": 1}, absent=[SKIP])

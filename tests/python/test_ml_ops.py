"""ai.onnx.ml kernels on hand-built models: each compared with onnxruntime and,
where it implements the op, onnx.reference; bad inputs give errors naming the
node and the fault."""

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

ML = "ai.onnx.ml"


def _model(node, inputs, outputs, ml_opset=3, opset=17):
    graph = helper.make_graph([node], "ml", inputs, outputs)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset), helper.make_opsetid(ML, ml_opset)],
                             ir_version=10)


def _tensor(name, elem, shape=None):
    return helper.make_tensor_value_info(name, elem, shape)


def _run_both(onyx, model, feeds, reference=True, tol=1e-6):
    data = model.SerializeToString()
    got = onyx.InferenceSession(data).run(None, feeds)
    exp = ort.InferenceSession(data).run(None, feeds)
    for g, e in zip(got, exp):
        g, e = np.asarray(g), np.asarray(e)
        assert g.shape == e.shape and g.dtype == e.dtype, (g.shape, e.shape, g.dtype, e.dtype)
        if e.dtype.kind in "fc":
            np.testing.assert_allclose(g, e, rtol=tol, atol=tol)
        else:
            np.testing.assert_array_equal(g, e)
    if reference:
        ref = ReferenceEvaluator(model).run(None, feeds)
        for g, r in zip(got, ref):
            if np.asarray(r).dtype.kind in "fc":
                np.testing.assert_allclose(np.asarray(g), np.asarray(r), rtol=1e-5, atol=1e-5)
            else:
                np.testing.assert_array_equal(np.asarray(g).astype(str) if np.asarray(r).dtype.kind == "U" else g, r)
    return got


X = np.array([[0.5, -1.0, 2.0], [np.nan, 3.0, -0.25]], np.float32)


def test_binarizer_scaler_imputer(onyx):
    _run_both(onyx, _model(helper.make_node("Binarizer", ["X"], ["Y"], domain=ML, threshold=0.4),
                           [_tensor("X", TensorProto.FLOAT, [2, 3])], [_tensor("Y", TensorProto.FLOAT, [2, 3])]),
              {"X": np.nan_to_num(X)})
    _run_both(onyx, _model(helper.make_node("Scaler", ["X"], ["Y"], domain=ML, offset=[1.0, 2.0, 3.0],
                                            scale=[0.5, 2.0, -1.0]),
                           [_tensor("X", TensorProto.DOUBLE, [2, 3])], [_tensor("Y", TensorProto.FLOAT, [2, 3])]),
              {"X": np.nan_to_num(X).astype(np.float64)})
    _run_both(onyx, _model(helper.make_node("Imputer", ["X"], ["Y"], domain=ML, imputed_value_floats=[7.0, 8.0, 9.0],
                                            replaced_value_float=float("nan")),
                           [_tensor("X", TensorProto.FLOAT, [2, 3])], [_tensor("Y", TensorProto.FLOAT, [2, 3])]),
              {"X": X})
    _run_both(onyx, _model(helper.make_node("Imputer", ["X"], ["Y"], domain=ML, imputed_value_int64s=[5],
                                            replaced_value_int64=-1),
                           [_tensor("X", TensorProto.INT64, [2, 2])], [_tensor("Y", TensorProto.INT64, [2, 2])]),
              {"X": np.array([[1, -1], [-1, 4]], np.int64)})


def test_array_feature_extractor_and_feature_vectorizer(onyx):
    m = _model(helper.make_node("ArrayFeatureExtractor", ["X", "I"], ["Y"], domain=ML),
               [_tensor("X", TensorProto.STRING, [2, 3]), _tensor("I", TensorProto.INT64, [None])],
               [_tensor("Y", TensorProto.STRING, None)])
    _run_both(onyx, m, {"X": np.array([["a", "b", "c"], ["d", "e", "f"]], object), "I": np.array([2, 0], np.int64)},
              reference=False)
    with pytest.raises(Exception, match="index 3 at position 0 is outside the 3 columns"):
        onyx.InferenceSession(m.SerializeToString()).run(
            None, {"X": np.array([["a", "b", "c"]] * 2, object), "I": np.array([3], np.int64)})
    m = _model(helper.make_node("FeatureVectorizer", ["A", "B"], ["Y"], domain=ML, inputdimensions=[2, 3]),
               [_tensor("A", TensorProto.FLOAT, [2, 3]), _tensor("B", TensorProto.FLOAT, [2, 2])],
               [_tensor("Y", TensorProto.FLOAT, [2, 5])])
    _run_both(onyx, m, {"A": np.arange(6, dtype=np.float32).reshape(2, 3), "B": np.ones((2, 2), np.float32)},
              reference=False)


def test_linear_regressor_and_svm_regressor(onyx):
    m = _model(helper.make_node("LinearRegressor", ["X"], ["Y"], domain=ML, coefficients=[1.0, 2.0, 3.0, 0.5, 0.5, 0.5],
                                intercepts=[0.1, -0.2], targets=2),
               [_tensor("X", TensorProto.FLOAT, [2, 3])], [_tensor("Y", TensorProto.FLOAT, [2, 2])])
    _run_both(onyx, m, {"X": np.nan_to_num(X)})
    m = _model(helper.make_node("SVMRegressor", ["X"], ["Y"], domain=ML, coefficients=[0.5, -1.5],
                                support_vectors=[1.0, 0.0, 0.0, 0.0, 1.0, 1.0], n_supports=2, rho=[0.25],
                                kernel_type="RBF", kernel_params=[0.3, 0.0, 3.0]),
               [_tensor("X", TensorProto.FLOAT, [2, 3])], [_tensor("Y", TensorProto.FLOAT, [2, 1])])
    _run_both(onyx, m, {"X": np.nan_to_num(X)})


def test_label_encoder_opsets(onyx):
    # Opset 2: string -> int64; an unknown key takes default_int64 (the spec's default rule).
    m = _model(helper.make_node("LabelEncoder", ["X"], ["Y"], domain=ML, keys_strings=["a", "b"], values_int64s=[5, 7],
                                default_int64=-9),
               [_tensor("X", TensorProto.STRING, [3])], [_tensor("Y", TensorProto.INT64, [3])], ml_opset=2)
    (y,) = _run_both(onyx, m, {"X": np.array(["b", "zz", "a"], object)})
    assert y.tolist() == [7, -9, 5]
    # Opset 4: tensor keys/values (double -> int32) with default_tensor; NaN keys match NaN.
    node = helper.make_node("LabelEncoder", ["X"], ["Y"], domain=ML,
                            keys_tensor=numpy_helper.from_array(np.array([1.5, np.nan, 3.0]), "k"),
                            values_tensor=numpy_helper.from_array(np.array([10, 20, 30], np.int32), "v"),
                            default_tensor=numpy_helper.from_array(np.array([-1], np.int32), "d"))
    m = _model(node, [_tensor("X", TensorProto.DOUBLE, [4])], [_tensor("Y", TensorProto.INT32, [4])], ml_opset=4)
    (y,) = onyx.InferenceSession(m.SerializeToString()).run(None, {"X": np.array([3.0, np.nan, 2.0, 1.5])})
    assert y.tolist() == [30, 20, -1, 10]
    # Opset 1: classes_strings in both directions; unknowns take the defaults.
    m = _model(helper.make_node("LabelEncoder", ["X"], ["Y"], domain=ML, classes_strings=["x", "y"],
                                default_int64=-1),
               [_tensor("X", TensorProto.STRING, [3])], [_tensor("Y", TensorProto.INT64, [3])], ml_opset=1)
    (y,) = _run_both(onyx, m, {"X": np.array(["y", "q", "x"], object)}, reference=False)
    assert y.tolist() == [1, -1, 0]


def test_category_mapper_unknown_takes_the_default(onyx):
    m = _model(helper.make_node("CategoryMapper", ["X"], ["Y"], domain=ML, cats_strings=["cat", "dog"],
                                cats_int64s=[1, 2], default_int64=99),
               [_tensor("X", TensorProto.STRING, [3])], [_tensor("Y", TensorProto.INT64, [3])], ml_opset=1)
    (y,) = _run_both(onyx, m, {"X": np.array(["dog", "bird", "cat"], object)}, reference=False)
    assert y.tolist() == [2, 99, 1]
    m = _model(helper.make_node("CategoryMapper", ["X"], ["Y"], domain=ML, cats_strings=["cat", "dog"],
                                cats_int64s=[1, 2]),
               [_tensor("X", TensorProto.INT64, [2])], [_tensor("Y", TensorProto.STRING, [2])], ml_opset=1)
    (y,) = _run_both(onyx, m, {"X": np.array([2, 5], np.int64)}, reference=False)
    assert y.tolist() == ["dog", "_Unused"]


def test_one_hot_encoder(onyx):
    m = _model(helper.make_node("OneHotEncoder", ["X"], ["Y"], domain=ML, cats_int64s=[3, 1, 4]),
               [_tensor("X", TensorProto.INT64, [2, 2])], [_tensor("Y", TensorProto.FLOAT, [2, 2, 3])])
    _run_both(onyx, m, {"X": np.array([[1, 4], [9, 3]], np.int64)}, reference=False)
    m = _model(helper.make_node("OneHotEncoder", ["X"], ["Y"], domain=ML, cats_strings=["a", "b"], zeros=0),
               [_tensor("X", TensorProto.STRING, [2])], [_tensor("Y", TensorProto.FLOAT, [2, 2])])
    with pytest.raises(Exception, match="OneHotEncoder.*value 'q' at 1 is not a category"):
        onyx.InferenceSession(m.SerializeToString()).run(None, {"X": np.array(["a", "q"], object)})


def _map_type(key, value):
    return helper.make_map_type_proto(key, helper.make_tensor_type_proto(value, None))


def test_dict_vectorizer_and_cast_map(onyx):
    m = _model(helper.make_node("DictVectorizer", ["X"], ["Y"], domain=ML, string_vocabulary=["a", "b", "c"]),
               [helper.make_value_info("X", _map_type(TensorProto.STRING, TensorProto.FLOAT))],
               [_tensor("Y", TensorProto.FLOAT, None)], ml_opset=1)
    (y,) = _run_both(onyx, m, {"X": {"c": 2.0, "a": 1.0, "zz": 5.0}}, reference=False)
    assert y.tolist() == [[1.0, 0.0, 2.0]]
    # Wrong key type: int64 keys where the vocabulary holds strings.
    m2 = _model(helper.make_node("DictVectorizer", ["X"], ["Y"], domain=ML, string_vocabulary=["a"]),
                [helper.make_value_info("X", _map_type(TensorProto.INT64, TensorProto.FLOAT))],
                [_tensor("Y", TensorProto.FLOAT, None)], ml_opset=1)
    with pytest.raises(Exception, match="DictVectorizer.*map with int64 keys but the vocabulary holds strings"):
        onyx.InferenceSession(m2.SerializeToString()).run(None, {"X": {1: 2.0}})
    # A dict whose keys do not match the declared map type.
    with pytest.raises(Exception, match="input 'X': map key 1 is a int but the input is declared map\\(string"):
        onyx.InferenceSession(m.SerializeToString()).run(None, {"X": {1: 2.0}})
    # onnxruntime's Python binding takes no map(int64, string) input: checked against the spec.
    for form, max_map, want in (("DENSE", 1, [[1.0, -4.0, 2.5]]), ("SPARSE", 5, [[1.0, -4.0, 0.0, 2.5, 0.0]])):
        m = _model(helper.make_node("CastMap", ["X"], ["Y"], domain=ML, cast_to="TO_FLOAT", map_form=form,
                                    max_map=max_map),
                   [helper.make_value_info("X", _map_type(TensorProto.INT64, TensorProto.STRING))],
                   [_tensor("Y", TensorProto.FLOAT, None)], ml_opset=1)
        (y,) = onyx.InferenceSession(m.SerializeToString()).run(None, {"X": {3: "2.5", 0: "1", 1: "-4"}})
        assert y.tolist() == want


def test_string_column_where_numbers_are_declared(onyx):
    m = _model(helper.make_node("Scaler", ["X"], ["Y"], domain=ML, offset=[0.0], scale=[1.0]),
               [_tensor("X", TensorProto.FLOAT, [1, 2])], [_tensor("Y", TensorProto.FLOAT, [1, 2])])
    with pytest.raises(Exception, match="X"):
        onyx.InferenceSession(m.SerializeToString()).run(None, {"X": np.array([["a", "b"]], object)})


def test_zipmap_labels_not_matching_the_class_count(onyx):
    node = helper.make_node("ZipMap", ["P"], ["Z"], domain=ML, classlabels_int64s=[1, 2, 3])
    seq = helper.make_sequence_type_proto(_map_type(TensorProto.INT64, TensorProto.FLOAT))
    m = _model(node, [_tensor("P", TensorProto.FLOAT, [None, None])], [helper.make_value_info("Z", seq)])
    with pytest.raises(Exception, match="ZipMap.*has 2 columns .* but there are 3 class labels"):
        onyx.InferenceSession(m.SerializeToString()).run(None, {"P": np.ones((2, 2), np.float32)})


# --- tree ensembles --------------------------------------------------------------------------

def _regressor(modes, values, trues, falses, features, weights, agg="SUM", post="NONE", n_targets=1, missing=None,
               base=None, target_ids=None):
    """One tree of interior nodes 0..k-1 and LEAF nodes after them."""
    n = len(modes)
    leaves = [i for i, m in enumerate(modes) if m == "LEAF"]
    attrs = dict(nodes_treeids=[0] * n, nodes_nodeids=list(range(n)), nodes_modes=modes, nodes_values=values,
                 nodes_truenodeids=trues, nodes_falsenodeids=falses, nodes_featureids=features,
                 target_treeids=[0] * len(leaves), target_nodeids=leaves,
                 target_ids=target_ids or [0] * len(leaves), target_weights=weights,
                 aggregate_function=agg, post_transform=post, n_targets=n_targets)
    if missing is not None:
        attrs["nodes_missing_value_tracks_true"] = missing
    if base is not None:
        attrs["base_values"] = base
    return _model(helper.make_node("TreeEnsembleRegressor", ["X"], ["Y"], domain=ML, **attrs),
                  [_tensor("X", TensorProto.FLOAT, [None, 2])], [_tensor("Y", TensorProto.FLOAT, None)])


XTREE = np.array([[0.5, 1.0], [1.0, 0.0], [2.0, -1.0], [np.nan, 3.0], [1.5, np.nan]], np.float32)


@pytest.mark.parametrize("mode", ["BRANCH_LEQ", "BRANCH_LT", "BRANCH_GTE", "BRANCH_GT", "BRANCH_EQ", "BRANCH_NEQ"])
@pytest.mark.parametrize("missing", [[0, 0, 0, 0, 0], [1, 0, 0, 0, 0]])
def test_tree_branch_modes_and_missing_values(onyx, mode, missing):
    m = _regressor([mode, mode, "LEAF", "LEAF", "LEAF"], [1.0, 0.0, 0, 0, 0], [1, 2, 0, 0, 0], [4, 3, 0, 0, 0],
                   [0, 1, 0, 0, 0], [1.0, 2.0, 3.0], missing=missing)
    # NaN != v holds, so BRANCH_NEQ sends a NaN down its true branch (as
    # onnxruntime); onnx.reference sends it the false way.
    _run_both(onyx, m, {"X": XTREE}, reference=mode != "BRANCH_NEQ")


@pytest.mark.parametrize("agg", ["SUM", "AVERAGE", "MIN", "MAX"])
@pytest.mark.parametrize("post", ["NONE", "LOGISTIC", "SOFTMAX", "SOFTMAX_ZERO", "PROBIT"])
def test_tree_aggregates_and_transforms(onyx, agg, post):
    # Two trees, two targets, base values.
    attrs = dict(nodes_treeids=[0, 0, 0, 1, 1, 1], nodes_nodeids=[0, 1, 2, 0, 1, 2],
                 nodes_modes=["BRANCH_LEQ", "LEAF", "LEAF", "BRANCH_GT", "LEAF", "LEAF"],
                 nodes_values=[1.0, 0, 0, 0.0, 0, 0], nodes_truenodeids=[1, 0, 0, 1, 0, 0],
                 nodes_falsenodeids=[2, 0, 0, 2, 0, 0], nodes_featureids=[0, 0, 0, 1, 0, 0],
                 target_treeids=[0, 0, 0, 1, 1], target_nodeids=[1, 1, 2, 1, 2], target_ids=[0, 1, 1, 0, 1],
                 target_weights=[0.1, 0.2, -0.3, 0.4, 0.5], aggregate_function=agg, post_transform=post,
                 n_targets=2, base_values=[0.05, -0.05])
    m = _model(helper.make_node("TreeEnsembleRegressor", ["X"], ["Y"], domain=ML, **attrs),
               [_tensor("X", TensorProto.FLOAT, [None, 2])], [_tensor("Y", TensorProto.FLOAT, None)])
    _run_both(onyx, m, {"X": np.nan_to_num(XTREE)}, reference=False, tol=1e-5)


def test_tree_ensemble_v5_member_and_many_rows(onyx):
    node = helper.make_node(
        "TreeEnsemble", ["X"], ["Y"], domain=ML, n_targets=2, aggregate_function=1, post_transform=0,
        tree_roots=[0, 2], nodes_featureids=[0, 1, 1], nodes_modes=numpy_helper.from_array(np.array([6, 0, 3], np.uint8)),
        nodes_splits=numpy_helper.from_array(np.array([0.0, 0.5, -1.0], np.float32)),
        nodes_truenodeids=[0, 1, 3], nodes_trueleafs=[1, 1, 1], nodes_falsenodeids=[1, 2, 4], nodes_falseleafs=[0, 1, 1],
        nodes_missing_value_tracks_true=[0, 1, 0],
        membership_values=numpy_helper.from_array(np.array([1.0, 2.0, 5.0, np.nan], np.float32)),
        leaf_targetids=[0, 1, 0, 1, 0], leaf_weights=numpy_helper.from_array(np.array([1, 2, 3, 4, 5], np.float32)))
    m = _model(node, [_tensor("X", TensorProto.FLOAT, [None, 2])], [_tensor("Y", TensorProto.FLOAT, None)], ml_opset=5)
    rng = np.random.RandomState(0)
    x = rng.randint(0, 6, size=(5000, 2)).astype(np.float32)
    x[::7, 1] = np.nan
    _run_both(onyx, m, {"X": x})


def test_tree_pointing_outside_its_node_array(onyx):
    m = _regressor(["BRANCH_LEQ", "LEAF", "LEAF"], [1.0, 0, 0], [1, 0, 0], [7, 0, 0], [0, 0, 0], [1.0, 2.0])
    with pytest.raises(Exception, match=r"node 0 \(tree 0, node id 0\) has nodes_falsenodeids 7, which is not a node"):
        onyx.InferenceSession(m.SerializeToString())
    node = helper.make_node(
        "TreeEnsemble", ["X"], ["Y"], domain=ML, n_targets=1, tree_roots=[0], nodes_featureids=[0],
        nodes_modes=numpy_helper.from_array(np.array([0], np.uint8)),
        nodes_splits=numpy_helper.from_array(np.array([0.0], np.float32)), nodes_truenodeids=[0],
        nodes_trueleafs=[1], nodes_falsenodeids=[5], nodes_falseleafs=[1], leaf_targetids=[0],
        leaf_weights=numpy_helper.from_array(np.array([1.0], np.float32)))
    m = _model(node, [_tensor("X", TensorProto.FLOAT, [None, 1])], [_tensor("Y", TensorProto.FLOAT, None)], ml_opset=5)
    with pytest.raises(Exception, match=r"TreeEnsemble.*node 0 has nodes_falsenodeids pointing outside the tree: "
                                        r"leaf 5 \(there are 1 leaves\)"):
        onyx.InferenceSession(m.SerializeToString())


def test_tree_with_a_cycle_is_refused(onyx):
    m = _regressor(["BRANCH_LEQ", "BRANCH_LEQ", "LEAF"], [1.0, 0.0, 0], [1, 0, 0], [2, 2, 0], [0, 1, 0], [1.0])
    with pytest.raises(Exception, match=r"node 1 \(tree 0, node id 1\) has nodes_truenodeids leading back to "
                                        r"node 0 \(tree 0, node id 0\).*cycle"):
        onyx.InferenceSession(m.SerializeToString())


def test_tree_reading_a_feature_the_input_lacks(onyx):
    m = _regressor(["BRANCH_LEQ", "LEAF", "LEAF"], [1.0, 0, 0], [1, 0, 0], [2, 0, 0], [5, 0, 0], [1.0, 2.0])
    with pytest.raises(Exception, match="input 0 has 2 features .* reads feature 5"):
        onyx.InferenceSession(m.SerializeToString()).run(None, {"X": np.zeros((1, 2), np.float32)})


def _random_forest(rng, n_trees, modes, n_targets, sparse, features=4, max_depth=7):
    """TreeEnsembleRegressor attributes for `n_trees` random trees: uneven
    depths, lone-leaf trees, one deep chain (past the engine's fixed-step
    depth), NaN tracking on some nodes, one or several weights per leaf."""
    a = {k: [] for k in ("nodes_treeids", "nodes_nodeids", "nodes_modes", "nodes_values", "nodes_truenodeids",
                         "nodes_falsenodeids", "nodes_featureids", "nodes_missing_value_tracks_true",
                         "target_treeids", "target_nodeids", "target_ids", "target_weights")}
    for t in range(n_trees):
        count = [0]

        def grow(depth, chain=False):
            i = count[0]
            count[0] += 1
            a["nodes_treeids"].append(t)
            a["nodes_nodeids"].append(i)
            leaf = (t % 11 == 5) or depth >= (60 if chain else max_depth) or (not chain and depth > 1
                                                                               and rng.rand() < 0.25)
            if leaf:
                for f in ("nodes_truenodeids", "nodes_falsenodeids", "nodes_featureids",
                          "nodes_missing_value_tracks_true"):
                    a[f].append(0)
                a["nodes_modes"].append("LEAF")
                a["nodes_values"].append(0.0)
                targets = [0] if n_targets == 1 else (
                    sorted(rng.choice(n_targets, rng.randint(1, n_targets + 1), replace=False)) if sparse
                    else range(n_targets))
                for k in targets:
                    a["target_treeids"].append(t)
                    a["target_nodeids"].append(i)
                    a["target_ids"].append(int(k))
                    a["target_weights"].append(float(np.round(rng.randn(), 3)))
                return i
            a["nodes_modes"].append(modes[rng.randint(len(modes))])
            # Thresholds on a 0.5 grid, so EQ/NEQ nodes meet equal values.
            a["nodes_values"].append(float(rng.randint(-4, 5) / 2))
            a["nodes_featureids"].append(int(rng.randint(features)))
            a["nodes_missing_value_tracks_true"].append(int(rng.rand() < 0.3))
            for f in ("nodes_truenodeids", "nodes_falsenodeids"):
                a[f].append(None)
            pos = len(a["nodes_truenodeids"]) - 1
            a["nodes_truenodeids"][pos] = grow(depth + 1, False)
            a["nodes_falsenodeids"][pos] = grow(depth + 1, chain)
            return i

        grow(0, chain=t == 3)
    return a


@pytest.mark.parametrize("modes", [["BRANCH_LEQ"], ["BRANCH_LT"], ["BRANCH_GTE"], ["BRANCH_GT"], ["BRANCH_EQ"],
                                   ["BRANCH_LEQ", "BRANCH_LT", "BRANCH_GT", "BRANCH_NEQ"]])
@pytest.mark.parametrize("n_targets, sparse", [(1, False), (3, False), (3, True)])
def test_tree_forest_one_row_and_many(onyx, modes, n_targets, sparse):
    # 37 trees: the engine walks trees 8 at a time for one row and rows 8 at a
    # time for many; the counts leave remainders both ways.
    rng = np.random.RandomState(len(modes) * 10 + n_targets + sparse)
    attrs = _random_forest(rng, 37, modes, n_targets, sparse)
    m = _model(helper.make_node("TreeEnsembleRegressor", ["X"], ["Y"], domain=ML, n_targets=n_targets, **attrs),
               [_tensor("X", TensorProto.FLOAT, [None, 4])], [_tensor("Y", TensorProto.FLOAT, None)])
    x = (rng.randint(-5, 6, size=(203, 4)) / 2).astype(np.float32)
    x[::9, 2] = np.nan
    reference = "BRANCH_NEQ" not in modes  # see test_tree_branch_modes_and_missing_values
    _run_both(onyx, m, {"X": x}, reference=reference, tol=1e-5)
    sess = onyx.InferenceSession(m.SerializeToString())
    whole = sess.run(None, {"X": x})[0]
    for r in range(0, 203, 17):
        np.testing.assert_array_equal(sess.run(None, {"X": x[r:r + 1]})[0], whole[r:r + 1])
        _run_both(onyx, m, {"X": x[r:r + 1]}, reference=False, tol=1e-5)

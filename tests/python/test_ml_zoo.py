"""Model zoo: scikit-learn, XGBoost, LightGBM and CatBoost models converted with
skl2onnx / onnxmltools (or CatBoost's own exporter), run by onyxruntime and by
onnxruntime on the same rows: labels equal, scores within 1e-5.

Tree ensembles converted in float32 sum their leaves in float32; the order of
the sum is free (onnxruntime splits trees across threads for big batches,
onyx sums trees in order), and a float32 sum of ~100 leaves of magnitude ~1
differs by a few ulps of the total, up to ~1e-5 relative: those compare at 1e-4.
Small data sets keep the whole file to seconds."""

import numpy as np
import onnx
import pytest

sklearn = pytest.importorskip("sklearn")
skl2onnx = pytest.importorskip("skl2onnx")
import onnxruntime as ort  # noqa: E402
from skl2onnx import to_onnx  # noqa: E402
from skl2onnx.common.data_types import (  # noqa: E402
    DoubleTensorType, FloatTensorType, Int64TensorType, StringTensorType)
from sklearn import (cluster, compose, decomposition, ensemble, impute, linear_model, naive_bayes,  # noqa: E402
                     neighbors, neural_network, pipeline, preprocessing, svm, tree)

RNG = np.random.RandomState(0)
X = RNG.randn(120, 5).astype(np.float32)
Y2 = (X[:, 0] + 0.5 * X[:, 1] + 0.3 * RNG.randn(120) > 0).astype(np.int64)
Y3 = np.digitize(X[:, 0] + 0.3 * RNG.randn(120), [-0.5, 0.5]).astype(np.int64)
YR = (2 * X[:, 0] - X[:, 2] + 0.1 * RNG.randn(120)).astype(np.float32)
XT = X[:40]


def _compare(onx, feeds, tol=1e-5):
    """Runs `onx` on both runtimes; every output must agree."""
    model = onx.SerializeToString() if hasattr(onx, "SerializeToString") else onx
    import onyxruntime
    expected = ort.InferenceSession(model, providers=["CPUExecutionProvider"]).run(None, feeds)
    got = onyxruntime.InferenceSession(model, providers=["CPUExecutionProvider"]).run(None, feeds)
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        if isinstance(e, list):  # ZipMap: a list of dicts
            assert len(g) == len(e)
            for dg, de in zip(g, e):
                assert dg.keys() == de.keys()
                np.testing.assert_allclose([dg[k] for k in de], [de[k] for k in de], rtol=tol, atol=tol)
            continue
        g, e = np.asarray(g), np.asarray(e)
        assert g.shape == e.shape and g.dtype == e.dtype, (g.shape, e.shape, g.dtype, e.dtype)
        if e.dtype.kind in "iubOUS":
            np.testing.assert_array_equal(g, e)
        else:
            np.testing.assert_allclose(g, e, rtol=tol, atol=tol)
    return got


@pytest.fixture(autouse=True)
def _bool_attributes_as_ints(monkeypatch):
    """skl2onnx 1.20 hands HistGradientBoosting's missing-value flags to
    onnx.helper as numpy bools, which onnx 1.23 refuses; the converter's
    intent is 0/1 ints."""
    import onnx.helper
    make_attribute = onnx.helper.make_attribute

    def patched(key, value, *args, **kwargs):
        if isinstance(value, (list, tuple, np.ndarray)) and any(isinstance(v, (bool, np.bool_)) for v in value):
            value = [int(v) for v in value]
        return make_attribute(key, value, *args, **kwargs)
    monkeypatch.setattr(onnx.helper, "make_attribute", patched)


def _sk(model, y, dtype=np.float32, tol=1e-5, options=None):
    model.fit(X, y)
    onx = to_onnx(model, X[:1].astype(dtype), options=options, target_opset={"": 17, "ai.onnx.ml": 3})
    return _compare(onx, {onx.graph.input[0].name: XT.astype(dtype)}, tol)


CLASSIFIERS = {
    "logistic_regression": lambda: linear_model.LogisticRegression(max_iter=500),
    "sgd_classifier": lambda: linear_model.SGDClassifier(random_state=0),
    "linear_svc": lambda: svm.LinearSVC(),
    "svc_rbf_proba": lambda: svm.SVC(probability=True, random_state=0),
    "svc_poly": lambda: svm.SVC(kernel="poly", degree=2),
    "knn_classifier": lambda: neighbors.KNeighborsClassifier(n_neighbors=3),
    "gaussian_nb": lambda: naive_bayes.GaussianNB(),
    "decision_tree": lambda: tree.DecisionTreeClassifier(max_depth=5, random_state=0),
    "random_forest": lambda: ensemble.RandomForestClassifier(n_estimators=10, max_depth=5, random_state=0),
    "extra_trees": lambda: ensemble.ExtraTreesClassifier(n_estimators=10, max_depth=5, random_state=0),
    "gradient_boosting": lambda: ensemble.GradientBoostingClassifier(n_estimators=10, random_state=0),
    "hist_gradient_boosting": lambda: ensemble.HistGradientBoostingClassifier(max_iter=10, random_state=0),
    "mlp_classifier": lambda: neural_network.MLPClassifier(hidden_layer_sizes=(8,), max_iter=300, random_state=0),
}


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("name", sorted(CLASSIFIERS))
@pytest.mark.parametrize("classes", [2, 3])
def test_classifier(name, classes):
    tol = 1e-4 if name in ("random_forest", "extra_trees", "gradient_boosting", "hist_gradient_boosting") else 1e-5
    _sk(CLASSIFIERS[name](), Y2 if classes == 2 else Y3, tol=tol)


@pytest.mark.filterwarnings("ignore")
def test_classifier_zipmap_string_labels():
    labels = np.array(["neg", "pos"])[Y2]
    model = ensemble.RandomForestClassifier(n_estimators=5, max_depth=4, random_state=0).fit(X, labels)
    onx = to_onnx(model, X[:1], target_opset={"": 17, "ai.onnx.ml": 3})
    got = _compare(onx, {"X": XT}, 1e-4)
    assert set(got[1][0].keys()) == {"neg", "pos"}


REGRESSORS = {
    "linear_regression": lambda: linear_model.LinearRegression(),
    "ridge": lambda: linear_model.Ridge(),
    "lasso": lambda: linear_model.Lasso(alpha=0.01),
    "sgd_regressor": lambda: linear_model.SGDRegressor(random_state=0),
    "linear_svr": lambda: svm.LinearSVR(random_state=0),
    "svr_rbf": lambda: svm.SVR(),
    "knn_regressor": lambda: neighbors.KNeighborsRegressor(n_neighbors=3),
    "decision_tree_regressor": lambda: tree.DecisionTreeRegressor(max_depth=5, random_state=0),
    "random_forest_regressor": lambda: ensemble.RandomForestRegressor(n_estimators=10, max_depth=5, random_state=0),
    "gradient_boosting_regressor": lambda: ensemble.GradientBoostingRegressor(n_estimators=10, random_state=0),
    "hist_gradient_boosting_regressor": lambda: ensemble.HistGradientBoostingRegressor(max_iter=10, random_state=0),
    "mlp_regressor": lambda: neural_network.MLPRegressor(hidden_layer_sizes=(8,), max_iter=300, random_state=0),
}


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("name", sorted(REGRESSORS))
def test_regressor(name):
    tol = 1e-4 if "forest" in name or "boosting" in name else 1e-5
    _sk(REGRESSORS[name](), YR, tol=tol)


@pytest.mark.filterwarnings("ignore")
# (onnxruntime has no double SVMRegressor.)
@pytest.mark.parametrize("name", ["linear_regression", "ridge", "knn_regressor"])
def test_regressor_float64(name):
    _sk(REGRESSORS[name](), YR.astype(np.float64), dtype=np.float64)


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("name", ["logistic_regression", "gaussian_nb", "knn_classifier"])
def test_classifier_float64(name):
    _sk(CLASSIFIERS[name](), Y3, dtype=np.float64, options={"zipmap": False})


TRANSFORMERS = {
    "standard_scaler": lambda: preprocessing.StandardScaler(),
    "min_max_scaler": lambda: preprocessing.MinMaxScaler(),
    "robust_scaler": lambda: preprocessing.RobustScaler(),
    "normalizer": lambda: preprocessing.Normalizer(),
    "binarizer": lambda: preprocessing.Binarizer(threshold=0.2),
    "pca": lambda: decomposition.PCA(n_components=3),
    "truncated_svd": lambda: decomposition.TruncatedSVD(n_components=3, random_state=0),
    "kmeans": lambda: cluster.KMeans(n_clusters=3, n_init=2, random_state=0),
}


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("name", sorted(TRANSFORMERS))
def test_transformer(name):
    _sk(TRANSFORMERS[name](), None)


@pytest.mark.filterwarnings("ignore")
def test_isolation_forest():
    # Scores sum path lengths over 10 trees in float32.
    _sk(ensemble.IsolationForest(n_estimators=10, random_state=0), None, tol=1e-4)


@pytest.mark.filterwarnings("ignore")
def test_simple_imputer():
    Xn = X.copy()
    Xn[::7, 1] = np.nan
    model = impute.SimpleImputer(strategy="mean").fit(Xn)
    onx = to_onnx(model, Xn[:1])
    _compare(onx, {"X": Xn[:40]})


@pytest.mark.filterwarnings("ignore")
def test_one_hot_and_ordinal_encoders():
    cats = np.array([["a", "x"], ["b", "y"], ["c", "x"], ["a", "z"]] * 5, dtype=object)
    for model in (preprocessing.OneHotEncoder(handle_unknown="ignore"), preprocessing.OrdinalEncoder()):
        model.fit(cats)
        onx = to_onnx(model, initial_types=[("X", StringTensorType([None, 2]))])
        _compare(onx, {"X": cats[:6]})
    ints = np.array([[1, 5], [2, 6], [3, 5], [1, 7]] * 5, dtype=np.int64)
    model = preprocessing.OneHotEncoder().fit(ints)
    onx = to_onnx(model, initial_types=[("X", Int64TensorType([None, 2]))])
    _compare(onx, {"X": ints[:6]})


@pytest.mark.filterwarnings("ignore")
def test_column_transformer_pipeline_mixed_columns():
    n = 60
    num = RNG.randn(n, 2).astype(np.float32)
    cat = RNG.choice(["red", "green", "blue"], size=(n, 1)).astype(object)
    y = (num[:, 0] + (cat[:, 0] == "red") > 0.3).astype(np.int64)
    import pandas as pd
    df = pd.DataFrame({"a": num[:, 0], "b": num[:, 1], "color": cat[:, 0]})
    pre = compose.ColumnTransformer([
        ("num", pipeline.Pipeline([("imp", impute.SimpleImputer()), ("sc", preprocessing.StandardScaler())]),
         ["a", "b"]),
        ("cat", preprocessing.OneHotEncoder(handle_unknown="ignore"), ["color"])])
    model = pipeline.Pipeline([("pre", pre), ("clf", linear_model.LogisticRegression())]).fit(df, y)
    onx = to_onnx(model, initial_types=[("a", FloatTensorType([None, 1])), ("b", FloatTensorType([None, 1])),
                                        ("color", StringTensorType([None, 1]))],
                  options={"zipmap": False})
    _compare(onx, {"a": num[:20, :1], "b": num[:20, 1:], "color": cat[:20]})


@pytest.mark.filterwarnings("ignore")
def test_dict_vectorizer_pipeline():
    from sklearn.feature_extraction import DictVectorizer
    rows = [{"a": 1.0, "b": 2.0}, {"a": 3.0, "c": 1.5}, {"b": 0.5, "c": 2.5}] * 4
    y = np.array([0, 1, 1] * 4)
    model = pipeline.Pipeline([("dv", DictVectorizer(sparse=False)),
                               ("clf", linear_model.LogisticRegression())]).fit(rows, y)
    from skl2onnx.common.data_types import DictionaryType
    onx = to_onnx(model, initial_types=[("X", DictionaryType(StringTensorType([1]), FloatTensorType([])))],
                  options={"zipmap": False})
    import onyxruntime
    sess_o = onyxruntime.InferenceSession(onx.SerializeToString())
    sess_r = ort.InferenceSession(onx.SerializeToString())
    for row in rows[:3]:
        got, exp = sess_o.run(None, {"X": row}), sess_r.run(None, {"X": row})
        np.testing.assert_array_equal(got[0], exp[0])
        np.testing.assert_allclose(got[1], exp[1], rtol=1e-5, atol=1e-5)


def _mltools_float(n):
    pytest.importorskip("onnxmltools")
    from onnxmltools.convert.common.data_types import FloatTensorType as MlFloat
    return [("X", MlFloat([None, n]))]


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("classes", [2, 3])
def test_xgboost_classifier(classes):
    xgb = pytest.importorskip("xgboost")
    from onnxmltools.convert import convert_xgboost
    model = xgb.XGBClassifier(n_estimators=10, max_depth=3).fit(X, Y2 if classes == 2 else Y3)
    onx = convert_xgboost(model, initial_types=_mltools_float(5), target_opset=15)
    _compare(onx, {"X": XT}, 1e-4)


@pytest.mark.filterwarnings("ignore")
def test_xgboost_regressor_with_missing_values():
    xgb = pytest.importorskip("xgboost")
    from onnxmltools.convert import convert_xgboost
    Xn = X.copy()
    Xn[::5, 0] = np.nan
    model = xgb.XGBRegressor(n_estimators=10, max_depth=3).fit(Xn, YR)
    onx = convert_xgboost(model, initial_types=_mltools_float(5), target_opset=15)
    _compare(onx, {"X": Xn[:40]}, 1e-4)


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("classes", [2, 3])
def test_lightgbm_classifier(classes):
    lgb = pytest.importorskip("lightgbm")
    from onnxmltools.convert import convert_lightgbm
    model = lgb.LGBMClassifier(n_estimators=10, num_leaves=8, verbose=-1).fit(X, Y2 if classes == 2 else Y3)
    onx = convert_lightgbm(model, initial_types=_mltools_float(5), target_opset=15,
                           zipmap=False)
    _compare(onx, {"X": XT}, 1e-4)


@pytest.mark.filterwarnings("ignore")
def test_lightgbm_regressor():
    lgb = pytest.importorskip("lightgbm")
    from onnxmltools.convert import convert_lightgbm
    model = lgb.LGBMRegressor(n_estimators=10, num_leaves=8, verbose=-1).fit(X, YR)
    onx = convert_lightgbm(model, initial_types=_mltools_float(5), target_opset=15)
    _compare(onx, {"X": XT}, 1e-4)


def _catboost_onnx(model, tmp_path):
    path = str(tmp_path / "cat.onnx")
    model.save_model(path, format="onnx")
    with open(path, "rb") as f:
        return f.read()


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("classes", [2, 3])
def test_catboost_classifier(classes, tmp_path):
    cb = pytest.importorskip("catboost")
    model = cb.CatBoostClassifier(iterations=10, depth=3, verbose=False, allow_writing_files=False)
    model.fit(X, Y2 if classes == 2 else Y3)
    _compare(_catboost_onnx(model, tmp_path), {"features": XT}, 1e-4)


@pytest.mark.filterwarnings("ignore")
def test_catboost_regressor(tmp_path):
    cb = pytest.importorskip("catboost")
    model = cb.CatBoostRegressor(iterations=10, depth=3, verbose=False, allow_writing_files=False).fit(X, YR)
    _compare(_catboost_onnx(model, tmp_path), {"features": XT}, 1e-4)


TEXT = np.array([
    "The quick brown fox jumps over the lazy dog.",
    "Never jump over the lazy dog quickly; the dog sleeps.",
    "A fox is quick, a dog is lazy, and both are brown.",
    "Bright sun, cold wind: the fox runs home.",
    "Dogs and foxes do not share a den, said the old fox.",
    "The lazy cat watches the quick fox and the sleepy dog.",
    "Quick quick quick: the brown dog barks at 3 foxes!",
    "Nothing here mentions any animal at all.",
    "the THE The tHe -- repeated words, repeated words",
    "Jumps, jumps and more jumps over logs and dogs.",
    "Sleepy foxes dream of lazy dogs in the sun",
    "",
], dtype=object)
TEXT_Y = np.array([1, 1, 1, 0, 1, 1, 1, 0, 0, 1, 1, 0])


def _text(model, y=None, options=None, tol=1e-5):
    """Fits `model` on TEXT, converts it with a [None, 1] string input and runs
    both runtimes on TEXT plus unseen sentences."""
    model.fit(TEXT, y) if y is not None else model.fit(TEXT)
    onx = to_onnx(model, initial_types=[("text", StringTensorType([None, 1]))], options=options,
                  target_opset={"": 17, "ai.onnx.ml": 3})
    ops = {(n.domain, n.op_type) for n in onx.graph.node}
    # onnxruntime's StringNormalizer builds the system locale it names, by
    # default en_US.UTF-8, which machines without locales lack; C.UTF-8 (always
    # there) lowercases ASCII text the same. Both runtimes run this model.
    for n in onx.graph.node:
        if n.op_type == "StringNormalizer" and not any(a.name == "locale" for a in n.attribute):
            n.attribute.append(onnx.helper.make_attribute("locale", "C.UTF-8"))
    assert ("com.microsoft", "Tokenizer") in ops and ("", "TfIdfVectorizer") in ops, ops
    rows = np.concatenate([TEXT, ["an unseen sentence about a fox", "dog dog dog dog", "zzz"]]).reshape(-1, 1)
    got = _compare(onx, {"text": rows}, tol)
    return model, rows, got


TEXT_VECTORIZERS = {
    "tfidf_default": lambda fe: fe.TfidfVectorizer(),
    "tfidf_ngram_1_2": lambda fe: fe.TfidfVectorizer(ngram_range=(1, 2)),
    "tfidf_ngram_1_2_word_pattern": lambda fe: fe.TfidfVectorizer(ngram_range=(1, 2), token_pattern=r"\b\w\w+\b"),
    "tfidf_stop_words": lambda fe: fe.TfidfVectorizer(stop_words=["the", "a", "and", "is", "over"]),
    "tfidf_sublinear_l1": lambda fe: fe.TfidfVectorizer(sublinear_tf=True, norm="l1", min_df=2),
    "tfidf_no_idf_no_norm": lambda fe: fe.TfidfVectorizer(use_idf=False, norm=None),
    "count_default": lambda fe: fe.CountVectorizer(),
    "count_ngram_1_2": lambda fe: fe.CountVectorizer(ngram_range=(1, 2)),
    "count_ngram_1_2_stop_words": lambda fe: fe.CountVectorizer(ngram_range=(1, 2), token_pattern=r"\b\w\w+\b",
                                                                stop_words=["the", "and", "is", "over"]),
    "count_binary_max_features": lambda fe: fe.CountVectorizer(binary=True, max_features=12),
    "count_token_pattern": lambda fe: fe.CountVectorizer(token_pattern=r"\b[a-z]{4,}\b"),
}

# Where skl2onnx's conversion itself departs from scikit-learn, only the two
# runtimes are compared: it turns the default token pattern (?u)\b\w\w+\b into
# [a-zA-Z0-9_]+, which keeps one-character words ("a", "3") that scikit-learn
# drops, so bigrams across them differ (the *_word_pattern variants spell the
# pattern out and agree); and it computes sublinear tf as log(1 + tf) where
# scikit-learn has 1 + log(tf); and it leaves stop words in the token stream
# (only the vocabulary lacks them), where scikit-learn removes them before
# forming bigrams ("jumps over the lazy" gives the bigram "jumps lazy").
NOT_AS_SKLEARN = {"tfidf_ngram_1_2", "count_ngram_1_2", "tfidf_sublinear_l1", "count_ngram_1_2_stop_words"}


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("name", sorted(TEXT_VECTORIZERS))
def test_text_vectorizer(name):
    from sklearn.feature_extraction import text as fe
    model, rows, got = _text(TEXT_VECTORIZERS[name](fe))
    if name not in NOT_AS_SKLEARN:
        np.testing.assert_allclose(got[0], model.transform(rows[:, 0]).toarray(), rtol=1e-5, atol=1e-6)


@pytest.mark.filterwarnings("ignore")
def test_tfidf_logistic_regression_pipeline():
    from sklearn.feature_extraction import text as fe
    model = pipeline.Pipeline([("tfidf", fe.TfidfVectorizer(ngram_range=(1, 2), token_pattern=r"\b\w\w+\b")),
                               ("clf", linear_model.LogisticRegression(max_iter=500))])
    model, rows, got = _text(model, TEXT_Y, options={"zipmap": False})
    np.testing.assert_array_equal(got[0], model.predict(rows[:, 0]))
    np.testing.assert_allclose(got[1], model.predict_proba(rows[:, 0]), rtol=1e-5, atol=1e-6)


@pytest.mark.filterwarnings("ignore")
def test_count_vectorizer_zipmap_pipeline_string_labels():
    from sklearn.feature_extraction import text as fe
    labels = np.array(["other", "animal"])[TEXT_Y]
    model = pipeline.Pipeline([("count", fe.CountVectorizer()), ("clf", naive_bayes.MultinomialNB())])
    model, rows, got = _text(model, labels)
    np.testing.assert_array_equal(got[0], model.predict(rows[:, 0]))

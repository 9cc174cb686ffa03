"""com.microsoft Tokenizer (onnxruntime's contrib op, which skl2onnx emits for
TfidfVectorizer / CountVectorizer): each mode against onnxruntime on the same
strings, the documented examples by value, and bad attributes and inputs.

ONNX's reference evaluator has no com.microsoft operators, so onnxruntime is
the oracle here, with the examples of its operator documentation written out."""

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import onyxruntime as rt

ort = pytest.importorskip("onnxruntime")

BASE = {"mark": 0, "pad_value": "#", "mincharnum": 1}

CORPUS = ["Hello World", "I love computer science !", "", "   ", "abc,d ef;;g", "naïve café — ünïcode",
          "x", "a  b\tc\nd", "ab_c 12 3", "日本語 テキスト"]


def _model(attrs, shape=(None,)):
    node = helper.make_node("Tokenizer", ["x"], ["y"], domain="com.microsoft", name="tok", **attrs)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.STRING, list(shape))],
                              [helper.make_tensor_value_info("y", TensorProto.STRING, None)])
    return helper.make_model(graph, ir_version=8, opset_imports=[helper.make_opsetid("", 17),
                                                                 helper.make_opsetid("com.microsoft", 1)])


def _run(sess_cls, model, x):
    sess = sess_cls(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, {"x": np.array(x, dtype=object)})[0]


def _both(attrs, x, shape=None):
    x = np.array(x, dtype=object)
    model = _model(attrs, shape or (None,) * x.ndim)
    got, exp = _run(rt.InferenceSession, model, x), _run(ort.InferenceSession, model, x)
    assert got.shape == exp.shape, (got.shape, exp.shape)
    assert got.tolist() == exp.tolist()
    return got


MODES = {
    "skl2onnx_default": {"tokenexp": "[a-zA-Z0-9_]+"},
    "word_boundary": {"tokenexp": r"\b\w\w+\b"},
    "tokenexp_mincharnum": {"tokenexp": r"\w+", "mincharnum": 3},
    "tokenexp_empty_matches": {"tokenexp": "a*"},
    "tokenexp_unicode": {"tokenexp": r"\p{L}+"},
    "separators_space": {"separators": [" "]},
    "separators_many": {"separators": [" ", ",", ";"]},
    "separators_regex": {"separators": [r"\s+", "[,;]"]},
    "separators_mincharnum": {"separators": [r"\s"], "mincharnum": 2},
    "separators_empty_matches": {"separators": ["b*"]},
    "separators_priority": {"separators": ["c", "ab+"]},
    "chars_separators": {"separators": [""]},
    "chars_tokenexp": {"tokenexp": "."},
    "mark_tokenexp": {"tokenexp": "[a-z]+", "mark": 1},
    "mark_separators": {"separators": [" "], "mark": 1, "pad_value": "<pad>"},
    "mark_chars": {"separators": [""], "mark": 1},
    "separators_win_over_tokenexp": {"separators": [" "], "tokenexp": "[a-z]"},
}


@pytest.mark.parametrize("mode", sorted(MODES))
def test_modes_match_onnxruntime(mode):
    attrs = dict(BASE, **MODES[mode])
    _both(attrs, CORPUS)
    _both(attrs, np.array(CORPUS, dtype=object).reshape(2, 5))
    _both(attrs, CORPUS[:1])


def test_documented_examples():
    y = _both(dict(BASE, separators=[" "]), ["Hello World", "I love computer science !"])
    assert y.tolist() == [["Hello", "World", "#", "#", "#"], ["I", "love", "computer", "science", "!"]]
    y = _both(dict(BASE, mark=1, separators=[" "]), [["Hello", "World"]])
    assert y.tolist() == [[["\x02", "Hello", "\x03"], ["\x02", "World", "\x03"]]]
    y = _both(dict(BASE, mark=1, tokenexp="[a-z]+"), ["ab cd", "e"])
    assert y.tolist() == [["\x02", "ab", "cd", "\x03"], ["\x02", "e", "\x03", "#"]]  # padding after the end mark
    y = _both(dict(BASE, mincharnum=2, separators=[" "]), ["a bb ccc", "d"])
    assert y.tolist() == [["bb", "ccc"], ["#", "#"]]
    y = _both(dict(BASE, separators=[""]), ["né", ""])
    assert y.tolist() == [["n", "é"], ["#", "#"]]


def test_empty_results_and_inputs():
    # Nothing left in any row: last axis 0, no marks.
    assert _both(dict(BASE, mark=1, separators=[" "]), ["   ", " "]).shape == (2, 0)
    assert _both(dict(BASE, tokenexp="[0-9]+"), [["ab", "cd"]]).shape == (1, 2, 0)
    assert _both(dict(BASE, separators=[" "]), np.zeros((0,), dtype=object)).shape == (0,)
    assert _both(dict(BASE, separators=[" "]), np.zeros((2, 0), dtype=object)).shape == (2, 0)
    assert _both(dict(BASE, separators=[" "]), np.zeros((0, 3), dtype=object)).shape == (0, 0)


def test_many_rows_split_across_threads():
    rng = np.random.RandomState(0)
    words = np.array(["alpha", "beta", "gamma", "delta", "x", "", "héllo", "wörld"], dtype=object)
    rows = [" ".join(rng.choice(words, rng.randint(0, 12))) for _ in range(3000)]
    _both(dict(BASE, tokenexp="[a-zA-Z0-9_]+"), rows)
    _both(dict(BASE, separators=[" "], mark=1), np.array(rows, dtype=object).reshape(1000, 3))


def test_tokenexpsplit_uses_tokenexp_as_separator():
    # onnxruntime's schema has no tokenexpsplit (mlprodict's runtime defines it);
    # with it the matches of tokenexp separate the tokens, as separators do.
    model = _model(dict(BASE, tokenexp="[,;]+", tokenexpsplit=1))
    y = _run(rt.InferenceSession, model, ["ab,c;;d", "e"])
    assert y.tolist() == [["ab", "c", "d"], ["e", "#", "#"]]
    same = _run(rt.InferenceSession, _model(dict(BASE, separators=["[,;]+"])), ["ab,c;;d", "e"])
    assert y.tolist() == same.tolist()


def test_output_shape_is_inferred_for_the_next_node():
    # Tokenizer has no ONNX schema: its output type must come from our rule for
    # the downstream node's kernel to be found (no value_info for "y").
    tok = helper.make_node("Tokenizer", ["x"], ["t"], domain="com.microsoft", tokenexp="[a-z]+", **BASE)
    tfidf = helper.make_node("TfIdfVectorizer", ["t"], ["y"], mode="TF", min_gram_length=1, max_gram_length=1,
                             max_skip_count=0, ngram_counts=[0], ngram_indexes=[0, 1],
                             pool_strings=["ab", "cd"])
    graph = helper.make_graph([tok, tfidf], "g", [helper.make_tensor_value_info("x", TensorProto.STRING, [None])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, ir_version=8, opset_imports=[helper.make_opsetid("", 17),
                                                                  helper.make_opsetid("com.microsoft", 1)])
    x = np.array(["ab cd ab", "zz cd"], dtype=object)
    got = _run(rt.InferenceSession, model, x)
    np.testing.assert_array_equal(got, _run(ort.InferenceSession, model, x))
    np.testing.assert_array_equal(got, [[2, 1], [0, 1]])


@pytest.mark.parametrize("attrs, message", [
    ({"mark": 0, "pad_value": "#", "separators": [" "]}, "mincharnum is required"),
    ({"mincharnum": 1, "pad_value": "#", "separators": [" "]}, "mark is required"),
    ({"mark": 0, "mincharnum": 1, "separators": [" "]}, "pad_value is required"),
    (dict(BASE, mincharnum=0, separators=[" "]), "mincharnum must be positive, got 0"),
    (dict(BASE), "one of the attributes separators or tokenexp is required"),
    (dict(BASE, tokenexp=""), "tokenexp must not be empty"),
    (dict(BASE, tokenexp="(ab"), "tokenexp '(ab' is not a valid RE2 regular expression: missing )"),
    (dict(BASE, separators=[" ", "[a-"]), "separators '[a-' is not a valid RE2 regular expression"),
    (dict(BASE, mincharnum=2, separators=[""]), "mincharnum is 2, too big for character tokenization"),
])
def test_bad_attributes(attrs, message):
    with pytest.raises(Exception) as e:
        rt.InferenceSession(_model(attrs).SerializeToString())
    assert message in str(e.value) and "Tokenizer" in str(e.value) and "'tok'" in str(e.value)


def test_bad_inputs():
    # Rank 3: refused at load when declared, at run time when not.
    with pytest.raises(Exception, match=r"Tokenizer.*must have shape \[C\] or \[N, C\]"):
        rt.InferenceSession(_model(dict(BASE, separators=[" "]), shape=(1, 1, 1)).SerializeToString())
    node = helper.make_node("Tokenizer", ["x"], ["y"], domain="com.microsoft", name="tok", separators=[" "], **BASE)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.STRING, None)],
                              [helper.make_tensor_value_info("y", TensorProto.STRING, None)])
    model = helper.make_model(graph, ir_version=8, opset_imports=[helper.make_opsetid("", 17),
                                                                  helper.make_opsetid("com.microsoft", 1)])
    sess = rt.InferenceSession(model.SerializeToString())
    with pytest.raises(Exception, match=r"'tok'.*input 0 \(X\) must have shape \[C\] or \[N, C\], got rank 3"):
        sess.run(None, {"x": np.array([[["a b"]]], dtype=object)})
    # Not UTF-8: named by its index.
    with pytest.raises(Exception, match=r"'tok'.*string 1 is not valid UTF-8 \(byte 1 of 3\)"):
        sess.run(None, {"x": np.array([b"ok", b"a\xffb"], dtype=object)})
    # The session stays usable.
    assert sess.run(None, {"x": np.array(["a b"], dtype=object)})[0].tolist() == [["a", "b"]]

"""String kernels: StringNormalizer, StringConcat, StringSplit, RegexFullMatch
and TfIdfVectorizer. Each case is a one-node model run through onyxruntime and
compared with onnx.reference.ReferenceEvaluator and with onnxruntime where
they implement the spec (see the notes at each), plus bad inputs that must
fail with an error naming the node and the fault."""

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

import onyxruntime as rt

SELF_CHECK = rt.__name__ == "onnxruntime"


def _elem(arr):
    if arr.dtype == object:
        return TensorProto.STRING
    return helper.np_dtype_to_tensor_dtype(arr.dtype)


def _model(op, feeds, attrs=None, opset=20, n_out=1, out_types=None, shapes=True):
    outs = [f"y{i}" for i in range(n_out)]
    node = helper.make_node(op, list(feeds), outs, name="node", **(attrs or {}))
    inputs = [helper.make_tensor_value_info(k, _elem(v), list(v.shape) if shapes else None)
              for k, v in feeds.items()]
    m = helper.make_model(helper.make_graph([node], "g", inputs, [
        helper.make_tensor_value_info(o, TensorProto.UNDEFINED, None) for o in outs]),
        opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8 if opset <= 18 else 10
    # onnxruntime refuses undefined output types: take them from ONNX's inference.
    inferred = {v.name: v.type.tensor_type.elem_type for v in onnx.shape_inference.infer_shapes(m).graph.output}
    for o in m.graph.output:
        o.type.tensor_type.elem_type = out_types[outs.index(o.name)] if out_types else inferred.get(o.name, 0)
    return m


def _ours(m, feeds):
    return rt.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)


def _assert_same(a, b, what):
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape, f"{what}: shape {a.shape} vs {b.shape}"
    if a.dtype == object or b.dtype == object:
        assert a.tolist() == b.tolist(), what
        return
    assert a.dtype == b.dtype, f"{what}: dtype {a.dtype} vs {b.dtype}"
    np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6, err_msg=what)


def _check(op, feeds, attrs=None, opset=20, n_out=1, with_ort=True, with_ref=True, expected=None):
    if SELF_CHECK and not with_ort:
        pytest.skip("a form onnxruntime does not run (or runs differently)")
    m = _model(op, feeds, attrs, opset, n_out)
    ours = _ours(m, feeds)
    assert len(ours) == n_out
    if expected is not None:
        for i in range(n_out):
            _assert_same(ours[i], expected[i], f"{op} output {i} vs expected")
    if with_ref:
        ref = ReferenceEvaluator(m).run(None, feeds)
        for i in range(n_out):
            _assert_same(ours[i], ref[i], f"{op} output {i} vs reference")
    if with_ort:
        theirs = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)
        for i in range(n_out):
            _assert_same(ours[i], theirs[i], f"{op} output {i} vs onnxruntime")
    return ours


def _fails(op, feeds, attrs=None, opset=20, n_out=1, match=(), at_load=False):
    m = _model(op, feeds, attrs, opset, n_out, shapes=False)
    with pytest.raises(Exception) as e:
        sess = rt.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
        assert not at_load, "the session was created"
        sess.run(None, feeds)
    msg = str(e.value)
    if not SELF_CHECK:
        assert "node" in msg and op in msg, msg
        for part in match:
            assert part in msg, msg
    return msg


def S(*xs):
    return np.array(xs, dtype=object)


# ---------------------------------------------------------------- StringNormalizer
# onnxruntime's kernel needs the named system locale: its default (en_US.UTF-8)
# is missing on a machine without locales, so it is compared with locale
# C.UTF-8 (glibc's built-in one) on text whose simple case mapping (what it
# does) equals Unicode's full mapping (what we do). onnx's reference strips
# accents and drops stopwords word by word, not element by element as the spec
# says, so it is compared on unaccented one-word strings only.

WEEK = S("monday", "Tuesday", "WEDNESDAY", "thursday", "Monday")


@pytest.mark.parametrize("action", ["LOWER", "UPPER", "NONE"])
@pytest.mark.parametrize("sensitive", [0, 1])
@pytest.mark.parametrize("shape", ["1d", "2d"])
def test_string_normalizer_matches_ort_and_reference(action, sensitive, shape):
    x = WEEK if shape == "1d" else WEEK.reshape(1, -1)
    attrs = {"case_change_action": action, "is_case_sensitive": sensitive, "stopwords": ["monday", "THURSDAY"],
             "locale": "C.UTF-8"}
    # The reference compares case-insensitively only when it also changes case.
    _check("StringNormalizer", {"x": x}, attrs, opset=10, with_ref=bool(sensitive) or action != "NONE")


def test_string_normalizer_non_ascii_matches_ort():
    x = S("Ärger", "éCOLE", "Привет", "ΑΘΗΝΑ", "plain")
    for action in ("LOWER", "UPPER"):
        attrs = {"case_change_action": action, "stopwords": ["привет"], "locale": "C.UTF-8"}
        _check("StringNormalizer", {"x": x}, attrs, opset=10, with_ref=False)


def test_string_normalizer_needs_no_system_locale():
    # onnxruntime fails to create this session here (no en_US.UTF-8 installed);
    # ours applies Unicode's full case mappings, as Python's str does.
    x = S("Straße", "ὈΔΥΣΣΕΎΣ", "İstanbul", "ǆemal", "ﬁne")
    for action, fn in (("UPPER", str.upper), ("LOWER", str.lower)):
        for locale in (None, "en_US.UTF-8", "fr_FR"):
            attrs = {"case_change_action": action}
            if locale:
                attrs["locale"] = locale
            y = _check("StringNormalizer", {"x": x}, attrs, opset=10, with_ort=False, with_ref=False)[0]
            assert y.tolist() == [fn(s) for s in x], (action, locale)


def test_string_normalizer_turkish_locale():
    if SELF_CHECK:
        return
    x = S("Iğdır", "istanbul")
    y = _check("StringNormalizer", {"x": x}, {"case_change_action": "LOWER", "locale": "tr_TR"}, opset=10,
               with_ort=False, with_ref=False)[0]
    assert y.tolist() == ["ığdır", "istanbul"]
    y = _check("StringNormalizer", {"x": x}, {"case_change_action": "UPPER", "locale": "tr-TR"}, opset=10,
               with_ort=False, with_ref=False)[0]
    assert y.tolist() == ["IĞDIR", "İSTANBUL"]


def test_string_normalizer_case_insensitive_stopwords_are_unicode():
    x = S("STRASSE", "Ärger", "keep")
    y = _check("StringNormalizer", {"x": x}, {"stopwords": ["straße", "äRGER"]}, opset=10, with_ort=False,
               with_ref=False)[0]
    assert y.tolist() == ["keep"]


def test_string_normalizer_everything_dropped():
    attrs = {"stopwords": ["a"], "locale": "C.UTF-8", "case_change_action": "LOWER"}
    _check("StringNormalizer", {"x": S("a", "A")}, attrs, opset=10, expected=[S("")])
    _check("StringNormalizer", {"x": S("a", "A").reshape(1, 2)}, attrs, opset=10, expected=[S("").reshape(1, 1)])
    _check("StringNormalizer", {"x": S("a", "A")}, {"stopwords": ["a"]}, opset=10, with_ort=False, with_ref=False,
           expected=[S("")])


def test_string_normalizer_bad_input():
    _fails("StringNormalizer", {"x": S("a", "b", "c", "d").reshape(2, 2)}, opset=10, match=("[C] or [1, C]", "2,2"))
    _fails("StringNormalizer", {"x": S("ok", b"\xff\xfe".decode("latin-1").encode("latin-1"))},
           {"case_change_action": "UPPER"}, opset=10, match=("element 1", "UTF-8"))
    _fails("StringNormalizer", {"x": S("a")}, {"case_change_action": "TITLE"}, opset=10,
           match=("case_change_action", "TITLE"), at_load=True)


# ---------------------------------------------------------------- StringConcat

@pytest.mark.parametrize("xs,ys", [
    ((2, 3), (2, 3)), ((2, 3), (3,)), ((2, 1), (1, 4)), ((), ()), ((3,), ()), ((0, 2), (2,)),
])
def test_string_concat(xs, ys):
    rng = np.random.default_rng(1)
    words = ["", "a", "bc", "的", "é", "long word"]
    x = np.array(rng.choice(words, size=xs), dtype=object).reshape(xs)
    y = np.array(rng.choice(words, size=ys), dtype=object).reshape(ys)
    _check("StringConcat", {"x": x, "y": y})


def test_string_concat_bad_shapes():
    _fails("StringConcat", {"x": S("a", "b"), "y": S("a", "b", "c")}, match=("broadcast",))


# ---------------------------------------------------------------- StringSplit

# onnxruntime differs from Python's str.split (the reference) in two places,
# so it is compared on the strings without them: with no delimiter it splits at
# ' ' only (not at tabs or newlines), and it makes no piece of an empty string
# ("".split(",") is [""]: one piece), and the last piece after maxsplit splits
# loses its trailing whitespace (" a b ".split(maxsplit=0) is ["a b "]).
SPLIT_TEXT = S("hello world !", "  hello   world !", "a,b,,c,", ",", "no-delim", "x, y, z", "l", "a b  c",
               "", "tab\tand\nnewline ", " trailing  ")


@pytest.mark.parametrize("attrs", [
    {}, {"delimiter": ""}, {"delimiter": ","}, {"delimiter": ", "}, {"delimiter": ",", "maxsplit": 1},
    {"maxsplit": 0}, {"maxsplit": 1}, {"delimiter": ",", "maxsplit": 0}, {"delimiter": "l"},
])
def test_string_split(attrs):
    _check("StringSplit", {"x": SPLIT_TEXT}, attrs, n_out=2, with_ort=False)
    _check("StringSplit", {"x": SPLIT_TEXT[:8]}, attrs, n_out=2)
    _check("StringSplit", {"x": SPLIT_TEXT[:8].reshape(2, 4)}, attrs, n_out=2)


def test_string_split_empty_and_scalar():
    _check("StringSplit", {"x": np.zeros((0,), dtype=object)}, {"delimiter": ","}, n_out=2)
    _check("StringSplit", {"x": np.zeros((2, 0), dtype=object)}, {}, n_out=2)
    # The reference cannot pad a 0-d input.
    _check("StringSplit", {"x": np.array(" a b c", dtype=object)}, {}, n_out=2, with_ref=False,
           expected=[S("a", "b", "c"), np.array(3, np.int64)])
    _check("StringSplit", {"x": S("", "")}, {"delimiter": "-"}, n_out=2, with_ort=False,
           expected=[S("", "").reshape(2, 1), np.array([1, 1], np.int64)])


def test_string_split_unicode_whitespace_as_python():
    # No delimiter: Python's str.split() (onnx's reference) splits at Unicode
    # whitespace too (no-break space, ideographic space, ...).
    x = S("a\u00a0b\u3000c", "\u2003x\u2028y\x1cz ", "é ü")
    _check("StringSplit", {"x": x}, {}, n_out=2, with_ort=False)
    _check("StringSplit", {"x": x}, {"maxsplit": 1}, n_out=2, with_ort=False)


# ---------------------------------------------------------------- RegexFullMatch

@pytest.mark.parametrize("pattern,texts", [
    (r"www\.[\w.-]+\.\bcom\b", ["www.google.com", "www.bbc.co.uk", "www..com", ""]),
    (r"(\W|^)[\w.\-]{0,25}@(yahoo|gmail)\.com(\W|$)", ["a@gmail.com", "a@hotmail.com", "x"]),
    (r"[0-9]+", ["123", "12a", "", "٣"]),
    (r"", ["", "a"]),
    (r"\p{Greek}+", ["αβγ", "abc"]),
    (r"(?i)hello", ["HeLLo", "hello!"]),
    (r"a.c", ["abc", "a\nc", "a的c"]),
])
def test_regex_full_match(pattern, texts):
    x = np.array(texts, dtype=object)
    _check("RegexFullMatch", {"x": x}, {"pattern": pattern}, with_ref="\\p" not in pattern)
    _check("RegexFullMatch", {"x": np.array(texts * 2, dtype=object).reshape(2, -1)}, {"pattern": pattern},
           with_ref="\\p" not in pattern)


def test_regex_full_match_empty_and_scalar():
    _check("RegexFullMatch", {"x": np.zeros((2, 0), dtype=object)}, {"pattern": "a+"})
    _check("RegexFullMatch", {"x": np.array("aaa", dtype=object)}, {"pattern": "a+"})


def test_regex_that_does_not_compile_fails_at_session_creation():
    msg = _fails("RegexFullMatch", {"x": S("a")}, {"pattern": "(unclosed[a-"}, match=("(unclosed[a-", "pattern"),
                 at_load=True)
    # Backreferences are not RE2 syntax: refused, not silently mismatched.
    _fails("RegexFullMatch", {"x": S("aa")}, {"pattern": r"(a)\1"}, match=(r"(a)\1",), at_load=True)
    assert "RE2" in msg or SELF_CHECK


# ---------------------------------------------------------------- TfIdfVectorizer

POOL_INTS = [2, 3, 5, 4, 5, 6, 7, 8, 6, 7, 1, 2, 3]  # 4 unigrams, 3 bigrams, 1 trigram
POOL_STRS = ["two", "three", "five", "four", "five", "six", "seven", "eight", "six", "seven", "one", "two", "three"]
WORDS = {1: "one", 2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven", 8: "eight", 9: "nine"}


def _tfidf_attrs(mode, min_n, max_n, skip, strings, weights=None, indexes=None):
    attrs = {"mode": mode, "min_gram_length": min_n, "max_gram_length": max_n, "max_skip_count": skip,
             "ngram_counts": [0, 4, 10], "ngram_indexes": indexes or list(range(8))}
    attrs["pool_strings" if strings else "pool_int64s"] = POOL_STRS if strings else POOL_INTS
    if weights is not None:
        attrs["weights"] = weights
    return attrs


@pytest.mark.parametrize("mode", ["TF", "IDF", "TFIDF"])
@pytest.mark.parametrize("grams", [(1, 1), (1, 2), (2, 2), (1, 3), (2, 3), (3, 3)])
@pytest.mark.parametrize("skip", [0, 1, 5])
@pytest.mark.parametrize("dtype", [np.int32, np.int64, object])
def test_tfidf_vectorizer(mode, grams, skip, dtype):
    rng = np.random.default_rng(grams[0] * 100 + grams[1] * 10 + skip)
    ints = rng.integers(1, 10, size=(3, 14))
    x = np.vectorize(WORDS.get, otypes=[object])(ints) if dtype is object else ints.astype(dtype)
    weights = [0.5, 1.0, 2.0, 0.25, 3.0, 1.5, 0.75, 4.0]
    for w in (None, weights):
        attrs = _tfidf_attrs(mode, grams[0], grams[1], skip, dtype is object, w)
        # The reference needs weights outside TF mode.
        ref = w is not None or mode == "TF"
        _check("TfIdfVectorizer", {"x": x}, attrs, opset=9, with_ref=ref)
        _check("TfIdfVectorizer", {"x": x[1]}, attrs, opset=9, with_ref=ref)


def test_tfidf_vectorizer_index_permutation_and_empty():
    x = np.array([[1, 2, 3, 5, 6, 7], [2, 2, 2, 9, 9, 9]], np.int64)
    # Weights belong to pool n-grams (spec, onnxruntime); the reference reads
    # them by output column, which differs once ngram_indexes permutes.
    attrs = _tfidf_attrs("TFIDF", 1, 3, 2, False, [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0], indexes=[7, 6, 5, 4, 3, 2, 1, 0])
    _check("TfIdfVectorizer", {"x": x}, attrs, opset=9, with_ref=False)
    _check("TfIdfVectorizer", {"x": x}, dict(attrs, mode="IDF"), opset=9, with_ref=False)
    _check("TfIdfVectorizer", {"x": np.zeros((0,), np.int64)}, attrs, opset=9)
    _check("TfIdfVectorizer", {"x": np.zeros((2, 0), np.int64)}, attrs, opset=9)
    # Only bigrams asked for; a row shorter than any n-gram.
    _check("TfIdfVectorizer", {"x": np.array([[5], [6]], np.int64)}, _tfidf_attrs("TF", 2, 2, 0, False), opset=9)


def test_tfidf_vectorizer_bad_input():
    base = _tfidf_attrs("TF", 1, 2, 0, False)
    x = np.array([1, 2, 3], np.int64)
    _fails("TfIdfVectorizer", {"x": x}, dict(base, mode="BM25"), opset=9, match=("mode", "BM25"), at_load=True)
    _fails("TfIdfVectorizer", {"x": x}, dict(base, min_gram_length=3), opset=9, match=("min_gram_length",),
           at_load=True)
    _fails("TfIdfVectorizer", {"x": x}, dict(base, ngram_counts=[0, 5, 10]), opset=9, match=("groups of 2",),
           at_load=True)
    _fails("TfIdfVectorizer", {"x": x}, dict(base, ngram_counts=[0, 4, 99]), opset=9, match=("ngram_counts",),
           at_load=True)
    _fails("TfIdfVectorizer", {"x": x}, dict(base, ngram_indexes=[0, 1, 2]), opset=9, match=("ngram_indexes",),
           at_load=True)
    _fails("TfIdfVectorizer", {"x": x}, dict(base, weights=[1.0]), opset=9, match=("weights",), at_load=True)
    both = dict(base, pool_strings=POOL_STRS)
    _fails("TfIdfVectorizer", {"x": x}, both, opset=9, match=("pool_int64s", "pool_strings"), at_load=True)
    _fails("TfIdfVectorizer", {"x": np.zeros((2, 2, 2), np.int64)}, base, opset=9, match=("[N, C]", "2,2,2"))

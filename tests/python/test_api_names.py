"""Walks onnxruntime 1.31's public Python names and fails listing every one
onyxruntime lacks (issue 14), except those README.md's section "Python names
not provided" lists with a reason.

Walked: the module attributes of `onnxruntime` and of
`onnxruntime.capi._pybind_state`, and the public methods and properties
(plus the DLPack and array protocol dunders) of InferenceSession,
SessionOptions, RunOptions, OrtValue (the public class and the C-level one),
IOBinding, SessionIOBinding, OrtMemoryInfo and SparseTensor.
"""

import importlib
import json
import os
import pathlib
import re
import subprocess
import sys

import pytest

README = pathlib.Path(__file__).resolve().parents[2] / "README.md"
SECTION = "### Python names not provided"
CLASSES = ["InferenceSession", "SessionOptions", "RunOptions", "OrtValue", "IOBinding", "SessionIOBinding",
           "OrtMemoryInfo", "SparseTensor"]
C_CLASSES = ["OrtValue", "SparseTensor"]
DUNDERS = {"__dlpack__", "__dlpack_device__", "__array__"}


def _public(obj):
    return {n for n in dir(obj) if not n.startswith("_") or n in DUNDERS}


def walk(pkg):
    """Every walked name of package `pkg` ('onnxruntime' or 'onyxruntime'),
    spelled with onnxruntime's module path so the two sets compare."""
    top = importlib.import_module(pkg)
    c = importlib.import_module(pkg + ".capi._pybind_state")
    names = {"onnxruntime." + n for n in _public(top)}
    names |= {"onnxruntime.capi._pybind_state." + n for n in _public(c)}
    for cls in CLASSES:
        obj = getattr(top, cls, None) or getattr(c, cls, None)
        if obj is not None:
            names |= {"%s.%s" % (cls, n) for n in _public(obj)}
    for cls in C_CLASSES:
        obj = getattr(c, cls, None)
        if obj is not None:
            names |= {"capi._pybind_state.%s.%s" % (cls, n) for n in _public(obj)}
    return names


def exempt():
    """{name: reason} from README.md's section (lines "- `a`, `b`: reason")."""
    text = README.read_text(encoding="utf-8")
    assert SECTION in text, "README.md lacks the section %r" % SECTION
    body = text.split(SECTION, 1)[1].split("\n## ", 1)[0].split("\n### ", 1)[0]
    reasons = {}
    for line in body.splitlines():
        m = re.match(r"^- ((?:`[^`]+`(?:, )?)+): (\S.*)$", line)
        if m:
            for name in re.findall(r"`([^`]+)`", m.group(1)):
                reasons[name] = m.group(2)
    return reasons


def walk_fresh(pkg, path_prefix=()):
    """walk(pkg) in a fresh interpreter: a package's attributes include the
    submodules anything imported before (onnxruntime.quantization once a test
    quantized a model), so the walk must not depend on what ran first."""
    code = ("import sys, json; sys.path[:0] = %r; sys.path.insert(0, %r); import test_api_names as t; "
            "print(json.dumps(sorted(t.walk(%r))))" % (list(path_prefix), os.path.dirname(__file__), pkg))
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    return set(json.loads(r.stdout.strip().splitlines()[-1]))


@pytest.fixture(scope="module")
def ort_names():
    return walk_fresh("onnxruntime")


@pytest.fixture(scope="module")
def onyx_names(onyx):
    # The same package as this process imported (conftest puts the build's first on sys.path).
    return walk_fresh(onyx.__name__, [os.path.dirname(os.path.dirname(os.path.abspath(onyx.__file__)))])


def test_no_name_missing(ort_names, onyx_names):
    reasons = exempt()
    missing = sorted(n for n in ort_names - onyx_names if n not in reasons)
    assert not missing, "%d onnxruntime 1.31 names are missing from onyxruntime (add them, or list them with a " \
                        "reason in README.md's %r):\n  %s" % (len(missing), SECTION, "\n  ".join(missing))


def test_exemptions_are_current(ort_names, onyx_names):
    # Every listed name must be one onnxruntime has and onyxruntime lacks, so
    # the list shrinks as names are added.
    stale = sorted(n for n in exempt() if n not in ort_names or n in onyx_names)
    assert not stale, "README.md lists names that are not missing any more (or that onnxruntime lacks): %s" % stale


def test_walk_sees_the_classes(ort_names, onyx_names):
    # A walk that silently found nothing would pass the test above.
    for name in ["InferenceSession.run", "OrtValue.numpy", "SessionOptions.add_session_config_entry",
                 "onnxruntime.capi._pybind_state.OrtValueVector", "capi._pybind_state.OrtValue.__dlpack__"]:
        assert name in ort_names
    assert len(ort_names) > 300
    assert "InferenceSession.run" in onyx_names and "onnxruntime.InferenceSession" in onyx_names

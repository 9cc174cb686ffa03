"""Shared pytest setup for the Python tests of onyxruntime.

- Puts the staged package on sys.path: $ONYX_PYTHONPATH, else <repo>/build/python.
- ONYX_TEST_SELF_CHECK=1 makes `import onyxruntime` give onnxruntime instead, to check
  the tests' own logic against the oracle (every comparison must then pass trivially).
- `model_files` (session-scoped) generates the end-to-end models once into
  $ONYX_MODEL_DIR (else <repo>/build/models); ONYX_TEST_SMALL_MODELS=1 uses the
  small BERT (2 layers), kept apart in <dir>/small/bert.onnx.
"""

import importlib
import importlib.util
import os
import sys

import pytest

REPO_ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir, os.pardir))
ONYX_PYTHONPATH = os.environ.get("ONYX_PYTHONPATH", os.path.join(REPO_ROOT, "build", "python"))
SELF_CHECK = os.environ.get("ONYX_TEST_SELF_CHECK", "") not in ("", "0")
SMALL_MODELS = os.environ.get("ONYX_TEST_SMALL_MODELS", "") not in ("", "0")

if ONYX_PYTHONPATH not in sys.path:
    sys.path.insert(0, ONYX_PYTHONPATH)

if SELF_CHECK:
    import onnxruntime as _ort

    sys.modules["onyxruntime"] = _ort


def pytest_report_header(config):
    lines = ["onyxruntime from: %s" % ONYX_PYTHONPATH]
    if SELF_CHECK:
        lines.append("ONYX_TEST_SELF_CHECK=1: onyxruntime is aliased to onnxruntime "
                     "(checks the tests, not the product)")
    return lines


def _load_generator():
    path = os.path.join(REPO_ROOT, "tests", "models", "generate.py")
    spec = importlib.util.spec_from_file_location("onyx_test_model_generator", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="session")
def model_generator():
    """The tests/models/generate.py module."""
    return _load_generator()


@pytest.fixture(scope="session")
def model_dir():
    d = os.environ.get("ONYX_MODEL_DIR") or os.path.join(REPO_ROOT, "build", "models")
    os.makedirs(d, exist_ok=True)
    return d


class ModelFiles:
    """Generates each model on first use (a no-op when the cached file is current)."""

    def __init__(self, gen, directory, small):
        self.gen, self.dir, self.small = gen, directory, small
        self._paths = {}

    def path(self, name):
        if name not in self._paths:
            # --small changes only BERT; keep it apart so both sizes stay cached.
            d = os.path.join(self.dir, "small") if (self.small and name == "bert") else self.dir
            self._paths[name] = self.gen.ensure_model(d, name, small=self.small)
        return self._paths[name]

    def bert_config(self):
        return self.gen.bert_config(self.small)


@pytest.fixture(scope="session")
def model_files(model_generator, model_dir):
    return ModelFiles(model_generator, model_dir, SMALL_MODELS)


@pytest.fixture(scope="session")
def onyx():
    """The onyxruntime module (onnxruntime under ONYX_TEST_SELF_CHECK=1)."""
    try:
        import onyxruntime
    except ImportError as e:
        pytest.fail("cannot import onyxruntime from %s (build it first, or set "
                    "ONYX_PYTHONPATH; ONYX_TEST_SELF_CHECK=1 checks the tests alone): %s"
                    % (ONYX_PYTHONPATH, e), pytrace=False)
    return onyxruntime


@pytest.fixture(params=["onnxruntime", "onyxruntime"])
def rt(request):
    """The runtime module under test, for parity tests: each test runs on
    onnxruntime (the oracle) and on onyxruntime. Under ONYX_TEST_SELF_CHECK=1
    both parameters are onnxruntime."""
    return importlib.import_module(request.param)


def is_ort(rt):
    """True when `rt` is onnxruntime itself (for the branches where onyxruntime
    deliberately differs; the test then says why)."""
    return rt.__name__ == "onnxruntime"

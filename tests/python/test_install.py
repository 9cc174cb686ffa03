"""`cmake --install` and the consumers of what it lays out, all built outside the source tree.

Installs the build into a temporary prefix, checks the layout (library,
headers, CMake package, pkg-config file, jar, C# assembly), then builds and
runs tests/install_consumers/ against that prefix only: a C and a C++ program
through find_package(OnyxRuntime) (imported target OnyxRuntime::onyxruntime),
a C program through pkg-config, a Java program against the installed jar and a
C# program against the installed assembly. Each runs add.onnx and prints z.
"""
import os
import shutil
import subprocess
import sys

import pytest

from conftest import REPO_ROOT

CONSUMERS = os.path.join(REPO_ROOT, "tests", "install_consumers")
EXPECTED = "z = 11 22 33 44 55 66"
JNA = "/usr/share/java/jna.jar"


def _build_dir():
    d = os.environ.get("ONYX_BUILD_DIR") or os.path.join(REPO_ROOT, "build")
    if not os.path.exists(os.path.join(d, "libonyxruntime.so")):
        pytest.fail("no libonyxruntime.so in %s: build first" % d, pytrace=False)
    return d


def _cmake():
    venv = os.path.join(REPO_ROOT, ".venv", "bin", "cmake")
    return venv if os.path.exists(venv) else "cmake"


def _run(cmd, **kw):
    env = {k: v for k, v in os.environ.items()
           if k not in ("LD_LIBRARY_PATH", "ONYXRUNTIME_LIBRARY", "MONO_PATH", "PKG_CONFIG_PATH")}
    env.update(kw.pop("env", {}))
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env, **kw)
    assert r.returncode == 0, "%s\n%s\n%s" % (" ".join(map(str, cmd)), r.stdout, r.stderr)
    return r.stdout


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    d = tmp_path_factory.mktemp("install")
    assert not str(d).startswith(REPO_ROOT)
    _run([sys.executable, os.path.join(REPO_ROOT, "bindings", "make_test_models.py"), str(d)])
    return d


@pytest.fixture(scope="module")
def prefix(work):
    p = work / "prefix"
    _run([_cmake(), "--install", _build_dir(), "--prefix", str(p)])
    return p


def test_layout(prefix):
    for f in ["lib/libonyxruntime.so", "include/onyxruntime/onyxruntime_c_api.h",
              "include/onyxruntime/onyxruntime_cxx_api.h", "lib/cmake/OnyxRuntime/OnyxRuntimeConfig.cmake",
              "lib/cmake/OnyxRuntime/OnyxRuntimeConfigVersion.cmake", "lib/cmake/OnyxRuntime/OnyxRuntimeTargets.cmake",
              "lib/pkgconfig/onyxruntime.pc", "share/java/onyxruntime.jar", "lib/onyxruntime/OnyxRuntime.dll"]:
        assert (prefix / f).is_file(), f
    # Everything the library loads that Debian's base system lacks travels with it ($ORIGIN), protobuf-lite first.
    ldd = _run(["ldd", str(prefix / "lib" / "libonyxruntime.so")])
    proto = [l for l in ldd.splitlines() if "libprotobuf-lite" in l]
    assert proto and str(prefix / "lib") in proto[0], ldd
    assert "not found" not in ldd, ldd


def test_find_package_consumers(work, prefix):
    build = work / "cmake_consumer"
    _run([_cmake(), "-S", CONSUMERS, "-B", str(build), "-G", "Ninja", "-DCMAKE_PREFIX_PATH=%s" % prefix])
    _run([_cmake(), "--build", str(build)])
    for exe in ("consumer_c", "consumer_cxx"):
        out = _run([str(build / exe), str(work / "add.onnx")])
        assert out.strip() == EXPECTED, (exe, out)
    # A version the package does not provide is refused.
    too_new = work / "too_new"
    too_new.mkdir()
    (too_new / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.16)\nproject(x C)\nfind_package(OnyxRuntime 99 REQUIRED)\n")
    r = subprocess.run([_cmake(), "-S", str(too_new), "-B", str(too_new / "b"), "-DCMAKE_PREFIX_PATH=%s" % prefix],
                       capture_output=True, text=True)
    assert r.returncode != 0 and "OnyxRuntime" in r.stderr


def test_pkg_config_consumer(work, prefix):
    env = {"PKG_CONFIG_PATH": str(prefix / "lib" / "pkgconfig")}
    flags = _run(["pkg-config", "--cflags", "--libs", "onyxruntime"], env=env).split()
    libdir = _run(["pkg-config", "--variable=libdir", "onyxruntime"], env=env).strip()
    assert os.path.realpath(libdir) == os.path.realpath(prefix / "lib")
    exe = work / "pkgconfig_consumer"
    _run(["cc", "-std=c99", "-Wall", "-Werror", os.path.join(CONSUMERS, "consumer.c"), "-o", str(exe)] + flags +
         ["-Wl,-rpath," + libdir])
    assert _run([str(exe), str(work / "add.onnx")]).strip() == EXPECTED


def test_java_consumer(work, prefix):
    jar = str(prefix / "share" / "java" / "onyxruntime.jar")
    classes = work / "java_classes"
    _run(["javac", "-d", str(classes), "-cp", jar, os.path.join(CONSUMERS, "Consumer.java")])
    out = _run(["java", "-cp", "%s:%s:%s" % (jar, JNA, classes), "Consumer", str(work / "add.onnx")])
    assert out.strip() == EXPECTED


def test_csharp_consumer(work, prefix):
    assembly_dir = prefix / "lib" / "onyxruntime"
    exe = work / "consumer.exe"
    _run(["mcs", "-r:%s" % (assembly_dir / "OnyxRuntime.dll"), "-r:System.Core", "-out:%s" % exe,
          os.path.join(CONSUMERS, "Consumer.cs")])
    out = _run(["mono", str(exe), str(work / "add.onnx")], env={"MONO_PATH": str(assembly_dir)})
    assert out.strip() == EXPECTED

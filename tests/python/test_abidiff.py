"""abi_checks/abidiff_check.py: abidiff against a stored abidw dump.

Each case builds a stand-in library exporting OnyxGetApiBase from a copy of the
public header (compiled with -g, like capi/src/api_base.cc), dumps the
unchanged one as the baseline and checks a changed one against it: entries
appended pass; a changed parameter type, two entries swapped, a struct member
retyped or an extra exported symbol fail. Also the real library against the
stored dump.
"""
import os
import re
import subprocess
import sys

import pytest

from conftest import REPO_ROOT

HEADER = os.path.join(REPO_ROOT, "capi", "include", "onyxruntime", "onyxruntime_c_api.h")
CHECK = os.path.join(REPO_ROOT, "abi_checks", "abidiff_check.py")
STUB = """#include "onyxruntime/onyxruntime_c_api.h"
static const OnyxApiBase base;
ONYX_EXPORT const OnyxApiBase* OnyxGetApiBase(void) { return &base; }
"""

def _library(tmp_path, name, edit=lambda s: s, extra=""):
    d = tmp_path / name
    (d / "onyxruntime").mkdir(parents=True)
    with open(HEADER) as f:
        text = f.read()
    changed = edit(text)
    assert changed != text or name == "base" or extra, "the edit did not apply"
    (d / "onyxruntime" / "onyxruntime_c_api.h").write_text(changed)
    (d / "stub.c").write_text(STUB + extra)
    lib = d / "libonyxruntime.so"
    subprocess.run(["gcc", "-g", "-shared", "-fPIC", "-fvisibility=hidden", "-I", str(d), str(d / "stub.c"), "-o",
                    str(lib)], check=True)
    return str(lib)


def _check(tmp_path, lib):
    base = _library(tmp_path, "base")
    subprocess.run([sys.executable, CHECK, base, "--update"], check=True, capture_output=True,
                   env=dict(os.environ, ONYX_ABI_DUMP=str(tmp_path / "base.abi")))
    return subprocess.run([sys.executable, CHECK, lib, "--baseline", str(tmp_path / "base.abi")],
                          capture_output=True, text=True)


def test_unchanged_passes(tmp_path):
    r = _check(tmp_path, _library(tmp_path, "same", lambda s: s.replace("/* ---- Status", "/* ---- status", 1)))
    assert r.returncode == 0, r.stdout
    assert "no ABI change" in r.stdout


def test_appended_entries_pass(tmp_path):
    lib = _library(tmp_path, "append", lambda s: s.replace(
        "} OnyxApi;", "  OnyxStatus* (*NewEntry)(int x);\n  void (*OtherEntry)(void);\n} OnyxApi;"))
    r = _check(tmp_path, lib)
    assert r.returncode == 0, r.stdout
    assert "only entries appended" in r.stdout


def test_changed_parameter_type_fails(tmp_path):
    lib = _library(tmp_path, "param", lambda s: re.sub(
        r"\(\*SessionOptionsSetIntraOpThreads\)\(OnyxSessionOptions\* options, int", 
        "(*SessionOptionsSetIntraOpThreads)(OnyxSessionOptions* options, int64_t", s))
    r = _check(tmp_path, lib)
    assert r.returncode == 1, r.stdout
    assert "SessionOptionsSetIntraOpThreads" in r.stdout


def test_swapped_entries_fail(tmp_path):
    def swap(s):
        a = re.search(r"  OnyxStatus\* \(\*SessionGetInputCount\)\([^;]*;\n", s).group(0)
        b = re.search(r"  OnyxStatus\* \(\*SessionGetOutputCount\)\([^;]*;\n", s).group(0)
        return s.replace(a + b, b + a)
    r = _check(tmp_path, _library(tmp_path, "swap", swap))
    assert r.returncode == 1, r.stdout
    assert "SessionGetInputCount" in r.stdout or "SessionGetOutputCount" in r.stdout


def test_struct_member_change_fails(tmp_path):
    lib = _library(tmp_path, "struct", lambda s: s.replace("  size_t data_bytes;", "  uint32_t data_bytes;", 1))
    r = _check(tmp_path, lib)
    assert r.returncode == 1, r.stdout
    assert "data_bytes" in r.stdout


def test_extra_exported_symbol_fails(tmp_path):
    lib = _library(tmp_path, "export", extra="ONYX_EXPORT int OnyxExtra(void) { return 1; }\n")
    r = _check(tmp_path, lib)
    assert r.returncode == 1, r.stdout
    assert "OnyxExtra" in r.stdout


def test_built_library_matches_the_stored_dump():
    build = os.environ.get("ONYX_BUILD_DIR") or os.path.join(REPO_ROOT, "build")
    lib = os.path.join(build, "libonyxruntime.so")
    if not os.path.exists(lib):
        pytest.fail("%s not built" % lib, pytrace=False)
    r = subprocess.run([sys.executable, CHECK, lib], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr

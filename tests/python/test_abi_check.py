"""The ABI check itself (abi_checks/check_abi.py): it must fail on each way of
breaking programs built against an older header, and pass on the compatible
changes (a parameter renamed, an entry or enumerator appended under a new
API version with its baseline written)."""

import os
import pathlib
import re
import shutil
import subprocess
import sys

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
CHECK = REPO / "abi_checks" / "check_abi.py"
HEADER = REPO / "capi" / "include" / "onyxruntime" / "onyxruntime_c_api.h"
LIBRARY = pathlib.Path(os.environ.get("ONYX_PYTHONPATH", REPO / "build" / "python")).parent / "libonyxruntime.so"


def run_check(*args):
    proc = subprocess.run([sys.executable, str(CHECK), *map(str, args)], capture_output=True, text=True)
    return proc.returncode, proc.stdout + proc.stderr


@pytest.fixture
def tree(tmp_path):
    """A copy of the header and of the baselines to break."""
    baselines = tmp_path / "abi"
    shutil.copytree(REPO / "abi_checks", baselines, ignore=shutil.ignore_patterns("*.py", "*.c", "__pycache__"))
    header = tmp_path / "onyxruntime_c_api.h"
    shutil.copy(HEADER, header)

    class Tree:
        def __init__(self):
            self.header, self.baselines = header, baselines

        def edit(self, old, new, count=1):
            text = self.header.read_text()
            assert text.count(old) >= 1, f"the header no longer contains {old!r}: update the test"
            self.header.write_text(text.replace(old, new, count))

        def check(self, *extra):
            return run_check("--header", self.header, "--baselines", self.baselines, *extra)

        def version(self):
            return int(re.search(r"#define ONYX_API_VERSION (\d+)", self.header.read_text()).group(1))

        def bump(self):
            v = self.version()
            self.edit(f"#define ONYX_API_VERSION {v}", f"#define ONYX_API_VERSION {v + 1}")
            return v + 1

        def write_baseline(self, version):
            rc, out = run_check("--header", self.header, "--dump")
            assert rc == 0, out
            (self.baselines / f"onyx_api_v{version}.txt").write_text(out)

    return Tree()


def test_tree_passes():
    args = [LIBRARY] if LIBRARY.exists() else []
    rc, out = run_check(*args)
    assert rc == 0, out
    assert "ABI check passed" in out


def test_unchanged_copy_passes(tree):
    rc, out = tree.check()
    assert rc == 0, out


def test_dump_matches_latest_baseline(tree):
    rc, out = run_check("--dump")
    assert rc == 0
    latest = tree.baselines / f"onyx_api_v{tree.version()}.txt"
    facts = [l for l in out.splitlines() if l and not l.startswith("#")]
    assert facts == [l for l in latest.read_text().splitlines() if l and not l.startswith("#")]
    assert "api 33 SessionRun: OnyxStatus*(OnyxSession*, const OnyxRunOptions*, const char* const*, " \
           "const OnyxValue* const*, size_t, const char* const*, size_t, OnyxValue**)" in facts


def test_changed_parameter_type_fails(tree):
    tree.edit("OnyxStatus* (*SessionOptionsSetIntraOpThreads)(OnyxSessionOptions* options, int threads);",
              "OnyxStatus* (*SessionOptionsSetIntraOpThreads)(OnyxSessionOptions* options, size_t threads);")
    rc, out = tree.check()
    assert rc == 1
    assert "SessionOptionsSetIntraOpThreads: OnyxStatus*(OnyxSessionOptions*, int)' changed" in out
    assert "OnyxStatus*(OnyxSessionOptions*, size_t)" in out
    assert "onyx_api_v1.txt" in out  # shipped since version 1


def test_const_dropped_fails(tree):
    tree.edit("OnyxStatus* (*SessionGetInputCount)(const OnyxSession* session, size_t* out);",
              "OnyxStatus* (*SessionGetInputCount)(OnyxSession* session, size_t* out);")
    rc, out = tree.check()
    assert rc == 1 and "SessionGetInputCount" in out


def test_added_parameter_fails(tree):
    tree.edit("void (*StatusRelease)(OnyxStatus* status);", "void (*StatusRelease)(OnyxStatus* status, int flags);")
    rc, out = tree.check()
    assert rc == 1 and "api 3 StatusRelease: void(OnyxStatus*)' changed" in out


def test_changed_return_type_fails(tree):
    tree.edit("const char* (*StatusGetMessage)(const OnyxStatus* status);",
              "char* (*StatusGetMessage)(const OnyxStatus* status);")
    rc, out = tree.check()
    assert rc == 1 and "StatusGetMessage" in out


def test_changed_entry_of_latest_version_fails(tree):
    tree.edit("const size_t* output_indices, size_t output_count, OnyxTensorResult* outputs);",
              "const int64_t* output_indices, size_t output_count, OnyxTensorResult* outputs);")
    rc, out = tree.check()
    assert rc == 1 and "onyx_api_v4.txt: 'api 135 SessionRunTensors" in out


def test_renamed_parameter_passes(tree):
    tree.edit("OnyxStatus* (*SessionOptionsSetIntraOpThreads)(OnyxSessionOptions* options, int threads);",
              "OnyxStatus* (*SessionOptionsSetIntraOpThreads)(OnyxSessionOptions *opts, int  n_threads);")
    rc, out = tree.check()
    assert rc == 0, out


def test_reordered_entries_fail(tree):
    a = "  OnyxStatus* (*SessionOptionsSetIntraOpThreads)(OnyxSessionOptions* options, int threads);\n"
    b = "  OnyxStatus* (*SessionOptionsSetInterOpThreads)(OnyxSessionOptions* options, int threads);\n"
    text = tree.header.read_text()
    assert a in text and b in text
    tree.header.write_text(text.replace(a, "@A@").replace(b, a).replace("@A@", b))
    rc, out = tree.check()
    assert rc == 1
    assert "api 9 SessionOptionsSetIntraOpThreads" in out and "api 10 SessionOptionsSetInterOpThreads" in out


def test_removed_entry_fails(tree):
    tree.edit("  void (*StatusRelease)(OnyxStatus* status);\n", "")
    rc, out = tree.check()
    assert rc == 1 and "StatusRelease" in out


def test_appended_entry_needs_new_version(tree):
    new_entry = "  OnyxStatus* (*SessionGetFoo)(const OnyxSession* session, int64_t* out);\n} OnyxApi;"
    tree.edit("} OnyxApi;", new_entry)
    old = tree.version()
    # The new entry takes the slot after the last one the current baseline lists.
    slot = sum(1 for l in (tree.baselines / f"onyx_api_v{old}.txt").read_text().splitlines() if l.startswith("api "))
    rc, out = tree.check()
    assert rc == 1 and "SessionGetFoo" in out and f"is new but onyx_api_v{old}.txt does not list it" in out
    v = tree.bump()
    rc, out = tree.check()
    assert rc == 1 and f"no onyx_api_v{v}.txt" in out
    tree.write_baseline(v)
    rc, out = tree.check()
    assert rc == 0, out
    # Once written, the new version's entries are pinned too.
    tree.edit("(*SessionGetFoo)(const OnyxSession* session, int64_t* out)", "(*SessionGetFoo)(const OnyxSession* session, int32_t* out)")
    rc, out = tree.check()
    assert rc == 1 and f"onyx_api_v{v}.txt: 'api {slot} SessionGetFoo" in out


def test_changed_enum_value_fails(tree):
    tree.edit("ONYX_INVALID_GRAPH = 10,", "ONYX_INVALID_GRAPH = 12,")
    rc, out = tree.check()
    assert rc == 1 and "enum OnyxErrorCode ONYX_INVALID_GRAPH = 10' changed" in out


def test_implicit_enum_values_are_read(tree):
    # Dropping the explicit values keeps them (0, 1, 2, ...) and passes; dropping one in the middle shifts the rest.
    tree.edit("ONYX_EXECUTION_SEQUENTIAL = 0,\n  ONYX_EXECUTION_PARALLEL = 1",
              "ONYX_EXECUTION_SEQUENTIAL,\n  ONYX_EXECUTION_PARALLEL")
    rc, out = tree.check()
    assert rc == 0, out
    tree.edit("ONYX_LOG_INFO = 1,\n", "")
    rc, out = tree.check()
    assert rc == 1 and "ONYX_LOG_INFO = 1' is gone" in out


def test_appended_enumerator_needs_new_version(tree):
    tree.edit("ONYX_MODEL_LOAD_CANCELED = 12\n", "ONYX_MODEL_LOAD_CANCELED = 12,\n  ONYX_MODEL_REQUIRES_COMPILATION = 13\n")
    rc, out = tree.check()
    assert rc == 1 and "ONYX_MODEL_REQUIRES_COMPILATION = 13' is new" in out
    tree.write_baseline(tree.bump())
    rc, out = tree.check()
    assert rc == 0, out


def test_struct_member_changes_fail(tree):
    tree.edit("  size_t data_bytes;", "  uint32_t data_bytes;")
    rc, out = tree.check()
    assert rc == 1 and "struct OnyxTensorArg 1: size_t data_bytes' changed" in out


def test_struct_growth_fails(tree):
    # Callers pass these in arrays: a new member moves every element after the first.
    tree.edit("  OnyxElementType type;\n} OnyxTensorArg;", "  OnyxElementType type;\n  int flags;\n} OnyxTensorArg;")
    tree.write_baseline(tree.bump())
    rc, out = tree.check()
    assert rc == 1 and "struct OnyxTensorArg members 5' changed" in out


def test_changed_callback_type_fails(tree):
    tree.edit("typedef void (*OnyxDeleter)(void* context, void* data);",
              "typedef void (*OnyxDeleter)(void* data);")
    rc, out = tree.check()
    assert rc == 1 and "typedef OnyxDeleter" in out


def test_apibase_entry_changed_fails(tree):
    tree.edit("const OnyxApi* (*GetApi)(uint32_t version);", "const OnyxApi* (*GetApi)(int version);")
    rc, out = tree.check()
    assert rc == 1 and "apibase 0 GetApi" in out


def test_unreadable_header_fails(tree):
    tree.edit("typedef struct OnyxApi {", "typedef struct OnyxApiTable {")
    tree.edit("} OnyxApi;", "} OnyxApiTable;")
    rc, out = tree.check()
    assert rc == 1 and "OnyxApi" in out


@pytest.mark.skipif(shutil.which("cc") is None, reason="needs a C compiler")
def test_extra_exported_symbol_fails(tree, tmp_path):
    src = tmp_path / "lib.c"
    src.write_text("const void* OnyxGetApiBase(void) { return 0; }\nint OnyxSecretHelper(int x) { return x; }\n")
    lib = tmp_path / "libfake.so"
    subprocess.run(["cc", "-shared", "-fPIC", "-o", str(lib), str(src)], check=True)
    rc, out = tree.check(lib)
    assert rc == 1 and "OnyxSecretHelper" in out
    src.write_text("const void* OnyxGetApiBase(void) { return 0; }\n")
    subprocess.run(["cc", "-shared", "-fPIC", "-o", str(lib), str(src)], check=True)
    rc, out = tree.check(lib)
    assert rc == 0, out

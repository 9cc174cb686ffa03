"""abidiff of libonyxruntime.so against the stored ABI dump (abi_checks/libonyxruntime.abi).

The library's DWARF describes only the public ABI (capi/src/api_base.cc is the
one file built with -g and sees only the public header), so the dump holds
OnyxGetApiBase, OnyxApiBase, every OnyxApi entry's function type and the
enums and structs they reach; abidw writes it (abigail-tools).

Passes when abidiff reports no change, or when the only change is entries
appended to the end of OnyxApi (a new API version before its dump is
recorded; a note says to record it). Anything else -- an entry's parameter or
return type, an entry moved or removed, an enum value or struct member changed,
a symbol added or removed -- fails with abidiff's report.

    abidiff_check.py LIB            check
    abidiff_check.py LIB --update   rewrite the stored dump from LIB
    abidiff_check.py LIB --baseline DUMP   check against another dump (tests)
"""
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
DUMP = os.environ.get("ONYX_ABI_DUMP") or os.path.join(HERE, "libonyxruntime.abi")
ABIDW = ["abidw", "--no-corpus-path", "--no-comp-dir-path", "--no-show-locs", "--type-id-style", "hash",
         "--no-elf-needed"]

# Lines of abidiff's report that only lead from OnyxGetApiBase to struct OnyxApi.
CHAIN = [r"Functions changes summary: 0 Removed, 1 Changed, 0 Added functions?",
         r"Variables changes summary: 0 Removed, 0 Changed, 0 Added variables?",
         r"1 function with some indirect sub-type change:",
         r"\[C\] 'function const OnyxApiBase\* OnyxGetApiBase\(\)' has some indirect sub-type changes:",
         r"return type changed:", r"in pointed to type '.*':", r"in unqualified underlying type '.*':",
         r"underlying type 'struct OnyxApiBase' changed:", r"type size hasn't changed", r"1 data member change:",
         r"type of 'const OnyxApi\* \(typedef uint32_t\)\* GetApi' changed:"]


def dump(lib, out):
    subprocess.run(ABIDW + ["--out-file", out, lib], check=True)


def only_appended_entries(report):
    """True when every change in abidiff's report is an insertion at the end of struct OnyxApi."""
    lines = [l for l in report.splitlines() if l.strip()]
    block = None  # indentation of "underlying type 'struct OnyxApi' changed:"
    old_size = None
    inserted = 0
    for line in lines:
        indent = len(line) - len(line.lstrip())
        text = line.strip()
        if block is not None and indent > block:
            m = re.fullmatch(r"type size changed from (\d+) to (\d+) \(in bits\)", text)
            if m and int(m.group(2)) > int(m.group(1)):
                old_size = int(m.group(1))
                continue
            if re.fullmatch(r"\d+ data member insertions?:", text):
                continue
            m = re.fullmatch(r"'.*', at offset (\d+) \(in bits\)", text)
            if m and old_size is not None and int(m.group(1)) >= old_size:
                inserted += 1
                continue
            return False
        block = None
        if text == "underlying type 'struct OnyxApi' changed:":
            block = indent
            continue
        if not any(re.fullmatch(p, text) for p in CHAIN):
            return False
    return inserted > 0


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    lib = sys.argv[1]
    baseline = DUMP
    if sys.argv[2:] == ["--update"]:
        dump(lib, DUMP)
        print("abidiff_check: wrote", DUMP)
        return 0
    if sys.argv[2:3] == ["--baseline"] and len(sys.argv) == 4:
        baseline = sys.argv[3]
    elif len(sys.argv) != 2:
        sys.exit(__doc__)
    with tempfile.TemporaryDirectory() as tmp:
        current = os.path.join(tmp, "current.abi")
        dump(lib, current)
        r = subprocess.run(["abidiff", baseline, current], capture_output=True, text=True)
    if r.returncode == 0:
        print("abidiff: no ABI change against abi_checks/libonyxruntime.abi")
        return 0
    if r.returncode == 4 and only_appended_entries(r.stdout):
        print("abidiff: only entries appended to OnyxApi (record them: abi_checks/abidiff_check.py LIB --update)")
        return 0
    print(r.stdout + r.stderr)
    print("abidiff: the ABI changed against abi_checks/libonyxruntime.abi (exit %d); if the change is an intended "
          "new API version, record it with abi_checks/abidiff_check.py LIB --update" % r.returncode)
    return 1


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Checks the C ABI against its baselines.

1. libonyxruntime.so exports exactly the symbols in exported_symbols.txt.
2. The OnyxApi struct in the public header starts with the entries of every
   shipped version (onyx_api_v*.txt), in the same order: the table only grows
   at its end. (api_offsets.c checks the same at compile time by offset.)

Usage: check_abi.py path/to/libonyxruntime.so
"""
import pathlib
import re
import subprocess
import sys

HERE = pathlib.Path(__file__).resolve().parent
HEADER = HERE.parent / "capi" / "include" / "onyxruntime" / "onyxruntime_c_api.h"


def header_entries():
    text = HEADER.read_text()
    body = text[text.index("typedef struct OnyxApi {"):text.index("} OnyxApi;")]
    return re.findall(r"\(\*(\w+)\)\(", body)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    errors = []
    out = subprocess.run(["nm", "-D", "--defined-only", sys.argv[1]], check=True, capture_output=True, text=True).stdout
    exported = sorted(line.split()[-1] for line in out.splitlines() if line.strip())
    expected = sorted(l.strip() for l in (HERE / "exported_symbols.txt").read_text().splitlines() if l.strip())
    if exported != expected:
        errors.append(f"exported symbols {exported} differ from the baseline {expected}")

    entries = header_entries()
    for baseline in sorted(HERE.glob("onyx_api_v*.txt")):
        shipped = [l.strip() for l in baseline.read_text().splitlines() if l.strip() and not l.startswith("#")]
        if entries[:len(shipped)] != shipped:
            for i, name in enumerate(shipped):
                got = entries[i] if i < len(entries) else "<missing>"
                if got != name:
                    errors.append(f"{baseline.name}: slot {i} must be '{name}' but the header has '{got}'")
                    break
    if errors:
        print("ABI check FAILED:\n  " + "\n  ".join(errors))
        sys.exit(1)
    print(f"ABI check passed: 1 exported symbol, {len(entries)} OnyxApi entries, baselines intact")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Seed corpora for the fuzz targets, made at run time (nothing is committed).

    make_seeds.py --out DIR

DIR/fuzz_model_load/: every model of onnx's backend test data shipped in the
installed onnx package (data/*/*/model.onnx) and every node test case its
generators build (onnx.backend.test.case.node), under 64 KiB each, plus the
project's small generated models (tests/models/make_*.py). DIR/fuzz_node and
DIR/fuzz_capi get a few fixed byte strings (their inputs are structured by the
targets themselves). A stamp naming the onnx version makes reruns instant.
"""

import argparse
import glob
import hashlib
import importlib.util
import os
import sys
import tempfile
import warnings

import onnx

MAX_SEED_BYTES = 64 * 1024
ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir, os.pardir))


def _write(directory, data):
    name = hashlib.sha1(data).hexdigest()[:16]
    with open(os.path.join(directory, name), "wb") as f:
        f.write(data)


def model_seeds():
    data_dir = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data")
    for path in sorted(glob.glob(os.path.join(data_dir, "*", "*", "model.onnx"))):
        with open(path, "rb") as f:
            yield f.read()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import numpy as np
        from onnx.backend.test.case import node

        with np.errstate(all="ignore"):
            cases = node.collect_testcases(None)
    for case in cases:
        if case.model is not None:
            yield case.model.SerializeToString()
    # The project's own small generated models.
    with tempfile.TemporaryDirectory() as tmp:
        for script in sorted(glob.glob(os.path.join(ROOT, "tests", "models", "make_*.py"))):
            spec = importlib.util.spec_from_file_location("seed_gen", script)
            mod = importlib.util.module_from_spec(spec)
            try:
                spec.loader.exec_module(mod)
                for fn in ("build",):
                    if hasattr(mod, fn):
                        m = getattr(mod, fn)()
                        yield m.SerializeToString() if hasattr(m, "SerializeToString") else bytes(m)
                        break
            except Exception as e:  # a generator needing extra packages is skipped, loudly
                print("make_seeds: skipped %s: %s" % (os.path.basename(script), e), file=sys.stderr)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    stamp_text = "onnx %s\n" % onnx.__version__
    stamp = os.path.join(args.out, ".stamp")
    if os.path.exists(stamp) and open(stamp).read() == stamp_text:
        return
    counts = {}
    d = os.path.join(args.out, "fuzz_model_load")
    os.makedirs(d, exist_ok=True)
    n = 0
    for data in model_seeds():
        if len(data) <= MAX_SEED_BYTES:
            _write(d, data)
            n += 1
    counts["fuzz_model_load"] = n
    for target in ("fuzz_node", "fuzz_capi"):
        d = os.path.join(args.out, target)
        os.makedirs(d, exist_ok=True)
        for i in range(8):
            _write(d, hashlib.sha256(b"%s %d" % (target.encode(), i)).digest() * (1 + i))
        counts[target] = 8
    with open(stamp, "w") as f:
        f.write(stamp_text)
    print("seed corpora: " + ", ".join("%s %d" % kv for kv in counts.items()))


if __name__ == "__main__":
    main()

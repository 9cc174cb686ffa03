"""Prints onnxruntime's conformance figure on the same data as ours.

Runs tests/conformance/test_backend_suite.py with ONYX_CONFORMANCE_BACKEND=onnxruntime
(no expected failures), in its own process, and prints its
`conformance: P passed of T (X%)` line. Add --onyx to print ours from the same
run of this script, one line each.

    PYTHONPATH=build/python .venv/bin/python tests/bench/conformance_onnxruntime.py [--onyx]
"""

import os
import re
import subprocess
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir, os.pardir))


def figure(backend):
    env = dict(os.environ, ONYX_CONFORMANCE_BACKEND=backend)
    out = subprocess.run([sys.executable, "-m", "pytest", os.path.join(ROOT, "tests", "conformance"), "-q",
                          "-p", "no:cacheprovider", "--no-header"],
                         env=env, capture_output=True, text=True).stdout
    m = re.search(r"^conformance: .*$", out, re.M)
    return m.group(0) if m else "conformance: no result (%s)" % out[-500:]


if __name__ == "__main__":
    print("onnxruntime", figure("onnxruntime"))
    if "--onyx" in sys.argv:
        print("onyxruntime", figure("onyxruntime"))

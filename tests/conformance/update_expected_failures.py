"""Rewrites expected_failures.txt from a run of the whole suite.

Runs tests/conformance with ONYX_CONFORMANCE_NO_XFAIL=1 and lists every test
that failed or was skipped. A reason written by hand is kept while the test
still fails; a generated one (it starts with "error: ") is replaced by the
first line of the test's current error. Tests that pass drop off.

    PYTHONPATH=build/python .venv/bin/python tests/conformance/update_expected_failures.py
"""

import os
import re
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from expected import EXPECTED_FAILURES_FILE, read_expected_failures  # noqa: E402

HEADER = """\
# Tests of the ONNX backend suite (tests/conformance/test_backend_suite.py) that fail
# for a known reason: one test name per line, then '# reason'. Listed tests run as
# expected failures; one that starts passing fails the suite until its line is
# removed. update_expected_failures.py rewrites this file from a run: reasons
# that start with "error: " are the test's error, regenerated each time; others
# were written by hand and are kept.

"""


class Collector:
    def __init__(self):
        self.failed = {}

    def pytest_runtest_logreport(self, report):
        name = report.nodeid.rsplit("::", 1)[-1]
        if not name.endswith("_cpu"):
            return
        if report.failed or (report.skipped and report.when in ("setup", "call")):
            if name in self.failed:
                return
            msg = ""
            crash = getattr(report.longrepr, "reprcrash", None)
            if crash is not None:
                msg = crash.message
            elif isinstance(report.longrepr, tuple):
                msg = "skipped: " + str(report.longrepr[2])
            else:
                msg = str(report.longrepr)
            msg = " ".join(msg.split())
            msg = re.sub(r"^[\w.]+: ", "", msg)
            msg = re.sub(r"^\[OnyxRuntimeError\] : \d+ : ", "", msg)
            self.failed[name] = "error: " + (msg[:240] or "fails")


def main():
    os.environ["ONYX_CONFORMANCE_NO_XFAIL"] = "1"
    old = read_expected_failures(EXPECTED_FAILURES_FILE)
    collector = Collector()
    pytest.main([HERE, "-q", "-p", "no:cacheprovider", "--no-header", "-o", "console_output_style=classic"],
                plugins=[collector])
    lines = []
    for name in sorted(collector.failed):
        reason = old.get(name, "")
        if not reason or reason.startswith("error: "):
            reason = collector.failed[name]
        lines.append("%s  # %s" % (name, reason.replace("#", "")))
    with open(EXPECTED_FAILURES_FILE, "w", encoding="utf-8") as f:
        f.write(HEADER + "\n".join(lines) + "\n")
    print("expected_failures.txt: %d tests (was %d)" % (len(lines), len(old)))


if __name__ == "__main__":
    main()

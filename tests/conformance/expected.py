"""The expected-failures list of the conformance suite: one place reads it."""

import os

EXPECTED_FAILURES_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "expected_failures.txt")


def read_expected_failures(path):
    """{test name: reason} from lines 'test_name  # reason'."""
    expected = {}
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            body, _, reason = line.partition("#")
            name = body.strip()
            if not name:
                continue
            if not reason.strip():
                raise ValueError("%s:%d: %s has no '# reason'" % (path, lineno, name))
            if name in expected:
                raise ValueError("%s:%d: %s is listed twice" % (path, lineno, name))
            expected[name] = reason.strip()
    return expected

"""pytest setup for the ONNX backend conformance tests.

- Puts the staged package on sys.path: $ONYX_PYTHONPATH, else <repo>/build/python
  (the same rule as tests/python/conftest.py, which pytest does not load for
  this folder when it is run on its own).
- Before each test, sets a fixed random seed (onyxruntime.set_seed), so tests
  of random operators listed as expected failures fail the same way each run.
- At the end of a run, prints pass/xfail/fail/skip counts per suite (node,
  simple, pytorch-converted, pytorch-operator) and the one line
  `conformance: P passed of T (X%)`, where a skip or an expected failure
  counts as not passed, as the public ONNX backend scoreboard counts.
"""

import collections
import os
import sys

import pytest

REPO_ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir, os.pardir))
ONYX_PYTHONPATH = os.environ.get("ONYX_PYTHONPATH", os.path.join(REPO_ROOT, "build", "python"))
if ONYX_PYTHONPATH not in sys.path:
    sys.path.insert(0, ONYX_PYTHONPATH)


@pytest.fixture(autouse=True)
def _fixed_random_seed():
    # onnx's Bernoulli tests compare random draws exactly: unseeded, a draw
    # matches numpy's about 0.6% of the time, and an expected failure that
    # passes fails the suite. A fixed seed per test makes each outcome stable
    # whatever the selection or order. (set_seed is absent from bindings
    # older than the random operators.)
    import onyxruntime

    set_seed = getattr(onyxruntime, "set_seed", None)
    if set_seed is not None:
        set_seed(0)
    yield


_family_of_nodeid = {}
_counts = collections.defaultdict(collections.Counter)


def pytest_collection_modifyitems(session, config, items):
    for item in items:
        suites = getattr(item.module, "SUITE_OF_TEST", None) if hasattr(item, "module") else None
        if suites is not None and item.name in suites:
            _family_of_nodeid[item.nodeid] = suites[item.name]


def pytest_runtest_logreport(report):
    family = _family_of_nodeid.get(report.nodeid)
    if family is None:
        return
    if hasattr(report, "wasxfail"):
        if report.when == "call" or report.skipped:
            _counts[family]["xfailed"] += 1
    elif report.when == "call":
        _counts[family][report.outcome] += 1
    elif report.skipped:
        _counts[family]["skipped"] += 1
    elif report.failed:
        _counts[family]["failed"] += 1


def pytest_terminal_summary(terminalreporter):
    if not _counts:
        return
    tr = terminalreporter
    tr.section("ONNX backend test suite, per suite")
    total = collections.Counter()
    for family in sorted(_counts):
        c = _counts[family]
        total.update(c)
        tr.write_line("%-18s passed %4d  xfailed %4d  failed %4d  skipped %4d" % (
            family, c["passed"], c["xfailed"], c["failed"], c["skipped"]))
    n = sum(total[k] for k in ("passed", "xfailed", "failed", "skipped"))
    tr.write_line("%-18s passed %4d  xfailed %4d  failed %4d  skipped %4d" % (
        "total", total["passed"], total["xfailed"], total["failed"], total["skipped"]))
    tr.write_line("conformance: %d passed of %d (%.1f%%)" % (total["passed"], n, 100.0 * total["passed"] / max(n, 1)))

"""pytest setup for the real-model tests (tests/realmodels).

Puts the staged package on sys.path: $ONYX_PYTHONPATH, else <repo>/build/python
(the same rule as tests/python/conftest.py, which pytest does not load for this
folder when it is run on its own).
"""

import os
import sys

REPO_ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir, os.pardir))
ONYX_PYTHONPATH = os.environ.get("ONYX_PYTHONPATH", os.path.join(REPO_ROOT, "build", "python"))
if ONYX_PYTHONPATH not in sys.path:
    sys.path.insert(0, ONYX_PYTHONPATH)

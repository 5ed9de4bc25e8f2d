"""A pytest plugin for the mutation campaign only (mutation/run.py passes ``-p`` with it
for modules whose code runs at import): each test session imports the project afresh.

mutmut's workers are forked from a process that already imported the project, so code
that runs at import (round.py building its graph from the tableau, the card and
inventory tables, the insurance sheet) would keep its unmutated result and every mutant
of it would "survive". Dropping the project's modules before collection makes each
worker import them again, with its mutant active.
"""

from __future__ import annotations

import sys

_PROJECT = ("shoe_controller", "firmware_bridge", "calibration")


def pytest_configure(config: object) -> None:
    for name in list(sys.modules):
        top = name.split(".")[0]
        if top in _PROJECT or name.startswith("tests.test_"):
            del sys.modules[name]

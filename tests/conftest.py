"""Shared fixtures. A real mosquitto per test that asks for one (``broker``)."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from hypothesis import Phase, settings

from tests.support.broker import Mosquitto

# The mutation campaign (docs/testing.md): the same examples every run, no shrinking (a
# mutant only needs one failing example, and shrinking it costs minutes), no database, no
# deadline (a loaded machine and mutmut's call recording make an example slow, not wrong:
# a deadline failure in mutmut's clean run stops the whole module's run), 30 examples
# where a test does not set its own number (a surviving mutant reruns every property
# test of its module: at hypothesis' 100 that was most of a module's run time).
settings.register_profile(
    "mutation", derandomize=True, database=None, deadline=None, max_examples=30,
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
)
if os.environ.get("HYPOTHESIS_PROFILE"):
    settings.load_profile(os.environ["HYPOTHESIS_PROFILE"])


@pytest.fixture
def broker() -> Iterator[Mosquitto]:
    """A real mosquitto on a free loopback port, stopped after the test."""
    with Mosquitto() as b:
        yield b


@pytest.fixture
def ws_broker() -> Iterator[Mosquitto]:
    """A real mosquitto with an MQTT listener and a websockets listener on loopback."""
    with Mosquitto(websockets=True) as b:
        yield b

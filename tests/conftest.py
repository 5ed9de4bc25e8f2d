"""Shared fixtures. A real mosquitto per test that asks for one (``broker``)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.broker import Mosquitto


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

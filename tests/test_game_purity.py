"""The game core stays pure: no module of shoe_controller/game imports I/O, the clock,
randomness, threads, hardware, vision, MQTT or the daemon's adapters."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

GAME = Path(__file__).resolve().parents[1] / "shoe_controller" / "game"

FORBIDDEN_TOP = {
    "asyncio", "datetime", "http", "io", "logging", "os", "pathlib", "random", "requests",
    "secrets", "select", "serial", "signal", "socket", "sqlite3", "subprocess", "sys",
    "threading", "time", "urllib", "cv2", "zxingcpp", "gpiozero", "paho", "rich",
    "firmware_bridge", "calibration",
}
FORBIDDEN_PREFIX = (
    "shoe_controller.vision", "shoe_controller.dealer", "shoe_controller.publish",
    "shoe_controller.journal", "shoe_controller.daemon", "shoe_controller.sim",
    "shoe_controller.commands", "shoe_controller.display.server",
)


def _imports(path: Path):
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            yield from (a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            yield node.module


@pytest.mark.parametrize("path", sorted(GAME.glob("*.py")), ids=lambda p: p.name)
def test_game_module_is_pure(path):
    bad = [
        name for name in _imports(path)
        if name.split(".")[0] in FORBIDDEN_TOP or name.startswith(FORBIDDEN_PREFIX)
    ]
    assert not bad, f"{path.name} imports {bad}: the game core must stay pure"

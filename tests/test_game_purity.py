"""The game core stays pure: no I/O, no clock, no hardware, vision or MQTT imports.

A newcomer who adds ``import time`` or ``import cv2`` to ``shoe_controller/game`` gets a
failing test naming the file and the import, not a slow drift of the core.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

GAME = Path(__file__).resolve().parents[1] / "shoe_controller" / "game"

#: Modules the pure core may import (top-level names). Everything here is computation.
ALLOWED = {
    "__future__", "typing", "collections", "dataclasses", "functools", "itertools",
    "math", "fractions", "re", "hashlib", "hmac", "enum", "bisect", "operator", "heapq",
    "msgspec", "numpy", "shoe_controller",
}


def _imports(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(), filename=str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.lineno, node.module))
    return found


@pytest.mark.parametrize("path", sorted(GAME.glob("*.py")), ids=lambda p: p.name)
def test_game_module_imports_only_pure_modules(path: Path) -> None:
    bad = [
        f"{path.name}:{line}: import {name}"
        for line, name in _imports(path)
        if name.split(".")[0] not in ALLOWED
        or (name.startswith("shoe_controller") and not name.startswith("shoe_controller.game"))
    ]
    assert not bad, "the game core must stay pure:\n" + "\n".join(bad)


def test_the_purity_check_catches_an_impure_import(tmp_path: Path) -> None:
    impure = tmp_path / "impure.py"
    impure.write_text("import time\nfrom shoe_controller.publish import mqtt\n")
    names = [name for _, name in _imports(impure)]
    assert names == ["time", "shoe_controller.publish"]
    assert "time" not in ALLOWED

"""`shoe-calibrate`: one entry point, one module per sub-command (see shoe_controller.cli)."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from shoe_controller.cli import run_commands

#: name -> (module, one-line help)
COMMANDS: dict[str, tuple[str, str]] = {
    "camera": ("calibration.camera", "set up ROI, exposure and focus with a live preview"),
    "learn": ("calibration.learn", "learn the deck (glyphs, sizes, colours) into a profile"),
    "evaluate": ("calibration.evaluate", "measure the index reader on labelled frames"),
    "deck-check": ("calibration.deck_check", "pass full decks; report missing/duplicated cards"),
    "selftest": ("calibration.selftest", "test LEDs, buttons, sensors and the serial link"),
}


def main(argv: Sequence[str] | None = None) -> int:
    return run_commands(
        "shoe-calibrate", "Camera set-up, deck learning and self-tests.", COMMANDS, argv
    )


if __name__ == "__main__":
    sys.exit(main())

"""`shoe-controller`: one entry point, one module per sub-command.

Each sub-command lives in its own module exposing ``add_arguments(parser)`` and
``run(args) -> int``; this file only lists them, so adding a command never touches
another's code. Modules are imported when their command is used, so a broken or heavy
dependency of one command (OpenCV, paho) never slows or breaks another.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

#: name -> (module, one-line help)
COMMANDS: dict[str, tuple[str, str]] = {
    "replay": ("shoe_controller.commands.replay", "re-check a recorded shoe from text"),
    "config": ("shoe_controller.commands.config", "check a configuration file"),
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="shoe-controller",
        description="Smart baccarat shoe controller.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name, (module_name, help_text) in COMMANDS.items():
        p = sub.add_parser(name, help=help_text, description=help_text)
        p.set_defaults(_module=module_name)
        # Arguments are added lazily in main() for the chosen command only.
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    # Find the command first, then import its module and let it declare its arguments.
    if argv and argv[0] in COMMANDS:
        module = importlib.import_module(COMMANDS[argv[0]][0])
        sub = argparse.ArgumentParser(
            prog=f"shoe-controller {argv[0]}", description=COMMANDS[argv[0]][1]
        )
        module.add_arguments(sub)
        args = sub.parse_args(argv[1:])
        try:
            return int(module.run(args) or 0)
        except KeyboardInterrupt:
            return 130
        except BrokenPipeError:
            return 0
    parser.parse_args(argv)  # prints usage / error for unknown or missing commands
    return 2


if __name__ == "__main__":
    sys.exit(main())

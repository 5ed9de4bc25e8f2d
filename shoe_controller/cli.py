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
    "journal": ("shoe_controller.commands.journal", "verify or export the event journal"),
    "roads": ("shoe_controller.commands.roads", "scoreboard roads of results or a replay file"),
    "odds": ("shoe_controller.commands.odds", "exact probabilities and house edge of every bet"),
    "simulate": ("shoe_controller.commands.simulate", "the daemon at a virtual table"),
    "run": ("shoe_controller.commands.run", "the daemon beside a real shoe"),
    "status": ("shoe_controller.commands.status", "what the running daemon is doing"),
    "keys": ("shoe_controller.commands.keys", "the device's Ed25519 signing key"),
    "feed": ("shoe_controller.commands.feed", "verify or follow the signed casino feed"),
    "ctl": ("shoe_controller.commands.ctl", "supervisor actions on the control socket"),
}


def run_commands(
    prog: str,
    description: str,
    commands: dict[str, tuple[str, str]],
    argv: Sequence[str] | None = None,
) -> int:
    """Parse ``argv`` for one of ``commands`` (name -> (module, help)) and run it.

    Shared by ``shoe-controller`` and ``shoe-calibrate``.
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in commands:
        module_name, help_text = commands[argv[0]]
        module = importlib.import_module(module_name)
        sub = argparse.ArgumentParser(prog=f"{prog} {argv[0]}", description=help_text)
        module.add_arguments(sub)
        args = sub.parse_args(argv[1:])
        try:
            return int(module.run(args) or 0)
        except KeyboardInterrupt:
            return 130
        except BrokenPipeError:
            return 0
    parser = argparse.ArgumentParser(prog=prog, description=description)
    sub_parsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name, (_module, help_text) in commands.items():
        sub_parsers.add_parser(name, help=help_text, add_help=False)
    parser.parse_args(argv)  # prints usage, or the error for an unknown command
    return 2


def main(argv: Sequence[str] | None = None) -> int:
    return run_commands("shoe-controller", "Smart baccarat shoe controller.", COMMANDS, argv)


if __name__ == "__main__":
    sys.exit(main())

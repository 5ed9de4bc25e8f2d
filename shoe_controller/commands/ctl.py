"""`shoe-controller ctl pause|resume|void|card CODE`: the supervisor's actions, sent to
the running daemon's control socket (``<state dir>/control``, see
:mod:`shoe_controller.control` for the protocol).

The daemon journals each action with who sent it (uid and pid from the socket) and
answers once its game core has decided: ``ok``, or ``refused: <reason>`` (a manual card
only fills the card the round waits for after an unreadable read; voiding a round whose
result is known needs the supervisor key turned). Exit status: 0 ok, 1 refused, 2 an
error (bad command, no daemon listening).

    sudo -u shoe shoe-controller ctl card QH
    sudo -u shoe shoe-controller ctl void "dealer exposed a card"
    sudo -u shoe shoe-controller ctl reset        # clear the shoe's latched fault
    sudo -u shoe shoe-controller ctl lights 80    # shoe illumination, percent
"""

from __future__ import annotations

import argparse
import os
import sys

DEFAULT_STATE_DIR = "/var/lib/shoe-controller"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--state-dir", metavar="DIR",
                        default=os.environ.get("STATE_DIRECTORY", DEFAULT_STATE_DIR),
                        help="the daemon's state directory (default $STATE_DIRECTORY or "
                             f"{DEFAULT_STATE_DIR}); its control socket is DIR/control")
    parser.add_argument("--socket", metavar="PATH",
                        help="the control socket itself (overrides --state-dir)")
    parser.add_argument("action", choices=("pause", "resume", "void", "card", "reset",
                                           "lights"),
                        help="pause [REASON], resume, void [REASON], card CODE; the shoe: "
                             "reset (clear its latched fault), lights PERCENT")
    parser.add_argument("words", nargs="*", metavar="ARG",
                        help="the reason (pause, void), the card code (card) or the "
                             "percentage (lights)")


def run(args: argparse.Namespace) -> int:
    from shoe_controller.control import request

    path = args.socket or os.path.join(args.state_dir.split(":")[0], "control")
    line = " ".join([args.action, *args.words])
    if "\n" in line:
        print("shoe-controller ctl: the request must be one line", file=sys.stderr)
        return 2
    try:
        reply = request(path, line)
    except OSError as exc:
        print(f"shoe-controller ctl: cannot reach the daemon at {path}: "
              f"{exc.strerror or exc} (is it running? --state-dir?)", file=sys.stderr)
        return 2
    print(reply)
    first = reply.splitlines()[0] if reply else ""
    if first == "ok" or first.startswith("ok:"):
        return 0
    return 1 if first.startswith("refused:") else 2

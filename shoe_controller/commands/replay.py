"""`shoe-controller replay FILE|-`: drive the pure game core from a recorded shoe.

Everything is read and parsed first: a bad token exits with status 2 and a message
naming it, before any output. Results are confirmed by ``RESULT`` tokens when the input
has any (the dealer confirms each round), else as soon as a round is complete; reveal
tokens (``REVEAL_P``/``REVEAL_B``) turn the insurance side game on, with reveal buttons
and confirmation by ``RESULT``. Then the
inputs run through the game core and every domain event is printed: one readable line
each, or one JSON object each (``--json``).
"""

from __future__ import annotations

import argparse
import sys

from shoe_controller.game.describe import describe
from shoe_controller.game.events import encode_event
from shoe_controller.game.inputs import ConfirmResult, Reveal, VoidInsurance
from shoe_controller.game.insurance import InsuranceConfig
from shoe_controller.game.protection import interleave
from shoe_controller.game.replay_text import ReplayParseError, replay_inputs
from shoe_controller.game.rules import Rules
from shoe_controller.game.shoe import Shoe


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", metavar="FILE", help="replay text file, or - for stdin")
    parser.add_argument("--no-burn", action="store_true", help="no burn at the shoe start")
    parser.add_argument("--rounds", choices=["auto", "button"], default="auto",
                        help="auto: the next card after a finished round starts the next "
                        "round; button: NEW opens each round (default auto)")
    comm = parser.add_mutually_exclusive_group()
    comm.add_argument("--commission", dest="commission", action="store_const",
                      const="commission", default="commission",
                      help="Banker wins pay 0.95 (default)")
    comm.add_argument("--no-commission", dest="commission", action="store_const",
                      const="no_commission", help="Banker pays 1, or 0.5 when winning with 6")
    parser.add_argument("--cut-card", choices=["last_round", "one_more_round"],
                        default="last_round", help="cut-card policy (default last_round)")
    parser.add_argument("--extra-card", choices=["burn", "void", "carry"], default="burn",
                        help="policy for a card drawn when none is due (default burn)")
    parser.add_argument("--decks", type=int, default=8, metavar="N",
                        help="decks in the shoe, 1-16 (default 8)")
    parser.add_argument("--json", action="store_true",
                        help="one JSON object per domain event, each with a type")
    parser.add_argument("--analysis", action="store_true",
                        help="also print the exact shoe analysis after every round "
                        "(integrity alerts are always printed)")


def _rules(args: argparse.Namespace, confirm: str, insurance: bool) -> Rules:
    return Rules(
        decks=args.decks,
        burn="none" if args.no_burn else "first_card",
        cut_card=args.cut_card,
        extra_card=args.extra_card,
        commission=args.commission,
        rounds=args.rounds,
        confirm=confirm,
        insurance=InsuranceConfig(enabled=insurance, reveal="button"),
    )


def run(args: argparse.Namespace) -> int:
    if not 1 <= args.decks <= 16:
        print(f"replay: --decks: expected 1-16, got {args.decks}", file=sys.stderr)
        return 2
    name = "<stdin>" if args.file == "-" else args.file
    try:
        if args.file == "-":
            text = sys.stdin.read()
        else:
            with open(args.file, encoding="utf-8") as fh:
                text = fh.read()
    except (OSError, UnicodeDecodeError) as exc:
        print(f"replay: cannot read {name}: {exc}", file=sys.stderr)
        return 2
    try:
        inputs = replay_inputs(text)
    except ReplayParseError as exc:
        print(f"replay: {name}: {exc}", file=sys.stderr)
        return 2
    # A recording with RESULT tokens comes from a table where the dealer confirms each
    # result (an extra card before RESULT is then a misdeal of that round); without
    # them, results are confirmed as soon as the round is complete.
    # Reveal tokens come from an insurance table with reveal buttons, where each round
    # stays open for the reveals until the dealer confirms it.
    insurance = any(isinstance(i, Reveal | VoidInsurance) for i in inputs)
    confirm = "button" if insurance or any(isinstance(i, ConfirmResult) for i in inputs) else (
        "auto"
    )
    shoe = Shoe(_rules(args, confirm, insurance))
    events = [ev for inp in inputs for ev in shoe.apply(inp)]
    events = interleave(events, shoe.rules, analysis=args.analysis)  # game protection
    if args.json:
        text = "".join(encode_event(ev).decode() + "\n" for ev in events)
    else:
        text = "".join(describe(ev) + "\n" for ev in events)
    sys.stdout.write(text)
    sys.stdout.flush()
    return 0

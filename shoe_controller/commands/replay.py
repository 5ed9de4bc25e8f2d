"""`shoe-controller replay FILE|-`: drive the pure game core from a recorded shoe.

Every token is checked first (a first pass over the input, streamed: memory stays
bounded whatever its size): a bad token exits with status 2 and a message naming it,
before any output. Results are confirmed by ``RESULT`` tokens when the input
has any (the dealer confirms each round), else as soon as a round is complete; reveal
tokens (``REVEAL_P``/``REVEAL_B``) turn the insurance side game on, with reveal buttons
and confirmation by ``RESULT``. Then the
inputs run through the game core and every domain event is printed: one readable line
each, or one JSON object each (``--json``).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import tempfile
from collections.abc import Iterator
from typing import IO

from shoe_controller.game import protection
from shoe_controller.game.describe import describe
from shoe_controller.game.events import encode_event
from shoe_controller.game.inputs import ConfirmResult, Reveal, VoidInsurance
from shoe_controller.game.insurance import InsuranceConfig
from shoe_controller.game.replay_text import ReplayParseError, iter_inputs, iter_tokens
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


#: Characters read at a time: memory stays bounded whatever the input's size.
CHUNK = 1 << 16


def _pieces(fh: IO[str], spool: IO[str] | None = None) -> Iterator[str]:
    """``fh`` in pieces of :data:`CHUNK` characters (copied to ``spool`` as they pass)."""
    while True:
        piece = fh.read(CHUNK)
        if not piece:
            return
        if spool is not None:
            spool.write(piece)
        yield piece


def _check(fh: IO[str], spool: IO[str] | None) -> tuple[bool, bool]:
    """First pass: every token parsed (ReplayParseError at the first bad one), nothing
    kept but whether the input has RESULT and reveal tokens."""
    insurance = confirm = False
    for inp in iter_inputs(iter_tokens(_pieces(fh, spool))):
        if isinstance(inp, Reveal | VoidInsurance):
            insurance = True
        elif isinstance(inp, ConfirmResult):
            confirm = True
    return insurance, confirm


def run(args: argparse.Namespace) -> int:
    if not 1 <= args.decks <= 16:
        print(f"replay: --decks: expected 1-16, got {args.decks}", file=sys.stderr)
        return 2
    name = "<stdin>" if args.file == "-" else args.file
    # Two passes, streaming (bounded memory whatever the size, issue 14): the first
    # checks every token, so a bad one stops the replay before any output; the second
    # runs the game core and prints as it goes. Standard input is spooled to a
    # temporary file (disk, not memory) during the first pass.
    with contextlib.ExitStack() as stack:
        try:
            if args.file == "-":
                spool = stack.enter_context(tempfile.TemporaryFile(
                    "w+", encoding="utf-8", newline=""))
                first = sys.stdin
            else:
                spool = None
                first = stack.enter_context(open(args.file, encoding="utf-8", newline=""))
            insurance, confirm = _check(first, spool)
            if spool is not None:
                spool.seek(0)
                second = spool
            else:
                stamp = os.fstat(first.fileno())
                second = stack.enter_context(open(args.file, encoding="utf-8", newline=""))
                again = os.fstat(second.fileno())
                if (again.st_ino, again.st_size, again.st_mtime_ns) != (
                        stamp.st_ino, stamp.st_size, stamp.st_mtime_ns):
                    print(f"replay: {name}: the file changed while it was read",
                          file=sys.stderr)
                    return 2
        except (OSError, UnicodeDecodeError) as exc:
            print(f"replay: cannot read {name}: {exc}", file=sys.stderr)
            return 2
        except ReplayParseError as exc:
            print(f"replay: {name}: {exc}", file=sys.stderr)
            return 2
        # A recording with RESULT tokens comes from a table where the dealer confirms
        # each result (an extra card before RESULT is then a misdeal of that round);
        # without them, results are confirmed as soon as the round is complete. Reveal
        # tokens come from an insurance table with reveal buttons, where each round
        # stays open for the reveals until the dealer confirms it.
        shoe = Shoe(_rules(args, "button" if insurance or confirm else "auto", insurance))
        pstate = protection.initial_state(shoe.rules)
        write = sys.stdout.write
        for inp in iter_inputs(iter_tokens(_pieces(second))):
            for ev in shoe.apply(inp):
                pstate, raised = protection.protect(pstate, ev)  # game protection
                if ev.type == "shoe_ended":  # the whole-shoe fit: once, after the end
                    pstate, fitted = protection.shoe_fit(pstate)
                    raised = (*raised, *fitted)
                for out in (ev, *raised):
                    if out is not ev and not args.analysis and out.type == "shoe_analysis":
                        continue
                    write(encode_event(out).decode() + "\n" if args.json
                          else describe(out) + "\n")
        sys.stdout.flush()
    return 0

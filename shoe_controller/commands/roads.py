"""`shoe-controller roads`: the scoreboard roads of a results string or a replay file.

    shoe-controller roads --results BPPTB --json
    shoe-controller roads shoe.txt            # a replay file (tokens and options of `replay`)
    shoe-controller roads - < shoe.txt        # the same from standard input

Without ``--json`` the roads are drawn as text grids (B/P for the Big Road with the ties
counted on a cell as a digit, r/b for red/blue marks). Bad input exits with status 2 and
a message naming the result or token, and nothing else is printed.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable, Sequence

from shoe_controller.game.roads import (
    ROWS,
    RoadResult,
    Roads,
    RoadsInputError,
    build_roads,
    parse_results,
    roads_to_dict,
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", nargs="?", help="a replay file (`-` for standard input)")
    parser.add_argument("--results", help="results in order, e.g. BPPTB (B banker, "
                        "P player, T tie)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    # how the replay file is played: the options of `shoe-controller replay`
    parser.add_argument("--no-burn", action="store_true",
                        help="replay file: no burn at the shoe start")
    parser.add_argument("--rounds", choices=("auto", "button"), default="auto",
                        help="replay file: how rounds open (default auto)")
    parser.add_argument("--cut-card", choices=("last_round", "one_more_round"),
                        default="last_round", help="replay file: cut-card policy")
    parser.add_argument("--extra-card", choices=("burn", "void", "carry"), default="burn",
                        help="replay file: policy for a card drawn when none is due")
    parser.add_argument("--decks", type=int, default=8, metavar="N",
                        help="replay file: decks in the shoe, 1-16 (default 8)")


class InputError(Exception):
    """Bad input: printed as one line on stderr, exit status 2."""


def results_from_replay(text: str, args: argparse.Namespace) -> list[RoadResult]:
    """Drive the game core over a replay file; the confirmed rounds of the LAST shoe.

    Voided rounds never reach the roads. (A roads display shows one shoe: a file with
    several ``SHOE`` tokens shows the last.)
    """
    from shoe_controller.game.display_state import fold

    events = replay_events(text, args)
    state = fold(events)
    return list(state.results)


def replay_events(text: str, args: argparse.Namespace) -> list[object]:
    """The domain events of a replay file, played through the real game core."""
    from shoe_controller.game.replay_text import ReplayParseError, replay_inputs
    from shoe_controller.game.rules import Rules
    from shoe_controller.game.shoe import Shoe

    if not 1 <= args.decks <= 16:
        raise InputError(f"--decks: expected 1-16, got {args.decks}")
    try:
        inputs = replay_inputs(text)
    except ReplayParseError as exc:
        raise InputError(str(exc)) from exc
    shoe = Shoe(Rules(decks=args.decks, burn="none" if args.no_burn else "first_card",
                      cut_card=args.cut_card, extra_card=args.extra_card,
                      rounds=args.rounds, confirm="auto"))
    return [ev for inp in inputs for ev in shoe.apply(inp)]


def render_grid(cells: Iterable[tuple[int, int, str]], rows: int = ROWS) -> list[str]:
    """Text rows of a road grid: each cell two characters wide.

    >>> render_grid([(0, 0, "B"), (0, 1, "B"), (1, 0, "P3")])
    ['B P3', 'B   ', '    ', '    ', '    ', '    ']
    """
    cells = list(cells)
    width = max((c for c, _, _ in cells), default=-1) + 1
    grid = [["  "] * width for _ in range(rows)]
    for col, row, text in cells:
        grid[row][col] = f"{text:<2}"[:2]
    return ["".join(r) for r in grid]


def render_text(roads: Roads, results: Sequence[RoadResult]) -> str:
    """The human form: each road as a grid, then the ask roads and the counts."""
    out: list[str] = []
    letter = {"banker": "B", "player": "P", "tie": "T"}
    out.append(f"Bead Plate ({len(roads.bead_plate)} results)")
    out += render_grid((c.col, c.row, letter[c.outcome]) for c in roads.bead_plate)
    out.append("")
    out.append("Big Road (digit: ties on the cell)")
    out += render_grid(
        (c.col, c.row, letter[c.outcome] + (str(min(c.ties, 9)) if c.ties else ""))
        for c in roads.big_road
    )
    if roads.leading_ties and not roads.big_road:
        out.append(f"({roads.leading_ties} tie(s) waiting for the first Banker/Player)")
    for name, title in (("big_eye_boy", "Big Eye Boy"), ("small_road", "Small Road"),
                        ("cockroach_pig", "Cockroach Pig")):
        out.append("")
        out.append(f"{title} (r red, b blue)")
        out += render_grid((c.col, c.row, c.mark[0]) for c in roads.grids[name])
    out.append("")
    for side in ("banker", "player"):
        ask = roads.ask[side]
        marks = ", ".join(f"{k.replace('_', ' ')} {v or '-'}" for k, v in ask.items())
        out.append(f"Ask {side.capitalize()}: {marks}")
    counts = {o: sum(r.outcome == o for r in results) for o in ("banker", "player", "tie")}
    out.append(f"Banker {counts['banker']}  Player {counts['player']}  Tie {counts['tie']}")
    return "\n".join(out)


def run(args: argparse.Namespace) -> int:
    try:
        if (args.results is None) == (args.file is None):
            raise InputError("give either --results BPT... or a replay FILE (not both)")
        if args.results is not None:
            results = list(parse_results(args.results))
        else:
            if args.file == "-":
                text = sys.stdin.read()
            else:
                try:
                    with open(args.file, encoding="utf-8") as f:
                        text = f.read()
                except (OSError, UnicodeDecodeError) as exc:
                    raise InputError(f"cannot read {args.file}: {exc}") from exc
            results = results_from_replay(text, args)
    except (InputError, RoadsInputError) as exc:
        print(f"shoe-controller roads: {exc}", file=sys.stderr)
        return 2
    roads = build_roads(results)
    if args.json:
        data = roads_to_dict(roads)
        data["results"] = "".join(
            {"banker": "B", "player": "P", "tie": "T"}[r.outcome] for r in results)
        print(json.dumps(data, separators=(",", ":")))
    else:
        print(render_text(roads, results))
    return 0

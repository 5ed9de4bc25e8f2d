"""`shoe-controller odds`: exact probabilities and house edge of every bet.

    shoe-controller odds                         # a fresh 8-deck shoe, commission table
    shoe-controller odds --decks 6 --no-commission
    shoe-controller odds --removed "AS KD 9H 9H" --json
    shoe-controller odds --config /etc/shoe-controller/table.toml   # the table's paytable
    shoe-controller odds --insurance             # + each insurance offer's house edge

``--removed`` lists the cards already out of a fresh shoe (any order, codes as in
``replay``). ``--json`` prints one object: ``probabilities`` (bet -> probability it
wins something; ``banker``/``player``/``tie`` are the round's winner), ``house_edge`` and
``expected_value`` (bet -> fraction per unit staked; a positive house edge is the house's
advantage), ``exact`` (the same as exact fractions ``"43/415"``) and ``elapsed_ms`` (the
analysis itself, static tables built beforehand). Bad input exits with status 2 and a
message naming the problem.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from fractions import Fraction

from shoe_controller.game import odds
from shoe_controller.game.cards import CardParseError, parse_card
from shoe_controller.game.rules import Rules


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--decks", type=int, default=None,
        help="decks in the fresh shoe (default 8, or the config's [rules] decks)",
    )
    parser.add_argument(
        "--config", metavar="FILE",
        help="a table configuration: its [paytable], [rules] decks and commission",
    )
    parser.add_argument(
        "--removed", default="", help='cards already out of the shoe, e.g. "AS KD 10H"'
    )
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument(
        "--commission", dest="commission", action="store_true", default=None,
        help="Banker wins pay 0.95 (default, or the config's [rules] commission)",
    )
    mode.add_argument(
        "--no-commission", dest="commission", action="store_false",
        help="Banker wins pay 1, or 0.5 with a total of 6",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument(
        "--insurance", action="store_true",
        help="also the exact house edge of each insurance offer at its stage ([insurance] rows)",
    )


def _removed_cards(text: str) -> list[str]:
    cards = []
    for position, token in enumerate(text.split(), start=1):
        try:
            cards.append(parse_card(token).code)
        except CardParseError as exc:
            raise odds.CompositionError(f"--removed token {position}: {exc}") from None
    return cards


def _ratio(x: Fraction) -> str:
    return f"{x.numerator}/{x.denominator}"


def report(args: argparse.Namespace) -> dict[str, object]:
    """The analysis as a JSON-ready dict (raises CompositionError on bad input)."""
    rules = Rules()
    if args.config:
        from shoe_controller.config import ConfigError, load_config

        try:
            rules = load_config(args.config).rules
        except (ConfigError, OSError) as exc:
            raise odds.CompositionError(str(exc)) from None
    decks = rules.decks if args.decks is None else args.decks
    commission = rules.commission == "commission" if args.commission is None else args.commission
    if not 1 <= decks <= 64:
        raise odds.CompositionError(f"--decks: expected 1-64, got {decks}")
    removed = _removed_cards(args.removed)
    counts = odds.remaining_counts(decks, removed)
    odds.prepare(rules.paytable, commission)
    start = time.perf_counter()
    analysis = odds.analyse(counts, rules.paytable, commission)
    elapsed_ms = (time.perf_counter() - start) * 1000
    return {
        "decks": decks,
        "removed": len(removed),
        "cards_left": analysis.cards,
        "commission": commission,
        "probabilities": {k: float(v) for k, v in analysis.probabilities.items()},
        "house_edge": {k: float(v) for k, v in analysis.house_edge.items()},
        "expected_value": {k: float(v) for k, v in analysis.expected_value.items()},
        "exact": {
            "probabilities": {k: _ratio(v) for k, v in analysis.probabilities.items()},
            "house_edge": {k: _ratio(v) for k, v in analysis.house_edge.items()},
        },
        "elapsed_ms": round(elapsed_ms, 3),
        **({"insurance": _insurance(rules, decks, removed)} if args.insurance else {}),
    }


def _insurance(rules: Rules, decks: int, removed: list[str]) -> list[dict[str, object]]:
    """Each insurance row: P(insured event | offered) and house edge (CORE's
    game.insurance_odds), for the shoe left after ``removed``."""
    from shoe_controller.game.insurance_odds import fresh_pool, remove, row_report

    pool = remove(fresh_pool(decks), [parse_card(c).value for c in removed])
    rows = row_report(rules.insurance, pool)
    for r in rows:
        for key in ("probability", "house_edge"):
            x = r[key]
            r[key], r[f"{key}_exact"] = (None, None) if x is None else (float(x), _ratio(x))
    return rows


def _print_table(result: dict[str, object]) -> None:
    from rich.console import Console
    from rich.table import Table

    mode = "commission" if result["commission"] else "no commission"
    table = Table(
        title=f"{result['cards_left']} cards left of {result['decks']} decks ({mode})"
    )
    table.add_column("bet")
    table.add_column("P(win)", justify="right")
    table.add_column("house edge", justify="right")
    table.add_column("player EV", justify="right")
    prob = result["probabilities"]
    edge = result["house_edge"]
    assert isinstance(prob, dict) and isinstance(edge, dict)
    for bet in odds.BETS:
        style = "bold red" if edge[bet] < 0 else None
        table.add_row(
            bet, f"{prob[bet]:.6f}", f"{edge[bet] * 100:.4f}%", f"{-edge[bet]:+.6f}",
            style=style,
        )
    console = Console()
    console.print(table)
    console.print(f"analysis: {result['elapsed_ms']:.2f} ms (exact; red: player advantage)")
    if "insurance" in result:
        ins = Table(title="insurance offers (P: insured event, given the offer is made)")
        for col in ("insures", "stage", "player", "banker", "odds", "P", "house edge"):
            ins.add_column(col, justify="right" if col in ("odds", "P", "house edge") else None)
        for r in result["insurance"]:  # type: ignore[union-attr]
            p, e = r["probability"], r["house_edge"]
            ins.add_row(
                f"{r['side']} bet vs {r['insures']}", r["stage"], r["player"], r["banker"],
                f"{r['odds']:g}", "-" if p is None else f"{p:.6f}",
                "never offered" if e is None else f"{e * 100:.4f}%",
                style="bold red" if e is not None and e < 0 else None,
            )
        console.print(ins)


def run(args: argparse.Namespace) -> int:
    try:
        result = report(args)
    except odds.CompositionError as exc:
        print(f"shoe-controller odds: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(result, sort_keys=True))
    else:
        _print_table(result)
    return 0

"""Exact insurance odds against brute-force enumeration of explicit card orders on small
shoes (every ordered draw of the unseen cards equally likely). The rounds are dealt and
the sheet's score columns read by tests/support/baccarat_ref.py (the rule text), not by
the game core under test."""

from __future__ import annotations

import itertools
import random
from fractions import Fraction

import pytest

from shoe_controller.game.insurance import InsuranceConfig
from shoe_controller.game.insurance_odds import (
    fresh_pool,
    house_edge,
    insured_probability,
    remove,
    row_report,
)
from tests.support import baccarat_ref as ref

_CODE = {0: "KS", 1: "AS", **{v: f"{v}S" for v in range(2, 10)}}


def coup(values):
    """The round's hands (as values) dealt from ``values`` by the reference tableau."""
    player, banker = ref.deal_round([_CODE[v] for v in values])
    return [ref.value(c) for c in player], [ref.value(c) for c in banker]


def winner(pv, bv):
    pt, bt = sum(pv) % 10, sum(bv) % 10
    return "player" if pt > bt else "banker" if bt > pt else "tie"


def pool_of(cards):
    return tuple(cards.count(v) for v in range(10))


def brute(cards, shown_p, shown_b, insures):
    """P(insures) dealing every ordered arrangement of the unseen ``cards``."""
    need = (0 if shown_p else 2) + (0 if shown_b else 2) + 2
    need = min(need, len(cards))
    hits = total = 0
    for seq in itertools.permutations(range(len(cards)), need):
        vals = [cards[i] for i in seq]
        it = iter(vals)
        if shown_p is not None and len(shown_p) == 3:
            deal = [shown_p[0], shown_b[0], shown_p[1], shown_b[1], shown_p[2], *it]
        else:
            p = list(shown_p) if shown_p else [next(it), next(it)]
            b = list(shown_b) if shown_b else [next(it), next(it)]
            deal = [p[0], b[0], p[1], b[1], *it]
        pv, bv = coup([*deal, 0, 0, 0])
        hits += winner(pv, bv) == insures
        total += 1
    return Fraction(hits, total)


@pytest.mark.parametrize("seed", range(6))
def test_probabilities_match_brute_force(seed):
    rng = random.Random(seed)
    cards = [rng.choice([0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9]) for _ in range(10)]
    pool = pool_of(cards)
    cases = [
        (None, (rng.randrange(10), rng.randrange(10))),
        ((rng.randrange(10), rng.randrange(10)), None),
        ((rng.randrange(10), rng.randrange(10)), (rng.randrange(10), rng.randrange(10))),
        ((2, 3, rng.randrange(10)), (rng.randrange(10), rng.randrange(10))),
    ]
    for shown_p, shown_b in cases:
        for insures in ("player", "banker", "tie"):
            exact = insured_probability(insures, shown_p, shown_b, pool)
            assert exact == brute(cards, shown_p, shown_b, insures), (shown_p, shown_b)


def brute_rows(cards, rows):
    """P(insured event | the row is offered) for each row, over every order of a small
    shoe, with the offer rules stated independently: 2/2 with a hand unrevealed, or both
    shown and a card still to come; 3/2 with Banker still to draw."""
    specs = [(r.player, r.banker) for r in rows]
    hits = [0] * len(rows)
    totals = [0] * len(rows)

    def ok(spec, total):
        return spec == "unrevealed" or ref._fits(spec, total)

    for seq in itertools.permutations(cards, 6):
        pv, bv = coup(seq)
        pt2, bt2 = (seq[0] + seq[2]) % 10, (seq[1] + seq[3]) % 10
        win = winner(pv, bv)
        for i, (row, (ps, bs)) in enumerate(zip(rows, specs, strict=True)):
            if row.stage == "2/2":
                if not (ok(ps, pt2) and ok(bs, bt2)):
                    continue
                if "unrevealed" not in (ps, bs) and len(pv) + len(bv) == 4:
                    continue
            else:
                if len(pv) != 3 or len(bv) != 3:  # Player drew, Banker still to draw
                    continue
                if not (ok(ps, sum(pv) % 10) and ok(bs, bt2)):
                    continue
            totals[i] += 1
            hits[i] += win == row.insures
    return [None if t == 0 else Fraction(h, t) for h, t in zip(hits, totals, strict=True)]


def test_row_report_matches_brute_force_on_a_small_shoe():
    cards = [0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 9]
    pool = pool_of(cards)
    rows = InsuranceConfig().rows
    report = row_report(InsuranceConfig(), pool)
    expected = brute_rows(cards, rows)
    assert sum(e is not None for e in expected) >= 18  # most rows reachable here
    for i, row in enumerate(rows):
        assert report[i]["probability"] == expected[i], row


def test_house_edge_and_a_fresh_shoe():
    assert house_edge(Fraction(1, 3), 2.0) == 0
    assert remove(fresh_pool(8), (0, 9)) == (127, 32, 32, 32, 32, 32, 32, 32, 32, 31)
    report = row_report(InsuranceConfig(), fresh_pool(8))
    assert all(r["probability"] is not None for r in report)
    # the sheet's Player "9 shown, Banker unrevealed: tie 10" favours the bettor
    nine = next(r for r in report if (r["side"], r["player"], r["insures"]) ==
                ("player", "9", "tie"))
    assert nine["house_edge"] < 0
    banker_nine = next(r for r in report if (r["side"], r["banker"], r["insures"]) ==
                       ("banker", "9", "tie"))
    assert banker_nine["probability"] == nine["probability"]  # same event, by symmetry


def test_odds_command_insurance_report(capsys):
    import json

    from shoe_controller.cli import main

    assert main(["odds", "--insurance", "--json", "--decks", "8"]) == 0
    data = json.loads(capsys.readouterr().out)
    rows = data["insurance"]
    assert len(rows) == 24
    nine = rows[14]
    assert (nine["side"], nine["player"], nine["insures"], nine["odds"]) == (
        "player", "9", "tie", 10.0)
    assert nine["probability_exact"] == "8081/85491" and nine["house_edge"] < 0
    assert main(["odds", "--insurance", "--decks", "1", "--removed", "AS KD"]) == 0
    assert "insurance offers" in capsys.readouterr().out

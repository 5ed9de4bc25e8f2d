"""insurance_odds' row report for tables configured beyond the default sheet, against every
order of a small shoe (issue 15, survivors of the session-6 mutation run).

The default sheet never offers a 2/2 row with both hands shown when no card is to come
(its both-shown rows need Player on 0-5, who always draws), and its 3/2 rows name one
score each, so one third card at most fits a start. A table may configure ranges: these
rows reach the "nothing to come: not offered" rule (naturals, Player standing on 6-7
with Banker standing) and 3/2 rows that several third cards fit. The rounds are dealt by
tests/support/baccarat_ref.py and the offer rules are stated here from the rule text.
"""

from __future__ import annotations

import itertools
from fractions import Fraction

from shoe_controller.game.insurance import InsuranceConfig, InsuranceRow
from shoe_controller.game.insurance_odds import row_report
from tests.support import baccarat_ref as ref

_CODE = {0: "KS", 1: "AS", **{v: f"{v}S" for v in range(2, 10)}}

ROWS = (
    # both hands shown at 2/2, any scores: offered only while a card is still to come
    InsuranceRow("player", "2/2", "0-9", "0-9", "banker", 1.0),
    InsuranceRow("banker", "2/2", "6-9", "0-9", "tie", 8.0),
    InsuranceRow("player", "2/2", "0-7", "6-9", "tie", 8.0),
    # 3/2 with ranges: several third cards fit one start
    InsuranceRow("banker", "3/2", "0-9", "0-9", "player", 1.0),
    InsuranceRow("player", "3/2", "3-8", "0-6", "banker", 1.0),
)


def _fits(spec: str, score: int) -> bool:
    lo, _, hi = spec.partition("-")
    return int(lo) <= score <= int(hi or lo)


def _brute(values: list[int]) -> list[Fraction | None]:
    """P(insured event | offered) over every ordered draw of six cards of the shoe."""
    hits = [0] * len(ROWS)
    offers = [0] * len(ROWS)
    for seq in itertools.permutations(values, 6):
        player, banker = ref.deal_round([_CODE[v] for v in seq])
        win = ref.winner(player, banker)
        pt2, bt2 = (seq[0] + seq[2]) % 10, (seq[1] + seq[3]) % 10
        for i, row in enumerate(ROWS):
            if row.stage == "2/2":
                # both hands shown after four cards: offered if the round goes on
                offered = (_fits(row.player, pt2) and _fits(row.banker, bt2)
                           and len(player) + len(banker) > 4)
            else:
                # Player has drawn a third card and Banker still draws one
                offered = (len(player) == 3 and len(banker) == 3
                           and _fits(row.player, ref.total(player)) and _fits(row.banker, bt2))
            if offered:
                offers[i] += 1
                hits[i] += win == row.insures
    return [Fraction(h, t) if t else None for h, t in zip(hits, offers, strict=True)]


def test_configured_ranges_follow_the_offer_rules() -> None:
    # naturals on both sides, Player 6 and 7 against a standing Banker, draws on 0-5
    values = [0, 0, 1, 3, 6, 7, 8, 9, 5]
    pool = tuple(values.count(v) for v in range(10))
    report = row_report(InsuranceConfig(rows=ROWS), pool)
    want = _brute(values)
    assert all(w is not None for w in want)
    assert [r["probability"] for r in report] == want

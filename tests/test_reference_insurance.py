"""The insurance table's rows, applied against the issue-8 sheet in
tests/support/baccarat_ref.py (no import of the game core there), and the table's
checks on a configured row: one clear error each."""

from __future__ import annotations

import itertools
import re

import msgspec
import pytest

from shoe_controller.game.insurance import (
    DEFAULT_ROWS,
    InsuranceConfig,
    InsuranceRow,
    applicable_rows,
    score_spec,
)
from tests.support import baccarat_ref as ref

SCORES = [None, *range(10)]


def test_the_default_table_is_the_sheet():
    assert [(r.side, r.stage, r.player, r.banker, r.insures, r.odds) for r in DEFAULT_ROWS] == [
        tuple(row) for row in ref.INSURANCE_SHEET]
    assert InsuranceConfig().rows == DEFAULT_ROWS and not InsuranceConfig().enabled


@pytest.mark.parametrize("stage", ["2/2", "3/2"])
def test_the_rows_that_apply_for_every_pair_of_scores(stage):
    for p, b in itertools.product(SCORES, SCORES):
        got = [(r.side, r.insures, r.odds) for r in applicable_rows(InsuranceConfig(), stage,
                                                                    p, b)]
        assert got == ref.insurance_rows(stage, p, b), (stage, p, b)
        for row in DEFAULT_ROWS:
            want = row.stage == stage and ref._fits(row.player, p) and ref._fits(row.banker, b)
            assert row.matches(stage, p, b) is want
    assert applicable_rows(InsuranceConfig(), "3/3", 0, 0) == []


def test_score_specs():
    assert score_spec("unrevealed") is None and score_spec("UNREVEALED") is None
    for s in range(10):
        assert score_spec(str(s)) == (s, s)
    for lo, hi in itertools.combinations_with_replacement(range(10), 2):
        assert score_spec(f"{lo}-{hi}") == (lo, hi) == score_spec(f" {lo} - {hi} ")
    for bad in ["", "10", "x", "-1", "1-", "-", "0-10", "unrevealed7", "77", "7 8"]:
        with pytest.raises(ValueError) as e:
            score_spec(bad)
        assert str(e.value) == (f"score {bad!r}: expected 'unrevealed', a score 0-9 or a "
                                "range like 0-3")
    with pytest.raises(ValueError, match=r"^score '5-3': the range runs backwards$"):
        score_spec("5-3")


@pytest.mark.parametrize(("row", "error"), [
    (("banker", "3/2", "unrevealed", "4", "player", 2.0),
     "a 3/2 row needs both scores (both hands are shown by then)"),
    (("player", "3/2", "4", "unrevealed", "banker", 2.0),
     "a 3/2 row needs both scores (both hands are shown by then)"),
    (("banker", "2/2", "unrevealed", "unrevealed", "player", 2.0),
     "a row cannot have both hands unrevealed"),
    (("banker", "2/2", "0-3", "4", "banker", 2.0), "a banker insurance cannot insure a banker win"),
    (("player", "2/2", "5", "4", "player", 2.0), "a player insurance cannot insure a player win"),
])
def test_a_row_that_cannot_be_is_refused_with_its_reason(row, error):
    with pytest.raises(ValueError) as e:
        InsuranceRow(*row)  # type: ignore[arg-type]
    assert str(e.value) == error
    keys = ("side", "stage", "player", "banker", "insures", "odds")
    with pytest.raises(msgspec.ValidationError, match=re.escape(error)):
        msgspec.convert({"rows": [dict(zip(keys, row, strict=True))]}, InsuranceConfig)


def test_rows_that_can_be_are_accepted():
    InsuranceRow("banker", "2/2", "unrevealed", "7", "tie", 8.0)
    InsuranceRow("player", "3/2", "9", "0-6", "tie", 10.0)
    InsuranceRow("banker", "2/2", "0", "unrevealed", "player", 1000.0)

"""The insurance odds' refusals, word for word (issue 15's campaign: the refusals of
``outcome_weights`` were matched by type only, so a lost or garbled message, and a 3/2
stage accepted with a Banker hand of three cards, survived)."""

from __future__ import annotations

import pytest

from shoe_controller.game.insurance_odds import fresh_pool, outcome_weights, remove


def refusal(*args) -> str:
    with pytest.raises(ValueError) as info:
        outcome_weights(*args)
    return str(info.value)


def test_nothing_shown_is_refused() -> None:
    assert refusal(None, None, fresh_pool(8)) == "at least one hand must be shown"


@pytest.mark.parametrize("banker", [None, (3,), (1, 2, 3)])
def test_the_3_2_stage_needs_banker_s_two_cards(banker) -> None:
    """Player's third card is dealt after the first four cards: Banker then shows two."""
    pool = remove(fresh_pool(8), (1, 2, 3))
    assert refusal((1, 2, 3), banker, pool) == "at the 3/2 stage Banker's two cards are shown"


def test_a_value_not_left_is_named() -> None:
    assert remove((0, 1, 0, 0, 0, 0, 0, 0, 0, 0), (1,)) == (0,) * 10  # the last one: fine
    with pytest.raises(ValueError) as info:
        remove((0, 1, 0, 0, 0, 0, 0, 0, 0, 0), (1, 1))
    assert str(info.value) == "no card of value 1 left in the pool"


def test_a_row_whose_situation_cannot_arise_has_no_probability() -> None:
    """A shoe of tens only: every hand is 0 against 0, a tie on the first four cards, so
    no insurance row's situation (which needs other scores) is ever reached; the report
    says so (None) rather than dividing by nothing."""
    from shoe_controller.game.insurance import InsuranceConfig
    from shoe_controller.game.insurance_odds import row_report

    rows = row_report(InsuranceConfig(), (12, 0, 0, 0, 0, 0, 0, 0, 0, 0))
    assert len(rows) == len(InsuranceConfig().rows)
    assert all(r["probability"] is None and r["house_edge"] is None for r in rows)
    for r, row in zip(rows, InsuranceConfig().rows, strict=True):  # the row, as offered
        assert r == {"side": row.side, "stage": row.stage, "player": row.player,
                     "banker": row.banker, "insures": row.insures, "odds": row.odds,
                     "probability": None, "house_edge": None}

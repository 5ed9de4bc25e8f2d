"""odds.remaining_counts takes Cards as well as codes, as its docstring says (issue 15's
campaign: every Card was re-parsed as text and nothing noticed)."""

from __future__ import annotations

from shoe_controller.game.cards import ALL_CARDS, parse_card
from shoe_controller.game.odds import remaining_counts


def test_removed_cards_may_be_card_values_or_codes() -> None:
    ace, king = parse_card("AS"), parse_card("KD")
    counts = remaining_counts(1, [ace, "kd"])
    # a 1-deck shoe holds each of the 52 cards once: exactly AS and KD are gone
    assert len(counts) == 52 and sum(counts) == 50
    assert {c.code for c in ALL_CARDS if counts[c.index] == 0} == {"AS", "KD"}
    assert remaining_counts(2, [ace, ace, king]) == remaining_counts(2, ["AS", "as", "KD"])

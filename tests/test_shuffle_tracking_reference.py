"""shuffle_tracking's evidence keys against docs/odds.md, and estimated_riffles against a
second, plainly written solution of its own definition (issue 15's campaign: the
evidence's ``continued`` key and estimated_riffles' edges were free to change)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from shoe_controller.game.shuffle_tracking import ShuffleTest, estimated_riffles, new_deck_order


def test_the_evidence_has_the_documented_keys_and_counts_one_thread() -> None:
    doc = (Path(__file__).resolve().parents[1] / "docs" / "odds.md").read_text("utf-8")
    row = next(line for line in doc.splitlines() if line.startswith("| `shuffle_weak` |"))
    listed = re.findall(r"`(\w+)`", row.split("|")[2])
    old = new_deck_order(8)
    e = ShuffleTest.start(old, 8).feed(old[:40]).evidence()
    per_shoe = {"reference", "false_alarm_bound", "cards_seen", "unread",
                "previous_shoe_known", "previous_shoe"}  # added by the projection
    assert set(listed) - per_shoe - {"shuffle_weak_previous_shoe",
                                     "shuffle_weak_new_deck_order"} == set(e)
    # 40 cards in their old order: one rising sequence that 39 cards continued
    assert (e["rising_sequences"], e["continued"]) == (1, 39)


def reference_riffles(threads: int, cards: int) -> float | None:
    """k with a = 2**k packets showing `threads` distinct threads among `cards` cards on
    average, a * (1 - (1 - 1/a) ** cards) = threads, found by plain bisection on k."""
    if cards <= 0 or threads <= 1:
        return 0.0
    if 2 * threads >= cards:  # half the cards or more: no riffle structure left
        return None
    lo, hi = 0.0, 20.0
    for _ in range(200):
        k = (lo + hi) / 2
        a = 2.0 ** k
        if a * (1 - (1 - 1 / a) ** cards) < threads:
            lo = k
        else:
            hi = k
    return round(lo, 1)


@pytest.mark.parametrize(("threads", "cards"), [
    (5, 0), (1, 1), (1, 2), (1, 400), (2, 400), (3, 1), (3, 7), (16, 400), (150, 400), (199, 400),
    (200, 400), (64, 100_000), (40, 81)])
def test_estimated_riffles_solves_its_definition(threads: int, cards: int) -> None:
    want = reference_riffles(threads, cards)
    got = estimated_riffles(threads, cards)
    assert got == want, (got, want)

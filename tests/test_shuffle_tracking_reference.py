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


def test_the_component_named_is_the_one_that_fits() -> None:
    old = new_deck_order(8)
    # no card yet: every ratio is 0, a tie, and the first component listed is named
    assert ShuffleTest.start(old, 8).component() == "tracker forward"
    # the old order dealt again unchanged is what the forward tracker follows
    assert ShuffleTest.start(old, 8).feed(old[:40]).component() == "tracker forward"
    # dealt backwards from the end of the old order: the backward tracker
    assert ShuffleTest.start(old, 8).feed(old[::-1][:40]).component() == "tracker backward"


def test_component_names_follow_the_documented_layout() -> None:
    from shoe_controller.game.shuffle_tracking import _component_name

    trackers = ShuffleTest.start(new_deck_order(1), 1)._trackers
    recent, threads = trackers[3], trackers[4]
    assert _component_name(recent, 0) == "recent cards"
    # the thread filter's values: 4 packet counts x 4 windows x 3 lambdas, in that order
    # (16, 24, 32, 48 threads; windows 1 forward, 1 backward, 3 forward, 3 backward)
    expected = {0: "16 threads, window 1 forward", 2: "16 threads, window 1 forward",
                3: "16 threads, window 1 backward", 6: "16 threads, window 3 forward",
                11: "16 threads, window 3 backward", 12: "24 threads, window 1 forward",
                30: "32 threads, window 3 forward", 47: "48 threads, window 3 backward"}
    for index, name in expected.items():
        assert _component_name(threads, index) == f"thread filter, {name}"

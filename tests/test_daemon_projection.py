"""The core loop defers the game-protection projection until it is idle: a card read
right after a round's end is journaled (and published) before that round's analysis,
and the analysis still comes, computed from the cards up to the round's end."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from shoe_controller.daemon import Daemon
from shoe_controller.game.cards import parse_cards
from shoe_controller.game.inputs import CardSeen, NewShoe
from shoe_controller.game.protection import interleave
from shoe_controller.game.rules import Rules
from shoe_controller.journal import Journal

RULES = Rules(burn="none")  # rounds open and results confirm by themselves


def test_the_next_card_goes_before_the_analysis_of_the_round(tmp_path: Path) -> None:
    journal = Journal.open(tmp_path / "j.sqlite3", table_id="T1")
    daemon = Daemon(rules=RULES, journal=journal)
    daemon.start()
    # Queued before the loop runs: the round 7S KC 9D 5D 3H ends (Player 9 wins), and
    # the first card of round 2 is already waiting.
    daemon.submit(NewShoe())
    for card in parse_cards("7S KC 9D 5D 3H 2C"):
        daemon.submit(CardSeen(card))
    loop = threading.Thread(target=daemon.run, daemon=True)
    loop.start()
    try:
        deadline = time.monotonic() + 20
        while not any(e.type == "shoe_analysis" for e in journal.replay()):
            assert time.monotonic() < deadline, "no shoe_analysis: the idle loop never ran it"
            time.sleep(0.01)
    finally:
        daemon.stop()
        loop.join(10)
    events = [e.data for e in journal.replay()]
    types = [e["type"] for e in events]
    analysis = types.index("shoe_analysis")
    second = next(i for i, e in enumerate(events)
                  if e["type"] == "card_dealt" and e["round"] == 2)
    assert types.index("result_confirmed") < second < analysis
    assert events[analysis]["round"] == 1
    # The same figures as the projection folded in journal order (nothing of round 2
    # leaked into round 1's analysis).
    core = [j.event() for j in journal.replay() if j.type != "shoe_analysis"]
    expected = [e for e in interleave(core, RULES) if type(e).__name__ == "ShoeAnalysis"]
    assert events[analysis]["expected_value"] == expected[0].expected_value
    journal.close()


def test_projection_idle_waits_for_a_projection_that_is_running(tmp_path: Path) -> None:
    """``simulate`` waits for the projection before it waits for the outbox: the whole-
    shoe fit raises its alert seconds after the shoe's end. A projection slowed down here
    is waited for; once it is done, its analysis is in the journal."""
    journal = Journal.open(tmp_path / "j.sqlite3", table_id="T1")
    daemon = Daemon(rules=RULES, journal=journal)
    daemon.start()
    slow = daemon.core.protect

    def protect_slowly(events):  # as the fit at a shoe's end: it takes a while
        time.sleep(0.5)
        return slow(events)

    daemon.core.protect = protect_slowly
    daemon.submit(NewShoe())
    for card in parse_cards("7S KC 9D 5D 3H"):
        daemon.submit(CardSeen(card))
    loop = threading.Thread(target=daemon.run, daemon=True)
    loop.start()
    try:
        deadline = time.monotonic() + 10
        while not daemon._projecting.is_set():  # the projection has started, not ended
            assert time.monotonic() < deadline, "the projection never ran"
            time.sleep(0.005)
        assert not any(e.type == "shoe_analysis" for e in journal.replay())
        assert not daemon.projection_idle(0.05)  # still running: not idle yet
        assert daemon.projection_idle(10)
        assert any(e.type == "shoe_analysis" for e in journal.replay())
    finally:
        daemon.stop()
        loop.join(10)
    journal.close()

"""protection.interleave, what ``replay`` prints, against its docstring: every event in
order, each followed by what the projection raised for it; ``analysis=False`` leaves out
the shoe_analysis events only (issue 15's campaign: no test ran interleave, and its
default was free to change)."""

from __future__ import annotations

from shoe_controller.game.events import ShoeAnalysis
from shoe_controller.game.protection import initial_state, interleave, protect
from shoe_controller.game.rules import Rules
from tests.test_protection import deal, new_deck_order


def test_interleave_puts_what_each_event_raised_after_it() -> None:
    events = deal(new_deck_order())[:120]  # a stacked shoe: analyses and alerts early
    expected, state = [], initial_state(Rules())
    for ev in events:
        state, raised = protect(state, ev)
        expected += [ev, *raised]
    assert any(isinstance(e, ShoeAnalysis) for e in expected)
    assert any(type(e).__name__ == "IntegrityAlert" for e in expected)
    assert interleave(events) == expected  # analyses included by default
    assert interleave(events, Rules()) == expected
    assert interleave(events, analysis=False) == [
        e for e in expected if not isinstance(e, ShoeAnalysis)]


def test_fold_of_one_shoe_or_none_is_protect_over_every_event() -> None:
    """fold's docstring: the same state as protect over the events, for a journal of the
    first shoe in progress, and for one that holds no shoe yet."""
    from shoe_controller.game.protection import fold

    events = deal(new_deck_order())[:150]
    slow = initial_state(Rules())
    for ev in events:
        slow, _ = protect(slow, ev)
    fast = fold(initial_state(Rules()), events)
    for name in ("shoe", "sequence", "oriented", "previous", "raised", "above"):
        assert getattr(fast, name) == getattr(slow, name), name
    empty = initial_state(Rules())
    assert fold(empty, []) == empty

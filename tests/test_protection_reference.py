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

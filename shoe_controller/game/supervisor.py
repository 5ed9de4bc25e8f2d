"""What a supervisor may do, when: the pure rules behind ``shoe-controller ctl`` and the
station's key and buttons.

- A manual card (``ctl card QH``) only fills the card the shoe waits for after an
  unreadable read, and only that one: never a card of a round that is dealing normally,
  never a second card, never between rounds.
- A void of a round whose result is already known (complete, awaiting the dealer's
  confirmation) needs the supervisor key turned.
- A pause while paused and a resume while nothing is paused change nothing.

:func:`refusal` says why an input is refused (None: accepted); the shoe's ``decide``
journals a refused manual card or void as a ``fault`` of kind ``input_refused`` with the
reason, and the control socket answers with it. :func:`audit` is what an accepted
action's events carry about who did it.

>>> from shoe_controller.game.cards import parse_card
>>> from shoe_controller.game.inputs import ManualCard, NewShoe, Void, UnreadableCard
>>> from shoe_controller.game.rules import Rules
>>> from shoe_controller.game.shoe import Shoe
>>> shoe = Shoe(Rules(burn="none"))
>>> _ = shoe.apply(NewShoe()), shoe.apply(UnreadableCard())
>>> refusal(shoe.state, ManualCard(parse_card("QH"))) is None
True
>>> _ = shoe.apply(ManualCard(parse_card("QH")))
>>> refusal(shoe.state, ManualCard(parse_card("KH")))
'no card is awaited: a manual card only fills the card the round waits for after an unreadable read'
"""

from __future__ import annotations

from typing import Any

from shoe_controller.game import inputs as I
from shoe_controller.game.round import COMPLETE

__all__ = ["NOT_AWAITED", "RESULT_KNOWN", "audit", "refusal"]

#: Why a manual card is refused when no card is awaited.
NOT_AWAITED = ("no card is awaited: a manual card only fills the card the round waits "
               "for after an unreadable read")
#: Why a void is refused once the result is known and the key is not turned.
RESULT_KNOWN = ("the result is known: voiding the round now needs the supervisor key "
                "turned")


def result_known(state: Any) -> bool:
    """Whether the open round is complete and awaits the dealer's confirmation."""
    return bool(state.phase == "in_round" and COMPLETE[state.node])


def refusal(state: Any, inp: I.Input) -> str | None:
    """Why the shoe in ``state`` refuses supervisor input ``inp``; None when it takes it
    (or when ``inp`` is no supervisor input).

    >>> from shoe_controller.game.shoe import initial_state
    >>> refusal(initial_state(), I.Resume())
    'nothing is paused'
    """
    if isinstance(inp, I.ManualCard):
        return None if state.pending else NOT_AWAITED
    if isinstance(inp, I.Void):
        if result_known(state) and not inp.key:
            return RESULT_KNOWN
        if state.phase != "in_round" and state.paused is None and not state.pending:
            return "no round is open and nothing is paused: nothing to void"
        return None
    if isinstance(inp, I.Pause):
        if state.phase == "no_shoe":
            return "no shoe is loaded"
        return "already paused" if state.paused is not None else None
    if isinstance(inp, I.Resume):
        if state.paused is None:
            return "nothing is paused"
        if state.pending:
            return "an unreadable card must be entered (or the round voided) first"
        return None
    return None


def audit(inp: Any) -> dict[str, Any]:
    """The audit fields an event of supervisor input ``inp`` carries: ``source`` and
    ``operator`` where known (nothing for unaudited inputs: replay text, the virtual
    table), so their events are the same as ever.

    >>> audit(I.Pause()), audit(I.Pause(source="key"))
    ({}, {'source': 'key'})
    """
    out: dict[str, Any] = {}
    source = getattr(inp, "source", None)
    if source is not None:
        out["source"] = source
    operator = getattr(inp, "operator", None)
    if operator is not None:
        out["operator"] = operator
    return out

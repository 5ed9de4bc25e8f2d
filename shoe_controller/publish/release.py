"""Which journaled events may leave the Pi now: the release policy, as a pure fold.

Both feeds (the casino events and the public display state) see only *released* events,
in journal order. Two policies (``[mqtt] release``):

``per_card``
    Every event is released as soon as it is journaled.

``on_result`` (default)
    Nothing of a round that the dealer has not confirmed leaves, on either feed. While a
    round is open, a few events that reveal no card and nothing derived from one are
    released at once (:data:`SAFE_WHILE_OPEN`: the round started, bets open, paused,
    resumed, cut card, last round), so a display can say "round 12, dealing". From the
    first other event of the open round (a card, a prompt, the result, an insurance offer,
    an alert, a fault, the shoe analysis...) everything is *held*, keeping journal order,
    until ``result_confirmed`` or ``round_voided`` of that round releases the whole held
    block at once. A new shoe or the end of the shoe releases a held block too (its round
    can no longer be confirmed). A misdeal whose card is carried into the next round
    (policy ``carry``) is held even between rounds, and the hold then lasts until the
    round that card belongs to is confirmed.

Events are anything with ``type: str`` and ``data: Mapping`` (a
:class:`shoe_controller.journal.JournalEntry`); this module never looks further.

>>> from types import SimpleNamespace as E
>>> def ev(type_, **f): return E(type=type_, data={"type": type_, "shoe": 1, **f})
>>> s = ReleaseState("on_result")
>>> s, out = step(s, ev("round_started", round=1)); [e.type for e in out]
['round_started']
>>> s, out = step(s, ev("card_dealt", round=1, card="QH")); out
()
>>> s, out = step(s, ev("round_result", round=1)); out
()
>>> s, out = step(s, ev("result_confirmed", round=1)); [e.type for e in out]
['card_dealt', 'round_result', 'result_confirmed']
>>> step(ReleaseState("per_card"), ev("card_dealt", round=1, card="QH"))[1][0].type
'card_dealt'
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any, Final, Protocol, TypeVar

__all__ = ["SAFE_WHILE_OPEN", "Releasable", "ReleaseState", "release_all", "step"]

#: Event types that carry no card and nothing computed from cards of the open round.
SAFE_WHILE_OPEN: Final = frozenset(
    {"round_started", "bets_open", "round_paused", "round_resumed", "cut_card", "last_round"}
)
#: The dealer's confirmation, or the round's cancellation: the round's cards may go out.
_CLOSERS: Final = frozenset({"result_confirmed", "round_voided"})
#: A shoe boundary: whatever round was open can no longer be confirmed.
_SHOE_BOUNDARIES: Final = frozenset({"shoe_started", "shoe_ended"})


class Releasable(Protocol):
    @property
    def type(self) -> str: ...

    @property
    def data(self) -> Mapping[str, Any]: ...


T = TypeVar("T", bound=Releasable)


@dataclass(frozen=True, slots=True)
class ReleaseState:
    """Where the release fold stands. Immutable; :func:`step` returns a new one."""

    policy: str = "on_result"
    #: (shoe, round) of the round opened and not yet confirmed or voided.
    open_round: tuple[int, int] | None = None
    #: Events held back, in journal order.
    held: tuple[Any, ...] = ()
    #: A misdeal card was carried into the next round: hold across its confirmation.
    carry_pending: bool = False

    def __post_init__(self) -> None:
        if self.policy not in ("on_result", "per_card"):
            raise ValueError(f"release policy must be on_result or per_card, "
                             f"got {self.policy!r}")

    @property
    def holding(self) -> bool:
        return bool(self.held)


def step(state: ReleaseState, event: T) -> tuple[ReleaseState, tuple[T, ...]]:
    """Fold one journaled event: the new state and the events released by it (in order).

    >>> from types import SimpleNamespace as E
    >>> s = ReleaseState("on_result")
    >>> s, out = step(s, E(type="card_burned", data={"type": "card_burned", "shoe": 1}))
    >>> len(out), s.holding
    (1, False)
    """
    data = event.data
    kind = event.type
    if state.policy == "per_card":
        return state, (event,)

    if kind in _SHOE_BOUNDARIES:
        # A shoe boundary ends any open round: release what was held, then this event.
        return ReleaseState(state.policy), (*state.held, event)

    open_round = state.open_round
    carry = state.carry_pending
    if kind == "round_started":
        open_round = (int(data.get("shoe", 0)), int(data.get("round", 0)))
        carry = False  # a carried card now belongs to this round, held until it closes

    if state.held:
        held = (*state.held, event)
        if kind == "misdeal" and data.get("policy") == "carry":
            carry = True
        if kind in _CLOSERS and _is_open_round(open_round, data) and not carry:
            return ReleaseState(state.policy), held
        if kind in _CLOSERS and _is_open_round(open_round, data):
            open_round = None
        return replace(state, open_round=open_round, held=held, carry_pending=carry), ()

    # Nothing held yet.
    if kind == "misdeal" and data.get("policy") == "carry":
        return replace(state, open_round=open_round, held=(event,), carry_pending=True), ()
    if open_round is not None and kind not in SAFE_WHILE_OPEN and kind not in _CLOSERS:
        return replace(state, open_round=open_round, held=(event,), carry_pending=carry), ()
    if kind in _CLOSERS and _is_open_round(open_round, data):
        open_round = None
    return replace(state, open_round=open_round, carry_pending=carry), (event,)


def release_all(state: ReleaseState, events: Iterable[T]) -> tuple[ReleaseState, list[T]]:
    """Fold many events; the new state and everything released, in order.

    >>> from types import SimpleNamespace as E
    >>> s, out = release_all(ReleaseState(), [E(type="shoe_started", data={"shoe": 1})])
    >>> [e.type for e in out]
    ['shoe_started']
    """
    released: list[T] = []
    for event in events:
        state, out = step(state, event)
        released.extend(out)
    return state, released


def _is_open_round(open_round: tuple[int, int] | None, data: Mapping[str, Any]) -> bool:
    """Does this closing event close the open round? (A closer of no known round, as
    after a restart mid-round with an unknown start, is taken to close it too.)"""
    if open_round is None:
        return True
    return data.get("round") == open_round[1] and data.get("shoe", open_round[0]) == open_round[0]

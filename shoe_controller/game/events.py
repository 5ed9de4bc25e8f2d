"""Domain events: what the game core decided, as immutable values with a stable JSON form.

Every event is a frozen msgspec Struct tagged by a ``type`` field. Cards appear as code
strings (``"QH"``). Every event carries ``shoe`` (1-based shoe number since the journal
began) and, where one exists, ``round`` (1-based within the shoe; ``None`` where no
round is open). Folding :func:`shoe_controller.game.shoe.evolve` over the events a shoe
emitted rebuilds its state exactly: the journal stores these events and nothing else.

>>> ev = CardDealt(shoe=1, round=3, hand="player", position=1, card="QH")
>>> encode_event(ev)
b'{"card":"QH","hand":"player","orientation":null,"position":1,"round":3,"shoe":1,"type":"card_dealt"}'
>>> decode_event(encode_event(ev)) == ev
True
>>> event_to_dict(ev)["type"]
'card_dealt'
>>> decode_event({"type": "round_started", "shoe": 1, "round": 4})
RoundStarted(shoe=1, round=4)
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec

__all__ = [
    "EVENT_TYPES",
    "BetsOpen",
    "BurnIndicator",
    "CardBurned",
    "CardDealt",
    "CutCard",
    "DomainEvent",
    "DrawPrompt",
    "Event",
    "EventDecodeError",
    "Fault",
    "HandRevealed",
    "InsuranceClosed",
    "InsuranceOffer",
    "InsuranceSettlement",
    "InsuranceVoided",
    "IntegrityAlert",
    "LastRound",
    "Misdeal",
    "Operator",
    "ResultConfirmed",
    "RoundPaused",
    "RoundResult",
    "RoundResumed",
    "RoundStarted",
    "RoundVoided",
    "ShoeAnalysis",
    "ShoeEnded",
    "ShoeStarted",
    "decode_event",
    "encode_event",
    "event_to_dict",
]

Hand = Literal["player", "banker"]
#: Where a supervisor action came from: the station's key switch, one of its buttons, the
#: control socket (``shoe-controller ctl``); ``manual`` on a card a supervisor entered.
Source = Literal["key", "button", "socket", "manual"]
_UNSET = msgspec.UNSET
Unset = msgspec.UnsetType


class Operator(msgspec.Struct, frozen=True, gc=False):
    """Who acted on the control socket, as the kernel says (``SO_PEERCRED``): the peer
    process's ``uid``, ``gid`` and ``pid``, and ``user`` (the uid's login name, if any).

    >>> encode_event(RoundPaused(1, 2, "check", source="socket",
    ...                          operator=Operator(uid=1000, gid=1000, pid=42, user="ann")))
    b'{"operator":{"gid":1000,"pid":42,"uid":1000,"user":"ann"},"reason":"check","round":2,"shoe":1,"source":"socket","type":"round_paused"}'
    """

    uid: int
    gid: int
    pid: int
    user: str | None = None


class DomainEvent(msgspec.Struct, frozen=True, tag_field="type", gc=False):
    """Base of every domain event: the shoe it belongs to."""

    shoe: int

    @property
    def type(self) -> str:
        """The event's type tag (``"card_dealt"``, ...), as in its JSON form."""
        return self.__struct_config__.tag  # type: ignore[return-value]


class ShoeStarted(DomainEvent, frozen=True, tag="shoe_started"):
    """A freshly shuffled shoe was loaded."""

    decks: int


class BurnIndicator(DomainEvent, frozen=True, tag="burn_indicator"):
    """The first card of the shoe, turned: it says how many cards are burned next."""

    card: str
    burn_count: int
    #: ``manual`` (and the operator) when a supervisor entered the unreadable indicator
    source: Source | Unset = _UNSET
    operator: Operator | Unset = _UNSET


class CardBurned(DomainEvent, frozen=True, tag="card_burned"):
    """A card burned by the burn rule. ``card`` is None when it could not be read (a burn
    card's identity decides nothing, so the shoe does not stop for it)."""

    card: str | None
    reason: str = "burn"


class RoundStarted(DomainEvent, frozen=True, tag="round_started"):
    round: int


class CardDealt(DomainEvent, frozen=True, tag="card_dealt"):
    """A card went to a hand. ``position`` is 1-3 within the hand. A card a supervisor
    entered (the round waited for it after an unreadable read) has ``source: "manual"``
    and the ``operator``; read cards have neither field."""

    round: int
    hand: Hand
    position: int
    card: str
    orientation: Literal["up", "down"] | None = None
    source: Source | Unset = _UNSET
    operator: Operator | Unset = _UNSET


class DrawPrompt(DomainEvent, frozen=True, tag="draw_prompt"):
    """What the dealer must do next (from the fourth card on)."""

    round: int
    prompt: Literal["player_draws", "banker_draws", "stand"]


class InsuranceOffer(DomainEvent, frozen=True, tag="insurance_offer"):
    """An insurance bet offered at a reveal point (issue 8).

    ``side`` is the bet it protects; ``insures`` the event it pays on; ``stage`` the
    cards shown when offered (``"2/2"`` or ``"3/2"``: Player cards / Banker cards).
    """

    round: int
    offer: int
    side: Hand
    insures: Literal["player", "banker", "tie"]
    odds: float
    stage: str
    player_total: int | None
    banker_total: int | None


class InsuranceClosed(DomainEvent, frozen=True, tag="insurance_closed"):
    """Betting on the round's open insurance offers is over: the next card left the
    shoe, the next hand was revealed, the result was confirmed, or the round (or its
    insurance) was voided."""

    round: int
    offers: tuple[int, ...]
    reason: Literal["card", "reveal", "result", "void"]


class InsuranceVoided(DomainEvent, frozen=True, tag="insurance_voided"):
    """Every insurance bet of the round is void (refunded): e.g. the fourth or fifth card
    was exposed by mistake and insurance was bet because of it."""

    round: int
    reason: str


class HandRevealed(DomainEvent, frozen=True, tag="hand_revealed"):
    """The dealer revealed a hand's cards dealt so far (insurance reveal points)."""

    round: int
    hand: Hand
    cards: int


class InsuranceSettlement(msgspec.Struct, frozen=True):
    """One insurance offer's settlement inside ``round_result.insurance``."""

    offer: int
    side: Hand
    insures: Literal["player", "banker", "tie"]
    odds: float
    stage: str
    outcome: Literal["won", "lost", "void"]
    net: float


class RoundResult(DomainEvent, frozen=True, tag="round_result"):
    """A round is complete: its cards, totals, winner and the net result of every bet
    offered (per unit staked; a push is 0). The settlement is final when the result is
    confirmed (``result_confirmed``); a round voided before that never settles."""

    round: int
    player: tuple[str, ...]
    banker: tuple[str, ...]
    player_total: int
    banker_total: int
    winner: Literal["player", "banker", "tie"]
    natural: bool
    player_pair: bool
    banker_pair: bool
    settlement: dict[str, float]
    insurance: tuple[InsuranceSettlement, ...] = ()


class ResultConfirmed(DomainEvent, frozen=True, tag="result_confirmed"):
    """The result is confirmed: bets settle, and the round's cards may be released."""

    round: int


class CutCard(DomainEvent, frozen=True, tag="cut_card"):
    round: int | None
    when: Literal["mid_round", "between_rounds"]


class LastRound(DomainEvent, frozen=True, tag="last_round"):
    """``round`` will be the last of the shoe."""

    round: int


class ShoeEnded(DomainEvent, frozen=True, tag="shoe_ended"):
    """``reason``: cut_card (the last round finished) or new_shoe (replaced early)."""

    rounds: int
    reason: str


class Misdeal(DomainEvent, frozen=True, tag="misdeal"):
    """A card came out when none was due. ``kind``: extra_card (the round needed no more
    cards), no_round_open, after_shoe_end, card_while_paused. ``policy`` is the one that
    was applied: burn (discarded), void (the round was voided), carry (kept as the first
    card of the next round). ``card`` is None when it could not be read."""

    round: int | None
    kind: str
    card: str | None
    policy: Literal["burn", "void", "carry"]


class RoundPaused(DomainEvent, frozen=True, tag="round_paused"):
    """Play stopped; ``round`` is None when it stopped between rounds. A supervisor's
    pause says where it came from (``source``) and, from the control socket, who
    (``operator``); a pause the shoe made itself (a fault) has neither."""

    round: int | None
    reason: str
    source: Source | Unset = _UNSET
    operator: Operator | Unset = _UNSET


class RoundResumed(DomainEvent, frozen=True, tag="round_resumed"):
    """Play goes on; ``source``/``operator`` as on ``round_paused``."""

    round: int | None
    source: Source | Unset = _UNSET
    operator: Operator | Unset = _UNSET


class RoundVoided(DomainEvent, frozen=True, tag="round_voided"):
    """The round is cancelled: every bet on it is refunded; it never settles. A
    supervisor's void has ``source``/``operator`` as on ``round_paused``, ``key`` (the
    supervisor key was turned) and ``after_result: true`` when the result was already
    known (which needs the key)."""

    round: int
    reason: str
    source: Source | Unset = _UNSET
    operator: Operator | Unset = _UNSET
    key: bool | Unset = _UNSET
    after_result: bool | Unset = _UNSET


class IntegrityAlert(DomainEvent, frozen=True, tag="integrity_alert"):
    """Something about the cards is wrong or suspicious. ``kind`` is a short stable
    string: excess_card, foreign_card, duplicate_cut_card (the shoe machine); advantage,
    shuffle_runs, shuffle_order, shuffle_repeat, shuffle_weak, edge_sorting (the
    protection projection). ``evidence`` always has ``test``, ``statistic`` and
    ``threshold`` for the projection's kinds (docs/odds.md, docs/game.md)."""

    round: int | None
    kind: str
    evidence: dict[str, Any] = {}


class BetsOpen(DomainEvent, frozen=True, tag="bets_open"):
    """The bets offered on the coming round ``round``."""

    round: int
    bets: tuple[str, ...]


class Fault(DomainEvent, frozen=True, tag="fault"):
    """Something the table needs failed or went missing (``kind``: unreadable_card,
    missing_card, link_down, camera_lost, ...). A supervisor action the core refused
    (``input_refused``) carries its ``source``/``operator``."""

    round: int | None
    kind: str
    detail: str = ""
    source: Source | Unset = _UNSET
    operator: Operator | Unset = _UNSET


class ShoeAnalysis(DomainEvent, frozen=True, tag="shoe_analysis"):
    """Exact analysis of the remaining shoe after round ``round`` (the ODDS projection)."""

    round: int
    probabilities: dict[str, float]
    expected_value: dict[str, float]
    house_edge: dict[str, float]


Event = (
    ShoeStarted
    | BurnIndicator
    | CardBurned
    | RoundStarted
    | CardDealt
    | DrawPrompt
    | InsuranceOffer
    | InsuranceClosed
    | InsuranceVoided
    | HandRevealed
    | RoundResult
    | ResultConfirmed
    | CutCard
    | LastRound
    | ShoeEnded
    | Misdeal
    | RoundPaused
    | RoundResumed
    | RoundVoided
    | IntegrityAlert
    | BetsOpen
    | Fault
    | ShoeAnalysis
)

#: type tag -> event class
EVENT_TYPES: dict[str, type[DomainEvent]] = {
    cls.__struct_config__.tag: cls  # type: ignore[misc]
    for cls in Event.__args__  # type: ignore[attr-defined]
}

_encoder = msgspec.json.Encoder(order="sorted")
_decoder = msgspec.json.Decoder(Event)


class EventDecodeError(ValueError):
    """Bytes or a dict that are not a valid domain event."""


def encode_event(event: DomainEvent) -> bytes:
    """Canonical JSON of an event: sorted keys, no whitespace (hash- and sign-stable).

    >>> encode_event(RoundStarted(shoe=2, round=1))
    b'{"round":1,"shoe":2,"type":"round_started"}'
    """
    return _encoder.encode(event)


def event_to_dict(event: DomainEvent) -> dict[str, Any]:
    """Plain JSON-ready dict of an event, keys sorted, with its ``type``.

    >>> event_to_dict(ShoeStarted(shoe=1, decks=8))
    {'decks': 8, 'shoe': 1, 'type': 'shoe_started'}
    """
    return msgspec.to_builtins(event, order="sorted")


def decode_event(data: bytes | str | dict[str, Any]) -> Event:
    """An event back from its JSON (bytes/str) or dict form; EventDecodeError if invalid.

    >>> decode_event(b'{"type":"shoe_started","shoe":1,"decks":6}')
    ShoeStarted(shoe=1, decks=6)
    >>> decode_event({"type": "nope", "shoe": 1})
    Traceback (most recent call last):
    ...
    shoe_controller.game.events.EventDecodeError: Invalid value 'nope' - at `$.type`
    """
    try:
        if isinstance(data, dict):
            return msgspec.convert(data, Event)
        return _decoder.decode(data)
    except msgspec.ValidationError as exc:
        raise EventDecodeError(str(exc)) from None
    except msgspec.DecodeError as exc:
        raise EventDecodeError(str(exc)) from None

"""What the world tells the shoe: card reads, dealer buttons, supervisor actions, faults.

Every adapter (camera reader, firmware bridge, dealer buttons, replay parser) turns what
it sees into one of these immutable values and puts it on the daemon's input queue; the
game core decides what each means. None of them carries a clock reading: time is
stamped by the journal, outside the pure core.

>>> CardSeen(parse_card("QH"), orientation="down")
CardSeen(card=Card('QH'), orientation='down', source=None)
>>> NewShoe()
NewShoe()
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from shoe_controller.game.cards import Card, parse_card  # noqa: F401 (parse_card: doctests)
from shoe_controller.game.events import Operator

__all__ = [
    "CardSeen",
    "ConfirmResult",
    "CutCardSeen",
    "Fault",
    "ForeignCard",
    "Input",
    "ManualCard",
    "NewRound",
    "NewShoe",
    "Operator",
    "Orientation",
    "Pause",
    "Resume",
    "Reveal",
    "ShoeOpened",
    "UnreadableCard",
    "Void",
    "VoidInsurance",
]

#: Orientation of a card's index as the camera saw it: upright or upside down.
Orientation = Literal["up", "down"]
#: Where a supervisor input came from (the events say it again): the station's key
#: switch, one of its buttons, or the control socket. None: not an audited action
#: (replay text, the virtual table).
Source = Literal["key", "button", "socket"]


@dataclass(frozen=True, slots=True)
class CardSeen:
    """A card left the shoe and was read with confidence.

    ``source`` names the reader ("index", "barcode", "both", "replay"); informative only.
    """

    card: Card
    orientation: Orientation | None = None
    source: str | None = None

    def __post_init__(self) -> None:
        # checked here, at the adapter, so a bad value can never reach the journal
        if not isinstance(self.card, Card):
            raise TypeError(f"CardSeen.card must be a Card, got {self.card!r}")
        if self.orientation not in (None, "up", "down"):
            raise ValueError(f"orientation must be 'up', 'down' or None, got {self.orientation!r}")


@dataclass(frozen=True, slots=True)
class CutCardSeen:
    """The cut card passed the reader."""


@dataclass(frozen=True, slots=True)
class UnreadableCard:
    """Something left the shoe but could not be read with confidence. Never a guess."""

    reason: str = "unreadable"


@dataclass(frozen=True, slots=True)
class ForeignCard:
    """A read that is no card of a standard deck (a foreign barcode, an unknown glyph)."""

    payload: str


@dataclass(frozen=True, slots=True)
class ManualCard:
    """A supervisor enters the card that was unreadable, after checking it by eye.

    Only the card the round waits for after an unreadable read is accepted
    (:func:`shoe_controller.game.supervisor.refusal`); ``source``/``operator`` (who, from
    the control socket) go into the journaled ``card_dealt``.
    """

    card: Card
    source: Source | None = field(default=None, repr=False)
    operator: Operator | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if not isinstance(self.card, Card):
            raise TypeError(f"ManualCard.card must be a Card, got {self.card!r}")


@dataclass(frozen=True, slots=True)
class NewShoe:
    """A freshly shuffled shoe was loaded."""


@dataclass(frozen=True, slots=True)
class NewRound:
    """The dealer pressed "new round" (only meaningful when rounds open by button)."""


@dataclass(frozen=True, slots=True)
class ConfirmResult:
    """The dealer confirmed the round's result."""


@dataclass(frozen=True, slots=True)
class Reveal:
    """The dealer revealed a hand (insurance reveal points)."""

    side: Literal["player", "banker"]

    def __post_init__(self) -> None:
        if self.side not in ("player", "banker"):
            raise ValueError(f"Reveal.side must be 'player' or 'banker', got {self.side!r}")


@dataclass(frozen=True, slots=True)
class Pause:
    """Supervisor: stop the round."""

    reason: str = "supervisor"
    source: Source | None = field(default=None, repr=False)
    operator: Operator | None = field(default=None, repr=False)


@dataclass(frozen=True, slots=True)
class Resume:
    """Supervisor: resume the paused round."""

    source: Source | None = field(default=None, repr=False)
    operator: Operator | None = field(default=None, repr=False)


@dataclass(frozen=True, slots=True)
class Void:
    """Supervisor: cancel the round in progress; all its bets are refunded.

    ``key``: the supervisor key was turned when it was asked for; a round whose result
    is already known (awaiting the dealer's confirmation) is voided only with it.
    """

    reason: str = "supervisor"
    source: Source | None = field(default=None, repr=False)
    operator: Operator | None = field(default=None, repr=False)
    key: bool = field(default=False, repr=False)


@dataclass(frozen=True, slots=True)
class VoidInsurance:
    """Supervisor: void the insurance bets of the round in progress (the round stands),
    e.g. when the fourth or fifth card was exposed by mistake."""

    reason: str = "supervisor"


@dataclass(frozen=True, slots=True)
class Fault:
    """An adapter lost something it needs (serial link, camera, sensor): pause and alarm.

    ``kind`` is short and stable ("link_down", "camera_lost", "firmware_fault", ...).
    """

    kind: str
    detail: str = ""


@dataclass(frozen=True, slots=True)
class ShoeOpened:
    """The shoe's lid opened (``"lid_opened"``), or its presence sensor found it empty
    (``"shoe_empty"``). Loading and unloading between shoes, that is routine; during a
    shoe it is a fault: cards may have been added or taken out, or the shoe ran dry
    before the cut card came.

    >>> ShoeOpened("lid_opened")
    ShoeOpened(kind='lid_opened', detail='')
    """

    kind: Literal["lid_opened", "shoe_empty"]
    detail: str = ""


Input = (
    CardSeen
    | CutCardSeen
    | UnreadableCard
    | ForeignCard
    | ManualCard
    | NewShoe
    | NewRound
    | ConfirmResult
    | Reveal
    | Pause
    | Resume
    | Void
    | VoidInsurance
    | Fault
    | ShoeOpened
)

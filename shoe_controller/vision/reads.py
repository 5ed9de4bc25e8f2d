"""What the camera path says about one frame, and about one physical card pass.

A frame read is one of: a card (with orientation and confidence), the cut card, an
empty window, a rejection (something is there but cannot be read with confidence), or
a foreign code (a barcode that maps to no card). Rejections are never guesses.

>>> from shoe_controller.game.cards import parse_card
>>> FrameRead.of_card(parse_card("QH"), "up", 0.97).kind
'card'
>>> FrameRead.rejected("two index candidates disagree").reason
'two index candidates disagree'
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from shoe_controller.game.cards import Card
from shoe_controller.game.inputs import Orientation

FrameKind = Literal["card", "cut", "empty", "reject", "foreign"]


@dataclass(frozen=True, slots=True)
class FrameRead:
    """The verdict on one frame (or, from the pass tracker, on one card pass)."""

    kind: FrameKind
    card: Card | None = None
    orientation: Orientation | None = None
    confidence: float = 0.0
    reason: str = ""
    payload: str | None = None

    @staticmethod
    def of_card(card: Card, orientation: Orientation | None, confidence: float) -> FrameRead:
        return FrameRead("card", card, orientation, confidence)

    @staticmethod
    def cut(confidence: float = 1.0) -> FrameRead:
        return FrameRead("cut", confidence=confidence)

    @staticmethod
    def empty() -> FrameRead:
        return FrameRead("empty", confidence=1.0)

    @staticmethod
    def rejected(reason: str) -> FrameRead:
        return FrameRead("reject", reason=reason)

    @staticmethod
    def foreign(payload: str) -> FrameRead:
        return FrameRead("foreign", payload=payload, reason=f"code {payload!r} maps to no card")

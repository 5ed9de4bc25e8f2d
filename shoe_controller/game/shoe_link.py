"""The shoe link as the game's rules see it: may the supervisor resume now? Pure.

The daemon asks :func:`resume_refusal` before it lets a supervisor's ``resume`` reach
the shoe state: while the link to the shoe is down, or the shoe has not confirmed its
draw lock since the link came back, cards could leave the shoe unseen (or be replayed
later as ``card_while_paused`` burns), so the round stays paused and the supervisor is
told why.

>>> resume_refusal(ShoeLink(up=True, lock="engaged")) is None
True
>>> resume_refusal(ShoeLink(up=False, lock="unknown"))[:50]
'resume refused: the link to the shoe is down (card'
>>> resume_refusal(ShoeLink(up=True, lock="unknown"))[:60]
'resume refused: the shoe has not confirmed its draw lock sin'
>>> resume_refusal(None) is None  # no shoe link in this set-up (replay, camera only)
True
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["ShoeLink", "resume_refusal"]


@dataclass(frozen=True, slots=True)
class ShoeLink:
    """The link's state: ``up``, and the draw lock as last acknowledged by the shoe since
    the link came up (``unknown``: not yet, or not what was last asked; ``none``: the
    shoe has no lock)."""

    up: bool
    lock: Literal["engaged", "released", "unknown", "none"]


def resume_refusal(link: ShoeLink | None) -> str | None:
    """Why a resume must be refused now (one line for the supervisor), or None."""
    if link is None:
        return None
    if not link.up:
        return ("resume refused: the link to the shoe is down (cards dealt now would not be "
                "seen); wait for it to come back")
    if link.lock == "unknown":
        return ("resume refused: the shoe has not confirmed its draw lock since the link came "
                "back; try again in a moment")
    return None

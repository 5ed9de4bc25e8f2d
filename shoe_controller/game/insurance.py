"""Baccarat insurance (the Asian side game): the rule table as data, and which rows apply.

At fixed points of a round a bettor may insure a Banker (or Player) bet against the
other side winning (or a tie), at odds that depend on the cards shown. The points are
the first four cards (stage ``"2/2"``: two cards each) and Player's third card (stage
``"3/2"``); a Banker three-card stage never offers. "unrevealed" in a row means that
hand's cards are not shown yet (tables with reveal buttons reveal one hand, then the
other).

The default table is the Thai rule sheet of issue 8; ``[insurance] rows`` replaces it.

>>> cfg = InsuranceConfig(enabled=True)
>>> [(r.side, r.insures, r.odds) for r in applicable_rows(cfg, "2/2", None, 8)]
[('banker', 'player', 7.0)]
>>> [(r.side, r.insures, r.odds) for r in applicable_rows(cfg, "2/2", 6, 3)]
[('player', 'banker', 3.0)]
>>> [(r.side, r.insures, r.odds) for r in applicable_rows(cfg, "3/2", 0, 5)]
[('banker', 'tie', 8.0)]
"""

from __future__ import annotations

import re
from typing import Annotated, Final, Literal

import msgspec

__all__ = [
    "DEFAULT_ROWS",
    "InsuranceConfig",
    "InsuranceRow",
    "Stage",
    "applicable_rows",
    "score_spec",
]

Stage = Literal["2/2", "3/2"]
Side = Literal["banker", "player"]
Outcome = Literal["player", "banker", "tie"]

_SPEC: Final = re.compile(r"^\s*(?:(unrevealed)|([0-9])(?:\s*-\s*([0-9]))?)\s*$")


def score_spec(text: str) -> tuple[int, int] | None:
    """A row's score column: ``"unrevealed"`` -> None, ``"7"`` -> (7, 7), ``"0-3"`` ->
    (0, 3). ValueError for anything else.

    >>> score_spec("unrevealed"), score_spec("7"), score_spec("0-3")
    (None, (7, 7), (0, 3))
    """
    m = _SPEC.match(text.lower())
    if not m:
        raise ValueError(f"score {text!r}: expected 'unrevealed', a score 0-9 or a range like 0-3")
    if m.group(1):
        return None
    lo = int(m.group(2))
    hi = int(m.group(3)) if m.group(3) is not None else lo
    if hi < lo:
        raise ValueError(f"score {text!r}: the range runs backwards")
    return (lo, hi)


class InsuranceRow(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """One line of the insurance table."""

    #: The bet the insurance protects: "banker" or "player".
    side: Side
    #: "2/2" (after the first four cards) or "3/2" (after Player's third card).
    stage: Stage
    #: Player's score when offered: "unrevealed", a score "7", or a range "0-3".
    player: str
    #: Banker's score when offered, the same way.
    banker: str
    #: The event the insurance pays on: "player", "banker" (wins) or "tie".
    insures: Outcome
    #: Net win per unit when the insured event happens (a loss is -1).
    odds: Annotated[float, msgspec.Meta(gt=0, le=1000)]

    def __post_init__(self) -> None:
        p, b = score_spec(self.player), score_spec(self.banker)
        if self.stage == "3/2" and (p is None or b is None):
            raise ValueError("a 3/2 row needs both scores (both hands are shown by then)")
        if p is None and b is None:
            raise ValueError("a row cannot have both hands unrevealed")
        if self.insures == self.side:
            raise ValueError(f"a {self.side} insurance cannot insure a {self.side} win")

    def matches(self, stage: str, player_total: int | None, banker_total: int | None) -> bool:
        """Does this row apply at ``stage`` with these scores (None = unrevealed)?"""
        if stage != self.stage:
            return False
        for spec, total in ((score_spec(self.player), player_total),
                            (score_spec(self.banker), banker_total)):
            if spec is None:
                if total is not None:
                    return False
            elif total is None or not spec[0] <= total <= spec[1]:
                return False
        return True


def _row(side: str, stage: str, player: str, banker: str, insures: str, odds: float
         ) -> InsuranceRow:
    return InsuranceRow(side, stage, player, banker, insures, odds)  # type: ignore[arg-type]


#: The rule sheet of issue 8 (Banker insurance, then Player insurance).
DEFAULT_ROWS: Final[tuple[InsuranceRow, ...]] = (
    _row("banker", "2/2", "unrevealed", "7", "player", 2.0),
    _row("banker", "2/2", "unrevealed", "8", "player", 7.0),
    _row("banker", "2/2", "unrevealed", "9", "tie", 8.0),
    _row("banker", "2/2", "0-3", "4", "player", 1.5),
    _row("banker", "2/2", "0-4", "5", "player", 2.0),
    _row("banker", "2/2", "0-5", "6", "player", 3.0),
    _row("banker", "2/2", "0-5", "7", "player", 4.0),
    _row("banker", "3/2", "0", "1-6", "tie", 8.0),
    _row("banker", "3/2", "1", "2-6", "player", 7.0),
    _row("banker", "3/2", "2", "3-6", "player", 4.0),
    _row("banker", "3/2", "3", "4", "player", 2.0),
    _row("banker", "3/2", "4", "5", "player", 2.0),
    _row("player", "2/2", "7", "unrevealed", "banker", 2.0),
    _row("player", "2/2", "8", "unrevealed", "banker", 7.0),
    _row("player", "2/2", "9", "unrevealed", "tie", 10.0),
    _row("player", "2/2", "5", "4", "banker", 2.0),
    _row("player", "2/2", "6", "0-5", "banker", 3.0),
    _row("player", "2/2", "7", "0-5", "banker", 4.0),
    _row("player", "3/2", "4", "0-3", "banker", 1.5),
    _row("player", "3/2", "5", "0-4", "banker", 2.0),
    _row("player", "3/2", "6", "0-5", "banker", 3.0),
    _row("player", "3/2", "7", "0-6", "banker", 4.0),
    _row("player", "3/2", "8", "0-6", "banker", 8.0),
    _row("player", "3/2", "9", "0-6", "tie", 10.0),
)


class InsuranceConfig(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """``[insurance]``: the insurance side game (off unless enabled)."""

    #: Offer insurance at this table.
    enabled: bool = False
    #: auto: no reveal buttons; each card counts as shown when dealt, so the offers come
    #: after the fourth card and after Player's third card, while a card is still to
    #: come. button: the dealer's reveal buttons (REVEAL_P / REVEAL_B) are the reveal
    #: points; use it with [rules] confirm = "button" (the round stays open for reveals).
    reveal: Literal["auto", "button"] = "auto"
    #: The insurance table; default: the Thai rule sheet (issue 8).
    rows: tuple[InsuranceRow, ...] = DEFAULT_ROWS


def applicable_rows(
    cfg: InsuranceConfig, stage: str, player_total: int | None, banker_total: int | None
) -> list[InsuranceRow]:
    """Rows of the table that apply at ``stage`` with these scores (None: unrevealed), in
    table order.

    >>> cfg = InsuranceConfig()
    >>> [r.odds for r in applicable_rows(cfg, "3/2", 8, 2)]
    [8.0]
    >>> applicable_rows(cfg, "2/2", 9, 9)   # both shown, naturals: nothing to insure
    []
    """
    return [r for r in cfg.rows if r.matches(stage, player_total, banker_total)]

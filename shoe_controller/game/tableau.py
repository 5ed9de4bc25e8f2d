"""The baccarat tableau: hand totals, naturals, and the Player and Banker drawing rules.

Everything here works on card *values* (0-9), so it can be tabulated once and looked up
in the hot path. The rules are those of DESIGN.md (the standard Punto Banco tableau):

- a hand's score is the sum of its values mod 10;
- a natural is 8 or 9 on the first two cards of either hand; it ends the dealing;
- Player draws on 0-5 and stands on 6-7;
- if Player stood, Banker draws on 0-5; if Player drew a third card worth ``v``,
  Banker draws on 0-2, on 3 unless ``v`` is 8, on 4 if ``v`` is 2-7, on 5 if ``v`` is
  4-7, on 6 if ``v`` is 6-7, and stands on 7.

>>> hand_total([7, 9, 3])
9
>>> is_natural([4, 4]), is_natural([4, 4, 0])
(True, False)
>>> player_draws(5), player_draws(6)
(True, False)
>>> banker_draws(3, 8), banker_draws(3, 9), banker_draws(6, None)
(False, True, False)
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

__all__ = [
    "BANKER_DRAWS",
    "banker_draws",
    "coup",
    "hand_total",
    "is_natural",
    "player_draws",
]


def hand_total(values: Iterable[int]) -> int:
    """Score of a hand from its card values: the sum mod 10.

    >>> hand_total([0, 0]), hand_total([9, 9]), hand_total([1, 2, 3])
    (0, 8, 6)
    """
    return sum(values) % 10


def is_natural(values: list[int] | tuple[int, ...]) -> bool:
    """True when a hand is a natural: exactly two cards totalling 8 or 9.

    >>> is_natural((9, 0)), is_natural((5, 3)), is_natural((5, 2))
    (True, True, False)
    """
    return len(values) == 2 and (values[0] + values[1]) % 10 >= 8


def player_draws(player_total: int) -> bool:
    """Player draws a third card on 0-5 (call only when no natural was dealt).

    >>> [t for t in range(10) if player_draws(t)]
    [0, 1, 2, 3, 4, 5]
    """
    return player_total <= 5


#: BANKER_DRAWS[banker_total][k]: does Banker draw? k = Player's third-card value 0-9,
#: or k = 10 when Player stood (drew no third card).
BANKER_DRAWS: Final[tuple[tuple[bool, ...], ...]] = tuple(
    tuple(
        (
            b <= 5
            if k == 10
            else b <= 2
            or (b == 3 and k != 8)
            or (b == 4 and 2 <= k <= 7)
            or (b == 5 and 4 <= k <= 7)
            or (b == 6 and 6 <= k <= 7)
        )
        for k in range(11)
    )
    for b in range(10)
)


def banker_draws(banker_total: int, player_third: int | None) -> bool:
    """Does Banker draw, given its two-card total and Player's third card value?

    ``player_third`` is None when Player stood. Call only when no natural was dealt.

    >>> banker_draws(5, None), banker_draws(6, None)
    (True, False)
    >>> [v for v in range(10) if banker_draws(4, v)]
    [2, 3, 4, 5, 6, 7]
    >>> banker_draws(7, 0)
    False
    """
    return BANKER_DRAWS[banker_total][10 if player_third is None else player_third]


def coup(values: Iterable[int]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Deal one round from a sequence of card values; return (player, banker) values.

    Takes as many values as the tableau needs (4 to 6) and ignores the rest. This is
    the plain, readable statement of the rules; the round machine uses tables built
    from the same functions.

    >>> coup([7, 0, 9, 5, 3, 9])   # P 7+9=6 stands, B 0+5=5 draws
    ((7, 9), (0, 5, 3))
    >>> coup([4, 4, 4, 4, 9])      # both naturals: 8 and 8
    ((4, 4), (4, 4))
    """
    it = iter(values)
    p = [next(it)]
    b = [next(it)]
    p.append(next(it))
    b.append(next(it))
    pt, bt = hand_total(p), hand_total(b)
    if pt >= 8 or bt >= 8:
        return tuple(p), tuple(b)
    third: int | None = None
    if player_draws(pt):
        third = next(it)
        p.append(third)
    if banker_draws(bt, third):
        b.append(next(it))
    return tuple(p), tuple(b)

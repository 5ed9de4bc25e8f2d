"""Inventory: every card read counted against the shoe's composition.

The counts of the 52 distinct cards are packed into one Python int, 16 bits per card
(``count(c) = (packed >> 16 * c.index) & 0xFFFF``): an immutable value that is updated
with one addition, so the shoe state stays cheap to copy in the hot path.

A card seen more often than the decks hold is an ``excess_card`` (a foreign card with a
real face, a card from another shoe, or a misread); a read that is no card of a standard
deck is a ``foreign_card`` (decided by the reader, which reports it as such).

>>> from shoe_controller.game.cards import parse_card
>>> inv = EMPTY
>>> inv = add(inv, parse_card("AS"))
>>> inv = add(inv, parse_card("AS"))
>>> count(inv, parse_card("AS")), count(inv, parse_card("KD")), total(inv)
(2, 0, 2)
>>> is_excess(inv, parse_card("AS"), decks=1)
True
>>> remaining(inv, decks=1)[parse_card("AS").index], remaining(inv, decks=1)[1]
(-1, 1)
"""

from __future__ import annotations

from typing import Final

from shoe_controller.game.cards import ALL_CARDS, RANKS, Card

__all__ = [
    "EMPTY",
    "LANE_BITS",
    "SHIFT_BY_CODE",
    "add",
    "count",
    "counts",
    "is_excess",
    "remaining",
    "remaining_by_rank",
    "total",
]

#: Bits per card count in the packed int.
LANE_BITS: Final = 16
_MASK: Final = (1 << LANE_BITS) - 1
#: No card seen.
EMPTY: Final = 0
#: card code -> the increment for that card's lane (1 << 16 * index).
SHIFT_BY_CODE: Final[dict[str, int]] = {c.code: 1 << (LANE_BITS * c.index) for c in ALL_CARDS}


def add(packed: int, card: Card) -> int:
    """Counts with one more ``card`` seen."""
    return packed + (1 << (LANE_BITS * card.index))


def count(packed: int, card: Card) -> int:
    """How many times ``card`` was seen."""
    return (packed >> (LANE_BITS * card.index)) & _MASK


def counts(packed: int) -> tuple[int, ...]:
    """All 52 counts, indexed by ``Card.index``.

    >>> counts(EMPTY)[:3]
    (0, 0, 0)
    """
    return tuple((packed >> (LANE_BITS * i)) & _MASK for i in range(52))


def total(packed: int) -> int:
    """Cards seen in all."""
    return sum(counts(packed))


def is_excess(packed: int, card: Card, decks: int) -> bool:
    """True when ``card`` has been seen more often than ``decks`` decks hold."""
    return count(packed, card) > decks


def remaining(packed: int, decks: int) -> tuple[int, ...]:
    """Cards of each kind still in the shoe (indexed by ``Card.index``); negative where
    more were seen than the decks hold."""
    return tuple(decks - n for n in counts(packed))


def remaining_by_rank(packed: int, decks: int) -> tuple[int, ...]:
    """Cards of each rank still in the shoe, ranks 1 (ace) .. 13 (king) at index 0..12.

    >>> remaining_by_rank(EMPTY, 8)[:2]
    (32, 32)
    """
    rem = remaining(packed, decks)
    return tuple(sum(rem[c.index] for c in ALL_CARDS if c.rank == r) for r in RANKS)

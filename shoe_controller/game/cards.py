"""Playing cards: parse, format, rank, suit and baccarat value.

A card is an immutable, interned value: parsing the same text twice gives the same
object, so cards compare and hash cheaply inside the hot path of the shoe machine.

>>> card = parse_card("10s")
>>> card
Card('TS')
>>> card is parse_card("TS") is parse_card("ts")
True
>>> card.rank, card.suit, card.value
(10, 'S', 0)
>>> parse_card("AH").value, parse_card("9D").value, parse_card("KC").value
(1, 9, 0)
>>> str(parse_card("qh"))
'QH'
"""

from __future__ import annotations

from typing import Final

__all__ = [
    "ALL_CARDS",
    "RANKS",
    "RANK_CHARS",
    "SUITS",
    "Card",
    "CardParseError",
    "parse_card",
    "parse_cards",
    "rank_value",
]

#: Suits in bridge order (the order used for composition vectors and templates).
SUITS: Final = ("S", "H", "D", "C")
#: Ranks 1 (ace) .. 13 (king).
RANKS: Final = tuple(range(1, 14))
#: One-character rank names, indexed by rank - 1; the canonical card code uses these.
RANK_CHARS: Final = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "T", "J", "Q", "K")

_RANK_BY_TEXT: Final = {c: i + 1 for i, c in enumerate(RANK_CHARS)} | {"10": 10}


def rank_value(rank: int) -> int:
    """Baccarat value of a rank: ace 1, two to nine face value, ten and pictures 0.

    >>> [rank_value(r) for r in RANKS]
    [1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 0, 0, 0]
    """
    return rank if rank < 10 else 0


class CardParseError(ValueError):
    """Text that is not a card of a standard 52-card deck.

    >>> parse_card("1X")
    Traceback (most recent call last):
    ...
    shoe_controller.game.cards.CardParseError: '1X' is not a card: expected a rank ...
    """

    def __init__(self, text: str, reason: str | None = None) -> None:
        self.text = text
        super().__init__(
            f"{text!r} is not a card: "
            + (reason or "expected a rank (A 2-9 T 10 J Q K) followed by a suit (S H D C)")
        )


class Card:
    """One playing card. Use :func:`parse_card` or :data:`ALL_CARDS`; never build twice.

    Attributes are plain ints and strings so the game core stays fast:

    >>> c = parse_card("7D")
    >>> c.code, c.rank, c.suit, c.value, c.index
    ('7D', 7, 'D', 7, 32)
    """

    __slots__ = ("code", "index", "rank", "suit", "value")

    code: str
    rank: int
    suit: str
    value: int
    index: int

    def __init__(self, rank: int, suit: str) -> None:
        object.__setattr__(self, "rank", rank)
        object.__setattr__(self, "suit", suit)
        object.__setattr__(self, "value", rank_value(rank))
        object.__setattr__(self, "code", RANK_CHARS[rank - 1] + suit)
        # index: position in a sorted deck, suit-major (AS=0 .. KS=12, AH=13, .., KC=51)
        object.__setattr__(self, "index", SUITS.index(suit) * 13 + rank - 1)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("cards are immutable")

    def __repr__(self) -> str:
        return f"Card({self.code!r})"

    def __str__(self) -> str:
        return self.code

    def __reduce__(self) -> tuple[object, tuple[str]]:
        return (parse_card, (self.code,))

    def __lt__(self, other: Card) -> bool:
        return self.index < other.index


#: The 52 distinct cards, in sorted-deck order (``ALL_CARDS[c.index] is c``).
ALL_CARDS: Final[tuple[Card, ...]] = tuple(Card(r, s) for s in SUITS for r in RANKS)

_BY_TEXT: Final[dict[str, Card]] = {}
for _card in ALL_CARDS:
    for _rank_text in (RANK_CHARS[_card.rank - 1], "10") if _card.rank == 10 else (
        RANK_CHARS[_card.rank - 1],
    ):
        _BY_TEXT[_rank_text + _card.suit] = _card


def parse_card(text: str) -> Card:
    """Parse a card code: rank ``A 2-9 T 10 J Q K`` then suit ``S H D C``, any case.

    >>> parse_card("as"), parse_card("10H"), parse_card(" Kc ")
    (Card('AS'), Card('TH'), Card('KC'))
    >>> parse_card("ZZ")
    Traceback (most recent call last):
    ...
    shoe_controller.game.cards.CardParseError: 'ZZ' is not a card: expected a rank ...
    """
    card = _BY_TEXT.get(text.strip().upper())
    if card is None:
        raise CardParseError(text)
    return card


def parse_cards(text: str) -> list[Card]:
    """Parse whitespace-separated card codes.

    >>> parse_cards("AS kd 10h")
    [Card('AS'), Card('KD'), Card('TH')]
    """
    return [parse_card(t) for t in text.split()]

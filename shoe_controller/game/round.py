"""The round state machine: which hand the next card goes to, the dealer prompt, the end.

A round's progress depends only on the *values* of the cards dealt so far, and only
through a few facts (cards dealt, the two totals, Player's third card). Those facts are
numbered once, at import, into a small graph of nodes (a few hundred); dealing a card
is then one table lookup: ``node = NEXT[node * 10 + value]``. The shoe machine keeps
just the node number. The tables are built from :mod:`shoe_controller.game.tableau`.

>>> node = START
>>> due(node)
('player', 1)
>>> for v in (7, 0, 9, 5):          # P 7, B 0, P 9, B 5: Player 6 stands, Banker 5 draws
...     node = deal(node, v)
>>> due(node), prompt(node), is_complete(node)
(('banker', 3), 'banker_draws', False)
>>> node = deal(node, 3)
>>> due(node), prompt(node), is_complete(node)
(None, 'stand', True)
>>> outcome(node)
Outcome(player_total=6, banker_total=8, player_cards=2, banker_cards=3, winner='banker', \
player_natural=False, banker_natural=False)
>>> deal(node, 4)
Traceback (most recent call last):
...
shoe_controller.game.round.CardNotDue: the round is complete: no card is due
"""

from __future__ import annotations

from typing import Final, Literal, NamedTuple

from shoe_controller.game.tableau import banker_draws, player_draws

__all__ = [
    "BANKER",
    "COMPLETE",
    "DUE_HAND",
    "DUE_POSITION",
    "NEXT",
    "OUTCOME",
    "PLAYER",
    "PROMPT",
    "START",
    "CardNotDue",
    "Outcome",
    "Prompt",
    "deal",
    "due",
    "is_complete",
    "outcome",
    "prompt",
]

PLAYER: Final = "player"
BANKER: Final = "banker"
Prompt = Literal["player_draws", "banker_draws", "stand"]
Winner = Literal["player", "banker", "tie"]


class CardNotDue(Exception):
    """A card was dealt to a round that needs no more cards."""


class Outcome(NamedTuple):
    """What decides every bet of a finished round, apart from pairs (which need ranks)."""

    player_total: int
    banker_total: int
    player_cards: int
    banker_cards: int
    winner: Winner
    player_natural: bool
    banker_natural: bool


# A node's key: (player values so far, banker values so far) reduced to what matters:
# (player cards, banker cards, player total, banker total, player third value or -1).
_Key = tuple[int, int, int, int, int]


def _due(key: _Key) -> tuple[str, int] | None:
    """Which hand and position the next card goes to, or None when the round is over."""
    np_, nb, pt, bt, p3 = key
    if np_ + nb < 4:
        return (PLAYER, np_ + 1) if np_ == nb else (BANKER, nb + 1)
    if np_ == 2 and nb == 2:
        if pt >= 8 or bt >= 8:
            return None
        if player_draws(pt):
            return (PLAYER, 3)
        return (BANKER, 3) if banker_draws(bt, None) else None
    if np_ == 3 and nb == 2:
        return (BANKER, 3) if banker_draws(bt, p3) else None
    return None


def _prompt(key: _Key) -> str | None:
    """The dealer prompt shown once this node is reached (only from the fourth card)."""
    if key[0] + key[1] < 4:
        return None
    nxt = _due(key)
    return "stand" if nxt is None else f"{nxt[0]}_draws"


def _build() -> tuple[list[_Key], list[int]]:
    keys: list[_Key] = [(0, 0, 0, 0, -1)]
    index = {keys[0]: 0}
    nxt: list[int] = []
    i = 0
    while i < len(keys):
        key = keys[i]
        slot = _due(key)
        for v in range(10):
            if slot is None:
                nxt.append(-1)
                continue
            np_, nb, pt, bt, p3 = key
            if slot[0] == PLAYER:
                child = (np_ + 1, nb, (pt + v) % 10, bt, v if np_ == 2 else -1)
            else:
                child = (np_, nb + 1, pt, (bt + v) % 10, p3)
            if child not in index:
                index[child] = len(keys)
                keys.append(child)
            nxt.append(index[child])
        i += 1
    return keys, nxt


_KEYS, _NEXT = _build()

#: The node of a round before its first card.
START: Final = 0
#: NEXT[node * 10 + value] -> node after dealing a card of that value; -1 if none is due.
NEXT: Final[tuple[int, ...]] = tuple(_NEXT)
#: Per node: the hand the next card goes to ("player"/"banker") or None when complete.
DUE_HAND: Final[tuple[str | None, ...]] = tuple(
    (d[0] if (d := _due(k)) else None) for k in _KEYS
)
#: Per node: the position (1-3) of the next card in its hand, or 0 when complete.
DUE_POSITION: Final[tuple[int, ...]] = tuple((d[1] if (d := _due(k)) else 0) for k in _KEYS)
#: Per node: the prompt to show on reaching it (None before the fourth card).
PROMPT: Final[tuple[str | None, ...]] = tuple(_prompt(k) for k in _KEYS)
#: Per node: True when no more cards are due.
COMPLETE: Final[tuple[bool, ...]] = tuple(_due(k) is None for k in _KEYS)


def _outcome(key: _Key) -> Outcome | None:
    if _due(key) is not None:
        return None
    np_, nb, pt, bt, _p3 = key
    winner: Winner = "player" if pt > bt else "banker" if bt > pt else "tie"
    return Outcome(pt, bt, np_, nb, winner, np_ == 2 and pt >= 8, nb == 2 and bt >= 8)


#: Per node: the Outcome of a complete round, None for an incomplete one.
OUTCOME: Final[tuple[Outcome | None, ...]] = tuple(_outcome(k) for k in _KEYS)


def due(node: int) -> tuple[str, int] | None:
    """(hand, position) of the next card, or None when the round is complete.

    >>> due(START)
    ('player', 1)
    """
    hand = DUE_HAND[node]
    return None if hand is None else (hand, DUE_POSITION[node])


def deal(node: int, value: int) -> int:
    """The node after dealing a card of ``value`` (0-9); CardNotDue if none is due.

    >>> deal(deal(START, 9), 0) != START
    True
    """
    nxt = NEXT[node * 10 + value]
    if nxt < 0:
        raise CardNotDue("the round is complete: no card is due")
    return nxt


def prompt(node: int) -> str | None:
    """The dealer prompt on reaching ``node``: player_draws, banker_draws or stand.

    None before the fourth card (nothing to decide yet).

    >>> n = START
    >>> for v in (1, 1, 1, 1):
    ...     n = deal(n, v)
    >>> prompt(n)
    'player_draws'
    """
    return PROMPT[node]


def is_complete(node: int) -> bool:
    """True when the round needs no more cards.

    >>> is_complete(START)
    False
    """
    return COMPLETE[node]


def outcome(node: int) -> Outcome:
    """Totals, card counts, winner and naturals of a complete round.

    >>> n = START
    >>> for v in (4, 4, 4, 5):
    ...     n = deal(n, v)
    >>> outcome(n).winner, outcome(n).banker_natural
    ('banker', True)
    """
    result = OUTCOME[node]
    if result is None:
        raise CardNotDue("the round is not complete")
    return result

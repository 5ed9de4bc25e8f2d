"""Was this shoe shuffled? Tests on the order of the cards that left it.

Three independent tests, each with a threshold chosen for a per-shoe false-alarm rate
far below 1 in 10,000 fair shoes (rates stated here, measured by ``bench/integrity.py``):

``runs`` (alert kind ``shuffle_runs``)
    The longest run of consecutive cards each *in deck order* with the one before it
    (the same rank, or the same suit and a neighbouring rank, as in a new deck or a
    rank-sorted shoe), and the longest run of one suit. In a fair 8-deck shoe a card is
    in deck order with the previous one with probability about 0.11, the same suit about
    0.25, so ``P(run >= L) <= n p**(L-1)``: a 10-card order run has probability about
    1e-6 per shoe, a 16-card suit run about 4e-7. A shoe of new decks dealt unshuffled
    shows runs of 13.
``order`` (alert kind ``shuffle_order``)
    The adjacency test shuffler certification uses: how many adjacent pairs of cards
    were also neighbours in a reference order, against the exact mean and variance of
    that count for a random permutation of the same cards. References: deck order (as
    above) and, when known, the previous shoe's dealt order (the discards a shoe is
    rebuilt from). Alert at ``z >= 6``; the count is a sum of many weakly dependent rare
    events, nearly normal for a whole shoe, where 6 sigma is about 1e-9; the measured
    rate over many evaluations per shoe is what ``bench/integrity.py`` prints. One
    riffle of an ordered shoe leaves about half its neighbours: z of 20 or more.
``repeat`` (alert kind ``shuffle_repeat``)
    A card sequence seen in an earlier shoe: salted fingerprints of every 8-card window,
    compared with those of earlier shoes (kept in the daemon's database, never the cards
    in clear). Two fair shoes share a given 8-card window with probability about
    ``(1/52)**8 = 2e-14``; with 410 windows a shoe against 10,000 earlier shoes, at least
    one common window has probability about 3e-5 and two (the alert threshold) far less.
    A reused or only cut (not shuffled) shoe repeats nearly every window.

All functions are pure: sequences of card codes in, numbers out.

>>> seq = "AS 2S 3S 4S 5S 6S 7S 8S 9S TS JS QS KS".split()
>>> longest_order_run(seq), longest_suit_run(seq)
(13, 13)
"""

from __future__ import annotations

import hashlib
import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any, Final

from shoe_controller.game.cards import ALL_CARDS, parse_card

__all__ = [
    "DECK_ORDER",
    "AdjacencyTest",
    "FingerprintSet",
    "adjacency_test",
    "longest_order_run",
    "longest_suit_run",
    "neighbours_in",
    "window_fingerprints",
]

#: Length of the windows whose fingerprints are compared between shoes.
WINDOW: Final = 8

_RANK = {c.code: c.rank for c in ALL_CARDS}
_SUIT = {c.code: c.suit for c in ALL_CARDS}


def _in_deck_order(a: str, b: str) -> bool:
    ra, rb = _RANK[a], _RANK[b]
    return ra == rb or (_SUIT[a] == _SUIT[b] and abs(ra - rb) == 1)


#: code -> codes "in deck order" with it: the same rank, or same suit and rank +-1.
DECK_ORDER: Final[Mapping[str, frozenset[str]]] = {
    a.code: frozenset(b.code for b in ALL_CARDS if _in_deck_order(a.code, b.code))
    for a in ALL_CARDS
}


def _longest(seq: Sequence[str | None], related: object) -> int:
    best = run = 0
    prev: str | None = None
    for code in seq:
        if code is None:  # an unread card breaks every run
            run, prev = 0, None
            continue
        run = run + 1 if prev is not None and related(prev, code) else 1  # type: ignore[operator]
        best = max(best, run)
        prev = code
    return best


def longest_order_run(seq: Sequence[str | None]) -> int:
    """Longest run of cards each in deck order with the previous one.

    >>> longest_order_run(["7H", "7C", "8C", "9C", "QD", "QD"])
    4
    """
    return _longest(seq, lambda a, b: b in DECK_ORDER[a])


def longest_suit_run(seq: Sequence[str | None]) -> int:
    """Longest run of cards of one suit.

    >>> longest_suit_run(["7H", "KH", "2H", "9C", "QD"])
    3
    """
    return _longest(seq, lambda a, b: _SUIT[a] == _SUIT[b])


def neighbours_in(seq: Sequence[str | None]) -> dict[str, frozenset[str]]:
    """The neighbour relation of a reference order: codes adjacent anywhere in ``seq``.

    >>> sorted(neighbours_in(["AS", "KD", "AS"])["AS"])
    ['KD']
    """
    out: dict[str, set[str]] = {}
    for a, b in pairwise(seq):
        if a is None or b is None:
            continue
        out.setdefault(a, set()).add(b)
        out.setdefault(b, set()).add(a)
    return {k: frozenset(v) for k, v in out.items()}


@dataclass(frozen=True, slots=True)
class AdjacencyTest:
    """Adjacent pairs that are neighbours in the reference, against chance."""

    pairs: int  # adjacent pairs examined
    count: int  # of which neighbours in the reference
    mean: float  # expected count for a random order of the same cards
    sd: float

    @property
    def z(self) -> float:
        return (self.count - self.mean) / self.sd if self.sd > 0 else 0.0


def adjacency_test(
    seq: Sequence[str | None], neighbours: Mapping[str, frozenset[str]]
) -> AdjacencyTest:
    """Count adjacent neighbour pairs; exact mean and variance under a random order.

    The cards are treated as ``n`` distinct items in uniformly random order; items are
    related when their codes are neighbours (an item is never related to itself). With
    ``m`` related item pairs, degrees ``d``, ``L = n - 1`` adjacent positions and
    ``p = 2m / n(n-1)``: ``Var = L p(1-p) + 2(L-1)(q3 - p^2) + (L-1)(L-2)(q4 - p^2)``,
    where ``q3 = sum d(d-1) / n(n-1)(n-2)`` (two overlapping pairs) and
    ``q4 = (4m^2 - 4 sum d^2 + 4m) / n(n-1)(n-2)(n-3)`` (two disjoint pairs). Unread
    cards (``None``) are dropped.

    >>> t = adjacency_test("AS 2S 3S 4S 5S 6S 7S 8S 9S TS".split(), DECK_ORDER)
    >>> t.count, t.pairs, round(t.mean, 2), t.z > 3
    (9, 9, 1.8, True)
    """
    cards = [c for c in seq if c is not None]
    n = len(cards)
    pairs = max(n - 1, 0)
    count = sum(1 for a, b in pairwise(cards) if b in neighbours.get(a, ()))
    if n < 4:
        return AdjacencyTest(pairs, count, 0.0, 0.0)
    cnt = Counter(cards)
    deg = {
        a: sum(cnt[b] for b in neighbours.get(a, ())) - (a in neighbours.get(a, ()))
        for a in cnt
    }
    two_m = sum(cnt[a] * deg[a] for a in cnt)
    m = two_m / 2
    sum_d2 = sum(cnt[a] * deg[a] * deg[a] for a in cnt)
    sum_dd = sum_d2 - two_m  # sum of d(d-1)
    p = two_m / (n * (n - 1))
    q3 = sum_dd / (n * (n - 1) * (n - 2))
    q4 = (4 * m * m - 4 * sum_d2 + 4 * m) / (n * (n - 1) * (n - 2) * (n - 3))
    length = n - 1
    var = (
        length * p * (1 - p)
        + 2 * (length - 1) * (q3 - p * p)
        + (length - 1) * (length - 2) * (q4 - p * p)
    )
    return AdjacencyTest(pairs, count, length * p, math.sqrt(max(var, 0.0)))


# --------------------------------------------------------------------------------------
# Fingerprints of 8-card windows


def window_fingerprints(
    seq: Sequence[str | None], salt: bytes, start: int = 0
) -> list[int]:
    """Salted 64-bit fingerprints of every 8-card window of ``seq`` beginning at or
    after ``start`` (windows with an unread card are skipped). A keyed BLAKE2b: without
    the salt nobody can test a guessed card sequence against the stored fingerprints.

    >>> fp = window_fingerprints("AS 2S 3S 4S 5S 6S 7S 8S 9S".split(), b"k")
    >>> len(fp), fp == window_fingerprints("AS 2S 3S 4S 5S 6S 7S 8S 9S".split(), b"k")
    (2, True)
    >>> fp == window_fingerprints("AS 2S 3S 4S 5S 6S 7S 8S 9S".split(), b"other")
    False
    """
    out = []
    key = salt[:64]
    for i in range(start, len(seq) - WINDOW + 1):
        window = seq[i : i + WINDOW]
        if None in window:
            continue
        digest = hashlib.blake2b(
            " ".join(window).encode(), key=key, digest_size=8  # type: ignore[arg-type]
        ).digest()
        out.append(int.from_bytes(digest, "big"))
    return out


@dataclass(frozen=True, slots=True, eq=False)
class FingerprintSet:
    """Fingerprints of earlier shoes, each with its shoe number: two parallel numpy
    arrays sorted by fingerprint (16 bytes per window: 500 shoes of history ~3.3 MB on a
    Pi), searched by bisection, merged at C speed. Treat as immutable.

    >>> s = FingerprintSet.of([(5, 1), (1, 1), (3, 2)])
    >>> s.matches([3, 4, 5]), s.matches([3, 4, 5], exclude_shoe=2), len(s)
    (2, 1, 3)
    >>> s.union([7, 1], shoe=3).shoes_of(1)
    (1, 3)
    >>> len(s.union([7], shoe=3, keep_shoes=1)), s.union([7], shoe=3, keep_shoes=2).shoes_of(3)
    (1, (2,))
    """

    fps: Any = None  # np.ndarray[uint64], sorted
    shoes: Any = None  # np.ndarray[int64], parallel

    def __post_init__(self) -> None:
        import numpy as np

        if self.fps is None:
            object.__setattr__(self, "fps", np.zeros(0, dtype=np.uint64))
            object.__setattr__(self, "shoes", np.zeros(0, dtype=np.int64))

    @classmethod
    def of(cls, entries: Iterable[tuple[int, int]]) -> FingerprintSet:
        import numpy as np

        pairs = sorted(set(entries))
        return cls._sorted(
            np.array([p[0] for p in pairs], dtype=np.uint64),
            np.array([p[1] for p in pairs], dtype=np.int64),
        )

    @classmethod
    def _sorted(cls, fps: Any, shoes: Any) -> FingerprintSet:
        import numpy as np

        order = np.lexsort((shoes, fps))
        fps, shoes = fps[order], shoes[order]
        keep = np.ones(len(fps), dtype=bool)  # drop duplicate (fingerprint, shoe) pairs
        keep[1:] = (fps[1:] != fps[:-1]) | (shoes[1:] != shoes[:-1])
        return cls(fps[keep], shoes[keep])

    def __len__(self) -> int:
        return len(self.fps)

    def shoes_of(self, fp: int) -> tuple[int, ...]:
        """Shoes in which the window with fingerprint ``fp`` was seen."""
        import numpy as np

        key = np.uint64(fp)
        i = int(np.searchsorted(self.fps, key, side="left"))
        j = int(np.searchsorted(self.fps, key, side="right"))
        return tuple(int(s) for s in self.shoes[i:j])

    def matches(self, fps: Iterable[int], exclude_shoe: int | None = None) -> int:
        """How many of ``fps`` were seen in a shoe other than ``exclude_shoe``."""
        return sum(1 for fp in fps if any(s != exclude_shoe for s in self.shoes_of(fp)))

    def union(
        self, fps: Iterable[int], shoe: int, keep_shoes: int | None = None
    ) -> FingerprintSet:
        """Add ``shoe``'s fingerprints; with ``keep_shoes``, keep only the shoes numbered
        within ``keep_shoes`` of it (bounded memory on a long-running table)."""
        import numpy as np

        new = np.array(list(fps), dtype=np.uint64)
        all_fps = np.concatenate([self.fps, new])
        all_shoes = np.concatenate([self.shoes, np.full(len(new), shoe, dtype=np.int64)])
        if keep_shoes is not None:
            recent = all_shoes > shoe - keep_shoes
            all_fps, all_shoes = all_fps[recent], all_shoes[recent]
        return FingerprintSet._sorted(all_fps, all_shoes)


def codes(text: str) -> list[str]:
    """Canonical codes of whitespace-separated cards (a convenience for tests/tools).

    >>> codes("10s qh")
    ['TS', 'QH']
    """
    return [parse_card(t).code for t in text.split()]

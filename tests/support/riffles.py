"""The tests' own model of a weak shuffle, written from the literature and not from the
code under test or bench/integrity.py: Bayer and Diaconis's ``a``-shuffle (``log2 a``
Gilbert-Shannon-Reeds riffles: the deck cut into ``a`` packets by a multinomial draw,
the packets dealt from in a uniformly random sequence of labels), a strip of 5-15-card
packets and a cut."""

from __future__ import annotations

import random
from typing import TypeVar

T = TypeVar("T")


def a_shuffle(cards: list[T], a: int, rng: random.Random) -> list[T]:
    """An ``a``-shuffle: labels for the new positions uniformly at random; the old deck is
    cut into packets of the label counts, in order; each new position takes the next card
    of its label's packet."""
    labels = [rng.randrange(a) for _ in cards]
    sizes = [labels.count(j) for j in range(a)]
    starts = [sum(sizes[:j]) for j in range(a)]
    out: list[T] = []
    for j in labels:
        out.append(cards[starts[j]])
        starts[j] += 1
    return out


def riffles(cards: list[T], k: int, rng: random.Random) -> list[T]:
    """``k`` riffles at once: a ``2**k``-shuffle."""
    return a_shuffle(cards, 2 ** k, rng)


def strip(cards: list[T], rng: random.Random) -> list[T]:
    """Packets of 5 to 15 cards run off the top onto a pile: the packets' order reverses."""
    packets, i = [], 0
    while i < len(cards):
        k = rng.randint(5, 15)
        packets.append(cards[i : i + k])
        i += k
    return [c for p in reversed(packets) for c in p]


def cut(cards: list[T], rng: random.Random) -> list[T]:
    """A cut somewhere in the middle half."""
    k = rng.randrange(len(cards) // 4, 3 * len(cards) // 4)
    return cards[k:] + cards[:k]

"""The strip filter (``shuffle_tracking._StripThreads``, issue 18): a fair bet card by
card, forward fronts that live only as long as a strip packet, and a riffled and stripped
shoe followed better than by the plain thread filter's windows. The shuffles come from
this file's own riffle and strip models, not the code under test's or the bench's."""

from __future__ import annotations

import random

import numpy as np

from shoe_controller.game.cards import ALL_CARDS
from shoe_controller.game.shuffle_tracking import _INDEX, ShuffleTest, _StripThreads, _Threads

DECKS = 8


def shoe(seed: int) -> list[str]:
    cards = [c.code for c in ALL_CARDS for _ in range(DECKS)]
    random.Random(seed).shuffle(cards)
    return cards


def riffles(cards: list[str], k: int, rng: random.Random) -> list[str]:
    """``k`` riffles at once (Bayer-Diaconis: a ``2**k``-shuffle): each new position takes a
    label; the old deck cut into packets of the label counts, each dealt in order."""
    a = 2 ** k
    labels = [rng.randrange(a) for _ in cards]
    starts, at = [], 0
    for j in range(a):
        starts.append(at)
        at += labels.count(j)
    out = []
    for j in labels:
        out.append(cards[starts[j]])
        starts[j] += 1
    return out


def strip(cards: list[str], rng: random.Random) -> list[str]:
    """Packets of 5 to 15 cards run off the top onto a pile: the packets' order reverses."""
    packets, i = [], 0
    while i < len(cards):
        k = rng.randint(5, 15)
        packets.append(cards[i : i + k])
        i += k
    return [c for p in reversed(packets) for c in p]


def fed(flt, seen: list[str], decks: int, total: int):
    """``flt`` after predicting and placing ``seen`` (each at its code's fair chance)."""
    count = [0] * 52
    for i, code in enumerate(seen):
        c = _INDEX[code]
        flt.predict(c, (decks - count[c]) / (total - i))
        flt.place(c)
        count[c] += 1
    return flt, count


def test_the_strip_filter_is_a_fair_bet_card_by_card() -> None:
    # every component's factor has mean 1 under a fair shuffle (brute force over the codes
    # left), in a stripped shoe where all its fronts are in use
    old = shoe(31)
    rng = random.Random(32)
    new = strip(riffles(old, 4, rng), rng)
    flt, count = fed(_StripThreads([_INDEX[c] for c in old[:400]], DECKS), new[:120], DECKS, 416)
    assert flt.fwd.sum() > 0 and flt.back.sum() > 0
    rest = 416 - 120
    total = np.zeros_like(flt.logm)
    for c in range(52):
        if count[c] < DECKS:
            t = flt.copy()
            before = t.logm.copy()
            t.predict(c, (DECKS - count[c]) / rest)
            total += (DECKS - count[c]) / rest * np.exp(t.logm - before)
    assert np.allclose(total, 1.0, rtol=1e-9)
    assert not np.allclose(flt.copy().logm, 0.0)


def test_a_forward_front_lives_about_one_strip_packet() -> None:
    # one deck in new-deck order: AS's old successor is 2S. Right after AS, 2S continues
    # the thread forward (a strip packet); 40 cards later (other suits, far from both) the
    # forward front is gone and 2S is worth much less
    old = [c.code for c in ALL_CARDS]
    far = [c for c in old if c[1] in "DC"][:40]
    right_after, _ = fed(_StripThreads([_INDEX[c] for c in old], 1), ["AS", "2S"], 1, 52)
    later, _ = fed(_StripThreads([_INDEX[c] for c in old], 1), ["AS", *far, "2S"], 1, 52)
    before, _ = fed(_StripThreads([_INDEX[c] for c in old], 1), ["AS", *far], 1, 52)
    gain_now = right_after.logm.max() - fed(
        _StripThreads([_INDEX[c] for c in old], 1), ["AS"], 1, 52)[0].logm.max()
    gain_later = later.logm.max() - before.logm.max()
    assert gain_now > 1.0, gain_now
    assert gain_later < gain_now / 3, (gain_now, gain_later)


def test_a_riffled_and_stripped_shoe_is_followed_better_than_by_the_plain_windows() -> None:
    # four and five riffles, a strip and a cut: the strip filter's best component is above
    # the plain thread filter's best in most shoes; without the strip it need not be
    wins, margins = 0, []
    for seed in range(8):
        rng = random.Random(100 + seed)
        old = shoe(200 + seed)
        new = strip(riffles(old, 4 + seed % 2, rng), rng)
        k = rng.randrange(104, 312)
        new = (new[k:] + new[:k])[:380]
        test = ShuffleTest.start(old[:400], DECKS).feed(new)
        plain = max(v for t in test._trackers if isinstance(t, _Threads) for v in t.values)
        stripped = max(v for t in test._trackers if isinstance(t, _StripThreads)
                       for v in t.values)
        wins += stripped > plain
        margins.append(stripped - plain)
    assert wins >= 6, margins
    assert sorted(margins)[4] > 2, margins  # median gain above e**2

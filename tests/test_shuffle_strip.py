"""The strip filter (``shuffle_tracking._StripThreads``, issue 18): a fair bet card by
card, forward fronts that live only as long as a strip packet, and a riffled and stripped
shoe followed better than by the plain thread filter's windows. The shuffles come from
the tests' own riffle and strip models (tests/support/riffles.py), not the code under
test's or the bench's."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from shoe_controller.game.cards import ALL_CARDS
from shoe_controller.game.shuffle_tracking import _INDEX, ShuffleTest, _StripThreads, _Threads
from tests.support.riffles import riffles, strip

DECKS = 8


def shoe(seed: int) -> list[str]:
    cards = [c.code for c in ALL_CARDS for _ in range(DECKS)]
    random.Random(seed).shuffle(cards)
    return cards


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


# -- the strip filter against a plainly written filter of its docstring (issue 15) --------
# Figures from _StripThreads' docstring and comments, written out here.
STRIP_PACKETS = (16, 24, 32)
FORWARD = 0.5
PACKET_CARDS = 10.0
BACK = (0.7, 0.25, 0.05)
STRIP_LAMS = (0.3, 0.6, 0.9)
STRIP_PATIENCE = 3.0


class RefStrip:
    """One strip component (``a`` packets), walked front by front: a backward and a
    forward live mass and a dealt probability for every old position, one log-martingale
    per lambda. ``ref``: the old codes (-1: not read)."""

    def __init__(self, ref: list[int], a: int, decks: int) -> None:
        self.ref, self.a, self.decks = ref, a, decks
        self.back = [0.0] * len(ref)
        self.fwd = [0.0] * len(ref)
        self.dealt = [0.0] * len(ref)
        self.logm = [0.0] * len(STRIP_LAMS)
        self.seen = [0] * 52
        self.pending: tuple[int, list[float], float, float] | None = None

    def inside(self, r: int) -> bool:  # an old position holding a read card
        return 0 <= r < len(self.ref) and self.ref[r] >= 0

    def after(self, q: int) -> list[tuple[int, float]]:  # forward: the next old card
        return [(q + 1, 1.0)]

    def before(self, q: int) -> list[tuple[int, float]]:  # backward: 1-3 cards before
        return [(q - d, w) for d, w in enumerate(BACK, start=1)]

    def predict(self, c: int, p0: float) -> None:
        # P1(c) = live(copies of c) / a + (1 - live total / a) P0(c), the live mass
        # scaled down to a when larger
        mass = sum(self.back) + sum(self.fwd)
        per_front = (min(1.0, self.a / mass) if mass > 0 else 1.0) / self.a
        picks = [(self.back[q] + self.fwd[q]) * per_front
                 for q, x in enumerate(self.ref) if x == c]
        start = min(max(1.0 - mass * per_front, 0.0), 1.0) * p0
        p1 = sum(picks) + start
        for i, lam in enumerate(STRIP_LAMS):
            self.logm[i] += math.log(lam * p1 / p0 + (1.0 - lam))
        self.pending = (c, picks, start, p1)

    def place(self, c: int) -> None:
        pending, self.pending = self.pending, None
        self.seen[c] += 1
        # a backward front not chosen loses 1 / (PATIENCE a); a forward one lives about
        # one strip packet
        rho = 1.0 - 1.0 / (STRIP_PATIENCE * self.a)
        self.back = [x * rho for x in self.back]
        self.fwd = [x * (1.0 - 1.0 / PACKET_CARDS) for x in self.fwd]
        cps = [q for q, x in enumerate(self.ref) if x == c]
        if pending is None or pending[0] != c or not cps:
            return
        _, picks, start, p1 = pending
        free = [1.0 - self.dealt[q] for q in cps]
        total_free = sum(free)
        shares = [(pick + start * (f / total_free if total_free > 0 else 0.0)) / p1
                  for pick, f in zip(picks, free, strict=True)]
        for q, f, s in zip(cps, free, shares, strict=True):
            used = s / f if f > 0 else (math.inf if s > 0 else 0.0)
            kept = 1.0 - min(max(used, 0.0), 1.0)
            self.back[q] *= kept
            self.fwd[q] *= kept
            self.dealt[q] = min(self.dealt[q] + s, 1.0)
        add_b = [0.0] * len(self.ref)
        add_f = [0.0] * len(self.ref)
        for q, s in zip(cps, shares, strict=True):
            # the forward front at the old successor takes FORWARD of the share (times
            # how likely that successor is still in the shoe), all of that when nothing
            # before the card is left; the rest opens backward fronts 1-3 positions
            # before, weighted by BACK and by how likely each is still in the shoe
            room_f = [(r, w * (1.0 - self.dealt[r])) for r, w in self.after(q)
                      if self.inside(r)]
            room_b = [(r, w * (1.0 - self.dealt[r])) for r, w in self.before(q)
                      if self.inside(r)]
            norm_b = sum(x for _, x in room_b)
            part = FORWARD if norm_b > 0 else 1.0
            to_fwd = part * sum(x for _, x in room_f)
            for r, x in room_f:
                add_f[r] += s * part * x
            for r, x in room_b if norm_b > 0 else ():
                add_b[r] += s * (1.0 - to_fwd) * x / norm_b
        for r in range(len(self.ref)):  # backward fronts first, then forward, each into
            room = min(max(1.0 - self.back[r] - self.fwd[r], 0.0), 1.0)  # the room left
            self.back[r] += room * min(add_b[r], 1.0)
            room = min(max(1.0 - self.back[r] - self.fwd[r], 0.0), 1.0)
            self.fwd[r] += room * min(add_f[r], 1.0)
        if self.seen[c] >= self.decks:  # no card of this code left: no front there
            for q in cps:
                self.back[q], self.fwd[q], self.dealt[q] = 0.0, 0.0, 1.0


def strip_cases() -> list[tuple[str, list, list, int]]:
    from tests.test_shuffle_tracking_mutants import cases

    rng = random.Random(41)
    old = shoe(41)
    stripped = strip(riffles(old, 4, rng), rng)
    return [*cases(), ("8 decks, 4 riffles and a strip", old, stripped[:150], DECKS)]


@pytest.mark.parametrize("name,reference,new,decks", strip_cases(),
                         ids=[c[0] for c in strip_cases()])
def test_the_strip_filter_is_its_docstring_card_by_card(name, reference, new, decks) -> None:
    from tests.test_shuffle_tracking_mutants import deal_through

    ref = [_INDEX[x] if x is not None else -1 for x in reference]
    comps = [RefStrip(ref, a, decks) for a in STRIP_PACKETS]
    want = ([v for comp in comps for v in comp.logm] for _ in deal_through(comps, new, decks))
    test = ShuffleTest.start(reference, decks)
    for end, expected in enumerate(want):
        if end:
            test = test.feed(new[end - 1 : end])
        (flt,) = [t for t in test._trackers if isinstance(t, _StripThreads)]
        got = flt.values
        assert len(got) == len(expected) == len(STRIP_PACKETS) * len(STRIP_LAMS)
        for i, (g, w) in enumerate(zip(got, expected, strict=True)):
            assert math.isclose(g, w, rel_tol=1e-9, abs_tol=1e-9), (name, end, i, g, w)


def test_the_strip_filters_documented_figures() -> None:
    assert (_StripThreads.PACKETS, _StripThreads.FORWARD, _StripThreads.PACKET_CARDS,
            _StripThreads.BACK, _StripThreads.LAMS, _StripThreads.PATIENCE) == (
        STRIP_PACKETS, FORWARD, PACKET_CARDS, BACK, STRIP_LAMS, STRIP_PATIENCE)


def test_the_whole_mixture_with_its_strip_weight_is_a_fair_bet() -> None:
    # the test's statistic mixes its components with more prior weight on the strip
    # filters (STRIP_WEIGHT): E[exp(statistic) after the next card] must still be
    # exp(statistic now) (brute force over the codes left), and a new test starts at 0
    old = shoe(41)
    rng = random.Random(42)
    new = strip(riffles(old, 5, rng), rng)
    assert ShuffleTest.start(old, DECKS).statistic == 0.0
    for seen in (new[:30], new[:150]):
        test = ShuffleTest.start(old, DECKS).feed(seen)
        left = {c.code: DECKS - seen.count(c.code) for c in ALL_CARDS}
        rest = sum(left.values())
        expected = sum(n / rest * math.exp(test.feed([code]).statistic)
                       for code, n in left.items() if n)
        assert math.isclose(expected, math.exp(test.statistic), rel_tol=1e-9)
        assert test.statistic != 0.0

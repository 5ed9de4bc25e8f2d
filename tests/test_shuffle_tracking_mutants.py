"""The thread filter (``_Threads`` in shuffle_tracking.py) against a second, plainly
written filter of its own docstring (issue 15's campaign).

The mutation campaign runs shuffle_tracking's mutants without the 150 fair shoes of
``test_fair_shoes_stay_below_villes_bound`` (60% of a survivor's cost); those shoes were
what told a broken thread filter apart. This test does it exactly, on short shoes: every
component's log-martingale after every card must equal the reference's.

The reference follows the docstring with none of the code's economies: the live mass of
each front is stored as it is (no lazy ``scaled * g``), decays by ``1 / (PATIENCE a)`` each
card, each component is its own loop, and the copies of a card's code and the fronts its
copies open are walked one by one. The figures (packets, windows, mixture weights,
patience) are the documented ones, written out here.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterator

import pytest

from shoe_controller.game.cards import ALL_CARDS
from shoe_controller.game.shuffle_tracking import (
    ShuffleTest,
    _Recent,
    _StripThreads,
    _Threads,
    _Tracker,
    new_deck_order,
)

CODES = [c.code for c in ALL_CARDS]
INDEX = {c: i for i, c in enumerate(CODES)}
#: packets a (threads of 4 to about 5.6 riffles), neighbour windows (side, weight by
#: distance), the mixtures' lambda, the patience: _Threads' docstring and comments
PACKETS = (16, 24, 32, 48)
WINDOWS = (("forward", (1.0,)), ("backward", (1.0,)),
           ("forward", (0.5, 0.4, 0.1)), ("backward", (0.5, 0.4, 0.1)))
LAMS = (0.3, 0.6, 0.9)
PATIENCE = 1.5


class RefComponent:
    """One component (a packets, one window): a front's live mass and a position's dealt
    probability for every old position, and one log-martingale per lambda."""

    def __init__(self, ref: list[int], a: int, side: str, weights: tuple[float, ...],
                 decks: int) -> None:
        self.ref, self.a, self.decks = ref, a, decks
        # old position q opens a front at q + d with weight w(d): after it (forward),
        # before it (backward), up to len(weights) positions away
        self.opens = [(d if side == "forward" else -d, w)
                      for d, w in enumerate(weights, start=1)]
        self.live = [0.0] * len(ref)
        self.dealt = [0.0] * len(ref)
        self.logm = [0.0] * len(LAMS)
        self.seen = [0] * 52
        self.pending: tuple[int, list[float], float, float] | None = None

    def fronts(self, q: int) -> list[tuple[int, float]]:
        """The old positions a card placed at ``q`` opens fronts at, with their weight."""
        return [(q + d, w) for d, w in self.opens]

    def copies(self, c: int) -> list[int]:
        return [q for q, x in enumerate(self.ref) if x == c]  # old positions of code c

    def predict(self, c: int, p0: float) -> None:
        # each live front is picked with probability 1/a (all of them scaled down to a
        # if their mass exceeds a); what is left starts a thread anywhere (P0)
        mass = sum(self.live)
        per_front = (1.0 / self.a) * (min(1.0, self.a / mass) if mass > 0 else 1.0)
        picks = [self.live[q] * per_front for q in self.copies(c)]
        start = min(max(1.0 - mass * per_front, 0.0), 1.0) * p0
        p1 = sum(picks) + start
        for i, lam in enumerate(LAMS):
            self.logm[i] += math.log(lam * p1 / p0 + (1.0 - lam))
        self.pending = (c, picks, start, p1)

    def place(self, c: int) -> None:
        pending, self.pending = self.pending, None
        self.seen[c] += 1
        rho = 1.0 - 1.0 / (PATIENCE * self.a)
        self.live = [x * rho for x in self.live]  # every front loses 1/(PATIENCE a)
        cps = self.copies(c)
        if pending is None or pending[0] != c or not cps:
            return
        _, picks, start, p1 = pending
        free = [1.0 - self.dealt[q] for q in cps]
        total_free = sum(free)
        # the card's share at each copy: a front there explained it, or a start spread
        # over the undealt copies
        inv = 1.0 / p1
        shares = [pick * inv + (start * inv) * (f / total_free if total_free > 0 else 0.0)
                  for pick, f in zip(picks, free, strict=True)]
        for q, f, s in zip(cps, free, shares, strict=True):
            used = s / f if f > 0 else (math.inf if s > 0 else 0.0)
            self.live[q] *= min(max(1.0 - used, 0.0), 1.0)
            self.dealt[q] = min(self.dealt[q] + s, 1.0)
        add = [0.0] * len(self.ref)
        for q, s in zip(cps, shares, strict=True):
            # fronts open at the old neighbours, weighted by the window and by how
            # likely each one is still in the shoe; unread neighbours open nothing
            room = [(r, w * (1.0 - self.dealt[r])) for r, w in self.fronts(q)
                    if 0 <= r < len(self.ref) and self.ref[r] >= 0]
            norm = sum(x for _, x in room)
            for r, x in room:
                if norm > 0:
                    add[r] += s * x / norm
        for r, x in enumerate(add):
            x = min(x, 1.0)
            self.live[r] += (1.0 - self.live[r]) * x
        if self.seen[c] >= self.decks:  # no card of this code left: no front there
            for q in cps:
                self.live[q], self.dealt[q] = 0.0, 1.0


def reference_values(reference: list[str | None], new: list[str | None],
                     decks: int) -> Iterator[list[float]]:
    """Every component's log-martingale (packets outer, window, lambda inner) before
    the first card and after each card of ``new``, P0 as the module docstring defines
    it."""
    ref = [INDEX[x] if x is not None else -1 for x in reference]
    comps = [RefComponent(ref, a, side, w, decks) for a in PACKETS for side, w in WINDOWS]
    for _ in deal_through(comps, new, decks):
        yield [v for comp in comps for v in comp.logm]


def deal_through(parts: list, new: list[str | None], decks: int) -> Iterator[None]:
    """Deal ``new`` through reference parts (each with ``predict(c, p0)`` and
    ``place(c)``), yielding before the first card and after each one: P0 is the share of
    the card's code among the cards left (the module docstring's definition); an unread
    card counts for nothing."""
    seen = [0] * 52
    n = 0
    yield None
    for x in new:
        if x is not None:
            c = INDEX[x]
            if decks - seen[c] > 0 and 52 * decks - n > 0:
                p0 = (decks - seen[c]) / (52 * decks - n)
                for part in parts:
                    part.predict(c, p0)
            for part in parts:
                part.place(c)
            seen[c] += 1
            n += 1
        yield None


def filter_values(reference: list[str | None], new: list[str | None],
                  decks: int) -> Iterator[list[float]]:
    """The same, from the thread filter of ShuffleTest, fed a card at a time."""
    test = ShuffleTest.start(reference, decks)
    for i in range(len(new) + 1):
        if i:
            test = test.feed(new[i - 1 : i])
        (threads,) = [t for t in test._trackers if isinstance(t, _Threads)]
        yield threads.values


def a_shuffle(cards: list, a: int, rng: random.Random) -> list:
    """Bayer-Diaconis a-shuffle (as in test_integrity_shuffle_weak.py)."""
    labels = [rng.randrange(a) for _ in cards]
    starts = [sum(labels.count(j) for j in range(i)) for i in range(a)]
    out = []
    for j in labels:
        out.append(cards[starts[j]])
        starts[j] += 1
    return out


def shoe(decks: int, seed: int) -> list[str]:
    cards = [c for c in CODES for _ in range(decks)]
    random.Random(seed).shuffle(cards)
    return cards


def cases() -> list[tuple[str, list, list, int]]:
    rng = random.Random(7)
    old2 = shoe(2, 1)
    weak2 = a_shuffle(old2, 4, rng)  # 2 riffles: long threads, fronts used up
    stripped = list(reversed(a_shuffle(old2, 8, rng)))  # threads run backwards
    fair2 = shoe(2, 2)
    old8 = shoe(8, 3)
    weak8 = a_shuffle(old8, 16, rng)
    holed = list(old2)
    gone = old2[40]  # a code the reference holds no copy of: its cards have no copies
    for q, x in enumerate(old2):
        if q in (0, 5, 6, 50, 103) or x == gone:  # unread in the reference, ends too
            holed[q] = None
    # The filter is not continuous where a code's last copy in the reference was dealt
    # in full and another card of it comes: its free mass is then 0 or a rounding error,
    # and which decides where that card's start goes. So the codes left with one copy
    # are not dealt here (the codes with no copy and with both copies are).
    one_copy = {x for x in old2 if holed.count(x) == 1}
    holed_new = [x for x in weak2 if x not in one_copy]
    unread_new = [x if i % 9 else None for i, x in enumerate(weak2)]
    # a card of a code already dealt `decks` times (a foreign card): no prediction, and
    # the filter's fronts only decay
    x = weak2[0]
    after = [i for i, y in enumerate(weak2) if y == x][-1] + 1
    foreign = [*weak2[:after], x, *weak2[after:]]
    # three decks dealt against a two-deck reference: the third card of a code finds its
    # two copies (partly) used up
    rng3 = random.Random(11)
    three = list(weak2)
    for y in CODES[::3]:
        three.insert(rng3.randrange(40, len(three)), y)
    return [
        # every card of a 2-deck shoe: each code runs out, so its fronts are closed
        ("2 decks, 2 riffles, whole shoe", old2, weak2, 2),
        ("2 decks, riffled and reversed", old2, stripped, 2),
        ("2 decks, fair", old2, fair2[:80], 2),
        ("2 decks, reference with unread cards", holed, holed_new, 2),
        ("2 decks, unread cards dealt", old2, unread_new, 2),
        ("2 decks, the old order itself", old2, old2, 2),
        ("8 decks, 4 riffles", old8, weak8[:160], 8),
        ("2 decks, a foreign card", old2, foreign, 2),
        ("3 decks against 2", old2, three, 3),
    ]


@pytest.mark.parametrize("name,reference,new,decks", cases(), ids=[c[0] for c in cases()])
def test_the_thread_filter_is_its_docstring_card_by_card(name, reference, new, decks):
    # after every card (so a state that goes wrong and recovers is seen too)
    for end, (got, want) in enumerate(zip(filter_values(reference, new, decks),
                                          reference_values(reference, new, decks),
                                          strict=True)):
        assert len(got) == len(want) == len(PACKETS) * len(WINDOWS) * len(LAMS)
        for i, (g, w) in enumerate(zip(got, want, strict=True)):
            assert math.isclose(g, w, rel_tol=1e-9, abs_tol=1e-9), (name, end, i, g, w)


def test_the_documented_figures_are_the_filters() -> None:
    assert (_Threads.PACKETS, _Threads.WINDOWS, _Threads.LAMS, _Threads.PATIENCE) == (
        PACKETS, WINDOWS, LAMS, PATIENCE)


def test_the_thread_filter_sees_the_weak_shoe() -> None:
    # not a tautology of the two filters: on two riffles the thread filter's best
    # component must gain far more than a fair shoe gives it
    old = shoe(2, 1)
    *_, weak = reference_values(old, a_shuffle(old, 4, random.Random(3)), 2)
    *_, fair = reference_values(old, shoe(2, 2), 2)
    assert len(weak) == len(fair) == len(PACKETS) * len(WINDOWS) * len(LAMS)
    weak, fair = max(weak), max(fair)
    assert weak > 20 and fair < 5, (weak, fair)


def tracker(test: ShuffleTest, mode: str) -> _Tracker:
    (t,) = [t for t in test._trackers if isinstance(t, _Tracker) and t.mode == mode]
    return t


def test_a_one_way_tracker_never_follows_threads_the_other_way() -> None:
    # One deck (every code once), dealt in its old order backwards: the forward tracker
    # (threads run forward through the old order) never has a dealt predecessor to
    # continue, so every card starts a thread and it predicts nothing but P0 (its
    # log-martingale stays 0); the backward tracker follows every card. And
    # the other way round for the old order itself.
    old = new_deck_order(1)
    back = ShuffleTest.start(old, 1).feed(old[::-1])
    fwd = ShuffleTest.start(old, 1).feed(old)
    for test, blind, sees in ((back, "forward", "backward"), (fwd, "backward", "forward")):
        t = tracker(test, blind)
        assert (t.starts, t.links) == (52, 0), blind
        assert max(abs(v) for v in t.logm) < 1e-12, blind  # log(lam + 1 - lam) rounds
        other = tracker(test, sees)
        assert other.starts == 1 and other.links == 51 and min(other.logm) > 10, sees


# ------------------------------------------------------------------ the trackers

START_BIAS, CASCADE = 0.05, 3  # the module's documented figures
TRACKER_LAMBDAS = (0.05, 0.1, 0.2, 0.4, 0.7)


class RefTracker:
    """One tracking mode, as the module docstring and _Tracker's comments describe it,
    with nothing kept up incrementally: the open fronts (a free old position whose old
    predecessor, or successor, is placed) and the free copies are counted afresh from
    the placed positions for every card."""

    def __init__(self, ref: list[int], mode: str) -> None:
        self.code = [-1, *ref, -1]  # a sentinel each end
        self.mode = mode
        self.placed = [False] * len(self.code)
        self.unplaced = [0] * 52  # dealt cards of each code not placed yet
        self.fc = self.bc = 1.0  # continuations seen forward / backward (either mode)
        self.logm = [0.0] * len(TRACKER_LAMBDAS)
        self.starts = self.links = self.adjacent = self.longest_clump = 0
        self.clump, self.last = 1, -1

    def weights(self) -> tuple[float, float]:
        if self.mode == "forward":
            return 1.0, 0.0
        if self.mode == "backward":
            return 0.0, 1.0
        return self.fc / (self.fc + self.bc), self.bc / (self.fc + self.bc)

    def fronts(self, c: int | None, step: int) -> int:
        """Free old positions (of code ``c``, or any) whose neighbour ``step`` away is
        placed: where the next card of a thread running that way comes from."""
        return sum(1 for p in range(1, len(self.code) - 1)
                   if self.code[p] >= 0 and not self.placed[p] and self.placed[p - step]
                   and (c is None or self.code[p] == c))

    def free(self, c: int) -> int:
        return sum(1 for p, x in enumerate(self.code) if x == c and not self.placed[p])

    def predict(self, c: int, p0: float) -> None:
        af, ab = self.weights()
        total = af * self.fronts(None, 1) + ab * self.fronts(None, -1)
        p1 = (af * self.fronts(c, 1) + ab * self.fronts(c, -1)) / total if total > 0 else p0
        for i, lam in enumerate(TRACKER_LAMBDAS):
            self.logm[i] += math.log(lam * p1 / p0 + 1.0 - lam)

    def support(self, r: int) -> float:
        """1 if a card is placed at old position r, else the share of its code's free
        copies that unplaced cards of that code hold."""
        if self.placed[r]:
            return 1.0
        c = self.code[r]
        if c < 0 or self.unplaced[c] == 0:
            return 0.0
        return self.unplaced[c] / self.free(c)

    def place(self, c: int) -> None:
        af, ab = self.weights()
        # the free copy best supported by a dealt neighbour (forward before backward,
        # the first copy in old order on a tie)
        best, bq, forward = 0.0, None, True
        for q, x in enumerate(self.code):
            if x != c or self.placed[q]:
                continue
            for s, fwd in ((af * self.support(q - 1) if af else 0.0, True),
                           (ab * self.support(q + 1) if ab else 0.0, False)):
                if s > best:
                    best, bq, forward = s, q, fwd
        free = self.free(c)
        if bq is None or best < START_BIAS / max(free, 1):
            # continues no front: a thread begins; the card waits unplaced (if a free
            # copy is left for it)
            if free > self.unplaced[c]:
                self.unplaced[c] += 1
            self.starts += 1
            self.clump_at(None)
            return
        if forward:
            self.fc += 1
        else:
            self.bc += 1
        self.links += 1
        self.placed[bq] = True
        # the unplaced cards of its old neighbours fall into place, up to CASCADE deep
        for step in (-1, 1):
            s = bq + step
            for _ in range(CASCADE):
                cs = self.code[s]
                if self.placed[s] or cs < 0 or self.unplaced[cs] == 0:
                    break
                self.unplaced[cs] -= 1
                self.placed[s] = True
                s += step
        self.clump_at(bq)

    def clump_at(self, q: int | None) -> None:
        # consecutive new cards that were old neighbours, and the longest run of them
        if q is not None and self.last is not None and self.last >= 0 and abs(q - self.last) == 1:
            self.adjacent += 1
            self.clump += 1
        else:
            self.clump = 1
        self.longest_clump = max(self.longest_clump, self.clump if q is not None else 0)
        self.last = q if q is not None else -1

    def figures(self) -> tuple:
        return (self.starts, self.links, self.adjacent, self.longest_clump)


def reference_trackers(reference: list[str | None], new: list[str | None],
                       decks: int) -> Iterator[list[tuple[list[float], tuple]]]:
    ref = [INDEX[x] if x is not None else -1 for x in reference]
    trackers = [RefTracker(ref, mode) for mode in ("forward", "backward", "either")]
    for _ in deal_through(trackers, new, decks):
        yield [(list(t.logm), t.figures()) for t in trackers]


def module_trackers(reference: list[str | None], new: list[str | None],
                    decks: int) -> Iterator[list[tuple[list[float], tuple]]]:
    test = ShuffleTest.start(reference, decks, threads=False)
    for i in range(len(new) + 1):
        if i:
            test = test.feed(new[i - 1 : i])
        yield [(list(tracker(test, m).logm),
                (tracker(test, m).starts, tracker(test, m).links, tracker(test, m).adjacent,
                 tracker(test, m).longest_clump)) for m in ("forward", "backward", "either")]


def tracker_cases() -> list[tuple[str, list, list, int]]:
    rng = random.Random(5)
    old1 = list(CODES)
    rng.shuffle(old1)
    old2 = shoe(2, 4)
    old8 = shoe(8, 6)
    riffled8 = a_shuffle(old8, 16, rng)
    cut8 = riffled8[150:] + riffled8[:150]
    holed = [None if i % 17 == 3 else x for i, x in enumerate(old2)]
    stripped: list[str] = []
    deck = a_shuffle(old2, 8, rng)
    while deck:  # a strip: packets of 1-5 cards off the top, each onto the last
        k = rng.randint(1, 5)
        stripped = deck[:k] + stripped
        deck = deck[k:]
    return [
        ("1 deck, 3 riffles", old1, a_shuffle(old1, 8, rng), 1),
        ("1 deck, backwards", old1, old1[::-1], 1),
        ("2 decks, 2 riffles", old2, a_shuffle(old2, 4, rng), 2),
        ("2 decks, riffles and a strip", old2, stripped, 2),
        ("2 decks, unread cards both sides", holed,
         [x if i % 11 else None for i, x in enumerate(a_shuffle(old2, 4, rng))], 2),
        ("2 decks, fair", old2, shoe(2, 9)[:70], 2),
        ("8 decks, 4 riffles and a cut", old8, cut8[:150], 8),
        ("8 decks, the old order", old8, old8[:120], 8),
        # the either-mode tracker at START_BIAS: k cards backwards, then one forward
        ("1 deck, either mode exactly at the start bias", old1, [*old1[18::-1], old1[19]], 1),
        ("1 deck, either mode below the start bias", old1, [*old1[28::-1], old1[29]], 1),
    ]


def test_a_card_continues_a_front_when_its_support_is_at_least_the_start_bias() -> None:
    # One deck, the old order read backwards from position 19 (a thread begun, then 18
    # backward continuations: fc = 1, bc = 19), then the card after position 19: its
    # forward support is fc / (fc + bc) = 1/20 = START_BIAS exactly, per free copy (one):
    # "at least" (START_BIAS's comment), so it continues the front. From position 29
    # (bc = 29) the support 1/30 is below it: a new thread.
    old = new_deck_order(1)
    at = tracker(ShuffleTest.start(old, 1).feed([*old[18::-1], old[19]]), "either")
    assert (at.fc, at.bc, at.links, at.starts) == (2.0, 19.0, 19, 1)
    below = tracker(ShuffleTest.start(old, 1).feed([*old[28::-1], old[29]]), "either")
    assert (below.fc, below.bc, below.links, below.starts) == (1.0, 29.0, 28, 2)


@pytest.mark.parametrize("name,reference,new,decks", tracker_cases(),
                         ids=[c[0] for c in tracker_cases()])
def test_the_trackers_are_their_description_card_by_card(name, reference, new, decks):
    for end, (got, want) in enumerate(zip(module_trackers(reference, new, decks),
                                          reference_trackers(reference, new, decks),
                                          strict=True)):
        for mode, (g, w) in zip(("forward", "backward", "either"), zip(got, want, strict=True),
                                strict=True):
            assert g[1] == w[1], (name, end, mode, "starts, links, adjacent, longest clump")
            for gv, wv in zip(g[0], w[0], strict=True):
                assert math.isclose(gv, wv, rel_tol=1e-9, abs_tol=1e-9), (name, end, mode)


# ------------------------------------------------------------------ recent cards, the mixture

RECENT_TAUS = (8.0, 24.0, 64.0)


def reference_recent(reference: list[str | None], new: list[str | None],
                     decks: int) -> list[float]:
    """_Recent's log-martingales (time scale outer, lambda inner) after ``new``: each card
    dealt predicts the codes next to its copies in the old order (one vote per old
    neighbour pair), its votes decaying by exp(-1/tau) a card; P1(c) is c's votes times
    the cards of c left, over all codes' votes times their cards left. Written with
    decay (no growth, so no renormalisation)."""
    ref = [INDEX[x] if x is not None else -1 for x in reference]
    votes = [[[0] * 52 for _ in range(52)]][0]  # votes[a][b]: copies of a next to a b
    for q, a in enumerate(ref):
        for r in (q - 1, q + 1):
            if a >= 0 and 0 <= r < len(ref) and ref[r] >= 0:
                votes[a][ref[r]] += 1
    weight = [[0.0] * 52 for _ in RECENT_TAUS]
    left = [decks] * 52
    seen = [0] * 52
    n = 0
    logm = [0.0] * (len(RECENT_TAUS) * len(TRACKER_LAMBDAS))
    for x in new:
        if x is None:
            continue
        c = INDEX[x]
        if decks - seen[c] > 0 and 52 * decks - n > 0:
            p0 = (decks - seen[c]) / (52 * decks - n)
            for i, w in enumerate(weight):
                den = sum(w[b] * left[b] for b in range(52))
                ratio = w[c] * left[c] / den / p0 if den > 0 else 1.0
                for j, lam in enumerate(TRACKER_LAMBDAS):
                    logm[i * len(TRACKER_LAMBDAS) + j] += math.log(lam * ratio + 1.0 - lam)
        if left[c] > 0:
            left[c] -= 1
        for i, tau in enumerate(RECENT_TAUS):
            decay = math.exp(-1.0 / tau)
            weight[i] = [v * decay + votes[c][b] for b, v in enumerate(weight[i])]
        seen[c] += 1
        n += 1
    return logm


def recent_values(test: ShuffleTest) -> list[float]:
    (t,) = [t for t in test._trackers if isinstance(t, _Recent)]
    return list(t.values)


def recent_cases() -> list[tuple[str, list, list, int]]:
    rng = random.Random(8)
    old2 = shoe(2, 12)
    weak2 = a_shuffle(old2, 8, rng)
    x = weak2[0]
    after = [i for i, y in enumerate(weak2) if y == x][-1] + 1
    holed = [None if i % 13 == 0 else y for i, y in enumerate(old2)]
    return [
        ("2 decks, 3 riffles", old2, weak2, 2),
        ("2 decks, unread cards", holed, [y if i % 7 else None for i, y in enumerate(weak2)], 2),
        ("2 decks, a foreign card", old2, [*weak2[:after], x, x, *weak2[after:]], 2),
        ("2 decks, fair", old2, shoe(2, 13), 2),
    ]


@pytest.mark.parametrize("name,reference,new,decks", recent_cases(),
                         ids=[c[0] for c in recent_cases()])
def test_recent_cards_are_their_description(name, reference, new, decks):
    for end in sorted({*range(0, len(new) + 1, 9), len(new)}):
        got = recent_values(ShuffleTest.start(reference, decks, threads=False).feed(new[:end]))
        want = reference_recent(reference, new[:end], decks)
        for g, w in zip(got, want, strict=True):
            assert math.isclose(g, w, rel_tol=1e-9, abs_tol=1e-9), (name, end)


def test_recent_cards_over_a_shoe_long_enough_to_renormalise() -> None:
    # 72 decks (3,744 cards): the weights of the fastest time scale (8 cards) grow by
    # e**(1/8) a card and are renormalised past 1e200 (after about 3,700 cards); the
    # predictions must not notice ("ratios are unchanged")
    decks = 72
    old = [c for c in CODES for _ in range(decks)]
    random.Random(21).shuffle(old)
    new = a_shuffle(old, 64, random.Random(22))
    got = recent_values(ShuffleTest.start(old, decks, threads=False).feed(new))
    want = reference_recent(old, new, decks)
    for g, w in zip(got, want, strict=True):
        assert math.isclose(g, w, rel_tol=1e-7, abs_tol=1e-7)


def test_the_statistic_is_the_log_mean_of_every_components_likelihood_ratio() -> None:
    old = shoe(2, 30)
    start = ShuffleTest.start(old, 2)
    assert start.statistic == 0.0  # every ratio 1 before a card
    test = start.feed(a_shuffle(old, 8, random.Random(31))[:60])
    from shoe_controller.game.shuffle_tracking import STRIP_WEIGHT, _component_name

    values = [v for t in test._trackers for v in t.values]
    names = [_component_name(t, i) for t in test._trackers for i in range(len(t.values))]
    # trackers, recent cards, thread filter, strip filter
    assert len(values) == 3 * 5 + 3 * 5 + 16 * 3 + 3 * 3
    # the prior: the strip filter's values weigh STRIP_WEIGHT, the others 1
    strip = [n.startswith("strip filter") for n in names]
    assert sum(strip) == 3 * 3
    weights = [STRIP_WEIGHT if s else 1.0 for s in strip]
    want = math.log(sum(w * math.exp(v) for w, v in zip(weights, values, strict=True))
                    / sum(weights))
    assert math.isclose(test.statistic, want, rel_tol=1e-12)


def test_unread_cards_are_counted_apart() -> None:
    old = shoe(2, 40)
    test = ShuffleTest.start(old, 2).feed([None, old[3], None, None, old[9], None])
    assert (test.unread, test.cards) == (4, 2)


def test_a_new_test_starts_at_zero_with_or_without_the_thread_filter() -> None:
    old = shoe(2, 50)
    with_threads = ShuffleTest.start(old, 2)
    assert (with_threads.peak, with_threads.statistic, with_threads.seen) == (0.0, 0.0,
                                                                              (0,) * 52)
    # threads=False: the three trackers and recent cards only, so the statistic is
    # their log mean alone
    new = a_shuffle(old, 8, random.Random(51))[:50]
    test = ShuffleTest.start(old, 2, threads=False).feed(new)
    assert not [t for t in test._trackers if isinstance(t, _Threads | _StripThreads)]
    values = [v for t in test._trackers for v in t.values]
    assert len(values) == 3 * 5 + 3 * 5
    assert math.isclose(test.statistic,
                        math.log(sum(math.exp(v) for v in values) / len(values)),
                        rel_tol=1e-12)


def test_recent_cards_predict_by_votes_whatever_the_size_of_the_denominator() -> None:
    # After a renormalisation (past 1e200, about 3,700 cards at the 8-card time scale) the
    # votes and their sum "den" are divided by the scale, so den can be any positive size,
    # below 1 too; the prediction is P1(c) = votes(c) * left(c) / den whenever den > 0
    # (the class docstring), and no prediction (ratio 1) only when nothing has voted
    r = _Recent(_Recent.links_of([-1, 0, 1, 2, -1]), decks=1)
    c, p0 = 1, 0.25
    r.v = [[0.0] * 52 for _ in RECENT_TAUS]
    r.den = [0.5, 0.0, 2.0]
    r.v[0][c], r.v[2][c] = 0.25, 1.5
    r.predict(c, p0)
    ratios = [0.25 * 1 / 0.5 / p0, 1.0, 1.5 * 1 / 2.0 / p0]
    want = [math.log(lam * ratio + 1.0 - lam) for ratio in ratios for lam in TRACKER_LAMBDAS]
    for g, w in zip(r.values, want, strict=True):
        assert math.isclose(g, w, rel_tol=1e-12, abs_tol=1e-12)


def test_logmeanexp_is_the_log_of_the_mean_of_the_exponentials() -> None:
    # what picks the tracking mode an alert's evidence describes: the mode whose mixture
    # (the mean of exp over its values) is largest; written out plainly here
    from shoe_controller.game.shuffle_tracking import _logmeanexp

    for values in ([0.0, math.log(3.0)], [5.0] * 5, [6.0, -100.0, -100.0, -100.0, -100.0],
                   [700.0, 690.0], [-3.0]):
        plain = math.log(sum(math.exp(v - 600.0 * (v > 600)) for v in values) / len(values))
        plain += 600.0 * (max(values) > 600)
        assert math.isclose(_logmeanexp(values), plain, rel_tol=1e-12, abs_tol=1e-12)
    # the order of two modes: five equal bets of 5 beat one of 6 among four that lost
    assert _logmeanexp([5.0] * 5) > _logmeanexp([6.0, -100.0, -100.0, -100.0, -100.0])


def test_component_names_are_the_documented_ones() -> None:
    # docs/game.md (evidence): "tracker <mode>", "recent cards", "thread filter, A threads,
    # window W <side>" or "... tray forward|backward", "strip filter, A threads" or
    # "..., tray"; the tray ones only when the previous shoe's rounds are known
    from shoe_controller.game.shuffle_tracking import _component_name

    old = [c.code for c in ALL_CARDS] * 2
    places = [None] + [(1 + k // 4, ("player", "banker")[k % 2]) for k in range(len(old) - 1)]
    dealt = {f"tracker {m}" for m in ("forward", "backward", "either")} | {"recent cards"}
    dealt |= {f"thread filter, {a} threads, window {w} {s}" for a in PACKETS
              for w in (1, 3) for s in ("forward", "backward")}
    dealt |= {f"strip filter, {a} threads" for a in (16, 24, 32)}
    tray = {f"thread filter, {a} threads, tray {s}" for a in PACKETS
            for s in ("forward", "backward")}
    tray |= {f"strip filter, {a} threads, tray" for a in (16, 24, 32)}
    for given, want in ((None, dealt), (places, dealt | tray)):
        test = ShuffleTest.start(old, 2, places=given)
        names = {_component_name(t, i) for t in test._trackers for i in range(len(t.values))}
        assert names == want

"""Do the previous shoe's neighbours sit close together again? The pair count.

The whole-shoe fit (:mod:`shoe_controller.game.shuffle_fit`) looks for the one matching
of the eight identical copies under which the new shoe looks most riffled; at six riffles
the matchings a fair shoe offers fit about as well as the true one, so the best fit
hardly moves (docs/game.md). This test does not match copies at all. For every pair of
old neighbours (codes ``a`` then ``b``, ``d`` apart in the previous shoe's tray order,
``d`` = 1 .. ``DISTANCES``) it adds, over every copy of ``a`` and every copy of ``b``
seen in the new shoe,

    f_d(gap) = h_d(gap) / u(gap) - 1

where ``gap`` is the new position of the ``b`` less that of the ``a`` (modulo the shoe),
``h_d`` the gap of cards ``d`` apart after a few riffles, a strip and a cut (simulated:
``kernel``), and ``u`` the fair shoe's (every gap alike). Under a fair shuffle each term
averages zero; after a few riffles the true copies' terms average the chi-square distance
of ``h_d`` from ``u``, and the 63 other copy pairs of each old pair add only noise. This
is the first term of the likelihood ratio averaged over every matching, so it keeps the
evidence the best single matching throws away.

The count is standardised against a fair shoe *given the codes seen so far* (its mean
and variance over every placement of those cards, ``PairTest.z``: pairs of copies treated
as independent, which they are to first order), so it can be looked at as the shoe is
dealt. A tray collected hand by hand (each round Player's hand then Banker's, or the
reverse) is the same count over the tray's possible neighbours, each weighted by its
chance (``tray_pairs``). The statistic has no bound on its false alarms: the threshold
in ``[analytics]`` is set from fair shoes, all looks included (``bench/integrity.py
--pairs-null``). Pure: numpy only, no clock, no I/O; about a millisecond a look.

>>> import random
>>> from shoe_controller.game.cards import ALL_CARDS
>>> old = [c.code for c in ALL_CARDS for _ in range(8)]
>>> random.Random(3).shuffle(old)
>>> fair = list(old)
>>> random.Random(4).shuffle(fair)
>>> abs(PairTest.start(dealt_pairs(old), 8).z(fair)) < 4
True
>>> from shoe_controller.game.shuffle_fit import _riffled
>>> weak = [None] * 416
>>> for place, card in zip(_riffled(416, 5, True, np.random.default_rng(1)), old):
...     weak[place] = card
>>> PairTest.start(dealt_pairs(old), 8).z(weak) > 5  # five riffles, a strip and a cut
True
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

#: Old neighbours counted: cards 1 .. DISTANCES apart in the previous shoe's tray.
DISTANCES = 4

#: The weak shuffles the kernel is drawn for: five or six riffles alike, and a strip of
#: 5-15-card packets. Six's kernel alone counts four riffles' short gaps too little,
#: five's alone six's long ones; the mixture loses little on either (docs/game.md).
RIFFLES = (5, 6)
STRIP = True
#: Cards seen before the count is looked at. Over the first hundred cards the count's
#: looks change fast and its tail is heavier than normal, so fair shoes' largest z came
#: mostly from there (300 fair shoes, looks from 40 cards); four riffles are not caught
#: before about 170 cards anyway (docs/game.md).
MIN_CARDS = 100
#: The deck counts the threshold was measured for (``bench/integrity.py --pairs-null``).
CALIBRATED_DECKS = (8,)
#: Copies of one code counted (a stacked shoe may hold more than its decks).
_MOST_COPIES = 64


@lru_cache(maxsize=8)
def kernel(cards: int, riffles: tuple[int, ...] = RIFFLES, strip: bool = STRIP,
           distances: int = DISTANCES, shoes: int = 400) -> np.ndarray:
    """``f_d(gap) = h_d(gap) / u(gap) - 1`` as an array ``[d - 1, gap]``, gap ``0 ..
    cards - 1`` modulo the shoe (``f_d(0) = 0``: a card is never its own neighbour);
    ``h_d`` the new gap of cards ``d`` apart after each number of ``riffles`` alike (a
    mixture), a strip (when ``strip``) and a cut, counted over ``shoes`` simulated shoes
    each, from fixed seeds, with half a count added to every gap. Averages zero over a
    fair shoe's gaps.

    >>> f = kernel(416)
    >>> f.shape, bool(abs(f[0, 1:].mean()) < 1e-9), bool(f[0, 1] > 1 > f[0, 200])
    ((4, 416), True, True)
    """
    from shoe_controller.game.shuffle_fit import _riffled

    h = np.zeros((distances, cards))
    for r in riffles:
        rng = np.random.default_rng(20261203 + r)
        counts = np.zeros((distances, cards))
        for _ in range(shoes):
            position = _riffled(cards, r, strip, rng)
            for d in range(1, distances + 1):
                np.add.at(counts[d - 1], (position[d:] - position[:-d]) % cards, 1.0)
        counts[:, 1:] += 0.5
        counts[:, 0] = 0.0
        h += counts / counts.sum(axis=1, keepdims=True) / len(riffles)
    f = np.zeros((distances, cards))
    f[:, 1:] = h[:, 1:] * (cards - 1) - 1.0
    return f


#: Old neighbours by code: ``(a, b, d, weight)``: a card of code ``a`` then one of
#: ``b``, ``d`` apart, with the chance that they were.
Pairs = tuple[tuple[str, str, int, float], ...]


def dealt_pairs(reference: Sequence[str | None], distances: int = DISTANCES) -> Pairs:
    """Old neighbours when the tray is in the order the cards left the shoe (``None``: a
    card not read, whose pairs are lost).

    >>> dealt_pairs(["AS", "KH", None, "2C"], distances=2)
    (('AS', 'KH', 1, 1.0), ('KH', '2C', 2, 1.0))
    """
    out = []
    for d in range(1, distances + 1):
        for a, b in zip(reference, reference[d:], strict=False):
            if a is not None and b is not None:
                out.append((a, b, d, 1.0))
    return tuple(out)


def tray_pairs(reference: Sequence[str | None], places: Sequence[tuple[int, str] | None],
               distances: int = DISTANCES) -> Pairs:
    """Old neighbours when each round reached the tray hand by hand, Player's cards then
    Banker's or the reverse (either with chance one half, rounds apart): every pair of
    tray places ``d`` apart, over the ways the rounds holding them were collected
    (``shuffle_tracking.tray_units``: a round keeps its places in the tray; only its
    order inside them varies).

    >>> places = [None, (1, "player"), (1, "banker"), (1, "player"), (1, "banker")]
    >>> sorted(tray_pairs(["AS", "2C", "3C", "4C", "5C"], places, distances=1))[:3]
    [('2C', '4C', 1, 1.0), ('3C', '5C', 1, 1.0), ('4C', '3C', 1, 0.5)]
    """
    from shoe_controller.game.shuffle_tracking import tray_units

    # each tray place: the card there for each way its round was collected, and the round
    ways: list[tuple[tuple[int, ...], int]] = []
    for r, unit in enumerate(tray_units(places)):
        if isinstance(unit, list):
            ways += [((k,), -1) for k in unit]
        else:
            one, other = unit[0] + unit[1], unit[1] + unit[0]
            ways += [((one[i], other[i]), r) for i in range(len(one))]
    weight: dict[tuple[str, str, int], float] = {}
    for d in range(1, distances + 1):
        for (xs, rx), (ys, ry) in zip(ways, ways[d:], strict=False):
            together = rx == ry and rx >= 0  # one round: both places turn together
            combos = zip(xs, ys, strict=True) if together else [
                (x, y) for x in xs for y in ys]
            combos = list(combos)
            for x, y in combos:
                a, b = reference[x], reference[y]
                if a is not None and b is not None:
                    weight[(a, b, d)] = weight.get((a, b, d), 0.0) + 1.0 / len(combos)
    return tuple((a, b, d, w) for (a, b, d), w in weight.items())


@dataclass(frozen=True, slots=True, eq=False)
class PairTest:
    """The pair count of a new shoe against old neighbours ``pairs``: built once a shoe
    (``start``), then ``z`` of the cards dealt so far at every look."""

    cards: int
    codes: tuple[str, ...]
    #: unordered code pairs (first, second index into ``codes``, first <= second) and
    #: each one's weights on the basis ``(f_1(g) .. f_D(g), f_1(-g) .. f_D(-g))``, g the
    #: gap from a copy of ``first`` to a copy of ``second``
    first: np.ndarray
    second: np.ndarray
    weights: np.ndarray
    basis: np.ndarray  # [gap, 2D]
    table: np.ndarray  # [pair, gap]: each code pair's kernel (weights times basis)

    @classmethod
    def start(cls, pairs: Pairs, decks: int, riffles: tuple[int, ...] = RIFFLES,
              strip: bool = STRIP) -> PairTest:
        """The test of a shoe of ``decks`` decks against old neighbours ``pairs``
        (``dealt_pairs``, ``tray_pairs``)."""
        cards = 52 * decks
        f = kernel(cards, riffles, strip)
        dist = f.shape[0]
        codes = tuple(sorted({p[0] for p in pairs} | {p[1] for p in pairs}))
        index = {c: i for i, c in enumerate(codes)}
        acc: dict[tuple[int, int], np.ndarray] = {}
        for a, b, d, w in pairs:
            if d > dist:
                continue
            i, j = index[a], index[b]
            key = (min(i, j), max(i, j))
            vec = acc.setdefault(key, np.zeros(2 * dist))
            if i == j:  # both directions of an unordered pair of copies
                vec[d - 1] += w
                vec[dist + d - 1] += w
            elif i < j:
                vec[d - 1] += w
            else:  # from a copy of b to one of a the gap is the opposite
                vec[dist + d - 1] += w
        keys = sorted(acc)
        reverse = np.concatenate(([0], np.arange(cards - 1, 0, -1)))
        basis = np.concatenate([f.T, f[:, reverse].T], axis=1)
        weights = np.array([acc[k] for k in keys]).reshape(len(keys), 2 * dist)
        return cls(cards, codes,
                   np.array([k[0] for k in keys], np.int64),
                   np.array([k[1] for k in keys], np.int64),
                   weights, basis, weights @ basis.T)

    def z(self, dealt: Sequence[str | None]) -> float:
        """The count's z-score over ``dealt`` (the new shoe's cards in order, ``None``
        for a card not read): its excess over a fair shoe with these cards, in standard
        deviations."""
        return self.looks(dealt, (len(dealt),))[0][0]

    def looks(self, dealt: Sequence[str | None], at: Sequence[int]
              ) -> list[tuple[float, float, float]]:
        """(z, count, fair mean) over the first ``m`` cards of ``dealt``, for each ``m``
        in ``at`` (how bench/integrity.py looks at every round of thousands of shoes)."""
        index = {c: i for i, c in enumerate(self.codes)}
        slots = np.full((len(self.codes), _MOST_COPIES), -1, np.int64)
        seen = np.zeros(len(self.codes), np.int64)
        for p, c in enumerate(dealt):
            i = index.get(c) if c is not None else None
            if i is not None and seen[i] < _MOST_COPIES:
                slots[i, seen[i]] = p
                seen[i] += 1
        slots = slots[:, : max(1, int(seen.max(initial=1)))]
        xs, ys = slots[self.first][:, :, None], slots[self.second][:, None, :]
        ok = (xs >= 0) & (ys >= 0)
        # an unordered pair of copies of one code once: the later minus the earlier
        ok &= ~(self.first == self.second)[:, None, None] | (ys > xs)
        rows = np.arange(len(self.first))[:, None, None]
        value = self.table[rows, (ys - xs) % self.cards][ok]
        later = np.maximum(xs, ys)[ok]  # the pair is in view once its later card is
        out = []
        for m in at:
            if m < 2 or not len(self.first):
                out.append((0.0, 0.0, 0.0))
                continue
            count = float(value[later < m].sum())
            mean, var = self._fair(m, ((slots >= 0) & (slots < m)).sum(axis=1))
            z = float((count - mean) / np.sqrt(var)) if var > 0 else 0.0
            out.append((z, count, mean))
        return out

    def _fair(self, m: int, seen: np.ndarray) -> tuple[float, float]:
        """A fair shoe's mean and variance of the count, the codes seen being placed at
        random over the ``m`` places dealt: each pair of copies' gap is then one of
        two distinct places, ``q`` ahead with chance ``(m - q) / (m (m - 1))`` (and
        ``cards - q`` behind alike)."""
        q = np.arange(1, m)
        chance = (m - q) / (m * (m - 1.0))
        ahead, behind = self.basis[q % self.cards], self.basis[(self.cards - q) % self.cards]
        mu = chance @ ahead + chance @ behind
        second = (ahead * chance[:, None]).T @ ahead + (behind * chance[:, None]).T @ behind
        cov = second - np.outer(mu, mu)
        na, nb = seen[self.first], seen[self.second]
        n = np.where(self.first == self.second, na * (na - 1) / 2.0, na * nb)
        mean = float(n @ (self.weights @ mu))
        var = float(n @ np.einsum("pk,kl,pl->p", self.weights, cov, self.weights))
        return mean, var

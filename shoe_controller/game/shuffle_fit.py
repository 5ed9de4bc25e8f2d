"""Does the whole new shoe fit the previous shoe's order through a few riffles?

The card-by-card test of :mod:`shoe_controller.game.shuffle_tracking` must predict each
card from the cards before it, and cannot tell which of the eight identical copies of a
code a card is until later cards show it; at five riffles it often loses the threads.
This test looks at the shoe *after* it was dealt, as a whole. It searches the matchings
of the new cards to the old copies of their codes for the one under which the old
neighbours' new positions look most like a riffled shoe's, and scores that best fit:

    score = max over matchings  sum over old neighbours (p, q)  log h(gap) / u(gap)

where ``gap`` is the new position of ``q`` less that of ``p`` (modulo the shoe: a cut
only rotates), ``h`` the gaps of old neighbours after five riffles and a cut, with or
without a strip (``gap_table``, simulated), and ``u`` the fair shuffle's (every gap
equally likely). Old neighbours one of which was not seen add nothing. Three families,
each searched on its own: five riffles with a strip, without one, and with a strip from
a tray collected hand by hand, where the old neighbours are the tray's (each round
Player's hand then Banker's, or the reverse: the search turns rounds too). The search
is simulated annealing over swaps of two copies of a code (the cards the old shoe did
not show are copies too, with no neighbours), many swaps at once where their scores
cannot interact, from a seed taken from the cards, so the same shoe always gives the
same score (tests/test_shuffle_fit.py checks it against every matching of a small deck).

A fair shoe's best fit is not zero: with eight copies of every code there is always some
matching that looks a little riffled. So, unlike the card-by-card test, this one has no
bound on its false alarms: the statistic is the largest z-score of the three fits
against fair shoes' fits (``NULL``, measured by ``bench/integrity.py --fit-null``), and
its rate is what 10,000 measured fair shoes show (docs/game.md). Pure: numpy only, no
clock, no I/O; a few seconds of CPU a shoe, so the projection runs it once, at the end
of a shoe (``protection.shoe_fit``).

>>> import random
>>> from shoe_controller.game.cards import ALL_CARDS
>>> old = [c.code for c in ALL_CARDS for _ in range(8)]
>>> random.Random(3).shuffle(old)
>>> fair = list(old)
>>> random.Random(4).shuffle(fair)
>>> fit_test(old, fair, decks=8).z < 4
True
>>> weak = fit_test(old, old[200:] + old[:200], decks=8)  # only cut
>>> weak.z > 20
True
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

#: The weak shuffles fitted, each on its own (riffles, strip): five riffles with a strip
#: and without. Four riffles are caught card by card long before the shoe ends; a table
#: of six riffles separates six-riffle shoes from fair ones no better than five's does
#: (docs/game.md), and every family fitted costs a search and a share of the false-alarm
#: budget.
Family = tuple[int, bool, bool]
FAMILIES: tuple[Family, ...] = ((5, True, False), (5, False, False), (5, True, True))
#: Annealing steps (each tries a swap of two copies for about a quarter of the codes). Fewer steps
#: find poorer fits of weak and fair shoes alike, and the gap between them shrinks
#: (docs/game.md: 1,500 / 3,000 / 6,000 / 12,000 steps).
STEPS = 24000


def _riffled(cards: int, riffles: int, strip: bool, rng: np.random.Generator) -> np.ndarray:
    """The new position of each old card after ``riffles`` GSR riffles, a strip of
    5-15-card packets (when ``strip``) and a cut. A GSR ``a``-shuffle is the inverse of
    sorting the deck by ``a`` random labels (Bayer and Diaconis)."""
    labels = rng.integers(0, 2 ** riffles, cards)
    # Sorting by the labels is the inverse shuffle: the old card at j goes to sort[j].
    order = np.empty(cards, np.int64)  # order[j]: the old card at new position j
    order[np.argsort(labels, kind="stable")] = np.arange(cards)
    if strip:
        sizes = rng.integers(5, 16, cards // 5 + 1)
        bounds = np.concatenate(([0], np.cumsum(sizes)))
        bounds = bounds[bounds < cards]
        packets = [order[b:e] for b, e in zip(bounds, [*bounds[1:], cards], strict=True)]
        order = np.concatenate(packets[::-1])
    order = np.roll(order, -int(rng.integers(0, cards)))
    position = np.empty(cards, np.int64)
    position[order] = np.arange(cards)
    return position


@lru_cache(maxsize=16)
def gap_table(cards: int, family: tuple[int, bool], shoes: int = 400) -> np.ndarray:
    """``log h(gap) / u(gap)`` for each gap ``0 .. cards - 1`` (new position of an old
    card's successor less its own, modulo the shoe), ``h`` after ``family`` = (riffles,
    strip) and a cut, simulated from a fixed seed (``shoes`` shoes) and smoothed by one
    count a gap. Without a strip the successor comes soon after; with one, about as far
    before (the strip reverses the packets).

    >>> plain, stripped = gap_table(416, (5, False)), gap_table(416, (5, True))
    >>> bool(plain[5] > 1.0 > plain[-5]), bool(stripped[-40] > 1.0 > stripped[40])
    (True, True)
    """
    rng = np.random.default_rng(20261203)
    counts = np.ones(cards)
    riffles, strip = family
    if True:
        for _ in range(shoes):
            position = _riffled(cards, riffles, strip, rng)
            np.add.at(counts, (position[1:] - position[:-1]) % cards, 1.0)
    counts[0] = 0.0
    h = counts / counts.sum()
    table = np.zeros(cards)
    table[1:] = np.log(h[1:] * (cards - 1))
    return table


def _slots(reference: Sequence[str | None], dealt: Sequence[str | None], decks: int
           ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(code, after, value) of every old copy: the reference's cards in order, then the
    copies it did not show; ``after`` the next copy in the reference's order (-1: none:
    the last card, and the copies not shown, which have no neighbours); ``value`` the new
    position a copy is matched to, or -1. A first matching: each code's new cards to its
    copies in order."""
    cards = 52 * decks
    names = sorted({c for c in (*reference, *dealt) if c is not None})
    index = {c: i for i, c in enumerate(names)}
    if len(names) > 52:
        raise ValueError(f"more than 52 card codes in the shoes ({len(names)})")
    reference = reference[:cards]
    code = np.full(cards, -1, np.int64)
    shown = np.zeros(52, np.int64)
    for p, c in enumerate(reference):
        if c is not None:
            code[p] = index[c]
            shown[index[c]] += 1
    spare = [i for i in range(52) for _ in range(max(0, decks - shown[i]))]
    free = np.arange(len(reference), cards)
    code[free[: len(spare)]] = spare[: len(free)]
    after = np.full(cards, -1, np.int64)
    after[: max(0, len(reference) - 1)] = np.arange(1, len(reference))
    value = np.full(cards, -1, np.int64)
    copies: dict[int, list[int]] = {}
    for p in np.flatnonzero(code >= 0):
        copies.setdefault(int(code[p]), []).append(int(p))
    for j, c in enumerate(dealt):
        if c is not None and copies.get(index[c]):
            value[copies[index[c]].pop(0)] = j
    return code, after, value


def _tray(places: Sequence[tuple[int, str] | None], cards: int
          ) -> tuple[np.ndarray, Rounds]:
    """The reference's order as a tray collected hand by hand: (``after`` as in
    ``_slots``, with every round Player's hand then Banker's; the rounds that may be the
    other way). ``places[i]``: the round and hand of the reference's ``i``-th card (None:
    burned or misdealt: it keeps its place)."""
    from shoe_controller.game.shuffle_tracking import tray_units

    units: list[list[int]] = []
    turnable: list[tuple[list[int], list[int]]] = []
    for unit in tray_units(places):
        if isinstance(unit, list):
            units.append(unit)
        else:
            units.append(unit[0] + unit[1])
            turnable.append(unit)
    order = [k for unit in units for k in unit]
    after = np.full(cards, -1, np.int64)
    after[order[:-1]] = order[1:]
    width = max((len(p) + len(b) for p, b in turnable), default=1)
    hands = np.full((len(turnable), 2, width), -1, np.int64)
    for r, (p, b) in enumerate(turnable):
        hands[r, 0, : len(p) + len(b)] = p + b
        hands[r, 1, : len(p) + len(b)] = b + p
    rounds = Rounds(hands, np.array([len(p) + len(b) for p, b in turnable], np.int64),
                    np.zeros(len(turnable), np.int64), np.arange(len(turnable)) % 2,
                    np.zeros(len(turnable), np.int64))
    return after, rounds


#: A fair shoe's best fit per old-neighbour pair seen (mean, standard deviation over
#: shoes divided by the square root of the pairs), per family, 8 decks, measured by
#: ``bench/integrity.py --fit-null`` (docs/game.md); the statistic is the fit's z-score
#: against these.
NULL: dict[Family, tuple[float, float]] = {
    (5, True, False): (0.835, 1.094),
    (5, False, False): (0.746, 1.298),
    (5, True, True): (0.990, 0.952),
}
#: The deck counts NULL was measured for.
CALIBRATED_DECKS = (8,)


#: The most cards of either shoe not seen (behind the cut card, not read) for which the
#: null holds: measured with the cut card 16 and 52 cards from the end (docs/game.md).
MAX_UNSEEN = 60


def not_calibrated(reference: Sequence[str | None], dealt: Sequence[str | None],
                   decks: int) -> str:
    """Why the fit's null does not hold for these shoes ("" when it does).

    >>> not_calibrated(["AS"] * 400, ["AS"] * 300, 8)
    'the new shoe: 116 cards not seen (at most 60 measured)'
    """
    if decks not in CALIBRATED_DECKS:
        return f"{decks} decks (the null was measured for 8)"
    for name, cards in (("the previous shoe", reference), ("the new shoe", dealt)):
        unseen = 52 * decks - sum(1 for c in cards if c is not None)
        if unseen > MAX_UNSEEN:
            return f"{name}: {unseen} cards not seen (at most {MAX_UNSEEN} measured)"
    return ""


@dataclass(frozen=True, slots=True)
class Fit:
    """The best fit of a shoe to its reference. ``z``: the largest z-score over the
    families, ``family`` (riffles, strip) where it was, ``score`` that family's best
    fit, ``pairs`` the old-neighbour pairs expected seen in both shoes."""

    z: float
    family: Family
    score: float
    pairs: float


def _pairs(reference: Sequence[str | None], dealt: Sequence[str | None], decks: int) -> float:
    """Old neighbours both read, times the chance that both were dealt again."""
    read = sum(1 for a, b in itertools.pairwise(reference)
               if a is not None and b is not None)
    seen = sum(1 for c in dealt if c is not None) / (52 * decks)
    return max(1.0, read * seen * seen)


Shoe = tuple[Sequence[str | None], Sequence[str | None]] | tuple[
    Sequence[str | None], Sequence[str | None], Sequence[tuple[int, str] | None] | None]


def family_scores(shoes: Sequence[Shoe], decks: int, steps: int = STEPS,
                  seed: int | None = None) -> dict[Family, np.ndarray]:
    """Each family's best fit (the raw score) of many (reference, dealt[, places]) shoes:
    one annealing run per family with the shoes side by side, from ``seed`` (default:
    taken from the cards). ``places``: where each reference card went (round, hand), for
    the family of a tray collected hand by hand; a shoe without them scores ``-inf``
    there."""
    cards = 52 * decks
    built = [_slots(sh[0], sh[1], decks) for sh in shoes]
    code = np.stack([b[0] for b in built])
    after = np.stack([b[1] for b in built])
    val = np.stack([b[2] for b in built])
    if seed is None:
        cards_repr = repr([[list(x) for x in sh if x is not None] for sh in shoes])
        seed = int.from_bytes(hashlib.blake2b(cards_repr.encode(), digest_size=8).digest())
    rng = np.random.default_rng(seed)
    out: dict[Family, np.ndarray] = {}
    for family in FAMILIES:
        riffles, strip, tray = family
        if not tray:
            out[family] = _anneal(code, after, val, gap_table(cards, (riffles, strip)), rng,
                                  steps)
            continue
        have = [k for k, sh in enumerate(shoes) if len(sh) > 2 and sh[2]]  # type: ignore[misc]
        score = np.full(len(shoes), -np.inf)
        if have:
            trays = [_tray(shoes[k][2], cards) for k in have]  # type: ignore[misc]
            hands = [t[1] for t in trays]
            width = max(h.hands.shape[2] for h in hands)
            rounds = Rounds(
                np.concatenate([np.pad(h.hands, ((0, 0), (0, 0), (0, width - h.hands.shape[2])),
                                       constant_values=-1) for h in hands]),
                np.concatenate([h.length for h in hands]),
                np.concatenate([np.full(len(h.length), n) for n, h in enumerate(hands)]),
                np.concatenate([h.parity for h in hands]),
                np.concatenate([h.turned for h in hands]),
            )
            score[have] = _anneal(code[have], np.stack([t[0] for t in trays]), val[have],
                                  gap_table(cards, (riffles, strip)), rng, steps, rounds)
        out[family] = score
    return out


def fit_many(shoes: Sequence[Shoe], decks: int, steps: int = STEPS,
             seed: int | None = None) -> list[Fit]:
    """``fit_test`` of many (reference, dealt[, places]) shoes at once (how
    bench/integrity.py measures thousands of shoes).

    >>> fit_many([(["AS"], ["AS"])], decks=6)
    Traceback (most recent call last):
    ValueError: the fit test is calibrated for 8 decks only, not 6
    """
    if decks not in CALIBRATED_DECKS:
        raise ValueError(f"the fit test is calibrated for {' or '.join(map(str, CALIBRATED_DECKS))}"
                         f" decks only, not {decks}")
    if not shoes:
        return []
    return best_fits(shoes, decks, family_scores(shoes, decks, steps, seed))


def best_fits(shoes: Sequence[Shoe], decks: int, raw: dict[Family, np.ndarray]) -> list[Fit]:
    """Each shoe's ``Fit`` from its families' raw scores (``family_scores``): the largest
    z-score against ``NULL``."""
    pairs = np.array([_pairs(sh[0], sh[1], decks) for sh in shoes])
    best: list[Fit] = []
    for family, score in raw.items():
        mean, sd = NULL[family]
        z = (score - mean * pairs) / (sd * np.sqrt(pairs))
        for k in range(len(shoes)):
            fit = Fit(round(float(z[k]), 3), family, round(float(score[k]), 2),
                      round(float(pairs[k]), 1))
            if len(best) <= k:
                best.append(fit)
            elif fit.z > best[k].z:
                best[k] = fit
    return best


def fit_test(reference: Sequence[str | None], dealt: Sequence[str | None], decks: int,
             places: Sequence[tuple[int, str] | None] | None = None,
             steps: int = STEPS) -> Fit:
    """How well ``dealt`` (the new shoe's cards in the order they left it, ``None`` for a
    card not read) fits ``reference`` (the previous shoe's, in the order dealt; ``places``
    where each of its cards went, for a tray collected hand by hand) through five
    riffles, with or without a strip, and a cut: see the module's docstring.
    Deterministic: the search's seed is taken from the cards."""
    return fit_many([(reference, dealt, places)], decks, steps)[0]


def _anneal(code: np.ndarray, after: np.ndarray, val: np.ndarray, table: np.ndarray,
            rng: np.random.Generator, steps: int, rounds: Rounds | None = None,
            beta0: float = 0.05, beta1: float = 3.0) -> np.ndarray:
    """Simulated annealing of the matchings of ``shoes`` side by side: ``code[b, s]`` the
    code of old copy ``s`` (-1: none), ``after[b, s]`` the copy after it in the old order
    (-1: none; the copies the old shoe did not show have no neighbours), ``val[b, s]``
    the new position it is matched to first (-1: none). ``rounds``: the old shoe's rounds
    whose two hands may have reached the tray in either order (``_tray``); every fourth
    step then tries turning half of them. Returns each shoe's best score."""
    shoes, cards = code.shape
    size = shoes * cards
    none = 10 * cards  # an unmatched copy's value: its gap to anything falls off the table
    # table[d] for every d = v - u of two values in 0 .. cards - 1 or ``none``: the gap
    # modulo the shoe when both are positions, 0 when either is ``none``
    ext = np.zeros(22 * cards + 1)
    gaps = np.arange(-cards + 1, cards)
    ext[gaps + 11 * cards] = table[gaps % cards]
    flat = np.where(val >= 0, val, none).ravel()
    flat = np.append(flat, none)  # the last slot stands for "no neighbour"
    ids = np.arange(size).reshape(shoes, cards)
    right = np.append(np.where(after >= 0, after + ids - np.arange(cards), size).ravel(), size)
    left = np.full(size + 1, size)
    has = right[:size] < size
    left[right[:size][has]] = np.flatnonzero(has)
    off = 11 * cards

    score = ext[flat[right[:size]] - flat[:size] + off].reshape(shoes, cards).sum(axis=1)
    if rounds is not None:
        rounds = rounds.on(shoes, cards)
    best = score.copy()
    # each code's copies (padded with a copy of the first: a swap with itself is nothing)
    copies = np.zeros((shoes, 52, 8), np.int64)
    for b in range(shoes):
        for c in range(52):
            mine = ids[b][code[b] == c][:8]
            copies[b, c] = np.resize(mine, 8) if len(mine) else size
    copies = copies.reshape(shoes * 52, 8)
    rows = np.arange(shoes * 52)
    marks = np.zeros(size + 1, bool)

    def local(g: np.ndarray, v: np.ndarray) -> np.ndarray:
        return ext[v - flat[left[g]] + off] + ext[flat[right[g]] - v + off]

    for step, beta in enumerate(beta0 * (beta1 / beta0) ** (np.arange(steps) / max(1, steps - 1))):
        if rounds is not None and step % 4 == 3:
            score += _turn(rounds, (step // 4) % 2, flat, left, right, ext, off, beta, rng,
                           shoes)
            np.maximum(best, score, out=best)
            continue
        # about half the codes propose a swap of two of their copies; a swap next to
        # another's copy (an old neighbour) is dropped, so each swap's change of score is
        # independent of the others'
        pick = rows[rng.random(shoes * 52) < 0.5]
        i = rng.integers(0, 8, len(pick))
        j = (i + rng.integers(1, 8, len(pick))) % 8
        s, t = copies[pick, i], copies[pick, j]
        keep = (s != t) & (s < size)
        s, t = s[keep], t[keep]
        marks[s] = True
        marks[t] = True
        free = ~(marks[left[s]] | marks[right[s]] | marks[left[t]] | marks[right[t]])
        marks[s] = False
        marks[t] = False
        s, t = s[free], t[free]
        vs, vt = flat[s], flat[t]
        delta = local(s, vt) + local(t, vs) - local(s, vs) - local(t, vt)
        take = (delta >= 0) | (rng.random(len(delta)) < np.exp(np.minimum(0.0, beta * delta)))
        s, t, delta = s[take], t[take], delta[take]
        flat[s], flat[t] = flat[t], flat[s]
        score += np.bincount(s // cards, weights=delta, minlength=shoes)
        np.maximum(best, score, out=best)
    return best


@dataclass(frozen=True, slots=True)
class Rounds:
    """The old shoe's rounds that may have reached the tray hand by hand, as the copies'
    slots: ``hands[r, o]`` the round's cards in the tray when collected one way (``o`` =
    0: Player's hand then Banker's, 1: the reverse), padded; ``length[r]``, ``shoe[r]``
    (which of the shoes side by side), ``parity[r]`` (neighbouring rounds differ, so
    rounds of one parity turn independently), ``turned[r]`` the way it is now."""

    hands: np.ndarray
    length: np.ndarray
    shoe: np.ndarray
    parity: np.ndarray
    turned: np.ndarray

    def on(self, shoes: int, cards: int) -> Rounds:
        """With slots numbered across the shoes side by side (shoe ``b``'s slot ``s`` is
        ``b * cards + s``; padding is the slot after the last)."""
        pad = self.hands < 0
        hands = np.where(pad, shoes * cards, self.hands + (self.shoe * cards)[:, None, None])
        return Rounds(hands, self.length, self.shoe, self.parity, self.turned.copy())


def _turn(rounds: Rounds, parity: int, flat: np.ndarray, left: np.ndarray,
          right: np.ndarray, ext: np.ndarray, off: int, beta: float,
          rng: np.random.Generator, shoes: int) -> np.ndarray:
    """Try collecting half the rounds of one parity the other way; returns the change of
    each shoe's score (``left``, ``right`` and ``rounds.turned`` are changed in place)."""
    none = len(flat) - 1
    which = np.flatnonzero((rounds.parity == parity) & (rng.random(len(rounds.parity)) < 0.5))
    if not len(which):
        return np.zeros(shoes)
    k = np.arange(len(which))
    now = rounds.turned[which]
    length = rounds.length[which]
    cur = rounds.hands[which, now]
    new = rounds.hands[which, 1 - now]
    prev = left[cur[:, 0]]
    nxt = right[cur[k, length - 1]]

    def chain(seq: np.ndarray) -> np.ndarray:
        ch = np.full((len(which), seq.shape[1] + 2), none)
        ch[:, 0] = prev
        ch[:, 1:-1] = seq
        ch[k, length + 1] = nxt
        return ch

    old_chain, new_chain = chain(cur), chain(new)

    def energy(ch: np.ndarray) -> np.ndarray:
        v = flat[ch]
        return ext[v[:, 1:] - v[:, :-1] + off].sum(axis=1)

    delta = energy(new_chain) - energy(old_chain)
    take = (delta >= 0) | (rng.random(len(delta)) < np.exp(np.minimum(0.0, beta * delta)))
    ch, length = new_chain[take], length[take]
    for j in range(ch.shape[1] - 1):
        on = j <= length
        a, b = ch[on, j], ch[on, j + 1]
        right[a] = b
        left[b] = a
    rounds.turned[which[take]] ^= 1
    return np.bincount(rounds.shoe[which[take]], weights=delta[take], minlength=shoes)

"""How likely is the new shoe's order after a few riffles of the old one, summed over
every matching of identical cards? The chain test.

Read the previous shoe's tray in order. A riffle keeps each old *thread* (a run of
consecutive old cards) in order, interleaved with the other threads, so the new position
of an old card's successor comes a few places after its own (``2 ** k`` places on average
after ``k`` riffles; a strip turns that into a few places *before*, a cut only rotates).
Along the old order the new positions therefore form a chain, each link drawn from the
gap of old neighbours, ``h(gap)`` (``shuffle_fit.gap_table``, simulated); after a fair
shuffle every gap is alike.

Which new card is which old copy is unknown (eight identical copies of each code), so
the test does not pick a matching (the whole-shoe fit's weakness: a fair shoe always
offers one that looks riffled). It *sums* over them: a forward pass of a hidden Markov
chain along the old order, whose hidden state is the new position of the current old
card, one of the new places showing that card's code, or a place not dealt yet (those
are lumped into one state: their codes are unknown, each with the chance the remaining
cards give it). That is the likelihood of the cards seen under the riffled chain,
against the same sum with every gap alike (the fair chain): ``log LR``. The chain does
not forbid two old cards the same new place, so ``log LR`` is no exact likelihood
ratio: its level under a fair shuffle moves with how much of the shoe is seen and which
codes it holds. It is therefore measured against *controls*: the same sum with the old
order's codes renamed by fixed permutations of the 52 codes, which break every link the
shuffle left and keep all the rest. The statistic is the real likelihood over the
controls' *average* likelihood, in nats (``Look.excess``): were that average the fair
shoe's expected likelihood ratio, the statistic would be an exact log likelihood ratio,
which a fair shoe reaches ``T`` with chance at most ``e**-T`` a look. A z-score against
the controls' spread (``Look.z``, in the alert's evidence) is no statistic to alert on:
early in a shoe the spread is narrow while a fair shoe's likelihood ratio still has its
exponential tail, and one fair shoe in 4,800 reached z = 8.8 at 120 cards (docs/game.md).
The false-alarm rate is what fair shoes show (``bench/integrity.py --chain-null``).

A tray collected hand by hand (each round Player's hand then Banker's, or the reverse)
is summed over both ways every round could have been collected, each with chance one
half (``shuffle_tracking.tray_units``).

Pure: numpy only, no clock, no I/O.

>>> import random
>>> from shoe_controller.game.cards import ALL_CARDS
>>> old = [c.code for c in ALL_CARDS for _ in range(8)]
>>> random.Random(3).shuffle(old)
>>> fair = list(old)
>>> random.Random(4).shuffle(fair)
>>> test = ChainTest.start(old, None, decks=8)
>>> test.look(fair).excess < 6
True
>>> from shoe_controller.game.shuffle_fit import _riffled
>>> weak = [None] * 416
>>> for place, card in zip(_riffled(416, 5, True, np.random.default_rng(1)), old):
...     weak[place] = card
>>> test.look(weak[:300]).excess > 20  # five riffles, a strip and a cut; 300 cards
True
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from shoe_controller.game.cards import ALL_CARDS

#: The weak shuffles the chain is drawn for, each its own chain, averaged (riffles,
#: strip): four to six riffles, with a strip of 5-15-card packets and without.
FAMILIES: tuple[tuple[int, bool], ...] = ((4, True), (5, True), (6, True),
                                          (4, False), (5, False), (6, False))
#: Renamings of the codes the real sum is measured against.
CONTROLS = 32
#: Cards dealt at which the test looks (at the first round's end at or after each), and
#: it looks once more at the shoe's end. Four riffles are caught by about a hundred
#: cards; later looks are for five and six, which need most of the shoe.
LOOKS = (80, 100, 120, 150, 200, 300)
#: The deck counts the threshold was measured for (``bench/integrity.py --chain-null``).
CALIBRATED_DECKS = (8,)
_INDEX = {c.code: i for i, c in enumerate(ALL_CARDS)}


def looks_passed(cards: int) -> int:
    """How many of ``LOOKS`` a shoe has passed with ``cards`` dealt: a look is due at a
    round's end when this grows (and once more at the shoe's end).

    >>> looks_passed(79), looks_passed(80), looks_passed(416)
    (0, 1, 6)
    """
    return sum(1 for m in LOOKS if cards >= m)

Place = tuple[int, str] | None


@lru_cache(maxsize=4)
def _gaps(cards: int, families: tuple[tuple[int, bool], ...]) -> np.ndarray:
    """``h(gap)`` of each family as a probability over gaps ``0 .. cards - 1`` (the new
    position of an old card's successor less its own, modulo the shoe; ``h(0) = 0``)."""
    from shoe_controller.game.shuffle_fit import gap_table

    h = np.exp(np.array([gap_table(cards, f) for f in families]))
    h[:, 0] = 0.0
    return h / h.sum(axis=1, keepdims=True)


def _renamings(controls: int) -> np.ndarray:
    """``[control, code]``: the real codes (row 0), then fixed permutations of the 52."""
    rng = np.random.default_rng(20261206)
    rows = [np.arange(52)] + [rng.permutation(52) for _ in range(controls)]
    return np.array(rows)


@dataclass(frozen=True, slots=True, eq=False)
class ChainTest:
    """The chain test of a new shoe against the previous shoe's tray: built once a shoe
    (``start``), then ``look`` at the cards dealt so far at each of ``LOOKS``."""

    cards: int
    decks: int
    families: tuple[tuple[int, bool], ...]
    #: the tray as units: a tuple of old code indices in order (``-1``: a card not read),
    #: or a pair of them (a round collected hand by hand: Player's then Banker's, or the
    #: reverse, each with chance one half)
    units: tuple[tuple[tuple[int, ...], ...], ...]
    renamings: np.ndarray

    @classmethod
    def start(cls, reference: Sequence[str | None], places: Sequence[Place] | None,
              decks: int, families: tuple[tuple[int, bool], ...] = FAMILIES,
              controls: int = CONTROLS) -> ChainTest:
        """The test against ``reference`` (the previous shoe's cards in the order dealt,
        ``None`` for a card not read), its tray in that order (``places`` None) or
        collected hand by hand (``places[i]``: the round and hand of card ``i``, None
        for a burned or misdealt card), for a shoe of ``decks`` decks.

        >>> t = ChainTest.start(["AS", "2C", "3C", "4C"], [None, (1, "player"),
        ...                      (1, "banker"), (1, "player")], decks=8, controls=2)
        >>> t.units
        (((0,),), ((40, 42, 41), (41, 40, 42)))
        """
        codes = [_INDEX.get(c, -1) if c is not None else -1 for c in reference]
        units: list[tuple[tuple[int, ...], ...]] = []
        if places is None:
            units = [((c,),) for c in codes]
        else:
            from shoe_controller.game.shuffle_tracking import tray_units

            for unit in tray_units(places):
                if isinstance(unit, list):
                    units += [((codes[i],),) for i in unit]
                else:
                    one, other = unit[0] + unit[1], unit[1] + unit[0]
                    units.append((tuple(codes[i] for i in one),
                                  tuple(codes[i] for i in other)))
        return cls(52 * decks, decks, families, tuple(units), _renamings(controls))

    def scores(self, dealt: Sequence[str | None], at: Sequence[int] | None = None
               ) -> np.ndarray:
        """``log LR`` of the first ``m`` cards of ``dealt`` (``None``: not read) for each
        ``m`` in ``at`` (default: all of them), as ``[family, look, row]``: against the
        old order (row 0) and each control (the rows after it). The looks are one pass
        along the old order, so many cost little more than one.

        >>> t = ChainTest.start(["AS", "KH"] * 4, None, decks=1, controls=1)
        >>> s = t.scores(["AS", "KH"] * 4)
        >>> s.shape, bool(s[0, 0, 0] > s[0, 0, 1])
        ((6, 1, 2), True)
        """
        cards, m = self.cards, len(self.families)
        at = [len(dealt)] if at is None else list(at)
        codes = [_INDEX.get(c, -1) if c is not None else -1 for c in dealt[:cards]]
        width = 1 + max([1, *np.bincount([c for c in codes if c >= 0] or [0])])
        size = 4 * cards + 2
        copies = np.full((len(at), 53, width), cards + 1, np.int64)
        emit = np.zeros((len(at), 53, width), np.float32)
        table = np.zeros((m, len(at) * size), np.float32)
        count = np.zeros((len(at), 53))
        for k, seen in enumerate(at):
            seen = min(seen, cards)
            unseen = cards - seen
            places: list[list[int]] = [[] for _ in range(52)]
            for p, c in enumerate(codes[:seen]):
                if c >= 0:
                    places[c].append(p)
            for i, p in enumerate(places):
                copies[k, i, : len(p)] = p
                copies[k, i, len(p)] = cards  # the state "not dealt yet"
                count[k, i] = len(p)
                emit[k, i, : len(p)] = 1.0
                if unseen:
                    emit[k, i, len(p)] = max(self.decks - len(p), 0) / unseen
            table[:, k * size: (k + 1) * size] = self._links(seen, unseen)
        # a fair chain's sum at a card: its copies over the shoe (those seen, at least decks)
        copies_in_shoe = np.maximum(count, self.decks)
        # link[look, a, b]: where in ``table`` the links from each state of code a to
        # each of code b are (the state "not dealt yet" is ``cards``, padding ``cards + 1``)
        a, b = copies[:, :, None, :, None], copies[:, None, :, None, :]
        into, out_of = b == cards, a == cards
        link = np.where(out_of, np.where(into, 3 * cards, 2 * cards + b),
                        np.where(into, cards + a, (b - a) % cards))
        link += (np.arange(len(at)) * size)[:, None, None, None, None]
        controls = self.renamings.shape[0]
        look = np.repeat(np.arange(len(at)), controls)  # each row's look
        names = np.tile(self.renamings, (len(at), 1))  # and its renaming of the codes
        rows = len(look)
        fair = np.zeros(rows)
        logs = np.zeros((m, rows))
        alpha: np.ndarray | None = None
        before: list[np.ndarray] = []  # the codes (renamed) whose states alpha is over

        def step(alpha: np.ndarray | None, before: list[np.ndarray], logs: np.ndarray,
                 code: int) -> tuple[np.ndarray, list[np.ndarray], np.ndarray]:
            named = names[:, code]
            e = emit[look, named]  # [row, state]
            if alpha is None:
                new = np.broadcast_to(e / cards, (m, *e.shape)).copy()
            else:
                where = np.concatenate([link[look, p, named] for p in before], axis=1)
                t = np.take(table, where, axis=1)  # [family, row, i, j]
                new = (alpha[:, :, None, :] @ t)[:, :, 0, :] * e
            total = np.maximum(new.sum(axis=2), 1e-30)
            return new / total[:, :, None], [named], logs + np.log(total)

        def chance(code: int) -> np.ndarray:
            """log of a fair chain's sum at a card of ``code``."""
            return np.log(copies_in_shoe[look, names[:, code]] / cards)

        for unit in self.units:
            if len(unit) == 1:
                for code in unit[0]:
                    if code >= 0:
                        alpha, before, logs = step(alpha, before, logs, code)
                        fair += chance(code)
                continue
            ways = []
            for order in unit:
                w_alpha, w_before, w_logs = alpha, before, logs
                for code in order:
                    if code >= 0:
                        w_alpha, w_before, w_logs = step(w_alpha, w_before, w_logs, code)
                ways.append((w_alpha, w_before, w_logs))
            for code in unit[0]:
                if code >= 0:
                    fair += chance(code)
            if ways[0][0] is None:
                continue
            top = np.maximum(ways[0][2], ways[1][2])
            w = [np.exp(lg - top) for _, _, lg in ways]
            share = [(wi / (w[0] + w[1])).astype(np.float32)[:, :, None] for wi in w]
            alpha = np.concatenate([wa * sh for (wa, _, _), sh in
                                    zip(ways, share, strict=True)], axis=2)
            before = [*ways[0][1], *ways[1][1]]
            logs = top + np.log((w[0] + w[1]) / 2)
        return (logs - fair).reshape(m, len(at), controls)

    def _links(self, seen: int, unseen: int) -> np.ndarray:
        """The links at a look with ``seen`` cards dealt, as one row a family: ``h(gap)``
        between dealt places (``[0, cards)``), from dealt place ``p`` into the places not
        dealt yet, summed (``cards + p``), out of them into ``q``, averaged (``2 cards +
        q``), within them (``3 cards``), and room for the padding's indices."""
        cards = self.cards
        h = _gaps(cards, self.families)
        table = np.zeros((h.shape[0], 4 * cards + 2))
        table[:, :cards] = h
        if not unseen:
            return table
        below = np.concatenate([np.zeros((h.shape[0], 1)), np.cumsum(h, axis=1)], axis=1)
        p = np.arange(seen)  # sum of h(0 .. j) = below[j + 1]
        table[:, cards + p] = below[:, cards - p] - below[:, seen - p]
        table[:, 2 * cards + p] = (below[:, cards + p - seen + 1] - below[:, p + 1]) / unseen
        d = np.arange(1, unseen)
        table[:, 3 * cards] = ((unseen - d) * (h[:, d] + h[:, cards - d])).sum(axis=1) \
            / unseen
        return table

    def look(self, dealt: Sequence[str | None]) -> Look:
        """The statistic of the cards ``dealt`` so far (``None``: not read), with what
        it is made of.

        >>> t = ChainTest.start(["AS", "KH", "QD", "JC"] * 4, None, decks=1, controls=4)
        >>> look = t.look(["AS", "KH", "QD", "JC"] * 4)
        >>> look.excess > 0, look.z > 0, look.family in FAMILIES
        (True, True, True)
        """
        return self.looks(dealt, (len(dealt),))[0]

    def looks(self, dealt: Sequence[str | None], at: Sequence[int]) -> list[Look]:
        """``look`` of the first ``m`` cards of ``dealt`` for each ``m`` in ``at``, in one
        pass (how bench/integrity.py looks at thousands of shoes)."""
        out = []
        for per in self.scores(dealt, at).transpose(1, 0, 2):  # [family, row] a look
            top = per.max(axis=0)
            both = top + np.log(np.exp(per - top).mean(axis=0))
            controls = both[1:]
            sd = float(controls.std(ddof=1)) if len(controls) > 1 else 0.0
            mean = float(controls.mean()) if len(controls) else 0.0
            z = float((both[0] - mean) / sd) if sd > 0 else 0.0
            top = controls.max() if len(controls) else 0.0
            average = float(top + np.log(np.exp(controls - top).mean())) if len(controls) \
                else 0.0
            out.append(Look(float(both[0]) - average, z, float(both[0]), mean, sd,
                            self.families[int(per[:, 0].argmax())]))
        return out


@dataclass(frozen=True, slots=True)
class Look:
    """One look of the chain test: the statistic ``excess`` (the real ``log_lr`` less
    the log of the controls' average likelihood ratio, in nats), the z-score against the
    controls (``z``: their ``mean`` and ``sd``), and the ``family`` (riffles, strip)
    whose chain fits the real order best."""

    excess: float
    z: float
    log_lr: float
    mean: float
    sd: float
    family: tuple[int, bool]

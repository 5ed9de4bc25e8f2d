"""Exact baccarat odds for any shoe composition: every bet's probability and house edge.

No simulation. A round is decided by the *values* of at most six cards (ten value
classes), except the pair bets, which depend on ranks and suits of the first two cards
of each hand and have closed forms. The value part is enumerated with integer weights
and a single final division:

1. The first four cards (P1 B1 P2 B2) are the 10**4 ordered value tuples. Their weight
   is a falling product of the value counts; all index arithmetic is static (built once).
2. Tuples are grouped by the two-card totals (100 classes). The third cards only need,
   per class, the moments ``S0 = sum w``, ``S1[x] = sum w*r[x]`` and
   ``S2[x][y] = sum w*r[x]*r[y]`` of the values ``r`` the first four cards removed,
   because the weight of a third card ``x`` is ``count[x] - r[x]``: a polynomial in r.
3. Every leaf (4, 5 or 6 cards) falls into one of 400 outcomes ``(player total, banker
   total, player cards, banker cards)``; every bet of the paytable is a function of the
   outcome. Numerators share the denominator ``N(N-1)...(N-5)``.

Everything is an exact integer (int64 while it provably cannot overflow, Python ints
otherwise); probabilities and expected values are :class:`fractions.Fraction`.

>>> a = analyse(shoe_counts(8))
>>> [round(float(a.probabilities[k]), 6) for k in ("banker", "player", "tie")]
[0.458597, 0.446247, 0.095156]
>>> a.house_edge["player_pair"]
Fraction(43, 415)
>>> round(float(a.house_edge["banker"]) * 100, 4), round(float(a.house_edge["tie"]) * 100, 4)
(1.0579, 14.3596)
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import cache
from typing import Any, Final

import numpy as np

from shoe_controller.game.cards import ALL_CARDS, Card, parse_card
from shoe_controller.game.round import Outcome
from shoe_controller.game.rules import BET_NAMES, Paytable
from shoe_controller.game.settlement import Pairs, settle
from shoe_controller.game.tableau import banker_draws, player_draws

__all__ = [
    "BETS",
    "OUTCOMES",
    "Analysis",
    "CompositionError",
    "analyse",
    "outcome_probabilities",
    "prepare",
    "remaining_counts",
    "shoe_counts",
]

#: Every bet of DESIGN.md, in display order.
BETS: Final = BET_NAMES
_PAIR_BETS: Final = ("player_pair", "banker_pair", "either_pair", "perfect_pair")


class CompositionError(ValueError):
    """A composition that cannot be analysed (negative counts, too few cards)."""


def _exact(x: float | int | Fraction) -> Fraction:
    # a paytable's 0.95 means 19/20, not the binary float nearest to it
    return x if isinstance(x, Fraction) else Fraction(str(x))


# --------------------------------------------------------------------------------------
# Compositions


def shoe_counts(decks: int) -> tuple[int, ...]:
    """Card counts (indexed by ``Card.index``) of a fresh shoe of ``decks`` decks.

    >>> c = shoe_counts(8)
    >>> len(c), sum(c), c[parse_card("AS").index]
    (52, 416, 8)
    """
    if decks < 1:
        raise CompositionError(f"a shoe needs at least one deck, got {decks}")
    return (decks,) * 52


def remaining_counts(
    decks: int, removed: Iterable[Card | str] = ()
) -> tuple[int, ...]:
    """Counts left after ``removed`` cards (Cards or codes) left a fresh shoe.

    >>> sum(remaining_counts(1, ["AS", "KD"]))
    50
    >>> remaining_counts(1, ["AS", "as"])
    Traceback (most recent call last):
    ...
    shoe_controller.game.odds.CompositionError: card AS removed 2 times but a 1-deck shoe has 1
    """
    counts = list(shoe_counts(decks))
    for item in removed:
        card = item if isinstance(item, Card) else parse_card(item)
        counts[card.index] -= 1
        if counts[card.index] < 0:
            times = decks - counts[card.index]
            raise CompositionError(
                f"card {card.code} removed {times} times but a {decks}-deck shoe has {decks}"
            )
    return tuple(counts)


# --------------------------------------------------------------------------------------
# The static enumeration plan (independent of the composition; built once)


def _outcome_index(p: int, b: int, n_p: int, n_b: int) -> int:
    return ((p * 10 + b) * 2 + (n_p - 2)) * 2 + (n_b - 2)


def _make_outcome(p: int, b: int, n_p: int, n_b: int) -> Outcome:
    winner = "player" if p > b else "banker" if b > p else "tie"
    return Outcome(p, b, n_p, n_b, winner, n_p == 2 and p >= 8, n_b == 2 and b >= 8)


#: All 400 outcomes ``(player total, banker total, player cards, banker cards)``, in
#: index order (some cannot happen: their probability is 0).
OUTCOMES: Final = tuple(
    _make_outcome(p, b, n_p, n_b)
    for p in range(10)
    for b in range(10)
    for n_p in (2, 3)
    for n_b in (2, 3)
)


@dataclass(frozen=True, slots=True)
class _Reduction:
    """Sum ``source[take]`` into bins; a precomputed sort makes it one ``reduceat``."""

    take: np.ndarray  # indices into the source, sorted by bin
    starts: np.ndarray  # start of each non-empty bin in ``take``
    bins: np.ndarray  # which bin each run fills
    size: int

    @classmethod
    def build(cls, source_index: np.ndarray, bin_index: np.ndarray, size: int) -> _Reduction:
        order = np.argsort(bin_index, kind="stable")
        sorted_bins = bin_index[order]
        starts = np.flatnonzero(np.r_[True, sorted_bins[1:] != sorted_bins[:-1]])
        return cls(source_index[order], starts, sorted_bins[starts], size)

    def __call__(self, source: np.ndarray) -> np.ndarray:
        out = np.zeros(self.size, dtype=source.dtype)
        if source.dtype == object:
            out[:] = 0
        out[self.bins] = np.add.reduceat(source[self.take], self.starts)
        return out


@dataclass(frozen=True, slots=True)
class _Plan:
    first: tuple[np.ndarray, ...]  # values of P1 B1 P2 B2 for each of the 10**4 tuples
    same: tuple[np.ndarray, ...]  # how many earlier cards share each card's value
    s0: _Reduction  # tuples -> 100 classes
    s1: _Reduction  # (tuple, position) -> 100*10
    s2: _Reduction  # (tuple, position, position) -> 100*10*10
    leaves: _Reduction  # 100 + 1000 + 10000 leaf weights -> 400 outcomes (+1 unused)


@cache
def _plan() -> _Plan:
    t = np.arange(10**4)
    p1, b1, p2, b2 = t // 1000, t // 100 % 10, t // 10 % 10, t % 10
    first = (p1, b1, p2, b2)
    same = (
        np.zeros_like(t),
        (b1 == p1).astype(np.int64),
        (p2 == p1).astype(np.int64) + (p2 == b1),
        (b2 == p1).astype(np.int64) + (b2 == b1) + (b2 == p2),
    )
    klass = ((p1 + p2) % 10) * 10 + (b1 + b2) % 10
    s0 = _Reduction.build(t, klass, 100)
    s1 = _Reduction.build(
        np.concatenate([t] * 4), np.concatenate([klass * 10 + v for v in first]), 1000
    )
    s2 = _Reduction.build(
        np.concatenate([t] * 16),
        np.concatenate([klass * 100 + vi * 10 + vj for vi in first for vj in first]),
        10**4,
    )
    unused = len(OUTCOMES)
    four = np.full(100, unused)
    five = np.full((100, 10), unused)
    six = np.full((100, 10, 10), unused)
    for k in range(100):
        p, b = divmod(k, 10)
        if p >= 8 or b >= 8 or (not player_draws(p) and not banker_draws(b, None)):
            four[k] = _outcome_index(p, b, 2, 2)
        elif not player_draws(p):  # Player stands on 6-7; Banker (0-5) draws
            for y in range(10):
                five[k, y] = _outcome_index(p, (b + y) % 10, 2, 3)
        else:  # Player draws x
            for x in range(10):
                if banker_draws(b, x):
                    for y in range(10):
                        six[k, x, y] = _outcome_index((p + x) % 10, (b + y) % 10, 3, 3)
                else:
                    five[k, x] = _outcome_index((p + x) % 10, b, 3, 2)
    bins = np.concatenate([four, five.ravel(), six.ravel()])
    leaves = _Reduction.build(np.arange(bins.size), bins, unused + 1)
    return _Plan(first, same, s0, s1, s2, leaves)


_INT64_LIMIT = 2**61


def _falling(n: int, k: int) -> int:
    out = 1
    for i in range(k):
        out *= n - i
    return out


def _value_counts(counts: Sequence[int]) -> list[int]:
    values = [0] * 10
    for card, n in zip(ALL_CARDS, counts, strict=True):
        values[card.value] += n
    return values


def _outcome_numerators(values: Sequence[int]) -> tuple[np.ndarray, int]:
    """Numerators of the 400 outcomes over the common denominator ``N(N-1)...(N-5)``."""
    n = sum(values)
    if n < 6:
        raise CompositionError(f"{n} cards left: a round may need 6")
    denominator = _falling(n, 6)
    # Every weight, partial sum and intermediate product below is at most about twice
    # the total mass N(N-1)...(N-5) (c[x] c[y] S0 <= N**2 * N(N-1)(N-2)(N-3)), so int64
    # is exact while that is below 2**61 (22 decks); beyond, Python integers.
    dtype: Any = np.int64 if denominator < _INT64_LIMIT else object
    plan = _plan()
    c = np.array(values, dtype=dtype)
    w = np.ones(10**4, dtype=dtype)
    for v, s in zip(plan.first, plan.same, strict=True):
        w = w * (c[v] - s)
    s0 = plan.s0(w)
    s1 = plan.s1(w).reshape(100, 10)
    s2 = plan.s2(w).reshape(100, 10, 10)
    # third-card weights; a negative factor only ever multiplies a zero one
    w5 = c[None, :] * s0[:, None] - s1
    c_second = c[None, :] - np.eye(10, dtype=np.int64).astype(dtype)  # c[y] - [x == y]
    w6 = (
        (c[:, None] * c_second)[None, :, :] * s0[:, None, None]
        - c[None, :, None] * s1[:, None, :]
        - c_second[None, :, :] * s1[:, :, None]
        + s2
    )
    leaves = np.concatenate(
        [s0 * ((n - 4) * (n - 5)), (w5 * (n - 5)).ravel(), w6.ravel()]
    )
    return plan.leaves(leaves)[: len(OUTCOMES)], denominator


def outcome_probabilities(counts: Sequence[int]) -> dict[Outcome, Fraction]:
    """Exact probability of every possible :class:`Outcome` of the next round.

    ``counts`` is indexed by ``Card.index`` (see :func:`remaining_counts`).

    >>> probs = outcome_probabilities(shoe_counts(1))
    >>> sum(probs.values())
    Fraction(1, 1)
    """
    numerators, denominator = _outcome_numerators(_value_counts(_checked(counts)))
    return {
        o: Fraction(int(x), denominator)
        for o, x in zip(OUTCOMES, numerators, strict=True)
        if x
    }


def _checked(counts: Sequence[int]) -> Sequence[int]:
    if len(counts) != 52:
        raise CompositionError(f"expected 52 card counts (one per card), got {len(counts)}")
    if any(n < 0 for n in counts):
        bad = [ALL_CARDS[i].code for i, n in enumerate(counts) if n < 0]
        raise CompositionError(f"negative count for {' '.join(bad)}")
    return counts


# --------------------------------------------------------------------------------------
# Pair bets: closed forms on the first two cards of each hand


def _pair_probabilities(groups: Sequence[int], n: int) -> tuple[Fraction, Fraction]:
    """P(a given hand's first two cards fall in one group), P(both hands' do).

    Any four positions of a shuffled shoe are exchangeable, so the deal order does not
    matter: only how many cards each group (rank, or exact card) holds.
    """
    pairs = [g * (g - 1) for g in groups]
    one = Fraction(sum(pairs), n * (n - 1))
    total = sum(pairs)
    both_distinct = total * total - sum(x * x for x in pairs)
    both_same = sum(g * (g - 1) * (g - 2) * (g - 3) for g in groups)
    both = Fraction(both_distinct + both_same, _falling(n, 4))
    return one, both


# --------------------------------------------------------------------------------------
# The analysis


@dataclass(frozen=True, slots=True)
class Analysis:
    """Exact figures for the next round dealt from one composition.

    ``probabilities[bet]`` is the probability the bet wins something (for ``player``,
    ``banker`` and ``tie``: that hand or a tie wins). ``expected_value[bet]`` is the
    player's net expectation per unit staked; ``house_edge`` is its negative.
    """

    cards: int
    commission: bool
    probabilities: Mapping[str, Fraction]
    expected_value: Mapping[str, Fraction]

    @property
    def house_edge(self) -> dict[str, Fraction]:
        return {bet: -ev for bet, ev in self.expected_value.items()}


@dataclass(frozen=True, slots=True)
class _PayoutTable:
    """Every value bet's distinct payouts as integers over one common ``scale``.

    ``rows`` is a 0/1 matrix (one row per (bet, payout) pair, one column per outcome),
    so one integer matrix product sums the outcome numerators of every payout class.
    """

    scale: int
    rows: np.ndarray
    #: per bet: (first row, payout numerators over ``scale`` of its rows)
    bets: tuple[tuple[str, int, tuple[int, ...]], ...]


@cache
def _payout_classes(paytable: Paytable, commission: bool) -> _PayoutTable:
    """The payout classes of the table's own settlement (game.settlement), so the odds
    are those of what the table actually pays."""
    mode = "commission" if commission else "no_commission"
    pays = [settle(o, Pairs(), paytable, mode) for o in OUTCOMES]
    columns = {
        bet: [_exact(p[bet]) for p in pays] for bet in BETS if bet not in _PAIR_BETS
    }
    scale = math.lcm(*(v.denominator for col in columns.values() for v in col))
    rows: list[list[bool]] = []
    bets = []
    for bet, column in columns.items():
        values = sorted(set(column))
        bets.append((bet, len(rows), tuple(int(v * scale) for v in values)))
        rows.extend([p == v for p in column] for v in values)
    return _PayoutTable(scale, np.array(rows, dtype=np.int64), tuple(bets))


def prepare(paytable: Paytable | None = None, commission: bool = True) -> None:
    """Build the static tables once (about 60 ms), so a later :func:`analyse` is fast.

    Optional: :func:`analyse` builds what it needs on first use and keeps it.
    """
    _plan()
    _payout_classes(paytable or Paytable(), commission)


def analyse(
    counts: Sequence[int],
    paytable: Paytable | None = None,
    commission: bool = True,
) -> Analysis:
    """Exact probabilities and expected values of every bet for the next round.

    ``counts``: cards left, indexed by ``Card.index`` (:func:`remaining_counts`).
    ``paytable``: the table's (``Rules.paytable``; default: DESIGN.md's figures).
    ``commission``: Banker wins pay ``paytable.banker``, else the no-commission lines.

    >>> a = analyse(shoe_counts(8), commission=False)
    >>> round(float(a.house_edge["banker"]) * 100, 4)
    1.4581
    """
    counts = _checked(counts)
    table = paytable or Paytable()
    numerators, denominator = _outcome_numerators(_value_counts(counts))
    payouts = _payout_classes(table, commission)
    # each row sums outcome numerators: at most the denominator, so int64 is exact
    sums = [int(x) for x in payouts.rows.astype(numerators.dtype) @ numerators]
    expected: dict[str, Fraction] = {}
    probabilities: dict[str, Fraction] = {}
    for bet, first, values in payouts.bets:
        row = sums[first : first + len(values)]
        expected[bet] = Fraction(
            sum(v * x for v, x in zip(values, row, strict=True)), payouts.scale * denominator
        )
        probabilities[bet] = Fraction(
            sum(x for v, x in zip(values, row, strict=True) if v > 0), denominator
        )

    n = sum(counts)
    ranks = [sum(counts[s * 13 + r] for s in range(4)) for r in range(13)]
    pair, both_pairs = _pair_probabilities(ranks, n)
    perfect, both_perfect = _pair_probabilities(counts, n)
    either = 2 * pair - both_pairs
    any_perfect = 2 * perfect - both_perfect
    for bet, p in (
        ("player_pair", pair),
        ("banker_pair", pair),
        ("either_pair", either),
        ("perfect_pair", any_perfect),
    ):
        probabilities[bet] = p
        expected[bet] = p * (_exact(getattr(table, bet)) + 1) - 1
    order = {bet: i for i, bet in enumerate(BETS)}
    return Analysis(
        cards=n,
        commission=commission,
        probabilities=dict(sorted(probabilities.items(), key=lambda kv: order[kv[0]])),
        expected_value=dict(sorted(expected.items(), key=lambda kv: order[kv[0]])),
    )

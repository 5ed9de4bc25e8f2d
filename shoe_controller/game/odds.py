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

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import cache
from typing import Any, Final

import numpy as np

from shoe_controller.game.cards import ALL_CARDS, Card, parse_card

__all__ = [
    "BETS",
    "DEFAULT_PAYTABLE",
    "Analysis",
    "CompositionError",
    "Outcome",
    "analyse",
    "bet_payout",
    "outcome_probabilities",
    "remaining_counts",
    "shoe_counts",
]

#: Every bet of DESIGN.md, in display order.
BETS: Final = (
    "player",
    "banker",
    "tie",
    "player_pair",
    "banker_pair",
    "either_pair",
    "perfect_pair",
    "player_natural",
    "banker_natural",
    "player_bonus",
    "banker_bonus",
    "lucky_six",
    "lucky_six_2",
    "lucky_six_3",
    "lucky_seven",
    "lucky_seven_2",
    "lucky_seven_3",
    "super_lucky_seven",
)

#: Net win per unit staked, DESIGN.md's numbers. Used when no paytable is given; the
#: table's configured paytable (``Rules.paytable``) has the same shape and wins.
DEFAULT_PAYTABLE: Final[Mapping[str, Any]] = {
    "player": 1,
    "banker": 0.95,  # commission mode
    "banker_no_commission": 1,
    "banker_no_commission_six": 0.5,  # no-commission: a Banker win with 6 pays half
    "tie": 8,
    "player_pair": 11,
    "banker_pair": 11,
    "either_pair": 5,
    "perfect_pair": 25,
    "player_natural": 3.5,
    "banker_natural": 3.5,
    # bonus: natural win 1, natural tie push, non-natural win by margin 9..4
    "bonus_natural_win": 1,
    "bonus_margin": {9: 30, 8: 10, 7: 6, 6: 4, 5: 2, 4: 1},
    "lucky_six": {2: 12, 3: 20},  # by the number of Banker cards
    "lucky_six_2": 22,
    "lucky_six_3": 50,
    "lucky_seven": {2: 6, 3: 15},  # by the number of Player cards
    "lucky_seven_2": 15,
    "lucky_seven_3": 30,
    "super_lucky_seven": {4: 30, 5: 40, 6: 100},  # by the number of cards in the round
}


class CompositionError(ValueError):
    """A composition that cannot be analysed (negative counts, too few cards)."""


@dataclass(frozen=True, slots=True)
class Outcome:
    """What every non-pair bet depends on: final totals and number of cards per hand.

    A natural is a two-card 8 or 9; it ends the round with two cards each.

    >>> o = Outcome(7, 6, 3, 2)
    >>> o.winner, o.player_natural, o.banker_natural
    ('player', False, False)
    """

    player_total: int
    banker_total: int
    player_cards: int
    banker_cards: int

    @property
    def winner(self) -> str:
        if self.player_total > self.banker_total:
            return "player"
        if self.banker_total > self.player_total:
            return "banker"
        return "tie"

    @property
    def player_natural(self) -> bool:
        return self.player_cards == 2 and self.player_total >= 8

    @property
    def banker_natural(self) -> bool:
        return self.banker_cards == 2 and self.banker_total >= 8


def _exact(x: Any) -> Fraction:
    # 0.95 must mean 19/20, not the binary float nearest to it.
    return x if isinstance(x, Fraction) else Fraction(str(x))


def _tier(table: Any, key: int) -> Fraction | None:
    value = table.get(key) if isinstance(table, Mapping) else table.get(str(key))
    return None if value is None else _exact(value)


def _bonus(paytable: Mapping[str, Any], mine: int, theirs: int, natural: bool) -> Fraction:
    if natural:
        if mine > theirs:
            return _exact(paytable["bonus_natural_win"])
        return Fraction(0) if mine == theirs else Fraction(-1)
    if mine > theirs:
        won = _tier(paytable["bonus_margin"], mine - theirs)
        return won if won is not None else Fraction(-1)
    return Fraction(-1)


def bet_payout(
    bet: str,
    outcome: Outcome,
    paytable: Mapping[str, Any] = DEFAULT_PAYTABLE,
    commission: bool = True,
) -> Fraction:
    """Net result per unit staked on ``bet`` for a value ``outcome`` (not the pair bets).

    >>> bet_payout("banker", Outcome(3, 6, 3, 2), commission=False)
    Fraction(1, 2)
    >>> bet_payout("player_bonus", Outcome(9, 0, 3, 3))
    Fraction(30, 1)
    >>> bet_payout("super_lucky_seven", Outcome(7, 6, 3, 3))
    Fraction(100, 1)
    """
    p, b, n_p, n_b = (
        outcome.player_total,
        outcome.banker_total,
        outcome.player_cards,
        outcome.banker_cards,
    )
    winner = outcome.winner
    lose = Fraction(-1)
    if bet == "player":
        return {"player": _exact(paytable["player"]), "tie": Fraction(0)}.get(winner, lose)
    if bet == "banker":
        if winner == "tie":
            return Fraction(0)
        if winner == "player":
            return lose
        if commission:
            return _exact(paytable["banker"])
        if b == 6:
            return _exact(paytable["banker_no_commission_six"])
        return _exact(paytable["banker_no_commission"])
    if bet == "tie":
        return _exact(paytable["tie"]) if winner == "tie" else lose
    if bet == "player_natural":
        return _exact(paytable["player_natural"]) if outcome.player_natural else lose
    if bet == "banker_natural":
        return _exact(paytable["banker_natural"]) if outcome.banker_natural else lose
    natural = outcome.player_natural or outcome.banker_natural
    if bet == "player_bonus":
        return _bonus(paytable, p, b, natural)
    if bet == "banker_bonus":
        return _bonus(paytable, b, p, natural)
    if bet in ("lucky_six", "lucky_six_2", "lucky_six_3"):
        if winner != "banker" or b != 6:
            return lose
        if bet == "lucky_six":
            won = _tier(paytable["lucky_six"], n_b)
            return lose if won is None else won
        wanted = 2 if bet == "lucky_six_2" else 3
        return _exact(paytable[bet]) if n_b == wanted else lose
    if bet in ("lucky_seven", "lucky_seven_2", "lucky_seven_3"):
        if winner != "player" or p != 7:
            return lose
        if bet == "lucky_seven":
            won = _tier(paytable["lucky_seven"], n_p)
            return lose if won is None else won
        wanted = 2 if bet == "lucky_seven_2" else 3
        return _exact(paytable[bet]) if n_p == wanted else lose
    if bet == "super_lucky_seven":
        if p == 7 and b == 6:
            won = _tier(paytable["super_lucky_seven"], n_p + n_b)
            return lose if won is None else won
        return lose
    raise KeyError(f"{bet!r} is not a value bet (pair bets have closed forms)")


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


def _banker_draws(banker: int, player_third: int | None) -> bool:
    if player_third is None:
        return banker <= 5
    if banker <= 2:
        return True
    return {
        3: player_third != 8,
        4: 2 <= player_third <= 7,
        5: 4 <= player_third <= 7,
        6: 6 <= player_third <= 7,
    }.get(banker, False)


def _outcome_index(p: int, b: int, n_p: int, n_b: int) -> int:
    return ((p * 10 + b) * 2 + (n_p - 2)) * 2 + (n_b - 2)


#: All 400 outcomes, in index order.
OUTCOMES: Final = tuple(
    Outcome(p, b, n_p, n_b) for p in range(10) for b in range(10) for n_p in (2, 3)
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
        if p >= 8 or b >= 8 or (p >= 6 and b >= 6):  # natural, or both stand
            four[k] = _outcome_index(p, b, 2, 2)
        elif p >= 6:  # Player stands on 6-7; Banker (0-5) draws
            for y in range(10):
                five[k, y] = _outcome_index(p, (b + y) % 10, 2, 3)
        else:  # Player draws x
            for x in range(10):
                if _banker_draws(b, x):
                    for y in range(10):
                        six[k, x, y] = _outcome_index((p + x) % 10, (b + y) % 10, 3, 3)
                else:
                    five[k, x] = _outcome_index((p + x) % 10, b, 3, 2)
    bins = np.concatenate([four, five.ravel(), six.ravel()])
    leaves = _Reduction.build(np.arange(bins.size), bins, unused + 1)
    return _Plan(first, same, s0, s1, s2, leaves)


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
    # int64 is exact while every partial sum stays below the total mass N(N-1)...(N-5)
    # and every intermediate product below 2**63; otherwise use Python integers.
    dtype: Any = np.int64 if denominator < 2**58 else object
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


@cache
def _payout_classes(
    paytable_key: tuple[tuple[str, Any], ...], commission: bool
) -> dict[str, tuple[tuple[Fraction, np.ndarray], ...]]:
    """bet -> ((payout, mask over outcomes), ...): one row per distinct payout."""
    paytable = {k: dict(v) if isinstance(v, tuple) else v for k, v in paytable_key}
    classes: dict[str, tuple[tuple[Fraction, np.ndarray], ...]] = {}
    for bet in BETS:
        if bet in ("player_pair", "banker_pair", "either_pair", "perfect_pair"):
            continue
        pays = [bet_payout(bet, o, paytable, commission) for o in OUTCOMES]
        classes[bet] = tuple(
            (value, np.array([p == value for p in pays])) for value in sorted(set(pays))
        )
    return classes


def _freeze(paytable: Mapping[str, Any]) -> tuple[tuple[str, Any], ...]:
    return tuple(
        sorted(
            (k, tuple(sorted(v.items())) if isinstance(v, Mapping) else v)
            for k, v in paytable.items()
        )
    )


def analyse(
    counts: Sequence[int],
    paytable: Mapping[str, Any] | None = None,
    commission: bool = True,
) -> Analysis:
    """Exact probabilities and expected values of every bet for the next round.

    ``counts``: cards left, indexed by ``Card.index`` (:func:`remaining_counts`).
    ``paytable``: net win per unit staked, shaped like :data:`DEFAULT_PAYTABLE` (missing
    keys take the default). ``commission``: Banker pays 0.95, else 1 and 0.5 on a six.

    >>> a = analyse(shoe_counts(8), commission=False)
    >>> round(float(a.house_edge["banker"]) * 100, 4)
    1.4581
    """
    counts = _checked(counts)
    table = dict(DEFAULT_PAYTABLE) | dict(paytable or {})
    numerators, denominator = _outcome_numerators(_value_counts(counts))
    sums = {
        bet: tuple((value, int(numerators[mask].sum())) for value, mask in rows)
        for bet, rows in _payout_classes(_freeze(table), commission).items()
    }
    expected: dict[str, Fraction] = {}
    probabilities: dict[str, Fraction] = {}
    for bet, rows in sums.items():
        expected[bet] = Fraction(sum(v * x for v, x in rows), denominator)
        probabilities[bet] = Fraction(sum(x for v, x in rows if v > 0), denominator)

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
        expected[bet] = p * (_exact(table[bet]) + 1) - 1
    order = {bet: i for i, bet in enumerate(BETS)}
    return Analysis(
        cards=n,
        commission=commission,
        probabilities=dict(sorted(probabilities.items(), key=lambda kv: order[kv[0]])),
        expected_value=dict(sorted(expected.items(), key=lambda kv: order[kv[0]])),
    )

"""Exact odds of the insurance side game: the probability of an insured event given the
cards shown and what is left in the shoe, and the house edge of each offer.

Everything is counted exactly: every way the unseen cards can fall is weighted by the
number of cards of each value left (drawing without replacement), in integers, with
one final division into a :class:`~fractions.Fraction`. Cards not shown to the table
(a hand not yet revealed, the cards still in the shoe) are all "unseen": from a bettor's
point of view they are one pool, whatever their order.

>>> pool = fresh_pool(8)
>>> p = insured_probability("tie", player=None, banker=(4, 5), pool=remove(pool, (4, 5)))
>>> float(p)      # Banker shows 9, Player unrevealed: chance of a tie   # doctest: +ELLIPSIS
0.095...
>>> edge = house_edge(p, 8.0)
>>> round(float(edge), 4)
0.1442
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from functools import lru_cache

from shoe_controller.game.insurance import InsuranceConfig, InsuranceRow, score_spec
from shoe_controller.game.tableau import BANKER_DRAWS

__all__ = [
    "Pool",
    "fresh_pool",
    "house_edge",
    "insured_probability",
    "outcome_weights",
    "remove",
    "row_report",
]

#: Cards left of each baccarat value 0-9 (10/J/Q/K are value 0).
Pool = tuple[int, ...]

_WINNERS = ("player", "banker", "tie")


def fresh_pool(decks: int) -> Pool:
    """A full shoe by value: 16 cards of value 0 per deck, 4 of each other value.

    >>> fresh_pool(1)
    (16, 4, 4, 4, 4, 4, 4, 4, 4, 4)
    """
    return (16 * decks, *([4 * decks] * 9))


def remove(pool: Pool, values: Sequence[int]) -> Pool:
    """The pool without these card values; ValueError if a value is not left.

    >>> remove(fresh_pool(1), (0, 0, 9))
    (14, 4, 4, 4, 4, 4, 4, 4, 4, 3)
    """
    out = list(pool)
    for v in values:
        if out[v] <= 0:
            raise ValueError(f"no card of value {v} left in the pool")
        out[v] -= 1
    return tuple(out)


def _winner(pt: int, bt: int) -> int:
    return 0 if pt > bt else 1 if bt > pt else 2


def _take(pool: Pool, v: int) -> Pool:
    return (*pool[:v], pool[v] - 1, *pool[v + 1:])


# Weights are kept on one scale so that branches of different lengths add up: from a
# pool of n unseen cards, every branch counts the ordered ways to draw the next TWO
# cards (n * (n - 1) in all), whether it uses none, one or both of them.


@lru_cache(maxsize=100_000)
def _after_third(pt: int, bt: int, p3: int, pool: Pool) -> tuple[int, int, int]:
    """(player, banker, tie) weights once Player has its third card (value ``p3``, total
    ``pt``), Banker ``bt`` on two cards; scale: the cards left in ``pool``."""
    n = sum(pool)
    w = [0, 0, 0]
    if BANKER_DRAWS[bt][p3]:
        for v, c in enumerate(pool):
            if c:
                w[_winner(pt, (bt + v) % 10)] += c
    else:
        w[_winner(pt, bt)] = n
    return (w[0], w[1], w[2])


@lru_cache(maxsize=100_000)
def _from_four(pt: int, bt: int, pool: Pool) -> tuple[int, int, int]:
    """(player, banker, tie) weights from two-card totals, on the two-draw scale."""
    n = sum(pool)
    w = [0, 0, 0]
    if pt >= 8 or bt >= 8:
        w[_winner(pt, bt)] = n * (n - 1)
    elif pt <= 5:  # Player draws
        for v, c in enumerate(pool):
            if c:
                sub = _after_third((pt + v) % 10, bt, v, _take(pool, v))
                w[0] += c * sub[0]
                w[1] += c * sub[1]
                w[2] += c * sub[2]
    elif BANKER_DRAWS[bt][10]:  # Player stood, Banker draws
        for v, c in enumerate(pool):
            if c:
                w[_winner(pt, (bt + v) % 10)] += c * (n - 1)
    else:
        w[_winner(pt, bt)] = n * (n - 1)
    return (w[0], w[1], w[2])


def _pairs(pool: Pool):
    """(total, weight, pool after) for every ordered two-card draw from ``pool``."""
    for a, na in enumerate(pool):
        if not na:
            continue
        after_a = _take(pool, a)
        for b, nb in enumerate(after_a):
            if nb:
                yield (a + b) % 10, na * nb, _take(after_a, b)


def outcome_weights(player: Sequence[int] | None, banker: Sequence[int] | None, pool: Pool
                    ) -> tuple[int, int, int]:
    """Integer weights of (Player wins, Banker wins, tie) given the shown cards.

    ``player``: Player's shown card values (2, or 3 at the 3/2 stage), or None while
    Player's two cards are unrevealed; ``banker`` likewise (2 values, or None).
    ``pool``: the unseen cards by value (an unrevealed hand's cards are among them).

    >>> outcome_weights((4, 5), (3, 3), fresh_pool(1))[1:]   # Player 9 natural
    (0, 0)
    """
    if player is None and banker is None:
        raise ValueError("at least one hand must be shown")
    if player is not None and len(player) == 3:
        if banker is None or len(banker) != 2:
            raise ValueError("at the 3/2 stage Banker's two cards are shown")
        return _after_third(sum(player) % 10, sum(banker) % 10, player[2], pool)
    if player is not None and banker is not None:
        return _from_four(sum(player) % 10, sum(banker) % 10, pool)
    w = [0, 0, 0]
    shown = sum(player if player is not None else banker) % 10  # type: ignore[arg-type]
    for hidden, n, after in _pairs(pool):
        pt, bt = (hidden, shown) if player is None else (shown, hidden)
        sub = _from_four(pt, bt, after)
        w[0] += n * sub[0]
        w[1] += n * sub[1]
        w[2] += n * sub[2]
    return (w[0], w[1], w[2])


def insured_probability(insures: str, player: Sequence[int] | None,
                        banker: Sequence[int] | None, pool: Pool) -> Fraction:
    """Exact probability of the insured event (``player``/``banker`` wins, ``tie``) given
    the shown card values and the unseen pool.

    >>> insured_probability("banker", (3, 4), (2, 2), fresh_pool(8))   # P 7 stands, B 4
    Fraction(...)
    """
    w = outcome_weights(player, banker, pool)
    return Fraction(w[_WINNERS.index(insures)], sum(w))


def house_edge(probability: Fraction, odds: float) -> Fraction:
    """The house edge of an insurance paying ``odds`` on an event of this probability:
    minus the bettor's expected net per unit.

    >>> house_edge(Fraction(1, 10), 8.0)
    Fraction(1, 10)
    """
    return -(probability * Fraction(odds) - (1 - probability))


def row_report(cfg: InsuranceConfig, pool: Pool) -> list[dict]:
    """For each row of the insurance table: the exact probability of its insured event
    when it is offered (averaged over every deal that reaches the row's situation, with
    the offer rules of the shoe: at 3/2 and with both hands shown at 2/2, a card must
    still be to come), and the house edge at the row's odds.

    >>> rows = row_report(InsuranceConfig(), fresh_pool(8))
    >>> len(rows), rows[0]["side"], rows[0]["insures"]
    (24, 'banker', 'player')
    """
    return [_row_stats(row, pool) for row in cfg.rows]


def _row_stats(row: InsuranceRow, pool: Pool) -> dict:
    p_spec, b_spec = score_spec(row.player), score_spec(row.banker)
    target = _WINNERS.index(row.insures)
    hit = total = 0
    # enumerate Player's and Banker's two cards (ordered), then the rest
    for p1, np1 in enumerate(pool):
        if not np1:
            continue
        pool1 = _take(pool, p1)
        for b1, nb1 in enumerate(pool1):
            if not nb1:
                continue
            pool2 = _take(pool1, b1)
            for p2v, np2 in enumerate(pool2):
                if not np2:
                    continue
                pool3 = _take(pool2, p2v)
                for b2v, nb2 in enumerate(pool3):
                    if not nb2:
                        continue
                    pool4 = _take(pool3, b2v)
                    weight = np1 * nb1 * np2 * nb2
                    pt, bt = (p1 + p2v) % 10, (b1 + b2v) % 10
                    h, t = _situation(row.stage, p_spec, b_spec, pt, bt, pool4, target)
                    hit += weight * h
                    total += weight * t
    if total == 0:
        return {"side": row.side, "stage": row.stage, "player": row.player,
                "banker": row.banker, "insures": row.insures, "odds": row.odds,
                "probability": None, "house_edge": None}
    p = Fraction(hit, total)
    return {"side": row.side, "stage": row.stage, "player": row.player, "banker": row.banker,
            "insures": row.insures, "odds": row.odds, "probability": p,
            "house_edge": house_edge(p, row.odds)}


def _in(spec: tuple[int, int] | None, total: int) -> bool:
    return spec is None or spec[0] <= total <= spec[1]


def _situation(stage: str, p_spec, b_spec, pt: int, bt: int, pool: Pool, target: int
               ) -> tuple[int, int]:
    """(weight of the insured event, weight of the offer being made) for one four-card
    start, on the two-draw scale of the unseen ``pool``."""
    n = sum(pool)
    if stage == "2/2":
        if not (_in(p_spec, pt) and _in(b_spec, bt)):
            return 0, 0
        both = p_spec is not None and b_spec is not None
        no_card_to_come = pt >= 8 or bt >= 8 or (pt >= 6 and not BANKER_DRAWS[bt][10])
        if both and no_card_to_come:
            return 0, 0  # both shown and nothing to come: not offered
        return _from_four(pt, bt, pool)[target], n * (n - 1)
    # 3/2: Player drew a third card; both hands shown; Banker still to act
    if pt >= 6 or bt >= 8 or pt >= 8:
        return 0, 0
    hit = seen = 0
    for v, c in enumerate(pool):
        p3t = (pt + v) % 10
        if not c or not (_in(p_spec, p3t) and _in(b_spec, bt)) or not BANKER_DRAWS[bt][v]:
            continue
        sub = _after_third(p3t, bt, v, _take(pool, v))
        hit += c * sub[target]
        seen += c * (n - 1)
    return hit, seen

"""game.odds against deliberately simple references, for the survivors of the session-6
mutation run (issue 15).

- Big shoes of a few value classes: the exact outcome distribution by plain recursion
  over the cards drawn (tests/support/baccarat_ref.py deals the round), on both of the
  module's integer paths: int64 (a denominator between 2**53 and 2**61, where a float
  would round) and Python integers (beyond 2**61).
- The pair bets on a tiny shoe holding four or more identical cards, by enumerating every
  ordered first four cards (the closed form's "both hands pair from one group" term).
- The refusals word for word, the Analysis fields and the bets' display order, and
  prepare() building the tables analyse uses.

game.odds is imported inside the tests, not at the top of this file: the 400 outcomes are
built at import, so a mutant that makes that raise fails a test here instead of only
breaking the collection of the other odds tests.
"""

from __future__ import annotations

import importlib
import itertools
from collections import Counter
from fractions import Fraction

import pytest

from tests.support import baccarat_ref as ref

#: one card code standing for each value class
CODE = {0: "KS", 1: "AS", **{v: f"{v}S" for v in range(2, 10)}}


def _odds():
    return importlib.import_module("shoe_controller.game.odds")


def _counts(by_value: dict[int, int]) -> list[int]:
    from shoe_controller.game.cards import parse_card

    counts = [0] * 52
    for v, n in by_value.items():
        counts[parse_card(CODE[v]).index] = n
    return counts


def _reference(by_value: dict[int, int]) -> dict[tuple[int, int, int, int], Fraction]:
    """P(player total, banker total, player cards, banker cards): draw a value at a time
    (probability count / cards left) until the reference's round is complete."""
    dist: Counter = Counter()

    def rec(left: dict[int, int], drawn: list[int], prob: Fraction) -> None:
        try:
            p, b = ref.deal_round([CODE[v] for v in drawn])
        except StopIteration:  # the round needs another card
            n = sum(left.values())
            for v, c in left.items():
                if c:
                    rec({**left, v: c - 1}, [*drawn, v], prob * Fraction(c, n))
            return
        dist[(ref.total(p), ref.total(b), len(p), len(b))] += prob

    rec(dict(by_value), [], Fraction(1))
    return {k: v for k, v in dist.items() if v}


#: 900 cards: N(N-1)...(N-5) ~ 5e17, above 2**53 and below the int64 path's 2**61;
#: 3,000 cards: ~7e20, the Python-integer path
BIG_SHOES = [{0: 350, 3: 200, 6: 200, 9: 150}, {0: 1200, 2: 800, 7: 600, 8: 400}]


@pytest.mark.parametrize("by_value", BIG_SHOES, ids=["int64", "python-int"])
def test_big_shoes_of_few_values_are_exact(by_value) -> None:
    odds = _odds()
    counts = _counts(by_value)
    n = sum(by_value.values())
    want = _reference(by_value)
    got = odds.outcome_probabilities(counts)
    assert {(o.player_total, o.banker_total, o.player_cards, o.banker_cards): p
            for o, p in got.items()} == want
    a = odds.analyse(counts)
    player = sum(p for (pt, bt, _, _), p in want.items() if pt > bt)
    banker = sum(p for (pt, bt, _, _), p in want.items() if bt > pt)
    tie = sum(p for (pt, bt, _, _), p in want.items() if pt == bt)
    assert (a.probabilities["player"], a.probabilities["banker"], a.probabilities["tie"]) == (
        player, banker, tie)
    # DESIGN.md's paytable: Player 1:1, Banker 0.95:1 (commission), Tie 8:1, ties push
    assert a.expected_value["player"] == player - banker
    assert a.expected_value["banker"] == Fraction(19, 20) * banker - player
    assert a.expected_value["tie"] == 8 * tie - (1 - tie)
    assert (a.cards, a.commission) == (n, True)


def test_pair_bets_with_four_or_more_identical_cards() -> None:
    odds = _odds()
    from shoe_controller.game.cards import parse_cards

    # six aces of spades, four kings of diamonds, a king of clubs, two sevens
    cards = parse_cards("AS AS AS AS AS AS KD KD KD KD KC 7H 7C")
    counts = [0] * 52
    for c in cards:
        counts[c.index] += 1
    wins: Counter = Counter()
    total = 0
    # the pair bets depend on the first four cards only: P1 B1 P2 B2
    for p1, b1, p2, b2 in itertools.permutations(range(len(cards)), 4):
        pp = cards[p1].rank == cards[p2].rank
        bp = cards[b1].rank == cards[b2].rank
        perfect = cards[p1] == cards[p2] or cards[b1] == cards[b2]  # rank and suit
        wins["player_pair"] += pp
        wins["banker_pair"] += bp
        wins["either_pair"] += pp or bp
        wins["perfect_pair"] += perfect
        total += 1
    a = odds.analyse(counts)
    pays = {"player_pair": 11, "banker_pair": 11, "either_pair": 5, "perfect_pair": 25}
    for bet, pay in pays.items():
        p = Fraction(wins[bet], total)
        assert a.probabilities[bet] == p, bet
        assert a.expected_value[bet] == p * pay - (1 - p), bet


def test_refusals_name_the_problem() -> None:
    odds = _odds()
    with pytest.raises(odds.CompositionError) as info:
        odds.shoe_counts(0)
    assert str(info.value) == "a shoe needs at least one deck, got 0"
    counts = [0] * 52
    counts[0], counts[13], counts[20], counts[51] = -1, 7, -2, 3  # AS -1, AH 7, 8H -2, KC 3
    for call in (odds.analyse, odds.outcome_probabilities):
        with pytest.raises(odds.CompositionError) as info:
            call(counts)
        # only the negative counts are named, in card order, one space apart
        assert str(info.value) == "negative count for AS 8H"


def test_the_analysis_lists_every_bet_in_display_order() -> None:
    odds = _odds()
    for commission in (True, False):
        a = odds.analyse(odds.shoe_counts(1), commission=commission)
        assert (a.cards, a.commission) == (52, commission)
        assert list(a.probabilities) == list(odds.BETS)
        assert list(a.expected_value) == list(odds.BETS)
        assert list(a.house_edge) == list(odds.BETS)
    # DESIGN.md's order: the main bets, then the side bets as listed there
    assert list(odds.BETS[:6]) == ["player", "banker", "tie", "player_pair", "banker_pair",
                                   "either_pair"]


def test_prepare_builds_the_tables_analyse_uses() -> None:
    odds = _odds()
    from shoe_controller.game.rules import Paytable

    tables = odds._payout_classes
    tables.cache_clear()
    assert odds.prepare() is None
    assert tables.cache_info().currsize == 1
    odds.analyse(odds.shoe_counts(8))  # the default table, with commission: built already
    assert (tables.cache_info().currsize, tables.cache_info().hits) == (1, 1)
    odds.prepare(Paytable(tie=9), commission=False)
    odds.analyse(odds.shoe_counts(8), paytable=Paytable(tie=9), commission=False)
    assert (tables.cache_info().currsize, tables.cache_info().hits) == (2, 2)

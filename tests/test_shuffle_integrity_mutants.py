"""shuffle_integrity against deliberately simple references, for the survivors of the
session-6 mutation run (issue 15): the deck-order relation built at import, runs that
resume after an unread card, the adjacency statistic on four cards, the empty history's
dtypes, duplicate fingerprints added in one shoe, and ``codes``.

The module is imported inside the tests, not at the top of this file: a mutant that makes
its import raise (the relation is built at import) then fails a test here instead of
only breaking the collection of other files.
"""

from __future__ import annotations

import importlib
import itertools
import math
import random
import statistics

RANKS = "A23456789TJQK"
SUITS = "SHDC"
DECK = [r + s for s in SUITS for r in RANKS]


def _module():
    return importlib.import_module("shoe_controller.game.shuffle_integrity")


def test_deck_order_is_same_rank_or_same_suit_and_next_rank() -> None:
    # the module docstring's words: the same rank, or the same suit and a neighbouring
    # rank (no wrap: A is next to 2 only; K to Q only)
    si = _module()
    want = {
        a: {b for b in DECK
            if a[0] == b[0] or (a[1] == b[1] and abs(RANKS.index(a[0]) - RANKS.index(b[0])) == 1)}
        for a in DECK
    }
    assert {a: set(v) for a, v in si.DECK_ORDER.items()} == want
    assert len(si.DECK_ORDER["AS"]) == 4 + 1 and len(si.DECK_ORDER["7H"]) == 4 + 2


def _runs(seq, related):
    """Longest run, split at every unread card (a plain second implementation)."""
    best = 0
    pieces, piece = [], []
    for c in seq:
        if c is None:
            pieces.append(piece)
            piece = []
        else:
            piece.append(c)
    pieces.append(piece)
    for part in pieces:
        i = 0
        while i < len(part):
            j = i + 1
            while j < len(part) and related(part[j - 1], part[j]):
                j += 1
            best = max(best, j - i)
            i = j
    return best


def test_runs_go_on_after_an_unread_card() -> None:
    si = _module()
    # the longest run comes after the unread card: it is still counted
    assert si.longest_order_run(["AS", None, "2S", "3S", "4S"]) == 3
    assert si.longest_suit_run(["AS", None, "2H", "9H", "KH", "QH"]) == 4

    def order(a, b):
        return a[0] == b[0] or (a[1] == b[1] and abs(RANKS.index(a[0]) - RANKS.index(b[0])) == 1)

    def suit(a, b):
        return a[1] == b[1]

    rng = random.Random(15)
    # few distinct cards, so runs are common; unread cards sprinkled in, runs of them too
    pool = ["AS", "2S", "3S", "2H", "AH", "KC", None]
    for _ in range(300):
        seq = [rng.choice(pool) for _ in range(rng.randint(0, 14))]
        assert si.longest_order_run(seq) == _runs(seq, order), seq
        assert si.longest_suit_run(seq) == _runs(seq, suit), seq


def test_adjacency_statistic_of_four_and_five_cards_is_exact() -> None:
    si = _module()
    # four cards is the smallest shoe with a statistic (q4 needs n - 3 > 0)
    for cards in (["AS", "2S", "3H", "KD"], ["AS", "AS", "2S", "9C"],
                  ["AS", "2S", "3S", "KH", "7D"]):
        counts = [sum(1 for a, b in itertools.pairwise(order) if b in si.DECK_ORDER[a])
                  for order in itertools.permutations(cards)]
        t = si.adjacency_test(cards, si.DECK_ORDER)
        assert t.pairs == len(cards) - 1
        assert math.isclose(t.mean, statistics.fmean(counts), abs_tol=1e-12), cards
        assert math.isclose(t.sd, statistics.pstdev(counts), abs_tol=1e-12), cards


def test_an_empty_history_keeps_64_bit_fingerprints_exact() -> None:
    import numpy as np

    si = _module()
    # the protection starts every table from FingerprintSet(): two fingerprints that
    # differ only in their low bits (float64 would merge them) stay two
    top = 2**64 - 1
    s = si.FingerprintSet().union([top, top - 1, 2**63 + 1], shoe=1)
    assert len(s) == 3
    assert (s.shoes_of(top), s.shoes_of(top - 1), s.shoes_of(2**63)) == ((1,), (1,), ())
    # the arrays are the documented ones: uint64 fingerprints, int64 shoe numbers
    empty = si.FingerprintSet()
    assert (empty.fps.dtype, empty.shoes.dtype) == (np.uint64, np.int64)
    assert (s.fps.dtype, s.shoes.dtype) == (np.uint64, np.int64)


def test_a_window_seen_twice_in_one_shoe_is_stored_once() -> None:
    si = _module()
    # a shoe can repeat an 8-card window (a short cut): one (fingerprint, shoe) pair
    s = si.FingerprintSet.of([(5, 1), (9, 1)])
    t = s.union([7, 7, 9, 9], shoe=2)
    assert (t.shoes_of(5), t.shoes_of(7), t.shoes_of(9), len(t)) == ((1,), (2,), (1, 2), 4)
    u = t.union([7, 11, 11], shoe=2)
    assert (u.shoes_of(7), u.shoes_of(11), len(u)) == ((2,), (2,), 5)


def test_codes_are_the_canonical_card_codes() -> None:
    si = _module()
    assert si.codes("10s qh  AD\tkc") == ["TS", "QH", "AD", "KC"]
    assert si.codes("") == []

"""Edge-sorting tests on constructed shoes."""

from __future__ import annotations

import random

import pytest

from shoe_controller.game.edge_sorting import chi2_sf, edge_sorting_test


def shoe_ranks(seed, n=400):
    ranks = [r for r in range(1, 14) for _ in range(32)]
    random.Random(seed).shuffle(ranks)
    return ranks[:n]


@pytest.mark.parametrize(
    ("x", "df", "p"),
    [(3.841458820694124, 1, 0.05), (6.6348966010212145, 1, 0.01), (26.21696730553585, 12, 0.01),
     (9.21034037197618, 2, 0.01), (11.344866730144373, 3, 0.01)],
)
def test_chi_square_tail_matches_known_quantiles(x, df, p):
    assert chi2_sf(x, df) == pytest.approx(p, rel=1e-9)


def test_key_cards_turned_one_way_are_flagged():
    ranks = shoe_ranks(1)
    records = [(r, "down" if r in (6, 7, 8, 9) else "up") for r in ranks]
    t = edge_sorting_test(records)
    assert t.key_p is not None and t.key_p < 1e-20
    assert t.flagged(1e-7)


def test_other_dependence_is_caught_by_the_rank_table():
    rng = random.Random(2)
    # aces, twos and kings turned down, the rest mostly up: not the key ranks
    records = [(r, "down" if r in (1, 2, 13) or rng.random() < 0.2 else "up")
               for r in shoe_ranks(2)]
    t = edge_sorting_test(records)
    assert t.ranks_p is not None and t.ranks_p < 1e-7


@pytest.mark.parametrize("p_down", [0.5, 0.2])
def test_independent_orientation_is_not_flagged(p_down):
    rng = random.Random(3)
    for seed in range(5):
        records = [(r, "down" if rng.random() < p_down else "up") for r in shoe_ranks(seed)]
        t = edge_sorting_test(records)
        assert not t.flagged(1e-7)
        assert t.key_p is not None and t.key_p > 1e-5


def test_no_test_without_enough_data():
    assert edge_sorting_test([(r, "up") for r in shoe_ranks(4)]).key_p is None  # one way only
    few = [(6, "down"), (2, "up"), (7, "down"), (3, "up")]
    t = edge_sorting_test(few)
    assert t.key_p is None and t.ranks_p is None and not t.flagged(0.5)
    rare = [(r, "down" if i % 50 == 0 else "up") for i, r in enumerate(shoe_ranks(5))]
    assert edge_sorting_test(rare).ranks_p is None  # expected down counts < 3 per rank

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


# -- against a second, deliberately simple statement (issue 15's campaign) -------------

def series_chi2_sf(x: float, df: int) -> float:
    """The chi-square tail from its definition, not the module's closed forms:
    1 - P(df/2, x/2) with the regularised lower incomplete gamma's power series
    P(s, z) = z^s e^-z / Gamma(s + 1) * sum_n z^n / ((s + 1)...(s + n))."""
    import math

    s, z = df / 2, x / 2
    term = total = 1.0
    n = 0
    while term > 1e-18 * total:
        n += 1
        term *= z / (s + n)
        total += term
    return 1 - math.exp(s * math.log(z) - z - math.lgamma(s + 1)) * total


@pytest.mark.parametrize("df", range(1, 16))
@pytest.mark.parametrize("x", [0.3, 1.0, 2.5, 7.0, 12.0, 20.0])
def test_chi_square_tail_agrees_with_the_gamma_series_for_every_df(x, df):
    assert chi2_sf(x, df) == pytest.approx(series_chi2_sf(x, df), rel=1e-9, abs=1e-15)


def test_chi_square_tail_at_zero_and_below_is_one():
    for df in (1, 2, 3, 12):
        assert chi2_sf(0.0, df) == 1.0
        assert chi2_sf(-1.0, df) == 1.0


def pearson(table):
    """Pearson's chi-square by hand: sum over cells of (O - E)^2 / E, E = row x col / n."""
    n = sum(map(sum, table))
    rows = [sum(r) for r in table]
    cols = [sum(r[j] for r in table) for j in range(len(table[0]))]
    return sum((table[i][j] - rows[i] * cols[j] / n) ** 2 / (rows[i] * cols[j] / n)
               for i in range(len(table)) for j in range(len(table[0])))


def records(counts):
    """{rank: (up, down)} -> (rank, orientation) records."""
    return [(r, o) for r, (up, down) in counts.items()
            for o in ["up"] * up + ["down"] * down]


def test_statistics_and_p_values_of_a_hand_built_shoe():
    counts = {1: (10, 2), 6: (3, 9), 7: (4, 8), 9: (2, 10), 10: (11, 1), 13: (9, 3)}
    t = edge_sorting_test(records(counts))
    assert t.cards == 72
    ranks = [list(counts[r]) for r in sorted(counts)]
    assert t.ranks_chi2 == pytest.approx(pearson(ranks), rel=1e-12)
    assert t.ranks_p == pytest.approx(series_chi2_sf(pearson(ranks), 5), rel=1e-9)
    key = [[10 + 11 + 9, 2 + 1 + 3], [3 + 4 + 2, 9 + 8 + 10]]  # non-key, key (6-9)
    assert t.key_chi2 == pytest.approx(pearson(key), rel=1e-12)
    assert t.key_p == pytest.approx(series_chi2_sf(pearson(key), 1), rel=1e-9)
    # flagged exactly when a p-value is at most alpha
    smallest = min(t.ranks_p, t.key_p)
    assert t.flagged(smallest)
    assert not t.flagged(smallest * 0.999)


def test_an_expected_count_of_exactly_min_expected_is_enough():
    # 2 ranks x 6 cards, 6 down in all: every expected count is 6 * 6 / 12 = 3
    t = edge_sorting_test(records({6: (4, 2), 2: (2, 4)}))
    assert t.ranks_p is not None and t.key_p is not None
    assert t.ranks_chi2 == pytest.approx(pearson([[2, 4], [4, 2]]))
    assert t.key_chi2 == pytest.approx(t.ranks_chi2)
    # just above 3, nothing is computed; min_expected is the caller's
    assert edge_sorting_test(records({6: (4, 2), 2: (2, 4)}), min_expected=3.01).key_p is None
    assert edge_sorting_test(records({6: (4, 2), 2: (2, 4)}), min_expected=3.01).ranks_p is None
    assert edge_sorting_test(records({6: (4, 2), 2: (2, 4)}), min_expected=2.0).key_p is not None


def test_one_rank_only_gives_no_rank_test_but_the_key_table_needs_both_kinds():
    t = edge_sorting_test(records({7: (20, 20)}))
    assert t.cards == 40
    assert t.ranks_p is None  # one rank: no degree of freedom
    assert t.key_p is None  # no non-key card: no 2 x 2 table
    assert (t.ranks_chi2, t.key_chi2) == (0.0, 0)


def test_only_key_cards_of_both_orientations_with_other_ranks_absent():
    t = edge_sorting_test(records({6: (10, 10), 8: (10, 10)}))
    assert t.ranks_p == pytest.approx(1.0)  # no dependence at all among key ranks
    assert t.key_p is None



def test_one_orientation_only_is_no_test_whatever_min_expected():
    """All cards read one way: no test at all (and statistics 0), even with the smallest
    expected counts allowed; the card count is still reported."""
    for min_expected in (3.0, 1.0, 0.0):
        t = edge_sorting_test(records({6: (9, 0), 2: (7, 0)}), min_expected=min_expected)
        assert (t.cards, t.ranks_chi2, t.ranks_p, t.key_chi2, t.key_p) == (
            16, 0.0, None, 0.0, None)
    # and only key cards (no 2 x 2 table) stays without a key test at any min_expected
    t = edge_sorting_test(records({6: (5, 5), 8: (5, 5)}), min_expected=1.0)
    assert t.key_p is None and t.ranks_p is not None


def test_small_expected_cells_still_count_in_the_statistic():
    # one card down in all, and a rank with a single card: expected counts below 1
    counts = {6: (1, 0), 2: (10, 1), 9: (6, 0)}
    t = edge_sorting_test(records(counts))
    assert t.cards == 18
    assert t.ranks_chi2 == pytest.approx(pearson([list(counts[r]) for r in (2, 6, 9)]),
                                         rel=1e-12)
    assert t.ranks_chi2 > 0 and t.ranks_p is None  # far too few down cards for a p-value

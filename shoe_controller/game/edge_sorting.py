"""Edge sorting: does a card's orientation in the shoe depend on its rank?

An edge sorter gets the dealer to turn key cards (in baccarat the 6, 7, 8 and 9) one way
round; the camera reports each card's index as upright or upside down. In a shoe that
was not sorted, orientation is independent of rank, whatever the overall mix. Two
chi-square tests of independence on the dealt cards whose orientation was read:

- ``ranks``: the 13 x 2 table rank x orientation (12 degrees of freedom), for any
  dependence;
- ``key``: the 2 x 2 table key ranks (6-9) x orientation (1 degree of freedom), the
  powerful one against the classic attack.

A test is only computed when every expected cell count is at least ``min_expected``
(the chi-square approximation needs it; otherwise it reports nothing rather than
guess). The alert fires when a test's p-value is at most ``alpha`` (default 1e-7 per
evaluation; evaluated after every round, that is well under 1e-5 per shoe by the union
bound). ``bench/integrity.py`` measures the rate on fair shoes with various overall
orientation mixes.

>>> up = [(r, "up") for r in range(1, 14) for _ in range(20)]
>>> t = edge_sorting_test(up + [(r, "down") for r in range(1, 14) for _ in range(20)])
>>> round(t.key_chi2, 6), t.flagged(1e-7)
(0.0, False)
>>> sorted_shoe = [(r, "down" if 6 <= r <= 9 else "up") for r in range(1, 14) for _ in range(24)]
>>> sorted_shoe += [(r, "up") for r in range(1, 14) for _ in range(8)]
>>> edge_sorting_test(sorted_shoe).flagged(1e-7)
True
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

__all__ = ["KEY_RANKS", "EdgeSortingTest", "chi2_sf", "edge_sorting_test"]

#: The ranks edge sorters want to recognise in baccarat.
KEY_RANKS: Final = frozenset({6, 7, 8, 9})


def chi2_sf(x: float, df: int) -> float:
    """Survival function of the chi-square distribution (closed forms, any df >= 1).

    >>> round(chi2_sf(3.841458820694124, 1), 6), round(chi2_sf(21.02606981748307, 12), 6)
    (0.05, 0.05)
    >>> round(chi2_sf(19.67513757268249, 11), 6)
    0.05
    """
    if x <= 0:
        return 1.0
    if df % 2:
        # odd df: erfc plus a finite series
        total, term = 0.0, math.sqrt(2 * x / math.pi)
        for i in range(1, (df - 1) // 2 + 1):
            if i > 1:
                term *= x / (2 * i - 1)
            total += term
        return math.erfc(math.sqrt(x / 2)) + math.exp(-x / 2) * total
    half = x / 2
    term = total = 1.0
    for i in range(1, df // 2):
        term *= half / i
        total += term
    return math.exp(-half) * total


def _chi2(table: list[list[int]]) -> tuple[float, float]:
    """Pearson chi-square of a contingency table and its smallest expected count."""
    rows = [sum(r) for r in table]
    cols = [sum(c) for c in zip(*table, strict=True)]
    n = sum(rows)
    stat, smallest = 0.0, math.inf
    for i, r in enumerate(table):
        for j, observed in enumerate(r):
            expected = rows[i] * cols[j] / n
            smallest = min(smallest, expected)
            if expected > 0:
                stat += (observed - expected) ** 2 / expected
    return stat, smallest


@dataclass(frozen=True, slots=True)
class EdgeSortingTest:
    """Both chi-square tests; a p-value is None when the test could not be computed."""

    cards: int  # dealt cards with a known orientation
    ranks_chi2: float
    ranks_p: float | None
    key_chi2: float
    key_p: float | None

    def flagged(self, alpha: float) -> bool:
        return any(p is not None and p <= alpha for p in (self.ranks_p, self.key_p))


def edge_sorting_test(
    records: Iterable[tuple[int, str]], min_expected: float = 3.0
) -> EdgeSortingTest:
    """Test ``(rank, orientation)`` records (orientation ``"up"``/``"down"``).

    >>> edge_sorting_test([(6, "up"), (7, "down")]).key_p is None   # far too few cards
    True
    """
    ranks = [[0, 0] for _ in range(13)]
    for rank, orientation in records:
        ranks[rank - 1][orientation == "down"] += 1
    n = sum(sum(r) for r in ranks)
    key = [[0, 0], [0, 0]]
    for rank, (up, down) in enumerate(ranks, start=1):
        row = key[rank in KEY_RANKS]
        row[0] += up
        row[1] += down
    if n == 0 or min(sum(c) for c in zip(*ranks, strict=True)) == 0:
        return EdgeSortingTest(n, 0.0, None, 0.0, None)  # one orientation only: no test
    present = [r for r in ranks if sum(r)]
    ranks_chi2, ranks_min = _chi2(present)
    key_chi2, key_min = _chi2([r for r in key if sum(r)]) if all(map(sum, key)) else (0, 0)
    df = len(present) - 1
    ranks_p = chi2_sf(ranks_chi2, df) if ranks_min >= min_expected and df >= 1 else None
    key_p = chi2_sf(key_chi2, 1) if key_min >= min_expected else None
    return EdgeSortingTest(n, ranks_chi2, ranks_p, key_chi2, key_p)

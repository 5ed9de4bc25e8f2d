"""The reader's fast paths give exactly what the plain computations they replace give
(the speed work on the index reader must not change a single read): each is checked
against the plain numpy / OpenCV computation, on random and on rendered data."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from shoe_controller.sim import render
from shoe_controller.vision.index_glyphs import (
    find_regions,
    median_u8,
    percentile_u8,
    to_small,
)


def _arrays(seed: int, n: int) -> list[np.ndarray]:
    """8-bit arrays of many shapes and distributions: uniform, narrow (a paper's few
    grey levels, many ties), a noisy paper, a few values far apart."""
    rng = np.random.default_rng(seed)
    out = []
    for t in range(n):
        h, w = (int(v) for v in rng.integers(1, 48, 2))
        kind = t % 4
        if kind == 0:
            a = rng.integers(0, 256, (h, w))
        elif kind == 1:
            a = rng.integers(100, 106, (h, w))
        elif kind == 2:
            a = np.clip(rng.normal(180, 25, (h, w)), 0, 255)
        else:
            a = rng.choice(np.array([0, 37, 255]), (h, w))
        out.append(a.astype(np.uint8))
    return out


@pytest.mark.parametrize("q", [90, 50, 10, 99.5])
def test_percentile_u8_is_numpys(q: float) -> None:
    for a in _arrays(1, 1500):
        got = percentile_u8(a, q)
        assert type(got) is float
        assert got == float(np.percentile(a, q)), (a.shape, q)


def test_median_u8_is_numpys() -> None:
    for a in _arrays(2, 1500):
        for axis in (0, 1):
            want = np.median(a, axis=axis)
            got = median_u8(a, axis)
            assert got.dtype == want.dtype and np.array_equal(got, want), (a.shape, axis)
        if a.shape[1] > 1:  # a view into a larger image, as the reader passes them
            view = a[::2, 1:]
            assert np.array_equal(median_u8(view, 1), np.median(view, axis=1))


def test_regions_without_the_print_share_are_the_same_regions() -> None:
    """find_regions(ink_share=False) skips only the print share (1.0, printed: a region
    not measured is never taken for a plain card): every other field of every region
    is the same."""
    for i, label in enumerate(["QH", "CUT", "7S", "NONE", "TD", "CUT"]):
        frame, _ = render.render_frame(label, "classic", render.FULL, seed=40 + i)
        small = to_small(frame)
        level, full = find_regions(small, 5000.0, 2, 20.0)
        level2, fast = find_regions(small, 5000.0, 2, 20.0, ink_share=False)
        assert level == level2 and len(full) == len(fast)
        for a, b in zip(full, fast, strict=True):
            assert b.ink_share == 1.0 and 0.0 <= a.ink_share <= 1.0
            assert dataclasses.replace(b, ink_share=a.ink_share, faint_share=a.faint_share) == a

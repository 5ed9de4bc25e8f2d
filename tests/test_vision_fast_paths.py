"""The reader's fast paths give exactly what the plain computations they replace give
(the speed work on the index reader must not change a single read): each is checked
against the plain numpy / OpenCV computation, on random and on rendered data."""

from __future__ import annotations

import dataclasses
import math

import cv2
import numpy as np
import pytest

from shoe_controller.sim import render
from shoe_controller.vision.index_glyphs import (
    CORNER_PAD,
    RANK_CANVAS,
    SUIT_CANVAS,
    Ink,
    Region,
    channel_max,
    channel_min,
    crop_corner,
    find_ink,
    find_regions,
    first_median_above,
    glyph_vector,
    median_u8,
    percentile_u8,
    to_small,
    union_box,
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


def test_channel_min_and_max_are_opencvs_of_the_split_channels() -> None:
    """The darkest and brightest channel per pixel, compared in place, are OpenCV's
    ``min``/``max`` of ``cv2.split``'s three channels, on whole images and on the
    non-contiguous slices the reader passes (a region's box of the small frame)."""
    rng = np.random.default_rng(11)
    for shape in ((1, 1, 3), (7, 5, 3), (120, 160, 3), (161, 146, 3)):
        img = rng.integers(0, 256, shape, dtype=np.uint8)
        for a in (x for x in (img, img[1:, 2:], img[::2, ::3]) if x.size):
            b, g, r = cv2.split(np.ascontiguousarray(a))
            assert np.array_equal(channel_min(a), cv2.min(cv2.min(b, g), r))
            assert np.array_equal(channel_max(a), cv2.max(cv2.max(b, g), r))
            assert channel_min(a).flags.c_contiguous and channel_max(a).dtype == np.uint8
    grey = rng.integers(0, 256, (4, 4), dtype=np.uint8)
    assert channel_min(grey) is grey and channel_max(grey) is grey


def test_median_u8_is_numpys() -> None:
    for a in _arrays(2, 1500):
        for axis in (0, 1):
            want = np.median(a, axis=axis)
            got = median_u8(a, axis)
            assert got.dtype == want.dtype and np.array_equal(got, want), (a.shape, axis)
        if a.shape[1] > 1:  # a view into a larger image, as the reader passes them
            view = a[::2, 1:]
            assert np.array_equal(median_u8(view, 1), np.median(view, axis=1))


def test_first_median_above_is_numpys() -> None:
    """The first line whose median is above a threshold, from counts: as numpy's
    median says, on odd and even lines, thresholds on and between grey levels."""
    rng = np.random.default_rng(5)
    for a in _arrays(4, 1500):
        for axis in (0, 1):
            med = np.median(a, axis=axis)
            for thr in (float(rng.choice(med)), float(rng.choice(med)) + 0.5,
                        float(rng.uniform(0, 255)), 0.6 * float(rng.integers(0, 256))):
                above = np.flatnonzero(med > thr)
                want = int(above[0]) if len(above) else 0
                assert first_median_above(a, axis, thr) == want, (a.shape, axis, thr)


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


def _plain_crop(frame: np.ndarray, region: Region, down: bool, size: tuple[int, int]
                ) -> np.ndarray:
    """The corner crop as one plain cv2.warpAffine of the frame (the reference)."""
    t = math.radians(region.angle)
    ct, st = math.cos(t), math.sin(t)
    cx, cy = region.bottom_right if down else region.top_left
    ux, uy, vx, vy = (-ct, -st, st, -ct) if down else (ct, st, -st, ct)
    p = CORNER_PAD
    m = np.array([[ux, vx, cx - p * (ux + vx)], [uy, vy, cy - p * (uy + vy)]])
    return cv2.warpAffine(frame, m, size, flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP,
                          borderMode=cv2.BORDER_REPLICATE)


def test_corner_crops_are_the_plain_warp() -> None:
    """crop_corner turns a colour frame's corner as four channels in a reused buffer:
    the same pixels as one warp of the whole frame, for corners anywhere (half out of
    the frame too, where the frame's edge is repeated), any angle, both ways up, and
    nothing of an earlier frame left in the buffer shows."""
    rng = np.random.default_rng(7)
    for i in range(300):
        shape = (480, 640, 3) if i % 5 else (240, 320, 3)
        frame = rng.integers(0, 256, shape, dtype=np.uint8)
        h, w = shape[:2]
        corner = (float(rng.uniform(-60, w + 60)), float(rng.uniform(-60, h + 60)))
        region = Region(1.0, float(rng.uniform(-45, 45)), (0.0, 0.0, 0.0), 0.0, corner,
                        corner, False)
        size = (int(rng.integers(20, 170)), int(rng.integers(20, 170)))
        down = bool(i % 2)
        got = crop_corner(frame, region, down, size)
        want = _plain_crop(frame, region, down, size)
        assert got.shape == want.shape and np.array_equal(got, want), (i, corner, size)
        grey = frame[:, :, 1].copy()
        assert np.array_equal(crop_corner(grey, region, down, size),
                              _plain_crop(grey, region, down, size))


def test_union_box_is_the_box_around_the_parts() -> None:
    rng = np.random.default_rng(3)
    for _ in range(500):
        n = int(rng.integers(1, 9))
        st = np.column_stack([rng.integers(0, 200, (n, 2)), rng.integers(1, 40, (n, 2)),
                              rng.integers(1, 900, n)]).astype(np.int32)
        ids = sorted({int(i) for i in rng.integers(0, n, int(rng.integers(1, n + 1)))})
        got = union_box(st, ids)
        want = (min(st[i, 0] for i in ids), min(st[i, 1] for i in ids),
                max(st[i, 0] + st[i, 2] for i in ids), max(st[i, 1] + st[i, 3] for i in ids))
        assert got == tuple(int(v) for v in want) and all(type(v) is int for v in got)


def _plain_glyph(ink: Ink, ids: list[int], canvas: tuple[int, int]) -> np.ndarray | None:
    """glyph_vector as first written (np.isin, GaussianBlur, mean, linalg.norm)."""
    x0, y0, x1, y1 = union_box(ink.stats, ids)
    x0, y0 = max(x0 - 1, 0), max(y0 - 1, 0)
    x1, y1 = min(x1 + 1, ink.ink.shape[1]), min(y1 + 1, ink.ink.shape[0])
    sel = np.isin(ink.labels[y0:y1, x0:x1], ids).astype(np.uint8)
    sel = cv2.dilate(sel, np.ones((3, 3), np.uint8))
    roi = np.maximum(ink.paper - ink.ink[y0:y1, x0:x1].astype(np.float32), 0) * sel
    ch, cw = canvas
    rh, rw = roi.shape
    nw = min(max(round(rw * ch / rh), 2), cw)
    g = cv2.resize(roi, (nw, ch), interpolation=cv2.INTER_AREA)
    out = np.zeros(canvas, np.float32)
    off = (cw - nw) // 2
    out[:, off:off + nw] = g
    out = cv2.GaussianBlur(out, (0, 0), 0.6)
    v = out.ravel()
    v -= v.mean()
    n = float(np.linalg.norm(v))
    return None if n < 1e-6 else v / n


def test_glyph_vectors_are_the_plain_computation() -> None:
    rng = np.random.default_rng(11)
    checked = 0
    for i in range(60):
        crop = np.clip(rng.normal(200, 12, (90, 70)), 0, 255).astype(np.uint8)
        for _ in range(int(rng.integers(1, 6))):
            x, y = (int(v) for v in rng.integers(8, 55, 2))
            crop[y:y + int(rng.integers(3, 25)), x:x + int(rng.integers(3, 14))] = \
                int(rng.integers(0, 90))
        ink = find_ink(crop, 4)
        if isinstance(ink, str):
            continue
        parts = [int(j) for j in np.flatnonzero(ink.keep)]
        for k in range(len(parts)):
            ids = parts[k:k + 1 + i % 2]
            for canvas in (RANK_CANVAS, SUIT_CANVAS):
                got, want = glyph_vector(ink, ids, canvas), _plain_glyph(ink, ids, canvas)
                assert (got is None) == (want is None)
                if got is not None:
                    assert got.dtype == want.dtype and got.tobytes() == want.tobytes()
                    checked += 1
    assert checked > 100

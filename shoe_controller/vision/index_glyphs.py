"""The steps of index recognition shared by the reader and by ``shoe-calibrate learn``.

1. :func:`find_regions`: at a quarter of the resolution, the light regions of the frame
   (card faces or the cut card against the dark shoe interior), each with its angle
   (from the straight parts of its outline; card edges on the frame border do not
   count), its mean colour, and the two corners where an index can be: the top-left
   corner (index upright) and the bottom-right corner (index upside down), in frame
   pixels.
2. :func:`crop_corner`: a small crop of the full-resolution frame anchored at such a
   corner, turned so the index in it is upright, in frame-pixel units.
3. :func:`extract_index`: in the crop, the ink (Otsu threshold of the darkest channel,
   so red and black ink are both dark), its connected parts, grouped into rows: the
   first row is the rank (``10`` is two parts), the next row below it the suit. Parts
   that touch the crop's edge are dropped, so half an index leaves a row missing.
   Each glyph is cut out, scaled to a fixed height (aspect kept) and centred on a fixed
   canvas, zero-mean and unit-norm: ready for normalized correlation with templates.

Nothing here knows a particular deck: sizes come from the calibration profile.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np

#: Normalized glyph canvases (height, width): rank and suit.
RANK_CANVAS = (32, 64)
SUIT_CANVAS = (24, 32)
#: Downscale factor for finding the card.
SMALL = 4
#: The crop starts this many pixels outside the estimated corner.
CORNER_PAD = 4


@dataclass(frozen=True, slots=True)
class Region:
    """A light region of the frame (a card face or the cut card)."""

    area: float  # frame pixels
    angle: float  # degrees, in [-45, 45): rotation of the card's edges
    mean_bgr: tuple[float, float, float]
    level: float  # brightest part (max channel), grey levels
    top_left: tuple[float, float]  # frame px: the card's top-left corner (deskewed)
    bottom_right: tuple[float, float]
    touches_border: bool
    #: the top-left / bottom-right corner is at (or beyond) the edge of the frame: the
    #: frame cuts the card off there
    clipped_tl: bool = False
    clipped_br: bool = False


@dataclass(frozen=True, slots=True)
class IndexGlyphs:
    """Rank and suit glyphs found in an upright corner crop."""

    rank: np.ndarray  # flattened normalized canvas
    suit: np.ndarray
    rank_box: tuple[int, int, int, int]  # x0, y0, x1, y1 (exclusive) in crop px
    suit_box: tuple[int, int, int, int]
    redness: float | None  # suit ink red vs paper (log ratio); None for grey frames
    contrast: float  # paper minus ink threshold, grey levels
    extra_rows: int  # further rows of ink below the suit inside the crop


#: Blurs the learned glyphs are also stored under (motion blur length along the dealing
#: axis in px, defocus sigma in px): a frame is matched against the closest of them.
AUGMENTATIONS: tuple[tuple[float, float], ...] = (
    (0.0, 0.0), (3.0, 0.0), (6.0, 0.0), (0.0, 1.2), (4.0, 0.9),
)


def blurred(crop: np.ndarray, motion: float, sigma: float) -> np.ndarray:
    """``crop`` with motion blur along its x axis and defocus (for learning)."""
    out = crop.astype(np.float32)
    if motion >= 1.0:
        n = math.ceil(motion) | 1
        k = np.ones((1, n), np.float32)
        k[0, 0] = k[0, -1] = (motion - (n - 2)) / 2
        out = cv2.filter2D(out, -1, k / k.sum(), borderType=cv2.BORDER_REPLICATE)
    if sigma > 0.05:
        out = cv2.GaussianBlur(out, (0, 0), sigma)
    return np.clip(out + 0.5, 0, 255).astype(np.uint8)


def to_small(frame: np.ndarray) -> np.ndarray:
    h, w = frame.shape[:2]
    return cv2.resize(frame, (w // SMALL, h // SMALL), interpolation=cv2.INTER_LINEAR)


def channel_max(img: np.ndarray) -> np.ndarray:
    """Brightest channel per pixel (a light face of any colour is light here)."""
    if img.ndim == 2:
        return img
    b, g, r = cv2.split(img)
    return cv2.max(cv2.max(b, g), r)


def channel_min(img: np.ndarray) -> np.ndarray:
    """Darkest channel per pixel (red and black ink are both dark here)."""
    if img.ndim == 2:
        return img
    b, g, r = cv2.split(img)
    return cv2.min(cv2.min(b, g), r)


def _outline_angle(pts: np.ndarray, w: int, h: int) -> float | None:
    """Dominant edge direction of a closed outline (small px), folded into [-45, 45)."""
    n = len(pts)
    k = 8
    if n < 3 * k:
        return None
    d = np.concatenate((pts[k:], pts[:k])) - pts
    edge = (pts[:, 0] <= 0) | (pts[:, 0] >= w - 1) | (pts[:, 1] <= 0) | (pts[:, 1] >= h - 1)
    idx = np.flatnonzero(~(edge | np.concatenate((edge[k:], edge[:k]))))
    if len(idx) < k:
        return None
    raw = np.degrees(np.arctan2(d[idx, 1], d[idx, 0]))
    # the most common direction, to a degree (a histogram of the folded directions)
    folded = (raw + 45.0) % 90.0
    med = float(np.argmax(np.bincount(folded.astype(np.int64), minlength=90))) + 0.5 - 45.0
    # the straight runs of the outline near that direction, one line fitted to each
    diff = (raw - med + 45.0) % 90.0 - 45.0
    side = np.rint((raw - med) / 90.0).astype(np.int64) % 4
    key = np.where(np.abs(diff) < 8.0, side, -1)
    cut = np.flatnonzero((key[1:] != key[:-1]) | (idx[1:] - idx[:-1] != 1)) + 1
    starts = np.concatenate(([0], cut))
    counts = np.diff(np.concatenate((starts, [len(key)])))
    keep = (key[starts] >= 0) & (counts >= 2 * k)
    if not keep.any():
        return med
    # per run, the principal direction of its points (a least-squares line), all runs
    # at once: sums per run by reduceat, then the orientation of the scatter matrix
    src = pts[idx]
    x, y = src[:, 0], src[:, 1]
    sums = np.add.reduceat(np.stack([x, y, x * x, y * y, x * y]), starts, axis=1)[:, keep]
    c = counts[keep].astype(np.float64)
    mx, my = sums[0] / c, sums[1] / c
    sxx, syy, sxy = sums[2] / c - mx * mx, sums[3] / c - my * my, sums[4] / c - mx * my
    run_angle = np.degrees(0.5 * np.arctan2(2 * sxy, sxx - syy))
    a = (run_angle - med + 45.0) % 90.0 - 45.0
    return float((med + float((a * c).sum() / c.sum()) + 45.0) % 90.0 - 45.0)


def find_regions(small: np.ndarray, min_area: float, max_regions: int = 2,
                 level_floor: float = 0.0) -> tuple[float, list[Region]]:
    """Light regions of a quarter-resolution frame, largest first.

    Returns (brightest level, regions with at least ``min_area`` frame pixels).
    ``level_floor``: the mask threshold is never below it (keeps the dark interior out).
    """
    bright = channel_max(small)
    level = float(bright.max())
    thr = max(0.45 * level, level_floor)
    _, mask = cv2.threshold(bright, thr, 255, cv2.THRESH_BINARY)
    contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    h, w = bright.shape
    s2 = SMALL * SMALL
    found = []
    for c in contours:
        area = cv2.contourArea(c) * s2
        if area >= min_area:
            found.append((area, c))
    found.sort(key=lambda t: -t[0])
    regions = []
    for area, c in found[:max_regions]:
        pts = c[:, 0, :].astype(np.float64)
        angle = _outline_angle(pts, w, h)
        if angle is None:
            angle = 0.0
        x, y, bw, bh = cv2.boundingRect(c)
        roi_mask = mask[y:y + bh, x:x + bw]
        roi = small[y:y + bh, x:x + bw]
        if small.ndim == 3:
            mean = cv2.mean(roi, roi_mask)[:3]
        else:
            m = cv2.mean(roi, roi_mask)[0]
            mean = (m, m, m)
        rlevel = float(cv2.minMaxLoc(bright[y:y + bh, x:x + bw], roi_mask)[1])
        # deskew the outline; its extreme extents give the card's corners
        t = math.radians(angle)
        ct, st = math.cos(t), math.sin(t)
        full = pts * SMALL + (SMALL - 1) / 2.0
        u = full[:, 0] * ct + full[:, 1] * st
        v = -full[:, 0] * st + full[:, 1] * ct
        half = SMALL / 2.0
        u0, v0 = u.min() - half, v.min() - half
        u1, v1 = u.max() + half, v.max() + half
        tl = (u0 * ct - v0 * st, u0 * st + v0 * ct)
        br = (u1 * ct - v1 * st, u1 * st + v1 * ct)
        touches = bool(x <= 0 or y <= 0 or x + bw >= w or y + bh >= h)
        fw, fh = w * SMALL, h * SMALL
        margin = 2 * SMALL
        clipped_tl, clipped_br = (
            not (margin <= px < fw - margin and margin <= py < fh - margin) for px, py in (tl, br))
        regions.append(Region(area, angle, mean, rlevel, tl, br, touches, clipped_tl, clipped_br))
    return level, regions


def crop_corner(frame: np.ndarray, region: Region, upside_down: bool,
                size: tuple[int, int]) -> np.ndarray:
    """The corner of ``region`` where an index would be, turned upright; ``size`` (w, h).

    Out-of-frame pixels are black, so an index cut by the frame edge shows as ink
    running into the crop's edge.
    """
    t = math.radians(region.angle)
    ct, st = math.cos(t), math.sin(t)
    if upside_down:
        cx, cy = region.bottom_right
        ux, uy, vx, vy = -ct, -st, st, -ct
    else:
        cx, cy = region.top_left
        ux, uy, vx, vy = ct, st, -st, ct
    p = CORNER_PAD
    m = np.array([[ux, vx, cx - p * (ux + vx)], [uy, vy, cy - p * (uy + vy)]])
    return cv2.warpAffine(frame, m, size, flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP,
                          borderMode=cv2.BORDER_CONSTANT, borderValue=0)


def _normalized(ink: np.ndarray, paper: float, box: tuple[int, int, int, int],
                canvas: tuple[int, int]) -> np.ndarray | None:
    x0, y0, x1, y1 = box
    ch, cw = canvas
    roi = np.maximum(paper - ink[max(y0 - 1, 0):y1 + 1, max(x0 - 1, 0):x1 + 1]
                     .astype(np.float32), 0)
    rh, rw = roi.shape
    nw = min(round(rw * ch / rh), cw)  # a very wide glyph is squeezed onto the canvas
    if nw < 2:
        return None
    g = cv2.resize(roi, (nw, ch), interpolation=cv2.INTER_AREA)
    out = np.zeros(canvas, np.float32)
    off = (cw - nw) // 2
    out[:, off:off + nw] = g
    v = out.ravel()
    v -= v.mean()
    n = float(np.linalg.norm(v))
    if n < 1e-6:
        return None
    v /= n
    return v


def _rows(stats: np.ndarray, ids: list[int]) -> list[list[int]]:
    """Group component ids into rows, top to bottom (see module docstring)."""
    if not ids:
        return []
    ids = sorted(ids, key=lambda i: stats[i, 1])
    first = ids[0]
    rows: list[list[int]] = []
    used: set[int] = set()
    # the rank row: the topmost part and its side-by-side neighbours
    x0, y0 = stats[first, 0], stats[first, 1]
    x1, y1 = x0 + stats[first, 2], y0 + stats[first, 3]
    row = [first]
    used.add(first)
    for i in ids[1:]:
        xi, yi, wi, hi = stats[i, :4]
        ov = min(y1, yi + hi) - max(y0, yi)
        gap = max(xi - x1, x0 - (xi + wi))
        if ov >= 0.5 * min(hi, y1 - y0) and gap <= 0.6 * (y1 - y0):
            row.append(i)
            used.add(i)
            x0, x1 = min(x0, xi), max(x1, xi + wi)
            y0, y1 = min(y0, yi), max(y1, yi + hi)
    rows.append(row)
    # following rows: parts below, under the rank column
    while True:
        rest = [i for i in ids if i not in used and stats[i, 1] >= y1 - 1]
        col = [i for i in rest
               if x0 - 0.3 * (x1 - x0) <= stats[i, 0] + stats[i, 2] / 2 <= x1 + 0.3 * (x1 - x0)]
        if not col:
            break
        top = col[0]
        ty0, ty1 = stats[top, 1], stats[top, 1] + stats[top, 3]
        row = [i for i in col if min(ty1, stats[i, 1] + stats[i, 3]) - max(ty0, stats[i, 1])
               >= 0.5 * min(stats[i, 3], ty1 - ty0)]
        rows.append(row)
        used.update(row)
        y1 = max(stats[i, 1] + stats[i, 3] for i in row)
    return rows


def _box(stats: np.ndarray, row: list[int]) -> tuple[int, int, int, int]:
    x0 = min(int(stats[i, 0]) for i in row)
    y0 = min(int(stats[i, 1]) for i in row)
    x1 = max(int(stats[i, 0] + stats[i, 2]) for i in row)
    y1 = max(int(stats[i, 1] + stats[i, 3]) for i in row)
    return x0, y0, x1, y1


def extract_index(crop: np.ndarray, min_part: int, min_contrast: float = 20.0
                  ) -> IndexGlyphs | str:
    """Rank and suit glyphs of an upright corner crop, or why there are none."""
    colour = crop.ndim == 3
    ink = channel_min(crop)
    thr, binary = cv2.threshold(ink, 0, 255, cv2.THRESH_BINARY_INV | cv2.THRESH_OTSU)
    paper = cv2.mean(ink, cv2.bitwise_not(binary))[0]
    if paper - thr < min_contrast:
        return "no ink on a light face near the corner"
    _n, _labels, stats, _ = cv2.connectedComponentsWithStats(binary, connectivity=8)
    h, w = ink.shape
    x, y, bw, bh, area = stats.T
    keep = (area >= min_part) & (x > 0) & (y > 0) & (x + bw < w) & (y + bh < h)
    keep[0] = False
    ids = np.flatnonzero(keep).tolist()
    rows = _rows(stats, ids)
    if len(rows) < 2:
        return "no rank above a suit"
    rank_box = _box(stats, rows[0])
    suit_box = _box(stats, rows[1])
    rank = _normalized(ink, paper, rank_box, RANK_CANVAS)
    suit = _normalized(ink, paper, suit_box, SUIT_CANVAS)
    if rank is None or suit is None:
        return "index glyphs of an implausible shape"
    redness = None
    if colour:
        x0, y0, x1, y1 = suit_box
        b, g, r, _ = cv2.mean(crop[y0:y1, x0:x1], binary[y0:y1, x0:x1])
        pb, pg, pr, _ = cv2.mean(crop, cv2.compare(ink, paper - 1, cv2.CMP_GE))
        redness = math.log((r + 8) / (max(g, b) + 8)) - math.log((pr + 8) / (max(pg, pb) + 8))
    return IndexGlyphs(rank, suit, rank_box, suit_box, redness, paper - float(thr),
                       len(rows) - 2)

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
import threading
from dataclasses import dataclass, replace
from functools import lru_cache

import cv2
import numpy as np

#: Downscale factor for finding the card.
SMALL = 4
#: The crop starts this many pixels outside the estimated corner.
CORNER_PAD = 4
_K3 = np.ones((3, 3), np.uint8)


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
    #: share of the region (inside its outline) that is much darker than its middle
    #: grey: ink, print; close to 0 on a plain card
    ink_share: float = 1.0
    #: the region runs into the frame's left, top, right, bottom border: along that
    #: axis the card's own edge (and so its corner) is out of view
    borders: tuple[bool, bool, bool, bool] = (False, False, False, False)
    #: for a region with hardly any ink (``ink_share`` at most ``PLAIN_INK_SHARE``):
    #: the share of it a little darker than the paper around it (print smeared by
    #: blur past reading still is); 1.0 when not measured
    faint_share: float = 1.0
    #: the card's own left, top, right, bottom edge (deskewed) shows in the frame over
    #: at least ``EDGE_SEEN`` px: where it is, and so the corner along that axis, is
    #: known even when the region runs into the frame's border further along
    edges_seen: tuple[bool, bool, bool, bool] = (False, False, False, False)

    def free_axes(self, down: bool) -> tuple[bool, bool]:
        """For the corner of an index (top-left, or bottom-right when ``down``): is its
        position unknown along the crop's x and y axes? Along an axis where the region
        runs into the frame's border (the frame cuts the card there), unless the card's
        own edge across that axis is in view (a tilted card whose edge leaves the frame
        away from the corner: that edge, not the frame's border, is where the card ends).

        >>> r = Region(1.0, 0.0, (0.0, 0.0, 0.0), 0.0, (0.0, 0.0), (9.0, 9.0), True,
        ...            borders=(True, False, False, True))
        >>> r.free_axes(False), r.free_axes(True)
        ((True, False), (False, True))
        >>> replace(r, edges_seen=(True, False, False, False)).free_axes(False)
        (False, False)
        """
        left, top, right, bottom = (b and not e for b, e in zip(self.borders,
                                                                self.edges_seen,
                                                                strict=True))
        return (right, bottom) if down else (left, top)


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
    """Brightest channel per pixel (a light face of any colour is light here): the
    channels compared in place (no split into three new images first; the same values
    as ``cv2.max`` of the split channels, a new contiguous array).

    >>> channel_max(np.array([[[3, 9, 1], [7, 2, 5]]], np.uint8)).tolist()
    [[9, 7]]
    """
    if img.ndim == 2:
        return img
    return np.maximum(np.maximum(img[..., 0], img[..., 1]), img[..., 2])


def channel_min(img: np.ndarray) -> np.ndarray:
    """Darkest channel per pixel (red and black ink are both dark here), a new array
    (as :func:`channel_max`).

    >>> channel_min(np.array([[[3, 9, 1], [7, 2, 5]]], np.uint8)).tolist()
    [[1, 2]]
    """
    if img.ndim == 2:
        return img
    return np.minimum(np.minimum(img[..., 0], img[..., 1]), img[..., 2])


#: Degrees either side of a direction counted with it (less the further off) when the
#: commonest direction of an outline's hull's sides is found (:func:`_hull_direction`).
DIRECTION_WINDOW = 2


def _hull_direction(pts: np.ndarray, w: int, h: int) -> float | None:
    """The commonest direction (degrees, folded into [-45, 45), to a degree) of the
    sides of the convex hull of an outline, each side counted by its length, with its
    neighbours within ``DIRECTION_WINDOW`` degrees less the further off; a side along
    the frame's border (the frame cuts the card there) is not counted. None when no
    side is left.

    The outline's own steps are a poor guide: a chord of a few steps along a straight
    edge points one of two whole-pixel ways around the edge (7 and 14 degrees at 10),
    and court art that reaches the card's edge cuts notches of its own directions into
    the outline (ext:paris: 0 degrees outnumbered the card's 10). The hull spans the
    notches, and its long sides are the card's edges.

    >>> sq = cv2.boxPoints(((60.0, 60.0), (40.0, 50.0), 10.3))
    >>> _hull_direction(sq.astype(np.float64), 160, 120)
    10.5
    """
    hull = cv2.convexHull(pts.astype(np.float32))[:, 0, :].astype(np.float64)
    if len(hull) < 2:
        return None
    a, b = hull, np.roll(hull, -1, axis=0)
    border = (((a[:, 0] <= 0) & (b[:, 0] <= 0)) | ((a[:, 0] >= w - 1) & (b[:, 0] >= w - 1))
              | ((a[:, 1] <= 0) & (b[:, 1] <= 0)) | ((a[:, 1] >= h - 1) & (b[:, 1] >= h - 1)))
    d = (b - a)[~border]
    length = np.hypot(d[:, 0], d[:, 1])
    if not (length > 0).any():
        return None
    folded = (np.degrees(np.arctan2(d[:, 1], d[:, 0])) + 45.0) % 90.0
    weight = np.bincount(folded.astype(np.int64) % 90, weights=length, minlength=90)[:90]
    # a triangle window: the peak at the middle of a run of equal bins
    window = np.arange(-DIRECTION_WINDOW, DIRECTION_WINDOW + 1)
    near = weight[(np.arange(90)[:, None] + window) % 90] @ (DIRECTION_WINDOW + 1.0
                                                             - np.abs(window))
    return float(np.argmax(near)) + 0.5 - 45.0


def _outline_angle(pts: np.ndarray, w: int, h: int) -> float | None:
    """Dominant edge direction of a closed outline (small px), folded into [-45, 45):
    two first guesses, the commonest direction of the sides of the outline's convex
    hull (:func:`_hull_direction`) and of the outline's own chords of ``k`` steps, each
    refined by the straight runs of the outline near it (:func:`_fit_runs`); the guess
    whose runs hold more of the outline wins (the hull is not asked when the chords'
    runs hold half the outline or more). The hull's guess is right where court art
    reaching the card's edge notches the outline; the chords' where art cuts the card's
    light face in two and the hull of the piece is mostly the art's."""
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
    # the most common direction of the outline's chords, to a degree
    folded = (raw + 45.0) % 90.0
    chords = float(np.argmax(np.bincount(folded.astype(np.int64), minlength=90))) + 0.5 - 45.0
    best = _fit_runs(pts, idx, raw, chords, k)
    if 2 * best[1] >= len(idx):
        # straight runs hold half the outline or more: the card's own edges (and the
        # cost of the hull is saved on nearly every frame)
        return best[0]
    hull = _hull_direction(pts, w, h)
    if hull is not None:
        other = _fit_runs(pts, idx, raw, hull, k)
        if other[1] > best[1]:
            best = other
    return best[0]


def _fit_runs(pts: np.ndarray, idx: np.ndarray, raw: np.ndarray, med: float, k: int
              ) -> tuple[float, int]:
    """(the direction, the outline points that support it): the straight runs of the
    outline (``pts[idx]``, chord directions ``raw``) within 8 degrees of ``med`` (or at
    right angles to it), of ``2 k`` points or more, one line fitted to each, their
    directions averaged by length; ``(med, 0)`` when there is no such run."""
    diff = (raw - med + 45.0) % 90.0 - 45.0
    side = np.rint((raw - med) / 90.0).astype(np.int64) % 4
    key = np.where(np.abs(diff) < 8.0, side, -1)
    cut = np.flatnonzero((key[1:] != key[:-1]) | (idx[1:] - idx[:-1] != 1)) + 1
    starts = np.concatenate(([0], cut))
    counts = np.diff(np.concatenate((starts, [len(key)])))
    keep = (key[starts] >= 0) & (counts >= 2 * k)
    if not keep.any():
        return med, 0
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
    return (float((med + float((a * c).sum() / c.sum()) + 45.0) % 90.0 - 45.0),
            int(c.sum()))


def find_regions(small: np.ndarray, min_area: float, max_regions: int = 2,
                 level_floor: float = 0.0, ink_share: bool = True
                 ) -> tuple[float, list[Region]]:
    """Light regions of a quarter-resolution frame, largest first.

    Returns (brightest level, regions with at least ``min_area`` frame pixels).
    ``level_floor``: the mask threshold is never below it (keeps the dark interior out).
    ``ink_share``: measure each region's :attr:`Region.ink_share` (a median filter, the
    costliest step here); without it the share is 1.0, as for a region too small to
    measure (it counts as printed, never as a plain card). The reader needs it only when
    no index was read (is the region a plain card?), and asks again then.
    """
    bright = channel_max(small)
    level = float(bright.max())
    thr = max(0.45 * level, level_floor)
    _, mask = cv2.threshold(bright, thr, 255, cv2.THRESH_BINARY)
    return level, _regions_of(small, bright, mask, min_area, max_regions, ink_share,
                              hull=True)


#: A plain card darker than the faces (see :func:`find_plain_card`) must be this much
#: lighter than the shoe interior around it, as a ratio and in grey levels.
PLAIN_STEP_RATIO = 1.25
PLAIN_STEP_MIN = 12.0
#: A region with less than this share of ink is a plain card (the cut card, or a plain
#: card of another colour); the faces of a deck have far more.
PLAIN_INK_SHARE = 0.004
#: ... and with less than this share a little (``FAINT_DARKNESS``) darker than the paper
#: around it: a face whose print motion blur and defocus smeared past reading is no
#: plain card (its print still darkens a third of it or more; a plain card none of it).
PLAIN_FAINT_SHARE = 0.01
FAINT_DARKNESS = 0.08
#: How far (in sigmas of the fine grain) noise lifts the local maximum taken as the
#: paper's level (:func:`_faint_share`): 2.8-3.3 times on seed 31's charcoal cut cards.
FAINT_NOISE_LIFT = 3.0


def _largest_part(mask: np.ndarray, min_area: float) -> np.ndarray | None:
    """The largest outer region of ``mask`` (quarter resolution), filled, or None when
    there is none or it covers less than ``min_area`` full-resolution pixels."""
    contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    if not contours:
        return None
    c = max(contours, key=cv2.contourArea)
    if cv2.contourArea(c) * SMALL * SMALL < min_area:
        return None
    part = np.zeros_like(mask)
    cv2.drawContours(part, [c], -1, 255, -1)
    return part


def find_plain_card(small: np.ndarray, min_area: float) -> Region | None:
    """A card-sized region clearly lighter than the shoe interior around it, however
    dark it is (a charcoal or navy cut card is hardly lighter than the interior): the
    brightest channel, smoothed against noise, split in two by Otsu's threshold; the
    largest part is a card only if its edge is a step (the ring just inside it is
    ``PLAIN_STEP_RATIO`` times and ``PLAIN_STEP_MIN`` grey levels lighter than the
    ring just outside). The uneven light of an empty window has no such step: None.

    >>> dark = np.full((120, 160, 3), 25, np.uint8)
    >>> find_plain_card(dark, 2000.0) is None
    True
    >>> dark[20:100, 40:110] = (70, 50, 40)
    >>> round(find_plain_card(dark, 2000.0).mean_bgr[0])
    70
    """
    bright = cv2.medianBlur(channel_max(small), 5)
    _, mask = cv2.threshold(bright, 0, 255, cv2.THRESH_BINARY | cv2.THRESH_OTSU)
    part = _largest_part(mask, min_area)
    if part is None or not _steps_up(bright, part):
        return None
    found = _regions_of(small, channel_max(small), part, min_area, 1, True)
    if not found:
        return None
    if _looks_faint(found[0]):
        lighter = _lighter_part(small, bright, part, min_area)
        if lighter is not None:
            return lighter
    return _with_inner_colour(small, found[0], part)


def _steps_up(bright: np.ndarray, part: np.ndarray) -> bool:
    """Is the edge of ``part`` (a mask of the small frame) a step up: the ring just
    inside it ``PLAIN_STEP_RATIO`` times and ``PLAIN_STEP_MIN`` levels above the ring
    just outside (medians of ``bright``)? A card's edge is; the smooth light of the
    interior, or of one card face, is not."""
    inner = cv2.erode(part, _K3, iterations=2)
    in_ring = cv2.subtract(inner, cv2.erode(part, _K3, iterations=5))
    outer = cv2.dilate(part, _K3, iterations=2)
    out_ring = cv2.subtract(cv2.dilate(part, _K3, iterations=5), outer)
    if cv2.countNonZero(in_ring) < 20 or cv2.countNonZero(out_ring) < 20:
        return False
    inside = float(np.median(bright[in_ring > 0]))
    outside = float(np.median(bright[out_ring > 0]))
    return inside >= PLAIN_STEP_RATIO * outside and inside - outside >= PLAIN_STEP_MIN


def _looks_faint(region: Region) -> bool:
    """Hardly any print, but too much of it a little darker than the rest to be plain."""
    return region.ink_share <= PLAIN_INK_SHARE and region.faint_share > PLAIN_FAINT_SHARE


def _with_inner_colour(small: np.ndarray, region: Region, part: np.ndarray) -> Region:
    """``region`` with its colour measured away from its edge, where the interior blurs
    in: a dark card's colour is then the same in every frame."""
    inner = cv2.erode(part, _K3, iterations=2)
    if cv2.countNonZero(inner) == 0:
        inner = part
    m = cv2.mean(small, inner)
    mean = (m[0], m[1], m[2]) if small.ndim == 3 else (m[0], m[0], m[0])
    return replace(region, mean_bgr=mean)


def _lighter_part(small: np.ndarray, bright: np.ndarray, part: np.ndarray,
                  min_area: float) -> Region | None:
    """A dark plain card that the split of the whole frame joined to a lit patch of the
    interior beside it (the card's edge then runs through the region as a faint line,
    and the region is no plain card): the region split again by Otsu's threshold of its
    own levels; the lighter part, card-sized, its own edge a step up (``_steps_up``: no
    smooth light gradient inside one card face is) and plain, is the card. None
    otherwise (the region is read as it was)."""
    vals = bright[part > 0]
    if vals.size < 50:
        return None
    t, _ = cv2.threshold(vals.reshape(1, -1), 0, 255, cv2.THRESH_BINARY | cv2.THRESH_OTSU)
    _, light = cv2.threshold(bright, t, 255, cv2.THRESH_BINARY)
    light = cv2.bitwise_and(light, part)
    sub = _largest_part(light, min_area)
    if sub is None or not _steps_up(bright, sub):
        return None
    found = _regions_of(small, channel_max(small), sub, min_area, 1, True)
    if not found or found[0].ink_share > PLAIN_INK_SHARE or _looks_faint(found[0]):
        return None
    return _with_inner_colour(small, found[0], sub)


#: A card's edge, seen as the step between the means of one colour channel along it
#: (over ``EDGE_RUN`` small px, so the sensor's noise averages out) ``EDGE_REACH`` small
#: px to either side of it: at least ``PLAIN_STEP_RATIO`` times and ``EDGE_STEP_MIN`` grey
#: levels. Each channel on its own: a bluish cut card on a greenish interior steps up in
#: blue far more than in the brightest channel. On 2000 rendered empty windows (full
#: and guided range, noise, colour cast, JPEG, one in ten grey) the largest such step
#: anywhere was 8.6 levels; the edge of a dark cut card in dim light 12.4.
EDGE_STEP_MIN = 11.0
EDGE_RUN = 17
EDGE_REACH = 2
#: Reason of the rejection of a card of which too little is in view to say what it is.
EDGE_TOO_LITTLE = "a card at the frame's edge, too little in view"


def card_by_its_edge(small: np.ndarray, min_area: float) -> Region | str | None:
    """Something in a window that :func:`find_plain_card` and :func:`find_regions` saw
    as empty, found by its edge alone: a straight step of a colour channel (see
    ``EDGE_STEP_MIN``) whatever the light across the frame (Otsu's split of a whole
    frame can fall between the lighter and the darker half of an unevenly lit interior
    instead of at a dark card's edge). The lighter side of the strongest step, split
    off at the step's middle level: a card-sized part of it is returned as a region
    (a plain card, as :func:`find_plain_card` returns); a smaller one that reaches the
    frame's border is a card sliding in or out (``EDGE_TOO_LITTLE``: a frame with a card
    in it is never empty); a small light thing away from the border, or no step, None.

    >>> dark = np.full((120, 160, 3), 25, np.uint8)
    >>> card_by_its_edge(dark, 2000.0) is None
    True
    >>> dark[30:90, 157:] = 60  # 3 small px of a card at the right edge
    >>> card_by_its_edge(dark, 2000.0)
    "a card at the frame's edge, too little in view"
    >>> dark[30:90, 60:] = 60  # a card of which 100 small px are in view
    >>> round(card_by_its_edge(dark, 2000.0).mean_bgr[0])
    60
    """
    # no median filter first (it would double the cost on a frame of the empty window):
    # the means along the edge and 3 px across it average the noise out
    img = small.astype(np.float32)
    h, w = img.shape[:2]
    nch = img.shape[2] if img.ndim == 3 else 1
    r = EDGE_REACH
    best = (0.0, 0, 0, 0, 0.0)
    for along, axis in (((3, EDGE_RUN), 1), ((EDGE_RUN, 3), 0)):
        mean = cv2.blur(img, along, borderType=cv2.BORDER_REPLICATE)
        if axis == 1:
            p = cv2.copyMakeBorder(mean, 0, 0, r, r, cv2.BORDER_REPLICATE)
            after, before = p[:, 2 * r:], p[:, :-2 * r]
        else:
            p = cv2.copyMakeBorder(mean, r, r, 0, 0, cv2.BORDER_REPLICATE)
            after, before = p[2 * r:], p[:-2 * r]
        hi, lo = cv2.max(after, before), cv2.min(after, before)
        step = cv2.subtract(hi, lo).reshape(h, -1)
        if cv2.minMaxLoc(step)[1] < EDGE_STEP_MIN:
            continue
        # the step counts only where the lighter side is PLAIN_STEP_RATIO times the darker
        short = cv2.compare(hi, cv2.addWeighted(lo, PLAIN_STEP_RATIO, lo, 0.0, 0.0),
                            cv2.CMP_LT).reshape(h, -1)
        step[short > 0] = 0.0
        _lo, top, _lo_at, (kx, ky) = cv2.minMaxLoc(step)
        if top > best[0]:
            x, ch, y = kx // nch, kx % nch, ky
            a_v = float(after.reshape(h, -1)[y, kx])
            b_v = float(before.reshape(h, -1)[y, kx])
            lighter = 1 if a_v >= b_v else -1
            if axis == 1:
                x = min(max(x + lighter * r, 0), w - 1)
            else:
                y = min(max(y + lighter * r, 0), h - 1)
            best = (float(top), x, y, ch, (a_v + b_v) / 2)
    size, x, y, ch, middle = best
    if size < EDGE_STEP_MIN:
        return None
    plane = small if small.ndim == 2 else np.ascontiguousarray(small[..., ch])
    _, mask = cv2.threshold(cv2.blur(plane, (3, 3)), middle, 255, cv2.THRESH_BINARY)
    _n, labels, stats, _ = cv2.connectedComponentsWithStats(mask, connectivity=8)
    lab = int(labels[y, x])
    if lab == 0:
        return None
    bx, by, bw, bh, area = (int(v) for v in stats[lab])
    if area * SMALL * SMALL >= min_area:
        part = np.where(labels == lab, 255, 0).astype(np.uint8)
        found = _regions_of(small, channel_max(small), part, min_area, 1, True)
        if found:
            if _looks_faint(found[0]):
                # a lit patch of the interior joined to the card (as find_plain_card)
                lighter = _lighter_part(small, cv2.medianBlur(channel_max(small), 5),
                                        part, min_area)
                if lighter is not None:
                    return lighter
            # the colour away from the edge, as find_plain_card measures it
            return _with_inner_colour(small, found[0], part)
    h, w = mask.shape
    if bx <= 0 or by <= 0 or bx + bw >= w or by + bh >= h:
        return EDGE_TOO_LITTLE
    return None

def _regions_of(small: np.ndarray, bright: np.ndarray, mask: np.ndarray, min_area: float,
                max_regions: int, measure: bool = True, hull: bool = False) -> list[Region]:
    """The regions of the light ``mask`` of ``small`` (``bright`` its brightest channel);
    ``measure``: the plain-card measures too (:func:`_plain_measures`, over the hull of
    the outline with ``hull``; else the colour is the mean over the mask and the shares
    1.0, printed)."""
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
        rlevel = float(cv2.minMaxLoc(bright[y:y + bh, x:x + bw], roi_mask)[1])
        if small.ndim == 3:
            mean = cv2.mean(roi, roi_mask)[:3]
        else:
            m = cv2.mean(roi, roi_mask)[0]
            mean = (m, m, m)
        borders = (x <= 0, y <= 0, x + bw >= w, y + bh >= h)
        share, faint = (_plain_measures(roi, c, x, y, bw, bh, borders if hull else None)
                        if measure else (1.0, 1.0))
        # deskew the outline; its extreme extents give the card's corners
        t = math.radians(angle)
        ct, st = math.cos(t), math.sin(t)
        # the card's own outline: points on the frame's border are where the frame
        # cuts the card, not its edge
        on_border = ((pts[:, 0] <= 0) | (pts[:, 0] >= w - 1) | (pts[:, 1] <= 0)
                     | (pts[:, 1] >= h - 1))
        own = pts[~on_border] if (~on_border).sum() >= 8 else pts
        full = own * SMALL + (SMALL - 1) / 2.0
        u = full[:, 0] * ct + full[:, 1] * st
        v = -full[:, 0] * st + full[:, 1] * ct
        half = SMALL / 2.0
        u0, v0 = u.min() - half, v.min() - half
        u1, v1 = u.max() + half, v.max() + half
        tl = (u0 * ct - v0 * st, u0 * st + v0 * ct)
        br = (u1 * ct - v1 * st, u1 * st + v1 * ct)
        seen = _edges_seen(own, u, v, w, h) if len(own) < len(pts) else (False,) * 4
        touches = bool(x <= 0 or y <= 0 or x + bw >= w or y + bh >= h)
        fw, fh = w * SMALL, h * SMALL
        margin = 2 * SMALL
        clipped_tl, clipped_br = (
            not (margin <= px < fw - margin and margin <= py < fh - margin) for px, py in (tl, br))
        regions.append(Region(area, angle, mean, rlevel, tl, br, touches, clipped_tl, clipped_br,
                              share, borders, faint, seen))
    return regions


#: A card's edge is in view (:attr:`Region.edges_seen`) when its own outline runs along
#: it, within ``EDGE_TOL`` px of its line, over at least ``EDGE_SEEN`` px (frame px).
EDGE_SEEN = 8.0 * SMALL
EDGE_TOL = 1.5 * SMALL


def _edges_seen(own: np.ndarray, u: np.ndarray, v: np.ndarray, w: int, h: int
                ) -> tuple[bool, bool, bool, bool]:
    """Which of the card's own left, top, right and bottom edges show in a ``w`` x ``h``
    small frame: ``own`` are the outline's points off the frame's border (small px),
    ``u``, ``v`` the same points deskewed (frame px). An edge shows when the points
    within ``EDGE_TOL`` of its line (the least or the greatest ``u`` or ``v``) and two
    pixels in from the frame's border (a region's outline beside the border may be the
    frame cutting the card, blurred) run at least ``EDGE_SEEN`` along it, one point a
    small pixel at least (a run of the outline, not two points far apart).

    >>> own = np.array([[x, 5] for x in range(1, 30)] + [[29, y] for y in range(6, 39)],
    ...                np.float64)     # a top edge from the left border, a right edge down
    >>> full = own * SMALL + 1.5
    >>> _edges_seen(own, full[:, 0], full[:, 1], 160, 40)
    (False, True, True, False)
    """
    inner = ((own[:, 0] >= 2) & (own[:, 0] <= w - 3) & (own[:, 1] >= 2)
             & (own[:, 1] <= h - 3))
    out = []
    for along, across, low in ((u, v, True), (v, u, True), (u, v, False), (v, u, False)):
        line = along.min() if low else along.max()
        near = (np.abs(along - line) <= EDGE_TOL) & inner
        # a run of the outline along the line (a point a small pixel), not a few
        # points of the rounded corner or of the frame's border that happen to be near
        n = int(np.count_nonzero(near))
        out.append(n * SMALL >= EDGE_SEEN and float(np.ptp(across[near])) >= EDGE_SEEN)
    return out[0], out[1], out[2], out[3]


def _faint_share(roi: np.ndarray, inside: np.ndarray) -> float:
    """The share of ``inside`` (a mask of ``roi``) darker by ``FAINT_DARKNESS`` than the
    paper around it: the sum of the channels against its local maximum (the paper,
    however unevenly lit), both smoothed against noise. Away from the card's edge, where the
    dark interior blurs in (also where the edge is the box's own border)."""
    inside = cv2.erode(inside, _K3, iterations=3, borderType=cv2.BORDER_CONSTANT,
                       borderValue=0)
    n = cv2.countNonZero(inside)
    if not n:
        return 1.0
    # the sum of the channels: ink of any colour darkens it, and a saturated plain card
    # (one channel near 0) keeps it steady
    grey = roi.astype(np.float32).sum(axis=2) if roi.ndim == 3 else roi.astype(np.float32)
    low = cv2.GaussianBlur(grey, (0, 0), 1.0)
    paper = cv2.GaussianBlur(cv2.dilate(low, np.ones((9, 9), np.uint8)), (0, 0), 3.0)
    # the local maximum is lifted above the paper's true level by the sensor's noise
    # (about 3 sigma of it over the 9 x 9 px); on a dark card that lift alone is most of
    # FAINT_DARKNESS, and noise reads as faint print (seed 31's charcoal cut cards:
    # 2-4 % of their inside). Taken off, at most half FAINT_DARKNESS of the paper, so a
    # face's smeared print, far darker than the noise, counts as before. Sigma from the
    # fine grain alone (what a further blur takes off), which smeared print hardly has.
    sel = inside > 0
    grain = (low - cv2.GaussianBlur(low, (0, 0), 2.0))[sel]
    sigma = 1.4826 * float(np.median(np.abs(grain - np.median(grain))))
    lift = min(FAINT_NOISE_LIFT * sigma, 0.5 * FAINT_DARKNESS * float(np.median(paper[sel])))
    dark = cv2.compare(low, (paper - np.float32(lift)) * np.float32(1.0 - FAINT_DARKNESS),
                       cv2.CMP_LT)
    return cv2.countNonZero(cv2.bitwise_and(dark, inside)) / n


def _plain_measures(roi: np.ndarray, contour: np.ndarray, x: int, y: int, bw: int, bh: int,
                    hull: tuple[bool, bool, bool, bool] | None = None
                    ) -> tuple[float, float]:
    """For the plain-card check: a region's print share and faint share over its inside
    (its outline, eroded). Print: pixels far from their neighbourhood's median colour (a
    plain card, however unevenly lit, has none); the faint share (:func:`_faint_share`)
    only when there is hardly any print. ``roi``: the region's bounding box (x, y, bw,
    bh) of the small frame. With ``hull`` (a region as light as a face; which of the
    box's left, top, right, bottom sides are the frame's border) the inside is the
    outline's convex hull, 3 px in from it and from the box's sides that are not the
    frame's border (there the card runs on out of view): a card's part in view is
    convex, and print that runs into the frame's border (a face's big pip or its index
    the frame cuts) is no hole in the light region but a bay of its outline, which the
    outline alone leaves out (condensed-jumbo-art's 9S, its index and a pip cut by the
    frame, measured no print at all and read as the grey cut card). Not for a card
    found darker than the faces: its outline, hardly above the interior, is ragged, and
    its hull takes in the interior as print."""
    inside = np.zeros((bh, bw), np.uint8)
    if hull is not None:
        m = 3
        pad = np.zeros((bh + 2 * m, bw + 2 * m), np.uint8)
        cv2.drawContours(pad, [cv2.convexHull(contour)], -1, 255, -1,
                         offset=(m - x, m - y))
        # beyond a side on the frame's border the card goes on: the hull's edge row
        # repeated, so nothing is eroded from that side (as the outline's inside is not)
        left, top, right, bottom = hull
        if left:
            pad[:, :m] = pad[:, m:m + 1]
        if right:
            pad[:, -m:] = pad[:, -m - 1:-m]
        if top:
            pad[:m] = pad[m:m + 1]
        if bottom:
            pad[-m:] = pad[-m - 1:-m]
        inside = cv2.erode(pad, _K3, iterations=m)[m:-m, m:-m]
    else:
        cv2.drawContours(inside, [contour], -1, 255, -1, offset=(-x, -y))
        inside = cv2.erode(inside, _K3, iterations=3)
    n_in = cv2.countNonZero(inside)
    if not n_in:
        return 1.0, 1.0
    med = cv2.medianBlur(np.ascontiguousarray(roi), 7)
    dev = channel_max(cv2.absdiff(roi, med))
    thr = np.maximum(channel_max(med) * 0.25, 40).astype(np.uint8)
    printed = cv2.compare(dev, thr, cv2.CMP_GT)
    share = cv2.countNonZero(cv2.bitwise_and(printed, inside)) / n_in
    faint = _faint_share(roi, inside) if share <= PLAIN_INK_SHARE else 1.0
    return share, faint


def crop_corner(frame: np.ndarray, region: Region, upside_down: bool,
                size: tuple[int, int]) -> np.ndarray:
    """The corner of ``region`` where an index would be, turned upright; ``size`` (w, h).

    Out-of-frame pixels repeat the frame's edge (a black fill would take the Otsu
    threshold of :func:`find_ink` for itself); a glyph cut by the frame edge becomes a
    streak running into the crop's edge, which is no glyph.

    A colour frame is turned as four channels (OpenCV's warp is twice as fast on four
    as on three, with the same values per channel): the part of the frame the crop
    samples is copied into a four-channel frame-sized buffer at its own place (the
    same coordinates, so the same interpolation to the bit), and the result is turned
    back into three channels.
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
    tx, ty = cx - p * (ux + vx), cy - p * (uy + vy)
    m = np.array([[ux, vx, tx], [uy, vy, ty]])
    flags = cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP
    if frame.ndim != 3 or frame.shape[2] != 3:
        return cv2.warpAffine(frame, m, size, flags=flags, borderMode=cv2.BORDER_REPLICATE)
    fh, fw = frame.shape[:2]
    w, h = size
    # the frame pixels the crop samples (its corners mapped to the frame, a margin for
    # the interpolation's neighbours), inside the frame: out-of-frame samples repeat
    # the frame's edge, which is then inside the copied part too
    xs = (tx, tx + ux * (w - 1), tx + vx * (h - 1), tx + ux * (w - 1) + vx * (h - 1))
    ys = (ty, ty + uy * (w - 1), ty + vy * (h - 1), ty + uy * (w - 1) + vy * (h - 1))
    x0 = min(max(math.floor(min(xs)) - 3, 0), fw - 1)
    x1 = max(min(math.ceil(max(xs)) + 4, fw), x0 + 1)
    y0 = min(max(math.floor(min(ys)) - 3, 0), fh - 1)
    y1 = max(min(math.ceil(max(ys)) + 4, fh), y0 + 1)
    buf = _bgra_buffer(fh, fw)
    cv2.cvtColor(frame[y0:y1, x0:x1], cv2.COLOR_BGR2BGRA, dst=buf[y0:y1, x0:x1])
    out = cv2.warpAffine(buf, m, size, flags=flags, borderMode=cv2.BORDER_REPLICATE)
    return cv2.cvtColor(out, cv2.COLOR_BGRA2BGR)


_buffers = threading.local()


def _bgra_buffer(h: int, w: int) -> np.ndarray:
    """A four-channel frame-sized buffer, one per thread and frame size (its content
    outside the part :func:`crop_corner` just wrote is stale and never read)."""
    got: dict[tuple[int, int], np.ndarray] | None = getattr(_buffers, "by_size", None)
    if got is None:
        got = _buffers.by_size = {}
    buf = got.get((h, w))
    if buf is None:
        buf = got[(h, w)] = np.zeros((h, w, 4), np.uint8)
    return buf


@dataclass(frozen=True, slots=True)
class Ink:
    """The ink of an upright corner crop: its connected parts and the paper around them.

    ``stats``/``centroids`` as ``cv2.connectedComponentsWithStats`` gives them (row 0 is
    the paper); ``keep`` the parts that may be glyphs (big enough, not running into the
    crop's far edges, where the frame or the rest of the card cuts them).
    """

    crop: np.ndarray
    ink: np.ndarray  # darkest channel of the crop
    labels: np.ndarray
    stats: np.ndarray
    centroids: np.ndarray
    keep: np.ndarray  # bool per label
    paper: float  # grey level of the paper (darkest channel)
    threshold: float
    #: the rows (from the top) in which the card's own edge, along a free x axis, was
    #: painted out (:func:`find_ink`'s ``edge``); 0 when it was not
    edge_rows: int = 0
    #: the rows (from the top) painted as paper where the y axis is known: the card's
    #: top edge and the dark beyond it; 0 along a free y axis
    top_rows: int = 0


def runs_from_left(mask: np.ndarray) -> np.ndarray:
    """Per row of a boolean ``mask``, how many pixels from its left side on are set (the
    first unset column; the width where the whole row is set).

    >>> runs_from_left(np.array([[1, 1, 0, 1], [0, 1, 1, 1], [1, 1, 1, 1]], bool)).tolist()
    [2, 0, 4]
    """
    return np.argmin(np.concatenate([mask, np.zeros((mask.shape[0], 1), bool)], axis=1),
                     axis=1)


#: The reader's slack on each learned layout measure: this share of the measure's size
#: (its larger bound, at least 0.5) beyond the learned range on each side.
LAYOUT_SLACK = 0.12


def layout_slack(low: float, high: float) -> float:
    """How far beyond a learned layout range ``low``..``high`` a measure may lie.

    >>> round(layout_slack(0.4, 0.5), 3), round(layout_slack(-2.0, 1.0), 3)
    (0.06, 0.24)
    """
    return LAYOUT_SLACK * max(abs(low), abs(high), 0.5)


def find_ink(crop: np.ndarray, min_part: int, min_contrast: float = 20.0,
             free: tuple[bool, bool] = (False, False), darker: float = 0.0,
             lines: int = 0, edge: bool = False) -> Ink | str:
    """The ink parts of an upright corner crop, or why there are none.

    The darkest channel makes red, black, blue and green ink all dark; Otsu's threshold
    splits it from the paper. The crop's first rows and columns (the card's own edge
    and its rounded corner, where the dark shoe interior shows) are painted as paper, so
    a glyph near the edge never joins the dark outside. Along a ``free`` axis (the frame
    cuts the card there, so where its edge is is not known) nothing is painted, and a
    part running into that side of the crop is no glyph (the frame cut it). ``darker``
    moves the threshold that share of the way towards the ink (parts joined by blur
    come apart). ``lines`` (px, 0: not done): printed lines are taken out of the ink
    before its parts are found (:func:`remove_lines`: a frame line of the court
    picture that blur joined to the index would take the glyph with it). ``edge`` (only
    along a free x axis with y known): the card's own left edge, in view from the
    painted top down (the crop's side darker than 0.6 of the paper in each row: the
    region ran into the frame's border further down, and the axis was free), is painted
    out all the same in those rows (:attr:`Ink.edge_rows`), up to 2 px past its straight
    line (the lower quartile of the dark's reach over those rows: a rounded corner or a
    glyph joined by blur reaches further); when it is not in view there, why not.
    """
    ink = channel_min(crop)
    if ink is crop:  # a grey crop: paint on a copy
        ink = ink.copy()
    h, w = ink.shape
    light = percentile_u8(ink, 90)
    # the card's own edges near the crop's top and left (the corner is known to a few
    # pixels): the first row / column whose median is paper-light; everything before
    # it (the shoe interior, the rounded corner) is painted as paper
    n = min(28, h // 2, w // 2)
    e = CORNER_PAD + 3
    ty = tx = top_rows = 0
    if not free[1]:
        ty = first_median_above(ink[:n, w // 5:], 1, 0.6 * light)
        top_rows = max(e, ty + 3)
        ink[:top_rows, :] = np.uint8(light)
    if not free[0]:
        tx = first_median_above(ink[h // 5:, :n], 0, 0.6 * light)
        ink[:, :max(e, tx + 3)] = np.uint8(light)
    if not (free[0] or free[1]):
        np.copyto(ink, np.uint8(light), where=_corner_triangle((h, w), max(2 * e, tx + ty) + 8))
    edge_rows = 0
    if edge:
        top = top_rows
        side = ink[top:, 0] <= 0.6 * light
        run = int(np.argmin(np.append(side, False)))  # rows of the band from the top
        if free[1] or not free[0] or run < n:
            return "the card's edge is not in view by the index"
        edge_rows = top + run
        dark = ink[top:edge_rows, :n] <= 0.6 * light
        # each row's dark run from the crop's side: where the first paper-light pixel is
        reach = runs_from_left(dark)
        tx = int(np.percentile(reach, 25)) + 2
        ink[:edge_rows, :tx] = np.uint8(light)
        np.copyto(ink, np.uint8(light), where=_corner_triangle((h, w), max(2 * e, tx + ty) + 8))
    thr, _ = cv2.threshold(ink, 0, 255, cv2.THRESH_BINARY_INV | cv2.THRESH_OTSU)
    # the paper: ink > thr (an 8-bit threshold compares as that); the mean over no pixel
    # is 0
    _t, is_paper = cv2.threshold(ink, thr, 255, cv2.THRESH_BINARY)
    paper = float(cv2.mean(ink, is_paper)[0])
    if paper - thr < min_contrast:
        return "no ink on a light face near the corner"
    if darker:
        thr -= darker * (paper - thr)
    e = max(e, tx + 3, ty + 3)
    # ink <= thr (an 8-bit threshold is compared as its floor, the same for integers)
    _t, binary = cv2.threshold(ink, thr, 1, cv2.THRESH_BINARY_INV)
    if lines:
        binary = remove_lines(binary, lines)
    _n, labels, stats, centroids = cv2.connectedComponentsWithStats(binary, connectivity=8)
    x, y, bw, bh, area = stats.T
    keep = (area >= min_part) & (x + bw < w - 1) & (y + bh < h - 1)
    # slivers of the card's edge left beside the painted band (the corner is known to
    # a pixel or two) are no glyphs
    keep &= ~(((x <= e + 1) & (bw <= 3)) | ((y <= e + 1) & (bh <= 3)))
    if free[0]:
        keep &= x > 0
    if free[1]:
        keep &= y > 0
    keep[0] = False
    return Ink(crop, ink, labels, stats, centroids, keep, paper, float(thr), edge_rows,
               top_rows)


def attempts(g: Geometry) -> tuple[tuple[float, int], ...]:
    """How an index crop is looked at, in turn, until its index is found: (``darker``,
    ``lines``) of :func:`find_ink`: as thresholded; with a darker threshold (parts
    joined by blur come apart); with the printed lines longer than any rank (1.5 times
    the tallest at the largest scale) taken out."""
    return ((0.0, 0), (0.35, 0), (0.0, max(round(1.5 * SCALES[1] * g.rank_h[2]), 12)))


def remove_lines(binary: np.ndarray, length: int) -> np.ndarray:
    """``binary`` (0/1 ink) less its printed lines: vertical runs at least ``length`` px
    long (longer than any glyph of the index: a frame line of the court picture, a
    border), and horizontal runs of a quarter of that which run into the crop's right
    edge (a line going on past the index; no glyph of the index reaches that edge) or
    into such a vertical line (the frame's corner). A glyph's rows that run on into
    such a line go with it (a nick; the match decides).

    >>> b = np.zeros((40, 30), np.uint8)
    >>> b[5:15, 3:9] = 1                  # a glyph ...
    >>> b[0:40, 12:14] = 1                # ... beside a frame line
    >>> b[10:12, 8:30] = 1                # joined to it by a line running off the crop
    >>> out = remove_lines(b, 30)
    >>> int(out[:, 9:].sum()), int(out[5:15, 3:9].sum()), int(out[10:12].sum())
    (0, 48, 0)
    """
    vert = cv2.morphologyEx(binary, cv2.MORPH_OPEN, np.ones((length, 1), np.uint8))
    horiz = cv2.morphologyEx(binary, cv2.MORPH_OPEN,
                             np.ones((1, max(length // 4, 3)), np.uint8))
    n, lab, st, _c = cv2.connectedComponentsWithStats(horiz, connectivity=4)
    w = binary.shape[1]
    off_edge = np.zeros(n, bool)
    off_edge[1:] = st[1:, 0] + st[1:, 2] >= w
    if n > 1 and vert.any():
        off_edge[np.unique(lab[cv2.dilate(vert, _K3) > 0])] = True
        off_edge[0] = False
    out = binary.copy()
    out[vert > 0] = 0
    out[off_edge[lab]] = 0
    return out


def percentile_u8(a: np.ndarray, q: float) -> float:
    """``np.percentile(a, q)`` of an 8-bit image, the same value, from its histogram
    (no sort): the two order statistics the percentile lies between are read off the
    cumulative counts; when they are equal (nearly always in a crop) that is the value,
    otherwise numpy interpolates between them.

    >>> a = np.array([[3, 9, 9], [9, 9, 200]], np.uint8)
    >>> percentile_u8(a, 50) == float(np.percentile(a, 50)), percentile_u8(a, 90)
    (True, 104.5)
    """
    n = a.size
    pos = (n - 1) * (q / 100.0)
    lo = math.floor(pos)
    cum = np.cumsum(cv2.calcHist([a], [0], None, [256], [0, 256]).ravel())
    # the k-th smallest (0-based) is the first value whose cumulative count passes k
    below, above = np.searchsorted(cum, [lo + 1, min(lo + 2, n)])
    if below == above:
        return float(below)
    return float(np.percentile(a, q))


def median_u8(a: np.ndarray, axis: int) -> np.ndarray:
    """``np.median(a, axis=axis)`` of a 2-d 8-bit array (the same float64 values,
    without numpy's checks): the middle of each line, or the mean of the two middle
    ones, found by a partial sort.

    >>> a = np.array([[5, 1, 3, 200], [7, 7, 0, 1]], np.uint8)
    >>> median_u8(a, 1).tolist(), median_u8(a, 0).tolist()
    ([4.0, 4.0], [6.0, 4.0, 1.5, 100.5])
    """
    m = a.shape[axis]
    k = m // 2
    s = np.partition(a, [k - 1, k] if m % 2 == 0 else k, axis=axis)
    hi = np.take(s, k, axis=axis).astype(np.float64)
    if m % 2:
        return hi
    return (np.take(s, k - 1, axis=axis) + hi) / 2


def first_median_above(a: np.ndarray, axis: int, thr: float) -> int:
    """The first line of the 2-d 8-bit ``a`` (a row for ``axis=1``, a column for
    ``axis=0``) whose median along ``axis`` is above ``thr``, or 0 when none is: the
    same as the first of ``np.flatnonzero(np.median(a, axis=axis) > thr)``, from counts
    instead of a sort. With ``m`` values a line, ``k = m // 2`` and ``j`` of them at or
    below ``thr``: for odd ``m`` the median (the k-th smallest) is above ``thr`` exactly
    when ``j <= k``; for even ``m`` (the mean of the (k-1)-th and k-th smallest) when
    ``j < k``, never when ``j > k``, and when ``j == k`` it is worked out.

    >>> a = np.array([[0, 0, 9], [9, 9, 0], [5, 6, 7]], np.uint8)
    >>> first_median_above(a, 1, 4.5), first_median_above(a, 0, 4.5)
    (1, 0)
    >>> b = np.array([[1, 2], [4, 6]], np.uint8)  # medians 1.5 and 5.0
    >>> first_median_above(b, 1, 4.99), first_median_above(b, 1, 5.0)
    (1, 0)
    """
    m = a.shape[axis]
    k = m // 2
    low = np.count_nonzero(a <= thr, axis=axis)
    if m % 2:
        above = low <= k
    else:
        above = low < k
        tie = np.flatnonzero(low == k)
        if len(tie):
            lines = np.take(a, tie, axis=1 - axis)
            above[tie] = median_u8(lines, axis) > thr
    first = np.flatnonzero(above)
    return int(first[0]) if len(first) else 0


@lru_cache(maxsize=16)
def _corner_triangle(shape: tuple[int, int], size: int) -> np.ndarray:
    return np.add.outer(np.arange(shape[0]), np.arange(shape[1])) < size


def union_box(stats: np.ndarray, ids: list[int]) -> tuple[int, int, int, int]:
    """The box (x0, y0, x1, y1; exclusive) around the parts ``ids``.

    >>> st = np.array([[0, 0, 9, 9, 81], [2, 3, 4, 5, 20], [5, 1, 2, 2, 4]], np.int32)
    >>> union_box(st, [1]), union_box(st, [1, 2])
    ((2, 3, 6, 8), (2, 1, 7, 8))
    """
    # Python ints from one row each (indexing numpy scalars one by one costs more)
    if len(ids) == 1:
        x, y, w, h = stats[ids[0], :4].tolist()
        return x, y, x + w, y + h
    rows = [stats[i, :4].tolist() for i in ids]
    return (min(r[0] for r in rows), min(r[1] for r in rows),
            max(r[0] + r[2] for r in rows), max(r[1] + r[3] for r in rows))


def _parts_mask(labels: np.ndarray, ids: list[int]) -> np.ndarray:
    """1 where ``labels`` is one of ``ids``, else 0 (uint8): ``np.isin`` for the few
    labels of a glyph, without its set machinery.

    >>> _parts_mask(np.array([[0, 1, 2], [2, 3, 1]]), [1, 3]).tolist()
    [[0, 1, 0], [0, 1, 1]]
    """
    sel = labels == ids[0]
    for i in ids[1:]:
        sel |= labels == i
    return sel.view(np.uint8)


#: The glyph canvas's smoothing: the kernel ``cv2.GaussianBlur(out, (0, 0), 0.6)`` makes
#: for a float image (7 taps), applied by ``cv2.sepFilter2D`` (the same result, without
#: making the kernel again for every glyph).
_GLYPH_BLUR = cv2.getGaussianKernel(7, 0.6, cv2.CV_32F)


def glyph_vector(ink: Ink, ids: list[int], canvas: tuple[int, int]) -> np.ndarray | None:
    """The parts ``ids`` as one normalized glyph: the darkness of the ink (paper minus
    ink, with a pixel of blur margin around the parts) scaled to the canvas height,
    aspect kept, centred; zero-mean and unit-norm. None for a degenerate glyph."""
    x0, y0, x1, y1 = union_box(ink.stats, ids)
    x0, y0 = max(x0 - 1, 0), max(y0 - 1, 0)
    x1, y1 = min(x1 + 1, ink.ink.shape[1]), min(y1 + 1, ink.ink.shape[0])
    lab = ink.labels[y0:y1, x0:x1]
    sel = _parts_mask(lab, ids)
    sel = cv2.dilate(sel, _K3)
    roi = np.maximum(ink.paper - ink.ink[y0:y1, x0:x1].astype(np.float32), 0) * sel
    ch, cw = canvas
    rh, rw = roi.shape
    nw = min(max(round(rw * ch / rh), 2), cw)
    g = cv2.resize(roi, (nw, ch), interpolation=cv2.INTER_AREA)
    out = np.zeros(canvas, np.float32)
    off = (cw - nw) // 2
    out[:, off:off + nw] = g
    out = cv2.sepFilter2D(out, -1, _GLYPH_BLUR, _GLYPH_BLUR, borderType=cv2.BORDER_REFLECT_101)
    v = out.ravel()
    # v.mean() and np.linalg.norm(v), the same operations without their Python layers
    total = np.add.reduce(v)
    v -= total.dtype.type(total / np.intp(v.size))
    n = float(np.sqrt(v.dot(v)))
    if n < 1e-6:
        return None
    return v / n



def ink_colour(ink: Ink, ids: list[int]) -> np.ndarray | None:
    """The colour of the parts ``ids`` relative to the paper's, as three log ratios less
    their mean: a colour cast or a dimmer light multiplies ink and paper alike and
    cancels out. None for a grey frame."""
    if ink.crop.ndim != 3:
        return None
    x0, y0, x1, y1 = union_box(ink.stats, ids)
    lab = ink.labels[y0:y1, x0:x1]
    core = _parts_mask(lab, ids)
    eroded = cv2.erode(core, _K3)
    if int(eroded.sum()) >= 6:
        core = eroded
    b, g, r, _ = cv2.mean(ink.crop[y0:y1, x0:x1], core)
    # ink >= paper - 8, as an 8-bit threshold (ink > ceil(paper - 8) - 1)
    _t, paper_mask = cv2.threshold(ink.ink, math.ceil(ink.paper - 8) - 1, 1, cv2.THRESH_BINARY)
    pb, pg, pr, _ = cv2.mean(ink.crop, paper_mask)
    v = np.log((np.array([b, g, r]) + 4.0) / (np.array([pb, pg, pr]) + 4.0))
    # v.mean() (three float64: summed in order, divided by 3)
    return v - (float(v[0]) + float(v[1]) + float(v[2])) / 3


#: Normalized glyph canvases (height, width): rank and suit.
RANK_CANVAS = (20, 30)
SUIT_CANVAS = (16, 20)


@dataclass(frozen=True, slots=True)
class Geometry:
    """Where a deck's index sits in an upright corner crop at the calibrated scale (crop
    px, the crop starting ``CORNER_PAD`` outside the card's corner), learned from the
    calibration frames: the boxes around every card's rank and suit, the ranks'
    heights, and the median suit centre."""

    rank_union: tuple[float, float, float, float]
    suit_union: tuple[float, float, float, float]
    rank_top: tuple[float, float]  # lowest, highest top edge of a rank
    rank_left: tuple[float, float]
    rank_h: tuple[float, float, float]  # min, median, max
    suit_centre: tuple[float, float]
    suit_h: tuple[float, float, float]  # min, median, max
    #: min, median, max width of a suit (0: not learned, a profile from before it was)
    suit_w: tuple[float, float, float] = (0.0, 0.0, 0.0)

    def to_json(self) -> dict[str, list[float]]:
        return {k: list(getattr(self, k)) for k in self.__slots__}  # type: ignore[attr-defined]

    @staticmethod
    def from_json(d: dict[str, list[float]]) -> Geometry:
        return Geometry(**{k: tuple(float(x) for x in d[k])  # type: ignore[arg-type]
                           for k in Geometry.__slots__ if k in d})  # type: ignore[attr-defined]


@dataclass(frozen=True, slots=True)
class Found:
    """The rank and suit parts of one index in an :class:`Ink`."""

    rank: list[int]
    suit: list[int]
    rank_box: tuple[int, int, int, int]
    suit_box: tuple[int, int, int, int]
    #: the ink the parts are of, when it is not the one searched: a suit joined to the
    #: court art was cut out of it (:func:`cut_joined`, :func:`cut_box`)
    ink: Ink | None = None
    #: the suit was cut out along the deck's suit box (:func:`cut_box`: art covers part
    #: of it): read only for a card the deck learned so
    boxed: bool = False



def _rank_row(st: np.ndarray, ids: list[int], anchor: int, allowed: set[int] | None = None
              ) -> list[int]:
    """The anchor and the parts beside it that are glyphs of the same rank (the 1 and 0
    of a 10): the same top and baseline (within an eighth of the height), less than half
    its height apart."""
    rows = st.tolist()  # Python ints: the same values, cheaper one by one than numpy's
    ax, ay, aw, ah_ = rows[anchor][:4]
    ah = float(ah_)
    ay0, ay1 = float(ay), float(ay + ah)
    x0, x1 = float(ax), float(ax + aw)
    row = [anchor]
    changed = True
    while changed:
        changed = False
        for i in ids:
            if i in row or (allowed is not None and i not in allowed):
                continue
            px, py, pw, ph = rows[i][:4]
            ty0, ty1 = float(py), float(py + ph)
            gap = max(px - x1, x0 - (px + pw))
            if abs(ty0 - ay0) <= 0.125 * ah and abs(ty1 - ay1) <= 0.125 * ah \
                    and gap <= 0.5 * ah:
                row.append(i)
                x0, x1 = min(x0, float(px)), max(x1, float(px + pw))
                changed = True
    # pieces of a broken glyph inside the row's box
    for i in ids:
        px, py, pw, ph = rows[i][:4]
        if i not in row and x0 <= px and px + pw <= x1 \
                and ay0 <= py and py + ph <= ay1 + 0.1 * ah:
            row.append(i)
    return row


def suit_parts(st: np.ndarray, cen: np.ndarray, cands: list[int], suit0: int, ah: float
                ) -> list[int]:
    """The suit part and the pieces of the same glyph (a pedestal under a spade, a
    stem): inside its box, or starting inside it or just below it, under it and
    smaller (a stem the threshold cut off the body starts a pixel or two above the
    body's bottom: it belongs to the glyph whether or not it overlaps), and shorter
    than the body (a sword or sceptre of the court art that starts just under a small
    suit is no stem of it)."""
    x0, y0, x1, y1 = union_box(st, [suit0])
    parts = [suit0]
    for i in cands:
        if i == suit0:
            continue
        if x0 - 2 <= cen[i, 0] <= x1 + 2 and y0 - 2 <= cen[i, 1] <= y1 + 2:
            parts.append(i)
            continue
        ov = min(x1, st[i, 0] + st[i, 2]) - max(x0, st[i, 0])
        if (ov >= 0.5 * min(st[i, 2], x1 - x0)
                and y0 + 0.5 * (y1 - y0) <= st[i, 1] <= y1 + 0.1 * ah + 1
                and st[i, 4] < st[suit0, 4] and x0 - 1 <= st[i, 0]
                and st[i, 0] + st[i, 2] <= x1 + 1 and st[i, 3] <= 0.75 * (y1 - y0)):
            parts.append(i)
    return parts

#: A joined suit is cut only where the ink is this narrow (a share of the suit's widest
#: row): the point of a heart, a club's stem, where a sword or sceptre of the court art
#: touches it.
NECK_SHARE = 0.4


def cut_joined(ink: Ink, box: tuple[float, float, float, float], exclude: list[int],
               sides: bool = False) -> tuple[Ink, int] | None:
    """The suit glyph where ``box`` (x0, y0, x1, y1 in crop px: where this deck's suit
    is, learned from its other cards) says, when the suit is one ink part with court art
    (a sword or sceptre starting at its point): the part that covers the box, cut at
    its narrowest row near the box's bottom. The cut piece becomes a part of its own
    (a new label, returned). None unless it is clearly a suit-sized glyph there: the
    neck is narrow (``NECK_SHARE`` of the piece's width), the piece stays inside the
    box's surroundings (art joined from the side is no suit) and is of the box's size.
    ``exclude``: parts that are not the suit (the rank's).

    >>> img = np.full((60, 40), 230, np.uint8)
    >>> img[10:22, 10:22] = 20            # a square "suit" ...
    >>> img[22:60, 15:17] = 20            # ... joined to a sword running off the crop
    >>> n, lab, st, cen = cv2.connectedComponentsWithStats((img < 128).view(np.uint8))
    >>> ink = Ink(img, img, lab, st, cen, np.array([False, False]), 230.0, 128.0)
    >>> new, i = cut_joined(ink, (10, 10, 22, 22), [])
    >>> new.stats[i, :4].tolist(), bool(new.keep[i])
    ([10, 10, 12, 12], True)

    Art as wide as the suit joined along its foot leaves no neck: nothing is cut.

    >>> img[22:60, 10:22] = 20
    >>> n, lab, st, cen = cv2.connectedComponentsWithStats((img < 128).view(np.uint8))
    >>> cut_joined(Ink(img, img, lab, st, cen, np.array([False, False]), 230.0, 128.0),
    ...            (10, 10, 22, 22), []) is None
    True

    ``sides`` (the reader): a suit joined from the side, at a narrow neck near the box's
    right or left edge, is cut there too (blur joins a small club to the big pip beside
    it). A neck as tall as the suit is no neck: nothing is cut.

    >>> img = np.full((40, 60), 230, np.uint8)
    >>> img[10:22, 10:22] = 20            # the "suit" ...
    >>> img[15:17, 22:26] = 20            # ... a blurred bridge ...
    >>> img[5:35, 26:56] = 20             # ... to a big pip beside it
    >>> n, lab, st, cen = cv2.connectedComponentsWithStats((img < 128).view(np.uint8))
    >>> ink = Ink(img, img, lab, st, cen, np.array([False, False]), 230.0, 128.0)
    >>> cut_joined(ink, (10, 10, 22, 22), []) is None
    True
    >>> new, i = cut_joined(ink, (10, 10, 22, 22), [], sides=True)
    >>> new.stats[i, :4].tolist()[:2], 12 <= int(new.stats[i, 2]) <= 14
    ([10, 10], True)
    >>> img[10:22, 22:26] = 20
    >>> n, lab, st, cen = cv2.connectedComponentsWithStats((img < 128).view(np.uint8))
    >>> cut_joined(Ink(img, img, lab, st, cen, np.array([False, False]), 230.0, 128.0),
    ...            (10, 10, 22, 22), [], sides=True) is None
    True
    """
    lab, st = ink.labels, ink.stats
    h, w = lab.shape
    x0, y0, x1, y1 = box
    sw, sh = x1 - x0, y1 - y0
    if sw < 3 or sh < 3:
        return None
    # the window around the place: a piece cut at a neck by the suit's foot keeps the
    # sliver of art beside the neck (a sceptre's knob joined at a lobe's corner), which
    # may reach 0.4 of the suit's height past the place
    m = 0.45 * sh
    wx0, wy0 = max(int(x0 - m), 0), max(int(y0 - m), 0)
    wx1, wy1 = min(math.ceil(x1 + m), w), min(math.ceil(y1 + m), h)
    inner = lab[max(int(y0), 0):min(math.ceil(y1), h), max(int(x0), 0):min(math.ceil(x1), w)]
    counts = np.bincount(inner.ravel(), minlength=len(st))
    counts[0] = 0
    for i in exclude:
        counts[i] = 0
    j = int(np.argmax(counts))
    if counts[j] < 0.2 * sw * sh:
        return None
    win = (lab[wy0:wy1, wx0:wx1] == j).view(np.uint8)
    got = _cut_at_neck(win, y1 - wy0, sh, sw, 0, "after")
    if got is None and sides:
        # joined from the side: the narrowest column near the box's right (a pip
        # beside the index), then its left edge
        got = (_cut_at_neck(win, x1 - wx0, sw, sh, 1, "after")
               or _cut_at_neck(win, x0 - wx0, sw, sh, 1, "before"))
    if got is None:
        return None
    plab, k, (px, py, pw, ph) = got
    new_id = len(st)
    labels = lab.copy()
    sub = labels[wy0:wy1, wx0:wx1]
    sub[plab == k] = new_id
    ys, xs = np.nonzero(plab == k)
    stats = np.vstack([st, [[px + wx0, py + wy0, pw, ph, len(xs)]]]).astype(st.dtype)
    cen = np.vstack([ink.centroids, [[xs.mean() + wx0, ys.mean() + wy0]]])
    keep = np.append(ink.keep, True)
    keep[j] = False
    return replace(ink, labels=labels, stats=stats, centroids=cen, keep=keep), new_id


def _cut_at_neck(win: np.ndarray, edge: float, along: float, across: float, axis: int,
                 side: str) -> tuple[np.ndarray, int, tuple[int, int, int, int]] | None:
    """:func:`cut_joined`'s cut of the 0/1 part ``win``: the narrowest line (a row for
    ``axis`` 0, a column for 1) within 0.3 ``along`` (the box's size on that axis) of
    ``edge`` (the box's edge there), the first of equal ones (where the suit's point
    meets the art); the lines from it on (``side`` "after") or up to it ("before") are
    taken away. Returns (labels of what is left, the biggest piece's label, its box x,
    y, w, h) when that piece is a suit-sized glyph cut at a neck: the neck at most
    ``NECK_SHARE`` of its widest line, the piece inside the window's sides (not cut by
    them) and of the box's size; else None."""
    widths = win.sum(axis=1 - axis)
    r0 = max(int(edge - 0.3 * along), 1)
    r1 = min(math.ceil(edge + 0.3 * along), len(widths) - 1)
    if r1 <= r0:
        return None
    seg = widths[r0:r1 + 1]
    cut = r0 + int(np.argmin(seg))
    piece = win.copy()
    view = piece if axis == 0 else piece.T
    if side == "after":
        view[cut:] = 0
    else:
        view[:cut + 1] = 0
    n, plab, pst, _pc = cv2.connectedComponentsWithStats(piece, connectivity=8)
    if n < 2:
        return None
    k = 1 + int(np.argmax(pst[1:, 4]))
    px, py, pw, ph, _a = (int(v) for v in pst[k])
    widest = int((plab == k).sum(axis=1 - axis).max())
    if widths[cut] > NECK_SHARE * widest:
        return None
    # inside the box's surroundings (not cut off by them), of the box's size
    h, w = win.shape
    if axis == 0 and (px <= 0 or py <= 0 or px + pw >= w):
        return None
    if axis == 1 and (py <= 0 or py + ph >= h or (px <= 0 if side == "after"
                                                    else px + pw >= w)):
        return None
    sh, sw = (along, across) if axis == 0 else (across, along)
    if not (0.7 * sh <= ph <= 1.35 * sh and 0.6 * sw <= pw <= 1.5 * sw):
        return None
    return plab, k, (px, py, pw, ph)


#: A suit that court art covers in part is cut out along the suit box only when one ink
#: part fills at least this share of the box.
BOX_FILL = 0.3


def cut_box(ink: Ink, box: tuple[float, float, float, float], exclude: list[int]
            ) -> tuple[Ink, int] | None:
    """The suit where ``box`` (x0, y0, x1, y1 in crop px: this deck's suit place and
    size) says, when court art covers part of it and is one ink part with it, with no
    narrow neck to cut at (:func:`cut_joined`): a sceptre's knob over a spade's foot.
    The ink part that fills most of the box (not one of ``exclude``, the rank's) is cut
    along the box: its pixels inside the box become a part of their own (a new label,
    returned). None unless that part fills ``BOX_FILL`` of the box and runs well out of
    it (joined to something: a part of its own is found as it is). What is cut is a
    suit glyph with part of the art in it: only a card the deck learned so is read from
    it (the match against that card's learned views decides, never a guess). In a
    colour crop, art of another colour than a black suit, and the art's thin dark
    outline, are left out of the cut.

    >>> img = np.full((60, 40), 230, np.uint8)
    >>> img[10:22, 10:22] = 20            # a "suit" ...
    >>> img[18:60, 14:24] = 20            # ... its foot covered by a sceptre's knob
    >>> n, lab, st, cen = cv2.connectedComponentsWithStats((img < 128).view(np.uint8))
    >>> ink = Ink(img, img, lab, st, cen, np.array([False, False]), 230.0, 128.0)
    >>> new, i = cut_box(ink, (10, 10, 22, 22), [])
    >>> new.stats[i, :4].tolist(), bool(new.keep[i]), bool(new.keep[1])
    ([10, 10, 12, 12], True, False)

    A part that ends near the box is a glyph of its own, not art: nothing is cut.

    >>> img[22:60] = 230
    >>> n, lab, st, cen = cv2.connectedComponentsWithStats((img < 128).view(np.uint8))
    >>> cut_box(Ink(img, img, lab, st, cen, np.array([False, False]), 230.0, 128.0),
    ...         (10, 10, 22, 22), []) is None
    True

    In colour, a gold knob (light in its red and green channels) over the foot of a
    black suit is left out: what is cut is the suit's black.

    >>> bgr = np.full((60, 40, 3), 230, np.uint8)
    >>> bgr[10:22, 10:22] = 20                  # a black "suit" ...
    >>> bgr[18:60, 14:24] = (20, 160, 210)      # ... a gold knob over its foot
    >>> grey = bgr.min(axis=2)
    >>> n, lab, st, cen = cv2.connectedComponentsWithStats((grey < 128).view(np.uint8))
    >>> new, i = cut_box(Ink(bgr, grey, lab, st, cen, np.array([False, True]), 230.0, 128.0),
    ...                  (10, 10, 22, 22), [])
    >>> new.stats[i, :4].tolist(), int(new.stats[i, 4]) < 12 * 12
    ([10, 10, 12, 12], True)
    """
    lab, st = ink.labels, ink.stats
    h, w = lab.shape
    x0, y0, x1, y1 = box
    bx0, by0 = max(math.floor(x0), 0), max(math.floor(y0), 0)
    bx1, by1 = min(math.ceil(x1), w), min(math.ceil(y1), h)
    if bx1 - bx0 < 3 or by1 - by0 < 3:
        return None
    inner = lab[by0:by1, bx0:bx1]
    counts = np.bincount(inner.ravel(), minlength=len(st))
    counts[0] = 0
    for i in exclude:
        counts[i] = 0
    j = int(np.argmax(counts))
    if counts[j] < BOX_FILL * inner.size:
        return None
    # joined: the part runs out of the box by more than a third of its height
    m = (y1 - y0) / 3
    px, py, pw, ph = (int(v) for v in st[j, :4])
    if px >= x0 - m and py >= y0 - m and px + pw <= x1 + m and py + ph <= y1 + m:
        return None
    sel = inner == j
    if ink.crop.ndim == 3:
        # art of another colour than a black suit (a gold knob over a spade): of the
        # part, what is dark in every channel, less the art's thin dark outline (an
        # opening), its largest piece, when that is enough of the box (a red or blue
        # suit is light in some channel: cut as it is)
        light = 0.5 * (ink.threshold + ink.paper)
        dark = (ink.crop[by0:by1, bx0:bx1].max(axis=2) < light) & sel
        if np.count_nonzero(dark) >= 0.5 * BOX_FILL * inner.size:
            opened = cv2.morphologyEx(dark.view(np.uint8), cv2.MORPH_OPEN, _K3)
            n, pieces, pst, _c = cv2.connectedComponentsWithStats(opened)
            if n > 1:  # the opening may leave nothing of a thin glyph: cut as it is
                sel = pieces == 1 + int(np.argmax(pst[1:, cv2.CC_STAT_AREA]))
    ys, xs = np.nonzero(sel)
    new_id = len(st)
    labels = lab.copy()
    labels[by0:by1, bx0:bx1][sel] = new_id
    cx0, cy0 = int(xs.min()) + bx0, int(ys.min()) + by0
    stats = np.vstack([st, [[cx0, cy0, int(xs.max()) + bx0 + 1 - cx0,
                             int(ys.max()) + by0 + 1 - cy0, len(xs)]]]).astype(st.dtype)
    cen = np.vstack([ink.centroids, [[xs.mean() + bx0, ys.mean() + by0]]])
    keep = np.append(ink.keep, True)
    keep[j] = False
    return replace(ink, labels=labels, stats=stats, centroids=cen, keep=keep), new_id


def free_rank(ink: Ink, two_part: bool = True, min_h: float = 12.0
              ) -> tuple[list[int], list[int]] | str:
    """The rank of a calibration crop, knowing nothing of the deck's layout: the ink part
    at least ``min_h`` px high nearest the corner (with, if ``two_part``, the parts
    beside it of the same height: the 1 and 0 of a 10; the anchor first). Returns (rank
    parts, the glyph-sized parts searched), or why not."""
    st = ink.stats
    ids = [int(i) for i in np.flatnonzero(ink.keep) if st[i, 3] >= min_h and st[i, 2] >= 3]
    if not ids:
        return "no ink part near the corner"
    anchor = min(ids, key=lambda i: st[i, 0] + st[i, 1])
    rank = _rank_row(st, ids, anchor) if two_part else _rank_row(st, ids, anchor, set())
    return rank, ids


def locate_free(ink: Ink, two_part: bool = True, min_h: float = 12.0) -> Found | str:
    """The index of a calibration crop, knowing nothing of the deck's layout: the ink
    part nearest the corner (with, if ``two_part``, the parts beside it of the same
    height: the 1 and 0 of a 10) is the rank, the nearest part below it, under the rank
    column, is the suit. A part with no suit under it, or with a glyph more than twice
    its height under it (a mark of the card's printed corner above the rank), is no
    rank: the next nearest is tried. Returns why not, in words."""
    st = ink.stats
    ids = [int(i) for i in np.flatnonzero(ink.keep) if st[i, 3] >= min_h and st[i, 2] >= 3]
    if not ids:
        return "no ink part near the corner"
    why = ""
    for anchor in sorted(ids, key=lambda i: st[i, 0] + st[i, 1])[:3]:
        rank = _rank_row(st, ids, anchor) if two_part else _rank_row(st, ids, anchor, set())
        rb = union_box(st, rank)
        ah = int(st[anchor, 3])
        rw = rb[2] - rb[0]
        below = [i for i in ids if i not in rank and st[i, 1] >= rb[3] - 0.1 * ah
                 and rb[0] - 0.4 * rw <= ink.centroids[i, 0] <= rb[2] + 0.4 * rw
                 and st[i, 3] >= 0.25 * ah]
        if not below:
            why = why or f"a rank {ah} px high at x={rb[0]} y={rb[1]} but no suit below it"
            continue
        # the nearest part below, and in the rank's column: art or a pip beside the
        # index may start higher up, but off the column
        rcx = (rb[0] + rb[2]) / 2
        suit0 = min(below, key=lambda i: (st[i, 1] - rb[3])
                    + 2 * abs(ink.centroids[i, 0] - rcx))
        suit = suit_parts(st, ink.centroids, below, suit0, ah)
        sb = union_box(st, suit)
        if sb[3] - sb[1] > 2 * (rb[3] - rb[1]):
            why = why or (f"a part {ah} px high at x={rb[0]} y={rb[1]} with a glyph "
                          f"{sb[3] - sb[1]} px high below it (no rank: too small)")
            continue
        return Found(rank, suit, rb, sb)
    return why


#: Pieces of one glyph the threshold cut apart are at most this share of their height
#: together apart, one above the other (a share of the glyph's own height: the same at
#: every scale of the frame).
BROKEN_GAP = 0.2


def _where_ranks_start(x: float, y: float, g: Geometry, free: tuple[bool, bool]) -> bool:
    """Does a part whose box starts at (``x``, ``y``) start where a rank of the learned
    geometry ``g`` does, at any scale of :data:`SCALES` and ``CORNER_SLACK`` px (its top
    where the ranks' tops are, its left from the ranks' least left to their right),
    along each axis that is not ``free``?

    >>> geo = Geometry((8, 8, 20, 30), (8, 33, 20, 44), (8, 8), (8, 8), (22, 22, 22),
    ...                (14, 38), (11, 11, 11))
    >>> known = (False, False)
    >>> _where_ranks_start(8, 8, geo, known), _where_ranks_start(8, 30, geo, known)
    (True, False)
    >>> _where_ranks_start(8, 30, geo, (False, True))
    True
    """
    p, e = float(CORNER_PAD), CORNER_SLACK
    lo, hi = SCALES
    if not free[1] and not (p + lo * (g.rank_top[0] - p) - e <= y
                            <= p + hi * (g.rank_top[1] - p) + e):
        return False
    return free[0] or (p + lo * (g.rank_left[0] - p) - e <= x
                       <= p + hi * (g.rank_union[2] - p))


#: How far (px, 3x3 steps) a part too big for a rank is worn down to part it from what
#: blur joined it to (:func:`split_joined`).
SPLIT_STEPS = 3


def split_joined(ink: Ink, g: Geometry, free: tuple[bool, bool] = (False, False)
                 ) -> Ink | None:
    """``ink`` with a part too big for a rank where a rank starts parted from what blur
    or the threshold joined it to (a Q's tail run into the suit under it or into court
    art beside it): the part worn down by up to ``SPLIT_STEPS`` px until it falls apart
    with a rank-high piece where a rank's top is, each piece then grown back inside the
    part's own pixels (every pixel to the piece it is nearest along the part, up to
    ``4 SPLIT_STEPS`` px away: none is added, and only a long thin stroke worn away whole
    is left out, with the part's old label, no longer kept). The pieces are parts of
    their own (new labels); None when no part parts so.

    >>> img = np.full((70, 40), 230, np.uint8)
    >>> img[8:30, 8:20] = 20                # a rank ...
    >>> img[30:32, 13:15] = 20              # ... its tail touching ...
    >>> img[32:44, 8:20] = 20               # ... the suit under it
    >>> n, lab, st, cen = cv2.connectedComponentsWithStats((img < 128).view(np.uint8))
    >>> ink = Ink(img, img, lab, st, cen, np.array([False, True]), 230.0, 128.0)
    >>> geo = Geometry((8, 8, 20, 30), (8, 33, 20, 44), (8, 8), (8, 8), (22, 22, 22),
    ...                (14, 38), (11, 11, 11))
    >>> new = split_joined(ink, geo)
    >>> sorted(new.stats[i, :4].tolist() for i in np.flatnonzero(new.keep))
    [[8, 8, 12, 23], [8, 31, 12, 13]]
    """
    st = ink.stats
    lo, hi = SCALES
    hmin, _hmed, hmax = g.rank_h
    rw = g.rank_union[2] - g.rank_union[0]
    big = []
    for i in np.flatnonzero(ink.keep).tolist():
        x, y, w, h = st[i, :4].tolist()
        if not _where_ranks_start(x, y, g, free):
            continue
        # too big for a rank, not for a rank and what touches it: no taller than the
        # whole index (a rank run into its suit), no wider than three ranks (into art)
        if (h > 1.2 * hi * hmax or w > 1.5 * hi * rw) \
                and h <= 1.2 * hi * (g.suit_union[3] - g.rank_union[1]) and w <= 3 * hi * rw:
            big.append(i)
    if not big:
        return None
    i = min(big, key=lambda k: int(st[k, 0] + st[k, 1]))
    x, y, w, h = st[i, :4].tolist()
    part = (ink.labels[y:y + h, x:x + w] == i).astype(np.uint8)
    kernel = np.ones((3, 3), np.uint8)
    worn = part
    for step in range(1, SPLIT_STEPS + 1):
        worn = cv2.erode(worn, kernel)
        n, seeds, sst, _c = cv2.connectedComponentsWithStats(worn, connectivity=8)
        # a rank-high piece whose top is where the part's (a rank's) top is (worn
        # ``step`` px from each side)
        tops = [k for k in range(1, n) if sst[k, 1] <= 2 * step + 1
                and 0.8 * lo * hmin <= sst[k, 3] + 2 * step <= 1.2 * hi * hmax]
        if n > 2 and tops:
            break
    else:
        return None
    grown = seeds.astype(np.float32)
    for _ in range(4 * SPLIT_STEPS):
        more = np.where((grown == 0) & (part > 0), cv2.dilate(grown, kernel), grown)
        if np.array_equal(more, grown):
            break
        grown = more
    labels = ink.labels.copy()
    window = labels[y:y + h, x:x + w]
    stats, cens, keep = [ink.stats], [ink.centroids], [ink.keep.copy()]
    keep[0][i] = False
    new_id = len(st)
    for k in range(1, n):
        ys, xs = np.nonzero((grown == k) & (part > 0))
        if len(xs) == 0:
            continue
        window[ys, xs] = new_id
        x0, y0 = int(xs.min()), int(ys.min())
        stats.append(np.array([[x + x0, y + y0, int(xs.max()) + 1 - x0,
                                int(ys.max()) + 1 - y0, len(xs)]], st.dtype))
        cens.append(np.array([[x + xs.mean(), y + ys.mean()]]))
        keep.append(np.array([True]))
        new_id += 1
    return replace(ink, labels=labels, stats=np.vstack(stats), centroids=np.vstack(cens),
                   keep=np.concatenate(keep))


def merge_broken(ink: Ink, g: Geometry, free: tuple[bool, bool] = (False, False)
                 ) -> Ink | None:
    """``ink`` with a rank the threshold cut in two made one part again: two parts one
    above the other (overlapping in x by half the narrower, at most ``BROKEN_GAP`` of
    their height together apart), the upper one where a rank's top is, together of a
    rank's height (0.8-1.2 of the deck's at 0.85-1.15 of its scale). The new part has a
    label of its own; None when no such pair is there.

    >>> img = np.full((60, 40), 230, np.uint8)
    >>> img[8:14, 6:18] = 20              # a 5's bar ...
    >>> img[17:30, 6:18] = 20             # ... and its bowl, apart
    >>> n, lab, st, cen = cv2.connectedComponentsWithStats((img < 128).view(np.uint8))
    >>> ink = Ink(img, img, lab, st, cen, np.array([False, True, True]), 230.0, 128.0)
    >>> geo = Geometry((6, 8, 18, 30), (6, 34, 18, 44), (8, 8), (6, 6), (22, 22, 22),
    ...                (12, 39), (10, 10, 10))
    >>> new = merge_broken(ink, geo)
    >>> new.stats[-1, :4].tolist(), new.keep.tolist()
    ([6, 8, 12, 22], [False, False, False, True])
    """
    st = ink.stats
    lo, hi = SCALES
    hmin, _hmed, hmax = g.rank_h
    ids = [int(i) for i in np.flatnonzero(ink.keep)]
    rows = {i: st[i, :4].tolist() for i in ids}
    best: tuple[float, int, int] | None = None
    for i in ids:
        x, y, w, h = rows[i]
        if not _where_ranks_start(x, y, g, free):
            continue
        for j in ids:
            if j == i:
                continue
            x2, y2, w2, h2 = rows[j]
            tall = y2 + h2 - y
            if not 0 <= y2 - (y + h) <= BROKEN_GAP * tall:
                continue
            if min(x + w, x2 + w2) - max(x, x2) < 0.5 * min(w, w2):
                continue
            if not 0.8 * lo * hmin <= tall <= 1.2 * hi * hmax:
                continue
            key = x + y
            if best is None or key < best[0]:
                best = (key, i, j)
    if best is None:
        return None
    _k, i, j = best
    new_id = len(st)
    labels = ink.labels.copy()
    labels[(labels == i) | (labels == j)] = new_id
    x0, y0 = min(rows[i][0], rows[j][0]), rows[i][1]
    x1 = max(rows[i][0] + rows[i][2], rows[j][0] + rows[j][2])
    y1 = rows[j][1] + rows[j][3]
    area = int(st[i, 4] + st[j, 4])
    stats = np.vstack([st, [[x0, y0, x1 - x0, y1 - y0, area]]]).astype(st.dtype)
    c = (ink.centroids[i] * st[i, 4] + ink.centroids[j] * st[j, 4]) / max(area, 1)
    cen = np.vstack([ink.centroids, [c]])
    keep = np.append(ink.keep, True)
    keep[i] = keep[j] = False
    return replace(ink, labels=labels, stats=stats, centroids=cen, keep=keep)


#: Scale range of DESIGN.md, and the corner's uncertainty (px) in a crop.
SCALES = (0.85, 1.15)
CORNER_SLACK = 5.0
#: How much further a rank is looked for when none is where ranks start (the reader's
#: last look: the corner found a few pixels off).
LOOSE_SLACK = 2.5


def _beyond(v: float, lo: float, hi: float) -> float:
    """How far ``v`` lies outside [lo, hi] (negative below it, 0 inside).

    >>> _beyond(13.0, 7.0, 8.0), _beyond(7.5, 7.0, 8.0), _beyond(5.0, 7.0, 8.0)
    (5.0, 0.0, -2.0)
    """
    return v - min(max(v, lo), hi)


def locate(ink: Ink, g: Geometry, free: tuple[bool, bool] = (False, False),
           box_cut: bool = False, merge: bool = False, loose: bool = False,
           sides: bool = False) -> Found | str:
    """The index in ``ink`` where the learned geometry ``g`` puts it, at any scale of
    :data:`SCALES`: the rank's first part (right size, near where a rank starts), then
    the parts inside the rank's and the suit's boxes at the scale that part gives.
    Along a ``free`` axis the corner is not known: the boxes are placed by the rank
    part's centre there (an index column is centred), with more slack.

    When nothing else is found: ``box_cut``, a suit that art covers in part is cut along
    the suit box (:func:`cut_box`; the deck learned a card so); ``merge`` (the reader),
    two pieces one above the other where a rank starts are one part
    (:func:`merge_broken`), and then a rank ``LOOSE_SLACK`` times as far from where
    ranks start is looked for (the card's corner found a few pixels off), the boxes
    placed by it (``loose``). ``sides`` (the reader): a suit joined to a pip beside it
    is cut at a neck at the side too (:func:`cut_joined`)."""
    st, cen = ink.stats, ink.centroids
    p, e = float(CORNER_PAD), CORNER_SLACK
    # loose: a rank a little further from where ranks start, the boxes placed by it
    ec = e * (LOOSE_SLACK if loose else 1.0)
    shift = (free[0] or loose, free[1] or loose)
    lo, hi = SCALES
    hmin, hmed, hmax = g.rank_h
    ids = np.flatnonzero(ink.keep)
    if len(ids) == 0:
        return "no ink near the corner"
    h = st[ids, 3].astype(np.float64)
    top = st[ids, 1].astype(np.float64)
    left = st[ids, 0].astype(np.float64)
    ok = (h >= 0.8 * lo * hmin) & (h <= 1.2 * hi * hmax)
    if not free[1]:
        ok &= ((top >= p + lo * (g.rank_top[0] - p) - ec)
               & (top <= p + hi * (g.rank_top[1] - p) + ec))
    if not free[0]:
        ok &= ((left >= p + lo * (g.rank_left[0] - p) - ec)
               & (left <= p + hi * (g.rank_union[2] - p) + ec - e))
    cands = ids[ok]
    if len(cands) == 0:
        if merge:
            # a rank the threshold cut in two (a 5's bar above its bowl): its pieces,
            # one above the other where a rank starts, as one part
            joined = merge_broken(ink, g, free)
            if joined is not None:
                got = locate(joined, g, free, box_cut, sides=sides)
                if isinstance(got, Found):
                    return got if got.ink is not None else replace(got, ink=joined)
            # a rank blur joined to the suit under it or to art beside it: parted
            parted = split_joined(ink, g, free)
            if parted is not None:
                got = locate(parted, g, free, box_cut, sides=sides)
                if isinstance(got, Found):
                    return got if got.ink is not None else replace(got, ink=parted)
            # the corner a few pixels off: a rank a little further from where it starts
            got = locate(ink, g, free, box_cut, loose=True, sides=sides)
            if isinstance(got, Found):
                return got
        return "no rank-sized ink where the index starts"
    cands = cands[np.argsort(st[cands, 0] + st[cands, 1])][:3]
    why = ""
    tries = []
    for anchor in cands:
        ah = float(st[anchor, 3])
        # the scale this rank's height gives, as a rank of the median height, or of the
        # tallest (a J or Q with a tail) or the shortest
        for ref in (hmed, hmax, hmin):
            s = min(max(ah / ref, 0.8), 1.25)
            if all(abs(s - t[1]) > 0.03 for t in tries if t[0] == anchor):
                tries.append((anchor, s))
    rcx = (g.rank_union[0] + g.rank_union[2]) / 2
    best: tuple[float, Found] | None = None
    boxed: tuple[float, Found] | None = None
    # the parts' numbers as Python lists: the same values, far cheaper one by one
    idl = ids.tolist()
    stl, cenl = st.tolist(), cen.tolist()
    for anchor_, s in tries:
        anchor = int(anchor_)
        ah = float(stl[anchor][3])
        # shift of the boxes along a free axis: the anchor's centre is the rank column's
        dx = cenl[anchor][0] - (p + s * (rcx - p)) if shift[0] else 0.0
        dy = float(stl[anchor][1]) - (p + s * (g.rank_top[0] - p)) if shift[1] else 0.0
        ex = e + (0.2 * ah if free[0] else 0.0)
        rx0, ry0, rx1, ry1 = (p + s * (v - p) for v in g.rank_union)
        rx0, rx1, ry0, ry1 = rx0 + dx, rx1 + dx, ry0 + dy, ry1 + dy
        zone = {i for i in idl if
                rx0 - ex <= cenl[i][0] <= rx1 + ex and ry0 - e <= cenl[i][1] <= ry1 + e}
        in_rank = _rank_row(st, idl, anchor, zone)
        rb = union_box(st, in_rank)
        sx0, sy0, sx1, sy1 = (p + s * (v - p) for v in g.suit_union)
        sx0, sx1, sy0, sy1 = sx0 + dx, sx1 + dx, sy0 + dy, sy1 + dy
        scx, scy = (p + s * (v - p) for v in g.suit_centre)
        scx, scy = scx + dx, scy + dy
        in_suit = [i for i in idl if i not in in_rank
                   and sx0 - ex <= cenl[i][0] <= sx1 + ex and sy0 - e <= cenl[i][1] <= sy1 + e
                   and stl[i][1] >= rb[3] - 0.15 * ah]
        used = ink
        if in_suit:
            suit0 = min(in_suit,
                        key=lambda i: (cenl[i][0] - scx) ** 2 + (cenl[i][1] - scy) ** 2)
            below = [i for i in idl if i not in in_rank and stl[i][1] >= rb[3] - 0.15 * ah]
            suit = suit_parts(st, cen, below, suit0, ah)
        else:
            # the suit may be one part with the court art: cut it where this deck's
            # suit is (its learned place and size at this scale)
            half_w = 0.5 * s * (g.suit_w[1] or (g.suit_union[2] - g.suit_union[0]))
            half_h = 0.5 * s * g.suit_h[1]
            place = (scx - half_w, scy - half_h, scx + half_w, scy + half_h)
            cut = cut_joined(ink, place, in_rank, sides)
            if cut is None:
                why = why or "no suit where the index layout puts it"
                if box_cut:
                    # the box under the rank found: a corner found a few px off moves
                    # the whole index (the rank out of where this deck's ranks start
                    # by as much), and a box left where the corner says cuts the suit
                    # it is to hold (a spade's lobes and foot below the box)
                    mx = 0.0 if shift[0] else _beyond(rb[0], p + s * (g.rank_left[0] - p),
                                                      p + s * (g.rank_left[1] - p))
                    my = 0.0 if shift[1] else _beyond(rb[1], p + s * (g.rank_top[0] - p),
                                                      p + s * (g.rank_top[1] - p))
                    got = cut_box(ink, (place[0] + mx, place[1] + my, place[2] + mx,
                                        place[3] + my), in_rank)
                    if got is not None:
                        new, i = got
                        sb = union_box(new.stats, [i])
                        fit = (abs(math.log((rb[3] - rb[1]) / (s * hmed)))
                               + abs(math.log(max(sb[3] - sb[1], 1) / (s * g.suit_h[1]))))
                        if boxed is None or fit < boxed[0]:
                            boxed = (fit, Found(in_rank, [i], rb, sb, new, True))
                continue
            used, suit0 = cut
            suit = [suit0]
        sb = union_box(used.stats, suit)
        # how well the sizes fit this scale: the rank's and the suit's height
        fit = (abs(math.log((rb[3] - rb[1]) / (s * hmed)))
               + abs(math.log(max(sb[3] - sb[1], 1) / (s * g.suit_h[1]))))
        if best is None or fit < best[0]:
            best = (fit, Found(in_rank, suit, rb, sb, None if used is ink else used))
    if best is not None:
        return best[1]
    if boxed is not None:
        return boxed[1]
    return why

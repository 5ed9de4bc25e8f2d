"""Index recognition: one camera frame -> a card (with orientation and confidence), the
cut card, nothing, or a rejection. Never a guess.

The reader knows no deck of its own: the glyphs it compares against, the index layout,
the card and cut-card colours all come from the calibration profile, learned from the
casino's own deck (``shoe-calibrate learn``). The steps (see
:mod:`shoe_controller.vision.index_glyphs`):

1. quarter resolution: nothing light -> **empty**; the light regions (at most two);
2. a region coloured like the learned cut card -> **cut**;
3. for each region, both places an index can be (top-left corner, upright; bottom-right
   corner, upside down): crop, turn upright, segment rank and suit, check the layout
   against the learned one (size within the scale range, suit below rank), then
   normalized correlation with the learned rank and suit glyphs;
4. a read needs, for rank and suit both, a best score above the profile's minimum and a
   clear margin over the runner-up, and an ink colour (red/black) that agrees with the
   suit; two different cards in view, or nothing that passes, -> **reject**.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from shoe_controller.game.cards import ALL_CARDS, SUITS, Card
from shoe_controller.vision.index_glyphs import (
    IndexGlyphs,
    Region,
    crop_corner,
    extract_index,
    find_regions,
    to_small,
)
from shoe_controller.vision.profile import Profile
from shoe_controller.vision.reads import FrameRead

__all__ = ["IndexReader"]

_CARDS = {(c.rank, c.suit): c for c in ALL_CARDS}
RANK_NAMES = "A23456789TJQK"
#: The calibrated scale may vary 0.85-1.15; glyph sizes are accepted a little beyond.
SCALE_RANGE = (0.75, 1.32)
#: The scale range of DESIGN.md, for what must be in view.
CORE_SCALES = (0.85, 1.15)


class IndexReader:
    """Reads card indices with the deck learned into ``profile``.

    >>> IndexReader(Profile())
    Traceback (most recent call last):
    ...
    shoe_controller.vision.profile.ProfileError: profile: no deck learned ...
    """

    def __init__(self, profile: Profile) -> None:
        profile.require_deck()
        assert profile.rank_templates is not None and profile.suit_templates is not None
        self.profile = profile
        g, c, t = profile.geometry, profile.colours, profile.thresholds
        self._ranks = _Templates(profile.rank_templates)
        self._suits = _Templates(profile.suit_templates)
        self._crop = (int(g["crop_size"][0]), int(g["crop_size"][1]))
        self._min_part = int(g["min_part"])
        # the part of the frame any index covers, whatever its scale (card pixels from
        # the corner, less a few for the corner's uncertainty): the box at the largest
        # scale's near edges and the smallest scale's far edges
        x0, y0, x1, y1 = (float(v) for v in g["index_box"])
        lo, hi = CORE_SCALES
        self._core = [(hi * x0 + 3, hi * y0 + 3), (lo * x1 - 3, hi * y0 + 3),
                      (hi * x0 + 3, lo * y1 - 3), (lo * x1 - 3, lo * y1 - 3)]
        self._layout = {c: tuple(float(v) for v in g["layout"][c.code]) for c in ALL_CARDS}
        heights = [lay[0] for lay in self._layout.values()]
        self._rank_h_range = (SCALE_RANGE[0] * min(heights), SCALE_RANGE[1] * max(heights))
        self._min_region = float(g["min_region_area"])
        face = float(c["face_level"])
        self._empty_level = 0.35 * face
        self._mask_floor = 0.25 * face
        self._face_chroma = np.array(c["face_chroma"], np.float64)
        self._cut_chroma = np.array(c["cut_chroma"], np.float64) if c.get("cut_chroma") else None
        self._red_split = c.get("red_split")
        self._red_suits = frozenset(c.get("red_suits", ()))
        self._t = {k: float(v) for k, v in t.items()}

    # ------------------------------------------------------------------ public

    def read(self, frame: np.ndarray) -> FrameRead:
        """The verdict on one 8-bit frame (BGR or grey)."""
        small = to_small(frame)
        level, regions = find_regions(small, self._min_region, 2, self._mask_floor)
        if level < self._empty_level or not regions:
            return FrameRead.empty()
        cut = self._cut_confidence(regions[0])
        if cut is not None:
            return FrameRead.cut(cut)
        reads: list[tuple[Card, str, float]] = []
        why = ""
        depth = -1
        for region in regions:
            # the corner the frame does not cut off first; once a card is read, a corner
            # beyond the frame holds no second whole index
            corners = sorted(((False, region.clipped_tl), (True, region.clipped_br)),
                             key=lambda c: c[1])
            for down, clipped in corners:
                if clipped and reads:
                    continue
                got = self._read_corner(frame, region, down)
                if isinstance(got[0], Card):
                    reads.append(got)  # type: ignore[arg-type]
                elif got[0] > depth:
                    depth, why = got  # type: ignore[assignment]
        if not reads:
            return FrameRead.rejected(why or "no index found")
        cards = {r[0] for r in reads}
        if len(cards) > 1:
            names = " and ".join(sorted(c.code for c in cards))
            return FrameRead.rejected(f"two different indices in view ({names})")
        card = reads[0][0]
        orientations = {r[1] for r in reads}
        orientation = orientations.pop() if len(orientations) == 1 else None
        return FrameRead.of_card(card, orientation, min(r[2] for r in reads))  # type: ignore[arg-type]

    # ------------------------------------------------------------------ steps

    def _cut_confidence(self, region: Region) -> float | None:
        """Confidence that ``region`` is the cut card, or None if it is not."""
        if self._cut_chroma is None:
            return None
        mean = np.array(region.mean_bgr, np.float64)
        total = mean.sum()
        if total <= 0:
            return None
        chroma = mean / total
        d_cut = float(np.abs(chroma - self._cut_chroma).sum())
        d_face = float(np.abs(chroma - self._face_chroma).sum())
        if d_cut < 0.25 and d_cut < 0.4 * d_face:
            return max(0.0, min(1.0, 1.0 - d_cut / max(d_face, 1e-6)))
        return None

    def _read_corner(self, frame: np.ndarray, region: Region, down: bool
                     ) -> tuple[Card, str, float] | tuple[int, str]:
        """A card read at one corner, or (how far it got, why not)."""
        if not self._index_can_be_in_view(frame, region, down):
            return (0, "no whole index in view")
        crop = crop_corner(frame, region, down, self._crop)
        glyphs = extract_index(crop, self._min_part)
        if isinstance(glyphs, str):
            return (0, glyphs)
        rh = glyphs.rank_box[3] - glyphs.rank_box[1]
        if not self._rank_h_range[0] <= rh <= self._rank_h_range[1]:
            return (1, f"index of the wrong size (rank {rh} px high)")
        r = self._ranks.match(glyphs.rank, "rank", RANK_NAMES, self._t)
        if isinstance(r[1], str):
            return r
        s = self._suits.match(glyphs.suit, "suit", SUITS, self._t)
        if isinstance(s[1], str):
            return s
        r1, rank_best = r
        s1, suit_best = s
        card = _CARDS[(r1 + 1, SUITS[s1])]
        problem = self._layout_problem(glyphs, card)
        if problem:
            return (4, problem)
        suit = SUITS[s1]
        if glyphs.redness is not None and self._red_split is not None:
            is_red = glyphs.redness > self._red_split
            if is_red != (suit in self._red_suits):
                return (4, f"ink colour disagrees with the suit {suit}")
        confidence = min(rank_best, suit_best)
        return (card, "down" if down else "up", confidence)

    def _index_can_be_in_view(self, frame: np.ndarray, region: Region, down: bool) -> bool:
        """Could a whole index at this corner be in view? Not when part of the area every
        index covers (at any scale of the range) is out of the frame."""
        h, w = frame.shape[:2]
        t = math.radians(region.angle) + (math.pi if down else 0.0)
        ct, st = math.cos(t), math.sin(t)
        cx, cy = region.bottom_right if down else region.top_left
        for u, v in self._core:
            x, y = cx + u * ct - v * st, cy + u * st + v * ct
            if not (0 <= x < w and 0 <= y < h):
                return False
        return True

    def _layout_problem(self, g: IndexGlyphs, card: Card) -> str:
        """Does the index look like the learned one of this card (sizes, suit place)?"""
        rank_h, ldx, ldy, ratio_lo, ratio_hi, ra_lo, ra_hi, sa_lo, sa_hi = self._layout[card]
        rx0, ry0, rx1, ry1 = g.rank_box
        sx0, sy0, sx1, sy1 = g.suit_box
        rh = ry1 - ry0
        scale = rh / rank_h
        if not SCALE_RANGE[0] <= scale <= SCALE_RANGE[1]:
            return f"index of the wrong size for {card.code} (scale {scale:.2f})"
        ratio = (sy1 - sy0) / rh
        if not 0.85 * ratio_lo <= ratio <= 1.15 * ratio_hi:
            return "suit of the wrong size for the rank"
        # a rank or suit cut by the edge of the view is narrower than learned
        if not 0.85 * ra_lo <= (rx1 - rx0) / rh <= 1.15 * ra_hi:
            return f"rank of the wrong width for {card.code} (cut by the edge of the view?)"
        if not 0.85 * sa_lo <= (sx1 - sx0) / (sy1 - sy0) <= 1.15 * sa_hi:
            return f"suit of the wrong width for {card.code}"
        dy = ((sy0 + sy1) - (ry0 + ry1)) / 2 / rh
        dx = ((sx0 + sx1) - (rx0 + rx1)) / 2 / rh
        if math.hypot(dx - ldx, dy - ldy) > 0.35:
            return "suit not where the index layout puts it"
        return ""



class _Templates:
    """The learned variants of each glyph of one kind (ranks or suits), and the match.

    Two scores per glyph class, each the best over the class's variants: the plain
    normalized correlation (is this a glyph of the deck at all?) and the correlation of
    what remains after taking away the average glyph of the deck (which one is it?):
    filled shapes such as a spade and a club correlate highly as they are, but what sets
    them apart does not.
    """

    def __init__(self, templates: np.ndarray) -> None:
        t = np.asarray(templates, np.float32)
        n, a = t.shape[:2]
        flat = t.reshape(n, a, -1)
        mean = flat.mean(axis=0)  # (a, d): the deck's average glyph, per variant
        res = flat - mean[None]
        res /= np.maximum(np.linalg.norm(res, axis=2, keepdims=True), 1e-9)
        self.n, self.a = n, a
        # one product gives all: g.t (raw), g.res and g.mean; with |g| = 1,
        # res.(g - mean) / |g - mean| = (g.res - mean.res) / sqrt(1 - 2 g.mean + |mean|^2)
        self.stack = np.ascontiguousarray(np.concatenate(
            [flat.reshape(n * a, -1), res.reshape(n * a, -1), mean]))
        self.mean_res = np.einsum("ad,nad->na", mean, res)  # (n, a)
        self.mean_sq = (mean * mean).sum(axis=1)  # (a,)

    def match(self, g: np.ndarray, kind: str, names: Sequence[str], t: dict[str, float]
              ) -> tuple[int, float] | tuple[int, str]:
        """(class, raw score) of a clear match, or (depth, why not)."""
        n, a = self.n, self.a
        p = self.stack @ g
        raw = p[:n * a].reshape(n, a).max(axis=1)
        g_mean = p[2 * n * a:]
        q_norm = np.sqrt(np.maximum(1.0 - 2.0 * g_mean + self.mean_sq, 1e-12))
        res = ((p[n * a:2 * n * a].reshape(n, a) - self.mean_res) / q_norm).max(axis=1)
        order = np.argsort(res)
        c1, c2 = int(order[-1]), int(order[-2])
        best, margin = float(res[c1]), float(res[c1] - res[c2])
        if float(raw[c1]) < t[f"{kind}_min_score"] or int(np.argmax(raw)) != c1:
            return (2, f"{kind} unlike any learned glyph (best {names[int(np.argmax(raw))]} "
                       f"{float(raw.max()):.2f})")
        if best < t[f"{kind}_min_distinct"] or margin < t[f"{kind}_min_margin"]:
            return (3, f"{kind} unclear ({names[c1]} {best:.2f} vs {names[c2]} "
                       f"{float(res[c2]):.2f})")
        return (c1, float(raw[c1]))

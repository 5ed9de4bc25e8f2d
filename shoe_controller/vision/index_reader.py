"""Index recognition: one camera frame -> a card (with orientation and confidence), the
cut card, nothing, or a rejection with its reason. Never a guess.

The reader knows no deck of its own: the glyphs it compares against, where the index
sits and how big it is, the suit inks and the cut-card colours all come from the
calibration profile, learned from the casino's own deck (``shoe-calibrate learn``,
:mod:`shoe_controller.vision.index_learn`). The steps:

1. quarter resolution: the light regions (at most two), each with its angle and the
   corners where an index can be; nothing as light as a face: a card-sized region
   whose edge is a step above the shoe interior (a dark cut card, a dim plain card),
   else **empty**;
2. for each region, each corner an index can be at (top-left: upright; bottom-right:
   upside down) that is in view: an upright crop, its ink parts (Otsu threshold of the
   darkest channel), the rank and suit picked by the learned geometry at the scale the
   rank's size gives (art, pips and borders outside those places are ignored);
3. rank and suit, each by SHAPE: nearest neighbour (normalized correlation) among the
   learned views, which must be close (``*_min_score``) and clearly closer than any
   view of another glyph (``*_min_margin``); the index layout (sizes, suit place) must
   be the learned one of that card;
4. the ink colour, relative to the paper, may confirm the suit but never decides it:
   an ink nearer to another suit colour than to the suit's own is a rejection;
5. no index anywhere and a plain region: the cut card if its colour is a learned cut
   colour, in hue and in lightness (``CUT_LIGHTNESS``), otherwise an **unknown plain
   card** (a rejection saying so, which the pass tracker turns into an unreadable
   card: play stops for the dealer);
6. two different cards in view, or nothing that passes -> **reject**.
"""

from __future__ import annotations

import math
from dataclasses import replace

import cv2
import numpy as np

from shoe_controller.game.cards import ALL_CARDS, RANK_CHARS, SUITS, Card
from shoe_controller.vision.index_glyphs import (
    CORNER_PAD,
    CORNER_SLACK,
    PLAIN_FAINT_SHARE,
    PLAIN_INK_SHARE,
    RANK_CANVAS,
    SCALES,
    SUIT_CANVAS,
    Found,
    Geometry,
    Ink,
    Region,
    _parts_mask,
    _rank_row,
    attempts,
    card_by_its_edge,
    crop_corner,
    find_ink,
    find_plain_card,
    find_regions,
    glyph_vector,
    ink_colour,
    layout_slack,
    locate,
    runs_from_left,
    to_small,
)
from shoe_controller.vision.profile import Profile, ProfileError
from shoe_controller.vision.reads import FrameRead

#: A printed line thinner than this (px) everywhere: no glyph stroke the frame's edge
#: may cut (an eroded line vanishes; a glyph joined to it leaves its stems)
_THICK = np.ones((5, 5), np.uint8)

__all__ = ["UNKNOWN_PLAIN", "IndexReader"]

_CARDS = {(c.rank, c.suit): c for c in ALL_CARDS}
#: The scale range of DESIGN.md, for what must be in view.
CORE_SCALES = (0.85, 1.15)
#: Reason of the rejection of a plain card whose colour was not learned.
UNKNOWN_PLAIN = "unknown plain card"
#: A plain card is the learned cut card within this chroma distance (L1) ...
CUT_CHROMA = 0.15
#: ... and within these times its learned lightness (the sum of the mean colour's
#: channels). The full range's light (brightness 0.7-1.1, an uneven field down to 0.62
#: of it, a colour cast of +-0.15 per channel, against calibration's 0.93-1.0) spans
#: about 0.38-1.45; measured over 14 400 CUT frames of the 24 development designs
#: (300 guided and 300 full-range frames each, seed 31) 0.50-1.28. Widened to
#: 0.35-1.6: a plain card of the cut card's hue three times lighter or darker (a white
#: card against a dark-grey cut card, a near-black one against a light-grey one) is an
#: unknown plain card; one within the band cannot be told from the cut card by its
#: colour under that light.
CUT_LIGHTNESS = (0.35, 1.6)
#: A suit with ink this near (px) the frame's edge may be cut by it (the blur of a suit
#: whose edge the frame's edge just touches spreads about this far)
SUIT_EDGE = 2
#: Suit inks whose learned colours are this far apart (log-ratio units) are told apart.
COLOUR_SPLIT = 0.3
#: A class this close to the best (residual correlation) must be beaten pair by pair.
PAIR_CLOSE = 0.3


def _out_of_frame(frame: np.ndarray, region: Region, down: bool, width: int,
                  height: int) -> np.ndarray:
    """Which pixels of the corner crop's first ``height`` x ``width`` lie outside the
    frame (the crop repeats the frame's edge there), for the corner of ``region`` the
    crop starts at (its bottom right when ``down``), turned by the region's angle.

    >>> r = Region(area=16.0, angle=0.0, mean_bgr=(200.0, 200.0, 200.0), level=200.0,
    ...            top_left=(3.0, 6.0), bottom_right=(7.0, 10.0), touches_border=False)
    >>> CORNER_PAD  # the crop starts this far before the corner: x = 3 - 4 = -1 first
    4
    >>> _out_of_frame(np.zeros((10, 10)), r, False, 3, 1).tolist()
    [[True, False, False]]
    """
    h, w = frame.shape[:2]
    t = math.radians(region.angle) + (math.pi if down else 0.0)
    ct, st = math.cos(t), math.sin(t)
    cx, cy = region.bottom_right if down else region.top_left
    u = np.arange(width, dtype=np.float64) - CORNER_PAD
    v = np.arange(height, dtype=np.float64)[:, None] - CORNER_PAD
    x = cx + u * ct - v * st
    y = cy + u * st + v * ct
    return (x < 0) | (x >= w) | (y < 0) | (y >= h)


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
        assert profile.rank_labels is not None and profile.suit_labels is not None
        self.profile = profile
        g, c, t = profile.geometry, profile.colours, profile.thresholds
        self._geometry = Geometry.from_json(g)
        self._ranks = _Templates(profile.rank_templates, profile.rank_labels, 13)
        # the deck's alike rank pairs, each with what tells it apart (learned from the
        # calibration views degraded across the camera range): the last word on them
        for d in g.get("alike_ranks") or []:
            a, b = (RANK_CHARS.index(ch) for ch in str(d["ranks"]))
            self._ranks.alike[(a, b)] = (np.asarray(d["w"], np.float32), float(d["offset"]),
                                         float(d["a_above"]), float(d["b_below"]))
        box_group = (int(g["box_group"]) if g.get("box_cut") and "box_group" in g
                     else None)
        # the deck's average suit glyph from the clean glyphs alone
        self._suits = _Templates(profile.suit_templates, profile.suit_labels, 4, box_group)
        self._crop = (int(g["crop_size"][0]), int(g["crop_size"][1]))
        self._min_part = int(g["min_part"])
        # the widest gap between the parts of a rank (px at the calibrated scale; None:
        # a profile from before it was learned)
        self._rank_gap = float(g["rank_gap"]) if "rank_gap" in g else None
        # the ranks a part alone of a rank of several (the 0 of a 10) may be taken for
        # by the side the rest of the other rank is on: {lookalike: the ranks whose
        # part it is}
        looks = g.get("part_lookalikes") or {}
        self._part_lookalikes: dict[str, dict[str, list[str]]] = {
            side: dict(looks.get(side, {})) for side in ("left", "right")}
        # the cards of such a rank whose suit's place no part alone of the other rank
        # comes near (learned; none in a profile from before it was): their layout
        # rejects that part, wherever the rest of its rank is
        self._part_apart = frozenset(str(c) for c in g.get("part_apart") or [])
        # per such rank, what tells it from each part alone it is taken for (learned;
        # none in a profile from before it was): (the other rank, discriminant, offset,
        # the projection above which the glyph is the rank)
        self._part_alike: dict[str, list[tuple[str, np.ndarray, float, float]]] = {}
        for d in g.get("part_alike") or []:
            self._part_alike.setdefault(str(d["rank"]), []).append(
                (str(d["part_of"]), np.asarray(d["w"], np.float32), float(d["offset"]),
                 float(d["read_above"])))
        self._rank_lefts = {r: (float(v[0]), float(v[1]))
                            for r, v in (g.get("rank_lefts") or {}).items()}
        self._attempts = attempts(self._geometry)
        # the cards whose suit art covers in part (learned cut along the suit box)
        self._box_cut = frozenset(str(c) for c in g.get("box_cut", []))
        # the suits' blur groups of clean glyphs, and of suits cut out of art (after them)
        if box_group is None:
            box_group = self._suits.groups
        self._clean_groups = (0, min(box_group, self._suits.groups))
        self._boxed_groups = (self._clean_groups[1], self._suits.groups)
        geo = self._geometry
        p = 4.0
        x0 = min(geo.rank_union[0], geo.suit_union[0]) - p
        y0 = geo.rank_union[1] - p
        x1 = max(geo.rank_union[2], geo.suit_union[2]) - p
        y1 = geo.suit_union[3] - p
        lo, hi = CORE_SCALES
        # the part of the frame every index covers at any scale (card px from the
        # corner): the largest scale's near edges, the smallest scale's far edges
        self._core = [(hi * x0 + 3, hi * y0 + 3), (lo * x1 - 3, hi * y0 + 3),
                      (hi * x0 + 3, lo * y1 - 3), (lo * x1 - 3, lo * y1 - 3)]
        # points that every index covers (the narrowest rank's left edge, the lowest
        # rank top, the suits' middle) at the smallest scale: nearest the corner they get
        ex, ey = geo.rank_left[1] - p + 1, geo.rank_top[1] - p + 1
        self._core_every = [(lo * ex, lo * ey), (lo * ex, lo * (geo.suit_centre[1] - p))]
        # the crop's part where an index can be at any scale (crop px)
        self._index_extent = (p + hi * x1 + 2, p + hi * y1 + 2)
        self._layout = {c: _layout_bounds(np.array(v, np.float64).reshape(2, -1))
                        for c, v in g["layout"].items()}
        self._min_region = float(g["min_region_area"])
        face = float(c["face_level"])
        # the dark shoe interior stays well below half the faces' level; a darker
        # card (a charcoal cut card, a dim plain card) is found by its edge instead
        self._empty_level = 0.5 * face
        self._mask_floor = 0.3 * face
        self._cut_chromas = [np.array(v, np.float64) for v in c.get("cut_chromas", [])]
        self._cut_lightness = [float(v) for v in c.get("cut_lightness", [])]
        if len(self._cut_lightness) != len(self._cut_chromas):
            # a version-3 profile always has both (load_profile refuses older ones)
            raise ProfileError("profile: the cut cards' lightness is missing; learn the "
                               "deck again with `shoe-calibrate learn`")
        ink = c.get("suit_ink")
        self._suit_ink = ({su: np.array(ink[su], np.float64) for su in SUITS}
                          if ink else None)
        # per suit, the other suits whose ink is told apart from its own (frame-free)
        self._rival_inks = ({su: [(other, ref) for other, ref in self._suit_ink.items()
                                  if _norm(ref - own) >= COLOUR_SPLIT]
                             for su, own in self._suit_ink.items()}
                            if self._suit_ink is not None else {})
        # the learned ink of a suit cut out of art along its box (art in it), per card
        self._card_ink = {code: np.array(v, np.float64)
                          for code, v in (c.get("card_ink") or {}).items()}
        self._t = {k: float(v) for k, v in t.items()}

    # ------------------------------------------------------------------ public

    def read(self, frame: np.ndarray) -> FrameRead:
        """The verdict on one 8-bit frame (BGR or grey)."""
        small = to_small(frame)
        level, regions = find_regions(small, self._min_region, 2, self._mask_floor,
                                      ink_share=False)
        if level < self._empty_level or not regions:
            # nothing as light as a face: a darker plain card, or an empty window
            dark = find_plain_card(small, self._min_region)
            if dark is None:
                # never say nothing when something is there: a card whose edge steps
                # clearly above the interior, too dark for Otsu's split of an unevenly
                # lit frame or too little in view at the frame's edge to be a region
                edge = card_by_its_edge(small, self._min_region)
                if edge is None:
                    return FrameRead.empty()
                if isinstance(edge, str):
                    return FrameRead.rejected(edge)
                dark = edge
            plain = self._plain(dark)
            if plain is not None:
                return plain
            return FrameRead.rejected("a card too dim to read (is the light on?)")
        reads: list[tuple[Card, str, float]] = []
        why = ""
        depth = -1
        for region in regions:
            corners = sorted(((False, region.clipped_tl), (True, region.clipped_br)),
                             key=lambda c: c[1])
            read_here = False
            for down, clipped in corners:
                # a card shows one index: once one is read, the same card's corner the
                # frame cuts is skipped; another region (a second card) is always read
                if clipped and read_here:
                    continue
                got = self._read_corner(frame, region, down)
                if isinstance(got[0], Card):
                    reads.append(got)  # type: ignore[arg-type]
                    read_here = True
                elif got[0] > depth:
                    depth, why = got  # type: ignore[assignment]
        if not reads:
            # is it a plain card? (the print share is measured only now: it is costly)
            _level, regions = find_regions(small, self._min_region, 2, self._mask_floor)
            plain = self._plain(regions[0])
            if plain is not None:
                return plain
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

    def _plain(self, region: Region) -> FrameRead | None:
        """The cut card, an unknown plain card, or None when the region shows print."""
        if region.ink_share > PLAIN_INK_SHARE or region.faint_share > PLAIN_FAINT_SHARE:
            return None
        mean = np.array(region.mean_bgr, np.float64)
        light = max(float(mean.sum()), 1e-6)
        chroma = mean / light
        if not self._cut_chromas:
            return FrameRead.rejected(f"{UNKNOWN_PLAIN} (no cut card learned)")
        lo, hi = CUT_LIGHTNESS
        best, hue_only = None, None
        for c, lc in zip(self._cut_chromas, self._cut_lightness, strict=True):
            d = float(np.abs(chroma - c).sum())
            if d > CUT_CHROMA:
                continue
            ratio = light / max(lc, 1e-6)
            if lo <= ratio <= hi:
                best = d if best is None else min(best, d)
            else:
                hue_only = ratio
        if best is not None:
            return FrameRead.cut(max(0.0, min(1.0, 1.0 - best / (2 * CUT_CHROMA))))
        bgr = ", ".join(f"{v:.0f}" for v in region.mean_bgr)
        if hue_only is not None:
            return FrameRead.rejected(
                f"{UNKNOWN_PLAIN} (colour BGR {bgr}: the learned cut card's hue but "
                f"{hue_only:.2f} times its lightness)")
        return FrameRead.rejected(f"{UNKNOWN_PLAIN} (colour BGR {bgr} is not the learned cut "
                                  "card's)")

    def _read_corner(self, frame: np.ndarray, region: Region, down: bool
                     ) -> tuple[Card, str, float] | tuple[int, str]:
        """A card read at one corner, or (how far it got, why not)."""
        free = region.free_axes(down)
        whole = self._index_can_be_in_view(frame, region, down, free)
        if not whole and not self._index_can_be_in_view(frame, region, down, free,
                                                        self._core_every):
            return (0, "no whole index in view")
        crop = crop_corner(frame, region, down, self._crop)
        found: Found | str = ""
        failed: tuple[int, str] | None = None
        plain: Ink | None = None  # the ink at the plain threshold (the first look)
        for darker, lines in self._attempts:
            if lines and (not whole or (any(free)
                                        and not self._crop_in_frame(frame, region, down))):
                # where the frame cuts the card a glyph may be cut too, its streak (the
                # frame's edge repeated) a "line" that must stay; along known axes the
                # whole index is in view (_index_can_be_in_view), so no line is a glyph's
                break
            ink = find_ink(crop, self._min_part, free=free, darker=darker, lines=lines)
            if isinstance(ink, str):
                return failed or (0, ink)
            if plain is None:
                plain = ink
            glyphs: list[tuple[int, int, int, int, int]] = []
            if not whole:
                drop, glyphs = self._ink_cut_by_the_frame(ink, frame, region, down)
                if glyphs and self._rank_gap is None:
                    # the frame's edge crosses where some index is (a wide one), and
                    # ink runs into it there: a glyph is cut, the index not whole in
                    # view (a darker threshold may show a blurred border line thin);
                    # a profile that did not learn the gaps inside a rank says no more
                    failed = failed or (0, "no whole index in view")
                    continue
                if drop or glyphs:
                    # a part the edge cuts is no glyph of the index found unless it is
                    # beside it (checked on the card read, below)
                    keep = ink.keep.copy()
                    keep[drop] = False
                    keep[[g[0] for g in glyphs]] = False
                    ink = replace(ink, keep=keep)
            found = locate(ink, self._geometry, free, bool(self._box_cut), merge=True,
                           sides=True)
            if isinstance(found, str):
                continue
            cut = self._cut_beside_rank(ink, found, frame, region, down) if free[0] else None
            if glyphs and cut is not None:
                # a rank the frame cuts at the crop's free side, and a glyph cut too
                failed = failed or (0, "no whole index in view")
                continue
            got = cut if cut is not None else self._read_found(ink, found, down)
            if isinstance(got[0], Card):
                if glyphs and self._cut_glyph_by_index(found, glyphs, got[0]):
                    # a glyph the frame's edge cuts lies beside the rank or the suit:
                    # the index may be more than what is in view (a 10 losing its 0)
                    failed = failed or (0, "no whole index in view")
                    continue
                char = RANK_CHARS[got[0].rank - 1]
                on_left = char in self._part_lookalikes["left"]
                on_right = char in self._part_lookalikes["right"]
                lookalike = self._part_lookalike(got[0])
                # a card whose suit's place tells it from such a part alone (under a 10
                # the suit is nearer the 1) needs no look beside it on the left
                left = on_left and free[0] and got[0].code not in self._part_apart
                if cut is None and (left or (on_right and not whole)) \
                        and self._rank_by_the_edge(frame, region, down, found.ink or ink,
                                                   found, got[0], left,
                                                   on_right and not whole, free[0]) \
                        and not self._no_part_alone(found.ink or ink, found, got[0]):
                    failed = failed or (0, "no whole index in view (the rank reaches the "
                                           "frame's edge)")
                    continue
                if lookalike and darker and plain is not None \
                        and self._lighter_beside_rank(plain, found.ink or ink, found):
                    failed = failed or (3, "rank unclear (lighter ink beside it)")
                    continue
                if found.ink is not None and region.touches_border \
                        and self._suit_by_the_frame(found.ink, found, frame, region, down):
                    failed = failed or (0, "no whole index in view (the suit reaches the "
                                           "frame's edge)")
                    continue
                return got  # type: ignore[return-value]
            # what was found is no index of the deck (a printed border's line taken for
            # the rank, glyphs joined by blur): the crop is looked at the next way
            if failed is None or got[0] > failed[0]:
                failed = got  # type: ignore[assignment]
        if free[0] and not free[1] and whole:
            got = self._read_by_the_card_edge(crop, free, down)
            if got is not None:
                return got
        if failed is not None:
            return failed
        return (1, found if isinstance(found, str) else "no index found")

    def _read_by_the_card_edge(self, crop: np.ndarray, free: tuple[bool, bool], down: bool
                               ) -> tuple[Card, str, float] | None:
        """The card at a corner whose x axis is free (the region runs into the frame's
        border further along) though the card's own edge is in view beside the whole
        index: its dark painted out as along a known axis (:func:`find_ink`'s ``edge``),
        so a glyph that blur joined to it (a 10's 1 a few px from the edge) is a part of
        its own again. The edge must be in view from the card's top down past the rank
        found (a quarter of its height more): nothing of the rank can be out of view on
        that side (a suit that the frame cuts below runs into the crop's side and is no
        part); still, a rank that a part alone of another rank is read as (an 8, a 10's
        0 alone) is not read this way. None when the edge is not in view so, or no card
        is read."""
        for darker, lines in self._attempts:
            if lines:
                continue
            ink = find_ink(crop, self._min_part, free=free, darker=darker, edge=True)
            if isinstance(ink, str):
                return None
            found = locate(ink, self._geometry, free, False, merge=True, sides=True)
            if isinstance(found, str):
                continue
            _rx0, ry0, _rx1, ry1 = found.rank_box
            if ry1 + 0.25 * (ry1 - ry0) > ink.edge_rows:
                return None
            got = self._read_found(ink, found, down)
            if isinstance(got[0], Card):
                return None if self._part_lookalike(got[0]) else got  # type: ignore[return-value]
        return None

    def _part_lookalike(self, card: Card) -> bool:
        """Is ``card``'s rank one that a part alone of another rank of this deck is read
        as (the 8 that a 10's 0 alone matches), on either side?"""
        char = RANK_CHARS[card.rank - 1]
        return char in self._part_lookalikes["left"] or char in self._part_lookalikes["right"]

    def _no_part_alone(self, ink: Ink, found: Found, card: Card) -> bool:
        """Is the rank ``found`` (read as ``card``) by its shape that rank and none of
        the parts alone of other ranks it is taken for (the 0 of a 10 read as a 9):
        nearer its own views than the learned line (``part_alike``) for every such
        part? Then what lies out of view beside it does not matter: it is no 10 whose 1
        the frame cuts off. False when the profile learned no such line for one of
        them (the two overlap, or a profile from before it was learned)."""
        char = RANK_CHARS[card.rank - 1]
        others = {o for side in ("left", "right")
                  for o in self._part_lookalikes[side].get(char, ())}
        lines = self._part_alike.get(char, [])
        if not others or not others <= {o for o, *_ in lines}:
            return False
        rv = glyph_vector(ink, found.rank, RANK_CANVAS)
        if rv is None:
            return False
        return all(float(w @ rv) - offset > above for _o, w, offset, above in lines)

    def _cut_beside_rank(self, ink: Ink, found: Found, frame: np.ndarray, region: Region,
                         down: bool) -> tuple[Card, str, float] | tuple[int, str] | None:
        """A rank-sized part that runs into the crop's free x edge (the frame cuts it;
        :func:`find_ink` dropped it) in the row of the rank ``found``: the rank is not
        whole, so what was found alone is no read (the 0 of a 10 whose 1 the frame cuts
        can match an 8). The one such rank that is still read: a 10 whose 1 is a part
        of its own that the frame's edge just touches (its blur tail, a serif's tip),
        read with the 1's pixels inside the frame, its 0 whole, the 10 the match and the
        learned layout (the rank's width) say; anything else is no whole index in view.
        None when no cut part is beside the rank (the read goes on as it was)."""
        st = ink.stats
        ch, cw = ink.labels.shape
        x, y, bw, bh, area = st.T
        _lo, hi = SCALES
        cut = ((x == 0) & (area >= self._min_part) & (x + bw < cw - 1) & (y > 0)
               & (y + bh < ch - 1) & (bh <= 1.2 * hi * self._geometry.rank_h[2]))
        cut[0] = False
        if not cut.any() or found.ink is not None:
            return None
        ids = np.flatnonzero(cut).tolist()
        row = _rank_row(st, [*found.rank, *ids], found.rank[0])
        beside = [i for i in ids if i in row]
        if not beside:
            return None
        out = _out_of_frame(frame, region, down, cw, ch)
        # the dark beyond the card's own edge, a few px of it in view by the frame's
        # edge (the region runs into the frame's border, so the corner's x is not
        # known), is no glyph the frame cuts
        rx0, ry0, _rx1, ry1 = found.rank_box
        by_rank = out[:ry1, :rx0]
        first_in = _first_inside(by_rank[ry0:], rx0)
        beside = [i for i in beside if not _card_edge(
            ink.labels, i, ry0, ry1, first_in, _edge_top(ink, i, by_rank, rx0, ry0))]
        if not beside:
            return None
        # the cut parts' pixels inside the frame (the frame's edge repeated is no ink)
        inside = ~out
        labels = ink.labels.copy()
        stats = st.copy()
        cen = ink.centroids.copy()
        keep = ink.keep.copy()
        for i in beside:
            sel = labels == i
            labels[sel & ~inside] = 0
            ys, xs = np.nonzero(sel & inside)
            if len(xs) < self._min_part:
                return (0, "no whole index in view")
            x0, y0 = int(xs.min()), int(ys.min())
            stats[i] = (x0, y0, int(xs.max()) + 1 - x0, int(ys.max()) + 1 - y0, len(xs))
            cen[i] = (xs.mean(), ys.mean())
            keep[i] = True
        rank = [*beside, *found.rank]
        whole = [i for i in found.rank if i not in beside]
        first = min(rank, key=lambda i: stats[i, 0])
        if len(beside) == 1 and whole and first in beside:
            clipped = replace(ink, labels=labels, stats=stats, centroids=cen, keep=keep)
            rows = [stats[i, :4].tolist() for i in rank]
            box = (min(r[0] for r in rows), min(r[1] for r in rows),
                   max(r[0] + r[2] for r in rows), max(r[1] + r[3] for r in rows))
            got = self._read_found(clipped, replace(found, rank=rank, rank_box=box), down)
            if isinstance(got[0], Card) and got[0].rank == 10 \
                    and not self._cut_by_suit(ink, found, beside):
                return got
        return (0, "no whole index in view")

    def _suit_by_the_frame(self, ink: Ink, found: Found, frame: np.ndarray, region: Region,
                           down: bool) -> bool:
        """Does the suit ``found``, cut out of an ink part it was joined to, have ink
        within ``SUIT_EDGE`` px of the frame's edge? The part it was cut out of may then
        be the edge's streak (the edge repeated in the crop) and the suit cut by the
        edge: what the cut leaves (ext:dondorf's spade with a piece of the streak at its
        left lobe) can match another suit (TS read as TC by the frame's edge). A suit
        that is a part of its own is clear of the streak: whole in view."""
        ch, cw = ink.labels.shape
        out = _out_of_frame(frame, region, down, cw, ch)
        if not out.any():
            return False
        near = cv2.dilate(out.view(np.uint8), np.ones((3, 3), np.uint8),
                          iterations=SUIT_EDGE)
        return bool(near[np.isin(ink.labels, found.suit)].any())

    def _cut_by_suit(self, ink: Ink, found: Found, rank: list[int]) -> bool:
        """Does a part other than the rank's ``rank`` run into the crop's free left side
        in the rows of the suit ``found`` (its box, a quarter of its height more each
        way)? The frame's edge, which cuts the rank, may then cut the suit too: what is
        left of it (a spade's foot alone, its right half) can match another suit."""
        _sx0, sy0, _sx1, sy1 = found.suit_box
        m = 0.25 * (sy1 - sy0)
        x, y, _w, h, _a = ink.stats.T
        at = (x == 0) & (y < sy1 + m) & (y + h > sy0 - m)
        at[0] = False
        at[rank] = False
        return bool(at.any())

    def _read_found(self, ink: Ink, found: Found, down: bool, foot: bool = True
                    ) -> tuple[Card, str, float] | tuple[int, str]:
        """The card of the rank and suit ``found`` in ``ink``, or (how far it got, why
        not): both glyphs by shape, the layout, the colour."""
        if found.ink is not None:
            ink = found.ink  # the suit was cut out of the court art joined to it
        rv = glyph_vector(ink, found.rank, RANK_CANVAS)
        sv = glyph_vector(ink, found.suit, SUIT_CANVAS)
        if rv is None or sv is None:
            return (1, "index glyphs of an implausible shape")
        r = self._ranks.match(rv, "rank", RANK_CHARS, self._t)
        if isinstance(r[1], str):
            return r
        s = self._suits.match(sv, "suit", SUITS, self._t,
                              self._boxed_groups if found.boxed else self._clean_groups)
        if isinstance(s[1], str):
            return s
        card = _CARDS[(r[0] + 1, SUITS[s[0]])]
        if found.boxed and card.code not in self._box_cut:
            # a suit cut out of art along the box is read only on the cards learned so
            return (1, f"no suit where the index layout puts it ({card.code}'s suit is no "
                       "part of art)")
        problem = self._layout_problem(found, card)
        if problem:
            with_foot = self._with_foot(ink, found) if foot else None
            if with_foot is not None:
                # the suit's thin foot, a sliver the threshold left too small for a
                # part of its own: the whole suit read again (shape, layout, colour);
                # the foot only mends the layout of the card the shapes said
                got = self._read_found(ink, with_foot, down, foot=False)
                if isinstance(got[0], Card) and got[0] is card:
                    return got
            return (4, problem)
        problem = self._colour_problem(ink, found, card.suit,
                                       card.code if found.boxed else "")
        if problem:
            return (5, problem)
        return (card, "down" if down else "up", min(r[1], s[1]))

    def _with_foot(self, ink: Ink, found: Found) -> Found | None:
        """``found`` with the suit's foot: the ink pieces too small for a part of their
        own (fewer than ``min_part`` pixels: a spade's or club's thin pedestal at a small
        scale, cut off the body by the threshold) that start at the suit's bottom (2 px
        above it to a quarter of its height below), lie under it, and are flat (at most
        0.4 of its height); None when there are none."""
        if found.ink is not None:
            return None
        st = ink.stats
        x0, y0, x1, y1 = found.suit_box
        sh = y1 - y0
        x, y, w, h, area = st.T
        ok = ((area >= 3) & (area < self._min_part) & (y >= y1 - 2) & (y <= y1 + 0.25 * sh)
              & (x >= x0 - 2) & (x + w <= x1 + 2) & (h <= 0.4 * sh))
        ok[0] = False
        pieces = [i for i in np.flatnonzero(ok).tolist()
                  if i not in found.suit and i not in found.rank]
        if not pieces:
            return None
        suit = [*found.suit, *pieces]
        rows = [st[i, :4].tolist() for i in suit]
        box = (min(r[0] for r in rows), min(r[1] for r in rows),
               max(r[0] + r[2] for r in rows), max(r[1] + r[3] for r in rows))
        return replace(found, suit=suit, suit_box=box)

    def _colour_problem(self, ink: Ink, found: Found, suit: str, boxed: str = "") -> str:
        """Colour confirms the shape or rejects the read: never the other way round.
        ``boxed``: the card whose suit was cut out of art along its box; its own learned
        ink (the suit's with the art's in it) is the one to be near."""
        if self._suit_ink is None:
            return ""
        col = ink_colour(ink, found.suit)
        if col is None:
            return ""
        own = self._card_ink.get(boxed) if boxed else None
        d_own = _norm(col - (self._suit_ink[suit] if own is None else own))
        # the suits of the same ink as this one's (a 2-colour deck's pairs) are not rivals
        for other, ref in self._rival_inks[suit]:
            if _norm(col - ref) < d_own:
                return (f"ink colour says {other}, suit shape says {suit}: shape and colour "
                        "disagree")
        return ""

    def _crop_in_frame(self, frame: np.ndarray, region: Region, down: bool) -> bool:
        """Is the whole corner crop inside the frame?"""
        h, w = frame.shape[:2]
        t = math.radians(region.angle) + (math.pi if down else 0.0)
        ct, st = math.cos(t), math.sin(t)
        cx, cy = region.bottom_right if down else region.top_left
        p = CORNER_PAD
        for u, v in ((0, 0), (self._crop[0], 0), (0, self._crop[1]), self._crop):
            x = cx + (u - p) * ct - (v - p) * st
            y = cy + (u - p) * st + (v - p) * ct
            if not (0 <= x < w and 0 <= y < h):
                return False
        return True

    def _side_gap(self, found: Found, card: Card) -> int:
        """How far beside the rank ``found`` (read as ``card``) another part of it may
        be (px): the widest gap between the parts of a rank this deck learned, at the
        frame's scale (the rank's height against ``card``'s learned one), 25 % more
        and 5 px (half the rank's height for a profile without the gap)."""
        rh = found.rank_box[3] - found.rank_box[1]
        lay = self._layout.get(card.code)
        scale = rh / lay[0] if lay else 1.0
        return math.ceil(1.25 * scale * self._rank_gap + 5.0 if self._rank_gap is not None
                         else 0.5 * rh + 5.0)

    def _lighter_beside_rank(self, plain: Ink, ink: Ink, found: Found) -> bool:
        """Read with a darker threshold (``ink``), did the rank ``found`` lose ink beside
        it: at the plain threshold (``plain``), do the parts its pixels belong to reach,
        in its rows, more than 3 px (the halo a darker threshold takes off a glyph)
        further left or right than it? A light part of the rank (an outlined 1 of a 10,
        one part with the 0 at the plain threshold) that the darker threshold dropped
        would leave the rest of it (the 0) to be read as the rank a part alone looks
        like (an 8)."""
        rx0, ry0, rx1, ry1 = found.rank_box
        rows = plain.labels[ry0:ry1]
        own = _parts_mask(ink.labels[ry0:ry1], found.rank).astype(bool)
        ids = np.unique(rows[own & (rows != 0)]).tolist()
        if not ids:
            return False
        cols = np.flatnonzero(_parts_mask(rows, ids).any(axis=0))
        return int(cols[0]) < rx0 - 3 or int(cols[-1]) + 1 > rx1 + 3

    def _rank_by_the_edge(self, frame: np.ndarray, region: Region, down: bool, ink: Ink,
                          found: Found, card: Card, left: bool, right: bool,
                          free_x: bool) -> bool:
        """Could the rank ``found`` (read as ``card``: a rank that a part alone of
        another rank of this deck is read as, the 8 of a deck whose 10's 0 is) go on
        out of view beside it? On its ``left`` (the rest of that other rank is on the
        left: asked when the crop's x axis is ``free_x``, the card's own edge there out
        of view) or its ``right`` (asked when the index's place is not all in view; with
        the corner known along x, only when that other rank starts where this one
        does), within :meth:`_side_gap` in the rank's rows: the frame's edge (or, along
        the free axis, the crop's start: the card's outline where the frame cuts it),
        or on the left ink of a part that runs into the crop's free side (the frame's
        edge, or the dark beyond the card's edge, joined to it). The 1 of a 10 out of
        view, or blurred into the dark at the frame's edge, leaves its 0, which may be
        read as an 8: what the rank is is then not known, whatever the layout says. On
        the left the frame's edge within the gap is no such rest when the card's own
        edge is in view between it and the rank (:func:`_card_edge`, the band reaching
        2 px or more past the frame's edge in every rank row): nothing of the card lies
        beyond its edge."""
        rx0, ry0, rx1, ry1 = found.rank_box
        gap = self._side_gap(found, card)
        cw = ink.labels.shape[1]
        if left:
            x0 = rx0 - gap
            out = _out_of_frame(frame, region, down, rx0, ry1)
            # the frame's edge within the gap: the rest of a rank may be out of view,
            # unless the card's own edge is in view between it and the rank (below)
            near = x0 <= 0 or bool(out[ry0:, max(x0, 0):].any())
            # a part the frame cuts is the rest of the other rank wherever that rest
            # would be: from where the other rank starts to where this one does (the
            # learned starts at the frame's scale), not only within the gap between the
            # parts: blur and the threshold thin a 1's foot, so a 1 the frame cuts ends
            # further from the 0 than learned (ext:tango, whose learned gap is 0)
            zx0 = max(0, rx0 - max(gap, self._rest_reach(found, card) + gap))
            zone = ink.labels[ry0:ry1, zx0:rx0]
            st = ink.stats
            ids = np.unique(zone[zone != 0]).tolist()
            # per rank row, the first crop column inside the frame
            first_in = _first_inside(out[ry0:], rx0)
            seen = False
            for i in ids:
                if st[i, 0] != 0 or ink.keep[i]:
                    continue
                top = _edge_top(ink, i, out, rx0, ry0)
                if not _card_edge(ink.labels, i, ry0, ry1, first_in, top):
                    return True
                # the card's edge in view in every rank row, inside the frame: nothing
                # of the card, so of a rank, lies beyond it
                seen = seen or bool(
                    (runs_from_left(ink.labels[ry0:ry1, :rx0] == i) > first_in + 1).all())
            if near and not seen:
                return True
        if right and not free_x and self._rank_lefts:
            # the corner known along x: the rank is the left part of another only if
            # another rank starts where it does (the corner known to CORNER_SLACK, and
            # a tenth of the rank's height for the angle)
            p = CORNER_PAD
            rh = ry1 - ry0
            lay = self._layout.get(card.code)
            scale = rh / lay[0] if lay else 1.0
            tol = CORNER_SLACK + 0.1 * rh
            own = RANK_CHARS[card.rank - 1]
            right = any(p + scale * (lo - p) - tol <= rx0 <= p + scale * (hi - p) + tol
                        for r, (lo, hi) in self._rank_lefts.items()
                        if r in self._part_lookalikes["right"].get(own, ()))
        if right:
            x1 = min(rx1 + gap, cw)
            if x1 <= rx1 or _out_of_frame(frame, region, down, x1, ry1)[ry0:, rx1:].any():
                return True
        return False

    def _rest_reach(self, found: Found, card: Card) -> int:
        """How far left of the rank ``found`` (read as ``card``) the other ranks that a
        part alone of is read as ``card`` start (px at the frame's scale: the learned
        starts of the ranks, the rank's height against ``card``'s learned one); 0 when
        the profile did not learn where ranks start."""
        own = RANK_CHARS[card.rank - 1]
        others = self._part_lookalikes["left"].get(own, ())
        if own not in self._rank_lefts or not others:
            return 0
        rh = found.rank_box[3] - found.rank_box[1]
        lay = self._layout.get(card.code)
        scale = rh / lay[0] if lay else 1.0
        hi = self._rank_lefts[own][1]
        return max((math.ceil(scale * (hi - self._rank_lefts[r][0]))
                    for r in others if r in self._rank_lefts), default=0)

    def _cut_glyph_by_index(self, found: Found,
                            glyphs: list[tuple[int, int, int, int, int]], card: Card
                            ) -> bool:
        """Does a part the frame's edge cuts (``glyphs``: (label, x0, y0, x1, y1) of its
        pixels inside the frame) lie where it could be of the index ``found``, read as
        ``card``? Beside the rank, in its row (its band, an eighth of its height more
        each way), nearer than the widest gap between the parts of a rank this deck
        learned (the 1 and 0 of a 10) at the frame's scale (the rank's height against
        ``card``'s learned one) and 25 % more, and 3 px; or by the suit (its box, a
        quarter of its height more each way). Anywhere else it is art, a pip or a
        border the edge cuts beside an index whole in view, as ignored as they are
        when the whole card is in view."""
        rx0, ry0, rx1, ry1 = found.rank_box
        sx0, sy0, sx1, sy1 = found.suit_box
        rh = ry1 - ry0
        lay = self._layout.get(card.code)
        scale = rh / lay[0] if lay else rh / self._geometry.rank_h[0]
        gap = 1.25 * scale * float(self._rank_gap or 0.0) + 3.0
        band = 0.125 * rh
        ms = 0.25 * (sy1 - sy0)
        for _label, x0, y0, x1, y1 in glyphs:
            if (x0 < rx1 + gap and x1 > rx0 - gap and y0 < ry1 + band and y1 > ry0 - band):
                return True
            if x0 < sx1 + ms and x1 > sx0 - ms and y0 < sy1 + ms and y1 > sy0 - ms:
                return True
        return False

    def _ink_cut_by_the_frame(self, ink: Ink, frame: np.ndarray, region: Region,
                              down: bool
                              ) -> tuple[list[int], list[tuple[int, int, int, int, int]]]:
        """Is there ink out of the frame (the frame's edge repeated: a glyph the edge
        cuts) in the part of the crop where an index can be? Returns the parts the edge
        cuts that are no glyph, for the reader to drop (none when the edge cuts nothing,
        or only lines that stay), and those that may be glyphs, each as (label, x0, y0,
        x1, y1: the box of its pixels inside the frame).

        A printed line (a border: thin everywhere inside the frame and longer than any
        glyph, the lines :func:`remove_lines` takes out) that the edge cuts is no glyph
        and does not count; a glyph joined to it makes it thick, and then it counts.
        Dropped as no glyph: a thin line (no stroke of the 5 x 5 ``_THICK``) longer,
        inside the frame, than the tallest rank at the largest scale (a border the edge
        cuts short; no part of one glyph is a thin stroke that long), and a part with
        fewer pixels inside the frame than the least ink part (the edge's streak beside
        a border's line, a glyph all but out of view). A dropped part is as a glyph
        wholly out of the frame: what is in view is read (or rejected) without it."""
        ch, cw = ink.labels.shape
        uw = min(cw, math.ceil(self._index_extent[0]))
        vh = min(ch, math.ceil(self._index_extent[1]))
        cut = _out_of_frame(frame, region, down, uw, vh) & (ink.labels[:vh, :uw] != 0)
        if not cut.any():
            return [], []
        # the whole crop's pixels inside the frame (this path is rare: the widest
        # index's place crosses the frame's edge)
        inside = ~_out_of_frame(frame, region, down, cw, ch)
        length = self._attempts[-1][1]
        _lo, hi = SCALES
        tallest = 1.2 * hi * self._geometry.rank_h[2]
        drop: list[int] = []
        glyphs: list[tuple[int, int, int, int, int]] = []
        for label in np.unique(ink.labels[:vh, :uw][cut]).tolist():
            part = ((ink.labels == label) & inside).astype(np.uint8)
            ys, xs = np.nonzero(part)
            if len(ys) < self._min_part:
                drop.append(label)
                continue
            longest = max(int(ys.max() - ys.min()), int(xs.max() - xs.min())) + 1
            thick = bool(cv2.erode(part, _THICK).any())
            if not thick and length and longest >= length:
                continue
            if thick or longest < tallest:
                glyphs.append((label, int(xs.min()), int(ys.min()), int(xs.max()) + 1,
                               int(ys.max()) + 1))
                continue
            drop.append(label)
        return drop, glyphs

    def _index_can_be_in_view(self, frame: np.ndarray, region: Region, down: bool,
                              free: tuple[bool, bool],
                              core: list[tuple[float, float]] | None = None) -> bool:
        """Could a whole index at this corner be in view? Not when part of the area any
        index covers (at any scale of the range; ``core``: these points instead) is out
        of the frame, along an axis where the corner is known (along a free one, the
        frame edge cuts the card: whether the index is whole is for the glyphs to show)."""
        h, w = frame.shape[:2]
        t = math.radians(region.angle) + (math.pi if down else 0.0)
        ct, st = math.cos(t), math.sin(t)
        cx, cy = region.bottom_right if down else region.top_left
        for u, v in self._core if core is None else core:
            x, y = cx + u * ct - v * st, cy + u * st + v * ct
            x_axis_out = not 0 <= x < w
            y_axis_out = not 0 <= y < h
            # the crop's x axis runs along the frame's x (either way round), y along y
            if (x_axis_out and not free[0]) or (y_axis_out and not free[1]):
                return False
        return True

    def _layout_problem(self, f: Found, card: Card) -> str:
        """Does the index look like the learned one of this card (sizes, suit place)?"""
        lay = self._layout.get(card.code)
        if lay is None:
            return f"{card.code} was not learned"
        rank_h, bounds = lay
        rx0, ry0, rx1, ry1 = f.rank_box
        sx0, sy0, sx1, sy1 = f.suit_box
        rh = ry1 - ry0
        scale = rh / rank_h
        if not 0.8 <= scale <= 1.25:
            return f"index of the wrong size for {card.code} (scale {scale:.2f})"
        got = [(rx1 - rx0) / rh, (sy1 - sy0) / rh, (sx0 + sx1 - rx0 - rx1) / 2 / rh,
               (sy0 + sy1 - ry0 - ry1) / 2 / rh, (sx1 - sx0) / max(sy1 - sy0, 1)]
        for v, (low, high, name) in zip(got, bounds, strict=True):
            if not low <= v <= high:
                return f"{name} not as learned for {card.code}"
        return ""


#: The least rows (px) of the card's edge in view above a rank that starts near the
#: card's top (:func:`_card_edge`): more than a defocused glyph's top reaches above it
EDGE_ABOVE = 3
#: How far (px) the dark beyond the card's own edge may reach further into the crop in
#: a rank's rows than it does nearest the crop's side along that edge (a straight edge,
#: turned a little, blurred)
EDGE_BULGE = 3


def _first_inside(out: np.ndarray, width: int) -> np.ndarray:
    """Per row of ``out`` (the crop's pixels out of the frame, ``width`` columns), the
    first column inside the frame; ``width`` where the whole row is out.

    >>> _first_inside(np.array([[1, 1, 0], [0, 0, 0], [1, 1, 1]], bool), 3).tolist()
    [2, 0, 3]
    """
    return np.where(out.all(axis=1), width, np.argmin(out, axis=1))


def _edge_top(ink: Ink, part: int, out: np.ndarray, rx0: int, ry0: int) -> int:
    """The crop's row where the card's top edge was painted out (``ink.top_rows``) when
    from there to the rank (its left ``rx0``, top ``ry0``) the crop's side is inside
    the frame (``out``: the crop's pixels out of the frame), or ``part`` reaches past
    the frame's edge into the frame in every row: dark there is what the frame shows,
    not its edge repeated (:func:`_card_edge`'s ``top``); else 0."""
    t0 = ink.top_rows
    if not 0 < t0 < ry0:
        return 0
    above = out[t0:ry0]
    band = ink.labels[t0:ry0, :rx0] == part
    if not above[:, 0].any() or bool(
            (runs_from_left(band) > _first_inside(above, rx0) + 1).all()):
        return t0
    return 0


def _card_edge(labels: np.ndarray, part: int, ry0: int, ry1: int,
               first_in: np.ndarray | None = None, top: int = 0) -> bool:
    """Is ``part`` (of ``labels``, running into the crop's free left side) the dark
    beyond the card's own edge, with nothing joined to it beside the rank's rows
    ``ry0:ry1``? A solid band from the crop's left side in every row from a quarter of
    a rank's height above those rows (or more, up to a rank's height; or, on a deck
    that prints its rank nearer the card's top than that, from ``top`` on: the crop's
    rows painted out as the card's top edge, the crop's side inside the frame from
    there to the rank, and at least ``EDGE_ABOVE`` rows) down, whose
    right end in the rank's rows is no more than ``EDGE_BULGE`` px further right than
    its least anywhere along it (the straight edge: a rounded corner above, a suit or a
    1 blur joined to it only reach further). Where the card runs out of the frame's edge in
    the rank's rows (the band stops: ``first_in``, per rank row, the first crop column
    inside the frame), the frame's edge must be no further right than that either, and
    the part not in those rows: what the frame hides there is the card's edge and a
    sliver of its margin, no glyph. The card's edge in view beside the rank, nothing of
    a rank can be out of view there: a 1 printed left of the rank is between them, in
    view, and a 1 blur joined to the edge makes it reach further in the rank's rows.

    >>> lab = np.zeros((90, 40), np.int32)
    >>> lab[:, :5] = 1                     # the interior beyond the card's edge
    >>> _card_edge(lab, 1, 30, 60)
    True
    >>> _card_edge(lab[25:], 1, 5, 35)     # too little of the edge above the rank
    False
    >>> top = lab[25:].copy()
    >>> top[:2] = 0                        # painted out: the card's top edge
    >>> _card_edge(top, 1, 5, 35, top=2), _card_edge(top, 1, 4, 34, top=2)
    (True, False)
    >>> lab[40:, :5] = 0                   # the card runs out of the frame at row 40
    >>> inside = np.full(30, 5)            # the frame's edge: column 5 on
    >>> _card_edge(lab, 1, 30, 60, inside), _card_edge(lab, 1, 30, 60, inside + 6)
    (True, False)
    >>> _card_edge(lab, 1, 30, 60)         # where the frame's edge is not given
    False
    >>> lab[:40, :5] = 1
    >>> lab[30:40, 5:12] = 1               # a 1 joined to it by blur
    >>> _card_edge(lab, 1, 30, 60, inside)
    False
    """
    h = labels.shape[0]
    rh = ry1 - ry0
    col = labels[:, 0] == part
    # the rows of the band next to the rank's, above (the crop's painted top, or a
    # paper row, ends it) and below
    y0 = ry0
    while y0 > max(0, ry0 - rh) and col[y0 - 1]:
        y0 -= 1
    # the card's edge in view from its top down to the rank (the band starts where
    # the top was painted out): what a deck whose rank starts a few px under the
    # card's top shows above it; a glyph's streak (the frame's edge repeated) is out of
    # the frame there, so the caller gives no ``top``
    from_top = 0 < top == y0 and ry0 - y0 >= EDGE_ABOVE
    if ry0 - y0 < rh // 4 and not from_top:
        return False
    y1 = ry1
    while y1 < min(h, ry1 + rh) and col[y1]:
        y1 += 1
    band = labels[y0:y1] == part
    # each row's right end of the band run from the left side (the first column that
    # is not the part)
    ends = runs_from_left(band)
    rows = col[y0:y1]
    edge = int(ends[rows].min()) + EDGE_BULGE
    own = rows[ry0 - y0:ry1 - y0]
    if int(ends[ry0 - y0:ry1 - y0][own].max(initial=0)) > edge:
        return False
    if own.all():
        return True
    # the rank's rows where the card runs out of the frame: only its margin hidden, and
    # nothing of the part there
    if first_in is None:
        return False
    off = ~own
    return bool((first_in[off] <= edge).all() and not band[ry0 - y0:ry1 - y0][off].any())


_LAYOUT_NAMES = ("rank width", "suit size", "suit place", "suit place", "suit width")


def _layout_bounds(lay: np.ndarray) -> tuple[float, list[tuple[float, float, str]]]:
    """A card's learned layout (rows: the least and the greatest of each measure, the
    rank's height first) as the reader checks it: the mean rank height, and per measure
    the range it may take (the learned one, 12% of its size wider on each side).

    >>> h, b = _layout_bounds(np.array([[20.0, 0.5, 0.4], [24.0, 0.7, 0.5]]))
    >>> h, [(round(lo, 3), round(hi, 3), n) for lo, hi, n in b]
    (22.0, [(0.416, 0.784, 'rank width'), (0.34, 0.56, 'suit size')])
    """
    lo, hi = lay
    bounds = []
    for k, name in enumerate(_LAYOUT_NAMES[:lay.shape[1] - 1], start=1):
        a, b = lo[k], hi[k]
        slack = layout_slack(a, b)
        bounds.append((float(a - slack), float(b + slack), name))
    return float(np.mean(lay[:, 0])), bounds


def _norm(v: np.ndarray) -> float:
    """``float(np.linalg.norm(v))`` of a float64 vector (the same dot product and
    square root, without its Python layers).

    >>> _norm(np.array([3.0, 4.0]))
    5.0
    """
    return math.sqrt(float(v.dot(v)))


class _Templates:
    """The learned views of each glyph of one kind (ranks or suits), and the match.

    Views are grouped by how blurred they are; a frame is compared with one blur group
    at a time and judged in the group it fits best (a sharp spade is then never weighed
    against a blurred club, which can look alike). Two scores per class, each the best
    over the class's views: the plain normalized correlation (is this a glyph of the
    deck at all?) and the correlation of what remains after taking away the deck's
    average glyph (which one is it?). The best class by the second must be above
    ``*_min_score`` by the first and ``*_min_distinct`` by the second.

    Then it must beat every close rival (within ``PAIR_CLOSE`` by the second score, and
    the best by the first) pair by pair: with the two glyphs' average taken away, what
    is left is only what sets the two apart (a spade's point against a club's top lobe,
    the notches at a club's sides), and the frame's glyph must be nearer the views of
    its own class than those of the rival by ``*_pair_margin``. Two glyphs that are
    not told apart with that margin are a rejection, never a guess.
    """

    def __init__(self, templates: np.ndarray, labels: np.ndarray, n: int,
                 mean_groups: int | None = None) -> None:
        labels = np.asarray(labels).astype(np.int64)
        order = np.argsort(labels, kind="stable")
        t = np.asarray(templates, np.float32)[order]
        lab = labels[order]
        self.groups = int(lab.max()) // n + 1
        cls = lab % n
        # the average glyph over the first ``mean_groups`` blur groups (all by default)
        inside = lab < n * (mean_groups or self.groups)
        mean = np.mean([t[(cls == k) & inside].mean(axis=0) for k in range(n)], axis=0)
        res = t - mean
        res /= np.maximum(np.linalg.norm(res, axis=1, keepdims=True), 1e-9)
        self.mean = mean.astype(np.float32)
        self.raw = np.ascontiguousarray(t)
        self.res = np.ascontiguousarray(res.astype(np.float32))
        full = np.arange(self.groups * n)
        self.present = np.isin(full, lab).reshape(self.groups, n)
        starts = np.searchsorted(lab, full)
        ends = np.searchsorted(lab, full, side="right")
        self.starts = np.minimum(starts, len(lab) - 1)
        self.spans = np.stack([starts, ends], axis=1).reshape(self.groups, n, 2)
        # each class's mean view per blur group (the pair test's midpoints)
        self.centres = np.zeros((self.groups, n, t.shape[1]), np.float32)
        for gi in range(self.groups):
            for k in range(n):
                a, b = self.spans[gi, k]
                if b > a:
                    self.centres[gi, k] = t[a:b].mean(axis=0)
        self.n = n
        #: learned alike pairs (a < b): (weights, offset, a only above, b only below)
        self.alike: dict[tuple[int, int], tuple[np.ndarray, float, float, float]] = {}

    def _best(self, scores: np.ndarray) -> np.ndarray:
        b = np.maximum.reduceat(scores, self.starts).reshape(self.groups, self.n)
        return np.where(self.present, b, -1.0)

    def pair(self, g: np.ndarray, grp: int, a: int, b: int) -> float:
        """How much nearer ``g`` is to the views of class ``a`` than to those of ``b``
        (blur group ``grp``), with the two classes' midpoint taken away: the best
        correlation with an ``a`` view less the best with a ``b`` view, in [-2, 2]."""
        m = 0.5 * (self.centres[grp, a] + self.centres[grp, b])
        d = g - m
        nd = float(np.linalg.norm(d))
        if nd < 1e-9:
            return 0.0
        d /= nd
        mm = float(m @ m)
        best = []
        for k in (a, b):
            s0, s1 = self.spans[grp, k]
            if s1 <= s0:
                best.append(-1.0)
                continue
            v = self.raw[s0:s1]
            vm = v @ m
            # the views are unit vectors: |v - m|^2 = 1 - 2 v.m + m.m
            norms = np.sqrt(np.maximum(1.0 - 2.0 * vm + mm, 1e-12))
            best.append(float(((v @ d - float(m @ d)) / norms).max()))
        return best[0] - best[1]

    def match(self, g: np.ndarray, kind: str, names: str | tuple[str, ...],
              t: dict[str, float], groups: tuple[int, int] | None = None
              ) -> tuple[int, float] | tuple[int, str]:
        """(class, score) of a clear match, or (depth, why not). ``groups``: the blur
        groups (first, end) to match in (default: all)."""
        q = g - self.mean
        q /= max(float(np.sqrt(q.dot(q))), 1e-9)  # np.linalg.norm(q)
        raw = self._best(self.raw @ g)
        res = self._best(self.res @ q)
        lo, hi = groups or (0, self.groups)
        if hi <= lo:
            return (2, f"{kind}: no learned glyph to match")
        grp = lo + int(np.argmax(res[lo:hi].max(axis=1))) if hi - lo > 1 else lo
        raw, res = raw[grp], res[grp]
        order = np.argsort(res)[::-1].tolist()
        scores = res.tolist()  # Python floats: the same values, cheaper one by one
        c1 = order[0]
        b1 = scores[c1]
        r1 = float(raw[c1])
        if r1 < t[f"{kind}_min_score"]:
            return (2, f"{kind} unlike any learned glyph (best {names[int(np.argmax(raw))]} "
                       f"{float(raw.max()):.2f})")
        if b1 < t[f"{kind}_min_distinct"]:
            return (3, f"{kind} unclear ({names[c1]} {b1:.2f})")
        rivals = [c for c in order[1:3] if b1 - scores[c] < PAIR_CLOSE]
        top_raw = int(np.argmax(raw))
        if top_raw != c1 and top_raw not in rivals:
            rivals.append(top_raw)
        margin = t[f"{kind}_pair_margin"]
        # the best two (or a close rival) a pair learned alike: its discriminant has the
        # last word (it must say the best too, clear of the band where the two overlap);
        # the pair test is not asked about such a pair, whose views it cannot tell apart
        # by the margin (a small 8 and a B at 0.28 apart, clean)
        alike = [c for c in {order[1], *rivals} if (min(c1, c), max(c1, c)) in self.alike]
        for c in rivals:
            if c in alike:
                continue
            pm = self.pair(g, grp, c1, c)
            if pm < margin:
                return (3, f"{kind} unclear ({names[c1]} vs {names[c]}: {pm:.2f} apart)")
        for c in alike:
            key = (min(c1, c), max(c1, c))
            w, offset, a_above, b_below = self.alike[key]
            s = float(w @ g) - offset
            if (s <= a_above) if c1 == key[0] else (s >= b_below):
                return (3, f"{kind} unclear ({names[c1]} vs {names[c]}, printed alike: "
                           f"{s:.3f} between {b_below:.3f} and {a_above:.3f})")
        return (c1, r1)

"""Learning a deck: calibration frames -> a :class:`~shoe_controller.vision.profile.Profile`.

The input is one frame per card code (the card as the camera sees it in the calibrated
position, upright or upside down, its index fully in view) and one of the cut card
(``CUT``; more plain cut-card colours as ``CUT2``, ``CUT3``...). Nothing about the
deck is assumed: not the index size, typeface, suit shapes, colours, border or art.

1. Each card's corner crop is searched for its index without knowing the deck
   (:func:`~shoe_controller.vision.index_glyphs.locate_free`): the ink part nearest the
   corner and its neighbours are the rank, the nearest part below is the suit.
2. Across the 52 cards, the deck's index geometry: where ranks and suits sit and how
   big they are (:class:`~shoe_controller.vision.index_glyphs.Geometry`). A card whose
   index does not fit the others (art or a border taken for a glyph) is explained.
3. Each crop is seen again smaller and larger (0.85-1.15), turned a little, with motion
   blur and defocus; the reader's own locator finds rank and suit in every such view
   and the glyphs are stored (many views per card: the reader's nearest-neighbour
   match then covers the range the camera sees).
4. The suit inks relative to the paper (so a colour cast cancels) per suit, and which
   suits share a colour; the card face's and the cut card's colours.
5. Every calibration frame is read back with the learned profile: a deck that does not
   read back perfectly is refused with the cards that failed.

Every card that cannot be learned is explained (:class:`LearnFailure`: the card, what
was seen, what to do), and :func:`annotate` draws what was found on its frame.

>>> LearnFailure("QC", "no suit below the rank", "check the card is in view").line()
'QC: no suit below the rank; check the card is in view'
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace

import cv2
import numpy as np

from shoe_controller.game.cards import ALL_CARDS, RANK_CHARS, SUITS, parse_card
from shoe_controller.vision.index_glyphs import (
    CORNER_PAD,
    PLAIN_FAINT_SHARE,
    PLAIN_INK_SHARE,
    RANK_CANVAS,
    SUIT_CANVAS,
    Found,
    Geometry,
    Ink,
    Region,
    attempts,
    blurred,
    crop_corner,
    cut_box,
    cut_joined,
    find_ink,
    find_plain_card,
    find_regions,
    free_rank,
    glyph_vector,
    ink_colour,
    layout_slack,
    locate,
    locate_free,
    suit_parts,
    to_small,
    union_box,
)
from shoe_controller.vision.profile import DEFAULT_THRESHOLDS, Profile

__all__ = ["DeckLearner", "LearnError", "LearnFailure", "annotate", "card_regions",
           "learn_profile", "template_separation"]

#: When the whole card width is in view, the index is looked for within these shares of
#: it (width, height) from the top-left corner; otherwise within ``DEFAULT_LEARN_BOX``.
LEARN_BOX_SHARE = (0.45, 0.6)
DEFAULT_LEARN_BOX = (126, 168)
#: How much larger the box is searched when a jumbo index runs past it.
BOX_GROWTH = 1.4
MIN_LEARN_AREA = 2000.0  # frame px: anything smaller is no card
#: A card face while learning is at least this light (grey levels, brightest channel);
#: the shoe interior is darker.
MIN_LEARN_LEVEL = 80.0
#: Views of each calibration crop learned: (scale, angle in degrees, motion blur px,
#: defocus sigma px).
BLURS: tuple[tuple[float, float], ...] = ((0.0, 0.0), (4.0, 0.6), (0.0, 1.2), (6.0, 1.0))
#: A suit found in a learned view less high or less wide than this share of the card's
#: own (and the deck's) is a piece of it (:func:`_suit_fragment`): paris's club feet
#: alone, 0.18-0.22 of a club. (Its top lobes alone, 0.33-0.39, are kept: at 0.6 they
#: went too, and its clubs in the full range under heavy blur, read from such a lobe,
#: were rejected: 4 more rejections in 500 full-range frames at seed 71011.)
FRAGMENT = 0.3
AUGMENTATIONS: tuple[tuple[float, float, float, float], ...] = tuple(
    (s, a, m, d)
    for s in (0.86, 1.0, 1.14)
    for a in (-2.5, 0.0, 2.5)
    for m, d in BLURS
)


def card_regions(frame: np.ndarray) -> list[Region]:
    """The light card in a calibration frame (none for a dark, empty window)."""
    level, regions = find_regions(to_small(frame), MIN_LEARN_AREA, 1, 0.75 * MIN_LEARN_LEVEL)
    return regions if level >= MIN_LEARN_LEVEL else []


@dataclass(frozen=True)
class LearnFailure:
    """A card that could not be learned: which, what was seen, what to do."""

    code: str
    saw: str
    todo: str
    boxes: tuple[tuple[str, tuple[float, float, float, float]], ...] = ()

    def line(self) -> str:
        return f"{self.code}: {self.saw}; {self.todo}"


class LearnError(Exception):
    """The calibration frames do not make a usable profile (the message says why;
    ``failures`` lists the cards, for :func:`annotate`)."""

    def __init__(self, message: str, failures: list[LearnFailure] | None = None) -> None:
        super().__init__(message)
        self.failures = failures or []


#: A read-back rejected because two ranks are alike (the reader's reason names them).
_ALIKE_UNCLEAR = re.compile(r"^rank unclear \(([A2-9TJQK]) vs ([A2-9TJQK])")
_TODO_POSITION = ("put the card in the calibrated position with its index fully in view, "
                  "evenly lit and in focus, and take the frame again")


@dataclass
class _Sample:
    crop: np.ndarray
    ink: Ink
    found: Found
    colour: np.ndarray | None
    chroma: np.ndarray
    level: float
    down: bool
    region: Region


def _chroma(bgr: tuple[float, float, float]) -> np.ndarray:
    a = np.array(bgr, np.float64)
    return a / max(a.sum(), 1e-6)


def _box(region: Region, box: tuple[int, int] | None) -> tuple[int, int]:
    if box is not None:
        return box
    if region.touches_border:
        return DEFAULT_LEARN_BOX
    (x0, y0), (x1, y1) = region.top_left, region.bottom_right
    t = math.radians(region.angle)
    width = (x1 - x0) * math.cos(t) + (y1 - y0) * math.sin(t)
    return (round(width * LEARN_BOX_SHARE[0]), round(width * LEARN_BOX_SHARE[1]))


@dataclass
class DeckLearner:
    """Collects calibration frames, then :meth:`profile` builds and checks the profile."""

    learn_box: tuple[int, int] | None = None
    samples: dict[str, _Sample] = field(default_factory=dict)
    #: per cut-card label: its chromaticity, brightest level and lightness (the sum of
    #: its mean colour's channels, as the reader measures a plain card)
    cuts: dict[str, tuple[np.ndarray, float, float]] = field(default_factory=dict)
    frames: dict[str, np.ndarray] = field(default_factory=dict)
    failures: list[LearnFailure] = field(default_factory=list)
    #: cards whose rank was found but no suit under it, kept until the deck's other
    #: cards say where the suit is (it may be one ink part with the court art)
    pending: dict[str, np.ndarray] = field(default_factory=dict)
    #: the index box searched, as a multiple of the usual one (grown for a jumbo index)
    box_scale: float = 1.0
    #: cards whose suit court art covers in part, cut out along the deck's suit box
    #: (:func:`~shoe_controller.vision.index_glyphs.cut_box`); the reader reads a suit
    #: cut so only for these cards
    box_cut: set[str] = field(default_factory=set)

    @property
    def cut(self) -> tuple[np.ndarray, float, float] | None:
        return next(iter(self.cuts.values()), None)

    def add_all(self, frames: Mapping[str, np.ndarray]) -> None:
        """:meth:`add` each ``{label: frame}``; one :class:`LearnError` lists every frame
        that failed."""
        errors: list[LearnFailure] = []
        for label, frame in frames.items():
            try:
                self.add(label, frame, defer=True)
            except LearnError as e:
                errors.extend(e.failures)
        errors.extend(self.resolve_pending())
        if errors:
            raise LearnError("; ".join(f.line() for f in errors), errors)

    def glyphs_of(self, frame: np.ndarray, code: str = "",
                  suit_box: tuple[float, float, float, float] | None = None,
                  min_h: float = 12.0) -> tuple[Found, Ink, bool, Region] | LearnFailure:
        """The index of the card ``code`` in ``frame`` (top-left corner upright, else
        bottom-right corner upside down), or a failure saying what was seen. Only a 10's
        rank may be of two glyphs side by side. ``suit_box``: where this deck's suit of
        the card is (from its other cards), to cut the suit out of court art joined to
        it (:func:`~shoe_controller.vision.index_glyphs.cut_joined`) when there is no
        suit part of its own under the rank. ``min_h``: the least height of a rank."""
        regions = card_regions(frame)
        if not regions:
            return LearnFailure("", "no card in the frame (the window looks empty or dark)",
                                "check the light and that the card is in the window")
        region = regions[0]
        box = _box(region, self.learn_box)
        box = (round(box[0] * self.box_scale), round(box[1] * self.box_scale))
        why = ""
        for down in (False, True):
            crop = crop_corner(frame, region, down, box)
            ink = find_ink(crop, min_part=6)
            if isinstance(ink, str):
                why = why or ink
                continue
            found = locate_free(ink, two_part=code[:1] in ('T', ''), min_h=min_h)
            if isinstance(found, str) and self.box_scale == 1.0 and _cut_by_the_box(ink):
                # a jumbo index runs past the box: this deck's box is a larger one
                # (every card is cropped alike: see :meth:`_same_box`) -- if the larger
                # box shows the same rank with its suit; art running past the box (a
                # sceptre under the rank) is no index
                self.box_scale = BOX_GROWTH
                got = self.glyphs_of(frame, code, suit_box, min_h)
                first = free_rank(ink, two_part=code[:1] in ('T', ''), min_h=min_h)
                if not isinstance(got, LearnFailure) and got[2] == down \
                        and not isinstance(first, str) \
                        and got[0].rank_box[:2] == union_box(ink.stats, first[0])[:2]:
                    return got
                self.box_scale = 1.0
            if isinstance(found, str):
                # a printed line (a frame of the court picture) joined to the index:
                # taken out, lines longer than half the box (no glyph of it is)
                unlined = find_ink(crop, min_part=6, lines=box[1] // 2)
                if not isinstance(unlined, str):
                    again = locate_free(unlined, two_part=code[:1] in ('T', ''), min_h=min_h)
                    if isinstance(again, Found):
                        found, ink = again, unlined
            if isinstance(found, Found):
                return found, ink, down, region
            if suit_box is not None:
                got = _cut_free(ink, code, suit_box)
                if got is None:
                    # no neck: art covers part of the suit; cut along the suit's box
                    got = _cut_free(ink, code, suit_box, along_box=True)
                if got is not None:
                    return got, got.ink or ink, down, region
                if "no suit below it" in found:
                    found += (" (nor a suit-sized piece with a narrow neck in the ink "
                              "joined to it where this deck's suits are, nor one part "
                              "filling the suit's place)")
            why = why or found
        return LearnFailure("", f"at the card's corner: {why}", _TODO_POSITION)

    def suit_place(self, suit: str) -> tuple[float, float, float, float] | None:
        """Where the suit ``suit`` is on this deck's cards learned so far (the median
        box, crop px: every calibration frame shows its card in the same place); None
        before three of them are learned."""
        boxes = [x.found.suit_box for c, x in self.samples.items() if c[1] == suit]
        if len(boxes) < 3:
            return None
        m = np.median(np.array(boxes, np.float64), axis=0)
        return (float(m[0]), float(m[1]), float(m[2]), float(m[3]))

    def resolve_pending(self) -> list[LearnFailure]:
        """Learn the cards kept in :attr:`pending` now that the deck's other cards say
        where their suit is; the failures of those that still cannot be learned."""
        out = []
        for code, frame in list(self.pending.items()):
            del self.pending[code]
            try:
                self.add(code, frame)
            except LearnError as e:
                out.extend(e.failures)
        return out

    def add(self, label: str, frame: np.ndarray, defer: bool = False) -> str:
        """Learn one frame (``label`` a card code or ``CUT``/``CUT2``...); returns the
        label. Raises :class:`LearnError` naming the card when it shows no usable index.
        ``defer``: a card whose rank shows but no suit under it, when the deck's place
        of its suit is not known yet, is kept in :attr:`pending` (see
        :meth:`resolve_pending`) instead."""
        label = label.strip().upper()
        if label.startswith("CUT"):
            # the cut card may be of any colour, as dark as charcoal: a card-sized region
            # lighter than the shoe interior, light or not
            regions = card_regions(frame)
            if not regions:
                dark = find_plain_card(to_small(frame), MIN_LEARN_AREA)
                regions = [dark] if dark is not None else []
            if not regions:
                f = LearnFailure(label, "no card in the frame (nothing stands out from the "
                                 "shoe interior)",
                                 "put the cut card in the window, lit as in play")
                raise LearnError(f.line(), [f])
            r = regions[0]
            if r.ink_share > PLAIN_INK_SHARE or r.faint_share > PLAIN_FAINT_SHARE:
                shade = (f"{100 * r.ink_share:.1f}% of it is ink" if r.ink_share > PLAIN_INK_SHARE
                         else f"{100 * r.faint_share:.1f}% of it darker than the rest")
                f = LearnFailure(label, f"the card shows print ({shade}), not a plain cut card",
                                 "use the plain plastic cut card")
                raise LearnError(f.line(), [f])
            self.cuts[label] = (_chroma(regions[0].mean_bgr), regions[0].level,
                                float(sum(regions[0].mean_bgr)))
            self.frames[label] = frame
            return label
        code = parse_card(label).code
        place = self.suit_place(code[1])
        got = self.glyphs_of(frame, code, place)
        if isinstance(got, LearnFailure) and defer and place is None \
                and "no suit below it" in got.saw:
            self.pending[code] = frame
            self.frames[code] = frame
            return code
        if isinstance(got, LearnFailure):
            f = LearnFailure(code, got.saw, got.todo)
            self.failures.append(f)
            self.frames[code] = frame
            raise LearnError(f.line(), [f])
        found, ink, down, region = got
        self.samples[code] = _Sample(ink.crop, ink, found, ink_colour(ink, found.suit),
                                     _chroma(region.mean_bgr), region.level, down, region)
        self.frames[code] = frame
        self.box_cut.discard(code)
        if found.boxed:
            self.box_cut.add(code)
        if found.ink is not None:
            # a suit cut out of the art must clearly be this card's suit, never a guess
            problem = self.check(code, what=("suit",))
            if problem:
                self.discard(code)
                self.frames[code] = frame
                f = LearnFailure(code, "its suit is one ink part with the art beside it; "
                                 f"cut where this deck's suits are, {problem}", _TODO_POSITION,
                                 (("rank", found.rank_box), ("suit", found.suit_box)))
                self.failures.append(f)
                raise LearnError(f.line(), [f])
        return code

    def check(self, code: str, what: tuple[str, ...] = ("rank", "suit")) -> str:
        """Does the learned sample of ``code`` fit the cards learned before it? For the
        live walk-through: its rank glyph must be most like the same rank of another
        suit (when there is one) and its suit glyph most like the same suit of another
        rank (``what``: of these only). Returns the problem, or ``""``."""
        for kind, same_key in (("rank", 0), ("suit", 1)):
            if kind not in what:
                continue
            vecs = {c: _vector(smp, kind) for c, smp in self.samples.items()}
            if vecs[code] is None:
                return f"its {kind} could not be cut out"
            good = {c: v for c, v in vecs.items() if v is not None}
            kinds = {c[same_key] for c in good}
            if len(kinds) >= 2:
                # what sets this glyph apart from the deck's average one (as the reader
                # does), once there are different glyphs to tell apart
                mean = np.mean(list(good.values()), axis=0)
                good = {c: (v - mean) / max(float(np.linalg.norm(v - mean)), 1e-9)
                        for c, v in good.items()}
            same, other = [], []
            for c, v in good.items():
                if c == code:
                    continue
                corr = float(good[code] @ v)
                (same if c[same_key] == code[same_key] else other).append((corr, c))
            best_other = max(other, default=(-1.0, ""))
            if same and other:
                if max(same)[0] <= best_other[0] + 0.02:
                    return (f"its {kind} looks like the {kind} of {best_other[1]}, not of "
                            f"{max(same)[1]}")
            elif same:
                if max(same)[0] < 0.8:
                    return f"its {kind} does not look like the {kind} of {max(same)[1]}"
            elif best_other[0] > 0.95:
                return f"its {kind} is the same as the {kind} of {best_other[1]}"
        return ""

    def _same_box(self) -> list[str]:
        """Crop every card alike: the cards learned before the box grew (a jumbo index
        ran past it) are looked at again in the grown one. Returns those cards."""
        shape = {x.crop.shape[:2] for x in self.samples.values()}
        if len(shape) <= 1:
            return []
        big = max(shape)
        redo = [c for c, x in self.samples.items() if x.crop.shape[:2] != big]
        for c in redo:
            got = self.glyphs_of(self.frames[c], c, self.suit_place(c[1]))
            if isinstance(got, LearnFailure):
                frame = self.frames[c]
                self.discard(c)
                self.frames[c] = frame
                self.failures.append(LearnFailure(c, got.saw, got.todo))
                continue
            found, ink, down, region = got
            self.samples[c] = _Sample(ink.crop, ink, found, ink_colour(ink, found.suit),
                                      _chroma(region.mean_bgr), region.level, down, region)
            if not found.boxed:
                self.box_cut.discard(c)
        return redo

    def discard(self, code: str) -> None:
        self.samples.pop(code, None)
        self.frames.pop(code, None)
        self.box_cut.discard(code)

    def missing(self) -> list[str]:
        need = [c.code for c in ALL_CARDS if c.code not in self.samples]
        return need + ([] if self.cuts else ["CUT"])

    # ----------------------------------------------------------------- the profile

    def agree(self) -> list[str]:
        """Make every card's index agree with the deck's: the index column is the same on
        all 52 cards, so a part that is on only some of them (court art, a pip, a border
        corner) is not the index. The rank of each card is compared with the same rank
        of the other suits (its box, to a few pixels) and the suit's place with the
        whole deck's (its centre under the rank); a card that does not fit is looked at
        again, its rank and suit taken from those places. Returns the cards changed."""
        s = self.samples
        if len(s) < 8:
            return []
        changed = []
        h_med = float(np.median([x.found.rank_box[3] - x.found.rank_box[1]
                                 for x in s.values()]))
        for c, x in s.items():
            if x.found.rank_box[3] - x.found.rank_box[1] < 0.7 * h_med:
                # a part too small to be this deck's rank was nearest the corner (a
                # printed border's corner, a mark): the rank is the nearest part of the
                # deck's rank size, on either corner
                got = self.glyphs_of(self.frames[c], c, min_h=0.7 * h_med)
                if not isinstance(got, LearnFailure):
                    found, ink, down, region = got
                    s[c] = _Sample(ink.crop, ink, found, ink_colour(ink, found.suit),
                                   _chroma(region.mean_bgr), region.level, down, region)
                    changed.append(c)
        # where the deck's suits are (crop px from the card's corner: every calibration
        # frame shows its card in the same place)
        centre = np.median([((x.found.suit_box[0] + x.found.suit_box[2]) / 2,
                             (x.found.suit_box[1] + x.found.suit_box[3]) / 2)
                            for x in s.values()], axis=0)
        by_rank: dict[str, list[tuple[int, int, int, int]]] = {}
        suit_h: dict[str, list[int]] = {}
        for c, x in s.items():
            by_rank.setdefault(c[0], []).append(x.found.rank_box)
            suit_h.setdefault(c[1], []).append(x.found.suit_box[3] - x.found.suit_box[1])
        for c, x in s.items():
            boxes = by_rank[c[0]]
            med_box = tuple(float(v) for v in np.median(np.array(boxes, np.float64), axis=0))
            rb, sb = x.found.rank_box, x.found.suit_box
            tol = 0.15 * h_med
            rank_off = len(boxes) >= 3 and max(abs(a - b) for a, b in zip(rb, med_box,
                                                                          strict=True)) > tol
            scx, scy = (sb[0] + sb[2]) / 2, (sb[1] + sb[3]) / 2
            suit_off = math.hypot(scx - centre[0], scy - centre[1]) > 0.3 * h_med
            # a suit far taller than its suit on the deck's other cards: art joined to it
            # (ext:paris's KH, whose heart's point touches the sword below it), in its
            # place all the same; only cutting it out of the art helps
            tallest = (SUIT_JOINED * float(np.median(suit_h[c[1]]))
                       if len(suit_h[c[1]]) >= 4 else math.inf)
            joined = sb[3] - sb[1] > tallest
            if not (rank_off or suit_off or joined):
                continue
            found = (None if joined and not (rank_off or suit_off) else
                     _relocate(x.ink, med_box if rank_off else rb, centre, h_med))
            if found is None and (suit_off or joined) and not rank_off:
                # no part of its own where the deck's suits are: the suit may be one
                # part with the court art (cut at a neck, or along the suit's box)
                found = self._cut_suit(c, x)
            if found is not None:
                self._take(c, x, found)
                changed.append(c)
                if found.suit_box[3] - found.suit_box[1] > tallest:
                    # the rank put right, the suit under it still joined to the art
                    cut = self._cut_suit(c, x)
                    if cut is not None:
                        self._take(c, x, cut)
        return changed

    def _take(self, code: str, x: _Sample, found: Found) -> None:
        """The index of the sample ``x`` of ``code`` is ``found`` from now on."""
        x.found = found
        x.colour = ink_colour(found.ink or x.ink, found.suit)
        if found.ink is not None:
            x.ink = found.ink
        self.box_cut.discard(code)
        if found.boxed:
            self.box_cut.add(code)

    def _rivals(self, code: str) -> list[tuple[str, np.ndarray]]:
        """For a card whose suit was cut out of art along its box: its calibration crop
        with each other suit in its suit's place instead (the glyph of that suit from
        another card of the deck, the same rank where there is one, every calibration
        crop showing the index in the same place) and this card's art over it. The art:
        the ink part joined to the suit, less the deck's outline of the card's own suit
        except where its colour is not that suit's ink (a gold knob over a black spade)."""
        smp = self.samples[code]
        shape = smp.crop.shape[:2]
        plain = find_ink(smp.crop, min_part=6)
        cut = smp.found.ink
        if isinstance(plain, str) or cut is None:
            return []
        piece = np.isin(cut.labels, smp.found.suit)
        j = int(np.bincount(plain.labels[piece].ravel()).argmax())
        if j == 0:
            return []
        own = np.zeros(shape, bool)
        inks = []
        for c, x in self.samples.items():
            if c[1] == code[1] and c not in self.box_cut and x.found.ink is None \
                    and x.crop.shape[:2] == shape:
                own |= np.isin(x.ink.labels, x.found.suit)
                if x.colour is not None:
                    inks.append(x.colour)
        if not own.any():
            return []
        own = cv2.dilate(own.view(np.uint8), np.ones((3, 3), np.uint8)) > 0
        art = plain.labels == j
        if inks and smp.crop.ndim == 3:
            # per pixel, its colour relative to the paper (as ink_colour measures it)
            v = np.log((smp.crop.astype(np.float64) + 4.0) / (np.array(
                cv2.mean(smp.crop, (plain.labels == 0).view(np.uint8))[:3]) + 4.0))
            v -= v.mean(axis=2, keepdims=True)
            unlike = np.linalg.norm(v - np.median(np.array(inks), axis=0), axis=2) > 0.5
            art &= ~own | unlike
        else:
            art &= ~own
        x0, y0, x1, y1 = smp.found.suit_box
        m = 3
        win = (slice(max(y0 - m, 0), y1 + m), slice(max(x0 - m, 0), x1 + m))
        out = []
        for suit in SUITS:
            if suit == code[1]:
                continue
            donors = [c for c, x in self.samples.items()
                      if c[1] == suit and c not in self.box_cut and x.found.ink is None
                      and x.crop.shape[:2] == shape]
            if not donors:
                continue
            donor = self.samples[min(donors, key=lambda c: (c[0] != code[0], c))]
            rival = smp.crop.copy()
            rival[win] = donor.crop[win]
            rival[art] = smp.crop[art]
            out.append((suit, rival))
        return out

    def _cut_suit(self, code: str, x: _Sample) -> Found | None:
        """The suit of the sample ``x`` of ``code`` cut out of the art joined to it where
        the deck's other cards of its suit have theirs (at a narrow neck, else along the
        box); None unless the piece looks like that suit on those cards."""
        boxes = [y.found.suit_box for c, y in self.samples.items()
                 if c[1] == code[1] and c != code]
        if len(boxes) < 3:
            return None
        m = np.median(np.array(boxes, np.float64), axis=0)
        place = (float(m[0]), float(m[1]), float(m[2]), float(m[3]))
        # the crop's ink as thresholded (lines taken out may have cut the art apart)
        ink = find_ink(x.crop, min_part=6)
        if isinstance(ink, str):
            return None
        rx0, ry0, rx1, ry1 = x.found.rank_box
        st = ink.stats
        rank = [int(i) for i in np.flatnonzero(ink.keep)
                if rx0 - 2 <= st[i, 0] and st[i, 0] + st[i, 2] <= rx1 + 2
                and ry0 - 2 <= st[i, 1] and st[i, 1] + st[i, 3] <= ry1 + 2]
        if not rank:
            return None
        for cutter in (cut_joined, cut_box):
            got = cutter(ink, place, rank)
            if got is None:
                continue
            new, i = got
            found = Found(rank, [i], union_box(st, rank), union_box(new.stats, [i]), new,
                          cutter is cut_box)
            old = x.found, x.ink
            x.found, x.ink = found, new
            problem = self.check(code, what=("suit",))
            x.found, x.ink = old
            if not problem:
                return found
        return None

    def geometry(self) -> tuple[Geometry, list[LearnFailure]]:
        """The deck's index geometry, and the cards whose index does not fit it."""
        self.agree()
        s = self.samples
        heights = {c: x.found.rank_box[3] - x.found.rank_box[1] for c, x in s.items()}
        h_med = float(np.median(list(heights.values())))
        centres = {c: ((x.found.suit_box[0] + x.found.suit_box[2]) / 2,
                       (x.found.suit_box[1] + x.found.suit_box[3]) / 2) for c, x in s.items()}
        cx_med = float(np.median([v[0] for v in centres.values()]))
        cy_med = float(np.median([v[1] for v in centres.values()]))
        bad = []
        for c, x in s.items():
            h = heights[c]
            sx, sy = centres[c]
            if not 0.7 * h_med <= h <= 1.35 * h_med:
                bad.append(LearnFailure(
                    c, f"its rank is {h} px high where this deck's ranks are {h_med:.0f} px "
                    "(something next to the index, art or a border, joined the rank?)",
                    _TODO_POSITION, (("rank", x.found.rank_box), ("suit", x.found.suit_box))))
            elif math.hypot(sx - cx_med, sy - cy_med) > 0.6 * h_med:
                bad.append(LearnFailure(
                    c, f"its suit is at ({sx:.0f}, {sy:.0f}) px from the corner where this "
                    f"deck's suits are at ({cx_med:.0f}, {cy_med:.0f})", _TODO_POSITION,
                    (("rank", x.found.rank_box), ("suit", x.found.suit_box))))
        good = [x for c, x in s.items() if c not in {b.code for b in bad}] or list(s.values())
        rb = np.array([x.found.rank_box for x in good], np.float64)
        sb = np.array([x.found.suit_box for x in good], np.float64)
        rh = rb[:, 3] - rb[:, 1]
        g = Geometry(
            rank_union=(rb[:, 0].min(), rb[:, 1].min(), rb[:, 2].max(), rb[:, 3].max()),
            suit_union=(sb[:, 0].min(), sb[:, 1].min(), sb[:, 2].max(), sb[:, 3].max()),
            rank_top=(rb[:, 1].min(), rb[:, 1].max()),
            rank_left=(rb[:, 0].min(), rb[:, 0].max()),
            rank_h=(float(rh.min()), float(np.median(rh)), float(rh.max())),
            suit_centre=(float(np.median((sb[:, 0] + sb[:, 2]) / 2)),
                         float(np.median((sb[:, 1] + sb[:, 3]) / 2))),
            suit_h=(float((sb[:, 3] - sb[:, 1]).min()), float(np.median(sb[:, 3] - sb[:, 1])),
                    float((sb[:, 3] - sb[:, 1]).max())),
            suit_w=(float((sb[:, 2] - sb[:, 0]).min()), float(np.median(sb[:, 2] - sb[:, 0])),
                    float((sb[:, 2] - sb[:, 0]).max())),
        )
        return g, bad

    def profile(self, source: str = "", camera: Mapping[str, object] | None = None,
                verify: bool = True) -> Profile:
        """The learned profile; with ``verify``, every frame must read back correctly."""
        self.resolve_pending()
        self._same_box()
        missing = self.missing()
        if self.failures:
            raise LearnError("; ".join(f.line() for f in self.failures), list(self.failures))
        if missing:
            raise LearnError(f"calibration frames missing for: {' '.join(missing)}")
        geometry, bad = self.geometry()
        if bad:
            raise LearnError("; ".join(f.line() for f in bad), bad)
        p = CORNER_PAD
        right = max(geometry.rank_union[2], geometry.suit_union[2])
        bottom = max(geometry.rank_union[3], geometry.suit_union[3])
        crop = [math.ceil((right - p) * 1.18 + p + 8), math.ceil((bottom - p) * 1.18 + p + 8)]
        ranks: list[np.ndarray] = []
        suits: list[np.ndarray] = []
        rank_labels: list[int] = []
        suit_labels: list[int] = []
        layout: dict[str, list[float]] = {}
        # each part alone of a rank of several (the 1 and the 0 of a 10), every view,
        # with the side of the rank it is on
        parts: list[tuple[int, str, np.ndarray]] = []
        # per card of a rank of several parts, the layout of its last part alone
        right_parts: dict[str, list[list[float]]] = {}
        colours_by_suit: dict[str, list[np.ndarray]] = {su: [] for su in SUITS}
        card_inks: dict[str, list[np.ndarray]] = {}
        for code, smp in self.samples.items():
            r_i, s_i = RANK_CHARS.index(code[0]), SUITS.index(code[1])
            lays = []
            for scale, angle, motion, sigma in AUGMENTATIONS:
                view = _view(smp.crop, scale, angle, motion, sigma, crop)
                located = _locate_view(view, geometry, code in self.box_cut, smp.found,
                                       scale, angle)
                if located is None:
                    continue
                ink, found = located
                if _suit_fragment(found, smp.found, geometry, scale):
                    continue
                rv = glyph_vector(ink, found.rank, RANK_CANVAS)
                sv = glyph_vector(ink, found.suit, SUIT_CANVAS)
                if rv is None or sv is None:
                    continue
                # the label says the glyph and how blurred this view is: the reader
                # compares a frame with views of one blur at a time
                b = BLURS.index((motion, sigma))
                ranks.append(rv)
                if len(found.rank) > 1:
                    parts.extend((r_i, side, pv) for side, _i, pv in _rank_parts(ink, found))
                    # the layout the last part alone would give with this card's suit
                    # (the 0 of a 10 whose 1 is out of view on the left)
                    last = max(found.rank, key=lambda i: int(ink.stats[i, 0]))
                    x, y, w, h = (int(v) for v in ink.stats[last, :4])
                    alone = replace(found, rank=[last], rank_box=(x, y, x + w, y + h))
                    right_parts.setdefault(code, []).append(_layout(alone, scale))
                rank_labels.append(r_i + 13 * b)
                suits.append(sv)
                # a suit cut out of art along its box is matched apart from the clean
                # glyphs (against the other suits under the same art): blur groups of
                # its own, after the clean ones
                suit_labels.append(s_i + 4 * (b + (len(BLURS) if found.boxed else 0)))
                lays.append(_layout(found, scale))
                col = ink_colour(ink, found.suit)
                if col is not None and found.boxed:
                    # a suit with art in it: its colour is this card's own
                    card_inks.setdefault(code, []).append(col)
                elif col is not None:
                    colours_by_suit[code[1]].append(col)
            if len(lays) < len(AUGMENTATIONS) // 3:
                bad.append(LearnFailure(
                    code, f"its index could be found in only {len(lays)} of "
                    f"{len(AUGMENTATIONS)} blurred, turned and scaled views", _TODO_POSITION,
                    (("rank", smp.found.rank_box), ("suit", smp.found.suit_box))))
                continue
            a = np.array(lays)
            layout[code] = [float(v) for v in np.concatenate([a.min(axis=0), a.max(axis=0)])]
        if bad:
            raise LearnError("; ".join(f.line() for f in bad), bad)
        # a suit cut out of art along its box must be told from the other suits under
        # the same art: their views (the other suits' glyphs with this card's art over
        # them) are learned as those suits, so the art alone decides nothing
        for code in sorted(self.box_cut):
            for suit, rival in self._rivals(code):
                s_i = SUITS.index(suit)
                for scale, angle, motion, sigma in AUGMENTATIONS:
                    view = _view(rival, scale, angle, motion, sigma, crop)
                    ink = find_ink(view, min_part=_min_part(geometry))
                    if isinstance(ink, str):
                        continue
                    found = locate(ink, geometry, box_cut=True)
                    if not isinstance(found, Found) or not _same_place(
                            found, self.samples[code].found, scale, angle):
                        continue
                    sv = glyph_vector(found.ink or ink, found.suit, SUIT_CANVAS)
                    if sv is not None:
                        suits.append(sv)
                        suit_labels.append(
                            s_i + 4 * (len(BLURS) + BLURS.index((motion, sigma))))
        rank_t, rank_l = _distinct(np.array(ranks, np.float32), np.array(rank_labels))
        lookalikes = part_lookalikes(rank_t, rank_l, parts, DEFAULT_THRESHOLDS)
        camera_ranks, camera_parts = self._camera_glyphs(geometry, crop)
        lefts: dict[str, list[float]] = {}
        for code, smp in self.samples.items():
            lefts.setdefault(code[0], []).append(float(smp.found.rank_box[0]))
        suit_t, suit_l = _distinct(np.array(suits, np.float32), np.array(suit_labels))
        colours: dict[str, object] = {
            "face_chroma": [float(v) for v in np.mean([x.chroma for x in self.samples.values()],
                                                      axis=0)],
            "face_level": float(np.median([x.level for x in self.samples.values()])),
            "cut_chromas": [[float(v) for v in c[0]] for c in self.cuts.values()],
            "cut_levels": [float(c[1]) for c in self.cuts.values()],
            # how light each cut card is (not only its hue): a white card is no
            # dark-grey cut card, a near-black one no light-grey cut card
            "cut_lightness": [float(c[2]) for c in self.cuts.values()],
        }
        if all(colours_by_suit[su] for su in SUITS):
            ink = {su: np.median(np.array(colours_by_suit[su]), axis=0) for su in SUITS}
            colours["suit_ink"] = {su: [float(v) for v in ink[su]] for su in SUITS}
            # the spread of each suit's ink over its views: how far a read may stray
            colours["suit_ink_spread"] = {
                su: float(np.percentile(np.linalg.norm(np.array(colours_by_suit[su]) - ink[su],
                                                       axis=1), 95)) for su in SUITS}
            # the ink of a suit cut out of art along its box (art in it): the card's own
            colours["card_ink"] = {c: [float(v) for v in np.median(np.array(v), axis=0)]
                                   for c, v in sorted(card_inks.items())}
        geom: dict[str, object] = {
            **geometry.to_json(),
            "crop_size": crop,
            "min_part": _min_part(geometry),
            "layout": layout,
            "box_cut": sorted(self.box_cut),
            # the first blur group of the suits cut out of art along their box
            "box_group": len(BLURS),
            "min_region_area": 0.5 * (right - p) * (bottom - p),
            "rank_h_px": geometry.rank_h[1],
            "rank_gap": max(rank_gap(x.found.ink or x.ink, x.found.rank)
                            for x in self.samples.values()),
            "part_lookalikes": lookalikes,
            # the cards of a rank a part alone is read as (with the rest of that other
            # rank on the left) whose own layout no such part's is near: the layout
            # alone tells them from that other rank with its left part out of view
            "part_apart": _part_apart(lookalikes, layout, right_parts),
            # alike rank pairs and what tells each apart (the reader's last word on them)
            "alike_ranks": _alike_ranks(camera_ranks, rank_t, rank_l),
            # what tells each such rank from the part alone it is taken for
            "part_alike": _part_alike(lookalikes, camera_ranks, camera_parts),
            # where each rank starts (px from the crop's corner at the calibrated
            # scale, least and greatest over its suits): a rank that starts where no
            # other does is no left part of another
            "rank_lefts": {r: [min(v), max(v)] for r, v in sorted(lefts.items())},
            "suit_h_px": float(np.median([x.found.suit_box[3] - x.found.suit_box[1]
                                       for x in self.samples.values()])),
        }
        profile = Profile(
            rank_templates=rank_t, suit_templates=suit_t,
            rank_labels=rank_l.astype(np.int16), suit_labels=suit_l.astype(np.int16),
            geometry=geom, colours=colours, thresholds=dict(DEFAULT_THRESHOLDS),
            camera=dict(camera or {}), source=source,
        )
        if verify:
            self.verify(profile)
        return profile

    def _camera_glyphs(self, geometry: Geometry, crop: list[int]
                       ) -> tuple[dict[int, list[np.ndarray]],
                                  dict[tuple[int, str], list[np.ndarray]]]:
        """Every card's clean crop degraded across the camera range by the learner
        itself (:func:`_camera_view`, ``ALIKE_VIEWS`` a card) and its index found as the
        reader finds it: the rank glyphs by rank (:func:`_alike_ranks`), and the first
        and last part alone of a rank of several, its 1 and its 0, by (rank, side)
        (:func:`_part_alike`)."""
        views: dict[int, list[np.ndarray]] = {}
        parts: dict[tuple[int, str], list[np.ndarray]] = {}
        for code, smp in sorted(self.samples.items()):
            r_i = RANK_CHARS.index(code[0])
            # a seed of the card's own: the same calibration frames learn the same profile
            rng = np.random.default_rng([ALL_CARDS.index(parse_card(code)), 12])
            for _ in range(ALIKE_VIEWS):
                view, scale, angle = _camera_view(smp.crop, rng, crop)
                located = _locate_view(view, geometry, code in self.box_cut, smp.found,
                                       scale, angle)
                if located is None:
                    continue
                ink, found = located
                rv = glyph_vector(ink, found.rank, RANK_CANVAS)
                if rv is None:
                    continue
                views.setdefault(r_i, []).append(rv)
                if len(found.rank) > 1:
                    for side, _i, pv in _rank_parts(ink, found):
                        if side != "middle":
                            parts.setdefault((r_i, side), []).append(pv)
        return views, parts

    def verify(self, profile: Profile) -> None:
        """Read every calibration frame back; :class:`LearnError` lists any that fail."""
        from shoe_controller.vision.index_reader import IndexReader

        reader = IndexReader(profile)
        bad = []
        for label, frame in self.frames.items():
            got = reader.read(frame)
            if label.startswith("CUT"):
                if got.kind != "cut":
                    bad.append(LearnFailure(label, f"the cut card read back as {_describe(got)}",
                                            "take the cut card's frame again, lit as in play"))
            elif got.kind != "card" or got.card is None or got.card.code != label:
                smp = self.samples.get(label)
                boxes = (("rank", smp.found.rank_box), ("suit", smp.found.suit_box)) if smp \
                    else ()
                alike = _ALIKE_UNCLEAR.search(got.reason or "") if got.kind == "reject" \
                    else None
                if alike is None:
                    todo = "check the frame shows this card; " + _TODO_POSITION
                else:
                    first, second = sorted(alike.groups(), key=RANK_CHARS.index)
                    todo = (f"this deck prints its {first} and {second} alike: take the "
                            "frames of both ranks again, in sharp focus and evenly lit, so "
                            "that what sets them apart is learned")
                bad.append(LearnFailure(label, f"read back as {_describe(got)}", todo, boxes))
        if bad:
            raise LearnError("the learned deck does not read back: "
                             + "; ".join(f.line() for f in bad), bad)


def _cut_by_the_box(ink: Ink) -> bool:
    """Does a glyph-sized part run into the crop's bottom edge below the rank (the part
    nearest the corner), in its column: an index larger than the box searched?"""
    got = free_rank(ink)
    if isinstance(got, str):
        return False
    st = ink.stats
    rb = union_box(st, got[0])
    h = ink.labels.shape[0]
    for i in range(1, len(st)):
        x, y, w, hh, _a = (int(v) for v in st[i])
        if (y + hh >= h - 1 and y >= rb[3] - 2 and hh >= 0.3 * (rb[3] - rb[1])
                and x < rb[2] and x + w > rb[0]):
            return True
    return False


def _cut_free(ink: Ink, code: str, suit_box: tuple[float, float, float, float],
              along_box: bool = False) -> Found | None:
    """The index of a calibration crop whose suit is one ink part with the court art:
    the rank as :func:`~shoe_controller.vision.index_glyphs.locate_free` finds it, the
    suit cut out where ``suit_box`` says this deck's suit is: at a narrow neck, or
    (``along_box``, art covering part of the suit) along the box."""
    got = free_rank(ink, two_part=code[:1] in ("T", ""))
    if isinstance(got, str):
        return None
    rank, _ids = got
    cut = (cut_box if along_box else cut_joined)(ink, suit_box, rank)
    if cut is None:
        return None
    new, i = cut
    return Found(rank, [i], union_box(ink.stats, rank), union_box(new.stats, [i]), new,
                 along_box)


def _relocate(ink: Ink, rank_box: tuple[float, ...], suit_centre: np.ndarray, h: float
              ) -> Found | None:
    """The index in ``ink`` where the deck's other cards put it: the rank of the parts
    inside ``rank_box`` (to a few pixels), the suit the part under it nearest the
    deck's ``suit_centre``; None if there is no such part."""
    st, cen = ink.stats, ink.centroids
    ids = [int(i) for i in np.flatnonzero(ink.keep)]
    e = 3.0
    x0, y0, x1, y1 = rank_box
    rank = [i for i in ids if x0 - e <= st[i, 0] and st[i, 0] + st[i, 2] <= x1 + e
            and y0 - e <= st[i, 1] and st[i, 1] + st[i, 3] <= y1 + e and st[i, 3] >= 0.3 * h]
    if not rank:
        return None
    rb = union_box(st, rank)
    ex, ey = float(suit_centre[0]), float(suit_centre[1])
    below = [i for i in ids if i not in rank and st[i, 1] >= rb[3] - 0.1 * h
             and st[i, 3] >= 0.25 * h]
    if not below:
        return None
    suit0 = min(below, key=lambda i: math.hypot(cen[i, 0] - ex, cen[i, 1] - ey))
    if math.hypot(cen[suit0, 0] - ex, cen[suit0, 1] - ey) > 0.3 * h:
        return None
    suit = suit_parts(st, cen, below, suit0, h)
    return Found(rank, suit, rb, union_box(st, suit))


#: A calibration card's suit this many times as tall as the same suit on the deck's
#: other cards (their median) is art joined to it (:meth:`DeckLearner.agree`).
SUIT_JOINED = 1.4


#: A learned view this alike (correlation) to one already kept adds nothing.
DISTINCT_VIEW = 0.99


def _distinct(t: np.ndarray, labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The views of each class less near-duplicates (keeps the match fast)."""
    keep: list[int] = []
    for k in np.unique(labels):
        idx = np.flatnonzero(labels == k)
        kept: list[int] = []
        for i in idx:
            if not kept or float((t[kept] @ t[i]).max()) < DISTINCT_VIEW:
                kept.append(int(i))
        keep.extend(kept)
    return t[keep], labels[keep]


def _vector(smp: _Sample, kind: str) -> np.ndarray | None:
    if kind == "rank":
        return glyph_vector(smp.ink, smp.found.rank, RANK_CANVAS)
    return glyph_vector(smp.ink, smp.found.suit, SUIT_CANVAS)



#: Synthesised camera views per calibration card for learning alike rank pairs: the
#: learner's own degradation of the clean crop across DESIGN.md's "Camera frames" range
#: (scale 0.85-1.15, motion blur up to 6 px, defocus up to sigma 1.3, uneven light and
#: brightness 0.7-1.1, sensor noise up to sigma 8, JPEG quality 50-95), and the small
#: turn left after the reader sets the crop upright.
ALIKE_VIEWS = 24
#: Two ranks are alike when on a synthesised view of one the pair test puts it less
#: than this nearer its own views than the other's (the reader's ``rank_pair_margin``
#: is 0.3), or the other is the best match.
ALIKE_PAIR = 0.3
#: The rejection band of an alike pair is widened beyond the synthesised views' spread
#: by this many pooled standard deviations of their projections (the learned margin).
ALIKE_MARGIN_SD = 0.5


def _camera_view(crop: np.ndarray, rng: np.random.Generator, size: list[int]
                 ) -> tuple[np.ndarray, float, float]:
    """``crop`` as the camera may see it anywhere in the full range (see ALIKE_VIEWS),
    with the scale and turn it was given."""
    scale, angle = float(rng.uniform(0.85, 1.15)), float(rng.uniform(-3.0, 3.0))
    view = _view(crop, scale, angle, float(rng.uniform(0.0, 6.0)),
                 float(rng.uniform(0.0, 1.3)), size)
    h, w = view.shape[:2]
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    d = rng.normal(size=2)
    d /= float(np.linalg.norm(d)) + 1e-9
    ramp = ((xx / w - 0.5) * d[0] + (yy / h - 0.5) * d[1]) * float(rng.uniform(0.0, 0.45))
    field = (1.0 + ramp) * float(rng.uniform(0.7, 1.1))
    out = view.astype(np.float32)
    out *= field[..., None] if out.ndim == 3 else field
    out += rng.standard_normal(out.shape).astype(np.float32) * float(rng.uniform(0.0, 8.0))
    img = np.clip(out + 0.5, 0, 255).astype(np.uint8)
    _ok, buf = cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, int(rng.integers(50, 96))])
    return cv2.imdecode(buf, cv2.IMREAD_UNCHANGED), scale, angle


def _pair_discriminant(a: np.ndarray, b: np.ndarray) -> dict[str, object]:
    """What tells two alike ranks apart, from synthesised views of each (rows): Fisher's
    linear discriminant (the difference of their mean views through the inverse of the
    views' spread within each rank, the spread shrunk halfway to its average so that
    600 pixels are not fitted to 100 views), and a band of projections where neither
    is clearly the one. A frame is read as ``a`` only above the band, as ``b`` only
    below it. The band runs from the least projection of an ``a`` view to the greatest
    of a ``b`` view when the two overlap, or is the point halfway between them when
    they do not, widened either way by ``ALIKE_MARGIN_SD`` standard deviations of the
    views' projections within a rank (the pair's learned margin)."""
    ma, mb = a.mean(axis=0), b.mean(axis=0)
    x = np.vstack([a - ma, b - mb]).astype(np.float64)
    spread = x.T @ x / len(x)
    spread += float(np.trace(spread)) / len(spread) * np.eye(len(spread))
    w = np.linalg.solve(spread, (ma - mb).astype(np.float64))
    w /= max(float(np.linalg.norm(w)), 1e-12)
    offset = float(w @ (0.5 * (ma + mb)))
    sa, sb = a @ w - offset, b @ w - offset
    sd = math.sqrt(0.5 * (float(sa.var()) + float(sb.var())))
    lo, hi = float(sa.min()), float(sb.max())
    mid = 0.5 * (lo + hi)
    return {"w": [float(v) for v in w], "offset": offset,
            "a_above": max(hi, mid) + ALIKE_MARGIN_SD * sd,
            "b_below": min(lo, mid) - ALIKE_MARGIN_SD * sd}


#: Camera views of a rank and of the part alone it is taken for, each, below which no
#: line between them is learned.
PART_VIEWS = 16
#: Where between the part's views (0) and the rank's (1) the reader starts to read the
#: rank: only a glyph nearer the rank's views than three quarters of the gap between
#: the two is read as the rank where the rest of the other rank could be out of view.
PART_LINE = 0.75


def _part_line(own: np.ndarray, part: np.ndarray) -> float | None:
    """The projection above which a glyph is the rank (``own``: its views' projections)
    and no part alone of another rank (``part``'s views): ``PART_LINE`` of the way from
    the part's greatest to the rank's least; None when the two overlap.

    >>> _part_line(np.array([0.2, 0.3]), np.array([-0.2, -0.3]))
    0.1
    >>> _part_line(np.array([0.2, -0.25]), np.array([-0.2, -0.3])) is None
    True
    """
    lo, hi = float(own.min()), float(part.max())
    if lo <= hi:
        return None
    return round(hi + PART_LINE * (lo - hi), 12)


def _rank_parts(ink: Ink, found: Found) -> list[tuple[str, int, np.ndarray]]:
    """Each part of the rank ``found`` alone, left to right: (its place in the rank,
    "left", "middle" or "right"; its label; its glyph vector), those with a vector."""
    order = sorted(found.rank, key=lambda i: int(ink.stats[i, 0]))
    out = []
    for k, i in enumerate(order):
        pv = glyph_vector(ink, [i], RANK_CANVAS)
        if pv is not None:
            side = "left" if k == 0 else "right" if k == len(order) - 1 else "middle"
            out.append((side, i, pv))
    return out


def _alike_ranks(views: Mapping[int, list[np.ndarray]], rank_t: np.ndarray,
                 rank_l: np.ndarray) -> list[dict[str, object]]:
    """The deck's alike rank pairs and what tells each apart (issue 12: a jack printed B
    against a small 8, a Q against an O-like glyph...), from the learner's camera views
    of every card's rank (``views``, by rank: :meth:`DeckLearner._camera_glyphs`)
    matched as the reader matches them (its templates ``rank_t``, ``rank_l``): two
    ranks are alike when one is the best match of the other's views, or its close
    rival. For each such pair, :func:`_pair_discriminant` on the two ranks' views."""
    from shoe_controller.vision.index_reader import PAIR_CLOSE, _Templates

    tm = _Templates(rank_t, rank_l, 13)
    pairs: set[tuple[int, int]] = set()
    for r_i, own in views.items():
        for rv in own:
            q = rv - tm.mean
            q /= max(float(np.linalg.norm(q)), 1e-9)
            res = tm._best(tm.res @ q)
            grp = int(np.argmax(res.max(axis=1)))
            sc = res[grp]
            order = np.argsort(sc)[::-1]
            close = [int(c) for c in order[:3] if sc[order[0]] - sc[c] < PAIR_CLOSE]
            for c in close:
                # alike: the pair test cannot keep the two apart on this view (it
                # would reject it, or the other rank is the better match)
                if c != r_i and (tm.pair(rv, grp, r_i, c) < ALIKE_PAIR
                                 or int(order[0]) != r_i):
                    pairs.add((min(c, r_i), max(c, r_i)))
    out: list[dict[str, object]] = []
    for a, b in sorted(pairs):
        if len(views.get(a, ())) < 4 or len(views.get(b, ())) < 4:
            continue
        d = _pair_discriminant(np.array(views[a]), np.array(views[b]))
        out.append({"ranks": RANK_CHARS[a] + RANK_CHARS[b], **d})
    return out


def _part_alike(lookalikes: Mapping[str, Mapping[str, list[str]]],
                views: Mapping[int, list[np.ndarray]],
                parts: Mapping[tuple[int, str], list[np.ndarray]]
                ) -> list[dict[str, object]]:
    """What tells a rank from the part alone of another rank that it is taken for
    (``lookalikes``, :func:`part_lookalikes`: the 0 of a 10 read as the deck's 9), from
    the learner's camera views of both (``views`` by rank, ``parts`` by (rank, side):
    :meth:`DeckLearner._camera_glyphs`): Fisher's discriminant
    (:func:`_pair_discriminant`) and ``read_above``, the projection above which a
    frame's rank is that rank and no such part (:func:`_part_line`). A pair whose views
    overlap gets no entry: the reader then cannot tell the two apart by shape and keeps
    asking whether the rest of the other rank may be out of view."""
    out: list[dict[str, object]] = []
    for side, table in sorted(lookalikes.items()):
        # the rest of the other rank is on ``side``: the part is its other end
        part = "right" if side == "left" else "left"
        for own, others in sorted(table.items()):
            a = views.get(RANK_CHARS.index(own), [])
            for other in others:
                b = parts.get((RANK_CHARS.index(other), part), [])
                if len(a) < PART_VIEWS or len(b) < PART_VIEWS:
                    continue
                d = _pair_discriminant(np.array(a), np.array(b))
                w = np.array(d["w"], np.float64)
                line = _part_line(np.array(a) @ w - float(d["offset"]),
                                  np.array(b) @ w - float(d["offset"]))
                if line is not None:
                    out.append({"rank": own, "part_of": other, "side": side,
                                "w": d["w"], "offset": d["offset"], "read_above": line})
    return out


def _min_part(g: Geometry) -> int:
    return max(6, round(0.015 * g.rank_h[0] * g.rank_h[0]))


def _view(crop: np.ndarray, scale: float, angle: float, motion: float, sigma: float,
          size: list[int]) -> np.ndarray:
    """The calibration crop as the camera sees it at another scale and a small turn
    about the card's corner, with blur; ``size`` (w, h) of the reader's crop."""
    p = CORNER_PAD
    m = cv2.getRotationMatrix2D((p, p), angle, scale)
    out = cv2.warpAffine(crop, m, (int(size[0]), int(size[1])), flags=cv2.INTER_LINEAR,
                         borderMode=cv2.BORDER_REPLICATE)
    return blurred(out, motion, sigma) if motion or sigma else out


def _locate_view(view: np.ndarray, geometry: Geometry, box_cut: bool, clean: Found,
                 scale: float, angle: float) -> tuple[Ink, Found] | None:
    """The ink and the index of a synthesised view of a calibration card, found as the
    reader finds them (parts joined by blur, the rank to the card's printed edge, are
    tried again with a darker threshold, then with the printed lines taken out), or
    None when none is found or not where the clean view's index is. The ink is the one
    the parts are of: a suit cut out of court art joined to it has its own."""
    for darker, lines in attempts(geometry):
        ink = find_ink(view, min_part=_min_part(geometry), darker=darker, lines=lines)
        if isinstance(ink, str):
            return None
        found = locate(ink, geometry, box_cut=box_cut)
        if isinstance(found, Found):
            break
    if isinstance(found, str) or not _same_place(found, clean, scale, angle):
        return None
    return (found.ink if found.ink is not None else ink), found


def _suit_fragment(found: Found, clean: Found, g: Geometry, scale: float) -> bool:
    """Is the suit found in a view of a calibration card a piece of it only: less high or
    less wide, at the view's scale, than ``FRAGMENT`` of the smaller of the card's own
    suit in its clean view and the deck's median suit? (ext:paris's club under heavy
    blur runs into the big pip beside it: the top lobe or the foot alone was found, and
    such a view learned as a club made a spade's foot alone, in a frame whose edge cuts
    the spade, read as a club.) Such a view is not learned.

    >>> g = Geometry((0, 0, 9, 9), (0, 10, 9, 20), (0, 1), (0, 1), (9, 9, 9),
    ...              (5, 15), (10, 10, 10), (9, 9, 9))
    >>> clean = Found([1], [2], (0, 0, 9, 9), (0, 10, 9, 20))
    >>> _suit_fragment(Found([1], [2], (0, 0, 9, 9), (0, 10, 9, 12)), clean, g, 1.0)
    True
    >>> _suit_fragment(Found([1], [2], (0, 0, 9, 9), (0, 10, 8, 14)), clean, g, 1.0)
    False
    """
    def size(b: tuple[float, ...]) -> tuple[float, float]:
        return b[3] - b[1], b[2] - b[0]

    ch, cw = size(clean.suit_box)
    h, w = size(found.suit_box)
    return (h < FRAGMENT * scale * min(ch, g.suit_h[1])
            or w < FRAGMENT * scale * min(cw, g.suit_w[1]))


def _same_place(found: Found, clean: Found, scale: float, angle: float) -> bool:
    """Did the locator find, in a transformed view, the rank the clean crop showed?"""
    p = CORNER_PAD
    x0, y0, x1, y1 = clean.rank_box
    cx, cy = (x0 + x1) / 2 - p, (y0 + y1) / 2 - p
    t = math.radians(-angle)
    ex = p + scale * (cx * math.cos(t) - cy * math.sin(t))
    ey = p + scale * (cx * math.sin(t) + cy * math.cos(t))
    fx0, fy0, fx1, fy1 = found.rank_box
    return math.hypot((fx0 + fx1) / 2 - ex, (fy0 + fy1) / 2 - ey) < 0.25 * scale * (y1 - y0)


def part_lookalikes(templates: np.ndarray, labels: np.ndarray,
                    parts: list[tuple[int, str, np.ndarray]],
                    thresholds: Mapping[str, float]) -> dict[str, dict[str, list[str]]]:
    """The ranks (their characters) that a part alone of a rank of several parts is
    read as, with the ranks whose part it is, by the side the rest of that rank is on:
    ``parts`` are (the rank's index in ``RANK_CHARS``, the part's place in it: "left",
    "right" or "middle", its glyph vector; one per learned view), matched as the reader
    matches a rank (its learned views ``templates``, ``labels``: rank + 13 x blur
    group; ``thresholds``). The 0 of a 10 that matches the deck's 8 gives
    ``{"left": {"8": ["T"]}, "right": {}}``: the rest of that 10 (its 1) is on the
    left, and only the index's layout (where its suit is) then tells that 8 from a 10
    whose 1 is out of view; the reader does not read such an 8 when its rank may go on
    out of view on its left."""
    from shoe_controller.vision.index_reader import _Templates

    out: dict[str, dict[str, set[str]]] = {"left": {}, "right": {}}
    if not parts:
        return {"left": {}, "right": {}}
    ranks = _Templates(templates, labels, 13)
    for own, place, v in parts:
        got = ranks.match(v, "rank", RANK_CHARS, dict(thresholds))
        if isinstance(got[1], str) or got[0] == own:
            continue
        # a right part has the rest of its rank on its left, a left part on its right
        for side in {"right": ("left",), "left": ("right",)}.get(place, ("left", "right")):
            out[side].setdefault(RANK_CHARS[got[0]], set()).add(RANK_CHARS[own])
    return {side: {k: sorted(v) for k, v in sorted(d.items())} for side, d in out.items()}


#: A part alone of a rank (the 0 of a 10) is told from a card by its suit's place when,
#: in every learned view, the suit sits this many times the reader's slack
#: (:func:`~shoe_controller.vision.index_glyphs.layout_slack`) beyond the range the
#: reader allows the card, even with as much of the suit's side cut off by the frame's
#: edge as its width allows.
PART_APART = 2.0


def _part_apart(lookalikes: Mapping[str, Mapping[str, list[str]]],
                layout: Mapping[str, list[float]],
                right_parts: Mapping[str, list[list[float]]]) -> list[str]:
    """The cards of a rank that the last part alone of another rank is read as (the 8
    a 10's 0 alone matches: ``lookalikes["left"]``, the rest of that rank on the left)
    whose suit's place (across, against the rank: :func:`_layout`'s fourth measure)
    tells them from every learned view of that part with the same suit
    (``right_parts``, per card: the layout of its last part alone). The reader allows a
    card its learned range widened by a slack (12 % of the measure's size each side);
    each view's place must lie ``PART_APART`` slacks beyond that. Where the view's suit
    is left of the card's range (under a 10 the suit is nearer the 1), the frame that
    hides the rest of the rank may cut the suit's left side too, moving its middle
    right by up to half of what the reader's least suit width (its fifth measure, the
    learned least less its slack, times the view's suit height) lets go: the view's
    place is taken that far right. The reader then reads such a card even where the
    rest of the other rank could be out of view on its left: the part alone would be
    rejected by its layout. A card with a suit of which no view of the other rank's
    part was learned is never listed.

    >>> lay = {"8S": [30.0, 0.6, 0.8, -0.05, 1.3, 0.8, 31.0, 0.7, 0.86, 0.06, 1.4, 0.9]}
    >>> _part_apart({"left": {"8": ["T"]}}, lay, {"TS": [[30.0, 0.6, 0.8, -0.4, 1.3, 0.8]]})
    ['8S']
    >>> _part_apart({"left": {"8": ["T"]}}, lay, {"TS": [[30.0, 0.6, 0.8, -0.25, 1.3, 0.8]]})
    []
    """
    out = []
    for own, others in lookalikes.get("left", {}).items():
        for suit in SUITS:
            code = own + suit
            if code not in layout or any(r + suit not in right_parts for r in others):
                continue
            lo, hi = np.array(layout[code], np.float64).reshape(2, -1)
            place = layout_slack(lo[3], hi[3])
            least_w = lo[5] - layout_slack(lo[5], hi[5])
            apart = True
            for r in others:
                for v in right_parts[r + suit]:
                    if v[3] > hi[3] + place * (1 + PART_APART):
                        continue  # right of the range: a cut left side moves it further
                    cut = max(0.0, v[5] - least_w) * v[2]  # suit width lost, / rank height
                    if v[3] + 0.5 * cut < lo[3] - place * (1 + PART_APART):
                        continue
                    apart = False
            if apart:
                out.append(code)
    return sorted(out)


def rank_gap(ink: Ink, ids: list[int]) -> float:
    """The widest gap (px) between the parts ``ids`` of a rank, side by side: the 1 and
    the 0 of a 10; 0 for a rank of one part (or of parts that overlap in x).

    >>> st = np.array([[0, 0, 9, 9, 0], [2, 3, 4, 20, 0], [9, 3, 8, 20, 0]], np.int32)
    >>> ink = Ink(np.zeros(1), np.zeros(1), np.zeros(1), st, np.zeros((3, 2)),
    ...           np.ones(3, bool), 0.0, 0.0)
    >>> rank_gap(ink, [2, 1]), rank_gap(ink, [1])
    (3.0, 0.0)
    """
    boxes = sorted(ink.stats[i, :4].tolist() for i in ids)
    gap, right = 0.0, boxes[0][0] + boxes[0][2]
    for x, _y, w, _h in boxes[1:]:
        gap = max(gap, float(x - right))
        right = max(right, x + w)
    return gap


def _layout(f: Found, scale: float) -> list[float]:
    """Rank height / scale, rank width / height, suit height / rank height, suit centre
    offset (x, y) / rank height, suit width / height."""
    rx0, ry0, rx1, ry1 = f.rank_box
    sx0, sy0, sx1, sy1 = f.suit_box
    rh = ry1 - ry0
    return [rh / scale, (rx1 - rx0) / rh, (sy1 - sy0) / rh,
            (sx0 + sx1 - rx0 - rx1) / 2 / rh, (sy0 + sy1 - ry0 - ry1) / 2 / rh,
            (sx1 - sx0) / max(sy1 - sy0, 1)]


def _describe(read: object) -> str:
    kind = getattr(read, "kind", "?")
    if kind == "card":
        return str(read.card)  # type: ignore[attr-defined]
    reason = getattr(read, "reason", "")
    return f"{kind} ({reason})" if reason else str(kind)


def annotate(frame: np.ndarray, failure: LearnFailure, learn_box: tuple[int, int] | None = None
             ) -> np.ndarray:
    """``frame`` with what learning found drawn on it: the card's outline corners, the
    corner crops searched (yellow), the ink parts in them (grey boxes), the rank and suit
    found (green, blue) and, at the top, the card and what went wrong."""
    img = frame.copy() if frame.ndim == 3 else cv2.cvtColor(frame, cv2.COLOR_GRAY2BGR)
    regions = card_regions(frame)
    if regions:
        region = regions[0]
        box = _box(region, learn_box)
        for down in (False, True):
            t = math.radians(region.angle) + (math.pi if down else 0.0)
            ct, st = math.cos(t), math.sin(t)
            cx, cy = region.bottom_right if down else region.top_left
            p = CORNER_PAD

            def to_frame(u: float, v: float, cx: float = cx, cy: float = cy,
                         ct: float = ct, st: float = st, p: float = p) -> tuple[int, int]:
                return (round(cx + (u - p) * ct - (v - p) * st),
                        round(cy + (u - p) * st + (v - p) * ct))

            corners = [to_frame(0, 0), to_frame(box[0], 0), to_frame(box[0], box[1]),
                       to_frame(0, box[1])]
            cv2.polylines(img, [np.array(corners, np.int32)], True, (0, 220, 255), 1)
            crop = crop_corner(frame, region, down, box)
            ink = find_ink(crop, 6)
            if not isinstance(ink, str):
                for i in np.flatnonzero(ink.keep):
                    x, y, w, h = (int(v) for v in ink.stats[i, :4])
                    cv2.polylines(img, [np.array([to_frame(x, y), to_frame(x + w, y),
                                                  to_frame(x + w, y + h), to_frame(x, y + h)],
                                                 np.int32)], True, (160, 160, 160), 1)
            if not down:
                for name, (x0, y0, x1, y1) in failure.boxes:
                    colour = (0, 200, 0) if name == "rank" else (255, 80, 0)
                    cv2.polylines(img, [np.array([to_frame(x0, y0), to_frame(x1, y0),
                                                  to_frame(x1, y1), to_frame(x0, y1)],
                                                 np.int32)], True, colour, 2)
    text = f"{failure.code}: {failure.saw}"
    y = 18
    for k in range(0, len(text), 70):
        cv2.putText(img, text[k:k + 70], (8, y), cv2.FONT_HERSHEY_SIMPLEX, 0.5, (0, 0, 0), 3)
        cv2.putText(img, text[k:k + 70], (8, y), cv2.FONT_HERSHEY_SIMPLEX, 0.5, (0, 0, 255), 1)
        y += 18
    return img


def learn_profile(frames: Mapping[str, np.ndarray], source: str = "",
                  camera: Mapping[str, object] | None = None,
                  learn_box: tuple[int, int] | None = None) -> Profile:
    """Learn from ``{label: frame}`` (52 card codes and ``CUT``)."""
    learner = DeckLearner(learn_box=learn_box)
    learner.add_all(frames)
    return learner.profile(source=source, camera=camera)


def template_separation(profile: Profile) -> dict[str, tuple[str, str, float]]:
    """The most alike pair of rank glyphs and of suit glyphs (names, correlation of
    their closest learned views)."""
    out = {}
    for kind, arr, lab, names in (("rank", profile.rank_templates, profile.rank_labels,
                                   RANK_CHARS),
                                  ("suit", profile.suit_templates, profile.suit_labels, SUITS)):
        assert arr is not None and lab is not None
        lab = lab % len(names)
        c = arr @ arr.T
        same = lab[:, None] == lab[None, :]
        c[same] = -np.inf
        i, j = np.unravel_index(int(np.argmax(c)), c.shape)
        out[kind] = (names[int(lab[i])], names[int(lab[j])], float(c[i, j]))
    return out

"""Learning a deck: calibration frames -> a :class:`~shoe_controller.vision.profile.Profile`.

The input is one frame per card code (the card as the camera sees it in the calibrated
position, upright or upside down, its index fully in view) and one of the cut card.
From them: the rank glyphs (each rank averaged over its four suits), the suit glyphs
(each averaged over its thirteen ranks), the index layout and glyph sizes, the face,
ink and cut-card colours. The learned
profile is then checked by reading every calibration frame back: a deck that does not
read back perfectly is refused with the cards that failed.

:class:`DeckLearner` takes frames one at a time so the live walk-through (a sorted deck
passed through the shoe) can check each card as it comes; :func:`learn_profile` does a
whole set at once.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from shoe_controller.game.cards import ALL_CARDS, RANK_CHARS, SUITS, parse_card
from shoe_controller.vision.index_glyphs import (
    AUGMENTATIONS,
    CORNER_PAD,
    RANK_CANVAS,
    SUIT_CANVAS,
    IndexGlyphs,
    Region,
    blurred,
    crop_corner,
    extract_index,
    find_regions,
    to_small,
)
from shoe_controller.vision.profile import DEFAULT_THRESHOLDS, Profile

__all__ = ["DeckLearner", "LearnError", "card_regions", "learn_profile", "template_separation"]

#: When the whole card width is in view, the index is looked for within these shares of
#: it (width, height) from the top-left corner; otherwise within ``DEFAULT_LEARN_BOX``.
LEARN_BOX_SHARE = (0.45, 0.7)
DEFAULT_LEARN_BOX = (112, 160)
MIN_LEARN_AREA = 2000.0  # frame px: anything smaller is no card
#: A card face while learning is at least this light (grey levels, brightest channel);
#: the shoe interior is darker.
MIN_LEARN_LEVEL = 80.0


def card_regions(frame: np.ndarray) -> list[Region]:
    """The light card in a calibration frame (none for a dark, empty window)."""
    level, regions = find_regions(to_small(frame), MIN_LEARN_AREA, 1, 0.75 * MIN_LEARN_LEVEL)
    return regions if level >= MIN_LEARN_LEVEL else []


class LearnError(Exception):
    """The calibration frames do not make a usable profile (the message says why)."""


@dataclass
class _Sample:
    glyphs: IndexGlyphs
    variants: list[IndexGlyphs]  # one per AUGMENTATIONS entry
    chroma: np.ndarray
    level: float


def _chroma(bgr: tuple[float, float, float]) -> np.ndarray:
    a = np.array(bgr, np.float64)
    return a / max(a.sum(), 1e-6)


@dataclass
class DeckLearner:
    """Collects calibration frames, then :meth:`profile` builds and checks the profile."""

    learn_box: tuple[int, int] | None = None
    samples: dict[str, _Sample] = field(default_factory=dict)
    cut: tuple[np.ndarray, float] | None = None
    frames: dict[str, np.ndarray] = field(default_factory=dict)

    def add_all(self, frames: Mapping[str, np.ndarray]) -> None:
        """:meth:`add` each ``{label: frame}``; one :class:`LearnError` lists every frame
        that failed."""
        errors = []
        for label, frame in frames.items():
            try:
                self.add(label, frame)
            except LearnError as e:
                errors.append(str(e))
        if errors:
            raise LearnError("; ".join(errors))

    def glyphs_of(self, frame: np.ndarray) -> tuple[IndexGlyphs, np.ndarray] | str:
        """The index of the card in ``frame`` (top-left corner upright, else bottom-right
        corner upside down) and the upright corner crop, or why there is none."""
        regions = card_regions(frame)
        if not regions:
            return "no card in the frame (is it lit, in the window?)"
        region = regions[0]
        box = self.learn_box
        if box is None:
            if region.touches_border:
                box = DEFAULT_LEARN_BOX
            else:
                (x0, y0), (x1, y1) = region.top_left, region.bottom_right
                t = math.radians(region.angle)
                width = (x1 - x0) * math.cos(t) + (y1 - y0) * math.sin(t)
                box = (round(width * LEARN_BOX_SHARE[0]), round(width * LEARN_BOX_SHARE[1]))
        why = ""
        for down in (False, True):
            crop = crop_corner(frame, region, down, box)
            glyphs = extract_index(crop, min_part=6)
            if isinstance(glyphs, IndexGlyphs):
                return glyphs, crop
            why = why or glyphs
        return why

    def add(self, label: str, frame: np.ndarray) -> str:
        """Learn one frame (``label`` a card code or ``CUT``); returns the card code.

        Raises :class:`LearnError` naming the card when the frame shows no usable index.
        """
        label = label.strip().upper()
        if label == "CUT":
            regions = card_regions(frame)
            if not regions:
                raise LearnError("CUT: no light card in the frame")
            self.cut = (_chroma(regions[0].mean_bgr), regions[0].level)
            self.frames["CUT"] = frame
            return "CUT"
        code = parse_card(label).code
        found = self.glyphs_of(frame)
        if isinstance(found, str):
            raise LearnError(
                f"{code}: {found}; put the card in the calibrated position, its index "
                "fully in view"
            )
        glyphs, crop = found
        region = card_regions(frame)[0]
        variants = []
        for motion, sigma in AUGMENTATIONS:
            v = extract_index(blurred(crop, motion, sigma), min_part=6) if motion or sigma \
                else glyphs
            variants.append(v if isinstance(v, IndexGlyphs) else glyphs)
        self.samples[code] = _Sample(glyphs, variants, _chroma(region.mean_bgr), region.level)
        self.frames[code] = frame
        return code

    def check(self, code: str) -> str:
        """Does the learned sample of ``code`` fit the cards learned before it? For the
        live walk-through: its rank glyph must be most like the same rank of another
        suit (when there is one) and its suit glyph most like the same suit of another
        rank; a glyph identical to a different one already learned means the wrong card.
        Returns the problem, or ``""``."""
        new = self.samples[code]
        # the same glyph on another card correlates above these (blur and noise of a
        # pass included); different glyphs of a deck stay below
        alike = {"rank": 0.94, "suit": 0.90}
        for kind, same_key in (("rank", 0), ("suit", 1)):
            vec = getattr(new.glyphs, kind)
            same, other = [], []
            for c, smp in self.samples.items():
                if c == code:
                    continue
                corr = float(vec @ getattr(smp.glyphs, kind))
                (same if c[same_key] == code[same_key] else other).append((corr, c))
            best_other = max(other, default=(-1.0, ""))
            if same:
                if max(same)[0] < alike[kind] or max(same)[0] <= best_other[0] + 0.02:
                    return (f"its {kind} looks like the {kind} of {best_other[1]}, not of "
                            f"{max(same)[1]}")
            elif best_other[0] > 0.985:
                return f"its {kind} is the same as the {kind} of {best_other[1]}"
        return ""

    def discard(self, code: str) -> None:
        self.samples.pop(code, None)
        self.frames.pop(code, None)

    def missing(self) -> list[str]:
        need = [c.code for c in ALL_CARDS if c.code not in self.samples]
        return need + ([] if self.cut is not None else ["CUT"])

    def profile(self, source: str = "", camera: Mapping[str, object] | None = None,
                verify: bool = True) -> Profile:
        """The learned profile; with ``verify``, every frame must read back correctly."""
        missing = self.missing()
        if missing:
            raise LearnError(f"calibration frames missing for: {' '.join(missing)}")
        assert self.cut is not None
        s = self.samples
        n_aug = len(AUGMENTATIONS)
        ranks = np.zeros((13, n_aug, *RANK_CANVAS), np.float32)
        suits = np.zeros((4, n_aug, *SUIT_CANVAS), np.float32)
        for a in range(n_aug):
            for r, rc in enumerate(RANK_CHARS):
                ranks[r, a] = _unit(sum(s[rc + su].variants[a].rank for su in SUITS)).reshape(
                    RANK_CANVAS)
            for k, su in enumerate(SUITS):
                suits[k, a] = _unit(sum(s[rc + su].variants[a].suit for rc in RANK_CHARS)
                                    ).reshape(SUIT_CANVAS)
        g = [x.glyphs for x in s.values()]
        rank_h = float(np.median([b.rank_box[3] - b.rank_box[1] for b in g]))
        suit_h = float(np.median([b.suit_box[3] - b.suit_box[1] for b in g]))
        # per card: rank height, suit offset from the rank; lowest and highest over the
        # blurred variants (blur shortens pointed shapes and widens glyphs) of the suit
        # height / rank height and of the width / height of rank and suit
        layout = {}
        for code, sample in s.items():
            rh, _, ldx, ldy, _, _ = _layout(sample.glyphs)
            var = np.array([_layout(v) for v in sample.variants])
            layout[code] = [rh, ldx, ldy] + [
                float(f(var[:, i])) for i in (1, 4, 5) for f in (np.min, np.max)]
        right = max(max(b.rank_box[2], b.suit_box[2]) for b in g)
        bottom = max(b.suit_box[3] for b in g)
        p = CORNER_PAD
        crop_size = [math.ceil((right - p) * 1.2 + p + 8), math.ceil((bottom - p) * 1.2 + p + 8)]
        rank_w = float(np.median([b.rank_box[2] - b.rank_box[0] for b in g]))
        index_area = (right - p) * (bottom - p)
        geometry = {
            "rank_h": rank_h, "suit_h": suit_h, "rank_w": rank_w,
            "layout": layout,
            "index_right": right - p, "index_bottom": bottom - p,
            "crop_size": crop_size,
            "index_box": [float(np.median([min(b.rank_box[0], b.suit_box[0]) for b in g])) - p,
                          float(np.median([b.rank_box[1] for b in g])) - p,
                          float(np.median([max(b.rank_box[2], b.suit_box[2]) for b in g])) - p,
                          float(np.median([b.suit_box[3] for b in g])) - p],
            "min_part": max(6, round(0.02 * rank_h * rank_h)),
            "min_region_area": 0.5 * index_area,
        }
        redness = {su: [s[rc + su].glyphs.redness for rc in RANK_CHARS] for su in SUITS}
        colours: dict[str, object] = {
            "face_chroma": [float(v) for v in np.mean([x.chroma for x in s.values()], axis=0)],
            "face_level": float(np.median([x.level for x in s.values()])),
            "cut_chroma": [float(v) for v in self.cut[0]],
            "cut_level": float(self.cut[1]),
        }
        if all(v is not None for vs in redness.values() for v in vs):
            per_suit = {su: float(np.median(vs)) for su, vs in redness.items()}  # type: ignore[arg-type]
            order = sorted(per_suit, key=per_suit.get)  # type: ignore[arg-type]
            # two colours: the split is in the widest gap between the suits' inks
            gaps = [(per_suit[order[i + 1]] - per_suit[order[i]], i) for i in range(3)]
            gap, i = max(gaps)
            if gap > 0.25:
                colours["red_split"] = (per_suit[order[i]] + per_suit[order[i + 1]]) / 2
                colours["red_suits"] = sorted(order[i + 1:])
            colours["suit_redness"] = per_suit
        d_cut = float(np.abs(self.cut[0] - np.array(colours["face_chroma"])).sum())
        if d_cut < 0.12:
            raise LearnError(
                "CUT: the cut card's colour is too close to the card face's to tell apart "
                f"(chroma distance {d_cut:.3f}); use a coloured cut card"
            )
        profile = Profile(
            rank_templates=ranks, suit_templates=suits, geometry=geometry, colours=colours,
            thresholds=dict(DEFAULT_THRESHOLDS), camera=dict(camera or {}), source=source,
        )
        if verify:
            self.verify(profile)
        return profile

    def verify(self, profile: Profile) -> None:
        """Read every calibration frame back; :class:`LearnError` lists any that fail."""
        from shoe_controller.vision.index_reader import IndexReader

        reader = IndexReader(profile)
        bad = []
        for label, frame in self.frames.items():
            got = reader.read(frame)
            if label == "CUT":
                if got.kind != "cut":
                    bad.append(f"CUT read as {_describe(got)}")
            elif got.kind != "card" or got.card is None or got.card.code != label:
                bad.append(f"{label} read as {_describe(got)}")
        if bad:
            raise LearnError("the learned deck does not read back: " + "; ".join(bad))


def _describe(read: object) -> str:
    kind = getattr(read, "kind", "?")
    if kind == "card":
        return str(read.card)  # type: ignore[attr-defined]
    reason = getattr(read, "reason", "")
    return f"{kind} ({reason})" if reason else str(kind)


def _layout(g: IndexGlyphs) -> tuple[float, float, float, float, float, float]:
    """Rank height, suit height / rank height, suit centre offset (x, y) / rank height,
    rank width / height, suit width / height."""
    rx0, ry0, rx1, ry1 = g.rank_box
    sx0, sy0, sx1, sy1 = g.suit_box
    rh = ry1 - ry0
    return (rh, (sy1 - sy0) / rh, (sx0 + sx1 - rx0 - rx1) / 2 / rh,
            (sy0 + sy1 - ry0 - ry1) / 2 / rh, (rx1 - rx0) / rh, (sx1 - sx0) / (sy1 - sy0))


def _unit(v: np.ndarray) -> np.ndarray:
    v = v - v.mean()
    return v / max(float(np.linalg.norm(v)), 1e-9)


def learn_profile(frames: Mapping[str, np.ndarray], source: str = "",
                  camera: Mapping[str, object] | None = None,
                  learn_box: tuple[int, int] | None = None) -> Profile:
    """Learn from ``{label: frame}`` (52 card codes and ``CUT``)."""
    learner = DeckLearner(learn_box=learn_box)
    learner.add_all(frames)
    return learner.profile(source=source, camera=camera)


def template_separation(profile: Profile) -> dict[str, tuple[str, str, float]]:
    """The most alike pair of rank glyphs and of suit glyphs (names, correlation)."""
    out = {}
    for kind, arr, names in (("rank", profile.rank_templates, RANK_CHARS),
                             ("suit", profile.suit_templates, SUITS)):
        assert arr is not None
        m = arr[:, 0].reshape(len(names), -1)
        c = m @ m.T
        np.fill_diagonal(c, -np.inf)
        i, j = np.unravel_index(int(np.argmax(c)), c.shape)
        out[kind] = (names[i], names[j], float(c[i, j]))
    return out

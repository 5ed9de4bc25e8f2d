"""Synthetic camera frames: cards of our own drawing, cut cards and an empty shoe window.

For tests, benchmarks, calibration walk-throughs and ``simulate``. Two clearly different
card designs (``STYLES``) are drawn with OpenCV fonts and suit shapes made of polygons;
the index reader is *not* written for them: it learns each design from its own
calibration images, as a casino calibrates on the deck it uses.

A frame is composed from a card face (``draw_card_face``) or any other face image with
its mask (VISION-IO's barcode cards use ``compose_frame`` too), placed and degraded as
DESIGN.md "Camera frames" describes: anywhere in the frame, upright or upside down,
rotated up to 15 degrees from either, 0.85-1.15 of the calibrated scale, motion blur
along the dealing axis (the frame's x axis), defocus, uneven light and colour cast,
sensor noise and JPEG. Everything is seeded and deterministic.

>>> face = draw_card_face("QH", "classic")
>>> face.image.shape, face.mask.shape
((392, 280, 3), (392, 280))
>>> frame, truth = render_frame("QH", "classic", FULL, seed=7)
>>> frame.shape, truth.label, truth.orientation in ("up", "down")
((480, 640, 3), 'QH', True)
>>> bool((render_frame("QH", "classic", FULL, seed=7)[0] == frame).all())
True
"""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path

import cv2
import numpy as np

from shoe_controller.game.cards import ALL_CARDS

__all__ = [
    "CALIBRATION",
    "CARD_CODES",
    "CARD_H",
    "CARD_W",
    "FRAME_H",
    "FRAME_W",
    "FULL",
    "GUIDED",
    "STYLES",
    "CardFace",
    "Degradation",
    "Design",
    "Pose",
    "Truth",
    "compose_frame",
    "degrade",
    "design",
    "draw_card_face",
    "draw_cut_face",
    "draw_face",
    "draw_plain_face",
    "empty_background",
    "evaluation_labels",
    "render_frame",
    "sample_pose",
    "with_range",
    "write_calibration_set",
    "write_evaluation_set",
]

FRAME_W, FRAME_H = 640, 480
#: Card size in frame pixels at the calibrated scale (63 x 88 mm poker card proportions).
CARD_W, CARD_H = 280, 392
_SS = 4  # supersampling factor for anti-aliased drawing



# --------------------------------------------------------------------------- card faces


@dataclass(frozen=True)
class CardFace:
    """A card face at the calibrated scale: BGR image, its mask (255 on the card), and
    the box of the ink of its top-left index ``(x0, y0, x1, y1)`` in face pixels (used
    to keep the index in view when placing the card)."""

    image: np.ndarray
    mask: np.ndarray
    index_box: tuple[int, int, int, int]


#: Ink colours (BGR).
RED, BLACK = (40, 30, 200), (25, 25, 25)
BLUE, GREEN = (170, 70, 20), (40, 130, 20)


@dataclass(frozen=True)
class Design:
    """One card design: how its index, stock and decoration look.

    ``rank_font``/``suit_font``: ``"hershey:<n>"`` (an OpenCV Hershey font number), a
    font file name from a Debian font package (``DejaVuSans-Bold.ttf``), or for suits
    ``"poly:<set>"`` (polygon shapes: ``classic``, ``modern``, ``round``).
    """

    paper: tuple[int, int, int] = (236, 240, 242)
    #: ink per suit S H D C
    inks: tuple[tuple[int, int, int], ...] = (BLACK, RED, RED, BLACK)
    rank_font: str = "hershey:2"
    thickness: int = 3  # Hershey only
    rank_h: float = 34.0  # cap height, face px
    squeeze: float = 1.0  # horizontal scale of the rank glyphs (condensed < 1)
    ten_squeeze: float = 1.0  # extra horizontal scale of "10" (a narrow 10 < 1)
    ten_gap: float = 0.0  # px between the 1 and the 0 (negative: touching)
    suit_font: str = "poly:classic"
    suit_h: float = 27.0
    suit_aspect: float = 0.9  # width / height of the suit glyph
    index_cx: float = 33.0  # index column centre x
    rank_top: float = 15.0
    gap: float = 8.0  # rank bottom -> suit top
    suit_dx: float = 0.0  # suit centre offset from the rank column centre
    cut_colour: tuple[int, int, int] = (40, 200, 235)
    corner_r: int = 13
    border: tuple[float, float, tuple[int, int, int]] | None = None  # inset, width, colour
    #: court art: its frame starts this many px right of the index (None: none)
    art_gap: float | None = None
    #: pips of number cards: the nearest column this many px right of the index
    pip_gap: float | None = None
    big_centre: bool = False  # one big centre suit instead of pips
    four_corners: bool = False
    centre_style: str = "classic"  # the two original designs' own centre decoration
    #: ranks printed as other letters, (rank, text) pairs: a Russian deck's В for the
    #: jack (much like an 8), Д, К, Т; a German deck's B, D, K
    rank_texts: tuple[tuple[str, str], ...] = ()


_DESIGNS: dict[str, Design] = {
    # the two original designs, drawn with OpenCV's Hershey fonts and polygon suits
    "classic": Design(),
    "modern": Design(
        paper=(200, 226, 238), inks=((70, 40, 20), (30, 70, 225), (30, 70, 225), (70, 40, 20)),
        rank_font="hershey:4", thickness=2, rank_h=38, suit_h=25, index_cx=31, rank_top=13,
        gap=9, suit_font="poly:modern", cut_colour=(170, 90, 30), corner_r=9,
        centre_style="modern",
    ),
    "dejavu-jumbo": Design(
        rank_font="DejaVuSans-Bold.ttf", rank_h=60, suit_font="DejaVuSans.ttf", suit_h=34,
        index_cx=38, rank_top=10, gap=6, art_gap=4, cut_colour=(30, 30, 200),
        paper=(245, 246, 246),
    ),
    "liberation-serif-border": Design(
        rank_font="LiberationSerif-Regular.ttf", rank_h=30, suit_font="FreeSerif.ttf",
        suit_h=24, index_cx=30, rank_top=18, gap=6, paper=(205, 232, 240),
        border=(9, 2, (40, 40, 150)), pip_gap=10, cut_colour=(200, 140, 40),
    ),
    "narrow-large": Design(
        rank_font="LiberationSansNarrow-Bold.ttf", rank_h=46, ten_squeeze=0.75,
        suit_font="poly:classic", suit_h=30, suit_aspect=1.05, index_cx=28, rank_top=12,
        gap=5, paper=(190, 225, 240), cut_colour=(60, 180, 60),
    ),
    "four-colour": Design(
        rank_font="FreeSansBold.ttf", rank_h=44, suit_font="NotoSansSymbols2-Regular.ttf",
        suit_h=30, index_cx=34, rank_top=12, gap=6, inks=(BLACK, RED, BLUE, GREEN),
        pip_gap=8, cut_colour=(0, 140, 255),
    ),
    "slab-mono": Design(
        rank_font="NimbusMonoPS-Bold.otf", rank_h=36, suit_font="FreeMonoBold.ttf", suit_h=26,
        index_cx=32, rank_top=14, gap=7, paper=(228, 238, 240), art_gap=7,
        cut_colour=(120, 60, 160),
    ),
    "serif-jumbo-border": Design(
        rank_font="DejaVuSerif-Bold.ttf", rank_h=56, suit_font="LiberationSerif-Bold.ttf",
        suit_h=32, index_cx=40, rank_top=16, gap=6, paper=(200, 228, 236),
        border=(7, 3, (30, 110, 170)), art_gap=5, cut_colour=(180, 80, 80),
    ),
    "noto-wide-suit": Design(
        rank_font="NotoSans-Regular.ttf", rank_h=32, suit_font="DejaVuSans-Bold.ttf",
        suit_h=28, suit_aspect=1.15, suit_dx=4, index_cx=30, rank_top=14, gap=7,
        pip_gap=6, cut_colour=(40, 40, 220),
    ),
    "freeserif-four-corners": Design(
        rank_font="FreeSerifBold.ttf", rank_h=42, suit_font="FreeSerif.ttf", suit_h=28,
        index_cx=32, rank_top=12, gap=5, paper=(185, 222, 236), four_corners=True,
        big_centre=True, cut_colour=(90, 160, 40),
    ),
    "condensed-jumbo-art": Design(
        rank_font="NimbusSansNarrow-Regular.otf", rank_h=62, squeeze=0.9,
        suit_font="poly:modern", suit_h=30, index_cx=30, rank_top=10, gap=5, art_gap=3,
        cut_colour=(200, 200, 200),
    ),
    "dejavu-condensed-4c-border": Design(
        rank_font="DejaVuSansCondensed-Bold.ttf", rank_h=44, suit_font="DejaVuSans.ttf",
        suit_h=28, index_cx=34, rank_top=16, gap=6, inks=(BLACK, RED, (180, 90, 0), (0, 140, 0)),
        border=(8, 2, (120, 120, 120)), pip_gap=9, paper=(222, 236, 242),
        cut_colour=(30, 200, 240),
    ),
    # a narrow serif suit set (thin-stemmed clubs), a charcoal cut card hardly lighter
    # than the shoe interior, a border and pips close to the index
    "bookman-dark-cut": Design(
        rank_font="P052-Bold.otf", rank_h=34, suit_font="URWBookman-Demi.otf", suit_h=23,
        suit_aspect=0.8, index_cx=30, rank_top=17, gap=6, paper=(222, 234, 240),
        border=(7, 2, (60, 60, 60)), pip_gap=6, cut_colour=(62, 56, 50),
    ),
    # wide jumbo ranks (a K reaching towards the art), court art a few px from the
    # index, indices in four corners, plump spades and clubs much alike, a dark blue
    # cut card
    "gothic-jumbo-art-4corner": Design(
        rank_font="URWGothic-Demi.otf", rank_h=58, suit_font="poly:bulb", suit_h=30,
        index_cx=40, rank_top=10, gap=9, art_gap=3, four_corners=True,
        paper=(226, 236, 240), cut_colour=(100, 45, 25),
    ),
    # --- the validation designs (bench/vision.py never tunes on them)
    "liberation-jumbo-4c": Design(
        rank_font="LiberationSans-Bold.ttf", rank_h=58, suit_font="FreeSans.ttf", suit_h=32,
        index_cx=38, rank_top=11, gap=6, inks=((30, 30, 30), (50, 40, 210), (190, 110, 30),
                                               (60, 150, 40)),
        paper=(205, 230, 240), art_gap=4, pip_gap=6, cut_colour=(150, 40, 150),
    ),
    "c059-narrow10-border": Design(
        rank_font="C059-Roman.otf", rank_h=32, ten_squeeze=0.7, ten_gap=-1,
        suit_font="C059-Bold.otf", suit_h=24, index_cx=30, rank_top=18, gap=6,
        paper=(190, 224, 238), border=(8, 2, (20, 20, 120)), cut_colour=(40, 170, 230),
    ),
    "notoserif-wide-pips": Design(
        rank_font="NotoSerif-Bold.ttf", rank_h=40, suit_font="LiberationSans-Regular.ttf",
        suit_h=30, suit_aspect=1.1, suit_dx=3, index_cx=33, rank_top=13, gap=6, pip_gap=5,
        cut_colour=(60, 60, 60),
    ),
    "times-jumbo-art-4corner": Design(
        rank_font="NimbusRoman-Bold.otf", rank_h=60, suit_font="poly:round", suit_h=32,
        index_cx=38, rank_top=10, gap=6, art_gap=4, four_corners=True,
        paper=(215, 235, 244), cut_colour=(20, 120, 230),
    ),
}

STYLES: tuple[str, ...] = tuple(_DESIGNS)


def design(style: str) -> Design:
    """The :class:`Design` named ``style`` (one of :data:`STYLES`).

    >>> design("four-colour").inks[2] == BLUE
    True
    """
    try:
        return _DESIGNS[style]
    except KeyError:
        raise ValueError(f"unknown card design {style!r}; one of {', '.join(STYLES)}") from None


_FONT_PACKAGES = ("fonts-dejavu fonts-liberation fonts-freefont-ttf fonts-urw-base35 "
                  "fonts-noto-core")


@lru_cache(maxsize=64)
def _font_path(name: str) -> str:
    for root in ("/usr/share/fonts", "/usr/local/share/fonts"):
        hits = sorted(Path(root).rglob(name)) if Path(root).is_dir() else []
        if hits:
            return str(hits[0])
    raise RuntimeError(f"font {name} not found; install the Debian font packages "
                       f"({_FONT_PACKAGES})")


def _ink_crop(mask: np.ndarray) -> tuple[np.ndarray, int, int]:
    ys, xs = np.nonzero(mask > 40)
    if len(xs) == 0:
        raise RuntimeError("glyph drew no ink")
    y0, x0 = int(ys.min()), int(xs.min())
    return mask[y0:int(ys.max()) + 1, x0:int(xs.max()) + 1], x0, y0


@lru_cache(maxsize=512)
def _text_glyph(text: str, font: str, thickness: int, cap_px: int) -> tuple[np.ndarray, int]:
    """Mask of ``text`` with its cap height ``cap_px`` (supersampled px), and how far the
    ink starts below the cap line (a Q's tail reaches further down, not higher up)."""
    if font.startswith("hershey:"):
        f = int(font.split(":")[1])
        _, th = cv2.getTextSize("K", f, 1.0, thickness)[0]
        scale = cap_px / th
        t = max(1, round(thickness * scale))
        (tw, th2), base = cv2.getTextSize(text, f, scale, t)
        canvas = np.zeros((th2 + base + 4 * t + 8, tw + 4 * t + 8), np.uint8)
        org = (2 * t + 4, 2 * t + 4 + th2)
        cv2.putText(canvas, text, org, f, scale, 255, t, cv2.LINE_8)
        cap_top = org[1] - cap_px
    else:
        from PIL import Image, ImageDraw, ImageFont

        pf = ImageFont.truetype(_font_path(font), 100)
        k = pf.getbbox("K", anchor="ls")
        size = max(4, round(100 * cap_px / (k[3] - k[1])))
        pf = ImageFont.truetype(_font_path(font), size)
        x0, y0, x1, y1 = pf.getbbox(text, anchor="ls")
        pad = 8
        img = Image.new("L", (x1 - x0 + 2 * pad, y1 - y0 + 2 * pad), 0)
        ImageDraw.Draw(img).text((pad - x0, pad - y0), text, font=pf, fill=255, anchor="ls")
        canvas = np.asarray(img)
        cap_top = pad - y0 - cap_px
    crop, _x, y = _ink_crop(canvas)
    return crop, y - cap_top


def _suit_polygons(suit: str, shapes: str) -> list[np.ndarray]:
    """Suit shape as polygons in a unit box (x right, y down, both 0..1)."""
    t = np.linspace(0, 2 * np.pi, 120, endpoint=False)

    def heart(width: float = 1.0) -> np.ndarray:
        x = 16 * np.sin(t) ** 3
        y = -(13 * np.cos(t) - 5 * np.cos(2 * t) - 2 * np.cos(3 * t) - np.cos(4 * t))
        x = (x - x.min()) / (x.max() - x.min())
        y = (y - y.min()) / (y.max() - y.min())
        return np.stack([0.5 + (x - 0.5) * width, y], axis=1)

    def circle(cx: float, cy: float, r: float) -> np.ndarray:
        return np.stack([cx + r * np.cos(t), cy + r * np.sin(t)], axis=1)

    if shapes == "classic":
        if suit == "H":
            return [heart()]
        if suit == "D":
            return [np.array([[0.5, 0], [0.92, 0.5], [0.5, 1], [0.08, 0.5]])]
        if suit == "S":
            h = heart()
            body = np.stack([h[:, 0], 0.78 - h[:, 1] * 0.78], axis=1)
            stem = np.array([[0.5, 0.55], [0.68, 1.0], [0.32, 1.0]])
            return [body, stem]
        # clubs: three circles and a stem
        return [
            circle(0.5, 0.24, 0.23), circle(0.25, 0.56, 0.23), circle(0.75, 0.56, 0.23),
            np.array([[0.5, 0.4], [0.66, 1.0], [0.34, 1.0]]),
        ]
    if shapes == "round":  # plump shapes, short stems
        if suit == "H":
            return [circle(0.28, 0.3, 0.27), circle(0.72, 0.3, 0.27),
                    np.array([[0.02, 0.38], [0.98, 0.38], [0.5, 1.0]])]
        if suit == "D":
            s = np.linspace(0, 1, 30)
            bow = 0.08 * np.sin(np.pi * s)
            right = np.concatenate([
                np.stack([0.5 + 0.5 * s + bow, 0.5 * s], axis=1),
                np.stack([1.0 - 0.5 * s + bow, 0.5 + 0.5 * s], axis=1),
            ])
            left = right[::-1].copy()
            left[:, 0] = 1 - left[:, 0]
            return [np.concatenate([right, left])]
        if suit == "S":
            return [circle(0.28, 0.6, 0.26), circle(0.72, 0.6, 0.26),
                    np.array([[0.02, 0.52], [0.98, 0.52], [0.5, 0.0]]),
                    np.array([[0.5, 0.6], [0.72, 1.0], [0.28, 1.0]])]
        return [circle(0.5, 0.25, 0.25), circle(0.24, 0.6, 0.24), circle(0.76, 0.6, 0.24),
                np.array([[0.5, 0.45], [0.7, 1.0], [0.3, 1.0]])]
    if shapes == "bulb":  # fat bodies, stubby stems: spade and club much alike
        if suit == "H":
            return [heart(1.1)]
        if suit == "D":
            return [np.array([[0.5, 0], [1.0, 0.5], [0.5, 1], [0.0, 0.5]])]
        if suit == "S":
            h = heart(1.1)
            body = np.stack([h[:, 0], 0.84 - h[:, 1] * 0.84], axis=1)
            return [body, np.array([[0.5, 0.62], [0.76, 1.0], [0.24, 1.0]])]
        return [circle(0.5, 0.27, 0.27), circle(0.23, 0.6, 0.25), circle(0.77, 0.6, 0.25),
                np.array([[0.3, 0.5], [0.7, 0.5], [0.5, 0.3]]),
                np.array([[0.5, 0.55], [0.76, 1.0], [0.24, 1.0]])]
    # modern: narrower, sharper shapes
    if suit == "H":
        h = heart(0.86)
        return [np.stack([h[:, 0], h[:, 1] ** 0.9], axis=1)]
    if suit == "D":
        s = np.linspace(0, 1, 30)
        bow = 0.12 * np.sin(np.pi * s)
        right = np.concatenate([
            np.stack([0.5 + 0.4 * s - bow, 0.5 * s], axis=1),
            np.stack([0.9 - 0.4 * s + bow, 0.5 + 0.5 * s], axis=1),
        ])
        left = right[::-1].copy()
        left[:, 0] = 1 - left[:, 0]
        return [np.concatenate([right, left])]
    if suit == "S":
        body = np.array([[0.5, 0.0], [0.95, 0.55], [0.8, 0.74], [0.58, 0.66],
                         [0.5, 0.7], [0.42, 0.66], [0.2, 0.74], [0.05, 0.55]])
        stem = np.array([[0.43, 0.5], [0.57, 0.5], [0.66, 1.0], [0.34, 1.0]])
        return [body, stem]
    return [
        circle(0.5, 0.22, 0.2), circle(0.22, 0.58, 0.2), circle(0.78, 0.58, 0.2),
        circle(0.5, 0.5, 0.14),
        np.array([[0.42, 0.45], [0.58, 0.45], [0.66, 1.0], [0.34, 1.0]]),
    ]


_SUIT_CHARS = {"S": "\u2660", "H": "\u2665", "D": "\u2666", "C": "\u2663"}


@lru_cache(maxsize=256)
def _suit_glyph(suit: str, font: str, h_px: int, aspect: float) -> np.ndarray:
    """Mask of a suit glyph ``h_px`` high (supersampled px), ``aspect`` wide per high for
    polygon shapes; font glyphs keep their own proportions times ``aspect / 0.9``."""
    if font.startswith("poly:"):
        w = round(h_px * aspect)
        canvas = np.zeros((h_px + 2, w + 2), np.uint8)
        for p in _suit_polygons(suit, font.split(":")[1]):
            q = np.round(np.stack([1 + p[:, 0] * (w - 1), 1 + p[:, 1] * (h_px - 1)], axis=1))
            cv2.fillPoly(canvas, [q.astype(np.int32)], 255, lineType=cv2.LINE_8)
        return _ink_crop(canvas)[0]
    from PIL import Image, ImageDraw, ImageFont

    pf = ImageFont.truetype(_font_path(font), 200)
    ch = _SUIT_CHARS[suit]
    x0, y0, x1, y1 = pf.getbbox(ch)
    img = Image.new("L", (x1 - x0 + 20, y1 - y0 + 20), 0)
    ImageDraw.Draw(img).text((10 - x0, 10 - y0), ch, font=pf, fill=255)
    g = _ink_crop(np.asarray(img))[0]
    gw = max(2, round(g.shape[1] * h_px / g.shape[0] * aspect / 0.9))
    return cv2.resize(g, (gw, h_px), interpolation=cv2.INTER_AREA)


def _paste(img: np.ndarray, mask: np.ndarray, x: int, y: int,
           colour: tuple[int, int, int]) -> tuple[int, int, int, int]:
    """Ink ``mask`` into ``img`` at (x, y) (clipped); returns the ink box."""
    h, w = mask.shape
    H, W = img.shape[:2]
    x0, y0, x1, y1 = max(x, 0), max(y, 0), min(x + w, W), min(y + h, H)
    if x1 <= x0 or y1 <= y0:
        return (x, y, x, y)
    m = mask[y0 - y:y1 - y, x0 - x:x1 - x].astype(np.float32)[..., None] / 255
    roi = img[y0:y1, x0:x1].astype(np.float32)
    img[y0:y1, x0:x1] = (roi * (1 - m) + np.array(colour, np.float32) * m + 0.5).astype(np.uint8)
    return (x0, y0, x1, y1)


def _rank_mask(d: Design, text: str) -> tuple[np.ndarray, int]:
    cap = round(d.rank_h * _SS)
    if text == "10" and (d.ten_gap or d.ten_squeeze != 1.0):
        one, o1 = _text_glyph("1", d.rank_font, d.thickness, cap)
        zero, o0 = _text_glyph("0", d.rank_font, d.thickness, cap)
        gap = round(d.ten_gap * _SS) + max(1, round(0.06 * cap))
        h = max(one.shape[0] + o1, zero.shape[0] + o0)
        top = min(o1, o0)
        m = np.zeros((h - top, one.shape[1] + zero.shape[1] + max(gap, 0) + 2), np.uint8)
        m[o1 - top:o1 - top + one.shape[0], :one.shape[1]] = one
        x = max(one.shape[1] + gap, 0)
        sub = m[o0 - top:o0 - top + zero.shape[0], x:x + zero.shape[1]]
        np.maximum(sub, zero[:, :sub.shape[1]], out=sub)
        mask, off = _ink_crop(m)[0], top
    else:
        mask, off = _text_glyph(text, d.rank_font, d.thickness, cap)
    sq = d.squeeze * (d.ten_squeeze if text == "10" else 1.0)
    if sq != 1.0:
        mask = cv2.resize(mask, (max(2, round(mask.shape[1] * sq)), mask.shape[0]),
                          interpolation=cv2.INTER_AREA)
    return mask, off


@lru_cache(maxsize=64)
def _rank_depth(d: Design) -> float:
    """How far below the cap line the deepest rank glyph reaches (a J or Q with a tail
    below the line), face px: the suit sits below that."""
    return max(max(d.rank_h, (off + m.shape[0]) / _SS)
               for m, off in (_rank_mask(d, t) for t in ("A", "J", "Q", "K", "10", "7")))


def _draw_index(img: np.ndarray, d: Design, code: str, cx: float) -> tuple[int, int, int, int]:
    """Rank above suit with the column centred at ``cx`` (face px); the ink box (ss px)."""
    rank_text = dict(d.rank_texts).get(code[0], "10" if code[0] == "T" else code[0])
    ink = d.inks["SHDC".index(code[1])]
    rm, off = _rank_mask(d, rank_text)
    rx = round(cx * _SS - rm.shape[1] / 2)
    b1 = _paste(img, rm, rx, round(d.rank_top * _SS) + off, ink)
    sm = _suit_glyph(code[1], d.suit_font, round(d.suit_h * _SS), d.suit_aspect)
    sx = round((cx + d.suit_dx) * _SS - sm.shape[1] / 2)
    b2 = _paste(img, sm, sx, round((d.rank_top + _rank_depth(d) + d.gap) * _SS), ink)
    return (min(b1[0], b2[0]), min(b1[1], b2[1]), max(b1[2], b2[2]), max(b1[3], b2[3]))


def _blank_face(d: Design, colour: tuple[int, int, int]) -> tuple[np.ndarray, np.ndarray]:
    w, h, r = CARD_W * _SS, CARD_H * _SS, d.corner_r * _SS
    mask = np.zeros((h, w), np.uint8)
    cv2.rectangle(mask, (r, 0), (w - 1 - r, h - 1), 255, -1)
    cv2.rectangle(mask, (0, r), (w - 1, h - 1 - r), 255, -1)
    for cx, cy in ((r, r), (w - 1 - r, r), (r, h - 1 - r), (w - 1 - r, h - 1 - r)):
        cv2.circle(mask, (cx, cy), r, 255, -1)
    img = np.zeros((h, w, 3), np.uint8)
    img[:] = colour
    return img, mask


def _finish(img: np.ndarray, mask: np.ndarray, box: tuple[int, int, int, int]) -> CardFace:
    small = cv2.resize(img, (CARD_W, CARD_H), interpolation=cv2.INTER_AREA)
    small_mask = cv2.resize(mask, (CARD_W, CARD_H), interpolation=cv2.INTER_AREA)
    small.setflags(write=False)
    small_mask.setflags(write=False)
    return CardFace(small, small_mask, box)


@lru_cache(maxsize=64)
def _column_cx(d: Design) -> float:
    """The index column centre: ``index_cx``, or further in so the widest rank (``10``)
    keeps clear of the card's edge and border."""
    left = 5.0 + (d.border[0] + d.border[1] + 3 if d.border is not None else 0.0)
    half10 = _rank_mask(d, "10")[0].shape[1] / _SS / 2
    return max(d.index_cx, left + half10)


@lru_cache(maxsize=64)
def _index_right(d: Design, court: bool) -> float:
    """A conservative right edge of the index column (face px) on court cards (art) or
    number cards (pips): at least the widest of those ranks as drawn (a wide serif
    ``10``), and the suit; as on a printed deck, print never touches the index."""
    texts = ("J", "Q", "K") if court else ("A", "2", "4", "8", "10")
    widest = max(_rank_mask(d, t)[0].shape[1] for t in texts)
    return _column_cx(d) + max(0.45 * d.rank_h * 1.3 * d.squeeze, 0.5 * widest / _SS + 1.0,
                               0.5 * d.suit_h * d.suit_aspect + abs(d.suit_dx))


def _court_art(img: np.ndarray, d: Design, code: str, ink: tuple[int, int, int]) -> None:
    """A court figure's frame and busy art, starting ``art_gap`` px right of the index."""
    assert d.art_gap is not None
    rng = np.random.default_rng([ord(code[0]), ord(code[1])])
    x0 = (_index_right(d, True) + d.art_gap) * _SS
    y0 = d.rank_top * _SS
    x1, y1 = CARD_W * _SS - x0, CARD_H * _SS - y0
    colours = [ink, (40, 170, 230), (160, 60, 30), (30, 30, 160), (20, 20, 20)]
    ix0, iy0, ix1, iy1 = round(x0), round(y0), round(x1), round(y1)
    art = img[iy0:iy1, ix0:ix1].copy()  # the art stays inside its frame
    for _ in range(40):  # robes, crowns, hair: blobs and strokes of the court colours
        c = colours[int(rng.integers(len(colours)))]
        px, py = rng.uniform(6 * _SS, x1 - x0 - 6 * _SS), rng.uniform(4 * _SS, y1 / 2 - y0)
        if rng.random() < 0.5:
            cv2.circle(art, (round(px), round(py)), round(rng.uniform(3, 14) * _SS), c, -1)
        else:
            qx, qy = px + rng.uniform(-40, 40) * _SS, py + rng.uniform(-30, 30) * _SS
            cv2.line(art, (round(px), round(py)), (round(qx), round(qy)), c,
                     round(rng.uniform(1, 4) * _SS))
    # the figure reaches into the frame's corner, right by the index
    cv2.ellipse(art, (round(18 * _SS), round(20 * _SS)), (round(14 * _SS), round(18 * _SS)),
                0, 0, 360, colours[1], -1)
    img[iy0:iy1, ix0:ix1] = art
    cv2.rectangle(img, (ix0, iy0), (ix1, iy1), ink, 2 * _SS)
    half = img[: img.shape[0] // 2].copy()
    img[img.shape[0] - half.shape[0]:] = half[::-1, ::-1]


def _pips(img: np.ndarray, d: Design, code: str, ink: tuple[int, int, int]) -> None:
    """Number-card pips in two or three columns, the outer ones ``pip_gap`` px from the
    index column."""
    assert d.pip_gap is not None
    n = 10 if code[0] == "T" else (1 if code[0] == "A" else int(code[0]))
    ph = 30
    pm = _suit_glyph(code[1], d.suit_font, ph * _SS, d.suit_aspect)
    xl = _index_right(d, False) + d.pip_gap + pm.shape[1] / _SS / 2
    xs = (xl, CARD_W / 2, CARD_W - xl)
    top, bottom = d.rank_top + 6, CARD_H - d.rank_top - 6 - ph
    spots: list[tuple[float, float]] = []
    if n == 1:
        spots = [(CARD_W / 2, CARD_H / 2 - 45)]
        pm = _suit_glyph(code[1], d.suit_font, 90 * _SS, d.suit_aspect)
    else:
        side = {2: 0, 3: 0, 4: 2, 5: 2, 6: 3, 7: 3, 8: 3, 9: 4, 10: 4}[n]
        middle = n - 2 * side
        for col in (0, 2) if side else ():
            for k in range(side):
                y = top + (bottom - top) * (k / max(side - 1, 1))
                spots.append((xs[col], y))
        for k in range(middle):
            y = top + (bottom - top) * ((k + 0.5) / middle if side else k / max(middle - 1, 1))
            spots.append((xs[1], y))
    for x, y in spots:
        _paste(img, pm, round(x * _SS - pm.shape[1] / 2), round(y * _SS), ink)


@lru_cache(maxsize=256)
def draw_card_face(code: str, style: str = "classic") -> CardFace:
    """The face of card ``code`` (e.g. ``"TS"``) in ``style``, at the calibrated scale.

    Indices at the top-left and (turned) bottom-right corners (four corners for some
    designs), the design's border, pips or court art, rounded corners. ``ext:<deck>``
    names a deck drawn by others (:mod:`shoe_controller.sim.external_decks`).
    """
    if style.startswith("ext:"):
        from shoe_controller.sim.external_decks import card_face

        return card_face(code, style)
    return draw_face(code, design(style))


def draw_face(code: str, d: Design) -> CardFace:
    """The face of card ``code`` in the design ``d`` (e.g. a design changed with
    ``dataclasses.replace``, such as one printing a suit in another suit's ink)."""
    rank_text = "10" if code[0] == "T" else code[0]
    suit = code[1]
    ink = d.inks["SHDC".index(suit)]
    img, mask = _blank_face(d, d.paper)
    if d.border is not None:
        inset, width, colour = d.border
        cv2.rectangle(img, (round(inset * _SS), round(inset * _SS)),
                      (round((CARD_W - inset) * _SS), round((CARD_H - inset) * _SS)), colour,
                      max(1, round(width * _SS)))
    cx, cy = CARD_W / 2, CARD_H / 2
    court = rank_text in ("J", "Q", "K")
    if court and d.art_gap is not None:
        _court_art(img, d, code, ink)
    elif d.centre_style == "classic" and d.pip_gap is None and not d.big_centre:
        if court:
            cv2.rectangle(img, (round(80 * _SS), round(105 * _SS)),
                          (round((CARD_W - 80) * _SS), round((CARD_H - 105) * _SS)), ink, 2 * _SS)
            m, _ = _text_glyph(rank_text, "hershey:2", 5, 90 * _SS)
            _paste(img, m, round(cx * _SS - m.shape[1] / 2), round((cy - 45) * _SS), ink)
        else:
            m = _suit_glyph(suit, d.suit_font, 110 * _SS, 0.9)
            _paste(img, m, round(cx * _SS - m.shape[1] / 2), round((cy - 55) * _SS), ink)
    elif d.centre_style == "modern":
        m, _ = _text_glyph(rank_text, "hershey:5", 3, 70 * _SS)
        _paste(img, m, round(cx * _SS - m.shape[1] / 2), round((cy - 35) * _SS), ink)
        m = _suit_glyph(suit, d.suit_font, 40 * _SS, 0.9)
        for y in (100, CARD_H - 140):
            _paste(img, m, round(cx * _SS - m.shape[1] / 2), y * _SS, ink)
    elif d.big_centre or court:
        m = _suit_glyph(suit, d.suit_font, 120 * _SS, d.suit_aspect)
        _paste(img, m, round(cx * _SS - m.shape[1] / 2), round((cy - 60) * _SS), ink)
    else:
        _pips(img, d, code, ink)
    icx = _column_cx(d)
    box = _draw_index(img, d, code, icx)
    if d.four_corners:
        _draw_index(img, d, code, CARD_W - icx)
    img = np.ascontiguousarray(img[::-1, ::-1])
    _draw_index(img, d, code, icx)
    if d.four_corners:
        _draw_index(img, d, code, CARD_W - icx)
    img = np.ascontiguousarray(img[::-1, ::-1])
    ibox = (box[0] // _SS, box[1] // _SS, -(-box[2] // _SS), -(-box[3] // _SS))
    return _finish(img, mask, ibox)


def draw_plain_face(colour: tuple[int, int, int], style: str = "classic") -> CardFace:
    """A plain plastic card of ``colour`` (BGR), the size and corners of ``style``'s cards
    (the cut card is one; a plain card of another colour is not)."""
    if style.startswith("ext:"):
        from shoe_controller.sim.external_decks import plain_face

        return plain_face(colour, style)
    d = design(style)
    img, mask = _blank_face(d, colour)
    face = draw_card_face("AS", style)  # same card size: keep the same index box
    return _finish(img, mask, face.index_box)


@lru_cache(maxsize=32)
def draw_cut_face(style: str = "classic") -> CardFace:
    """The cut card of ``style``: plain coloured plastic, no index."""
    if style.startswith("ext:"):
        from shoe_controller.sim.external_decks import cut_face

        return cut_face(style)
    return draw_plain_face(design(style).cut_colour, style)


# --------------------------------------------------------------------------- placement


@dataclass(frozen=True)
class Degradation:
    """A range of poses and image degradations to sample from.

    ``y_band``: when set, the index centre stays within this many pixels of the
    calibrated height (a guided card moves only along the dealing axis, x).
    """

    max_angle: float = 15.0  # degrees from upright / upside down
    scale: tuple[float, float] = (0.85, 1.15)
    y_band: float | None = None
    motion_blur: tuple[float, float] = (0.0, 6.0)  # px along x
    defocus: tuple[float, float] = (0.0, 1.3)  # gaussian sigma, px
    light: tuple[float, float] = (0.0, 0.45)  # strength of the uneven light field
    brightness: tuple[float, float] = (0.7, 1.1)
    colour_cast: float = 0.15  # per-channel gain spread
    noise: tuple[float, float] = (0.0, 8.0)  # gaussian sigma, grey levels
    jpeg: tuple[int, int] = (50, 95)
    upside_down: float = 0.5  # probability


#: The whole range of DESIGN.md "Camera frames".
FULL = Degradation()
#: What a card guided by the shoe sees: small angle and scale change, any position along
#: the dealing axis, realistic blur and light.
GUIDED = Degradation(
    max_angle=4.0, scale=(0.95, 1.05), y_band=12.0, motion_blur=(0.0, 4.0),
    defocus=(0.0, 0.8), light=(0.0, 0.25), brightness=(0.8, 1.05), colour_cast=0.08,
    noise=(1.0, 4.0), jpeg=(70, 95),
)
#: How calibration frames look: calibrated pose, steady card, mild sensor noise.
CALIBRATION = Degradation(
    max_angle=0.0, scale=(1.0, 1.0), y_band=0.0, motion_blur=(0.0, 0.0),
    defocus=(0.3, 0.5), light=(0.0, 0.1), brightness=(0.95, 1.0), colour_cast=0.02,
    noise=(1.0, 2.0), jpeg=(95, 95), upside_down=0.0,
)

#: Where the calibrated index centre sits in the frame.
CALIBRATED_INDEX_CENTRE = (FRAME_W / 2 - 90, 230.0)


@dataclass(frozen=True)
class Pose:
    """Where a face lands in the frame: index centre (px), upside down, angle (deg), scale."""

    centre: tuple[float, float] = CALIBRATED_INDEX_CENTRE
    upside_down: bool = False
    angle: float = 0.0
    scale: float = 1.0


def _face_to_frame(face: CardFace, pose: Pose) -> np.ndarray:
    """2x3 affine matrix taking face pixels to frame pixels."""
    x0, y0, x1, y1 = face.index_box
    icx, icy = (x0 + x1) / 2, (y0 + y1) / 2
    a = math.radians(pose.angle + (180.0 if pose.upside_down else 0.0))
    c, s = math.cos(a) * pose.scale, math.sin(a) * pose.scale
    px, py = pose.centre
    return np.array([[c, -s, px - c * icx + s * icy], [s, c, py - s * icx - c * icy]])


def _box_in_frame(m: np.ndarray, box: tuple[float, float, float, float], margin: float) -> bool:
    x0, y0, x1, y1 = box
    pts = np.array([[x0, y0, 1], [x1, y0, 1], [x0, y1, 1], [x1, y1, 1]], float) @ m.T
    return bool(
        (pts[:, 0] >= margin).all() and (pts[:, 0] <= FRAME_W - 1 - margin).all()
        and (pts[:, 1] >= margin).all() and (pts[:, 1] <= FRAME_H - 1 - margin).all()
    )


def sample_pose(face: CardFace, deg: Degradation, rng: np.random.Generator) -> Pose:
    """A pose within ``deg`` that keeps exactly one index fully in view."""
    x0, y0, x1, y1 = face.index_box
    # the ink of the other index (the top-left one turned): part of it must be out of
    # view, so a frame never shows a second whole index
    patch = face.image[y0:y1, x0:x1].min(axis=2).astype(np.int16)
    ys, xs = np.nonzero(patch < int(patch.max()) - 60)
    other = np.stack([CARD_W - 1 - (xs + x0), CARD_H - 1 - (ys + y0),
                      np.ones_like(xs)], axis=1).astype(np.float64)
    for _ in range(1000):
        angle = float(rng.uniform(-deg.max_angle, deg.max_angle))
        scale = float(rng.uniform(*deg.scale))
        down = bool(rng.random() < deg.upside_down)
        cx = float(rng.uniform(0, FRAME_W))
        if deg.y_band is None:
            cy = float(rng.uniform(0, FRAME_H))
        else:
            cy = CALIBRATED_INDEX_CENTRE[1] + float(rng.uniform(-deg.y_band, deg.y_band))
        pose = Pose((cx, cy), down, angle, scale)
        m = _face_to_frame(face, pose)
        if not _box_in_frame(m, face.index_box, 4):
            continue
        p = other @ m.T
        out = (p[:, 0] < 0) | (p[:, 0] > FRAME_W - 1) | (p[:, 1] < 0) | (p[:, 1] > FRAME_H - 1)
        if len(p) == 0 or out.mean() >= 0.03:
            return pose
    raise RuntimeError("no pose found that keeps one index in view")  # pragma: no cover


# --------------------------------------------------------------------------- frames


@lru_cache(maxsize=4)
def _low_grid(h: int, w: int) -> tuple[np.ndarray, np.ndarray]:
    """Pixel coordinates of a coarse grid over an h x w frame (smooth fields are
    computed on it and resized: much faster than per pixel)."""
    gh, gw = max(h // 8, 2), max(w // 8, 2)
    yy, xx = np.mgrid[0:gh, 0:gw].astype(np.float32)
    return yy * ((h - 1) / (gh - 1)), xx * ((w - 1) / (gw - 1))


def _smooth(field: np.ndarray, h: int, w: int) -> np.ndarray:
    return cv2.resize(field.astype(np.float32), (w, h), interpolation=cv2.INTER_LINEAR)


def empty_background(rng: np.random.Generator) -> np.ndarray:
    """The dark shoe interior: a low, uneven grey with a faint tint."""
    level = rng.uniform(12, 40)
    gx, gy = rng.uniform(-12, 12, 2)
    yy, xx = _low_grid(FRAME_H, FRAME_W)
    base = level + gx * (xx / FRAME_W - 0.5) + gy * (yy / FRAME_H - 0.5)
    blobs = cv2.resize(rng.normal(0, 4, (6, 8)).astype(np.float32), base.shape[::-1],
                       interpolation=cv2.INTER_CUBIC)
    tint = rng.uniform(0.85, 1.15, 3)
    grey = np.clip(_smooth(base + blobs, FRAME_H, FRAME_W), 0, 255)
    return cv2.merge([grey * np.float32(t) for t in tint])


def compose_frame(face: CardFace | None, pose: Pose, background: np.ndarray) -> np.ndarray:
    """Place ``face`` (any BGR face image with its mask, e.g. a barcode card) at ``pose``
    over ``background`` (float32 HxWx3, e.g. :func:`empty_background`). Returns float32;
    pass the result to :func:`degrade`. ``face=None`` gives the background alone."""
    if face is None:
        return background.copy()
    m = _face_to_frame(face, pose)
    size = (background.shape[1], background.shape[0])
    img = cv2.warpAffine(face.image, m, size, flags=cv2.INTER_LINEAR,
                         borderMode=cv2.BORDER_CONSTANT).astype(np.float32)
    alpha = cv2.warpAffine(face.mask, m, size, flags=cv2.INTER_LINEAR,
                           borderMode=cv2.BORDER_CONSTANT).astype(np.float32) / 255
    alpha3 = cv2.merge([alpha, alpha, alpha])
    return background + cv2.multiply(img - background, alpha3)


def degrade(frame: np.ndarray, deg: Degradation, rng: np.random.Generator,
            grey: bool = False) -> np.ndarray:
    """Camera effects on a composed float frame: light, blur, noise, JPEG -> uint8."""
    h, w = frame.shape[:2]
    # uneven light: a linear ramp and a soft spot, times an overall brightness
    strength = rng.uniform(*deg.light)
    yy, xx = _low_grid(h, w)
    d = rng.normal(size=2)
    d /= np.linalg.norm(d) + 1e-9
    ramp = ((xx / w - 0.5) * d[0] + (yy / h - 0.5) * d[1]) * 1.4
    sx, sy = rng.uniform(0, w), rng.uniform(0, h)
    spot = np.exp(-(((xx - sx) ** 2 + (yy - sy) ** 2) / (2 * (0.35 * w) ** 2)))
    field = 1 - strength * (0.5 + 0.5 * ramp) * 0.7 + strength * 0.3 * (spot - 0.5)
    field *= rng.uniform(*deg.brightness)
    gains = 1 + rng.uniform(-deg.colour_cast, deg.colour_cast, 3)
    field = _smooth(field, h, w)
    out = cv2.multiply(frame, cv2.merge([field * np.float32(g) for g in gains]))
    # motion blur along the dealing axis (x), then defocus
    length = rng.uniform(*deg.motion_blur)
    if length >= 1.0:
        n = math.ceil(length) | 1
        k = np.zeros((1, n), np.float32)
        k[0, :] = 1.0
        k[0, 0] = k[0, -1] = (length - (n - 2)) / 2  # fractional ends
        out = cv2.filter2D(out, -1, k / k.sum(), borderType=cv2.BORDER_REFLECT)
    sigma = rng.uniform(*deg.defocus)
    if sigma > 0.05:
        out = cv2.GaussianBlur(out, (0, 0), sigma)
    noise_sigma = rng.uniform(*deg.noise)
    if noise_sigma > 0:
        noise = rng.standard_normal(out.shape, dtype=np.float32)
        noise *= np.float32(noise_sigma)
        out += noise
    out += np.float32(0.5)
    img = np.clip(out, 0, 255, out=out).astype(np.uint8)
    if grey:
        img = cv2.cvtColor(img, cv2.COLOR_BGR2GRAY)
    quality = int(rng.integers(deg.jpeg[0], deg.jpeg[1] + 1))
    if quality < 100:
        _ok, buf = cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, quality])
        img = cv2.imdecode(buf, cv2.IMREAD_UNCHANGED)
    return img


@dataclass(frozen=True)
class Truth:
    """What a rendered frame shows: ``label`` is a card code, ``CUT`` or ``NONE``."""

    label: str
    orientation: str | None = None
    pose: Pose | None = None


def render_frame(label: str, style: str, deg: Degradation, seed: int,
                 pose: Pose | None = None, grey: bool = False) -> tuple[np.ndarray, Truth]:
    """One frame showing ``label`` (a card code, ``CUT`` or ``NONE``).

    The pose is sampled from ``deg`` unless given. Same arguments, same frame.
    """
    rng = np.random.default_rng([seed, *label.encode(), *style.encode()])
    bg = empty_background(rng)
    if label == "NONE":
        return degrade(bg, deg, rng, grey), Truth("NONE")
    face = draw_cut_face(style) if label == "CUT" else draw_card_face(label, style)
    if pose is None:
        pose = sample_pose(face, deg, rng)
    frame = degrade(compose_frame(face, pose, bg), deg, rng, grey)
    orientation = None if label == "CUT" else ("down" if pose.upside_down else "up")
    return frame, Truth(label, orientation, pose)


# --------------------------------------------------------------------------- sets on disk

CARD_CODES: tuple[str, ...] = tuple(c.code for c in ALL_CARDS)


def write_calibration_set(directory: str | Path, style: str, seed: int = 0,
                          deg: Degradation = CALIBRATION) -> list[Path]:
    """One frame per card code (``QH.png``, ...) and ``CUT.png``, at the calibrated pose."""
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for i, label in enumerate((*CARD_CODES, "CUT")):
        frame, _ = render_frame(label, style, deg, seed * 1000 + i, pose=Pose())
        path = out / f"{label}.png"
        cv2.imwrite(str(path), frame)
        paths.append(path)
    return paths


def evaluation_labels(n: int, seed: int, cut_share: float = 0.05,
                      empty_share: float = 0.05) -> list[str]:
    """``n`` labels: mostly cards (every code equally), some ``CUT`` and ``NONE``."""
    rng = np.random.default_rng([seed, 99])
    labels = []
    for _ in range(n):
        r = rng.random()
        if r < cut_share:
            labels.append("CUT")
        elif r < cut_share + empty_share:
            labels.append("NONE")
        else:
            labels.append(CARD_CODES[int(rng.integers(52))])
    return labels


def write_evaluation_set(directory: str | Path, style: str, deg: Degradation, n: int,
                         seed: int = 1, ext: str = "png") -> Path:
    """``n`` labelled frames and ``labels.csv`` (``filename,label``); returns the csv path.

    ``ext`` ``png`` keeps each frame exactly as rendered (JPEG artefacts included);
    ``jpg`` writes JPEG files.
    """
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    for i, label in enumerate(evaluation_labels(n, seed)):
        frame, _ = render_frame(label, style, deg, seed * 1_000_003 + i)
        name = f"{i:05d}.{ext}"
        cv2.imwrite(str(out / name), frame)
        rows.append((name, label))
    labels = out / "labels.csv"
    with labels.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(("filename", "label"))
        w.writerows(rows)
    return labels


def with_range(deg: Degradation, **changes: object) -> Degradation:
    """A copy of ``deg`` with some fields changed (e.g. no JPEG for a test)."""
    return replace(deg, **changes)  # type: ignore[arg-type]


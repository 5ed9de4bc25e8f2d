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
from typing import Literal

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
    "Pose",
    "Truth",
    "compose_frame",
    "degrade",
    "draw_card_face",
    "draw_cut_face",
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

Style = Literal["classic", "modern"]
STYLES: tuple[str, ...] = ("classic", "modern")


# --------------------------------------------------------------------------- card faces


@dataclass(frozen=True)
class CardFace:
    """A card face at the calibrated scale: BGR image, its mask (255 on the card), and
    the box of the ink of its top-left index ``(x0, y0, x1, y1)`` in face pixels (used
    to keep the index in view when placing the card)."""

    image: np.ndarray
    mask: np.ndarray
    index_box: tuple[int, int, int, int]


@dataclass(frozen=True)
class _StyleSpec:
    paper: tuple[int, int, int]  # BGR
    red: tuple[int, int, int]
    black: tuple[int, int, int]
    font: int
    thickness: int
    rank_h: float  # rank glyph height, face px
    suit_h: float
    index_cx: float  # index column centre x
    rank_top: float
    gap: float  # rank bottom -> suit top
    suit_shapes: str  # "classic" | "modern"
    cut_colour: tuple[int, int, int]
    corner_r: int


_SPECS: dict[str, _StyleSpec] = {
    "classic": _StyleSpec(
        paper=(236, 240, 242), red=(40, 30, 200), black=(25, 25, 25),
        font=cv2.FONT_HERSHEY_DUPLEX, thickness=3, rank_h=34, suit_h=27,
        index_cx=33, rank_top=15, gap=8, suit_shapes="classic",
        cut_colour=(40, 200, 235), corner_r=13,
    ),
    "modern": _StyleSpec(
        paper=(200, 226, 238), red=(30, 70, 225), black=(70, 40, 20),
        font=cv2.FONT_HERSHEY_TRIPLEX, thickness=2, rank_h=38, suit_h=25,
        index_cx=31, rank_top=13, gap=9, suit_shapes="modern",
        cut_colour=(170, 90, 30), corner_r=9,
    ),
}


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


def _draw_suit(img: np.ndarray, suit: str, shapes: str, cx: float, top: float, h: float,
               colour: tuple[int, int, int], aspect: float = 0.9) -> None:
    """Fill a suit shape of height ``h`` centred at ``cx`` below ``top`` (supersampled)."""
    w = h * aspect
    polys = []
    for p in _suit_polygons(suit, shapes):
        q = np.empty_like(p)
        q[:, 0] = (cx - w / 2 + p[:, 0] * w) * _SS
        q[:, 1] = (top + p[:, 1] * h) * _SS
        polys.append(np.round(q).astype(np.int32))
    for p in polys:
        cv2.fillPoly(img, [p], colour, lineType=cv2.LINE_8)


def _draw_text(img: np.ndarray, text: str, font: int, thickness: int, cx: float, top: float,
               h: float, colour: tuple[int, int, int]) -> None:
    """Draw ``text`` with its cap height ``h`` centred at ``cx`` below ``top`` (supersampled)."""
    (tw, th), _ = cv2.getTextSize(text, font, 1.0, thickness)
    scale = h * _SS / th
    th_px = max(1, round(thickness * scale))
    (tw, th), _ = cv2.getTextSize(text, font, scale, th_px)
    org = (round(cx * _SS - tw / 2), round((top + h) * _SS))
    cv2.putText(img, text, org, font, scale, colour, th_px, cv2.LINE_8)


def _blank_face(spec: _StyleSpec, colour: tuple[int, int, int]) -> tuple[np.ndarray, np.ndarray]:
    w, h, r = CARD_W * _SS, CARD_H * _SS, spec.corner_r * _SS
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


@lru_cache(maxsize=256)
def draw_card_face(code: str, style: str = "classic") -> CardFace:
    """The face of card ``code`` (e.g. ``"TS"``) in ``style``, at the calibrated scale.

    Indices at the top-left and (turned) bottom-right corners, a centre decoration
    that keeps clear of the index column, rounded corners.
    """
    spec = _SPECS[style]
    rank_text = "10" if code[0] == "T" else code[0]
    suit = code[1]
    ink = spec.red if suit in "HD" else spec.black
    img, mask = _blank_face(spec, spec.paper)
    # one index, drawn on a corner tile, then pasted turned into the opposite corner
    tile_w, tile_h = 70, 104
    tile = np.zeros((tile_h * _SS, tile_w * _SS, 3), np.uint8)
    tile[:] = spec.paper
    _draw_text(tile, rank_text, spec.font, spec.thickness, spec.index_cx, spec.rank_top,
               spec.rank_h, ink)
    suit_top = spec.rank_top + spec.rank_h + spec.gap
    _draw_suit(tile, suit, spec.suit_shapes, spec.index_cx, suit_top, spec.suit_h, ink)
    th, tw = tile.shape[:2]
    img[:th, :tw] = np.where(mask[:th, :tw, None] > 0, tile, img[:th, :tw])
    img[-th:, -tw:] = np.where(mask[-th:, -tw:, None] > 0, tile[::-1, ::-1], img[-th:, -tw:])
    # centre decoration, far from the index column
    cx, cy = CARD_W / 2, CARD_H / 2
    if style == "classic":
        if rank_text in ("J", "Q", "K"):
            cv2.rectangle(img, (round(80 * _SS), round(105 * _SS)),
                          (round((CARD_W - 80) * _SS), round((CARD_H - 105) * _SS)), ink, 2 * _SS)
            _draw_text(img, rank_text, spec.font, 5, cx, cy - 45, 90, ink)
        else:
            _draw_suit(img, suit, spec.suit_shapes, cx, cy - 55, 110, ink)
    else:
        _draw_text(img, rank_text, cv2.FONT_HERSHEY_COMPLEX, 3, cx, cy - 35, 70, ink)
        _draw_suit(img, suit, spec.suit_shapes, cx, 100, 40, ink)
        _draw_suit(img, suit, spec.suit_shapes, cx, CARD_H - 100 - 40, 40, ink)
    ys, xs = np.nonzero((tile != np.array(spec.paper, np.uint8)).any(axis=2))
    box = (int(xs.min()) // _SS, int(ys.min()) // _SS,
           -(-int(xs.max()) // _SS), -(-int(ys.max()) // _SS))
    return _finish(img, mask, box)


@lru_cache(maxsize=8)
def draw_cut_face(style: str = "classic") -> CardFace:
    """The cut card of ``style``: plain coloured plastic, no index."""
    spec = _SPECS[style]
    img, mask = _blank_face(spec, spec.cut_colour)
    face = draw_card_face("AS", style)  # same card size: keep the same index box
    return _finish(img, mask, face.index_box)


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


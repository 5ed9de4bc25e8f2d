"""Card decks drawn by other people: the SVG decks of Debian's ``gnome-cards-data``.

Every design of :mod:`shoe_controller.sim.render` was drawn by this team, and the reader
read them far better than designs nobody here drew (issue 12). This module gives the
virtual table an honest corpus: the card decks of GNOME Aisleriot (package
``gnome-cards-data``, GPL-3+, installed to ``/usr/share/aisleriot/cards/*.svgz``),
drawn by their own authors for their own purposes.

A deck is used like any design of the renderer under the name ``ext:<deck>``
(``ext:anglo``): :func:`card_face` and :func:`cut_face` give the same
:class:`~shoe_controller.sim.render.CardFace` objects the renderer draws, so
``render.sample_pose``, ``compose_frame``, ``degrade``, ``render_frame`` (and the
calibration and evaluation sets, the card passes, ``bench/vision.py``) place and degrade
them exactly like the team's own designs.

How a face is made (documented choices):

- **Rendering**: ``rsvg-convert`` (librsvg, Debian package ``librsvg2-bin``) renders the
  whole deck sheet once, 450 px per card row. Aisleriot's sheets are a grid of 13
  columns (A, 2-10, J, Q, K) by 5 rows (clubs, diamonds, hearts, spades, then jokers
  and the back); the card is the largest opaque shape of its cell (cards with holes are
  filled: a card is one piece of stock). A cell with no card-shaped shape makes the
  deck unusable, with that reason.
- **Scale**: the card keeps its own proportions (most decks are bridge-narrow, 0.60-0.74
  wide per high) and is scaled to the renderer's card height (392 px at the calibrated
  scale; a deck wider than the renderer's 280:392 is fitted to its width), centred in
  the renderer's 280 x 392 face; outside the card the mask is 0.
- **Index box**: found on the card image itself: the ink (any channel more than 60 grey
  levels from the card's paper, the median colour of its number cards) in the top-left
  corner region (left 32 %, top 50 % of the card), the card's printed outline taken
  off; ink shapes that reach the region's right or bottom edge (court art, pips, a
  printed frame), touch the card's edge or start below 40 % of its height are not
  the index. The index is the
  top-most shape of the region's left half (the rank) and every shape under it whose
  column overlaps it (the suit). Each card's box is then joined with the deck's
  typical box (the median box of its number cards 2-9), and a card whose own box is
  missing or far from the typical one (a suit joined to court art) takes the typical
  box: the index sits in the same place on every card of a deck.
- **Cut card**: these decks have none. Each deck gets a plain card of its own shape
  (the mask of its ace of clubs) in one of six plastic colours, :data:`CUT_COLOURS`,
  assigned in the order of :data:`DECKS`.
- **Cache**: the 52 faces and the cut card of a deck are written to one ``.npz`` per
  deck under ``$SHOE_DECK_CACHE`` (default ``~/.cache/shoe-controller/decks``), keyed
  by the SVG file's SHA-256 and :data:`LOADER_VERSION`, so tests and benches render a
  deck once per machine, not per run.

The split (fixed before anything was measured on these decks): :data:`DEVELOPMENT`
decks may be looked at and tuned on; :data:`VALIDATION` decks are never tuned on and
their figures are reported apart (docs/vision.md). Whole families of decks (same
author or the same drawing with another colouring) sit on one side, so a validation
deck is never a recoloured development deck.

>>> "anglo" in DEVELOPMENT and "plastic" in VALIDATION
True
>>> deck_of("ext:anglo")
'anglo'
>>> is_external("classic"), is_external("ext:anglo")
(False, True)
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import cv2
import numpy as np

from shoe_controller.sim.render import CARD_CODES, CARD_H, CARD_W, CardFace

__all__ = [
    "CUT_COLOURS",
    "DECKS",
    "DECK_DIR",
    "DEVELOPMENT",
    "EXCLUDED",
    "FAMILIES",
    "LOADER_VERSION",
    "PREFIX",
    "VALIDATION",
    "DeckUnusable",
    "ExternalDeck",
    "card_face",
    "cut_face",
    "deck_of",
    "deck_problem",
    "designs",
    "is_external",
    "load_deck",
    "plain_face",
    "usable_decks",
]

#: Where ``gnome-cards-data`` installs its decks (``$SHOE_CARD_DECKS`` overrides).
DECK_DIR = Path(os.environ.get("SHOE_CARD_DECKS", "/usr/share/aisleriot/cards"))
#: The design name prefix: ``ext:anglo`` is the deck ``anglo``.
PREFIX = "ext:"
#: Bump when faces would come out differently (the cache is keyed by it).
LOADER_VERSION = 1
#: Sheet pixels per card row when rendering (the face is then shrunk to ~392 px).
_ROW_PX = 450
_PACKAGES = "gnome-cards-data librsvg2-bin"

#: Decks of gnome-cards-data NOT used, and why.
EXCLUDED: dict[str, str] = {
    "swiss-xvii": "Swiss suits (acorns, bells, roses, shields) and German-style ranks: "
                  "not a French-suited deck",
    "anglo_bitmap": "the anglo drawing embedded as a bitmap: a duplicate of anglo",
    "gnomangelo_bitmap": "the gnomangelo drawing embedded as a bitmap: a duplicate of "
                         "gnomangelo",
    "guyenne-classic": "its court cards carry no rank (single-ended full-length figures "
                       "with a suit in the corner): a corner-index reader cannot read them",
    "tango_nuevo": "no corner index: the rank at the top left and the suit at the top "
                   "right, once per card (no turned index at the bottom); DESIGN.md's "
                   "frames show a rank above a suit, either way round",
}

#: Families: decks by the same hand or the same drawing recoloured (file geometry and
#: drawing alike); a family is never split between development and validation.
FAMILIES: dict[str, tuple[str, ...]] = {
    "anglo": ("anglo", "gnomangelo"),
    "anglo_modern": ("anglo_modern", "anglo_modern_4_color"),
    "tango": ("tango",),  # tango_nuevo (same hand) is excluded
    "ornamental": ("ornamental",),
    # the same Paris-pattern court drawings (bellot, ancient_french, paris) and the same
    # sheet geometry and jokers (paris, dondorf; guyenne-classic is excluded)
    "paris-pattern": ("bellot", "ancient_french", "paris", "dondorf"),
    "svg-cards": ("anglo_poker", "simplistic"),
    "atlasnye": ("atlasnye", "atlasnye_skat", "atlasnye_ru"),
    "german-patterns": ("berlin", "lattmann", "rheinland", "orell", "tarocco"),
    "neoclassical": ("neoclassical", "neoclassical_4_color"),
    "plastic": ("plastic",),
    "slavic_costumes": ("slavic_costumes",),
    "tigullio": ("tigullio",),
}

#: Development decks (10 of 25, five families): "vision" may look at their figures and
#: pictures and tune on them. Chosen by hand before any measurement, to hold one of
#: each kind the validation set also holds: a 2-colour classic (anglo, gnomangelo), a
#: 4-colour deck (anglo_modern_4_color), jumbo indices on grey stock (tango),
#: cream stock with a printed frame (ornamental), ornate courts close to the index
#: (bellot, paris, dondorf) and non-English indices (ancient_french: 1, V, D, R).
DEVELOPMENT: tuple[str, ...] = (
    "anglo", "gnomangelo", "anglo_modern", "anglo_modern_4_color", "tango", "ornamental",
    "bellot", "ancient_french", "paris", "dondorf",
)
#: Validation decks (15 of 25): never tuned on; their figures are reported apart.
VALIDATION: tuple[str, ...] = (
    "anglo_poker", "simplistic", "atlasnye", "atlasnye_skat", "atlasnye_ru", "berlin",
    "lattmann", "rheinland", "orell", "tarocco", "neoclassical", "neoclassical_4_color",
    "plastic", "slavic_costumes", "tigullio",
)
#: Every usable deck: development first.
DECKS: tuple[str, ...] = (*DEVELOPMENT, *VALIDATION)

#: File names that are not the deck name (a Cyrillic file name).
_FILES = {"atlasnye_ru": "Атласные"}

#: Plastic colours for the cut cards (BGR), assigned round-robin in the order of DECKS.
_CUT_PALETTE: tuple[tuple[int, int, int], ...] = (
    (30, 200, 240),   # yellow
    (40, 40, 200),    # red
    (170, 90, 30),    # blue
    (60, 170, 50),    # green
    (20, 130, 245),   # orange
    (150, 50, 140),   # purple
)
#: The cut card colour of each deck (BGR).
CUT_COLOURS: dict[str, tuple[int, int, int]] = {
    d: _CUT_PALETTE[i % len(_CUT_PALETTE)] for i, d in enumerate(DECKS)
}

_SUIT_ROWS = "CDHS"  # the sheet's rows
_RANK_COLS = "A23456789TJQK"  # the sheet's columns


class DeckUnusable(RuntimeError):
    """A deck cannot be loaded: the message says which deck and why."""


@dataclass(frozen=True)
class ExternalDeck:
    """A loaded deck: its 52 faces by card code, its cut card and its paper colour."""

    name: str
    faces: dict[str, CardFace]
    cut: CardFace
    paper: tuple[int, int, int]
    #: how many cards took the deck's typical index box (their own was not found clean)
    typical_boxes: int = 0


def is_external(style: str) -> bool:
    """Whether a design name names an external deck (``ext:<deck>``)."""
    return style.startswith(PREFIX)


def deck_of(style: str) -> str:
    """The deck name of a design name: ``ext:anglo`` -> ``anglo`` (a bare deck name is
    accepted too). Raises ValueError for a deck that is not in :data:`DECKS`.

    >>> deck_of("anglo")
    'anglo'
    >>> deck_of("ext:swiss-xvii")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: external deck 'swiss-xvii' is not used: Swiss suits ...
    """
    name = style[len(PREFIX):] if is_external(style) else style
    if name in EXCLUDED:
        raise ValueError(f"external deck {name!r} is not used: {EXCLUDED[name]}")
    if name not in DECKS:
        raise ValueError(f"unknown external deck {name!r}; one of {', '.join(DECKS)}")
    return name


def designs(group: str = "all") -> tuple[str, ...]:
    """Design names (``ext:<deck>``) of ``development``, ``validation`` or ``all`` decks.

    >>> designs("development")[:2]
    ('ext:anglo', 'ext:gnomangelo')
    """
    decks = {"development": DEVELOPMENT, "validation": VALIDATION, "all": DECKS}[group]
    return tuple(PREFIX + d for d in decks)


def _svg_path(deck: str) -> Path:
    return DECK_DIR / f"{_FILES.get(deck, deck)}.svgz"


def deck_problem(deck: str) -> str | None:
    """Why ``deck`` cannot be loaded here (no package, no renderer, a bad sheet), or
    None when it can. Loads (and caches) the deck to find out."""
    try:
        load_deck(deck_of(deck))
    except (DeckUnusable, ValueError) as e:
        return str(e)
    return None


def usable_decks(group: str = "all") -> tuple[str, ...]:
    """The decks of ``group`` that load here (each rendered once and cached)."""
    decks = {"development": DEVELOPMENT, "validation": VALIDATION, "all": DECKS}[group]
    return tuple(d for d in decks if deck_problem(d) is None)


def _cache_dir() -> Path:
    root = os.environ.get("SHOE_DECK_CACHE")
    if root:
        return Path(root)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "shoe-controller" / "decks"


def _render_sheet(svg: Path, deck: str) -> np.ndarray:
    """The whole sheet as BGRA, 5 card rows of :data:`_ROW_PX` px."""
    exe = shutil.which("rsvg-convert")
    if exe is None:
        raise DeckUnusable(f"deck {deck}: rsvg-convert not found; install {_PACKAGES}")
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "sheet.png"
        run = subprocess.run([exe, "-h", str(5 * _ROW_PX), "-a", str(svg), "-o", str(out)],
                             capture_output=True, text=True, timeout=300)
        if run.returncode != 0 or not out.exists():
            raise DeckUnusable(f"deck {deck}: rsvg-convert failed on {svg}: "
                               f"{run.stderr.strip()[:200]}")
        sheet = cv2.imread(str(out), cv2.IMREAD_UNCHANGED)
    if sheet is None or sheet.ndim != 3 or sheet.shape[2] != 4:
        raise DeckUnusable(f"deck {deck}: {svg} did not render to an RGBA image")
    return sheet


def _cut_cell(sheet: np.ndarray, row: int, col: int, deck: str, code: str
              ) -> tuple[np.ndarray, np.ndarray]:
    """The card of one grid cell: (BGR on white where the card is not opaque, mask)."""
    h, w = sheet.shape[:2]
    x0, x1 = round(col * w / 13), round((col + 1) * w / 13)
    y0, y1 = round(row * h / 5), round((row + 1) * h / 5)
    cell = sheet[y0:y1, x0:x1]
    alpha = cell[:, :, 3]
    n, lab, st, _c = cv2.connectedComponentsWithStats((alpha > 128).astype(np.uint8),
                                                      connectivity=4)
    if n < 2:
        raise DeckUnusable(f"deck {deck}: card {code}: its cell of the sheet is empty")
    i = 1 + int(np.argmax(st[1:, cv2.CC_STAT_AREA]))
    contours, _h = cv2.findContours((lab == i).astype(np.uint8), cv2.RETR_EXTERNAL,
                                    cv2.CHAIN_APPROX_NONE)
    outline = max(contours, key=cv2.contourArea)
    bx, by, bw, bh = cv2.boundingRect(outline)
    fill = cv2.contourArea(outline) / float(bw * bh)
    aspect = bw / float(bh)
    cover = bw * bh / float(cell.shape[0] * cell.shape[1])
    if fill < 0.93 or not 0.5 <= aspect <= 0.8 or cover < 0.6:
        raise DeckUnusable(
            f"deck {deck}: card {code}: no card-shaped shape in its cell of the 13x5 sheet "
            f"(fill {fill:.2f}, width/height {aspect:.2f}, cell cover {cover:.2f})")
    inside = np.zeros(alpha.shape, np.uint8)
    cv2.drawContours(inside, [outline], -1, 255, -1)
    edge = cv2.dilate(inside, np.ones((3, 3), np.uint8))
    mask = np.where(inside > 0, 255, np.where(edge > 0, alpha, 0)).astype(np.uint8)
    a = alpha.astype(np.float32)[..., None] / 255
    bgr = cell[:, :, :3].astype(np.float32) * a + 255 * (1 - a)  # holes: white stock
    sl = (slice(by, by + bh), slice(bx, bx + bw))
    return bgr[sl].astype(np.uint8), mask[sl]


def _to_face_size(bgr: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Scale a card to the renderer's card height (or width, when wider) and centre it
    in a CARD_W x CARD_H face."""
    h, w = mask.shape
    s = min(CARD_W / w, CARD_H / h)
    nw, nh = min(CARD_W, round(w * s)), min(CARD_H, round(h * s))
    small = cv2.resize(bgr, (nw, nh), interpolation=cv2.INTER_AREA)
    small_mask = cv2.resize(mask, (nw, nh), interpolation=cv2.INTER_AREA)
    img = np.zeros((CARD_H, CARD_W, 3), np.uint8)
    m = np.zeros((CARD_H, CARD_W), np.uint8)
    ox, oy = (CARD_W - nw) // 2, (CARD_H - nh) // 2
    img[oy:oy + nh, ox:ox + nw] = small
    m[oy:oy + nh, ox:ox + nw] = small_mask
    return img, m


def _outline_px(image: np.ndarray, mask: np.ndarray, paper: tuple[int, int, int]) -> int:
    """How many px of printed outline run in from the card's left and top edges (the
    median over the middle fifth of each edge; 0 for a card with no outline)."""
    ink = np.abs(image.astype(np.int16) - np.array(paper, np.int16)).max(axis=2) > 60
    on = mask > 128
    h, w = mask.shape
    runs = []
    for line_ink, line_on in [*((ink[y], on[y]) for y in range(2 * h // 5, 3 * h // 5)),
                              *((ink[:, x], on[:, x]) for x in range(2 * w // 5, 3 * w // 5))]:
        idx = np.flatnonzero(line_on)
        if len(idx) == 0:
            continue
        run = 0
        for v in line_ink[idx[0]:idx[0] + 12]:
            if not v:
                break
            run += 1
        runs.append(run)
    return int(np.median(runs)) if runs else 0


def index_box(image: np.ndarray, mask: np.ndarray, paper: tuple[int, int, int]
              ) -> tuple[int, int, int, int] | None:
    """The box ``(x0, y0, x1, y1)`` (x1, y1 exclusive) of the top-left index's ink, found
    on the card image (see the module's "Index box"), or None when the corner holds no
    ink that can be the index."""
    ys, xs = np.nonzero(mask > 128)
    cx0, cy0, cx1, cy1 = int(xs.min()), int(ys.min()), int(xs.max()) + 1, int(ys.max()) + 1
    rw, rh = round(0.32 * (cx1 - cx0)), round(0.50 * (cy1 - cy0))
    region = image[cy0:cy0 + rh, cx0:cx0 + rw].astype(np.int16)
    ink = (np.abs(region - np.array(paper, np.int16)).max(axis=2) > 60)
    band = 2 * (_outline_px(image, mask, paper) + 2) + 1  # the outline and 2 px more
    inner = cv2.erode(mask, np.ones((band, band), np.uint8))[cy0:cy0 + rh, cx0:cx0 + rw] > 128
    ink &= inner
    n, lab, st, _c = cv2.connectedComponentsWithStats(ink.astype(np.uint8), connectivity=8)
    touch_edge = cv2.dilate((~inner).astype(np.uint8), np.ones((3, 3), np.uint8)) > 0
    parts = []
    for i in range(1, n):
        x, y, w, h, area = (int(v) for v in st[i])
        if area < 8 or x + w >= rw - 1 or y + h >= rh - 1 or y > 0.4 * (cy1 - cy0):
            continue
        if (touch_edge & (lab == i)).any():
            continue
        parts.append((x, y, x + w, y + h))
    if not parts:
        return None
    # the rank: the top-most part among those starting in the left half of the region
    left = [p for p in parts if p[0] < rw / 2] or parts
    top = min(left, key=lambda p: (p[1], p[0]))
    box = list(top)
    changed = True
    while changed:  # grow down the column: parts overlapping the box's columns below it
        changed = False
        for p in parts:
            near = p[1] <= box[3] + 0.5 * (box[3] - box[1]) + 4
            grows = p[0] < box[0] or p[2] > box[2] or p[3] > box[3]
            if p[0] < box[2] and p[2] > box[0] and p[1] >= box[1] and near and grows:
                box = [min(box[0], p[0]), box[1], max(box[2], p[2]), max(box[3], p[3])]
                changed = True
    return (box[0] + cx0, box[1] + cy0, box[2] + cx0, box[3] + cy0)


def _deck_boxes(found: list[tuple[int, int, int, int] | None], deck: str
                ) -> tuple[list[tuple[int, int, int, int]], int]:
    """Each card's index box: the union of its own box and the deck's typical one (the
    median box of its number cards 2-9, whose corners hold nothing but the index), or
    the typical one alone when its own box is missing or far from it (court art or a
    pip joined to the index). Returns the boxes and how many were the typical one."""
    number = [b for c, b in zip(CARD_CODES, found, strict=True) if c[0] in "23456789" and b]
    if len(number) < 16:
        raise DeckUnusable(f"deck {deck}: the index was found on only {len(number)} of 32 "
                           "number cards 2-9; its corners do not hold a rank above a suit")
    typ = tuple(int(v) for v in np.median(np.array(number), axis=0))
    tw, th = typ[2] - typ[0], typ[3] - typ[1]
    out, fallback = [], 0
    for b in found:
        if b is None or abs(b[0] - typ[0]) > 0.4 * tw or abs(b[1] - typ[1]) > 0.3 * th or (
                b[2] - b[0] > 1.8 * tw) or b[3] - b[1] > 1.4 * th:
            out.append(typ)
            fallback += 1
        else:
            out.append((min(b[0], typ[0]), min(b[1], typ[1]), max(b[2], typ[2]),
                        max(b[3], typ[3])))
    return out, fallback  # type: ignore[return-value]


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16]


def _build(deck: str, svg: Path) -> dict[str, np.ndarray]:
    sheet = _render_sheet(svg, deck)
    imgs, masks = [], []
    for code in CARD_CODES:
        bgr, m = _cut_cell(sheet, _SUIT_ROWS.index(code[1]), _RANK_COLS.index(code[0]),
                           deck, code)
        img, mask = _to_face_size(bgr, m)
        imgs.append(img)
        masks.append(mask)
    number = [i for i, c in enumerate(CARD_CODES) if c[0] in "23456"]
    pix = np.concatenate([imgs[i][masks[i] > 250] for i in number])
    paper = tuple(int(v) for v in np.median(pix, axis=0))
    found = [index_box(img, mask, paper)  # type: ignore[arg-type]
             for img, mask in zip(imgs, masks, strict=True)]
    boxes, fallback = _deck_boxes(found, deck)
    return {"images": np.stack(imgs), "masks": np.stack(masks),
            "boxes": np.array(boxes, np.int32), "paper": np.array(paper, np.int32),
            "typical_boxes": np.array(fallback, np.int32)}


@lru_cache(maxsize=32)
def load_deck(deck: str) -> ExternalDeck:
    """Load ``deck`` (a name of :data:`DECKS`): render it once, then from the cache.

    Raises :class:`DeckUnusable` when the package or the renderer is missing or the
    sheet is not a 13x5 grid of cards, saying which deck and why.
    """
    deck = deck_of(deck)
    svg = _svg_path(deck)
    if not svg.is_file():
        raise DeckUnusable(f"deck {deck}: {svg} not found; install {_PACKAGES}")
    cache = _cache_dir() / f"{deck}-v{LOADER_VERSION}-{_sha(svg)}.npz"
    data: dict[str, np.ndarray] | None = None
    if cache.is_file():
        try:
            with np.load(cache) as z:
                data = {k: z[k] for k in ("images", "masks", "boxes", "paper", "typical_boxes")}
        except (OSError, ValueError, KeyError):
            data = None  # a damaged cache file: render again
    if data is None:
        data = _build(deck, svg)
        cache.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=cache.parent, suffix=".npz.tmp")
        os.close(fd)
        with open(tmp, "wb") as f:
            np.savez_compressed(f, **data)
        os.replace(tmp, cache)  # atomic: parallel loaders never see half a file
    faces = {}
    for i, code in enumerate(CARD_CODES):
        img, mask = data["images"][i].copy(), data["masks"][i].copy()
        img.setflags(write=False)
        mask.setflags(write=False)
        faces[code] = CardFace(img, mask, tuple(int(v) for v in data["boxes"][i]))  # type: ignore[arg-type]
    ace = faces["AC"]
    cut_img = np.zeros_like(ace.image)
    cut_img[:] = CUT_COLOURS[deck]
    cut_img.setflags(write=False)
    cut = CardFace(cut_img, ace.mask, ace.index_box)
    paper = tuple(int(v) for v in data["paper"])
    return ExternalDeck(deck, faces, cut, paper,  # type: ignore[arg-type]
                        int(data["typical_boxes"]))


def card_face(code: str, style: str) -> CardFace:
    """The face of card ``code`` (``TS``) in the external deck ``style`` (``ext:anglo``)."""
    return load_deck(deck_of(style)).faces[code]


def cut_face(style: str) -> CardFace:
    """The cut card of the external deck ``style``: its card shape in its plastic colour."""
    return load_deck(deck_of(style)).cut


def plain_face(colour: tuple[int, int, int], style: str) -> CardFace:
    """A plain card of ``colour`` (BGR) in the shape of the external deck ``style``'s
    cards (its cut card is one; a plain card of another colour is not)."""
    cut = load_deck(deck_of(style)).cut
    img = np.zeros_like(cut.image)
    img[:] = colour
    img.setflags(write=False)
    return CardFace(img, cut.mask, cut.index_box)

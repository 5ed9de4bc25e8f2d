"""The external deck loader (sim/external_decks.py) on every usable deck of
gnome-cards-data: 52 distinct faces in the right places, a cut card, index boxes on the
index's ink; and the split's rules.

The references are independent of the loader: hearts and diamonds are printed in red
and spades and clubs are not (a 2-colour deck's rows are its suits), a number card
carries as many pips as its rank (so its pip ink grows from 2 to 10: the columns are
the ranks, in order), and the ink is measured here with its own simple rule.
"""

from __future__ import annotations

import itertools
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import cv2
import numpy as np
import pytest

from shoe_controller.sim import external_decks as ed
from shoe_controller.sim import render

#: 4-colour decks (the rest print hearts and diamonds red, spades and clubs black).
FOUR_COLOUR = {"anglo_modern_4_color", "atlasnye_skat", "neoclassical_4_color"}


@pytest.fixture(scope="module")
def decks() -> dict[str, ed.ExternalDeck]:
    """Every usable deck, loaded two at a time (each rendered once per machine, then
    read from the cache)."""
    if not ed.DECK_DIR.is_dir():
        pytest.fail(f"{ed.DECK_DIR} is missing: apt-get install gnome-cards-data "
                    "librsvg2-bin (.ci/run installs them)")
    with ThreadPoolExecutor(2) as pool:
        return dict(zip(ed.DECKS, pool.map(ed.load_deck, ed.DECKS), strict=True))


def _ink(face: render.CardFace, paper: tuple[int, int, int]) -> np.ndarray:
    """This test's own ink rule: a card pixel more than 80 levels from the paper in the
    sum of its channels."""
    diff = np.abs(face.image.astype(np.int32) - np.array(paper)).sum(axis=2)
    return (diff > 80) & (face.mask == 255)


def test_split_is_fixed_and_keeps_families_together() -> None:
    dev, val = set(ed.DEVELOPMENT), set(ed.VALIDATION)
    assert not dev & val
    assert dev | val == set(ed.DECKS)
    assert not set(ed.EXCLUDED) & set(ed.DECKS)
    for family, members in ed.FAMILIES.items():
        sides = {"dev" if m in dev else "val" for m in members}
        assert len(sides) == 1, f"family {family} is split: {members}"
    assert sorted(m for ms in ed.FAMILIES.values() for m in ms) == sorted(ed.DECKS)
    # about a third for development, the rest for validation
    assert 0.25 <= len(dev) / len(ed.DECKS) <= 0.45


def test_every_deck_of_the_package_is_used_or_excluded_with_a_reason() -> None:
    files = {p.name.removesuffix(".svgz") for p in ed.DECK_DIR.glob("*.svgz")}
    named = {ed._FILES.get(d, d) for d in ed.DECKS} | set(ed.EXCLUDED)
    assert files == named, f"not accounted for: {sorted(files ^ named)}"
    for name, why in ed.EXCLUDED.items():
        with pytest.raises(ValueError, match=f"{name}.*not used"):
            ed.deck_of(f"ext:{name}")
        assert len(why) > 20


def test_unknown_deck_is_refused_with_the_list() -> None:
    with pytest.raises(ValueError, match="unknown external deck 'nope'; one of anglo"):
        ed.load_deck("nope")


@pytest.mark.parametrize("deck", ed.DECKS)
def test_52_distinct_faces_and_a_cut_card(decks: dict[str, ed.ExternalDeck],
                                          deck: str) -> None:
    d = decks[deck]
    assert sorted(d.faces) == sorted(render.CARD_CODES)
    faces = [d.faces[c] for c in render.CARD_CODES]
    for f in faces:
        assert f.image.shape == (render.CARD_H, render.CARD_W, 3)
        assert f.mask.shape == (render.CARD_H, render.CARD_W)
        # the card fills the renderer's card height (or width) and is centred
        ys, xs = np.nonzero(f.mask > 128)
        h, w = ys.max() - ys.min() + 1, xs.max() - xs.min() + 1
        assert h >= render.CARD_H - 3 or w >= render.CARD_W - 3
        assert abs((xs.min() + xs.max()) / 2 - (render.CARD_W - 1) / 2) <= 1.5
        assert abs((ys.min() + ys.max()) / 2 - (render.CARD_H - 1) / 2) <= 1.5
    # distinct: every two faces differ clearly somewhere (compared at a quarter size)
    small = [cv2.resize(f.image, (70, 98), interpolation=cv2.INTER_AREA) for f in faces]
    for i, a in enumerate(small):
        for j in range(i + 1, len(small)):
            changed = cv2.countNonZero((cv2.absdiff(a, small[j]).max(axis=2) > 60)
                                       .astype(np.uint8))
            assert changed > 5, (f"{render.CARD_CODES[i]} looks like "
                                 f"{render.CARD_CODES[j]}")
    # the cut card: one plain colour in the deck's card shape, far from the paper
    cut = d.cut
    on = cut.mask == 255
    pixels = cut.image[on]
    assert (pixels.min(axis=0) == pixels.max(axis=0)).all()  # one colour
    colour = pixels[0].astype(int)
    assert tuple(int(v) for v in colour) == ed.CUT_COLOURS[deck]
    assert np.abs(colour - np.array(d.paper)).sum() > 150
    assert np.array_equal(cut.mask, d.faces["AC"].mask)
    # render's own entry points give the same objects for the design name
    assert render.draw_card_face("QH", f"ext:{deck}") is d.faces["QH"]
    assert render.draw_cut_face(f"ext:{deck}") is cut


@pytest.mark.parametrize("deck", ed.DECKS)
def test_index_boxes_are_inside_the_card_on_its_ink(decks: dict[str, ed.ExternalDeck],
                                                    deck: str) -> None:
    d = decks[deck]
    for code, f in d.faces.items():
        x0, y0, x1, y1 = f.index_box
        assert 0 <= x0 < x1 <= render.CARD_W and 0 <= y0 < y1 <= render.CARD_H, code
        # inside the card: the box's corners are on the card, in its top-left quarter
        for x, y in ((x0, y0), (x1 - 1, y0), (x0, y1 - 1), (x1 - 1, y1 - 1)):
            assert f.mask[y, x] == 255, f"{deck} {code}: index box corner off the card"
        assert x1 <= render.CARD_W * 0.5 and y1 <= render.CARD_H * 0.5, code
        # a rank above a suit is taller than wide and not a speck
        assert y1 - y0 > x1 - x0 and y1 - y0 >= 30, f"{deck} {code}: box {f.index_box}"
        ink = _ink(f, d.paper)[y0:y1, x0:x1]
        assert ink.mean() > 0.08, f"{deck} {code}: little ink in {f.index_box}"
        # the ink reaches the box's top and bottom rows' neighbourhood (the box is the
        # index's extent, not a box around part of it)
        rows = np.flatnonzero(ink.any(axis=1))
        assert rows[0] <= 3 and rows[-1] >= ink.shape[0] - 4, f"{deck} {code}"


@pytest.mark.parametrize("deck", ed.DECKS)
def test_rows_are_the_suits_and_columns_the_ranks(decks: dict[str, ed.ExternalDeck],
                                                  deck: str) -> None:
    d = decks[deck]
    index_colour = {}
    for suit in "SHDC":
        pips = []
        for rank in "23456789T":
            f = d.faces[rank + suit]
            ink = _ink(f, d.paper)
            x0, y0, x1, y1 = f.index_box
            keep = np.ones_like(ink)
            h, w = ink.shape
            for a, b, c, e in ((x0, y0, x1, y1), (w - x1, y0, w - x0, y1),
                               (x0, h - y1, x1, h - y0), (w - x1, h - y1, w - x0, h - y0)):
                keep[max(0, b - 3):e + 3, max(0, a - 3):c + 3] = False
            pips.append(int((ink & keep).sum()))
        assert all(b > a for a, b in itertools.pairwise(pips)), (
            f"{deck} {suit}: pip ink 2..10 {pips} does not grow with the rank")
        f = d.faces["2" + suit]
        x0, y0, x1, y1 = f.index_box
        px = f.image[y0:y1, x0:x1][_ink(f, d.paper)[y0:y1, x0:x1]].astype(int)
        index_colour[suit] = px.mean(axis=0)  # BGR
    if deck in FOUR_COLOUR:
        for a in "SHDC":
            for b in "SHDC":
                if a < b:
                    gap = np.abs(index_colour[a] - index_colour[b]).sum()
                    assert gap > 60, f"{deck}: {a} and {b} printed alike"
    else:
        for suit, (b, g, r) in index_colour.items():
            redness = r - max(b, g)
            if suit in "HD":
                assert redness > 60, f"{deck} {suit} not red: {index_colour[suit]}"
            else:
                assert redness < 30, f"{deck} {suit} red: {index_colour[suit]}"


def test_cache_is_reused_and_a_damaged_file_rendered_again(tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch
                                                           ) -> None:
    monkeypatch.setenv("SHOE_DECK_CACHE", str(tmp_path))
    ed.load_deck.cache_clear()
    try:
        first = ed.load_deck("simplistic")
        files = list(tmp_path.glob("simplistic-v*.npz"))
        assert len(files) == 1
        stamp = files[0].stat().st_mtime_ns
        ed.load_deck.cache_clear()
        again = ed.load_deck("simplistic")
        assert files[0].stat().st_mtime_ns == stamp  # read, not written again
        assert np.array_equal(again.faces["KD"].image, first.faces["KD"].image)
        files[0].write_bytes(b"not an npz")
        ed.load_deck.cache_clear()
        third = ed.load_deck("simplistic")
        assert np.array_equal(third.faces["KD"].image, first.faces["KD"].image)
    finally:
        ed.load_deck.cache_clear()


def test_a_frame_of_an_external_deck_goes_through_the_pipeline() -> None:
    frame, truth = render.render_frame("TS", "ext:anglo", render.FULL, seed=5)
    assert frame.shape == (render.FRAME_H, render.FRAME_W, 3)
    assert truth.label == "TS" and truth.orientation in ("up", "down")
    again, _ = render.render_frame("TS", "ext:anglo", render.FULL, seed=5)
    assert np.array_equal(frame, again)
    cut, t = render.render_frame("CUT", "ext:anglo", render.GUIDED, seed=5)
    assert t.label == "CUT" and t.orientation is None
    assert ed.CUT_COLOURS["anglo"] == (30, 200, 240)  # yellow (BGR)
    b, g, r = (cut[:, :, i].astype(int) for i in range(3))
    assert ((r + g) / 2 - b > 60).mean() > 0.1  # the plain yellow card is in the frame
    # a plain card of another colour (not the cut card) in the deck's card shape
    grey = render.draw_plain_face((128, 128, 128), "ext:anglo")
    assert np.array_equal(grey.mask, ed.load_deck("anglo").cut.mask)
    assert (grey.image[grey.mask == 255] == 128).all()

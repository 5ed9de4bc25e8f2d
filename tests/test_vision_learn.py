"""Learning a deck whatever its cut card and decoration look like: a charcoal cut card
hardly lighter than the shoe interior, art next to the index on some cards only,
plump spades and clubs much alike. Each on a development design of
``sim/render.py`` that has the property (the validation designs are never tested on)."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from shoe_controller.game.cards import parse_card
from shoe_controller.sim import render
from shoe_controller.sim.render import CALIBRATION, FULL, GUIDED, Pose
from shoe_controller.vision.index_learn import LearnError, learn_profile
from shoe_controller.vision.index_reader import UNKNOWN_PLAIN, IndexReader


def _calibration_frames(style: str, faces: dict[str, render.CardFace] | None = None
                        ) -> dict[str, np.ndarray]:
    """The calibration set of ``style``; ``faces`` replaces some cards' faces."""
    frames = {}
    for i, label in enumerate((*render.CARD_CODES, "CUT")):
        if faces and label in faces:
            frames[label] = _composed(faces[label], Pose(), seed=i, deg=CALIBRATION)
        else:
            frames[label] = render.render_frame(label, style, CALIBRATION, seed=i,
                                                pose=Pose())[0]
    return frames


def _composed(face: render.CardFace, pose: Pose, seed: int, deg: render.Degradation = FULL
              ) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return render.degrade(render.compose_frame(face, pose, render.empty_background(rng)),
                          deg, rng)


def _verdict(read: object) -> str:
    kind = read.kind  # type: ignore[attr-defined]
    if kind == "card":
        return read.card.code  # type: ignore[attr-defined]
    return {"cut": "CUT", "empty": "NONE"}.get(kind, "REJECT")


# --------------------------------------------------------------------------- cut card


@pytest.fixture(scope="module")
def dark_cut_reader() -> IndexReader:
    return IndexReader(learn_profile(_calibration_frames("bookman-dark-cut")))


def test_a_dark_cut_card_is_learned_and_seen(dark_cut_reader: IndexReader) -> None:
    """A charcoal cut card (BGR 62, 56, 50 on a shoe interior of 12-40 grey levels) is a
    card-sized region lighter than the interior: learned as the cut card, read as the
    cut card across the full range, while an empty window stays empty."""
    cut = render.design("bookman-dark-cut").cut_colour
    assert max(cut) < 80  # darker than any card face: the property under test
    for seed in range(8):
        frame, _ = render.render_frame("CUT", "bookman-dark-cut", FULL, seed=seed)
        assert dark_cut_reader.read(frame).kind == "cut", seed
        empty, _ = render.render_frame("NONE", "bookman-dark-cut", FULL, seed=seed)
        assert dark_cut_reader.read(empty).kind == "empty", seed
    frame, _ = render.render_frame("7C", "bookman-dark-cut", GUIDED, seed=3)
    assert dark_cut_reader.read(frame).card is parse_card("7C")


def test_a_dark_plain_card_of_another_colour_is_a_fault(dark_cut_reader: IndexReader) -> None:
    """A dark plain card that is not the learned cut card (dark green): an unknown plain
    card, neither the cut card nor nothing."""
    face = render.draw_plain_face((40, 90, 30), "bookman-dark-cut")
    for seed in range(4):
        pose = Pose((300.0 + 20 * seed, 200.0), seed % 2 == 1, 5.0 * seed, 1.0)
        read = dark_cut_reader.read(_composed(face, pose, seed))
        assert read.kind == "reject" and read.reason.startswith(UNKNOWN_PLAIN), read


def test_learning_without_a_cut_card_in_view_says_so() -> None:
    frames = _calibration_frames("bookman-dark-cut")
    frames["CUT"] = render.render_frame("NONE", "bookman-dark-cut", CALIBRATION, seed=2)[0]
    with pytest.raises(LearnError, match="CUT: no card in the frame"):
        learn_profile(frames)


# --------------------------------------------------------------------------- art


def _with_art(code: str, style: str, dx: float, dy: float, colour: tuple[int, int, int]
              ) -> render.CardFace:
    """``code``'s face with a blob of art printed beside its top-left index: ``dx`` px
    right of the index's right edge, ``dy`` (share of the index height) down from its
    top; so it is below the rank, next to the suit and starts above it."""
    face = render.draw_card_face(code, style)
    img = face.image.copy()
    _x0, y0, x1, y1 = face.index_box
    centre = (round(x1 + dx), round(y0 + dy * (y1 - y0)))
    cv2.circle(img, centre, 6, colour, -1, cv2.LINE_AA)
    return render.CardFace(img, face.mask, face.index_box)


def test_art_next_to_the_index_on_some_cards_is_not_the_suit() -> None:
    """Court art next to the index on a few cards only: the index column is the same on
    every card, so those parts are no suit; learning succeeds and the cards read."""
    style = "narrow-large"
    faces = {"JC": _with_art("JC", style, 8, 0.6, (40, 170, 230)),
             "QD": _with_art("QD", style, 8, 0.64, (30, 30, 160)),
             "KS": _with_art("KS", style, 9, 0.58, (20, 20, 20))}
    reader = IndexReader(learn_profile(_calibration_frames(style, faces)))
    for i, (code, face) in enumerate(faces.items()):
        for k in range(3):
            pose = Pose((200.0 + 40 * k, 230.0 + 5 * k), False, 2.0 * k - 2.0, 1.0)
            assert _verdict(reader.read(_composed(face, pose, 10 * i + k, GUIDED))) in (
                code, "REJECT")
        frame = _composed(face, Pose(), i, CALIBRATION)
        assert _verdict(reader.read(frame)) == code


# --------------------------------------------------------------------------- spade / club


@pytest.fixture(scope="module")
def plump_reader() -> IndexReader:
    return IndexReader(learn_profile(_calibration_frames("gothic-jumbo-art-4corner")))


def test_plump_spades_and_clubs_are_told_apart_or_rejected(plump_reader: IndexReader) -> None:
    """Spades and clubs of fat bodies and stubby stems (the club's three lobes against
    the spade's point are nearly all that sets them apart), across the full range:
    right or rejected, never the other suit, and nearly all right."""
    right = 0
    codes = [c for c in render.CARD_CODES if c[1] in "SC"]
    for i, code in enumerate(codes):
        frame, _ = render.render_frame(code, "gothic-jumbo-art-4corner", FULL, seed=40 + i)
        got = _verdict(plump_reader.read(frame))
        assert got in (code, "REJECT"), (code, got)
        right += got == code
    assert right >= len(codes) - 3


# --------------------------------------------------------------------------- joined art


def _with_sword(code: str, style: str, colour: tuple[int, int, int]) -> render.CardFace:
    """``code``'s face with court art joined to its small suit: a sword (a 3 px blade
    with a cross-guard) running from the suit's lowest point down off the card's
    corner area, printed in one piece with the suit (one ink part)."""
    face = render.draw_card_face(code, style)
    img = face.image.copy()
    x0, y0, x1, y1 = face.index_box
    dark = (img[y0:y1, x0:x1].min(axis=2) < 128)
    rows = np.flatnonzero(dark.any(axis=1))
    bottom = y0 + int(rows[-1])
    cx = x0 + round(float(np.flatnonzero(dark[rows[-1]]).mean()))
    cv2.rectangle(img, (cx - 1, bottom - 1), (cx + 1, img.shape[0] - 1), colour, -1)
    cv2.rectangle(img, (cx - 8, bottom + 14), (cx + 8, bottom + 16), colour, -1)
    return render.CardFace(img, face.mask, face.index_box)


def _right_in_four_poses_each(reader: IndexReader, faces: dict[str, render.CardFace], *,
                              x_step: int, y_step: int, seed_step: int,
                              x0: float = 220.0) -> int:
    """Read each face in four guided poses (moved, turned, scaled, both ways up); every
    read must be that card or a rejection, never another card. Returns how many read
    right."""
    right = 0
    for i, (code, face) in enumerate(faces.items()):
        for k in range(4):
            pose = Pose((x0 + x_step * k, 240.0 + y_step * k), k % 2 == 1, 3.0 * k - 4.0,
                        0.9 + 0.07 * k)
            got = _verdict(reader.read(_composed(face, pose, seed_step * i + k, GUIDED)))
            assert got in (code, "REJECT"), (code, k, got)
            right += got == code
    return right


def test_a_suit_joined_to_the_court_art_is_cut_where_the_deck_puts_its_suits() -> None:
    """Three kings whose small suit is one ink part with a sword (bellot's, paris's
    kings): the suit is cut out at the place and size this deck's other cards give it,
    so the deck learns (it was refused: "no suit below it"), and those kings read right
    or are rejected, never as another card."""
    style = "classic"
    faces = {"KH": _with_sword("KH", style, (40, 170, 230)),
             "KS": _with_sword("KS", style, (25, 25, 25)),
             "KC": _with_sword("KC", style, (40, 30, 200))}
    reader = IndexReader(learn_profile(_calibration_frames(style, faces)))
    assert _right_in_four_poses_each(reader, faces, x_step=40, y_step=6, seed_step=20) >= 9


def _with_knob(code: str, style: str, colour: tuple[int, int, int]) -> render.CardFace:
    """``code``'s face with a sceptre whose knob covers the lower right of its small
    suit (as on bellot's KS): a rod 0.6 of the suit's width with a rounded top centred
    on the suit's bottom right corner, slanting down off the card's corner area (no
    straight printed line), one ink part with the suit and with no narrow neck
    anywhere to cut it at."""
    face = render.draw_card_face(code, style)
    img = face.image.copy()
    x0, y0, x1, y1 = face.index_box
    dark = (img[y0:y1, x0:x1].min(axis=2) < 128)
    rows = np.flatnonzero(dark.any(axis=1))
    gaps = np.flatnonzero(np.diff(rows) > 1)
    top = y0 + int(rows[gaps[0] + 1])  # the suit: the glyph under the rank's gap
    bottom = y0 + int(rows[-1])
    cols = np.flatnonzero(dark[top - y0:].any(axis=0))
    left, right = x0 + int(cols[0]), x0 + int(cols[-1])
    r = round(0.3 * (right - left))
    cx, cy = right - r // 2, bottom - round(0.3 * r)
    h = img.shape[0]
    cv2.line(img, (cx, cy), (cx + (h - cy) // 3, h - 1), colour, 2 * r)
    return render.CardFace(img, face.mask, face.index_box)


def test_a_suit_the_court_art_covers_in_part_is_cut_along_the_decks_suit_box() -> None:
    """A king whose small suit a sceptre's gold knob covers in part (bellot's KS): one
    ink part with no neck to cut at, so the suit is cut out along the box where the
    deck's other spades have theirs and learned as that card's own (the deck was
    refused: "no suit below it"). It reads right or is rejected, never as another
    card; the deck's other cards still read; and a club king with the same knob,
    never shown at calibration, is never read as the spade king."""
    style = "classic"
    faces = {"KS": _with_knob("KS", style, (40, 170, 230))}
    profile = learn_profile(_calibration_frames(style, faces))
    assert profile.geometry["box_cut"] == ["KS"]
    reader = IndexReader(profile)
    assert _right_in_four_poses_each(reader, faces, x_step=40, y_step=6, seed_step=20) >= 3
    plain = {code: render.draw_card_face(code, style) for code in ("KH", "QS", "AC", "KD")}
    assert _right_in_four_poses_each(reader, plain, x_step=40, y_step=6, seed_step=20) >= 15
    _right_in_four_poses_each(reader, {"KC": _with_knob("KC", style, (40, 170, 230))},
                              x_step=40, y_step=6, seed_step=20)


# --------------------------------------------------------------------------- frame lines


def _with_frame_line(code: str, style: str) -> render.CardFace:
    """``code``'s face with the frame of a court picture printed against its index (as
    on anglo's queens): a vertical line 2 px right of the index's ink, down the card,
    and the frame's top edge running from the rank's foot across the card; the rank
    touches it, so rank and frame are one ink part."""
    face = render.draw_card_face(code, style)
    img = face.image.copy()
    x0, y0, x1, y1 = face.index_box
    dark = img[y0:y1, x0:x1].min(axis=2) < 128
    cols = np.flatnonzero(dark.any(axis=0))
    # the rank's foot: the lowest row of the top glyph (the first gap of rows)
    rows = np.flatnonzero(dark.any(axis=1))
    gaps = np.flatnonzero(np.diff(rows) > 1)
    foot = y0 + int(rows[gaps[0]] if len(gaps) else rows[len(rows) // 2])
    lx = x0 + int(cols[-1]) + 3
    ink = (30, 30, 30)
    cv2.rectangle(img, (lx, y0 - 6), (lx + 1, img.shape[0] - 1), ink, -1)
    rank_right = x0 + int(np.flatnonzero(dark[: foot - y0 + 1].any(axis=0))[-1])
    cv2.rectangle(img, (rank_right - 2, foot - 1), (img.shape[1] - 1, foot), ink, -1)
    return render.CardFace(img, face.mask, face.index_box)


def test_a_frame_line_joined_to_the_rank_is_taken_out() -> None:
    """Court cards whose picture frame touches the rank (one ink part with it, running
    off the corner crop): the printed lines are taken out before the glyphs are cut,
    so they learn and read right (they were rejected: "no rank-sized ink where the
    index starts"), and never as another card."""
    style = "classic"
    faces = {code: _with_frame_line(code, style) for code in ("QH", "QS", "KD")}
    reader = IndexReader(learn_profile(_calibration_frames(style, faces)))
    assert _right_in_four_poses_each(reader, faces, x_step=30, y_step=8, seed_step=30,
                                     x0=230.0) >= 9

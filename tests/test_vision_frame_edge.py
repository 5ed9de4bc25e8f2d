"""An index near the frame's edge: whole in view, it is read; cut by the edge, never read
as another card. On a development design whose ranks are centred in a column of the
width of its widest index (``dejavu-jumbo``: a narrow J starts 38 px further from the
corner than a 10), so where the frame's edge crosses a 10's place a J may be whole; and
on one with a printed border (``serif-jumbo-border``), whose line the edge cuts beside a
whole index; and on a deck drawn by others whose jumbo 10 starts close to the card's edge
(``ext:tango``, a development deck), its 1 touched by the frame's edge."""

from __future__ import annotations

import pytest

from shoe_controller.sim import render
from shoe_controller.sim.render import GUIDED, Pose
from shoe_controller.vision.index_reader import IndexReader
from tests.support.vision_decks import learned_profile, verdict

STYLE = "dejavu-jumbo"
BORDERED = "serif-jumbo-border"
TANGO = "ext:tango"


@pytest.fixture(scope="module")
def reader() -> IndexReader:
    return IndexReader(learned_profile(STYLE))


@pytest.fixture(scope="module")
def bordered() -> IndexReader:
    return IndexReader(learned_profile(BORDERED))


@pytest.fixture(scope="module")
def tango() -> IndexReader:
    return IndexReader(learned_profile(TANGO))


def _at_left_edge(reader: IndexReader, code: str, x: float, seed: int, style: str = STYLE,
                  angle: float = 1.0, scale: float = 1.04) -> str:
    """``code`` upside down, the card's centre ``x`` px from the frame's left edge: the
    card runs off the frame to the left, its index (at the card's bottom right) near
    the edge."""
    frame, _truth = render.render_frame(code, style, GUIDED, seed,
                                        pose=Pose((x, 232.0), True, angle, scale))
    return verdict(reader.read(frame))


def test_a_narrow_index_whole_in_view_beside_the_frames_edge_is_read(reader: IndexReader
                                                                      ) -> None:
    """Where the frame's edge crosses the place of the deck's widest index (a 10) but a
    J's or a 7's index is whole in view (the card's centre 18-30 px from the edge; at
    34 px and more the 10's place is in view too), that index is read (it was rejected:
    "no ink near the corner", the place of some index being out of view)."""
    got = [(code, x, seed, _at_left_edge(reader, code, x, seed))
           for code, xs in (("JS", (18.0, 22.0, 26.0, 30.0)), ("7C", (26.0, 30.0)))
           for x in xs for seed in (5, 6)]
    assert all(v in (code, "REJECT") for code, _x, _s, v in got), got
    assert sum(v == code for code, _x, _s, v in got) >= 11, got


def test_an_index_the_frames_edge_cuts_is_never_read_as_another_card(reader: IndexReader
                                                                      ) -> None:
    """Cards whose index the frame's edge cuts (a 10 losing its 1, a queen or an ace
    half out of view) at every step from gone to whole: each frame reads right or is
    rejected, never as another card."""
    for code in ("TS", "TH", "QH", "AD", "KC", "JS", "7C"):
        for x in range(6, 58, 4):
            got = _at_left_edge(reader, code, float(x), 7)
            assert got in (code, "REJECT"), (code, x, got)


def test_a_printed_border_the_frames_edge_cuts_beside_a_whole_index_is_no_cut_glyph(
        bordered: IndexReader) -> None:
    """The card's printed border runs out of the frame where the deck's widest index
    (a 10) would be, while a narrower index is whole in view (the card's centre 22-30 px
    from the edge): that index is read. The border's line, thin and longer than any
    glyph, is no glyph the edge cuts (it was rejected, "no ink near the corner": the
    line's streak counted as a cut glyph)."""
    got = [(code, x, seed, _at_left_edge(bordered, code, x, seed, BORDERED, -1.0, 0.9))
           for code, xs in (("9S", (22.0, 26.0, 30.0)), ("4C", (22.0, 26.0, 30.0)),
                            ("AD", (30.0,)), ("KC", (30.0,)))
           for x in xs for seed in (7, 8)]
    assert all(v in (code, "REJECT") for code, _x, _s, v in got), got
    assert sum(v == code for code, _x, _s, v in got) >= 12, got


def test_a_bordered_index_the_frames_edge_cuts_is_never_read_as_another_card(
        bordered: IndexReader) -> None:
    """On the bordered deck, cards whose index the frame's edge cuts (the border cut
    with it) at every step from gone to whole: each frame reads right or is rejected."""
    for code in ("TS", "QH", "AD", "KC", "9S", "7H", "4C"):
        for x in range(6, 62, 4):
            got = _at_left_edge(bordered, code, float(x), 7, BORDERED, -1.0, 0.9)
            assert got in (code, "REJECT"), (code, x, got)


def test_a_ten_whose_one_the_frames_edge_just_touches_is_read(tango: IndexReader) -> None:
    """The jumbo 10 of ``ext:tango`` starts a few pixels from the card's edge: with the
    card cut by the frame's left edge, its 1's flag (and the blur around it) reaches the
    edge, and the 1 was dropped as a cut glyph; the 0 alone then was read as an 8 (only
    the layout rejected it: "suit place not as learned for 8C"). The two guided frames
    of bench/vision.py where that happened, and the card stepped along the edge: read
    as the 10 (the 1's pixels inside the frame, the 0 whole), never as anything else."""
    bench = [render.render_frame("TC", TANGO, GUIDED, 20240 * 1_000_003 + i)[0]
             for i in (93, 131)]
    assert [verdict(tango.read(f)) for f in bench] == ["TC", "TC"]
    got = [(code, x, down, verdict(tango.read(render.render_frame(
        code, TANGO, GUIDED, 7, pose=Pose((float(x), 232.0), down, -2.0, 0.97))[0])))
           for code in ("TC", "TH") for down in (False, True) for x in range(30, 42, 2)]
    assert all(v in (code, "REJECT") for code, _x, _d, v in got), got
    assert sum(v == code for code, _x, _d, v in got) >= 20, got


def test_a_ten_or_eight_the_frames_edge_cuts_is_never_read_as_another_card(
        tango: IndexReader) -> None:
    """On ``ext:tango`` (whose 0 alone looks like its 8), a 10 losing its 1 to the
    frame's edge and an 8 cut by it, at every step from gone to whole, either way up:
    each frame reads right or is rejected."""
    for code in ("TS", "8C"):
        for down in (False, True):
            for x in range(14, 50, 4):
                frame = render.render_frame(code, TANGO, GUIDED, 9, pose=Pose(
                    (float(x), 240.0), down, 1.5, 1.03))[0]
                got = verdict(tango.read(frame))
                assert got in (code, "REJECT"), (code, x, down, got)


def test_court_art_the_frames_edge_cuts_beside_a_whole_index_is_no_cut_glyph(
        reader: IndexReader) -> None:
    """A court card of ``dejavu-jumbo`` (its art starts 19 px right of a narrow J at a
    small scale) whose art the frame's right edge cuts where a 10's index would reach:
    the art is no glyph of the index read, being further from the rank than the
    deck's widest gap inside a rank (its 10's, learned: 10 px) and away from the suit,
    so the whole J, Q or K in view is read (bench/vision.py's full-range frame 167, a
    JC, was rejected: the cut art counted as a cut glyph; in the sweep below 98 of 176
    frames read then)."""
    assert reader.profile.geometry["rank_gap"] == 10.0
    bench = render.render_frame("JC", STYLE, render.FULL, 20240 * 1_000_003 + 167)[0]
    assert verdict(reader.read(bench)) == "JC"
    got = [(code, angle, x, verdict(reader.read(render.render_frame(
        code, STYLE, GUIDED, 5, pose=Pose((float(x), 293.0), False, angle, 0.87))[0])))
           for code in ("JC", "QD", "KH", "JS") for angle in (-14.0, -10.0, 0.0, 10.0)
           for x in range(570, 632, 6)]
    assert all(v in (code, "REJECT") for code, _a, _x, v in got), got
    assert sum(v == code for code, _a, _x, v in got) >= 115, got


def test_a_ten_whose_zero_the_frames_edge_cuts_is_never_read(reader: IndexReader) -> None:
    """Tens (and an 8 and a Q) of ``dejavu-jumbo`` upright, the card running off the
    frame's right edge, stepped until the edge cuts the index: a 10 whose 0 the edge
    cuts is rejected (the cut 0 is within the learned gap of the 1), never read as
    another card; every frame reads right or is rejected."""
    for code in ("TS", "TH", "8D", "QH"):
        for angle in (-6.0, 0.0, 5.0):
            for d in range(10, 90, 4):
                frame = render.render_frame(code, STYLE, GUIDED, 7 + d, pose=Pose(
                    (640.0 - d, 240.0), False, angle, 0.95))[0]
                got = verdict(reader.read(frame))
                assert got in (code, "REJECT"), (code, angle, d, got)

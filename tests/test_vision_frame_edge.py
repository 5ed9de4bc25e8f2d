"""An index near the frame's edge: whole in view, it is read; cut by the edge, never read
as another card. On a development design whose ranks are centred in a column of the
width of its widest index (``dejavu-jumbo``: a narrow J starts 38 px further from the
corner than a 10), so where the frame's edge crosses a 10's place a J may be whole; and
on one with a printed border (``serif-jumbo-border``), whose line the edge cuts beside a
whole index."""

from __future__ import annotations

import pytest

from shoe_controller.sim import render
from shoe_controller.sim.render import GUIDED, Pose
from shoe_controller.vision.index_reader import IndexReader
from tests.support.vision_decks import learned_profile

STYLE = "dejavu-jumbo"
BORDERED = "serif-jumbo-border"


@pytest.fixture(scope="module")
def reader() -> IndexReader:
    return IndexReader(learned_profile(STYLE))


@pytest.fixture(scope="module")
def bordered() -> IndexReader:
    return IndexReader(learned_profile(BORDERED))


def _verdict(read: object) -> str:
    if read.kind == "card":  # type: ignore[attr-defined]
        return read.card.code  # type: ignore[attr-defined]
    return "REJECT" if read.kind == "reject" else read.kind.upper()  # type: ignore[attr-defined]


def _at_left_edge(reader: IndexReader, code: str, x: float, seed: int, style: str = STYLE,
                  angle: float = 1.0, scale: float = 1.04) -> str:
    """``code`` upside down, the card's centre ``x`` px from the frame's left edge: the
    card runs off the frame to the left, its index (at the card's bottom right) near
    the edge."""
    frame, _truth = render.render_frame(code, style, GUIDED, seed,
                                        pose=Pose((x, 232.0), True, angle, scale))
    return _verdict(reader.read(frame))


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

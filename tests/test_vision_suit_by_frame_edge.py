"""A suit with ink within ``SUIT_EDGE`` px of the frame's edge is no read
(``_suit_by_the_frame``): the edge may cut it, and its streak (the edge repeated in the
corner crop) joins it. ext:dondorf's 10 of spades posed by the frame's left edge
(``bench/vision_cards.py ext:dondorf --cards TS --by-edge``): the spade's left lobe
touched the edge, ``cut_joined`` cut the spade out of the streak with a piece of the
streak on it, and that matched a club: TS as TC in 1 of 512 frames, 0 now. The same card
1.5 and 3 px further into the frame, the spade's lobe still joined to the streak, read
TS and is now rejected too (the same look a pixel or two apart gave TC); 4.5 and 6 px
further in, the spade clear of the edge, it still reads."""

from __future__ import annotations

import pytest

from shoe_controller.sim import render
from shoe_controller.sim.render import FULL, GUIDED, Pose
from shoe_controller.vision.index_reader import IndexReader
from tests.support.vision_decks import learned_profile, verdict

DONDORF = "ext:dondorf"


@pytest.fixture(scope="module")
def dondorf() -> IndexReader:
    return IndexReader(learned_profile(DONDORF))


def test_a_spade_joined_to_the_frame_edge_is_no_club(dondorf: IndexReader) -> None:
    frame = render.render_frame("TS", DONDORF, FULL, 18216,
                                pose=Pose((14.9, 282.0), False, 6.0, 0.9))[0]
    read = dondorf.read(frame)
    assert verdict(read) in ("TS", "REJECT"), read


def test_the_spade_clear_of_the_edge_still_reads(dondorf: IndexReader) -> None:
    got = [verdict(dondorf.read(render.render_frame(
        "TS", DONDORF, FULL, seed, pose=Pose((x, 282.0), False, 6.0, 0.9))[0]))
        for x, seed in ((19.4, 17766), (20.9, 17616))]
    assert got == ["TS"] * 2, got


def test_the_bench_frames_of_tens_still_read(dondorf: IndexReader) -> None:
    """Guided frames (the index 4 px or more inside the frame) of the 10s and the
    clubs' 10 beside the spades' one: as many read as before, none as another card."""
    got = [(code, verdict(dondorf.read(render.render_frame(code, DONDORF, GUIDED,
                                                           7300 + k)[0])))
           for code in ("TS", "TC", "TH", "TD") for k in range(10)]
    assert all(v in (code, "REJECT") for code, v in got), got
    assert sum(code == v for code, v in got) >= 39, got

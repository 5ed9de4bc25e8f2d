"""A light region is a plain card only if no print lies inside the convex hull of its
outline (``_plain_measures``). A card's part in view is convex; print that runs into the
frame's border (a face's big pip, its index that the frame cuts) is no hole in the light
region but a bay of its outline, and inside the outline alone no print was measured.
condensed-jumbo-art's 9S, posed by the frame's edge with its index and a big pip cut by
it (``bench/vision_cards.py condensed-jumbo-art --cards 9S --by-edge``), read as its
light-grey cut card in 19 of 704 frames, in none now. The cut card itself, posed the
same way and in the bench's frames, still reads as the cut card."""

from __future__ import annotations

import pytest

from shoe_controller.sim import render
from shoe_controller.sim.render import FULL, GUIDED, Pose
from shoe_controller.vision.index_reader import IndexReader
from tests.support.vision_decks import learned_profile, verdict

CJA = "condensed-jumbo-art"

#: (index centre, upside down, angle, seed) of ``--by-edge`` frames at scale 1.1 in which
#: 9S read as the cut card (in the guided and the full range alike)
POSES = (((11.2, 282.0), False, 6.0, 18918), ((14.2, 282.0), False, 6.0, 18618),
         ((17.2, 282.0), False, 6.0, 18318), ((621.9, 198.0), True, 6.0, 6319),
         ((624.9, 198.0), True, 6.0, 6619), ((627.9, 198.0), True, 6.0, 6919))


@pytest.fixture(scope="module")
def cja() -> IndexReader:
    return IndexReader(learned_profile(CJA))


@pytest.mark.parametrize("deg", (GUIDED, FULL), ids=("guided", "full"))
def test_a_face_with_print_cut_by_the_frame_is_no_plain_card(cja: IndexReader,
                                                             deg: render.Degradation) -> None:
    got = [verdict(cja.read(render.render_frame("9S", CJA, deg, seed,
                                                pose=Pose(centre, down, angle, 1.1))[0]))
           for centre, down, angle, seed in POSES]
    assert set(got) <= {"9S", "REJECT"}, got


def test_the_cut_card_posed_so_still_reads(cja: IndexReader) -> None:
    got = [verdict(cja.read(render.render_frame("CUT", CJA, deg, seed,
                                                pose=Pose(centre, down, angle, 1.1))[0]))
           for deg in (GUIDED, FULL) for centre, down, angle, seed in POSES]
    assert got == ["CUT"] * len(got), got


@pytest.mark.parametrize("style", (CJA, "bookman-dark-cut", "ext:paris"))
def test_the_cut_card_in_the_bench_frames_still_reads(style: str) -> None:
    reader = IndexReader(learned_profile(style))
    got = [verdict(reader.read(render.render_frame("CUT", style, deg, 7200 + k)[0]))
           for deg in (GUIDED, FULL) for k in range(15)]
    assert got.count("CUT") >= len(got) - 1 and set(got) <= {"CUT", "REJECT"}, got

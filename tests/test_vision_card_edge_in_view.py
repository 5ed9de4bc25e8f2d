"""A tilted card that runs into the frame's border away from its index corner: the card's
own edge beside the index is in view, so where the corner is along that axis is known
(the region touching the border made it "free": the card's edge was not painted out and
a glyph near it, blurred into the dark outside, was lost). On two development decks
drawn by others, ``ext:tango`` (a jumbo 10 whose 1 starts a few pixels from the card's
edge) and ``ext:bellot`` (a Q by the court art)."""

from __future__ import annotations

import pytest

from shoe_controller.sim import render
from shoe_controller.sim.render import FULL, GUIDED, Pose
from shoe_controller.vision.index_glyphs import find_regions, to_small
from shoe_controller.vision.index_reader import IndexReader
from tests.support.vision_decks import learned_profile, verdict

TANGO = "ext:tango"
BELLOT = "ext:bellot"
#: bench/vision.py's full-range frames: ``20240 * 1_000_003 + i`` is frame i's seed
BENCH = 20240 * 1_000_003


@pytest.fixture(scope="module")
def tango() -> IndexReader:
    return IndexReader(learned_profile(TANGO))


@pytest.fixture(scope="module")
def bellot() -> IndexReader:
    return IndexReader(learned_profile(BELLOT))


def test_the_corner_is_known_along_an_axis_whose_card_edge_is_in_view(tango: IndexReader
                                                                     ) -> None:
    """A card tilted 14.5 degrees, its top-left corner 45 px from the frame's left edge:
    its left edge runs down into the frame's border. The region touches the left
    border, yet the card's left edge is in view: the corner's x is known. Moved 60 px
    left, the corner itself is out of view: x is free."""
    frame = render.render_frame("TC", TANGO, GUIDED, 11, pose=Pose((65.0, 210.0), False,
                                                                   14.5, 0.95))[0]
    min_area = float(tango.profile.geometry["min_region_area"])
    region = find_regions(to_small(frame), min_area)[1][0]
    assert region.borders[0] and region.edges_seen[0]
    assert region.free_axes(False) == (False, False)
    frame = render.render_frame("TC", TANGO, GUIDED, 11, pose=Pose((5.0, 210.0), False,
                                                                   14.5, 0.95))[0]
    region = find_regions(to_small(frame), min_area)[1][0]
    assert region.borders[0] and not region.edges_seen[0]
    assert region.free_axes(False)[0]


def test_bench_frames_whose_glyph_joined_the_dark_outside_are_read(
        tango: IndexReader, bellot: IndexReader) -> None:
    """The full-range frames of bench/vision.py rejected for this cause: ext:tango's TC
    (its 1 one ink part with the dark beyond the card's edge; the 0 alone matched an 8,
    "suit place not as learned for 8C") and TD upside down ("rank unclear (8 vs 9)"),
    ext:bellot's QD upside down (its Q joined to the dark beyond the card's bottom edge:
    "no rank-sized ink where the index starts"). Each card runs into a frame border
    away from its index corner; all three read now."""
    got = [verdict(reader.read(render.render_frame(code, style, FULL, BENCH + i)[0]))
           for reader, style, code, i in ((tango, TANGO, "TC", 146), (tango, TANGO, "TD", 70),
                                          (bellot, BELLOT, "QD", 86))]
    assert got == ["TC", "TD", "QD"]


@pytest.mark.parametrize("down", [False, True])
def test_a_tilted_card_running_off_the_frame_is_never_read_as_another_card(
        tango: IndexReader, down: bool) -> None:
    """Tens and eights of ext:tango tilted 8-15 degrees either way, stepped across the
    frame's left edge (upright: the index there) or right edge (upside down), from the
    index out of view to well inside: each frame reads right or is rejected; 53 and 50
    of the 90 read (40 and 41 when the axis was free whenever the card ran into the
    border; 47 upside down since 6d0f1d9, whose guard against a ten's cut 0 read as an 8
    rejects one more ten at the right edge)."""
    got = []
    for code in ("TS", "TD", "8C"):
        for angle in (8.0, -12.0, 15.0):
            for k, d in enumerate(range(-10, 70, 8)):
                x = float(640 - d if down else d)
                frame = render.render_frame(code, TANGO, FULL, 300 + k, pose=Pose(
                    (x, 240.0), down, angle, 0.95))[0]
                got.append((code, angle, x, verdict(tango.read(frame))))
    assert all(v in (code, "REJECT") for code, _a, _x, v in got), got
    assert sum(v == code for code, _a, _x, v in got) >= 47, got


def test_a_card_edge_along_the_frames_border_is_not_in_view(tango: IndexReader) -> None:
    """A card turned 1.5 degrees whose left edge runs down the frame's border, 1-4 px
    inside it at the index and out of the frame lower down: its outline near that line
    is a column of points on the border and a few apart from it (the rounded corner),
    no run of the card's own edge; the corner's x stays free (two such points 52 px
    apart made it known, and the edge band painted out half of the 10's 1)."""
    frame = render.render_frame("TS", TANGO, GUIDED, 9, pose=Pose((22.0, 240.0), False,
                                                                  1.5, 1.03))[0]
    min_area = float(tango.profile.geometry["min_region_area"])
    region = find_regions(to_small(frame), min_area)[1][0]
    assert region.borders[0] and not region.edges_seen[0]
    assert region.free_axes(False) == (True, False)

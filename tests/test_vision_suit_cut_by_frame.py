"""A 10 whose 1 the frame's edge cuts is read (``_cut_beside_rank``) only when nothing
the frame cuts lies by its suit: the edge that cuts the rank may cut the suit too, and
what is left of it can match another suit. ext:paris's 10 of spades posed with its
index by the frame's edge (the 1 cut, the spade joined to the edge's streak): the
spade's foot alone was found as the suit and matched paris's clubs (whose learned views
include fragments of the club): TS read as TC."""

from __future__ import annotations

import pytest

from shoe_controller.sim import render
from shoe_controller.sim.render import FULL, GUIDED, Pose
from shoe_controller.vision.index_reader import IndexReader
from shoe_controller.vision.profile import Profile
from tests.support.vision_decks import learned_profile, verdict

PARIS = "ext:paris"

#: (range, angle, the card's face x=0 this far left of the frame's edge, scale): poses
#: (upright, by the frame's left edge) in which TS read as TC
POSES = (("guided", -2.0, -31.5, 1.1), ("full", -2.0, -24.0, 0.9), ("full", 2.0, -22.5, 0.9))


@pytest.fixture(scope="module")
def paris() -> Profile:
    return learned_profile(PARIS)


@pytest.mark.parametrize("pose", POSES)
def test_a_ten_cut_by_the_frame_with_its_spade_cut_is_no_club(
        paris: Profile, pose: tuple[str, float, float, float]) -> None:
    rng, angle, corner, scale = pose
    face = render.draw_card_face("TS", PARIS)
    x0, _y0, x1, _y1 = face.index_box
    at = Pose((corner + scale * (x0 + x1) / 2, 240.0 + 7 * angle), False, angle, scale)
    seed = int(abs(corner) * 100 + scale * 10 + (angle + 10) * 1000 + 7)
    frame = render.render_frame("TS", PARIS, GUIDED if rng == "guided" else FULL, seed,
                                pose=at)[0]
    assert verdict(IndexReader(paris).read(frame)) in ("TS", "REJECT")

"""A suit that the frame's edge cuts is never cut out of what it is joined to.

Where the frame cuts a card, the crop's side there is "free" and a part running into it
is no glyph (what is beyond it is out of view): the frame's edge repeated, and whatever
glyph it cuts. ext:dondorf's 10 (four indices), the frame's edge through its 1 and the
left of its spade, the far index whole in view: the spade's right part, joined to the
streak of the edge, was cut out of it at a neck (``cut_joined``, which finds a suit that
court art or a pip joins), matched a club, and the 1 the edge just touches made a 10:
TS read as TC (full-range frames). A part that runs into a free side is no piece to cut
a suit out of: the frame rejects."""

from __future__ import annotations

import pytest

from shoe_controller.sim import render
from shoe_controller.sim.render import FULL, Pose
from shoe_controller.vision.index_reader import IndexReader
from shoe_controller.vision.profile import Profile
from tests.support.vision_decks import learned_profile, verdict

DONDORF = "ext:dondorf"

#: (upside down, angle, the card's face x=0 this far from the frame's edge, scale):
#: poses in which TS read as TC
POSES = ((False, 6.0, -23.0, 0.9), (False, 6.0, -22.0, 0.9), (True, -6.0, -27.0, 1.1))


@pytest.fixture(scope="module")
def dondorf() -> Profile:
    return learned_profile(DONDORF)


@pytest.mark.parametrize("pose", POSES)
def test_a_spade_the_frames_edge_cuts_is_no_club(dondorf: Profile,
                                                 pose: tuple[bool, float, float, float]
                                                 ) -> None:
    down, angle, corner, scale = pose
    face = render.draw_card_face("TS", DONDORF)
    x0, _y0, x1, _y1 = face.index_box
    cx = corner + scale * (x0 + x1) / 2
    at = Pose((639 - cx if down else cx, 240.0 + 7 * angle), down,
              -angle if down else angle, scale)
    seed = int(abs(corner) * 100 + scale * 10 + (angle + 10) * 1000 + 7) + down
    frame = render.render_frame("TS", DONDORF, FULL, seed, pose=at)[0]
    assert verdict(IndexReader(dondorf).read(frame)) in ("TS", "REJECT")

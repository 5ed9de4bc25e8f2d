"""A rank that a part alone of another rank is read as (modern's 8 and Q: its 10's 0
alone matches them) on a card the frame's edge cuts right by the index, the card's own
edge out of view: whether a 1 is out of view left of the rank is not known, and the
reader rejected such an 8 ("the rank reaches the frame's edge"), the commonest guided
rejection left on the development designs. Where the suit's place tells the 0 of a 10
from the card by a wide margin (under modern's 10 the suit is under the middle of the
"10", nearer the 1: 0.4 rank heights left of the 0's middle, against +-0.06 under an 8)
the layout rejects the 0 alone, and the look beside the rank is not needed. The deck
learns which cards that holds for (``geometry.part_apart``): every learned view of the
other rank's last part alone, with its suit, must put the suit ``PART_APART`` slacks
beyond what the reader allows the card, even with as much of the suit's side cut off by
the frame as the reader's least suit width lets go."""

from __future__ import annotations

import numpy as np
import pytest

from shoe_controller.sim import render
from shoe_controller.sim.render import FULL, GUIDED, Pose
from shoe_controller.vision.index_reader import IndexReader
from shoe_controller.vision.profile import Profile
from tests.support.vision_decks import learned_profile, verdict

MODERN = "modern"


@pytest.fixture(scope="module")
def modern() -> Profile:
    return learned_profile(MODERN)


def test_the_deck_learns_which_cards_the_suits_place_tells_from_a_tens_zero(
        modern: Profile) -> None:
    """modern: all its 8s and Qs; ext:tango and condensed-jumbo-art (whose 10's suit
    sits nearer the 0, within reach of the 8's or 9's once the frame cuts the suit's
    side): none."""
    assert modern.geometry["part_apart"] == ["8C", "8D", "8H", "8S",
                                             "QC", "QD", "QH", "QS"]
    assert learned_profile("ext:tango").geometry["part_apart"] == []
    assert learned_profile("condensed-jumbo-art").geometry["part_apart"] == []


def test_an_eight_by_a_frame_edge_that_cuts_the_card_reads(modern: Profile) -> None:
    """Guided probe frames of modern 8C at seed 777 (frames 204, 301, 339; looked at
    while fixing) whose card the frame's edge cuts a few px left of the 8: rejected
    before, read now."""
    reader = IndexReader(modern)
    got = [verdict(reader.read(render.render_frame("8C", MODERN, GUIDED,
                                                   777 * 1_000_003 + i)[0]))
           for i in (204, 301, 339)]
    assert got == ["8C", "8C", "8C"]


def _ones_cut_away(code: str) -> list[np.ndarray]:
    """Frames of modern's 10 ``code`` whose frame edge crosses its 1, from the 1's left
    end to three quarters across the rank (the 0 whole in view, the 1 partly or wholly
    past the edge), guided and full range: upright against the left edge, upside down
    against the right, two scales, three angles. The 1's columns are measured on the
    drawn face (the rank's ink: the rows above the gap over the suit)."""
    face = render.draw_card_face(code, MODERN)
    x0, y0, x1, y1 = face.index_box
    grey = face.image[y0:y1 + 1, x0:x1 + 1].min(axis=2)
    rows = np.flatnonzero((grey < 128).any(axis=1))
    rank_rows = rows[:np.argmax(np.diff(rows) > 1) + 1]
    cols = np.flatnonzero((grey[rank_rows] < 128).any(axis=0))
    left, width = int(cols[0]), int(cols[-1] - cols[0] + 1)
    icx = (x0 + x1) / 2
    out = []
    for degradation in (GUIDED, FULL):
        for down in (False, True):
            for scale in (0.9, 1.1):
                for angle in (-4.0, 0.0, 4.0):
                    for edge in range(left, left + int(0.75 * width), 2):
                        px = scale * (icx - (x0 + edge))  # face column ``edge`` at x 0
                        pose = Pose((float(639 - px if down else px), 240.0), down, angle,
                                    scale)
                        out.append(render.render_frame(code, MODERN, degradation,
                                                       edge + 10 + int(angle), pose=pose)[0])
    return out


@pytest.mark.parametrize("code", ["TS", "TH"])
def test_a_ten_whose_one_is_past_the_frames_edge_is_never_an_eight_or_a_queen(
        modern: Profile, code: str) -> None:
    """modern's 10s with the 1 cut away by the frame's edge: each frame is the 10 or a
    rejection, never the 8 or the Q whose layout now stands guard."""
    reader = IndexReader(modern)
    got = [verdict(reader.read(frame)) for frame in _ones_cut_away(code)]
    assert set(got) <= {code, "REJECT"}, got

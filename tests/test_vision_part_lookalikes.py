"""A part alone of a rank of several parts that matches another rank: the 0 of
``ext:tango``'s 10 (a development deck drawn by others) matches its 8. Only the index's
layout (where the suit sits against the rank) told an 8 from a 10 whose 1 is out of view
past the frame's edge, or blurred into the dark there, or too light for the reader's
darker threshold. The deck learns which ranks a part alone is read as, and the reader
never reads such a rank when its rank may go on beside it out of view or lost to the
threshold: a rejection, whatever the layout says."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from shoe_controller.sim import render
from shoe_controller.sim.render import GUIDED, Pose
from shoe_controller.vision.index_reader import IndexReader
from shoe_controller.vision.profile import Profile
from tests.support.vision_decks import learned_profile, verdict

TANGO = "ext:tango"


@pytest.fixture(scope="module")
def profile() -> Profile:
    return learned_profile(TANGO)


def _suit_blind(profile: Profile) -> Profile:
    """``profile`` with its 8s' layout open on every measure of the suit (size, place,
    width): a deck whose 8 has its suit where a 10's is against the 10's 0."""
    geometry = dict(profile.geometry)
    layout = dict(geometry["layout"])
    for suit in "SHDC":
        lay = np.array(layout["8" + suit], np.float64).reshape(2, -1)
        lay[0, 2:], lay[1, 2:] = -10.0, 10.0
        layout["8" + suit] = lay.ravel().tolist()
    geometry["layout"] = layout
    return dataclasses.replace(profile, geometry=geometry)


def test_the_deck_learns_that_its_tens_zero_alone_is_read_as_an_eight(profile: Profile
                                                                     ) -> None:
    """Each part of every learned view of the 10s matched alone as the reader matches a
    rank: the 0 is read as the 8 (the rest of the 10, its 1, on its left), the 1 as
    nothing."""
    assert profile.geometry["part_lookalikes"] == {"left": {"8": ["T"]}, "right": {}}


def test_a_ten_losing_its_one_is_never_read_as_an_eight_whatever_the_layout(
        profile: Profile) -> None:
    """Tens stepped across the frame's left edge (upright) and right edge (upside
    down), from the index out of view to whole, read with the 8s' suit layout open: no
    frame is read as an 8 (52 of the 88 were, before), each is the 10 or a rejection,
    and the 10s whole in view still read."""
    reader = IndexReader(_suit_blind(profile))
    got = []
    for code in ("TS", "TD"):
        for down in (False, True):
            for x in range(6, 50, 2):
                frame = render.render_frame(code, TANGO, GUIDED, 9, pose=Pose(
                    (float(640 - x if down else x), 240.0), down, 1.5, 1.03))[0]
                got.append((code, down, x, verdict(reader.read(frame))))
    assert all(v in (code, "REJECT") for code, _d, _x, v in got), got
    assert sum(v == code for code, _d, _x, v in got) >= 18, got

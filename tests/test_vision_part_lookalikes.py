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


def _without_lookalikes(profile: Profile) -> Profile:
    """``profile`` as learned before the deck knew its parts' lookalikes: the guard off."""
    geometry = dict(profile.geometry)
    geometry["part_lookalikes"] = {"left": {}, "right": {}}
    return dataclasses.replace(profile, geometry=geometry)


def _ones_cut_away(code: str) -> list[tuple[str, np.ndarray]]:
    """Frames of the 10 ``code`` whose frame edge crosses its 1, from the 1's left end to
    just past the 1's right end (the 0 whole in view, the 1 partly or wholly past the
    edge): upright against the left edge, upside down against the right, two scales,
    three angles. The 1's columns are measured on the drawn face (the index's darkest ink
    left of its rank's middle), not taken from the reader."""
    face = render.draw_card_face(code, TANGO)
    x0, y0, x1, y1 = face.index_box
    grey = face.image[y0:y1 + 1, x0:x1 + 1].min(axis=2)
    rows = np.flatnonzero((grey < 128).any(axis=1))
    rank_rows = rows[:np.argmax(np.diff(rows) > 1) + 1]  # the rank: ink rows above the gap
    cols = np.flatnonzero((grey[rank_rows] < 128).any(axis=0))
    left, width = int(cols[0]), int(cols[-1] - cols[0] + 1)
    # the 1 ends where the rank's first ink column run ends or, joined to the 0 (black
    # suits at this threshold), at most half the rank's width: sweep that span + 3 px
    icx = (x0 + x1) / 2
    out = []
    for down in (False, True):
        for scale in (0.95, 1.05):
            for angle in (-1.5, 0.0, 1.5):
                for edge in range(left, left + width // 2 + 4, 3):
                    px = scale * (icx - (x0 + edge))  # face column ``edge`` at frame x 0
                    pose = Pose((float(639 - px if down else px), 240.0), down, angle, scale)
                    frame = render.render_frame(code, TANGO, GUIDED, edge, pose=pose)[0]
                    out.append((f"{down}/{scale}/{angle}/{edge - left}", frame))
    return out


@pytest.mark.parametrize("code", ["TS", "TH", "TD", "TC"])
def test_a_ten_whose_one_is_past_the_frames_edge_is_never_an_eight(
        profile: Profile, code: str) -> None:
    """The 1 of each suit's 10 cut away by the frame's edge, the 0 in view: never read as
    the 8 (each frame is the 10 or a rejection), with the 8s' layout as learned or
    opened. The same frames read with the guard off and the layout opened do give 8s, so
    these frames are the risk and it is the guard that rejects them."""
    frames = _ones_cut_away(code)
    eight = "8" + code[1]
    for reader in (IndexReader(profile), IndexReader(_suit_blind(profile))):
        got = [(where, verdict(reader.read(frame))) for where, frame in frames]
        assert all(v in (code, "REJECT") for _w, v in got), got
    unguarded = IndexReader(_without_lookalikes(_suit_blind(profile)))
    assert any(verdict(unguarded.read(frame)) == eight for _w, frame in frames)

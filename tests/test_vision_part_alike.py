"""A rank that a part alone of another rank is read as (condensed-jumbo-art's 9 and
ext:dondorf's Q: the 0 of their 10 alone is taken for them) was rejected wherever the
frame's edge, with the card's own edge out of view, came within a 1's reach of it: a 10
whose 1 lies past the edge could not be excluded, and the layout does not tell them
apart on these decks (the 10's suit is within reach of the 9's or the Q's). It was the
commonest guided rejection left on the development designs (condensed-jumbo-art 5 in
3,000 frames at bench seed 73001; dondorf's QH 4 in 500 at seed 72002).

The shape does tell them apart, clearly: the deck learns, from the camera views the
learner makes of its own calibration crops, a line between the rank's glyph and the
part's alone (``geometry.part_alike``: Fisher's discriminant, and where along it the
rank starts), and the reader reads the rank by the frame's edge only when its glyph is
on the rank's side of that line, three quarters of the way from the part's views to the
rank's. Everything else about the frame (match, pair tests, layout, colour) is asked as
before."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from shoe_controller.sim import render
from shoe_controller.sim.render import GUIDED
from shoe_controller.vision.index_learn import _part_line
from shoe_controller.vision.index_reader import IndexReader
from shoe_controller.vision.profile import Profile
from tests.support.vision_decks import learned_profile, verdict
from tests.test_vision_part_lookalikes import _ones_cut_away, _suit_blind

CONDENSED = "condensed-jumbo-art"
DONDORF = "ext:dondorf"

#: Guided frames the reader rejected for a 1 that might be out of view: (design, card,
#: seed). condensed-jumbo-art's are frames 648, 691, 2086 and 2869 of bench/vision.py
#: --seed 73001 (--dump); dondorf's, bench/vision_cards.py --cards QH --seed 72002.
BY_THE_EDGE = [
    (CONDENSED, "9C", 73001 * 1_000_003 + 648),
    (CONDENSED, "9D", 73001 * 1_000_003 + 691),
    (CONDENSED, "9H", 73001 * 1_000_003 + 2086),
    (CONDENSED, "9C", 73001 * 1_000_003 + 2869),
    (DONDORF, "QH", 72002216277),
    (DONDORF, "QH", 72002216316),
    (DONDORF, "QH", 72002216419),
    (DONDORF, "QH", 72002216429),
]


def _without_lines(profile: Profile) -> Profile:
    """``profile`` as learned before the part lines were (a version-4 profile of then)."""
    geometry = dict(profile.geometry)
    geometry.pop("part_alike", None)
    return dataclasses.replace(profile, geometry=geometry)


def test_the_line_lies_between_the_two_kinds_of_view() -> None:
    """Three quarters of the way from the part's greatest projection to the rank's
    least; no line where the two overlap."""
    assert _part_line(np.array([0.3, 0.5]), np.array([-0.1, -0.5])) == pytest.approx(0.2)
    assert _part_line(np.array([0.3, -0.2]), np.array([-0.1, -0.5])) is None


@pytest.mark.parametrize(("design", "rank"), [(CONDENSED, "9"), (DONDORF, "Q")])
def test_the_deck_learns_a_line_between_its_rank_and_its_tens_zero(design: str, rank: str
                                                                   ) -> None:
    lines = learned_profile(design).geometry["part_alike"]
    mine = [d for d in lines if d["rank"] == rank and d["side"] == "left"]
    assert [d["part_of"] for d in mine] == ["T"]
    assert len(mine[0]["w"]) == len(learned_profile(design).rank_templates[0])


@pytest.mark.parametrize(("design", "card", "seed"), BY_THE_EDGE)
def test_a_rank_by_the_frames_edge_reads_when_its_shape_is_no_tens_zero(
        design: str, card: str, seed: int) -> None:
    """Each frame reads as its card now; with the profile's lines taken away (as a
    profile learned before them) it is rejected, as it was."""
    frame = render.render_frame(card, design, GUIDED, seed)[0]
    profile = learned_profile(design)
    assert verdict(IndexReader(profile).read(frame)) == card
    assert verdict(IndexReader(_without_lines(profile)).read(frame)) == "REJECT"


@pytest.mark.parametrize("code", ["TS", "TH", "TD", "TC"])
def test_a_ten_whose_one_is_past_the_frames_edge_is_still_never_an_eight(code: str
                                                                         ) -> None:
    """ext:tango, whose 10's 0 alone matches its 8 (tests/test_vision_part_lookalikes.py):
    with the 8s' layout opened so that only the look beside the rank stands guard, its
    10s with the 1 cut away by the frame are each the 10 or a rejection, the line
    learned and asked (many of these frames reach it read as an 8: the line keeps them
    out)."""
    profile = learned_profile("ext:tango")
    assert [d["rank"] for d in profile.geometry["part_alike"]] == ["8"]
    reader = IndexReader(_suit_blind(profile))
    got = [verdict(reader.read(frame)) for _w, frame in _ones_cut_away(code)]
    assert set(got) <= {code, "REJECT"}, got


def test_the_line_is_what_keeps_a_tens_zero_out() -> None:
    """The same frames with the line moved to below every view (a line that says 8 to
    anything) do give 8s: the frames reach the line, and it rejects them."""
    profile = _suit_blind(learned_profile("ext:tango"))
    geometry = dict(profile.geometry)
    geometry["part_alike"] = [{**d, "read_above": -1e9} for d in geometry["part_alike"]]
    loose = IndexReader(dataclasses.replace(profile, geometry=geometry))
    got = {verdict(loose.read(frame)) for code in ("TS", "TD")
           for _w, frame in _ones_cut_away(code)}
    assert got & {"8S", "8D"}

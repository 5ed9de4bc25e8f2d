"""A rank that a part alone of another rank is read as (ext:dondorf's Q: its 10's 0 alone
matches it) with the frame's edge within the gap of such a rank beside it, but the card's
own edge in view between the two: the dark beyond the card's edge a solid band from the
crop's side past the frame's edge into the frame, in every row of the rank and from the
card's top (painted out) down to it. Nothing of the card, so of a rank, lies beyond that
edge; such frames were rejected as "the rank reaches the frame's edge" (the reason given
was the far corner's, "no ink near the corner"). Where the card's edge is out of view
(the frame cuts the card's margin) only the Q's shape tells it from a 10 whose 1 is out
of view: read by the deck's learned line between the two, rejected without it."""

from __future__ import annotations

import dataclasses

import pytest

from shoe_controller.sim import render
from shoe_controller.sim.render import GUIDED
from shoe_controller.vision.index_reader import IndexReader
from shoe_controller.vision.profile import Profile
from tests.support.vision_decks import learned_profile, verdict
from tests.test_vision_card_edge_near_top import _one_out_of_view

DONDORF = "ext:dondorf"


@pytest.fixture(scope="module")
def dondorf() -> Profile:
    return learned_profile(DONDORF)


def test_queens_with_the_card_edge_between_the_frame_edge_and_the_rank_read(
        dondorf: Profile) -> None:
    """Guided frames of bench/vision_cards.py ext:dondorf --cards QS QH -n 500 --seed
    72001 rejected so: they read now."""
    reader = IndexReader(dondorf)
    for seed in (72001216048, 72001216354, 72001216386):
        frame = render.render_frame("QS", DONDORF, GUIDED, seed)[0]
        assert verdict(reader.read(frame)) == "QS", seed


def test_queens_with_the_card_edge_out_of_view_read_by_their_shape(dondorf: Profile
                                                                   ) -> None:
    """The same survey's QH frames whose card edge is out of view beside the rank (the
    rank 5 px from the frame's edge; the card running out of the frame in the rank's
    rows): where a 10's 1 would be nothing tells, and the layout does not either; the
    Q's shape does, by the learned line between it and the 10's 0 alone
    (tests/test_vision_part_alike.py). Without that line they are rejected."""
    without = dict(dondorf.geometry)
    without.pop("part_alike")
    for profile, want in ((dondorf, "QH"),
                          (dataclasses.replace(dondorf, geometry=without), "REJECT")):
        reader = IndexReader(profile)
        for seed in (72001216041, 72001216397):
            frame = render.render_frame("QH", DONDORF, GUIDED, seed)[0]
            assert verdict(reader.read(frame)) == want, seed


@pytest.mark.parametrize("code", ["TS", "TH"])
def test_a_ten_whose_one_is_out_of_view_is_still_never_a_queen(dondorf: Profile,
                                                               code: str) -> None:
    """10s with their 1 cut or out of view by the frame's edge: the 10 or rejected."""
    reader = IndexReader(dondorf)
    got = [verdict(reader.read(f)) for f in _one_out_of_view(code)]
    assert set(got) <= {code, "REJECT"}, got
    assert "REJECT" in got

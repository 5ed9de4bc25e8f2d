"""A card whose own edge is a few px inside the frame's edge: the light region runs
into the frame's border, so where the card's corner is along that axis is not known,
and the few px of dark beyond the card's edge, cut off by the frame's edge, were taken
for a glyph the frame cuts beside the rank (a 10's 1): "no whole index in view". The
dark beyond the card's own edge is told from such a glyph as the look beside a rank
tells it (a straight band from above the rank down its rows: ``_card_edge``) and is no
longer taken for one. Frames of bench/vision.py --seed 73001 rejected so before."""

from __future__ import annotations

import pytest

from shoe_controller.sim import render
from shoe_controller.sim.render import FULL, GUIDED
from shoe_controller.vision.index_reader import IndexReader
from tests.support.vision_decks import learned_profile, verdict

FRAMES = [
    ("gothic-jumbo-art-4corner", "6C", GUIDED, 2012),
    ("gothic-jumbo-art-4corner", "5H", FULL, 21),
    ("gothic-jumbo-art-4corner", "JH", FULL, 1460),
    ("dejavu-jumbo", "2C", GUIDED, 2563),
]


@pytest.mark.parametrize(("design", "card", "rng", "index"), FRAMES)
def test_the_dark_beyond_the_cards_edge_is_no_glyph_the_frame_cuts(
        design: str, card: str, rng: render.Degradation, index: int) -> None:
    frame = render.render_frame(card, design, rng, 73001 * 1_000_003 + index)[0]
    assert verdict(IndexReader(learned_profile(design)).read(frame)) == card

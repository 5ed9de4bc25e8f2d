"""A rank that blur or the threshold joined to what is next to it (a Q's tail run into
the suit under it, ext:ornamental's QH; into court art beside it) is no part of a
rank's size where ranks start: "no rank-sized ink where the index starts", ext:
ornamental's commonest rejection (4 of its 5 at bench seed 73001, one of them guided).
The reader's last look now wears such a part down until it falls apart with a rank-high
piece where a rank's top is, and grows the pieces back inside the part's own pixels;
the pieces are then read as any parts are (shape, pair tests, layout, colour), so a
piece that is no glyph of the deck is still a rejection."""

from __future__ import annotations

import pytest

from shoe_controller.sim import render
from shoe_controller.sim.render import FULL, GUIDED
from shoe_controller.vision.index_reader import IndexReader
from tests.support.vision_decks import learned_profile, verdict

ORNAMENTAL = "ext:ornamental"


@pytest.mark.parametrize(("rng", "index"), [(GUIDED, 1412), (FULL, 304), (FULL, 574)])
def test_a_queen_joined_to_its_heart_reads(rng: render.Degradation, index: int) -> None:
    """Frames of bench/vision.py --seed 73001 (ext:ornamental's QH, upside down)."""
    frame = render.render_frame("QH", ORNAMENTAL, rng, 73001 * 1_000_003 + index)[0]
    assert verdict(IndexReader(learned_profile(ORNAMENTAL)).read(frame)) == "QH"


@pytest.mark.parametrize("card", ["QH", "QS", "KD", "JC"])
def test_court_cards_in_the_full_range_are_never_read_as_another(card: str) -> None:
    """Full-range frames of ext:ornamental's court cards (seed 74001, not looked at
    while building): each is the card or a rejection, and most are the card."""
    reader = IndexReader(learned_profile(ORNAMENTAL))
    got = [verdict(reader.read(render.render_frame(card, ORNAMENTAL, FULL,
                                                   74001 * 1_000_003 + i)[0]))
           for i in range(60)]
    assert set(got) <= {card, "REJECT"}, got
    assert got.count(card) >= 57

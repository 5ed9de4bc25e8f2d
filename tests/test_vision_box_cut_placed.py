"""A suit cut out of court art along the deck's suit box (``cut_box``: ext:bellot's KS,
the sceptre's gold knob over the spade's foot) is cut where the rank found puts it. The
box was placed where the corner said the index starts; in a guided frame the corner is
found a few pixels off (the rank 5 px lower than any of the deck's ranks starts), the box
then held the spade's top alone, and that matched a club or a diamond under the knob
better than the king's spade ("suit unclear (C vs D)"): about one KS frame in ten was
rejected, three of 1000 guided frames of the bench. The box now moves with the rank by
as much as the rank lies outside where this deck's ranks start."""

from __future__ import annotations

import pytest

from shoe_controller.sim import render
from shoe_controller.vision.index_reader import IndexReader
from tests.support.vision_decks import learned_profile, verdict

BELLOT = "ext:bellot"

#: guided KS frames (``bench/vision_cards.py`` seeds 71001 and 71002, frame i at seed
#: S * 1_000_003 + i) rejected with the box where the corner said
REJECTED_BEFORE = (71001213005, 71001213012, 71001213016, 71001213027, 71001213030,
                   71001213036, 71002213026, 71002213029, 71002213066)


@pytest.fixture(scope="module")
def bellot() -> IndexReader:
    return IndexReader(learned_profile(BELLOT))


def test_a_spade_under_the_knob_is_cut_under_the_rank_found(bellot: IndexReader) -> None:
    got = [verdict(bellot.read(render.render_frame("KS", BELLOT, render.GUIDED, s)[0]))
           for s in REJECTED_BEFORE]
    assert got == ["KS"] * len(REJECTED_BEFORE)


def test_the_club_king_beside_it_still_reads_as_itself(bellot: IndexReader) -> None:
    """KC, the same knob under its club (a part of its own: no box cut), in the frames
    of the same seeds: read as KC, never as the king whose suit is cut out of art."""
    got = [verdict(bellot.read(render.render_frame("KC", BELLOT, render.GUIDED, s)[0]))
           for s in (*REJECTED_BEFORE, *range(71001213040, 71001213052))]
    assert set(got) <= {"KC", "REJECT"}, got
    assert got.count("KC") >= len(got) - 1, got

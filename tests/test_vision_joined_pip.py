"""A small suit of the index joined by blur to the big pip beside it (``ext:paris``, a
development deck drawn by others, whose 8's and 9's pips start a few pixels from the
index): the suit is cut from the pip at the narrow neck between them and read by its
shape; never read as another suit."""

from __future__ import annotations

import pytest

from calibration.evaluate import verdict
from shoe_controller.sim import render
from shoe_controller.vision.index_reader import IndexReader
from tests.support.vision_decks import learned_profile

PARIS = "ext:paris"


@pytest.fixture(scope="module")
def reader() -> IndexReader:
    return IndexReader(learned_profile(PARIS))


def test_a_club_joined_to_the_pip_beside_it_is_cut_from_it_and_read(reader: IndexReader
                                                                     ) -> None:
    """The full-range frame of bench/vision.py (seed 20240, frame 175) where blur joins
    the 8C's small club to the big club beside it in one ink part: it was rejected
    ("suit unlike any learned glyph": taking out the printed lines cut the club apart);
    the club is cut from the pip at the neck between them and read."""
    frame, truth = render.render_frame("8C", PARIS, render.FULL, 20240 * 1_000_003 + 175)
    assert truth.orientation == "down"
    read = reader.read(frame)
    assert (verdict(read), read.orientation) == ("8C", "down"), read


def test_clubs_and_spades_beside_their_pips_are_never_read_as_another_card(
        reader: IndexReader) -> None:
    """Clubs and spades with pips beside the index, in the full range (blur, tilt,
    scale): each frame reads right or is rejected, and nearly all read right."""
    got = [(code, seed, verdict(reader.read(render.render_frame(
        code, PARIS, render.FULL, 900 + seed)[0])))
           for code in ("8C", "9C", "8S", "9S", "7C") for seed in range(8)]
    assert all(v in (code, "REJECT") for code, _s, v in got), got
    assert sum(v == code for code, _s, v in got) >= 36, got

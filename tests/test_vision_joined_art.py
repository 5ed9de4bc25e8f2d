"""A suit that blur joins to court art at the corner of its foot: ``ext:bellot``'s KC (a
development deck drawn by others), whose club's right lobe runs into the sceptre's knob
under motion blur. The ink part is cut at its narrowest row near the suit's learned
bottom; the piece above keeps a sliver of the knob beside the neck, which reached past
the window of 0.3 suit heights searched around the suit's place, and the cut was refused
as art joined from the side ("no suit where the index layout puts it"). The window is
0.45 suit heights now; the neck, the piece's size and the shape match decide as before."""

from __future__ import annotations

import pytest

from shoe_controller.sim import render
from shoe_controller.vision.index_reader import IndexReader
from tests.support.vision_decks import learned_profile, verdict

BELLOT = "ext:bellot"


@pytest.fixture(scope="module")
def bellot() -> IndexReader:
    return IndexReader(learned_profile(BELLOT))


def test_bench_frames_of_a_club_joined_to_the_knob_are_read(bellot: IndexReader) -> None:
    """bench/vision.py's full-range KC frames rejected for this cause: frame 110 at its
    default seed 20240, frames 69 and 96 at seed 555."""
    got = [verdict(bellot.read(render.render_frame("KC", BELLOT, render.FULL,
                                                    seed * 1_000_003 + i)[0]))
           for seed, i in ((20240, 110), (555, 69), (555, 96))]
    assert got == ["KC", "KC", "KC"]


def test_court_cards_under_strong_blur_read_or_are_rejected(bellot: IndexReader) -> None:
    """Kings, a queen and a jack of clubs in the full range with motion blur of 4-6 px
    and defocus: KC reads in 12 of 12 frames (9 before), the others as they did, and no
    frame is read as another card."""
    deg = render.with_range(render.FULL, motion_blur=(4.0, 6.0), defocus=(0.6, 1.2))
    got = [(code, verdict(bellot.read(render.render_frame(code, BELLOT, deg, 700 + k)[0])))
           for code in ("KC", "KS", "KH", "KD", "QC", "JC") for k in range(12)]
    assert all(v in (code, "REJECT") for code, v in got), got
    reads = {c: sum(v == c for code, v in got if code == c) for c in dict(got)}
    assert reads["KC"] >= 11 and min(reads[c] for c in ("KH", "KD", "QC", "JC")) >= 11, reads


def test_a_spade_under_a_gold_knob_is_cut_from_its_black(bellot: IndexReader) -> None:
    """KS, whose index spade is covered in part by the sceptre's gold knob (one ink part
    in the darkest channel, cut along the suit box): the cut keeps what is dark in every
    channel, the spade, not the knob. 40 guided and 40 full-range frames of seed 4711
    (never used in tuning): 39 and 40 read KS (27 and 22 did before, the rest "suit
    unclear"); no other king is read as another card."""
    for deg in (render.GUIDED, render.FULL):
        got = [verdict(bellot.read(render.render_frame("KS", BELLOT, deg,
                                                        4711 * 1_000_003 + i)[0]))
               for i in range(40)]
        assert set(got) <= {"KS", "REJECT"}, got
        assert got.count("KS") >= 38, got
    for code in ("KC", "KH", "KD"):
        got = [verdict(bellot.read(render.render_frame(code, BELLOT, render.FULL,
                                                        4711 * 1_000_003 + i)[0]))
               for i in range(20)]
        assert set(got) <= {code, "REJECT"}, (code, got)

"""The bordered serif jumbo design (``serif-jumbo-border``, development) in the full
range: the two frames of bench/vision.py it still rejected after 19b01ff, each for its
own cause, and the guard that what was loosened reads nothing wrong.

- 4C (frame 172): the frame's right edge crosses the place of the deck's widest index
  while the 4's index is whole; the border's top line runs into the edge, blurred
  thick at the first threshold and cut short by the edge (shorter than the lines
  ``remove_lines`` takes out), beside slivers of the edge's streak with no pixel in the
  frame: all taken for cut glyphs ("no ink near the corner"). A thin line longer than
  the tallest rank and a part with less ink in the frame than the least ink part are
  no cut glyph; they are dropped, as if out of view.
- 2S (frame 45): at scale 0.85 the spade's thin foot is a sliver smaller than an ink
  part; the suit without it is too short for the 2S learned ("suit size not as
  learned for 2S"). The sliver under the suit is its foot, and the suit is read again
  with it."""

from __future__ import annotations

from dataclasses import replace

import pytest

from calibration.evaluate import verdict
from shoe_controller.sim import render
from shoe_controller.vision.index_reader import IndexReader
from tests.support.vision_decks import learned_profile

STYLE = "serif-jumbo-border"


@pytest.fixture(scope="module")
def reader() -> IndexReader:
    return IndexReader(learned_profile(STYLE))


@pytest.mark.parametrize(("code", "frame"), [("4C", 172), ("2S", 45)])
def test_the_bench_frames_once_rejected_are_read(reader: IndexReader, code: str,
                                                  frame: int) -> None:
    image, truth = render.render_frame(code, STYLE, render.FULL, 20240 * 1_000_003 + frame)
    read = reader.read(image)
    assert (verdict(read), read.orientation) == (code, truth.orientation), read


def test_small_spades_and_clubs_are_never_read_as_another_card(reader: IndexReader
                                                               ) -> None:
    """Spades and clubs (a foot each) and the other suits at the smallest scales, in the
    full range (blur, tilt, noise): each frame reads right or is rejected."""
    small = replace(render.FULL, scale=(0.85, 0.9))
    got = [(code, seed, verdict(reader.read(render.render_frame(code, STYLE, small,
                                                                 300 + seed)[0])))
           for code in ("2S", "4C", "AS", "8C", "3D", "5H") for seed in range(6)]
    assert all(v in (code, "REJECT") for code, _s, v in got), got
    assert sum(v == code for code, _s, v in got) >= 32, got

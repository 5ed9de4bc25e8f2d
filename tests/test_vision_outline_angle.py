"""The card's angle from its outline in the frame: the commonest direction of the
outline's chords, then a line fitted to each straight run near it. A chord of 8 steps
along a straight edge points one of two whole-pixel ways (7 and 14 degrees for an edge
at 10), and on a court card whose art reaches the card's edge (ext:paris) the art's
steps at 0 degrees outnumbered either alone: the angle came out 0.5 for cards turned 8
to 12 degrees, the corner crop was turned the wrong way, and the index was not found
("no ink near the corner"; 4 of paris's 16 full-range rejections at bench seed 73001).
The commonest direction of the sides of the outline's convex hull (which spans the
notches) is now a second first guess; each guess is refined by the outline's straight
runs near it, and the one whose runs hold more of the outline wins (where the art cuts
the light face in two, the hull of a piece is mostly the art's and the chords win)."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from shoe_controller.sim import render
from shoe_controller.sim.render import FULL
from shoe_controller.vision.index_glyphs import _outline_angle, find_regions, to_small

#: ext:paris full-range frames of bench/vision.py --seed 73001 whose angle came out 0.5
PARIS = [("JH", 146), ("JS", 295), ("QH", 646), ("QH", 1146)]


def _outline(angle: float, steps: int) -> np.ndarray:
    """The outline (small px, as cv2.findContours gives it) of a 60 x 80 card turned
    ``angle`` degrees, with ``steps`` axis-aligned notches cut into its left side (art
    reaching the card's edge)."""
    mask = np.zeros((120, 160), np.uint8)
    box = cv2.boxPoints(((80.0, 60.0), (60.0, 80.0), angle)).astype(np.int32)
    cv2.fillPoly(mask, [box], 255)
    for k in range(steps):
        y = 35 + 6 * k
        x = int(box[:, 0].min()) + 6 + 4 * (k % 2)
        mask[y:y + 3, x - 8:x + 12] = 0
    contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    return max(contours, key=cv2.contourArea)[:, 0, :].astype(np.float64)


@pytest.mark.parametrize("angle", [-12.0, -10.0, -7.0, 3.0, 10.0, 11.0, 13.0])
def test_a_turned_outline_with_square_notches_gives_its_angle(angle: float) -> None:
    """cv2's rotated rectangle is the reference (angle in its own convention: the
    outline's edges are at ``angle`` degrees either way round)."""
    got = _outline_angle(_outline(angle, 6), 160, 120)
    assert got is not None
    assert abs((got - angle + 45.0) % 90.0 - 45.0) < 1.5, got


@pytest.mark.parametrize(("card", "index"), PARIS)
def test_paris_court_cards_turned_ten_degrees_get_their_angle(card: str, index: int
                                                              ) -> None:
    """The pose the frame was rendered with is the reference."""
    frame, truth = render.render_frame(card, "ext:paris", FULL, 73001 * 1_000_003 + index)
    region = find_regions(to_small(frame), 5000.0, 2, 0.0, ink_share=False)[1][0]
    turned = truth.pose.angle
    assert abs(turned) > 8.0
    # a card upside down is turned by angle + 180: its edges have the same directions
    assert abs((region.angle - turned + 45.0) % 90.0 - 45.0) < 1.5, region.angle


def test_a_face_the_art_cuts_in_two_gets_the_cards_angle_in_both_pieces() -> None:
    """ext:paris's JD, a grey full-range frame (bench/vision_same_reads.py --seed 11):
    the jack's dark cloak crosses the card, and its light face is two regions; the lower
    piece's hull is mostly the cloak's edge (its hull guess was 22 degrees off)."""
    frame, truth = render.render_frame("JD", "ext:paris", FULL, 5000 + 11 + 605, grey=True)
    regions = find_regions(to_small(frame), 5000.0, 2, 0.0, ink_share=False)[1]
    assert len(regions) == 2
    for region in regions:
        assert abs((region.angle - truth.pose.angle + 45.0) % 90.0 - 45.0) < 2.0, (
            region.angle, truth.pose.angle)

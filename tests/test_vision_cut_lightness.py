"""The cut card is told apart by its hue and its lightness, both learned at calibration.

Issue 12: "a plain card of a colour that was not learned is reported as an unknown plain
card (a fault), not as the cut card". Before the profile stored the cut card's
lightness, a white or light-grey plain card read CUT against a dark-grey cut card, and a
dark card against a light one: their chromaticity is the same. Here, for several
designs and cut colours (grey, near-white, near-black, a dark and a light colour), each
learned from its own calibration frames with that cut card:

- plain cards of the cut card's chromaticity but three or more times lighter or
  darker, and plain cards of another hue as light as the cut card, in the full range:
  the unknown-plain-card rejection, never CUT and never nothing;
- the real cut card in the full range, and at both ends of its light (the dimmest and
  the brightest overall brightness with the strongest uneven light): always CUT.

The expected verdicts come from how each frame was drawn (which plain colour, against
which learned one), not from the reader.
"""

from __future__ import annotations

import numpy as np
import pytest

from shoe_controller.sim import render
from shoe_controller.sim.render import CALIBRATION, FULL, Pose
from shoe_controller.vision.index_learn import learn_profile
from shoe_controller.vision.index_reader import CUT_LIGHTNESS, UNKNOWN_PLAIN, IndexReader
from tests.support.vision_decks import calibration_frames

BGR = tuple[int, int, int]

#: (design, cut card colour, plain colours of the same chromaticity far lighter or
#: darker, plain colours of another hue about as light as the cut card)
CASES: tuple[tuple[str, BGR, tuple[BGR, ...], tuple[BGR, ...]], ...] = (
    # a dark-grey cut card: white and light-grey plain cards
    ("classic", (60, 60, 60), ((235, 235, 235), (200, 200, 200)), ((20, 50, 120), (110, 50, 20))),
    # a near-white cut card: near-black plain cards
    ("bookman-dark-cut", (235, 235, 235), ((58, 58, 58), (55, 55, 55)),
     ((60, 200, 250), (250, 160, 60))),
    # the design's own charcoal cut card (hardly lighter than the interior)
    ("bookman-dark-cut", (62, 56, 50), ((236, 213, 190), (205, 185, 165)),
     ((20, 50, 100), (100, 40, 30))),
    # a near-black navy cut card on an external deck: the same blue, light
    ("ext:anglo", (80, 42, 26), ((255, 134, 83), (230, 121, 75)),
     ((30, 50, 75), (40, 70, 40))),
    # a light yellow cut card: a near-black olive plain card of the same hue
    ("ext:tango", (140, 235, 250), ((30, 50, 55), (28, 47, 50)),
     ((240, 200, 140), (220, 110, 230))),
)
#: How far outside the reader's band (``CUT_LIGHTNESS``) the plain cards' lightness is:
#: about as far as the full range's light can take a card (0.4-1.45 of calibration's)
MARGIN = 1.4
#: Of the plain cards' frames, at least this share is the unknown-plain-card fault; the
#: others are another rejection (a near-black card in the dimmest light: "too dim"),
#: never CUT, a card or nothing.
FAULT_SHARE = 0.95
#: Of the cut card's frames (30 in the full range; 10 at either end of its light), at
#: most this many a rejection (a charcoal card in dim light whose noise still reads as
#: faint print), never another verdict.
CUT_REJECTED = 1


def _plain(colour: BGR, style: str) -> render.CardFace:
    return render.draw_plain_face(colour, style)


def _frame(face: render.CardFace, deg: render.Degradation, seed: int,
           pose: Pose | None = None) -> np.ndarray:
    rng = np.random.default_rng([seed, 7331])
    bg = render.empty_background(rng)
    if pose is None:
        pose = render.sample_pose(face, deg, rng)
    return render.degrade(render.compose_frame(face, pose, bg), deg, rng)


def _reader(style: str, cut: BGR) -> IndexReader:
    frames = calibration_frames(style)
    frames["CUT"] = _frame(_plain(cut, style), CALIBRATION, 0, Pose())
    return IndexReader(learn_profile(frames, source=f"{style} cut {cut}"))


def _lightness_ratio(plain: BGR, cut: BGR) -> float:
    return sum(plain) / sum(cut)


@pytest.mark.parametrize(("style", "cut", "other_light", "other_hue"), CASES,
                         ids=[f"{c[0]}-{c[1]}" for c in CASES])
def test_a_plain_card_of_the_cut_cards_hue_but_another_lightness_is_a_fault(
        style: str, cut: BGR, other_light: tuple[BGR, ...], other_hue: tuple[BGR, ...]) -> None:
    lo, hi = CUT_LIGHTNESS
    for colour in other_light:
        # the case is what it says: the same chromaticity, outside the band by a margin
        c, o = np.array(cut, float), np.array(colour, float)
        assert np.abs(c / c.sum() - o / o.sum()).sum() < 0.03
        ratio = _lightness_ratio(colour, cut)
        assert ratio > MARGIN * hi or ratio < lo / MARGIN, ratio
    for colour in other_hue:
        c, o = np.array(cut, float), np.array(colour, float)
        assert np.abs(c / c.sum() - o / o.sum()).sum() > 0.35
    reader = _reader(style, cut)
    faults = total = 0
    for colour in (*other_light, *other_hue):
        for seed in range(15):
            read = reader.read(_frame(_plain(colour, style), FULL, 100 + seed))
            assert read.kind == "reject", (colour, seed, read)
            faults += read.reason.startswith(UNKNOWN_PLAIN)
            total += 1
    assert faults >= FAULT_SHARE * total, (faults, total)
    # the cut card itself: CUT in the full range ...
    rejected = 0
    for seed in range(30):
        read = reader.read(_frame(_plain(cut, style), FULL, 500 + seed))
        assert read.kind in ("cut", "reject"), (cut, seed, read)
        rejected += read.kind == "reject"
    assert rejected <= CUT_REJECTED, rejected
    # ... and at both ends of the full range's light
    strong = render.with_range(FULL, light=(0.45, 0.45))
    for brightness in (0.7, 1.1):
        deg = render.with_range(strong, brightness=(brightness, brightness))
        rejected = 0
        for seed in range(10):
            read = reader.read(_frame(_plain(cut, style), deg, 900 + seed))
            assert read.kind in ("cut", "reject"), (cut, brightness, seed, read)
            rejected += read.kind == "reject"
        # (the near-white cut card in the brightest, most uneven light: once in 10 a
        # speck of its clipped glare counts as print, 0.44 % of it against 0.4 %)
        assert rejected <= CUT_REJECTED, (brightness, rejected)


def test_the_reason_says_the_hue_matched_but_not_the_lightness() -> None:
    """The fault names what differs, so a technician knows which card it was."""
    reader = _reader("classic", (60, 60, 60))
    read = reader.read(_frame(_plain((235, 235, 235), "classic"), render.GUIDED, 3))
    assert read.kind == "reject" and "cut card's hue but" in read.reason, read
    assert "times its lightness" in read.reason

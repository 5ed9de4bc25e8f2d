"""Two ranks of a deck printed alike: a deck whose jack is a B (a German deck's Bube; a
Russian deck's В), much like its 8, at a small index (rank 20 px high at the
calibrated scale). Issue 12: learning must succeed, and a misread must never happen.

This deck learns, but the reader misreads it: an 8H, guided range, read as JH with a
pair margin of 0.58 (and another in the full range, 0.32), among 300 frames of its 8s
and jacks each (`/work/notes/s11/vision/alike_read.py classic:0.6:B 50`: guided 294
right, 5 "rank unclear", 1 wrong; full 292, 6, 1). The views the reader compares with
do not cover what blur makes of an 8 this small (its waist smeared like a B's stem).
Two attempts in session 11 did not fix it and were not landed: the pair decided on a
finer canvas (40 x 60) for ranks learned alike (the guided misread gone, the full one
not: its fine margin 0.58), and on top a margin learned from views between the learned
ones (rejections 2 % -> 11 %, the full-range misread still there). Kept here, marked as
a known failure, so that whoever fixes it sees it pass.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from shoe_controller.sim import render
from shoe_controller.sim.render import CALIBRATION, FULL, GUIDED, Pose
from shoe_controller.vision.index_learn import learn_profile
from shoe_controller.vision.index_reader import IndexReader
from tests.support.vision_decks import verdict

ALIKE = replace(render.design("classic"), rank_texts=(("J", "B"),),
                rank_h=render.design("classic").rank_h * 0.6)


def _frame(face: render.CardFace, deg: render.Degradation, seed: int) -> np.ndarray:
    rng = np.random.default_rng([seed, 4242])
    bg = render.empty_background(rng)
    pose = render.sample_pose(face, deg, rng)
    return render.degrade(render.compose_frame(face, pose, bg), deg, rng)


def _calibration() -> dict[str, np.ndarray]:
    """One view per card at the calibrated pose (and the design's cut card)."""
    out = {}
    for i, code in enumerate((*render.CARD_CODES, "CUT")):
        rng = np.random.default_rng([0, i, 99])
        if code == "CUT":
            img, mask = render._blank_face(ALIKE, ALIKE.cut_colour)
            face = render._finish(img, mask, render.draw_face("AS", ALIKE).index_box)
        else:
            face = render.draw_face(code, ALIKE)
        frame = render.compose_frame(face, Pose(), render.empty_background(rng))
        out[code] = render.degrade(frame, CALIBRATION, rng)
    return out


@pytest.mark.xfail(strict=True, reason="known misread: an 8 read as a J printed B "
                   "(docstring); not fixed in session 11")
def test_an_eight_is_never_read_as_a_jack_printed_b() -> None:
    reader = IndexReader(learn_profile(_calibration()))
    for code in ("8S", "8H", "JS", "JH"):
        face = render.draw_face(code, ALIKE)
        for deg in (GUIDED, FULL):
            for seed in range(50):
                got = verdict(reader.read(_frame(face, deg, seed)))
                assert got in (code, "REJECT"), (code, seed, got)

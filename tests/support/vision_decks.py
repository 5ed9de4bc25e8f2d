"""Calibration frames and learned profiles of the rendered designs, made once per test
session: several vision test files learn the same design from the same frames, and
rendering 53 frames and learning them is most of what those tests cost.

The frames are kept as PNG files in memory (lossless: the same pixels; a third of the
memory) and decoded anew for each caller, so a test may change them; a profile is a
frozen dataclass, and a test that wants another one makes it with
``dataclasses.replace`` or ``Profile.with_camera``.
"""

from __future__ import annotations

from functools import lru_cache

import cv2
import numpy as np

from shoe_controller.sim import render
from shoe_controller.vision.index_learn import learn_profile
from shoe_controller.vision.profile import Profile


@lru_cache(maxsize=8)
def _calibration(style: str) -> tuple[tuple[str, bytes], ...]:
    out = []
    for i, label in enumerate((*render.CARD_CODES, "CUT")):
        frame = render.render_frame(label, style, render.CALIBRATION, seed=i,
                                    pose=render.Pose())[0]
        ok, png = cv2.imencode(".png", frame)
        assert ok
        out.append((label, png.tobytes()))
    return tuple(out)


def calibration_frames(style: str) -> dict[str, np.ndarray]:
    """``{label: frame}``: one calibration frame per card code and ``CUT`` (seed = the
    label's place in the deck, the calibrated pose), new arrays each call."""
    return {label: cv2.imdecode(np.frombuffer(png, np.uint8), cv2.IMREAD_UNCHANGED)
            for label, png in _calibration(style)}


@lru_cache(maxsize=8)
def learned_profile(style: str) -> Profile:
    """The profile learned from :func:`calibration_frames` of ``style``."""
    return learn_profile(calibration_frames(style), source=style)


def verdict(read: object) -> str:
    """A reader's verdict in one word: the card's code, ``REJECT``, ``CUT`` or ``EMPTY``."""
    if read.kind == "card":  # type: ignore[attr-defined]
        return read.card.code  # type: ignore[attr-defined]
    return "REJECT" if read.kind == "reject" else read.kind.upper()  # type: ignore[attr-defined]

"""Calibration frames and learned profiles of the rendered designs, made once per test
session: several vision test files learn the same design from the same frames, and
rendering 53 frames and learning them is most of what those tests cost.

The frames are read-only (a test that changes one works on a copy: ``dict`` of the
frames is the test's own, ``frame.copy()`` for a frame); a profile is a frozen
dataclass, and a test that wants another one makes it with ``dataclasses.replace`` or
``Profile.with_camera``.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from shoe_controller.sim import render
from shoe_controller.vision.index_learn import learn_profile
from shoe_controller.vision.profile import Profile


@lru_cache(maxsize=8)
def _calibration(style: str) -> tuple[tuple[str, np.ndarray], ...]:
    out = []
    for i, label in enumerate((*render.CARD_CODES, "CUT")):
        frame = render.render_frame(label, style, render.CALIBRATION, seed=i,
                                    pose=render.Pose())[0]
        frame.setflags(write=False)
        out.append((label, frame))
    return tuple(out)


def calibration_frames(style: str) -> dict[str, np.ndarray]:
    """``{label: frame}``: one calibration frame per card code and ``CUT`` (seed = the
    label's place in the deck, the calibrated pose), a new dict each call."""
    return dict(_calibration(style))


@lru_cache(maxsize=8)
def learned_profile(style: str) -> Profile:
    """The profile learned from :func:`calibration_frames` of ``style``."""
    return learn_profile(calibration_frames(style), source=style)

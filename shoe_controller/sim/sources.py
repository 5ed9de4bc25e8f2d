"""Synthetic frame sources of the virtual table: scripted card passes drawn by the
renderers (:mod:`shoe_controller.sim.render` for index cards,
:mod:`shoe_controller.sim.barcode_render` for barcode cards).

They behave like the real sources of :mod:`shoe_controller.vision.sources` (same
``(timestamp, frame)`` iteration, pacing and region of interest) so the reader, the pass
tracker and the calibration tools can be driven without a camera.

>>> src = SyntheticSource(["QH"], frames_per_pass=3, gap=1, fps=0)
>>> with src:
...     frames = [f for _t, f in src]
>>> len(frames), frames[0].shape
(4, (480, 640, 3))
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import cv2
import numpy as np

from shoe_controller.vision.sources import _Paced

__all__ = ["SyntheticSource", "index_pass"]



class SyntheticSource(_Paced):
    """Frames of a scripted sequence of card passes, drawn by the renderers.

    ``script`` items: a card code (``QH``), ``CUT``, or ``NONE`` (an empty stretch);
    with ``barcode=True`` an item is a barcode payload (``D1-QH``, ``CUT``, anything;
    ``PLAIN`` is a card with no code at all).
    Each card item gives ``frames_per_pass`` frames of the card sliding through the
    window along the dealing axis, then ``gap`` empty frames. ``exits`` lists the
    timestamp at which each card would trip the card-exit sensor (the end of its pass).
    Deterministic for a given ``seed``.
    """

    name = "synthetic"

    def __init__(
        self,
        script: Iterable[str],
        *,
        style: str = "classic",
        barcode: bool = False,
        degradation: Any = None,
        frames_per_pass: int = 8,
        gap: int = 3,
        seed: int = 0,
        fps: float = 60.0,
        upside_down: float = 0.5,
        on_pass_end: Callable[[str], None] | None = None,
        **kw: Any,
    ) -> None:
        super().__init__(fps=fps, **kw)
        #: Called with the item after the last frame of each card's pass was taken (a
        #: simulated exit sensor hooks in here).
        self.on_pass_end = on_pass_end
        self.script = list(script)
        if not barcode:
            from shoe_controller.game.cards import parse_card

            for item in self.script:  # a bad script fails here, naming the item
                if item.upper() not in ("CUT", "NONE"):
                    parse_card(item)
        self.style = style
        self.barcode = barcode
        self.degradation = degradation
        self.frames_per_pass = frames_per_pass
        self.gap = gap
        self.seed = seed
        self.upside_down = upside_down
        self.exits: list[float] = []
        #: A simulated lens: frames are defocused by ``|focus - in_focus|`` (sigma, px).
        self.in_focus = 5.0
        self.focus: float | None = None
        #: A simulated sensor: exposure E multiplies the light by E / 100.
        self.exposure: float | None = None

    def set_controls(self, *, exposure: float | None = None, focus: float | None = None) -> bool:
        if focus is not None:
            self.focus = focus
        if exposure is not None:
            self.exposure = exposure
        return True

    def _raw(self) -> Iterator[np.ndarray]:
        for frame in self._scripted():
            if self.focus is not None and abs(self.focus - self.in_focus) > 0.05:
                frame = cv2.GaussianBlur(frame, (0, 0), abs(self.focus - self.in_focus))
            if self.exposure is not None and self.exposure != 100:
                frame = cv2.convertScaleAbs(frame, alpha=self.exposure / 100)
            yield frame

    def _scripted(self) -> Iterator[np.ndarray]:
        rng = np.random.default_rng(self.seed)
        self.exits = []
        i = 0
        for item in self.script:
            if item.upper() == "NONE":
                passes: Iterable[np.ndarray] = []
            elif self.barcode:
                passes = self._barcode_pass(item, rng)
            else:
                passes = index_pass(
                    item,
                    rng,
                    self.frames_per_pass,
                    style=self.style,
                    degradation=self.degradation,
                    upside_down=self.upside_down,
                )
            for frame in passes:
                i += 1
                yield frame
            if item.upper() != "NONE":
                if self.fps:
                    self.exits.append(self.start + (i - 0.5) / self.fps)
                if self.on_pass_end is not None:
                    self.on_pass_end(item)
            for frame in self._empties(rng):
                i += 1
                yield frame

    def _empties(self, rng: np.random.Generator) -> Iterator[np.ndarray]:
        if self.barcode:
            from shoe_controller.sim.barcode_render import empty_frame

            for _ in range(self.gap):
                yield empty_frame(rng)
            return
        from shoe_controller.sim import render

        deg = self.degradation or render.GUIDED
        for _ in range(self.gap):
            yield render.degrade(render.empty_background(rng), deg, rng)

    def _barcode_pass(self, payload: str, rng: np.random.Generator) -> Iterator[np.ndarray]:
        from shoe_controller.sim import barcode_render as br

        face = br.plain_face() if payload.upper() == "PLAIN" else br.barcode_face(payload)
        yield from br.pass_frames(
            face,
            rng,
            self.frames_per_pass,
            self.degradation or br.GUIDED,
            upside_down=bool(rng.random() < self.upside_down),
        )


def index_pass(
    label: str,
    rng: np.random.Generator,
    n_frames: int = 8,
    *,
    style: str = "classic",
    degradation: Any = None,
    upside_down: float = 0.5,
) -> Iterator[np.ndarray]:
    """Frames of one card (``QH``) or the cut card (``CUT``) sliding along the dealing
    axis (x) with its index in view, drawn by :mod:`shoe_controller.sim.render`."""
    from shoe_controller.sim import render

    deg = degradation or render.GUIDED
    if label.upper() == "CUT":
        face = render.draw_cut_face(style)
    else:
        from shoe_controller.game.cards import parse_card

        face = render.draw_card_face(parse_card(label).code, style)
    pose = render.sample_pose(face, deg, rng)
    pose = render.Pose(pose.centre, bool(rng.random() < upside_down), pose.angle, pose.scale)
    xs = [x for x in np.linspace(40, render.FRAME_W - 40, 48) if _index_in_view(face, pose, x)]
    if not xs:
        xs = [pose.centre[0]]
    # The stretch of the window where the index is in view, crossed in n_frames steps.
    lo, hi = min(xs), max(xs)
    for k in range(n_frames):
        x = lo + (hi - lo) * (k + 0.5) / n_frames
        p = render.Pose((float(x), pose.centre[1]), pose.upside_down, pose.angle, pose.scale)
        frame = render.compose_frame(face, p, render.empty_background(rng))
        yield render.degrade(frame, deg, rng)


def _index_in_view(face: Any, pose: Any, x: float, margin: float = 3.0) -> bool:
    """Whether the face's index box is inside the frame with the index centre at ``x``."""
    from shoe_controller.sim import render

    x0, y0, x1, y1 = face.index_box
    icx, icy = (x0 + x1) / 2, (y0 + y1) / 2
    a = math.radians(pose.angle + (180.0 if pose.upside_down else 0.0))
    c, s = math.cos(a) * pose.scale, math.sin(a) * pose.scale
    for bx, by in ((x0, y0), (x1, y0), (x0, y1), (x1, y1)):
        fx = x + c * (bx - icx) - s * (by - icy)
        fy = pose.centre[1] + s * (bx - icx) + c * (by - icy)
        if not (margin <= fx <= render.FRAME_W - 1 - margin):
            return False
        if not (margin <= fy <= render.FRAME_H - 1 - margin):
            return False
    return True



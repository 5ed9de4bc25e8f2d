"""The synthetic camera of `simulate --reader barcode|index`: a live frame source.

The virtual dealer calls :meth:`SyntheticCamera.show` for each card it deals; the
camera thread renders that card's pass (VISION's renderers: the index faces of
sim/render.py or the barcode cards of sim/barcode_render.py), runs every frame
through the REAL reader (vision/reader.py) and pass tracker (vision/passes.py), and
only then trips the shoe's exit sensor (``then``: the device simulator's card_exit),
as a real card does: it crosses the window before it leaves the shoe. Between passes
it shows the empty shoe window a few times a second, like an idle camera.

The index reader needs a calibration profile; the camera learns one at start from the
renderer's calibration frames of its card style (VISION's learner), which takes a few
seconds: `--reader scanner` (the default) keeps simulate fast.
"""

from __future__ import annotations

import logging
import queue
import time
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from shoe_controller.daemon_inputs import CameraInput

__all__ = ["SyntheticCamera"]

log = logging.getLogger("shoe_controller.sim.camera")

#: Seconds between empty frames while no card passes.
IDLE_FRAME_S = 0.05
#: Seconds of empty window after a card's exit before the next card's pass.
SETTLE_S = 0.1


class SyntheticCamera(CameraInput):
    """A CameraInput whose frames are rendered on demand."""

    def __init__(self, reader: Any, tracker: Any, *, barcode: bool, style: str = "classic",
                 frames_per_pass: int = 6, seed: int = 0) -> None:
        self.barcode = barcode
        self.style = style
        self.frames_per_pass = frames_per_pass
        self.rng = np.random.default_rng(seed)
        self.passes: queue.Queue[tuple[str, Callable[[], None] | None]] = queue.Queue()
        self._empty = self._empty_frame()
        super().__init__(self._live, reader, tracker)

    @classmethod
    def for_reader(cls, reader: str, seed: int = 0) -> SyntheticCamera:
        """The camera with the configured reader: ``barcode`` or ``index``."""
        from shoe_controller.vision.config import BarcodeConfig, VisionConfig
        from shoe_controller.vision.passes import PassTracker
        from shoe_controller.vision.reader import build_reader

        vision = VisionConfig(reader=reader)  # type: ignore[arg-type]
        profile = _learned_profile("classic") if reader == "index" else None
        frame_reader = build_reader(vision, BarcodeConfig(), profile=profile)
        tracker = PassTracker.from_config(vision, sensor=True, source=reader)
        return cls(frame_reader, tracker, barcode=reader == "barcode", seed=seed)

    def show(self, label: str, then: Callable[[], None] | None = None) -> None:
        """Pass ``label`` (a card code, ``CUT``, ``UNREADABLE``, ``FOREIGN:<payload>``)
        through the window, then call ``then`` (the exit sensor)."""
        self.passes.put((label, then))

    # -- rendering ---------------------------------------------------------------------

    def _empty_frame(self) -> np.ndarray:
        if self.barcode:
            from shoe_controller.sim.barcode_render import empty_frame

            return empty_frame(self.rng)
        from shoe_controller.sim import render

        return render.degrade(render.empty_background(self.rng), render.GUIDED, self.rng)

    def _pass(self, label: str) -> Iterator[np.ndarray]:
        if label == "UNREADABLE":
            # A card too blurred to read: the reader must reject it, never guess.
            for frame in self._pass_of("QS" if not self.barcode else "D1-QS"):
                yield _smear(frame)
            return
        if label.startswith("FOREIGN:"):
            payload = label.split(":", 1)[1]
            if self.barcode:
                yield from self._pass_of(payload)
            else:  # an index camera cannot read a foreign barcode; show a plain card
                yield from self._pass_of("CUT")
            return
        if self.barcode and label != "CUT":
            label = f"D1-{label}"
        yield from self._pass_of(label)

    def _pass_of(self, item: str) -> Iterator[np.ndarray]:
        if self.barcode:
            from shoe_controller.sim import barcode_render as br

            face = br.barcode_face(item)
            yield from br.pass_frames(face, self.rng, self.frames_per_pass, br.GUIDED,
                                      upside_down=bool(self.rng.random() < 0.5))
        else:
            from shoe_controller.sim.sources import index_pass

            yield from index_pass(item, self.rng, self.frames_per_pass, style=self.style)

    def _live(self) -> Iterator[tuple[float, Any]]:
        while not self._stop.is_set():
            try:
                label, then = self.passes.get(timeout=IDLE_FRAME_S)
            except queue.Empty:
                yield time.monotonic(), self._empty
                continue
            for frame in self._pass(label):
                yield time.monotonic(), frame
            yield time.monotonic(), self._empty
            if then is not None:
                then()
            # The next card cannot cross the window in the same instant: an empty window
            # for a moment (longer than the tracker's exit grace) before the next pass.
            settle = time.monotonic() + SETTLE_S
            while time.monotonic() < settle and not self._stop.is_set():
                time.sleep(0.02)
                yield time.monotonic(), self._empty


def _smear(frame: np.ndarray) -> np.ndarray:
    import cv2

    return cv2.GaussianBlur(frame, (0, 0), 9)


def _learned_profile(style: str) -> Any:
    """A calibration profile learned from the renderer's calibration frames of ``style``."""
    from shoe_controller.game.cards import ALL_CARDS
    from shoe_controller.sim import render
    from shoe_controller.vision.index_learn import learn_profile

    t0 = time.monotonic()
    frames = {label: render.render_frame(label, style, render.CALIBRATION, seed=i,
                                         pose=render.Pose())[0]
              for i, label in enumerate([c.code for c in ALL_CARDS] + ["CUT"])}
    profile = learn_profile(frames, source=f"simulate: rendered {style} deck")
    log.info("learned a %s profile in %.1f s", style, time.monotonic() - t0)
    return profile

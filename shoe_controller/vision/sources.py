"""Frame sources: where camera frames come from. Each yields ``(timestamp, frame)``.

- :class:`UsbCamera`: a USB (UVC) camera through OpenCV's V4L2 backend, with a one-frame
  buffer so a read is the newest frame, not one queued behind a slow reader;
- :class:`PiCamera`: the Raspberry Pi camera through picamera2 (installed from apt on the
  Pi; imported only when this source is opened);
- :class:`FolderSource` and :class:`VideoSource`: replay a folder of images or a video
  file, for tests, evaluation and investigating a recorded incident;
- :class:`SyntheticSource`: frames of a scripted card sequence, drawn by the renderer
  (index cards) or :mod:`~shoe_controller.sim.barcode_render` (barcode cards).

Timestamps are ``time.monotonic()`` seconds, the clock the pass tracker and the card-exit
sensor events share; replay sources with a frame rate stamp ``start + i / fps`` so a
replay's passes come out the same every time. Frames are 8-bit BGR (or grey), cropped
to the configured region of interest.

>>> import tempfile, cv2, numpy as np
>>> d = tempfile.mkdtemp()
>>> for i in range(3):
...     _ = cv2.imwrite(f"{d}/{i:03d}.png", np.full((48, 64, 3), 10 * i, np.uint8))
>>> with FolderSource(d, fps=30) as src:
...     [(round(t - src.start, 3), int(f[0, 0, 0])) for t, f in src]
[(0.0, 0), (0.033, 10), (0.067, 20)]
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from shoe_controller.vision.config import CameraConfig

__all__ = [
    "IMAGE_SUFFIXES",
    "CameraError",
    "FolderSource",
    "FrameSource",
    "PiCamera",
    "SyntheticSource",
    "UsbCamera",
    "VideoSource",
    "crop",
    "open_source",
]

Frame = tuple[float, np.ndarray]
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".bmp", ".tif", ".tiff", ".webp", ".pgm", ".ppm")


class CameraError(RuntimeError):
    """A source that cannot be opened or stopped delivering: says which and what to check."""


def crop(frame: np.ndarray, roi: Sequence[int] | None) -> np.ndarray:
    """The region of interest ``(x, y, width, height)`` of ``frame`` (a view, no copy).

    >>> crop(np.zeros((480, 640), np.uint8), (100, 50, 200, 120)).shape
    (120, 200)
    """
    if roi is None:
        return frame
    x, y, w, h = roi
    return frame[y : y + h, x : x + w]


class FrameSource:
    """Base of all sources: a context manager and an iterator of ``(t, frame)``."""

    name = "source"

    def __init__(self, roi: Sequence[int] | None = None) -> None:
        self.roi = tuple(roi) if roi is not None else None
        self.start = 0.0
        self.frames_read = 0

    def open(self) -> None:
        """Acquire the device or file; raise :class:`CameraError` saying what to check."""

    def close(self) -> None:
        """Release the device or file (idempotent)."""

    def _frames(self) -> Iterator[Frame]:
        raise NotImplementedError

    def frames(self) -> Iterator[Frame]:
        """The frames, each cropped to the region of interest."""
        for t, frame in self._frames():
            self.frames_read += 1
            if self.roi is not None:
                x, y, w, h = self.roi
                if x + w > frame.shape[1] or y + h > frame.shape[0]:
                    raise CameraError(
                        f"[camera] roi {list(self.roi)} lies outside the "
                        f"{frame.shape[1]}x{frame.shape[0]} frames of this source"
                    )
            yield t, crop(frame, self.roi)

    def __iter__(self) -> Iterator[Frame]:
        return self.frames()

    def __enter__(self) -> FrameSource:
        self.open()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def set_controls(self, *, exposure: float | None = None, focus: float | None = None) -> bool:
        """Set manual exposure/focus while running; False if this source has no such control."""
        return False


# --------------------------------------------------------------------------- cameras


class UsbCamera(FrameSource):
    """A V4L2 camera (``/dev/video0``, or an index such as ``0``)."""

    name = "usb"
    #: Consecutive failed reads before the camera counts as lost.
    max_failures = 10

    def __init__(
        self,
        device: str | int = "/dev/video0",
        *,
        width: int = 640,
        height: int = 480,
        fps: float = 60.0,
        exposure: float | None = None,
        focus: float | None = None,
        roi: Sequence[int] | None = None,
    ) -> None:
        super().__init__(roi)
        self.device = int(device) if isinstance(device, str) and device.isdigit() else device
        self.width, self.height, self.fps = width, height, fps
        self.exposure, self.focus = exposure, focus
        self._cap: Any = None

    def open(self) -> None:
        dev = self.device
        if isinstance(dev, str) and not Path(dev).exists():
            raise CameraError(
                f"USB camera {dev}: no such device. Check the cable, `ls /dev/video*`, "
                "and the udev rule if you use a stable name"
            )
        cap = cv2.VideoCapture(dev, cv2.CAP_V4L2)
        if not cap.isOpened():
            cap.release()
            raise CameraError(
                f"USB camera {dev}: cannot open it. Check that no other program holds it "
                f"(`fuser {dev}`), that this user is in the 'video' group, and that it is a "
                "capture device (`v4l2-ctl --list-devices`)"
            )
        cap.set(cv2.CAP_PROP_BUFFERSIZE, 1)  # the newest frame, not a queued old one
        cap.set(cv2.CAP_PROP_FOURCC, cv2.VideoWriter_fourcc(*"MJPG"))
        cap.set(cv2.CAP_PROP_FRAME_WIDTH, self.width)
        cap.set(cv2.CAP_PROP_FRAME_HEIGHT, self.height)
        if self.fps:
            cap.set(cv2.CAP_PROP_FPS, self.fps)
        self._cap = cap
        self.set_controls(exposure=self.exposure, focus=self.focus)
        got = (int(cap.get(cv2.CAP_PROP_FRAME_WIDTH)), int(cap.get(cv2.CAP_PROP_FRAME_HEIGHT)))
        if got != (self.width, self.height):
            self.close()
            raise CameraError(
                f"USB camera {dev}: asked for {self.width}x{self.height}, the camera gives "
                f"{got[0]}x{got[1]}; set [camera] width/height to a mode it supports "
                "(`v4l2-ctl --list-formats-ext`)"
            )
        self.start = time.monotonic()

    def set_controls(self, *, exposure: float | None = None, focus: float | None = None) -> bool:
        self.exposure = exposure if exposure is not None else self.exposure
        self.focus = focus if focus is not None else self.focus
        cap = self._cap
        if cap is None:
            return False
        ok = True
        if exposure is not None:
            cap.set(cv2.CAP_PROP_AUTO_EXPOSURE, 1)  # V4L2: 1 = manual
            ok &= bool(cap.set(cv2.CAP_PROP_EXPOSURE, exposure))
        if focus is not None:
            cap.set(cv2.CAP_PROP_AUTOFOCUS, 0)
            ok &= bool(cap.set(cv2.CAP_PROP_FOCUS, focus))
        return ok

    def _frames(self) -> Iterator[Frame]:
        if self._cap is None:
            self.open()
        failures = 0
        while self._cap is not None:
            ok, frame = self._cap.read()
            t = time.monotonic()
            if not ok or frame is None:
                failures += 1
                if failures >= self.max_failures:
                    self.close()  # release the device so a retry can open it again
                    raise CameraError(
                        f"USB camera {self.device}: {failures} reads in a row failed; "
                        "the camera was unplugged or stopped (check the cable and `dmesg`)"
                    )
                continue
            failures = 0
            yield t, frame

    def close(self) -> None:
        if self._cap is not None:
            self._cap.release()
            self._cap = None


class PiCamera(FrameSource):
    """The Raspberry Pi camera (libcamera) through picamera2."""

    name = "picamera"

    def __init__(
        self,
        *,
        width: int = 640,
        height: int = 480,
        fps: float = 60.0,
        exposure: float | None = None,
        focus: float | None = None,
        roi: Sequence[int] | None = None,
    ) -> None:
        super().__init__(roi)
        self.width, self.height, self.fps = width, height, fps
        self.exposure, self.focus = exposure, focus
        self._cam: Any = None

    def open(self) -> None:
        try:
            from picamera2 import Picamera2  # type: ignore[import-not-found]
        except ImportError as exc:
            raise CameraError(
                "Pi camera: the picamera2 module is not importable. On Raspberry Pi OS run "
                "`sudo apt install python3-picamera2` and create the venv with "
                '--system-site-packages; elsewhere use [camera] source = "usb"'
            ) from exc
        try:
            cam = Picamera2()
            config = cam.create_video_configuration(
                main={"size": (self.width, self.height), "format": "RGB888"},
                buffer_count=2,
                controls={"FrameRate": float(self.fps)} if self.fps else {},
            )
            cam.configure(config)
            cam.start()
        except Exception as exc:  # libcamera reports many kinds of failure
            raise CameraError(
                f"Pi camera: cannot start it ({exc}). Check the ribbon cable, "
                "`rpicam-hello --list-cameras`, and that no other program uses the camera"
            ) from exc
        self._cam = cam
        self.set_controls(exposure=self.exposure, focus=self.focus)
        self.start = time.monotonic()

    def set_controls(self, *, exposure: float | None = None, focus: float | None = None) -> bool:
        self.exposure = exposure if exposure is not None else self.exposure
        self.focus = focus if focus is not None else self.focus
        if self._cam is None:
            return False
        controls: dict[str, Any] = {}
        if exposure is not None:
            controls |= {"AeEnable": False, "ExposureTime": int(exposure)}
        if focus is not None:
            controls |= {"AfMode": 0, "LensPosition": float(focus)}  # 0 = manual
        if controls:
            self._cam.set_controls(controls)
        return True

    def _frames(self) -> Iterator[Frame]:
        if self._cam is None:
            self.open()
        while self._cam is not None:
            # picamera2's "RGB888" is B, G, R in memory: OpenCV's order already.
            try:
                frame = self._cam.capture_array("main")
            except Exception as exc:  # libcamera errors have no common base class
                self.close()
                raise CameraError(f"Pi camera: capture failed ({exc}); check the cable") from exc
            yield time.monotonic(), frame

    def close(self) -> None:
        if self._cam is not None:
            try:
                self._cam.stop()
                self._cam.close()
            finally:
                self._cam = None


# --------------------------------------------------------------------------- replay


class _Paced(FrameSource):
    """Timestamps ``start + i / fps`` (or the clock when fps is 0); optional real time."""

    def __init__(
        self,
        *,
        fps: float = 0.0,
        realtime: bool = False,
        loop: bool = False,
        roi: Sequence[int] | None = None,
    ) -> None:
        super().__init__(roi)
        self.fps, self.realtime, self.loop = fps, realtime, loop

    def _raw(self) -> Iterator[np.ndarray]:
        raise NotImplementedError

    def _frames(self) -> Iterator[Frame]:
        self.start = time.monotonic()
        i = 0
        while True:
            produced = False
            for frame in self._raw():
                produced = True
                if self.fps > 0:
                    t = self.start + i / self.fps
                    if self.realtime:
                        delay = t - time.monotonic()
                        if delay > 0:
                            time.sleep(delay)
                else:
                    t = time.monotonic()
                i += 1
                yield t, frame
            if not (self.loop and produced):
                return


class FolderSource(_Paced):
    """The images of a folder, in file-name order."""

    name = "folder"

    def __init__(self, path: str | Path, *, grey: bool = False, **kw: Any) -> None:
        super().__init__(**kw)
        self.path = Path(path)
        self.grey = grey
        self.files: list[Path] = []

    def open(self) -> None:
        if not self.path.is_dir():
            raise CameraError(f"frame folder {self.path}: no such folder")
        self.files = sorted(
            p for p in self.path.iterdir() if p.suffix.lower() in IMAGE_SUFFIXES and p.is_file()
        )
        if not self.files:
            raise CameraError(
                f"frame folder {self.path}: no images in it ({', '.join(IMAGE_SUFFIXES)})"
            )
        self.start = time.monotonic()

    def _raw(self) -> Iterator[np.ndarray]:
        if not self.files:
            self.open()
        flag = cv2.IMREAD_GRAYSCALE if self.grey else cv2.IMREAD_COLOR
        for path in self.files:
            frame = cv2.imread(str(path), flag)
            if frame is None:
                raise CameraError(f"frame folder {self.path}: {path.name} is not a readable image")
            yield frame


class VideoSource(_Paced):
    """The frames of a video file (any format FFmpeg reads)."""

    name = "video"

    def __init__(self, path: str | Path, **kw: Any) -> None:
        super().__init__(**kw)
        self.path = Path(path)
        self._cap: Any = None

    def open(self) -> None:
        if not self.path.is_file():
            raise CameraError(f"video {self.path}: no such file")
        cap = cv2.VideoCapture(str(self.path), cv2.CAP_FFMPEG)
        if not cap.isOpened():
            cap.release()
            raise CameraError(f"video {self.path}: cannot decode it (not a video FFmpeg reads)")
        if not self.fps:
            self.fps = float(cap.get(cv2.CAP_PROP_FPS) or 0.0)
        self._cap = cap
        self.start = time.monotonic()

    def _raw(self) -> Iterator[np.ndarray]:
        if self._cap is None:
            self.open()
        self._cap.set(cv2.CAP_PROP_POS_FRAMES, 0)
        while True:
            ok, frame = self._cap.read()
            if not ok:
                return
            yield frame

    def close(self) -> None:
        if self._cap is not None:
            self._cap.release()
            self._cap = None


# --------------------------------------------------------------------------- synthetic


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


# --------------------------------------------------------------------------- factory


def open_source(
    config: CameraConfig,
    *,
    script: Iterable[str] = (),
    barcode: bool = False,
    frames_per_pass: int = 8,
) -> FrameSource:
    """The source ``[camera]`` describes (not yet opened: use it as a context manager).

    >>> open_source(CameraConfig(source="folder", device="/nonexistent")).open()
    Traceback (most recent call last):
    ...
    shoe_controller.vision.sources.CameraError: frame folder /nonexistent: no such folder
    """
    c = config
    if c.source == "usb":
        return UsbCamera(
            c.device,
            width=c.width,
            height=c.height,
            fps=c.fps,
            exposure=c.exposure,
            focus=c.focus,
            roi=c.roi,
        )
    if c.source == "picamera":
        return PiCamera(
            width=c.width,
            height=c.height,
            fps=c.fps,
            exposure=c.exposure,
            focus=c.focus,
            roi=c.roi,
        )
    paced = {"fps": c.fps, "realtime": c.realtime, "loop": c.loop, "roi": c.roi}
    if c.source == "folder":
        return FolderSource(c.device, **paced)
    if c.source == "video":
        return VideoSource(c.device, **paced)
    return SyntheticSource(script, barcode=barcode, frames_per_pass=frames_per_pass, **paced)

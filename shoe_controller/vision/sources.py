"""Frame sources: where camera frames come from. Each yields ``(timestamp, frame)``.

- :class:`UsbCamera`: a USB (UVC) camera through OpenCV's V4L2 backend, with a one-frame
  buffer so a read is the newest frame, not one queued behind a slow reader;
- :class:`PiCamera`: the Raspberry Pi camera through picamera2 (installed from apt on the
  Pi; imported only when this source is opened);
- :class:`FolderSource` and :class:`VideoSource`: replay a folder of images or a video
  file, for tests, evaluation and investigating a recorded incident;
- ``synthetic``: :class:`shoe_controller.sim.sources.SyntheticSource` (the virtual
  table's rendered frames; it lives in ``sim/`` and is imported only when asked for).

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

import time
from collections.abc import Iterable, Iterator, Sequence
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
    from shoe_controller.sim.sources import SyntheticSource

    return SyntheticSource(script, barcode=barcode, frames_per_pass=frames_per_pass, **paced)

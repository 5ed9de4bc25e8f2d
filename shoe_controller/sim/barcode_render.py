"""Synthetic barcode cards in camera frames, for tests, benchmarks and ``simulate``.

A barcode card is a light card face with the payload's code (zxing-cpp draws it) in the
middle; a frame is that face placed in the dark shoe window like a camera sees it:
anywhere in the frame, upright or upside down, turned, scaled, and degraded by motion
blur along the dealing axis, defocus, uneven light, a colour cast, sensor noise and
JPEG. Seeded and deterministic: the same seed gives the same frames.

The code's bars run along the dealing axis (the frame's y axis here), so motion blur
smears along the bars rather than across them -- the way a reader camera is mounted.

>>> rng = np.random.default_rng(7)
>>> frame = barcode_frame("D1-QH", rng, GUIDED)
>>> frame.shape, frame.dtype
((480, 640, 3), dtype('uint8'))
>>> from shoe_controller.vision.barcode import BarcodeReader
>>> BarcodeReader().read(frame).card
Card('QH')
"""

from __future__ import annotations

import csv
import math
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

__all__ = [
    "CLEAN",
    "FULL",
    "GUIDED",
    "Degradation",
    "DegradationRange",
    "barcode_face",
    "barcode_frame",
    "compose",
    "empty_frame",
    "pass_frames",
    "plain_face",
    "write_labelled_set",
]

FRAME_SIZE = (640, 480)
CARD_SIZE = (240, 340)  # width, height in pixels at the calibrated scale


@dataclass(frozen=True, slots=True)
class Degradation:
    """How one frame departs from a perfect view of the card."""

    angle_deg: float = 0.0  # from upright (or from upside down)
    scale: float = 1.0
    motion_px: float = 0.0  # motion blur length along the dealing axis (y)
    defocus_sigma: float = 0.0
    light_gradient: float = 0.0  # 0 = even light; 0.4 = +-40 % across the frame
    light_angle: float = 0.0
    colour_cast: tuple[float, float, float] = (1.0, 1.0, 1.0)  # B, G, R gains
    noise_sigma: float = 0.0
    jpeg_quality: int | None = None
    brightness: float = 1.0


@dataclass(frozen=True, slots=True)
class DegradationRange:
    """Bounds each degradation is drawn from, uniformly."""

    name: str
    angle_deg: float
    scale: tuple[float, float]
    motion_px: tuple[float, float]
    defocus_sigma: tuple[float, float]
    light_gradient: tuple[float, float]
    colour_cast: float
    noise_sigma: tuple[float, float]
    jpeg_quality: tuple[int, int] | None
    brightness: tuple[float, float]

    def sample(self, rng: np.random.Generator) -> Degradation:
        """One degradation drawn from the range."""

        def u(lo_hi: tuple[float, float]) -> float:
            return float(rng.uniform(*lo_hi))

        c = self.colour_cast
        return Degradation(
            angle_deg=float(rng.uniform(-self.angle_deg, self.angle_deg)),
            scale=u(self.scale),
            motion_px=u(self.motion_px),
            defocus_sigma=u(self.defocus_sigma),
            light_gradient=u(self.light_gradient),
            light_angle=float(rng.uniform(0, 2 * math.pi)),
            colour_cast=tuple(float(g) for g in rng.uniform(1 - c, 1 + c, 3)),  # type: ignore[arg-type]
            noise_sigma=u(self.noise_sigma),
            jpeg_quality=None
            if self.jpeg_quality is None
            else int(rng.integers(self.jpeg_quality[0], self.jpeg_quality[1] + 1)),
            brightness=u(self.brightness),
        )


#: A clean code: near square to the camera, at scale, a little noise, good JPEG.
CLEAN = DegradationRange(
    "clean", 2.0, (0.97, 1.03), (0, 0), (0, 0.3), (0, 0.1), 0.05, (0, 2), (90, 95), (0.95, 1.05)
)
#: A guided card in a shoe: within 4 degrees, 0.95-1.05 scale, realistic blur and light.
GUIDED = DegradationRange(
    "guided", 4.0, (0.95, 1.05), (0, 6), (0, 0.8), (0, 0.25), 0.1, (0, 4), (75, 95), (0.85, 1.1)
)
#: The whole range of DESIGN.md: 15 degrees, 0.85-1.15 scale, heavy blur, light, noise, JPEG.
FULL = DegradationRange(
    "full", 15.0, (0.85, 1.15), (0, 14), (0, 1.6), (0, 0.4), 0.15, (0, 8), (50, 95), (0.7, 1.15)
)


def barcode_face(
    payload: str, symbology: str = "Code128", module_px: int = 2, tint: int = 236
) -> np.ndarray:
    """A BGR card face (``CARD_SIZE``) with ``payload``'s code across its middle.

    >>> barcode_face("CUT").shape
    (340, 240, 3)
    """
    import zxingcpp

    w, h = CARD_SIZE
    face = np.full((h, w, 3), tint, np.uint8)
    code = zxingcpp.create_barcode(payload, getattr(zxingcpp.BarcodeFormat, symbology))
    img = np.asarray(code.to_image(scale=module_px, add_quiet_zones=True))
    linear = img.shape[0] <= 2 * module_px + 1 or symbology not in _MATRIX
    if linear:
        img = cv2.resize(img[:1], (img.shape[1], 90), interpolation=cv2.INTER_NEAREST)
    if img.shape[1] > w - 8:
        raise ValueError(f"payload {payload!r} is too long for a card at {module_px} px/module")
    ih, iw = img.shape
    y0, x0 = (h - ih) // 2, (w - iw) // 2
    region = face[y0 : y0 + ih, x0 : x0 + iw]
    region[:] = np.minimum(region, img[..., None])
    cv2.rectangle(face, (2, 2), (w - 3, h - 3), (200, 200, 200), 2)
    cv2.putText(face, payload, (x0, y0 - 10), cv2.FONT_HERSHEY_SIMPLEX, 0.6, (60, 60, 60), 1)
    return face


_MATRIX = {"QRCode", "MicroQRCode", "DataMatrix", "Aztec", "PDF417"}


def plain_face(bgr: tuple[int, int, int] = (40, 60, 200)) -> np.ndarray:
    """A plain coloured plastic card (a cut card without a code)."""
    w, h = CARD_SIZE
    return np.full((h, w, 3), bgr, np.uint8)


def _noise(rng: np.random.Generator, shape: tuple[int, ...], sigma: float) -> np.ndarray:
    """Gaussian noise, fast (OpenCV's generator, seeded from ``rng``: deterministic)."""
    out = np.empty(shape, np.float32)
    cv2.setRNGSeed(int(rng.integers(0, 2**31 - 1)))
    cv2.randn(out, 0.0, sigma)
    return out


_W, _H = FRAME_SIZE
_YS, _XS = (a.astype(np.float32) for a in np.mgrid[0:_H, 0:_W])


def empty_frame(rng: np.random.Generator, level: int = 28) -> np.ndarray:
    """The dark shoe interior, with a little texture and noise."""
    w, h = FRAME_SIZE
    base = _noise(rng, (h, w), 3.0) + level
    return cv2.cvtColor(np.clip(base, 0, 255).astype(np.uint8), cv2.COLOR_GRAY2BGR)


def compose(
    face: np.ndarray,
    rng: np.random.Generator,
    degradation: Degradation = Degradation(),
    *,
    upside_down: bool = False,
    centre: tuple[float, float] | None = None,
    background: np.ndarray | None = None,
) -> np.ndarray:
    """Place ``face`` in a frame and apply ``degradation``: what the camera would see.

    ``centre`` (x, y) of the card in the frame; default: anywhere the whole face fits.
    """
    w, h = FRAME_SIZE
    fh, fw = face.shape[:2]
    d = degradation
    if centre is None:
        rx, ry = fw * d.scale / 2 + 4, fh * d.scale / 2 + 4
        centre = (float(rng.uniform(rx, w - rx)), float(rng.uniform(ry, h - ry)))
    angle = d.angle_deg + (180.0 if upside_down else 0.0)
    m = cv2.getRotationMatrix2D((fw / 2, fh / 2), angle, d.scale)
    m[0, 2] += centre[0] - fw / 2
    m[1, 2] += centre[1] - fh / 2
    back = background if background is not None else empty_frame(rng)
    # Draw the face over the background; the border pixels are blended by the warped mask.
    frame = cv2.warpAffine(
        face,
        m,
        (w, h),
        dst=back.copy(),
        flags=cv2.INTER_LINEAR,
        borderMode=cv2.BORDER_TRANSPARENT,
    ).astype(np.float32)
    if d.motion_px >= 1:
        n = max(1, round(d.motion_px))
        kernel = np.full((n, 1), 1.0 / n, np.float32)  # along y: the dealing axis
        frame = cv2.filter2D(frame, -1, kernel)
    if d.defocus_sigma > 0.05:
        frame = cv2.GaussianBlur(frame, (0, 0), d.defocus_sigma)
    gain = np.asarray(d.colour_cast, np.float32) * d.brightness
    if d.light_gradient:
        along = (_XS - w / 2) * math.cos(d.light_angle) + (_YS - h / 2) * math.sin(d.light_angle)
        light = 1 + (d.light_gradient / (max(w, h) / 2)) * along
        frame *= light[..., None]
    frame *= gain
    if d.noise_sigma > 0:
        frame += _noise(rng, frame.shape, d.noise_sigma)
    out = np.clip(frame, 0, 255).astype(np.uint8)
    if d.jpeg_quality is not None:
        ok, buf = cv2.imencode(".jpg", out, [cv2.IMWRITE_JPEG_QUALITY, d.jpeg_quality])
        assert ok
        out = cv2.imdecode(buf, cv2.IMREAD_COLOR)
    return out


def barcode_frame(
    payload: str,
    rng: np.random.Generator,
    rng_range: DegradationRange = CLEAN,
    *,
    upside_down: bool | None = None,
    symbology: str = "Code128",
) -> np.ndarray:
    """One frame of a barcode card with degradations drawn from ``rng_range``."""
    if upside_down is None:
        upside_down = bool(rng.integers(0, 2))
    return compose(
        barcode_face(payload, symbology), rng, rng_range.sample(rng), upside_down=upside_down
    )


def pass_frames(
    face: np.ndarray | None,
    rng: np.random.Generator,
    n_frames: int = 8,
    rng_range: DegradationRange = GUIDED,
    *,
    upside_down: bool = False,
) -> Iterator[np.ndarray]:
    """The frames of one card sliding through the window along the dealing axis.

    The first and last frames show the card entering and leaving (its code partly cut
    off, as in a real pass); ``face=None`` gives empty frames.
    """
    w, h = FRAME_SIZE
    d = rng_range.sample(rng)
    x = float(rng.uniform(w * 0.35, w * 0.65))
    for i in range(n_frames):
        if face is None:
            yield empty_frame(rng)
            continue
        # From half in view at the top to half in view at the bottom.
        y = h * 0.1 + (h * 0.8) * (i + 0.5) / n_frames
        yield compose(face, rng, d, upside_down=upside_down, centre=(x, y))


def write_labelled_set(
    out_dir: Path,
    payloads: list[str],
    rng: np.random.Generator,
    rng_range: DegradationRange = CLEAN,
    *,
    ext: str = ".png",
) -> Path:
    """Write one frame per payload (``NONE`` = empty window) and a labels.csv; return it.

    labels.csv has columns ``filename,label``; label is the payload (``NONE`` for none).
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    labels = out_dir / "labels.csv"
    with labels.open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["filename", "label"])
        for i, payload in enumerate(payloads):
            name = f"{i:05d}{ext}"
            if payload == "NONE":
                frame = empty_frame(rng)
            else:
                frame = barcode_frame(payload, rng, rng_range)
            if not cv2.imwrite(str(out_dir / name), frame):
                raise OSError(f"cannot write {out_dir / name}")
            writer.writerow([name, payload])
    return labels

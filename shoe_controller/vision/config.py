"""Configuration of the camera path: ``[vision]``, ``[camera]`` and ``[barcode]``.

Import-light on purpose (only msgspec and the standard library): the configuration
loader imports these Structs to validate a table's TOML file without pulling in OpenCV
or zxing-cpp. Every field has a default, and unknown keys are refused, so a typo in the
file is an error naming the key rather than a silently ignored setting.

>>> import msgspec
>>> VisionConfig().reader, VisionConfig().min_frames
('index', 2)
>>> msgspec.convert({"reader": "barcode"}, VisionConfig).reader
'barcode'
>>> msgspec.convert({"symbology": "Code128", "colour": 1}, BarcodeConfig)
Traceback (most recent call last):
...
msgspec.ValidationError: Object contains unknown field `colour`
>>> msgspec.convert({"pattern": "(?P<rank>[A2-9TJQK])"}, BarcodeConfig)
Traceback (most recent call last):
...
msgspec.ValidationError: barcode pattern must have the named groups rank and suit
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Annotated, Literal, get_args

import msgspec

__all__ = [
    "DEFAULT_BARCODE_PATTERN",
    "SYMBOLOGIES",
    "BarcodeConfig",
    "CameraConfig",
    "VisionConfig",
    "VisionConfigError",
    "load_vision_sections",
]

#: Which reader turns a frame into a card: the index (rank and suit glyphs), the barcode
#: printed on the card, or both (both must agree, else the frame is rejected).
ReaderMode = Literal["index", "barcode", "both"]

#: How a physical card pass is delimited: by the shoe's card-exit sensor, by the card's
#: presence in the camera window, or ``auto`` (sensor when the shoe reports one).
PassBoundary = Literal["auto", "sensor", "presence"]

#: Where frames come from.
SourceKind = Literal["usb", "picamera", "folder", "video", "synthetic"]

#: Symbologies zxing-cpp can be restricted to (names of ``zxingcpp.BarcodeFormat``).
Symbology = Literal[
    "Code128",
    "Code39",
    "Code93",
    "Codabar",
    "ITF",
    "EAN8",
    "EAN13",
    "UPCA",
    "DataBar",
    "QRCode",
    "MicroQRCode",
    "DataMatrix",
    "Aztec",
    "PDF417",
]
SYMBOLOGIES: tuple[str, ...] = get_args(Symbology)

#: ``[D<deck>-]<rank><suit>``: ``QH``, ``TS``, ``10S``, ``D3-QH``. Case-insensitive.
DEFAULT_BARCODE_PATTERN = r"(?:D(?P<deck>[0-9]{1,2})-)?(?P<rank>10|[A2-9TJQK])(?P<suit>[SHDC])"

Fraction = Annotated[float, msgspec.Meta(ge=0.0, le=1.0)]
Positive = Annotated[int, msgspec.Meta(ge=1)]
NonNegative = Annotated[float, msgspec.Meta(ge=0.0)]
#: A rectangle in pixels: x, y, width, height.
Rect = tuple[
    Annotated[int, msgspec.Meta(ge=0)],
    Annotated[int, msgspec.Meta(ge=0)],
    Annotated[int, msgspec.Meta(ge=1)],
    Annotated[int, msgspec.Meta(ge=1)],
]


class VisionConfig(msgspec.Struct, forbid_unknown_fields=True, frozen=True, kw_only=True):
    """``[vision]``: which reader, and how frames of one card pass become one read."""

    #: index | barcode | both (both must agree on every frame, else the frame is rejected).
    reader: ReaderMode = "index"
    #: Calibration profile written by ``shoe-calibrate learn`` (needed by the index reader).
    profile: str = "/var/lib/shoe-controller/profile.npz"
    #: A frame read below this confidence does not count as a vote.
    min_confidence: Fraction = 0.6
    #: Confident frames that must agree before a pass becomes a card (fewer: unreadable).
    min_frames: Positive = 2
    #: auto | sensor | presence: what delimits one physical card pass.
    pass_boundary: PassBoundary = "auto"
    #: Presence mode: this many consecutive empty frames end a pass.
    gap_frames: Positive = 2
    #: Sensor mode: frames up to this long after the card-exit event still belong to it.
    exit_grace_s: NonNegative = 0.05
    #: Sensor mode: a card seen in the window with no card-exit event within this many
    #: seconds after it left the window is reported unreadable (never silently dropped).
    exit_timeout_s: NonNegative = 1.0


class CameraConfig(msgspec.Struct, forbid_unknown_fields=True, frozen=True, kw_only=True):
    """``[camera]``: the frame source and its settings."""

    #: usb | picamera | folder | video | synthetic.
    source: SourceKind = "usb"
    #: usb: a device path (/dev/video0) or index ("0"); folder/video: a path.
    device: str = "/dev/video0"
    width: Positive = 640
    height: Positive = 480
    #: Frames per second asked of a camera; for folder/video replay, the pace of the
    #: timestamps (0 = the file's own rate for video, as fast as possible for folders).
    fps: NonNegative = 60.0
    #: Region of interest (x, y, width, height) cropped from every frame; none = whole frame.
    roi: Rect | None = None
    #: Manual exposure (camera units: V4L2 exposure_time_absolute in 100 us, picamera2
    #: ExposureTime in us); none = automatic exposure.
    exposure: float | None = None
    #: Manual focus (V4L2 focus_absolute, picamera2 LensPosition in dioptres); none = auto.
    focus: float | None = None
    #: Replay sources: sleep so frames arrive at ``fps`` in real time (false: as fast as read).
    realtime: bool = False
    #: Replay sources: start again at the end instead of stopping.
    loop: bool = False


class BarcodeConfig(msgspec.Struct, forbid_unknown_fields=True, frozen=True, kw_only=True):
    """``[barcode]``: the symbology to look for and how a payload maps to a card."""

    #: The only symbology searched for (a restriction makes reads fast and unambiguous).
    symbology: Symbology = "Code128"
    #: Regular expression matched against the whole payload (case-insensitive); named
    #: groups ``rank`` and ``suit`` give the card, optional ``deck`` the deck number.
    pattern: str = DEFAULT_BARCODE_PATTERN
    #: Payloads that mean the cut card.
    cut_payloads: tuple[str, ...] = ("CUT",)
    #: Highest deck number accepted in a payload (a higher one is a foreign card);
    #: 0 = any deck number.
    max_deck: Annotated[int, msgspec.Meta(ge=0)] = 0
    #: Search only this region of the frame (x, y, width, height); none = the whole frame.
    region: Rect | None = None
    #: Divide the width by this factor before decoding (1 = full size); keep at least two
    #: pixels per narrow bar after it.
    downscale: Positive = 1
    #: Decode every Nth row only. The code's bars run along the image columns, so each row
    #: is a complete scanline; skipping rows costs nothing but spare scanlines (keep the
    #: code at least ~8 sampled rows tall).
    row_step: Annotated[int, msgspec.Meta(ge=1, le=16)] = 4
    #: When something is in view but no code decodes, try once more on the frame resampled
    #: to twice the width (bars close to two pixels wide alias at some scales).
    retry_upscaled: bool = True
    #: Quarter turns (clockwise) applied before decoding, for a camera mounted so codes
    #: run down the image: codes are searched along rows only (no costly retries).
    quarter_turns: Annotated[int, msgspec.Meta(ge=0, le=3)] = 0
    #: A frame whose brightest ``presence_fraction`` of pixels is below this grey level
    #: is the empty (dark) window; otherwise something is there, read or not.
    presence_level: Annotated[int, msgspec.Meta(ge=0, le=255)] = 90
    presence_fraction: Fraction = 0.05

    def __post_init__(self) -> None:
        try:
            compiled = re.compile(self.pattern, re.IGNORECASE | re.ASCII)
        except re.error as exc:
            raise ValueError(f"barcode pattern is not a regular expression: {exc}") from exc
        if not {"rank", "suit"} <= set(compiled.groupindex):
            raise ValueError("barcode pattern must have the named groups rank and suit")


class VisionConfigError(ValueError):
    """A ``[vision]``, ``[camera]`` or ``[barcode]`` table that is not valid."""


def _section(table: dict[str, object], name: str, struct: type, where: str) -> object:
    raw = table.get(name, {})
    try:
        return msgspec.convert(raw, struct)
    except msgspec.ValidationError as exc:
        # msgspec says "... - at `$.key`": name the file, the table and the key instead.
        text = str(exc)
        message, _, path = text.partition(" - at `$")
        key = path.rstrip("`").lstrip(".")
        place = f"[{name}] {key}" if key else f"[{name}]"
        raise VisionConfigError(f"{where}: {place}: {message}") from exc


def load_vision_sections(
    path: str | Path,
) -> tuple[VisionConfig, CameraConfig, BarcodeConfig]:
    """The ``[vision]``, ``[camera]`` and ``[barcode]`` tables of a table's TOML file.

    Used by the calibration tools, which need no more of the configuration; a missing
    table gives its defaults.

    >>> import tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "table.toml")
    >>> _ = open(p, "w").write('[vision]\\nmin_frames = 0\\n')
    >>> load_vision_sections(p)
    Traceback (most recent call last):
    ...
    shoe_controller.vision.config.VisionConfigError: ...table.toml: [vision] min_frames: \
Expected `int` >= 1
    """
    where = str(path)
    try:
        with open(path, "rb") as f:
            table = tomllib.load(f)
    except OSError as exc:
        raise VisionConfigError(f"{where}: cannot read it ({exc.strerror})") from exc
    except tomllib.TOMLDecodeError as exc:
        raise VisionConfigError(f"{where}: not valid TOML ({exc})") from exc
    return (
        _section(table, "vision", VisionConfig, where),  # type: ignore[return-value]
        _section(table, "camera", CameraConfig, where),
        _section(table, "barcode", BarcodeConfig, where),
    )

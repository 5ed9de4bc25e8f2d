"""Barcode reader: a code printed on the card, decoded by zxing-cpp, mapped to a card.

Only the configured symbology is searched (default Code 128): restricting the decoder
makes it fast (well under a millisecond on a 640x480 frame here) and means no other kind
of code in view can be mistaken for a card. The payload is mapped by a configurable
regular expression (default ``[D<deck>-]<rank><suit>``, e.g. ``D3-QH``); ``CUT`` is the
cut card; any other payload is a foreign card -- it is evidence, not noise.

A frame with no code is the empty window when it is dark, and a rejection when
something light (a card whose code is hidden, smeared or cut off) is in view: a card
is never inferred from anything but its code.

>>> from shoe_controller.vision.config import BarcodeConfig
>>> m = BarcodeMapping(BarcodeConfig())
>>> m.map("D3-QH").card, m.map("10s").card, m.map("CUT").kind
(Card('QH'), Card('TS'), 'cut')
>>> m.map("D3-QX").kind, m.map("D3-QX").payload
('foreign', 'D3-QX')
"""

from __future__ import annotations

import re
from typing import Any

import cv2
import numpy as np

from shoe_controller.game.cards import CardParseError, parse_card
from shoe_controller.vision.config import BarcodeConfig
from shoe_controller.vision.reads import FrameRead

__all__ = ["BarcodeMapping", "BarcodeReader", "is_present"]


class BarcodeMapping:
    """Payload text -> a card, the cut card, or a foreign card (pure, no decoder)."""

    def __init__(self, config: BarcodeConfig) -> None:
        self._pattern = re.compile(config.pattern, re.IGNORECASE | re.ASCII)
        self._cut = {p.upper() for p in config.cut_payloads}
        self._max_deck = config.max_deck

    def map(self, payload: str) -> FrameRead:
        """The frame read one decoded payload stands for (confidence 1: codes carry checks).

        >>> from shoe_controller.vision.config import BarcodeConfig
        >>> m = BarcodeMapping(BarcodeConfig(max_deck=8))
        >>> m.map("D8-AS").card, m.map("D9-AS").reason
        (Card('AS'), "code 'D9-AS' maps to no card")
        """
        # ASCII matching only: Unicode case folding would let "Qſ" (long s) or a Kelvin
        # sign pass for a card; a code that needs such tricks is foreign.
        if payload.upper() in self._cut and payload.isascii():
            return FrameRead.cut(1.0)
        match = self._pattern.fullmatch(payload)
        if match is None:
            return FrameRead.foreign(payload)
        deck = match.groupdict().get("deck")
        if deck is not None and self._max_deck and not 1 <= int(deck) <= self._max_deck:
            return FrameRead.foreign(payload)
        try:
            card = parse_card(match["rank"] + match["suit"])
        except CardParseError:
            return FrameRead.foreign(payload)
        return FrameRead.of_card(card, None, 1.0)


def is_present(grey: np.ndarray, level: int, fraction: float) -> bool:
    """Whether something lighter than the dark shoe interior fills ``fraction`` of the view.

    Looks at every fourth pixel of every fourth row: presence is a coarse question.

    >>> dark = np.full((48, 64), 20, np.uint8)
    >>> is_present(dark, 90, 0.05)
    False
    >>> dark[:, :16] = 230
    >>> is_present(dark, 90, 0.05)
    True
    """
    sample = grey[::4, ::4]
    return bool(np.count_nonzero(sample > level) >= fraction * sample.size)


class BarcodeReader:
    """``read(frame) -> FrameRead`` from the code printed on the card.

    >>> reader = BarcodeReader()
    >>> reader.read(np.full((480, 640), 25, np.uint8)).kind
    'empty'
    >>> reader.read(np.full((480, 640), 220, np.uint8)).reason
    'something is in view but no Code128 code was found'
    """

    def __init__(self, config: BarcodeConfig | None = None) -> None:
        import zxingcpp  # imported here: only the barcode path needs the decoder

        self.config = config or BarcodeConfig()
        self.mapping = BarcodeMapping(self.config)
        self._zx = zxingcpp
        self._format = getattr(zxingcpp.BarcodeFormat, self.config.symbology)

    def decode(self, frame: np.ndarray) -> list[Any]:
        """The zxing-cpp results in ``frame`` (after region and downscale), raw."""
        grey = self._prepare(frame)
        return self._decode(grey)

    def read(self, frame: np.ndarray) -> FrameRead:
        """The verdict on one frame: card / cut / foreign / empty / reject."""
        if self.config.region is not None:
            x, y, w, h = self.config.region
            if x + w > frame.shape[1] or y + h > frame.shape[0]:
                # A set-up mistake must not crash the reader: every frame says why it failed.
                return FrameRead.rejected(
                    f"[barcode] region {list(self.config.region)} lies outside the "
                    f"{frame.shape[1]}x{frame.shape[0]} frame"
                )
        grey = self._prepare(frame)
        codes = self._decode(grey)
        cfg = self.config
        present = None
        if not codes and cfg.retry_upscaled:
            present = is_present(grey, cfg.presence_level, cfg.presence_fraction)
            if present:
                # Bars near two pixels wide alias at some scales; a linear 2x resample along
                # the scanlines recovers them. Paid only when something unread is in view.
                size = (grey.shape[1] * 2, grey.shape[0])
                codes = self._decode(cv2.resize(grey, size, interpolation=cv2.INTER_LINEAR))
        if not codes:
            if present is None:
                present = is_present(grey, cfg.presence_level, cfg.presence_fraction)
            if not present:
                return FrameRead.empty()
            return FrameRead.rejected(
                f"something is in view but no {self.config.symbology} code was found"
            )
        payloads = sorted({c.text for c in codes})
        if len(payloads) > 1:
            return FrameRead.rejected(f"several different codes in view: {', '.join(payloads)}")
        read = self.mapping.map(payloads[0])
        if read.kind != "card":
            return read
        # A card sitting upside down in the shoe shows its code turned half a turn.
        turns = {"down" if 90 < abs(int(c.orientation)) % 360 < 270 else "up" for c in codes}
        orientation = turns.pop() if len(turns) == 1 else None
        return FrameRead.of_card(read.card, orientation, 1.0)  # type: ignore[arg-type]

    def _prepare(self, frame: np.ndarray) -> np.ndarray:
        region = self.config.region
        if region is not None:
            x, y, w, h = region
            frame = frame[y : y + h, x : x + w]
        if self.config.quarter_turns:
            frame = np.rot90(frame, -self.config.quarter_turns)
        if self.config.row_step > 1:
            frame = frame[:: self.config.row_step]
        frame = np.ascontiguousarray(frame)
        grey = frame if frame.ndim == 2 else cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY)
        if self.config.downscale > 1:
            f = self.config.downscale
            size = (grey.shape[1] // f, grey.shape[0])
            grey = cv2.resize(grey, size, interpolation=cv2.INTER_AREA)
        return grey

    def _decode(self, grey: np.ndarray) -> list[Any]:
        # No 90-degree retries, no downscaled or inverted retries: the camera is mounted
        # so codes cross the rows, and each retry would multiply the cost per frame.
        results = self._zx.read_barcodes(
            grey,
            formats=self._format,
            try_rotate=False,
            try_downscale=False,
            try_invert=False,
        )
        return [r for r in results if r.valid]

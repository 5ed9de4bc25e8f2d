"""The configured frame reader: the index, the barcode, or both (which must agree).

Every reader has one method, ``read(frame) -> FrameRead``. With ``both``, a frame is a
card only when the index reader and the barcode reader name the same card; any other
disagreement is a rejection (never a choice between them). A foreign code seen by the
barcode reader is reported as foreign whatever the index reader says: it is evidence
of a card that does not belong to the shoe.

>>> from shoe_controller.game.cards import parse_card
>>> qh = FrameRead.of_card(parse_card("QH"), "up", 0.9)
>>> agree(qh, FrameRead.of_card(parse_card("QH"), None, 1.0))
FrameRead(kind='card', card=Card('QH'), orientation='up', confidence=0.9, reason='', payload=None)
>>> agree(qh, FrameRead.of_card(parse_card("QD"), None, 1.0)).reason
'readers disagree: index reads QH, barcode reads QD'
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from shoe_controller.vision.reads import FrameRead

if TYPE_CHECKING:
    import numpy as np

    from shoe_controller.vision.config import BarcodeConfig, VisionConfig

__all__ = ["BothReaders", "FrameReader", "agree", "build_reader", "describe"]


class FrameReader(Protocol):
    """Anything that turns one frame into a verdict."""

    def read(self, frame: np.ndarray) -> FrameRead: ...


def describe(read: FrameRead) -> str:
    """A few words for a verdict, for reasons and logs.

    >>> describe(FrameRead.cut()), describe(FrameRead.empty()), describe(FrameRead.foreign("X"))
    ('the cut card', 'nothing', "foreign code 'X'")
    """
    if read.kind == "card" and read.card is not None:
        return read.card.code
    if read.kind == "cut":
        return "the cut card"
    if read.kind == "empty":
        return "nothing"
    if read.kind == "foreign":
        return f"foreign code {read.payload!r}"
    return f"no card ({read.reason})" if read.reason else "no card"


def agree(index: FrameRead, barcode: FrameRead) -> FrameRead:
    """One verdict from the index reader's and the barcode reader's on the same frame.

    >>> agree(FrameRead.cut(0.8), FrameRead.cut(1.0))
    FrameRead(kind='cut', card=None, orientation=None, confidence=0.8, reason='', payload=None)
    >>> agree(FrameRead.empty(), FrameRead.foreign("ZZ")).kind
    'foreign'
    >>> agree(FrameRead.cut(0.9), FrameRead.rejected("no code")).kind
    'reject'
    """
    if barcode.kind == "foreign":
        return barcode
    if index.kind == barcode.kind == "card" and index.card is barcode.card:
        assert index.card is not None
        # The index reader sees the card's own print, so its orientation is the card's.
        orientation = index.orientation or barcode.orientation
        confidence = min(index.confidence, barcode.confidence)
        return FrameRead.of_card(index.card, orientation, confidence)
    if index.kind == barcode.kind == "cut":
        return FrameRead.cut(min(index.confidence, barcode.confidence))
    if index.kind == barcode.kind == "empty":
        return FrameRead.empty()
    return FrameRead.rejected(
        f"readers disagree: index reads {describe(index)}, barcode reads {describe(barcode)}"
    )


class BothReaders:
    """Reads each frame with both readers; see :func:`agree`."""

    def __init__(self, index: FrameReader, barcode: FrameReader) -> None:
        self.index = index
        self.barcode = barcode

    def read(self, frame: np.ndarray) -> FrameRead:
        return agree(self.index.read(frame), self.barcode.read(frame))


def build_reader(
    vision: VisionConfig,
    barcode: BarcodeConfig | None = None,
    *,
    profile: object | None = None,
) -> FrameReader:
    """The reader ``vision.reader`` asks for.

    The index reader needs a learned calibration profile: ``profile`` (a loaded
    :class:`~shoe_controller.vision.profile.Profile`) or the file ``vision.profile``; a
    missing, foreign-version or corrupt file raises ``ProfileError`` saying so.

    OpenCV is held to one thread (``cv2.setNumThreads(1)``, for the whole process): a
    frame's images are small, so a thread pool spreading each call over the cores adds
    its hand-over cost to every call and gains little, and the reader's time per frame
    is then one core's, as docs/vision.md states it; the other cores stay free for the
    rest of the daemon (journal, MQTT, display).
    """
    import cv2

    from shoe_controller.vision.config import BarcodeConfig

    cv2.setNumThreads(1)

    barcode_reader = None
    index_reader = None
    if vision.reader in ("barcode", "both"):
        from shoe_controller.vision.barcode import BarcodeReader

        barcode_reader = BarcodeReader(barcode or BarcodeConfig())
    if vision.reader in ("index", "both"):
        from shoe_controller.vision.index_reader import IndexReader
        from shoe_controller.vision.profile import load_profile

        loaded = profile if profile is not None else load_profile(vision.profile)
        index_reader = IndexReader(loaded)  # type: ignore[arg-type]
    if index_reader is not None and barcode_reader is not None:
        return BothReaders(index_reader, barcode_reader)
    reader = index_reader or barcode_reader
    assert reader is not None
    return reader

"""Byte framing of the shoe protocol: COBS, a 0x00 delimiter and a CRC-32 (PROTOCOL.md §2).

A frame on the wire is ``COBS(payload + crc32_le(payload)) + b"\\x00"``. The decoder is
fed arbitrary chunks of bytes and returns the payloads of every frame whose COBS and
CRC check out; everything else is counted and skipped, and decoding resumes at the next
delimiter, so garbage on the line costs at most the frame it touches.

Pure and small on purpose: no threads, no I/O, only ``zlib.crc32`` (``binascii.crc32``
under MicroPython) from outside the language.

>>> wire = encode_frame(b"\\x01\\x00hello")
>>> wire[-1]
0
>>> d = FrameDecoder()
>>> d.feed(b"\\xff\\x13 garbage\\x00" + wire[:5])
[]
>>> d.feed(wire[5:])
[b'\\x01\\x00hello']
>>> d.stats.bad_frames
1
"""

from __future__ import annotations

try:  # CPython
    from zlib import crc32
except ImportError:  # pragma: no cover - MicroPython
    from binascii import crc32  # type: ignore[no-redef]

__all__ = [
    "DELIMITER",
    "MAX_ENCODED",
    "MAX_PAYLOAD",
    "MIN_ENCODED",
    "MIN_PAYLOAD",
    "CobsError",
    "DecoderStats",
    "FrameDecoder",
    "cobs_decode",
    "cobs_encode",
    "crc32",
    "encode_frame",
]

#: Frame delimiter. COBS guarantees it never occurs inside an encoded frame.
DELIMITER = b"\x00"
#: Largest payload (header + body, without the CRC): a sender MUST NOT exceed it.
MAX_PAYLOAD = 512
#: Smallest payload: the 6-byte header (PROTOCOL.md §3) with an empty body.
MIN_PAYLOAD = 6
#: Largest encoded frame (COBS overhead 1 byte per 254, plus the CRC), delimiter excluded:
#: 512 + 4 = 516 bytes stuffed into 519.
MAX_ENCODED = MAX_PAYLOAD + 4 + (MAX_PAYLOAD + 4) // 254 + 1
#: Smallest encoded frame: 6 + 4 = 10 bytes stuffed into 11.
MIN_ENCODED = MIN_PAYLOAD + 4 + 1


class CobsError(ValueError):
    """A block is not valid COBS (a zero byte, or a code running past the end)."""


def cobs_encode(data: bytes) -> bytes:
    """Consistent Overhead Byte Stuffing: the result contains no zero byte.

    >>> cobs_encode(b"\\x11\\x22\\x00\\x33")
    b'\\x03\\x11"\\x023'
    >>> cobs_encode(b"")
    b'\\x01'
    """
    out = bytearray()
    for block in bytes(data).split(b"\x00"):
        # a run of up to 254 non-zero bytes per code byte; code 0xFF means "no zero follows"
        while len(block) >= 254:
            out.append(0xFF)
            out += block[:254]
            block = block[254:]
        out.append(len(block) + 1)
        out += block
    return bytes(out)


def cobs_decode(data: bytes) -> bytes:
    """Inverse of :func:`cobs_encode`; raises :class:`CobsError` on a malformed block.

    >>> cobs_decode(cobs_encode(b"\\x00\\x00a\\x00"))
    b'\\x00\\x00a\\x00'
    """
    if 0 in data:
        raise CobsError("zero byte inside a COBS block")
    # Each code byte c starts a block of c-1 data bytes followed by an implied zero,
    # except after code 0xFF and after the last block: join the blocks with zeros.
    blocks = []
    carry = b""  # data of 0xFF blocks, which imply no zero
    i = 0
    n = len(data)
    while i < n:
        code = data[i]
        end = i + code
        if end > n:
            raise CobsError("COBS code runs past the end of the frame")
        if code == 0xFF:
            carry += data[i + 1 : end]
        elif carry:
            blocks.append(carry + data[i + 1 : end])
            carry = b""
        else:
            blocks.append(data[i + 1 : end])
        i = end
    if carry:
        blocks.append(carry)
    return b"\x00".join(blocks)


def encode_frame(payload: bytes) -> bytes:
    """The wire bytes of one frame: COBS(payload + CRC-32 little-endian) + delimiter."""
    crc = crc32(payload) & 0xFFFFFFFF
    return cobs_encode(payload + crc.to_bytes(4, "little")) + DELIMITER


class DecoderStats:
    """Counters kept by a :class:`FrameDecoder` (all monotonic)."""

    __slots__ = ("bad_crc", "bytes_in", "cobs_errors", "frames", "oversize", "short")

    def __init__(self) -> None:
        self.bytes_in = 0  # bytes fed
        self.frames = 0  # frames delivered
        self.bad_crc = 0  # COBS fine, CRC wrong
        self.cobs_errors = 0  # not COBS at all
        self.oversize = 0  # over MAX_ENCODED, or decoding to over MAX_PAYLOAD + CRC
        self.short = 0  # decoding to under MIN_PAYLOAD + CRC (no header and CRC)

    @property
    def bad_frames(self) -> int:
        """Every candidate frame that was dropped."""
        return self.bad_crc + self.cobs_errors + self.oversize + self.short

    def as_dict(self) -> dict[str, int]:
        d = {name: getattr(self, name) for name in self.__slots__}
        d["bad_frames"] = self.bad_frames
        return d

    def __repr__(self) -> str:
        return f"DecoderStats({self.as_dict()})"


class FrameDecoder:
    """Incremental frame decoder: ``feed(bytes) -> [payload, ...]``. Never raises on input.

    Bytes between two delimiters form one candidate frame. Empty candidates (two
    delimiters in a row, or a leading delimiter a sender uses to flush the line) are
    ignored silently. A candidate longer than :data:`MAX_ENCODED` is discarded without
    being buffered further (bounded memory whatever arrives); one that decodes to fewer
    than ``MIN_PAYLOAD + 4`` or more than ``MAX_PAYLOAD + 4`` bytes is dropped and counted
    (``short``, ``oversize``), like a bad CRC.
    """

    __slots__ = ("_buf", "_discarding", "stats")

    def __init__(self) -> None:
        self._buf = b""
        self._discarding = False  # inside an oversize candidate: skip to the next delimiter
        self.stats = DecoderStats()

    def reset(self) -> None:
        """Forget a partial frame (after a reconnect); counters are kept."""
        self._buf = b""
        self._discarding = False

    def feed(self, data: bytes) -> list[bytes]:
        stats = self.stats
        stats.bytes_in += len(data)
        parts = (self._buf + data).split(b"\x00") if self._buf else bytes(data).split(b"\x00")
        tail = parts.pop()
        out: list[bytes] = []
        for part in parts:
            if self._discarding:
                self._discarding = False  # this delimiter ends the oversize candidate
                continue
            if not part:
                continue
            payload = self._check(part)
            if payload is not None:
                out.append(payload)
        if len(tail) > MAX_ENCODED:
            if not self._discarding:
                stats.oversize += 1
            self._discarding = True
            tail = b""
        self._buf = tail
        return out

    def _check(self, part: bytes) -> bytes | None:
        stats = self.stats
        if len(part) > MAX_ENCODED:
            stats.oversize += 1
            return None
        try:
            raw = cobs_decode(part)
        except CobsError:
            stats.cobs_errors += 1
            return None
        if len(raw) < MIN_PAYLOAD + 4:
            stats.short += 1
            return None
        if len(raw) > MAX_PAYLOAD + 4:
            stats.oversize += 1
            return None
        payload = raw[:-4]
        if crc32(payload) & 0xFFFFFFFF != int.from_bytes(raw[-4:], "little"):
            stats.bad_crc += 1
            return None
        stats.frames += 1
        return payload

"""Messages of the shoe protocol and their codec (PROTOCOL.md §3-§5). Pure: no I/O.

Every frame payload is a 6-byte header ``type u8, flags u8, seq u32`` (little-endian)
followed by the message body. :func:`encode` turns a message into wire bytes (framing
included); :func:`decode_payload` turns one frame payload back into a :class:`Frame`;
:class:`StreamDecoder` does both for a byte stream and never raises on input.

>>> wire = encode(CardExitReport(t_us=1_500_000, duration_us=41_000), seq=7)
>>> [f.msg for f in StreamDecoder().feed(b"noise\\x00" + wire)]
[CardExitReport(t_us=1500000, duration_us=41000)]
>>> decode_payload(bytes([0x42, 0, 0, 0, 0, 0]) + b"future").msg
Unknown(type=66, body=b'future')
"""

from __future__ import annotations

import struct
from typing import ClassVar

import msgspec

from firmware_bridge.framing import MAX_PAYLOAD, FrameDecoder, encode_frame

__all__ = [
    "BUTTON_NAMES",
    "CAPABILITY_NAMES",
    "DEVICE_EVENT_TYPES",
    "FAULT_NAMES",
    "FLAG_REPLAY",
    "FLAG_SEQUENCED",
    "MESSAGE_TYPES",
    "PROTOCOL_VERSION",
    "READ_WINDOW_US",
    "STATE_FAULT",
    "STATE_LID_OPEN",
    "STATE_LOCKED",
    "STATE_SHOE_LOADED",
    "STATUS_NAMES",
    "SYMBOLOGY_NAMES",
    "Ack",
    "ButtonReport",
    "CardExitReport",
    "CardReadReport",
    "DecodeError",
    "DeviceHello",
    "FaultReport",
    "Frame",
    "Heartbeat",
    "HostHello",
    "Keepalive",
    "LidReport",
    "Malformed",
    "Message",
    "Ping",
    "Replay",
    "RequestStatus",
    "Reset",
    "SetLights",
    "SetLock",
    "ShoeEmptyReport",
    "ShoeLoadedReport",
    "Status",
    "StreamDecoder",
    "Unknown",
    "button_id",
    "decode_payload",
    "encode",
    "encode_payload",
]

#: (major, minor). A major mismatch refuses the link; minors are compatible both ways.
PROTOCOL_VERSION = (1, 1)

#: A card's ``card_read`` and its ``card_exit`` pair when the read is the next card event
#: after the exit and its ``t_us`` is at most this much after the exit's (PROTOCOL.md §7a).
READ_WINDOW_US = 500_000

HEADER = struct.Struct("<BBI")
#: The frame was re-sent from the device's replay buffer (informative).
FLAG_REPLAY = 0x01
#: The frame carries a device event sequence number: the host must account for it even
#: when it does not understand the type (so new event types never open a gap).
FLAG_SEQUENCED = 0x02

# heartbeat / status ``state`` bits
STATE_LID_OPEN = 0x01
STATE_SHOE_LOADED = 0x02
STATE_LOCKED = 0x04
STATE_FAULT = 0x08

#: capability bit -> name (DeviceHello.capabilities)
CAPABILITY_NAMES = {
    0: "card_exit",
    1: "card_read",
    2: "buttons",
    3: "lid",
    4: "shoe_presence",
    5: "lights",
    6: "lock",
}
#: button id -> name (ButtonReport.button); unknown ids read as ``button_<id>``
BUTTON_NAMES = {
    1: "new_round",
    2: "confirm",
    3: "reveal_player",
    4: "reveal_banker",
    5: "call_supervisor",
}
#: fault code -> name (FaultReport.code); unknown codes read as ``fault_<code>``
FAULT_NAMES = {
    1: "exit_sensor_blocked",
    2: "exit_sensor_dirty",
    3: "scanner_error",
    4: "lock_jammed",
    5: "brownout",
    6: "watchdog_reset",
    7: "replay_overflow",
    8: "lights_failure",
    0xFFFF: "other",
}
#: scanner symbology id -> name (CardReadReport.symbology)
SYMBOLOGY_NAMES = {0: "unknown", 1: "code128", 2: "datamatrix", 3: "qr", 4: "ean13", 5: "pdf417"}
#: Ack.status -> name
STATUS_NAMES = {0: "ok", 1: "bad_argument", 2: "unsupported", 3: "failed"}


def button_id(name: str) -> int:
    """Inverse of :data:`BUTTON_NAMES` (also accepts ``button_<id>``)."""
    for k, v in BUTTON_NAMES.items():
        if v == name:
            return k
    if name.startswith("button_") and name[7:].isdigit():
        return int(name[7:])
    raise ValueError(f"unknown button {name!r}; known: {', '.join(BUTTON_NAMES.values())}")


class DecodeError(ValueError):
    """A frame that passed the CRC but whose body does not fit its type."""


def _u8str(data: bytes, at: int, what: str) -> tuple[bytes, int]:
    """A length-prefixed (u8) byte string at ``data[at:]`` -> (bytes, next offset)."""
    if at >= len(data):
        raise DecodeError(f"{what}: missing length byte")
    n = data[at]
    end = at + 1 + n
    if end > len(data):
        raise DecodeError(f"{what}: length {n} runs past the end of the body")
    return bytes(data[at + 1 : end]), end


def _u8pack(raw: bytes, limit: int, what: str) -> bytes:
    """``raw`` length-prefixed (u8); a clear error beyond ``limit`` bytes."""
    if len(raw) > limit:
        raise ValueError(f"{what}: {len(raw)} bytes, at most {limit}")
    return bytes([len(raw)]) + raw


def _text(raw: bytes) -> str:
    return raw.decode("utf-8", "replace")


class Message(msgspec.Struct, frozen=True, gc=False):
    """Base of every message. ``TYPE`` is the wire type; ``FMT`` the fixed part of the body.

    Bodies may grow in later minor versions: a decoder ignores trailing bytes it does
    not know (PROTOCOL.md §10), so every field added later is appended at the end.
    """

    TYPE: ClassVar[int]
    NAME: ClassVar[str]
    FMT: ClassVar[struct.Struct] = struct.Struct("<")
    #: device events carry a sequence number and FLAG_SEQUENCED
    SEQUENCED: ClassVar[bool] = False

    def body(self) -> bytes:
        return self.FMT.pack(*(getattr(self, f) for f in self.__struct_fields__))

    @classmethod
    def parse(cls, body: bytes) -> Message:
        if len(body) < cls.FMT.size:
            raise DecodeError(
                f"{cls.NAME}: body of {len(body)} bytes, at least {cls.FMT.size} expected"
            )
        return cls(*cls.FMT.unpack_from(body))


# ---------------------------------------------------------------- device -> host
class DeviceHello(Message):
    """Reply to :class:`HostHello`, also sent unprompted after boot. Header seq = last event seq."""

    TYPE: ClassVar[int] = 0x01
    NAME: ClassVar[str] = "hello"
    FMT: ClassVar[struct.Struct] = struct.Struct("<BBBBBIII")
    protocol_major: int
    protocol_minor: int
    fw_major: int
    fw_minor: int
    fw_patch: int
    capabilities: int  # bit set, see CAPABILITY_NAMES
    boot_id: int  # random per boot: a new value means the device restarted
    oldest_seq: int  # oldest event still in the replay buffer (0: buffer empty)
    device_id: str  # serial number of the shoe, UTF-8, at most 64 bytes

    def body(self) -> bytes:
        fixed = self.FMT.pack(
            self.protocol_major,
            self.protocol_minor,
            self.fw_major,
            self.fw_minor,
            self.fw_patch,
            self.capabilities,
            self.boot_id,
            self.oldest_seq,
        )
        return fixed + _u8pack(self.device_id.encode(), 64, "hello.device_id")

    @classmethod
    def parse(cls, body: bytes) -> DeviceHello:
        if len(body) < cls.FMT.size:
            raise DecodeError(f"hello: body of {len(body)} bytes, at least {cls.FMT.size + 1}")
        raw, _ = _u8str(body, cls.FMT.size, "hello.device_id")
        return cls(*cls.FMT.unpack_from(body), _text(raw))

    @property
    def firmware(self) -> str:
        return f"{self.fw_major}.{self.fw_minor}.{self.fw_patch}"

    @property
    def capability_names(self) -> frozenset[str]:
        return frozenset(
            CAPABILITY_NAMES.get(bit, f"cap_{bit}")
            for bit in range(32)
            if self.capabilities >> bit & 1
        )


class Heartbeat(Message):
    """Sent every heartbeat interval. Header seq = last event seq, so the host sees a lost
    tail at once."""

    TYPE: ClassVar[int] = 0x02
    NAME: ClassVar[str] = "heartbeat"
    FMT: ClassVar[struct.Struct] = struct.Struct("<QBBI")
    uptime_us: int
    state: int  # STATE_* bits
    brightness: int  # lights, percent 0-100
    oldest_seq: int  # oldest event still in the replay buffer (0: buffer empty)


class CardExitReport(Message):
    """The exit gate saw one card leave the shoe."""

    TYPE: ClassVar[int] = 0x03
    NAME: ClassVar[str] = "card_exit"
    FMT: ClassVar[struct.Struct] = struct.Struct("<QI")
    SEQUENCED: ClassVar[bool] = True
    t_us: int  # device clock (µs since boot) when the card's leading edge reached the gate
    duration_us: int  # how long the gate stayed blocked (the card's pass), µs


class CardReadReport(Message):
    """The shoe's own barcode scanner read a code."""

    TYPE: ClassVar[int] = 0x04
    NAME: ClassVar[str] = "card_read"
    FMT: ClassVar[struct.Struct] = struct.Struct("<QB")
    SEQUENCED: ClassVar[bool] = True
    t_us: int
    symbology: int  # SYMBOLOGY_NAMES
    payload: bytes  # the decoded code, at most 200 bytes

    def body(self) -> bytes:
        fixed = self.FMT.pack(self.t_us, self.symbology)
        return fixed + _u8pack(self.payload, 200, "card_read.payload")

    @classmethod
    def parse(cls, body: bytes) -> CardReadReport:
        if len(body) < cls.FMT.size:
            raise DecodeError(f"card_read: body of {len(body)} bytes, at least {cls.FMT.size + 1}")
        raw, _ = _u8str(body, cls.FMT.size, "card_read.payload")
        return cls(*cls.FMT.unpack_from(body), raw)


class ButtonReport(Message):
    TYPE: ClassVar[int] = 0x05
    NAME: ClassVar[str] = "button"
    FMT: ClassVar[struct.Struct] = struct.Struct("<QB")
    SEQUENCED: ClassVar[bool] = True
    t_us: int
    button: int  # BUTTON_NAMES


class LidReport(Message):
    TYPE: ClassVar[int] = 0x06
    NAME: ClassVar[str] = "lid"
    FMT: ClassVar[struct.Struct] = struct.Struct("<Q?")
    SEQUENCED: ClassVar[bool] = True
    t_us: int
    open: bool


class ShoeLoadedReport(Message):
    """The shoe-presence sensor sees cards in the shoe (after being empty)."""

    TYPE: ClassVar[int] = 0x07
    NAME: ClassVar[str] = "shoe_loaded"
    FMT: ClassVar[struct.Struct] = struct.Struct("<Q")
    SEQUENCED: ClassVar[bool] = True
    t_us: int


class ShoeEmptyReport(Message):
    TYPE: ClassVar[int] = 0x08
    NAME: ClassVar[str] = "shoe_empty"
    FMT: ClassVar[struct.Struct] = struct.Struct("<Q")
    SEQUENCED: ClassVar[bool] = True
    t_us: int


class FaultReport(Message):
    """The firmware reports a fault (FAULT_NAMES)."""

    TYPE: ClassVar[int] = 0x09
    NAME: ClassVar[str] = "fault"
    FMT: ClassVar[struct.Struct] = struct.Struct("<QH")
    SEQUENCED: ClassVar[bool] = True
    t_us: int
    code: int
    detail: str  # UTF-8, at most 200 bytes

    def body(self) -> bytes:
        fixed = self.FMT.pack(self.t_us, self.code)
        return fixed + _u8pack(self.detail.encode(), 200, "fault.detail")

    @classmethod
    def parse(cls, body: bytes) -> FaultReport:
        if len(body) < cls.FMT.size:
            raise DecodeError(f"fault: body of {len(body)} bytes, at least {cls.FMT.size + 1}")
        raw, _ = _u8str(body, cls.FMT.size, "fault.detail")
        return cls(*cls.FMT.unpack_from(body), _text(raw))


class Ack(Message):
    """Answer to every host command (not to HostHello or Replay)."""

    TYPE: ClassVar[int] = 0x0A
    NAME: ClassVar[str] = "ack"
    FMT: ClassVar[struct.Struct] = struct.Struct("<IBB")
    acked_seq: int  # the command's header seq
    command: int  # the command's type
    status: int  # STATUS_NAMES


class Status(Message):
    """Answer to RequestStatus, sent just before its Ack. Header seq = last event seq."""

    TYPE: ClassVar[int] = 0x0B
    NAME: ClassVar[str] = "status"
    FMT: ClassVar[struct.Struct] = struct.Struct("<QBBIHI")
    uptime_us: int
    state: int  # STATE_* bits
    brightness: int  # percent 0-100
    cards_total: int  # card exits since boot
    fault_code: int  # latched fault (0: none)
    oldest_seq: int  # oldest event in the replay buffer (0: empty)


# ---------------------------------------------------------------- host -> device
class HostHello(Message):
    """Opens a session: the device answers with DeviceHello and forgets its command dedupe."""

    TYPE: ClassVar[int] = 0x81
    NAME: ClassVar[str] = "host_hello"
    FMT: ClassVar[struct.Struct] = struct.Struct("<BB")
    protocol_major: int
    protocol_minor: int


class Ping(Message):
    TYPE: ClassVar[int] = 0x82
    NAME: ClassVar[str] = "ping"
    FMT: ClassVar[struct.Struct] = struct.Struct("<I")
    nonce: int


class SetLights(Message):
    TYPE: ClassVar[int] = 0x83
    NAME: ClassVar[str] = "set_lights"
    FMT: ClassVar[struct.Struct] = struct.Struct("<B")
    brightness: int  # percent 0-100; 0 = off; >100 is answered bad_argument


class SetLock(Message):
    TYPE: ClassVar[int] = 0x84
    NAME: ClassVar[str] = "set_lock"
    FMT: ClassVar[struct.Struct] = struct.Struct("<?")
    locked: bool


class RequestStatus(Message):
    TYPE: ClassVar[int] = 0x85
    NAME: ClassVar[str] = "request_status"


class Reset(Message):
    """``reboot=False``: clear a latched fault; ``True``: acknowledge, then reboot the MCU."""

    TYPE: ClassVar[int] = 0x86
    NAME: ClassVar[str] = "reset"
    FMT: ClassVar[struct.Struct] = struct.Struct("<?")
    reboot: bool


class Replay(Message):
    """Ask the device to re-send every buffered event with seq >= from_seq. Not acked."""

    TYPE: ClassVar[int] = 0x87
    NAME: ClassVar[str] = "replay"
    FMT: ClassVar[struct.Struct] = struct.Struct("<I")
    from_seq: int


class Keepalive(Message):
    """(1.1) The host is alive: sent every keepalive interval, seq 0, not acknowledged.
    A 1.1 device that heard one engages its draw lock on its own when nothing at all
    comes from the host for ``timeout_ms`` (0: never), and keeps it engaged until the
    host sends ``set_lock(false)`` (PROTOCOL.md §9a)."""

    TYPE: ClassVar[int] = 0x88
    NAME: ClassVar[str] = "keepalive"
    FMT: ClassVar[struct.Struct] = struct.Struct("<H")
    timeout_ms: int


# ---------------------------------------------------------------- opaque frames
class Unknown(msgspec.Struct, frozen=True, gc=False):
    """A frame of a type this side does not know (newer firmware): counted and ignored."""

    type: int
    body: bytes


class Malformed(msgspec.Struct, frozen=True, gc=False):
    """A frame whose CRC is good but whose body does not fit its type: counted and ignored."""

    type: int
    body: bytes
    reason: str


MESSAGE_TYPES: dict[int, type[Message]] = {
    cls.TYPE: cls
    for cls in (
        DeviceHello,
        Heartbeat,
        CardExitReport,
        CardReadReport,
        ButtonReport,
        LidReport,
        ShoeLoadedReport,
        ShoeEmptyReport,
        FaultReport,
        Ack,
        Status,
        HostHello,
        Ping,
        SetLights,
        SetLock,
        RequestStatus,
        Reset,
        Replay,
        Keepalive,
    )
}
DEVICE_EVENT_TYPES = frozenset(t for t, cls in MESSAGE_TYPES.items() if cls.SEQUENCED)


class Frame(msgspec.Struct, frozen=True, gc=False):
    """One decoded frame: header fields and the message (or Unknown / Malformed)."""

    type: int
    flags: int
    seq: int
    msg: Message | Unknown | Malformed

    @property
    def sequenced(self) -> bool:
        return bool(self.flags & FLAG_SEQUENCED)


def encode_payload(msg: Message, seq: int = 0, flags: int = 0) -> bytes:
    """Header + body (no framing). Sequenced messages always get FLAG_SEQUENCED."""
    if msg.SEQUENCED:
        flags |= FLAG_SEQUENCED
    payload = HEADER.pack(msg.TYPE, flags, seq) + msg.body()
    if len(payload) > MAX_PAYLOAD:
        raise ValueError(f"{msg.NAME}: payload of {len(payload)} bytes exceeds {MAX_PAYLOAD}")
    return payload


def encode(msg: Message, seq: int = 0, flags: int = 0) -> bytes:
    """The wire bytes of one message (framing included)."""
    return encode_frame(encode_payload(msg, seq, flags))


def decode_payload(payload: bytes) -> Frame:
    """One frame payload (CRC already checked) -> Frame. Raises DecodeError only if the
    payload is shorter than the header; a bad body gives a Malformed message."""
    if len(payload) < HEADER.size:
        raise DecodeError(f"frame of {len(payload)} bytes is shorter than the 6-byte header")
    mtype, flags, seq = HEADER.unpack_from(payload)
    body = payload[HEADER.size :]
    cls = MESSAGE_TYPES.get(mtype)
    if cls is None:
        return Frame(mtype, flags, seq, Unknown(mtype, body))
    try:
        msg = cls.parse(body)
    except (DecodeError, struct.error) as exc:
        return Frame(mtype, flags, seq, Malformed(mtype, body, str(exc)))
    return Frame(mtype, flags, seq, msg)


class StreamDecoder:
    """Bytes in, Frames out. Never raises on input; see ``stats`` and ``framing``."""

    __slots__ = ("framing", "malformed", "short_header", "unknown")

    def __init__(self) -> None:
        self.framing = FrameDecoder()
        self.unknown = 0
        self.malformed = 0
        self.short_header = 0

    def reset(self) -> None:
        self.framing.reset()

    def feed(self, data: bytes) -> list[Frame]:
        out = []
        for payload in self.framing.feed(data):
            try:
                frame = decode_payload(payload)
            except DecodeError:
                self.short_header += 1
                continue
            if type(frame.msg) is Unknown:
                self.unknown += 1
            elif type(frame.msg) is Malformed:
                self.malformed += 1
            out.append(frame)
        return out

    @property
    def stats(self) -> dict[str, int]:
        d = self.framing.stats.as_dict()
        d.update(unknown=self.unknown, malformed=self.malformed, short_header=self.short_header)
        return d

"""The device side of the protocol, without I/O: what the firmware does (PROTOCOL.md §6-§9).

:class:`DeviceCore` numbers events, keeps the replay buffer, answers the host's hello,
commands and replay requests, and de-duplicates retried commands. It never touches a
port or a clock: it is handed a ``clock_us`` function and returns the bytes to write,
so the same logic drives the pty simulator here and could drive real firmware.

>>> core = DeviceCore("SHOE-1", clock_us=lambda: 5_000, boot_id=7)
>>> from firmware_bridge.protocol import StreamDecoder, HostHello, SetLock, encode
>>> out = core.receive(encode(HostHello(1, 0)) + encode(SetLock(True), seq=1))
>>> [f.msg.NAME for f in StreamDecoder().feed(b"".join(w for _, w in out))]
['hello', 'ack']
>>> core.locked
True
>>> _, wire = core.card_exit(duration_us=40_000)
>>> StreamDecoder().feed(wire)[0].seq
1
"""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Callable

from firmware_bridge.framing import encode_frame
from firmware_bridge.protocol import (
    FLAG_REPLAY,
    FLAG_SEQUENCED,
    HEADER,
    PROTOCOL_VERSION,
    STATE_FAULT,
    STATE_LID_OPEN,
    STATE_LOCKED,
    STATE_SHOE_LOADED,
    Ack,
    ButtonReport,
    CardExitReport,
    CardReadReport,
    DeviceHello,
    FaultReport,
    Frame,
    Heartbeat,
    HostHello,
    Keepalive,
    LidReport,
    Message,
    Ping,
    Replay,
    RequestStatus,
    Reset,
    SetLights,
    SetLock,
    ShoeEmptyReport,
    ShoeLoadedReport,
    Status,
    StreamDecoder,
    Unknown,
    button_id,
    encode,
)

__all__ = ["ALL_CAPABILITIES", "DeviceCore", "Out", "RawEvent"]

#: every capability bit of protocols 1.0 and 1.1 (see protocol.CAPABILITY_NAMES)
ALL_CAPABILITIES = 0x7F

#: What a DeviceCore wants written: ("event", wire) for a live device event,
#: ("replay", wire) for a re-sent one, ("ack", wire) for a command's ack,
#: ("status", wire) for a Status reply, ("control", wire) for everything else.
Out = tuple[str, bytes]


class RawEvent:
    """A device event given as raw type and body, sent as they are, even over the
    512-byte payload limit (fault injection: a firmware that breaks §2)."""

    def __init__(self, mtype: int, body: bytes) -> None:
        self.TYPE = mtype
        self.raw = body

    def body(self) -> bytes:
        return self.raw


def _wire(msg: Message | RawEvent, seq: int, flags: int) -> bytes:
    """One event frame with exactly ``flags`` (no size check for a RawEvent)."""
    return encode_frame(HEADER.pack(msg.TYPE, flags, seq) + msg.body())


class DeviceCore:
    """Protocol state of one shoe microcontroller (one boot of it)."""

    def __init__(
        self,
        device_id: str,
        *,
        clock_us: Callable[[], int],
        firmware: tuple[int, int, int] = (1, 0, 0),
        protocol: tuple[int, int] = PROTOCOL_VERSION,
        capabilities: int = ALL_CAPABILITIES,
        replay_size: int = 64,
        boot_id: int | None = None,
    ) -> None:
        self.device_id = device_id
        self.clock_us = clock_us
        self.firmware = firmware
        self.protocol = protocol
        self.capabilities = capabilities
        # random per boot and never 0 (PROTOCOL.md §5)
        self.boot_id = (random.getrandbits(32) or 1) if boot_id is None else boot_id
        self.decoder = StreamDecoder()
        self.last_seq = 0  # last event sequence number assigned (0: none yet)
        self.buffer: deque[tuple[int, Message | RawEvent]] = deque(maxlen=replay_size)
        #: fault injection (a non-conforming firmware): events it keeps but can never
        #: send again, and the next events it sends without the SEQUENCED flag
        self.unsendable: set[int] = set()
        self.strip_flag = 0
        # command de-duplication: the host re-sends a command with the same seq
        self.last_cmd: tuple[int, int, int] | None = None  # (seq, type, status)
        self.executed: list[Message] = []  # every command executed once (tests)
        self.reboot_requested = False
        # the shoe's outputs and sensors
        self.brightness = 0
        self.locked = False
        self.lid_open = False
        self.shoe_loaded = False
        self.fault_code = 0
        self.cards_total = 0
        # (1.1) keepalive: the host's silence after which the lock engages on its own
        self.host_timeout_us = 0  # 0: no keepalive heard this session (or disabled)
        self.last_host_us = 0  # device clock of the last valid frame from the host
        self.self_locked = False  # the lock was engaged by tick(), not by the host

    # ---------------------------------------------------------------- state
    @property
    def oldest_seq(self) -> int:
        return self.buffer[0][0] if self.buffer else 0

    @property
    def state(self) -> int:
        return (
            (STATE_LID_OPEN if self.lid_open else 0)
            | (STATE_SHOE_LOADED if self.shoe_loaded else 0)
            | (STATE_LOCKED if self.locked else 0)
            | (STATE_FAULT if self.fault_code else 0)
        )

    def hello(self) -> Out:
        maj, mnr, pat = self.firmware
        msg = DeviceHello(
            self.protocol[0],
            self.protocol[1],
            maj,
            mnr,
            pat,
            self.capabilities,
            self.boot_id,
            self.oldest_seq,
            self.device_id,
        )
        return ("control", encode(msg, self.last_seq))

    def heartbeat(self, flags: int = 0) -> Out:
        """The periodic heartbeat (``flags``: fault injection, e.g. a wrong SEQUENCED)."""
        msg = Heartbeat(self.clock_us(), self.state, self.brightness, self.oldest_seq)
        return ("control", encode(msg, self.last_seq, flags))

    # ---------------------------------------------------------------- events
    def event(self, msg: Message | RawEvent) -> Out:
        """Number a device event, keep it for replay, return its wire bytes."""
        self.last_seq += 1
        self.buffer.append((self.last_seq, msg))
        flags = FLAG_SEQUENCED
        if self.strip_flag:
            self.strip_flag -= 1
            flags = 0
        return ("event", _wire(msg, self.last_seq, flags))

    def card_exit(self, duration_us: int = 40_000) -> Out:
        self.cards_total += 1
        return self.event(CardExitReport(self.clock_us(), duration_us))

    def card_read(self, payload: bytes, symbology: int = 1) -> Out:
        return self.event(CardReadReport(self.clock_us(), symbology, bytes(payload)))

    def button(self, name: str) -> Out:
        return self.event(ButtonReport(self.clock_us(), button_id(name)))

    def lid(self, is_open: bool) -> Out:
        self.lid_open = is_open
        return self.event(LidReport(self.clock_us(), is_open))

    def shoe(self, loaded: bool) -> Out:
        self.shoe_loaded = loaded
        cls = ShoeLoadedReport if loaded else ShoeEmptyReport
        return self.event(cls(self.clock_us()))

    def fault(self, code: int, detail: str = "") -> Out:
        self.fault_code = code
        return self.event(FaultReport(self.clock_us(), code, detail))

    # ---------------------------------------------------------------- host input
    def receive(self, data: bytes) -> list[Out]:
        """Bytes from the host -> what to write back, in order."""
        out: list[Out] = []
        for frame in self.decoder.feed(data):
            out.extend(self.handle(frame))
        return out

    def tick(self) -> bool:
        """(1.1, PROTOCOL.md §9a) Call often (every few ms to 50 ms): engages the draw lock
        when the host has been silent for its keepalive timeout. True if it just did.

        >>> t = [0]
        >>> c = DeviceCore("S", clock_us=lambda: t[0], boot_id=1)
        >>> _ = c.receive(encode(Keepalive(1000)))
        >>> t[0] = 999_000; c.tick(), c.locked
        (False, False)
        >>> t[0] = 1_001_000; c.tick(), c.locked
        (True, True)
        """
        if (self.host_timeout_us and not self.locked
                and self.clock_us() - self.last_host_us > self.host_timeout_us):
            self.locked = True
            self.self_locked = True
            return True
        return False

    def handle(self, frame: Frame) -> list[Out]:
        """One decoded host frame -> what to write back, in order."""
        msg = frame.msg
        self.last_host_us = self.clock_us()  # any valid frame shows the host is there
        if isinstance(msg, HostHello):
            self.last_cmd = None  # a new host session numbers its commands afresh
            return [self.hello()]
        if isinstance(msg, Keepalive) and self.protocol >= (1, 1):
            self.host_timeout_us = msg.timeout_ms * 1000
            return []  # never acknowledged
        if isinstance(msg, Replay):
            start = max(msg.from_seq, 1)
            return [
                ("replay", _wire(m, seq, FLAG_REPLAY | FLAG_SEQUENCED))
                for seq, m in self.buffer
                if seq >= start and seq not in self.unsendable
            ]
        if frame.type >= 0x80:
            return self._command(frame.seq, frame.type, msg)
        return []  # a device-to-host type sent to the device: ignored

    def _command(self, seq: int, ctype: int, msg: object) -> list[Out]:
        if isinstance(msg, Keepalive):  # a 1.0 device does not know it
            msg = Unknown(ctype, b"")
        if self.last_cmd is not None and self.last_cmd[:2] == (seq, ctype):
            # a retry of a command already executed: answer again, do not execute again
            out: list[Out] = []
            if isinstance(msg, RequestStatus):
                out.append(self._status())
            return [*out, ("ack", encode(Ack(seq, ctype, self.last_cmd[2]), self.last_seq))]
        out = []
        status = 0
        if isinstance(msg, Ping):
            pass
        elif isinstance(msg, SetLights):
            if msg.brightness > 100:
                status = 1
            else:
                self.brightness = msg.brightness
        elif isinstance(msg, SetLock):
            self.locked = msg.locked
            self.self_locked = False
        elif isinstance(msg, RequestStatus):
            out.append(self._status())
        elif isinstance(msg, Reset):
            self.fault_code = 0
            self.reboot_requested = msg.reboot
        elif isinstance(msg, Unknown):
            status = 2  # unsupported: the host learns at once, it does not retry
        else:
            status = 1  # Malformed body
        if status == 0:
            self.executed.append(msg)  # type: ignore[arg-type]
        self.last_cmd = (seq, ctype, status)
        out.append(("ack", encode(Ack(seq, ctype, status), self.last_seq)))
        return out

    def _status(self) -> Out:
        msg = Status(
            self.clock_us(),
            self.state,
            self.brightness,
            self.cards_total,
            self.fault_code,
            self.oldest_seq,
        )
        return ("status", encode(msg, self.last_seq))

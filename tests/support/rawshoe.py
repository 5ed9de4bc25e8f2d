"""A second, independent shoe device for tests: raw bytes on a pty, written from PROTOCOL.md.

It shares no code with ``firmware_bridge`` (its own COBS, CRC framing, struct layouts and
sequence numbering), so a test that drives the host's ``Link`` with it checks the host
against the spec's text, not against the reference device. It does only what a test
scripts: answer ``host_hello`` with a hello, send heartbeats every ``heartbeat`` seconds
on a thread, replay what it sent (unless told to forget some), acknowledge commands
``ok`` and record them; everything else (events, flags, bad frames) is sent by hand.

>>> cobs(b"\\x11\\x22\\x00\\x33")
b'\\x03\\x11"\\x023'
>>> uncobs(cobs(b"\\x00\\x00a\\x00"))
b'\\x00\\x00a\\x00'
"""

from __future__ import annotations

import contextlib
import os
import select
import struct
import threading
import time
import tty
import zlib

SEQUENCED = 0x02
REPLAY = 0x01


def cobs(data: bytes) -> bytes:
    """COBS as in Cheshire & Baker's paper: blocks of at most 254 non-zero bytes."""
    out = bytearray()
    code_at = 0
    out.append(0)
    code = 1
    for b in data:
        if b == 0:
            out[code_at] = code
            code_at = len(out)
            out.append(0)
            code = 1
            continue
        out.append(b)
        code += 1
        if code == 0xFF:
            out[code_at] = code
            code_at = len(out)
            out.append(0)
            code = 1
    out[code_at] = code
    return bytes(out)


def uncobs(data: bytes) -> bytes:
    out = bytearray()
    i = 0
    while i < len(data):
        code = data[i]
        out += data[i + 1 : i + code]
        i += code
        if code != 0xFF and i < len(data):
            out.append(0)
    return bytes(out)


def frame(payload: bytes) -> bytes:
    """The wire bytes of one payload: COBS(payload + CRC-32 LE) and the 0x00 delimiter."""
    return cobs(payload + struct.pack("<I", zlib.crc32(payload) & 0xFFFFFFFF)) + b"\x00"


def payload(mtype: int, flags: int, seq: int, body: bytes) -> bytes:
    return struct.pack("<BBI", mtype, flags, seq) + body


class RawShoe:
    """A scripted shoe on a pty. ``path`` is the slave to open."""

    def __init__(self, *, protocol: tuple[int, int] = (1, 1), capabilities: int = 0x7F,
                 boot_id: int = 0x5EED, heartbeat: float = 0.05) -> None:
        self.protocol = protocol
        self.capabilities = capabilities
        self.boot_id = boot_id
        self.heartbeat_interval = heartbeat
        self.t0 = time.monotonic_ns()
        self.seq = 0  # last event seq emitted
        self.sent: dict[int, bytes] = {}  # seq -> payload (for replays)
        self.forget: set[int] = set()  # seqs never replayed (a device that cannot)
        self.oldest = 0  # what heartbeats say is the oldest buffered (0: take min(sent))
        self.heartbeat_flags = 0
        self.brightness = 0
        self.locked = False
        self.state_extra = 0
        self.received: list[tuple[int, int, int, bytes]] = []  # (type, flags, seq, body)
        self.replays: list[int] = []  # from_seq of every replay request
        self.answer = True  # answer host_hello and commands
        self.master, self.slave = os.openpty()
        tty.setraw(self.slave)
        os.set_blocking(self.master, False)
        self.path = os.ttyname(self.slave)
        self._lock = threading.RLock()
        self._stop = threading.Event()
        self._buf = b""
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._stop.set()
        self._thread.join(2)
        for fd in (self.master, self.slave):
            with contextlib.suppress(OSError):
                os.close(fd)

    def __enter__(self) -> RawShoe:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ device clock
    def clock_us(self) -> int:
        return (time.monotonic_ns() - self.t0) // 1000

    # ------------------------------------------------------------------ writing
    def write(self, data: bytes) -> None:
        with self._lock:
            view = memoryview(data)
            while view:
                try:
                    view = view[os.write(self.master, view):]
                except BlockingIOError:
                    time.sleep(0.001)
                except OSError:
                    return

    def event(self, mtype: int, body: bytes, *, flags: int = SEQUENCED,
              seq: int | None = None, send: bool = True) -> int:
        """Emit one event (the next seq unless given); kept for replays."""
        with self._lock:
            if seq is None:
                self.seq += 1
                seq = self.seq
            p = payload(mtype, flags, seq, body)
            self.sent[seq] = p
            if send:
                self.write(frame(p))
            return seq

    def card_exit(self, t_us: int | None = None, duration_us: int = 40_000, **kw: object) -> int:
        t = self.clock_us() if t_us is None else t_us
        return self.event(0x03, struct.pack("<QI", t, duration_us), **kw)  # type: ignore[arg-type]

    def card_read(self, code: bytes, t_us: int | None = None, **kw: object) -> int:
        t = self.clock_us() if t_us is None else t_us
        return self.event(0x04, struct.pack("<QB", t, 1) + bytes([len(code)]) + code,
                          **kw)  # type: ignore[arg-type]

    def button(self, button: int, **kw: object) -> int:
        return self.event(0x05, struct.pack("<QB", self.clock_us(), button),
                          **kw)  # type: ignore[arg-type]

    def state(self) -> int:
        return (0x04 if self.locked else 0) | self.state_extra

    def oldest_seq(self) -> int:
        if self.oldest:
            return self.oldest
        return min(self.sent) if self.sent else 0

    def heartbeat(self, uptime_us: int | None = None) -> None:
        up = self.clock_us() if uptime_us is None else uptime_us
        body = struct.pack("<QBBI", up, self.state(), self.brightness, self.oldest_seq())
        self.write(frame(payload(0x02, self.heartbeat_flags, self.seq, body)))

    def hello(self) -> None:
        device_id = b"RAW-1"
        body = struct.pack("<BBBBBIII", *self.protocol, 1, 1, 0, self.capabilities,
                           self.boot_id, self.oldest_seq()) + bytes([len(device_id)]) + device_id
        self.write(frame(payload(0x01, 0, self.seq, body)))

    def reboot(self, boot_id: int) -> None:
        """Restart: new boot id, sequence from 1, nothing buffered; unsolicited hello."""
        with self._lock:
            self.boot_id = boot_id
            self.seq = 0
            self.sent.clear()
            self.forget.clear()
            self.oldest = 0
            self.t0 = time.monotonic_ns()
            self.hello()

    # ------------------------------------------------------------------ the device loop
    def _run(self) -> None:
        next_hb = time.monotonic()
        while not self._stop.is_set():
            now = time.monotonic()
            if now >= next_hb:
                next_hb = now + self.heartbeat_interval
                self.heartbeat()
            try:
                r, _, _ = select.select([self.master], [], [], max(0.0, next_hb - now))
            except (OSError, ValueError):
                return
            if not r:
                continue
            try:
                data = os.read(self.master, 4096)
            except BlockingIOError:
                continue
            except OSError:
                time.sleep(0.01)
                continue
            self._buf += data
            *parts, self._buf = self._buf.split(b"\x00")
            for part in parts:
                if not part:
                    continue
                raw = uncobs(part)
                if len(raw) < 10 or zlib.crc32(raw[:-4]) & 0xFFFFFFFF != struct.unpack(
                        "<I", raw[-4:])[0]:
                    continue
                p = raw[:-4]
                mtype, flags, seq = struct.unpack_from("<BBI", p)
                self._on_host(mtype, flags, seq, p[6:])

    def _on_host(self, mtype: int, flags: int, seq: int, body: bytes) -> None:
        with self._lock:
            self.received.append((mtype, flags, seq, body))
            if not self.answer:
                return
            if mtype == 0x81:
                self.hello()
            elif mtype == 0x87:
                (from_seq,) = struct.unpack_from("<I", body)
                self.replays.append(from_seq)
                for s in sorted(self.sent):
                    if s >= from_seq and s not in self.forget:
                        p = self.sent[s]
                        self.write(frame(p[:1] + bytes([p[1] | REPLAY]) + p[2:]))
            elif mtype >= 0x82:
                if mtype == 0x83:
                    self.brightness = body[0]
                elif mtype == 0x84:
                    self.locked = bool(body[0])
                if mtype == 0x85:  # request_status: status first
                    st = struct.pack("<QBBIHI", self.clock_us(), self.state(), self.brightness,
                                     0, 0, self.oldest_seq())
                    self.write(frame(payload(0x0B, 0, self.seq, st)))
                if mtype == 0x88:
                    return  # keepalive: never acknowledged
                ack = struct.pack("<IBB", seq, mtype, 0)
                self.write(frame(payload(0x0A, 0, self.seq, ack)))

    def commands(self, mtype: int) -> list[bytes]:
        """Bodies of every host frame of ``mtype`` received."""
        with self._lock:
            return [b for t, _, _, b in self.received if t == mtype]

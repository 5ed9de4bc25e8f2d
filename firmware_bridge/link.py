"""The host side of the serial link: open, handshake, events onto a queue, commands with ack.

>>> import queue
>>> from firmware_bridge.config import SerialConfig
>>> from firmware_bridge.simulator import DeviceSimulator
>>> from firmware_bridge.events import CardExit
>>> with DeviceSimulator(heartbeat_interval=0.05) as sim:
...     q = queue.Queue()
...     with Link(SerialConfig(port=sim.path), q) as link:
...         info = link.wait_up(timeout=5)
...         link.set_lights(80)
...         _ = sim.card_exit(duration_us=38_000)
...         up, exit_ = q.get(timeout=5), q.get(timeout=5)
>>> info.device_id, up.kind, type(exit_).__name__, exit_.duration_us, sim.brightness
('SIM-0001', 'link_up', 'CardExit', 38000, 80)

One reader thread owns the port. It opens it (path or pyserial URL, exclusively),
says hello, checks the protocol version, asks the device to replay what it missed,
then reads frames: device events go onto the queue in sequence order, exactly once;
acks wake the command that waits for them. A silent device (no frame for
``heartbeat_timeout``), an unplugged one (I/O error) or a refused handshake ends the
session: ``link_down`` goes onto the queue and the thread reconnects with back-off.

Commands (:meth:`Link.set_lights`, :meth:`Link.set_lock`, :meth:`Link.request_status`,
:meth:`Link.reset`, :meth:`Link.ping`) may be called from any thread; they block until
acknowledged (at most ``(1 + command_retries) * ack_timeout``) and raise
:class:`LinkDownError`, :class:`CommandTimeout` or :class:`CommandRejected`.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import itertools
import os
import queue
import termios
import threading
import time
from typing import Any, Protocol

import serial

from firmware_bridge.config import SerialConfig
from firmware_bridge.events import (
    BridgeEvent,
    BridgeFault,
    ButtonPressed,
    CardExit,
    CardRead,
    DeviceClock,
    DeviceInfo,
    DeviceStatus,
    LidChanged,
    LinkDown,
    LinkUp,
    ShoeEmpty,
    ShoeLoaded,
)
from firmware_bridge.protocol import (
    BUTTON_NAMES,
    FAULT_NAMES,
    FLAG_SEQUENCED,
    MESSAGE_TYPES,
    PROTOCOL_VERSION,
    STATE_LID_OPEN,
    STATE_LOCKED,
    STATE_SHOE_LOADED,
    STATUS_NAMES,
    SYMBOLOGY_NAMES,
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
    encode,
)

__all__ = [
    "CommandRejected",
    "CommandTimeout",
    "Link",
    "LinkDownError",
    "LinkError",
    "ProtocolVersionError",
    "check_version",
    "hold_exclusively",
    "release_exclusive",
    "to_event",
]

#: out-of-order events kept while waiting for the missing ones (beyond: dropped, replayed)
MAX_STASH = 1024


class LinkError(Exception):
    """Base of the link's errors."""


class LinkDownError(LinkError):
    """The link is down (or went down while a command waited for its ack)."""


class CommandTimeout(LinkError):
    """A command was not acknowledged after all its attempts."""


class CommandRejected(LinkError):
    """The device acknowledged a command with an error status (bad_argument, unsupported, ...)."""

    def __init__(self, command: str, status: int) -> None:
        self.command = command
        self.status = STATUS_NAMES.get(status, f"status_{status}")
        super().__init__(f"the shoe refused {command}: {self.status}")


class ProtocolVersionError(LinkError):
    """The device speaks a protocol major version this host does not."""


def check_version(hello: DeviceHello) -> None:
    """Raise :class:`ProtocolVersionError` unless the device's major version is ours.

    >>> h = DeviceHello(2, 1, 2, 0, 0, 0x7F, 1, 0, "SHOE-9")
    >>> check_version(h)
    Traceback (most recent call last):
      ...
    firmware_bridge.link.ProtocolVersionError: shoe SHOE-9 (firmware 2.0.0) speaks protocol 2.1; \
this host speaks 1.1. Flash the shoe with firmware for protocol 1.x, or update shoe-controller.
    """
    if hello.protocol_major != PROTOCOL_VERSION[0]:
        raise ProtocolVersionError(
            f"shoe {hello.device_id} (firmware {hello.firmware}) speaks protocol "
            f"{hello.protocol_major}.{hello.protocol_minor}; this host speaks "
            f"{PROTOCOL_VERSION[0]}.{PROTOCOL_VERSION[1]}. Flash the shoe with firmware for "
            f"protocol {PROTOCOL_VERSION[0]}.x, or update shoe-controller."
        )


def to_event(frame: Frame, rx_ns: int = 0) -> BridgeEvent | None:
    """The daemon-facing value of one device-event frame (None for types we do not know).

    >>> to_event(Frame(5, FLAG_SEQUENCED, 9, ButtonReport(t_us=77, button=2)))
    ButtonPressed(seq=9, t_us=77, button='confirm', rx_ns=0)
    """
    m = frame.msg
    seq = frame.seq
    t = type(m)
    if t is CardExitReport:
        return CardExit(seq, m.t_us, m.duration_us, rx_ns)
    if t is CardReadReport:
        sym = SYMBOLOGY_NAMES.get(m.symbology, f"symbology_{m.symbology}")
        return CardRead(seq, m.t_us, sym, m.payload, rx_ns)
    if t is ButtonReport:
        return ButtonPressed(seq, m.t_us, BUTTON_NAMES.get(m.button, f"button_{m.button}"), rx_ns)
    if t is LidReport:
        return LidChanged(seq, m.t_us, m.open, rx_ns)
    if t is ShoeLoadedReport:
        return ShoeLoaded(seq, m.t_us, rx_ns)
    if t is ShoeEmptyReport:
        return ShoeEmpty(seq, m.t_us, rx_ns)
    if t is FaultReport:
        name = FAULT_NAMES.get(m.code, f"fault_{m.code}")
        return BridgeFault("device", name, m.detail, m.code, seq, m.t_us, rx_ns)
    return None


class _Waiter:
    """One command waiting for its ack."""

    __slots__ = ("ack", "done", "down", "seq", "status_mark")

    def __init__(self, seq: int, status_mark: int | None) -> None:
        self.seq = seq
        self.status_mark = status_mark  # request_status: the ack counts only after a Status
        self.done = threading.Event()
        self.ack: Ack | None = None
        self.down = False


class EventSink(Protocol):
    """Where the link delivers its events, in device order, from its reader thread: a
    ``queue.Queue``, or anything with ``put`` that returns quickly."""

    def put(self, item: Any) -> None: ...


def hold_exclusively(ser: Any) -> bool:
    """Make an open serial port exclusive to this process (``TIOCEXCL``): the kernel then
    refuses every further ``open()`` of the tty (EBUSY) by anybody but root, whatever
    they do with locks. pyserial's ``exclusive=True`` is an advisory ``flock`` only,
    which a second reader that never asks for the lock ignores. True when set; False for
    a port with no tty behind it (``loop://``, ``socket://``).

    >>> import os, serial
    >>> master, slave = os.openpty()
    >>> ser = serial.Serial(os.ttyname(slave), exclusive=True)
    >>> hold_exclusively(ser), hold_exclusively(serial.serial_for_url("loop://"))
    (True, False)
    >>> ser.close(); os.close(master); os.close(slave)
    """
    fd = _tty_fd(ser)
    if fd is None:
        return False
    fcntl.ioctl(fd, termios.TIOCEXCL)
    return True


def release_exclusive(ser: Any) -> None:
    """Undo :func:`hold_exclusively` before closing (``TIOCNXCL``)."""
    fd = _tty_fd(ser)
    if fd is not None:
        with contextlib.suppress(OSError):
            fcntl.ioctl(fd, termios.TIOCNXCL)


def _tty_fd(ser: Any) -> int | None:
    try:
        fd = ser.fileno()
    except Exception:  # loop://, socket:// ...: no file descriptor of a tty
        return None
    return fd if isinstance(fd, int) and os.isatty(fd) else None


class Link:
    """The serial link to the shoe. ``start()`` it; events arrive on ``events``."""

    def __init__(self, config: SerialConfig, events: queue.Queue[Any] | EventSink, *,
                 clock_events: bool = False) -> None:
        self.config = config
        self.events = events
        #: also queue :class:`DeviceClock` values (the read/exit pairing's time base)
        self.clock_events = clock_events
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._up_changed = threading.Condition()
        self._ser: serial.SerialBase | None = None
        self._write_lock = threading.Lock()
        self._cmd_lock = threading.Lock()
        self._cmd_seq = itertools.count(1)
        self._waiter: _Waiter | None = None
        self._decoder = StreamDecoder()
        self._up = False
        self.device: DeviceInfo | None = None
        self.last_error: LinkError | None = None
        self._reported: str | None = None  # last link fault reported (report each once)
        # device event sequencing (reader thread only)
        self._boot_id: int | None = None
        self._expected = 1  # next device seq to deliver
        self._high_water = 0  # highest device seq the device says it has sent
        self._stash: dict[int, tuple[Frame, int]] = {}
        self._gap_deadline: float | None = None
        self._gap_for = 0  # the `expected` the current replay attempts are for
        self._gap_attempts = 0  # replay requests for it without progress
        self._gap_bad = 0  # the decoder's oversize count when that gap opened
        self._mismatched: set[int] = set()  # types whose flag mismatch was reported
        self._status: Status | None = None
        self._keepalive = False  # the device speaks 1.1 or later: send keepalives
        #: (state bits, brightness) from the device's last heartbeat or status this
        #: session (None until one arrives)
        self.device_state: tuple[int, int] | None = None
        #: heartbeats and statuses received (so a reader can tell a newer state)
        self.state_count = 0
        self._status_count = 0
        self._counters = dict.fromkeys(
            (
                "sessions",
                "link_downs",
                "events",
                "duplicates",
                "out_of_order",
                "replays_requested",
                "events_lost",
                "unknown_events",
                "flag_mismatches",
                "gaps_abandoned",
                "commands",
                "command_retries",
                "commands_failed",
            ),
            0,
        )

    # ---------------------------------------------------------------- lifecycle
    def start(self) -> Link:
        if self._thread is None:
            self._stop.clear()
            self._thread = threading.Thread(target=self._run, name="shoe-link", daemon=True)
            self._thread.start()
        return self

    def stop(self) -> None:
        """Stop the reader thread and close the port (no ``link_down`` is queued)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> Link:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def is_up(self) -> bool:
        return self._up

    def wait_up(self, timeout: float | None = None) -> DeviceInfo:
        """Block until the handshake succeeds; return who answered.

        Raises :class:`ProtocolVersionError` as soon as a handshake is refused for the
        version, and :class:`LinkError` (naming the last problem) after ``timeout``.
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._up_changed:
            while not self._up:
                if isinstance(self.last_error, ProtocolVersionError):
                    raise self.last_error
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    why = f": {self.last_error}" if self.last_error else ""
                    raise LinkError(f"no link to {self.config.port} within {timeout} s{why}")
                self._up_changed.wait(left)
            assert self.device is not None
            return self.device

    @property
    def stats(self) -> dict[str, int]:
        """Counters since the link was made: sessions, link_downs, events (delivered),
        duplicates (dropped), out_of_order, replays_requested, events_lost,
        unknown_events, commands, command_retries, commands_failed; and the decoder's:
        bytes_in, frames, bad_crc, cobs_errors, oversize, short, bad_frames (their sum:
        what garbage on the line cost), unknown, malformed, short_header."""
        d = dict(self._counters)
        d.update(self._decoder.stats)
        return d

    # ---------------------------------------------------------------- commands
    def ping(self) -> float:
        """Round trip to the device and back, in seconds."""
        t0 = time.perf_counter()
        self._command(Ping(time.monotonic_ns() & 0xFFFFFFFF))
        return time.perf_counter() - t0

    def set_lights(self, brightness: int) -> None:
        """Shoe illumination, percent 0-100 (0 = off)."""
        if not 0 <= brightness <= 100:
            raise ValueError(f"brightness must be 0-100 percent, got {brightness}")
        self._command(SetLights(brightness))

    def set_lock(self, locked: bool) -> None:
        """Engage (True) or release the draw lock."""
        self._command(SetLock(bool(locked)))

    def request_status(self) -> DeviceStatus:
        self._command(RequestStatus())
        st = self._status
        assert st is not None
        return DeviceStatus(
            uptime_us=st.uptime_us,
            lid_open=bool(st.state & STATE_LID_OPEN),
            shoe_loaded=bool(st.state & STATE_SHOE_LOADED),
            locked=bool(st.state & STATE_LOCKED),
            brightness=st.brightness,
            cards_total=st.cards_total,
            fault=FAULT_NAMES.get(st.fault_code, f"fault_{st.fault_code}")
            if st.fault_code
            else None,
        )

    def reset(self, reboot: bool = False) -> None:
        """Clear a latched firmware fault; with ``reboot``, restart the microcontroller
        (the link re-synchronises on its hello and reports ``link_up`` restarted)."""
        self._command(Reset(bool(reboot)))

    def _command(self, msg: Message) -> Ack:
        cfg = self.config
        with self._cmd_lock:
            if not self._up:
                raise LinkDownError(f"{msg.NAME}: the link to the shoe is down")
            self._counters["commands"] += 1
            seq = next(self._cmd_seq) & 0xFFFFFFFF
            mark = self._status_count if isinstance(msg, RequestStatus) else None
            waiter = self._waiter = _Waiter(seq, mark)
            wire = encode(msg, seq)
            try:
                for attempt in range(1 + cfg.command_retries):
                    if attempt:
                        self._counters["command_retries"] += 1
                    if waiter.down or not self._up:
                        break
                    self._write(wire)
                    if waiter.done.wait(cfg.ack_timeout):
                        break
            finally:
                self._waiter = None
            if waiter.down or (waiter.ack is None and not self._up):
                self._counters["commands_failed"] += 1
                raise LinkDownError(f"{msg.NAME}: the link to the shoe went down")
            if waiter.ack is None:
                self._counters["commands_failed"] += 1
                raise CommandTimeout(
                    f"{msg.NAME}: no ack from the shoe after {1 + cfg.command_retries} "
                    f"attempts of {cfg.ack_timeout} s"
                )
            if waiter.ack.status != 0:
                self._counters["commands_failed"] += 1
                raise CommandRejected(msg.NAME, waiter.ack.status)
            return waiter.ack

    def _write(self, data: bytes) -> None:
        with self._write_lock:
            ser = self._ser
            if ser is None:
                raise LinkDownError("the port is closed")
            try:
                ser.write(data)
            except (serial.SerialException, OSError) as exc:
                raise LinkDownError(f"write failed: {exc}") from exc

    # ---------------------------------------------------------------- reader thread
    def _emit(self, event: BridgeEvent) -> None:
        self.events.put(event)

    def _report(self, name: str, detail: str) -> None:
        """A link fault, queued once per distinct problem (until the link is up again)."""
        if self._reported != name:
            self._reported = name
            self._emit(BridgeFault("link", name, detail))

    def _set_up(self, up: bool) -> None:
        with self._up_changed:
            self._up = up
            self._up_changed.notify_all()

    def _run(self) -> None:
        cfg = self.config
        backoff = cfg.reconnect_initial
        while not self._stop.is_set():
            ser = self._open()
            if ser is not None:
                went_up, reason = self._session(ser)
                with self._write_lock:
                    self._ser = None
                with contextlib.suppress(Exception):
                    release_exclusive(ser)
                    ser.close()
                if self._up:
                    self._set_up(False)
                    waiter = self._waiter
                    if waiter is not None:
                        waiter.down = True
                        waiter.done.set()
                    if not self._stop.is_set():
                        self._counters["link_downs"] += 1
                        self._emit(LinkDown(reason))
                if went_up:
                    backoff = cfg.reconnect_initial
            if self._stop.wait(backoff):
                break
            backoff = min(backoff * 2, cfg.reconnect_max)

    def _open(self) -> serial.SerialBase | None:
        cfg = self.config
        try:
            ser = serial.serial_for_url(
                cfg.port,
                baudrate=cfg.baudrate,
                timeout=cfg.poll_interval,
                write_timeout=max(1.0, cfg.ack_timeout),
                exclusive=cfg.exclusive,
            )
        except (serial.SerialException, OSError, ValueError) as exc:
            text = str(exc)
            busy = "exclusively lock" in text or getattr(exc, "errno", None) in (
                errno.EBUSY,
                errno.EAGAIN,
            )
            name = "port_busy" if busy else "open_failed"
            hint = "another process holds it" if busy else "is the shoe plugged in?"
            err = LinkError(f"cannot open {cfg.port} ({hint}): {text}")
            self.last_error = err
            self._report(name, str(err))
            return None
        if cfg.exclusive:
            try:
                hold_exclusively(ser)
            except OSError as exc:
                with contextlib.suppress(Exception):
                    ser.close()
                err = LinkError(f"cannot hold {cfg.port} exclusively (TIOCEXCL): {exc}")
                self.last_error = err
                self._report("port_busy", str(err))
                return None
        with self._write_lock:
            self._ser = ser
        return ser

    def _session(self, ser: serial.SerialBase) -> tuple[bool, str]:
        """Handshake and read until the session ends. Returns (went up, why it ended)."""
        cfg = self.config
        self._counters["sessions"] += 1
        self._decoder.reset()
        hello = b"\x00" + encode(HostHello(*PROTOCOL_VERSION))  # 0x00 flushes a partial frame
        went_up = False
        now = time.monotonic()
        last_rx = now
        handshake_deadline = now + cfg.handshake_timeout
        next_hello = now
        next_keepalive = now
        self.device_state = None
        keepalive = encode(Keepalive(round(cfg.keepalive_timeout * 1000)))
        try:
            while not self._stop.is_set():
                if not self._up and now >= next_hello:
                    self._write(hello)
                    next_hello = now + cfg.handshake_timeout / 2
                data = ser.read(ser.in_waiting or 1)
                now = time.monotonic()
                if data:
                    rx_ns = time.monotonic_ns()
                    for frame in self._decoder.feed(data):
                        last_rx = now
                        self._on_frame(frame, now, rx_ns)
                    went_up = went_up or self._up
                if not self._up:
                    if now >= handshake_deadline:
                        err = LinkError(
                            f"{cfg.port}: no hello from the shoe within {cfg.handshake_timeout} s"
                        )
                        self.last_error = err
                        self._report("no_answer", str(err))
                        return went_up, str(err)
                    continue
                if self._keepalive and now >= next_keepalive:
                    self._write(keepalive)  # 1.1: the device locks itself if these stop
                    next_keepalive = now + cfg.keepalive_interval
                if now - last_rx > cfg.heartbeat_timeout:
                    return (
                        went_up,
                        f"heartbeat timeout: nothing from the shoe for {now - last_rx:.3f} s",
                    )
                if self._gap_deadline is not None and now >= self._gap_deadline:
                    self._request_replay(now)
        except ProtocolVersionError as exc:
            self.last_error = exc
            self._report("protocol_mismatch", str(exc))
            with self._up_changed:
                self._up_changed.notify_all()
            return went_up, str(exc)
        except (serial.SerialException, OSError, LinkDownError) as exc:
            return went_up, f"port lost (unplugged?): {exc}"
        return went_up, "stopped"

    # ---------------------------------------------------------------- frames
    def _on_frame(self, frame: Frame, now: float, rx_ns: int) -> None:
        msg = frame.msg
        t = type(msg)
        if t is DeviceHello:
            self._on_hello(frame, now)
            return
        if not self._up:
            return  # stale bytes from before our hello
        if frame.type >= 0x80:
            return  # a host-to-device type: a device never sends one (counted as unknown)
        cls = MESSAGE_TYPES.get(frame.type)
        # The type decides what a frame is; the flag only says whether it is sequenced,
        # and is trusted alone only for a type this host does not know (§3, §10).
        is_event = cls.SEQUENCED if cls is not None else bool(frame.flags & FLAG_SEQUENCED)
        if cls is not None and is_event != bool(frame.flags & FLAG_SEQUENCED):
            self._flag_mismatch(frame, is_event)
        if is_event:
            self._on_event(frame, now, rx_ns)
        elif t is Heartbeat:
            self.device_state = (msg.state, msg.brightness)  # type: ignore[union-attr]
            self.state_count += 1
            self._note_high_water(frame.seq, now)
            self._note_oldest(msg.oldest_seq)  # type: ignore[union-attr]
            self._clock(frame.seq, msg.uptime_us)  # type: ignore[union-attr]
        elif t is Ack:
            self._note_high_water(frame.seq, now)
            waiter = self._waiter
            if (
                waiter is not None
                and msg.acked_seq == waiter.seq  # type: ignore[union-attr]
                # request_status: its ack counts only once its Status frame has arrived
                and (waiter.status_mark is None or self._status_count > waiter.status_mark)
            ):
                waiter.ack = msg  # type: ignore[assignment]
                waiter.done.set()
        elif t is Status:
            self._status = msg  # type: ignore[assignment]
            self.device_state = (msg.state, msg.brightness)  # type: ignore[union-attr]
            self.state_count += 1
            self._status_count += 1
            self._note_high_water(frame.seq, now)
            self._note_oldest(msg.oldest_seq)  # type: ignore[union-attr]
            self._clock(frame.seq, msg.uptime_us)  # type: ignore[union-attr]
        # Unknown / Malformed unsequenced frames: counted by the decoder, ignored

    def _flag_mismatch(self, frame: Frame, is_event: bool) -> None:
        """A known type with the wrong SEQUENCED flag: handled as its type says, counted,
        and reported once per type and device boot."""
        self._counters["flag_mismatches"] += 1
        if frame.type in self._mismatched:
            return
        self._mismatched.add(frame.type)
        name = MESSAGE_TYPES[frame.type].NAME
        if is_event:
            what = f"a {name} event (type 0x{frame.type:02X}) without the SEQUENCED flag"
            how = f"taken as event seq {frame.seq}"
        else:
            what = f"a {name} frame (type 0x{frame.type:02X}, not an event) with the SEQUENCED flag"
            how = f"its seq {frame.seq} taken as the high-water mark, not as an event"
        self._emit(BridgeFault(
            "link", "flag_mismatch",
            f"the shoe sent {what}: {how} (PROTOCOL.md §3; a firmware bug, reported once)"))

    def _clock(self, high_water: int, uptime_us: int) -> None:
        """Queue the device's clock if every event it had emitted by then is delivered."""
        if self.clock_events and high_water < self._expected:
            self._emit(DeviceClock(uptime_us))

    def _on_hello(self, frame: Frame, now: float) -> None:
        hello: DeviceHello = frame.msg  # type: ignore[assignment]
        check_version(hello)
        info = DeviceInfo(
            hello.device_id,
            hello.firmware,
            (hello.protocol_major, hello.protocol_minor),
            hello.capability_names,
            hello.boot_id,
        )
        restarted = self._boot_id is not None and hello.boot_id != self._boot_id
        if restarted:
            self._lost_to_reboot()
            self._mismatched.clear()
        if self._boot_id is None:
            self._expected = frame.seq + 1  # a new link starts with the device's next event
        elif restarted:
            self._expected = 1  # sequence numbers start again at every boot
        if self._boot_id is None or restarted:
            self._stash.clear()
            self._high_water = frame.seq
        self._boot_id = hello.boot_id
        self.device = info
        self._keepalive = (hello.protocol_major, hello.protocol_minor) >= (1, 1) and \
            self.config.keepalive_timeout > 0
        was_up = self._up
        if not was_up or restarted:
            self._reported = None
            self.last_error = None
            self._emit(LinkUp(info, restarted))
        if not was_up:
            self._set_up(True)
        self._note_oldest(hello.oldest_seq)
        self._note_high_water(frame.seq, now)
        if self._high_water >= self._expected:
            self._request_replay(now)  # at once: no reason to wait after a handshake

    def _on_event(self, frame: Frame, now: float, rx_ns: int) -> None:
        seq = frame.seq
        if seq < self._expected:
            self._counters["duplicates"] += 1
            return
        if seq > self._expected:
            if seq in self._stash:
                self._counters["duplicates"] += 1
            elif len(self._stash) < MAX_STASH:
                self._stash[seq] = (frame, rx_ns)
                self._counters["out_of_order"] += 1
            self._note_high_water(seq, now)
            return
        self._deliver(frame, rx_ns)
        self._drain()
        if seq > self._high_water:
            self._high_water = seq
        if not self._stash and self._high_water < self._expected:
            self._gap_deadline = None

    def _deliver(self, frame: Frame, rx_ns: int) -> None:
        self._expected = frame.seq + 1
        event = to_event(frame, rx_ns)
        if event is None:  # a newer firmware's event type: accounted for, not understood
            self._counters["unknown_events"] += 1
            return
        self._counters["events"] += 1
        self._emit(event)

    def _drain(self) -> None:
        stash = self._stash
        while self._expected in stash:
            frame, rx_ns = stash.pop(self._expected)
            self._deliver(frame, rx_ns)

    def _lost_to_reboot(self) -> None:
        """The device restarted while events of its previous boot were still missing:
        deliver what was held of them and report the rest lost (they were in its RAM)."""
        if not self._stash and self._high_water < self._expected:
            return
        first, last = self._expected, max(self._high_water, *self._stash, 0)
        held = sorted(self._stash)
        for seq in held:
            self._deliver(*self._stash.pop(seq))
        lost = last - first + 1 - len(held)
        self._counters["events_lost"] += lost
        self._gap_deadline = None
        self._emit(BridgeFault(
            "link", "events_lost",
            f"{lost} device event(s) between seq {first} and {last} were lost: the shoe "
            "restarted before it could replay them"))

    def _abandon_gap(self) -> None:
        """Replay requests for ``expected`` got nothing after ``replay_retries``: the
        device cannot send it (a frame it builds invalid each time, or a buffer that lost
        it). Report the missing events lost, once, and go on with what follows."""
        first = self._expected
        end = min(self._stash) if self._stash else self._high_water + 1
        lost = end - first
        self._counters["events_lost"] += lost
        self._counters["gaps_abandoned"] += 1
        dropped = self._decoder.stats["bad_frames"] - self._gap_bad
        hint = (f"; {dropped} invalid frame(s) (oversize, short, bad CRC) were dropped "
                "meanwhile" if dropped > 0 else "")
        self._emit(BridgeFault(
            "link", "events_lost",
            f"{lost} device event(s) between seq {first} and {end - 1} were lost: not "
            f"received after {self._gap_attempts - 1} replay requests{hint}"))
        self._expected = end
        self._gap_deadline = None
        self._drain()

    def _note_high_water(self, seq: int, now: float) -> None:
        if seq > self._high_water:
            self._high_water = seq
        if self._high_water >= self._expected and self._gap_deadline is None:
            self._gap_deadline = now + self.config.reorder_window

    def _note_oldest(self, oldest: int) -> None:
        """The device no longer holds events before ``oldest``: any we still miss are lost."""
        if not oldest or self._expected >= oldest:
            return
        first = self._expected
        received = sorted(s for s in self._stash if s < oldest)
        lost = oldest - first - len(received)
        for seq in received:
            self._deliver(*self._stash.pop(seq))
        self._expected = oldest
        self._counters["events_lost"] += lost
        self._emit(
            BridgeFault(
                "link",
                "events_lost",
                f"{lost} device event(s) between seq {first} and {oldest - 1} were lost: "
                "the shoe's replay buffer no longer held them",
            )
        )
        self._drain()

    def _request_replay(self, now: float) -> None:
        """Ask for ``expected`` again; the wait doubles (reorder window, at most 8 times
        it) and after ``replay_retries`` requests with no progress the gap is abandoned
        (reported lost), so an unfillable gap never keeps the link asking forever."""
        if not self._stash and self._high_water < self._expected:
            self._gap_deadline = None
            return
        if self._gap_for != self._expected:
            self._gap_for = self._expected
            self._gap_attempts = 0
            self._gap_bad = self._decoder.stats["bad_frames"]
        self._gap_attempts += 1
        if self._gap_attempts > self.config.replay_retries:
            self._abandon_gap()
            if self._stash or self._high_water >= self._expected:
                self._gap_deadline = now + self.config.reorder_window
            return
        self._counters["replays_requested"] += 1
        self._write(encode(Replay(self._expected)))
        wait = self.config.reorder_window * min(2 ** (self._gap_attempts - 1), 8)
        self._gap_deadline = now + wait

"""A virtual shoe microcontroller on a pty, speaking the protocol, scriptable from Python.

>>> sim = DeviceSimulator(heartbeat_interval=0.05)
>>> path = sim.start()              # a stable path (symlink to the current pty)
>>> import os; os.path.islink(path)
True
>>> sim.deal(3)                     # three card exits, as fast as possible
>>> sim.last_seq
3
>>> sim.stop()

The device logic is :class:`~firmware_bridge.device.DeviceCore`; this module adds the
pty, a thread that answers the host and sends heartbeats, a device clock, and the
faults a test or ``simulate`` asks for: garbage bytes, bad CRCs, dropped, duplicated
and reordered frames, unplug/replug, a heartbeat stall, a firmware fault, a reboot.

Unplugging closes the pty (the host sees the port vanish); the device keeps running
and keeps its events in its replay buffer, as a shoe powered on its own supply does.
Replugging opens a new pty and points the same stable path at it, as udev does.
"""

from __future__ import annotations

import contextlib
import errno
import os
import select
import shutil
import sys
import tempfile
import threading
import time
import tty
from collections.abc import Callable

from firmware_bridge.device import ALL_CAPABILITIES, DeviceCore, Out, RawEvent
from firmware_bridge.protocol import (
    FAULT_NAMES,
    FLAG_SEQUENCED,
    PROTOCOL_VERSION,
    HostHello,
    Keepalive,
    Message,
    Replay,
)

__all__ = ["DeviceSimulator"]


def _fault_code(name_or_code: str | int) -> int:
    if isinstance(name_or_code, int):
        return name_or_code
    for code, name in FAULT_NAMES.items():
        if name == name_or_code:
            return code
    raise ValueError(f"unknown fault {name_or_code!r}; known: {', '.join(FAULT_NAMES.values())}")


class DeviceSimulator:
    """A virtual shoe. ``start()`` returns the path to open; every other method scripts it.

    Thread-safe: script it from any thread while a link talks to it.
    """

    def __init__(
        self,
        device_id: str = "SIM-0001",
        *,
        firmware: tuple[int, int, int] = (1, 0, 0),
        protocol: tuple[int, int] = PROTOCOL_VERSION,
        capabilities: int = ALL_CAPABILITIES,
        heartbeat_interval: float = 0.2,
        replay_size: int = 64,
        path: str | None = None,
    ) -> None:
        self.device_id = device_id
        self.firmware = firmware
        self.protocol = protocol
        self.capabilities = capabilities
        self.heartbeat_interval = heartbeat_interval
        self.replay_size = replay_size
        self._own_dir: str | None = None
        self._path = path
        self._lock = threading.RLock()
        self._master: int | None = None
        self._slave: int | None = None
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._wake_r, self._wake_w = -1, -1
        self.core = self._new_core()
        # fault injection (counts of upcoming device-event frames to mangle)
        self._drop = 0
        self._duplicate = 0
        self._corrupt = 0
        self._reorder = 0
        self._held: bytes | None = None  # a frame held back to be sent after the next one
        self._ignore_commands = 0
        self._drop_acks = 0
        self._drop_status = 0
        self._stalled = False
        self._flag_heartbeats = 0
        self._ignore_replays = 0
        self._lose = 0
        self._next_heartbeat = 0.0
        #: frames received from the host, decoded, in order (retries and lost ones included)
        self.received: list[object] = []
        #: called with the wire bytes of every device event just before it is written
        self.on_event_write: Callable[[bytes], None] | None = None

    def _new_core(self) -> DeviceCore:
        t0 = time.monotonic_ns()  # the device clock counts from its boot
        return DeviceCore(
            self.device_id,
            clock_us=lambda: (time.monotonic_ns() - t0) // 1000,
            firmware=self.firmware,
            protocol=self.protocol,
            capabilities=self.capabilities,
            replay_size=self.replay_size,
        )

    # ---------------------------------------------------------------- lifecycle
    @property
    def path(self) -> str:
        """The stable path a host opens (valid after start())."""
        if self._path is None:
            raise RuntimeError("DeviceSimulator.start() first")
        return self._path

    @property
    def tty(self) -> str | None:
        """The current pty behind :attr:`path` (None while unplugged)."""
        with self._lock:
            return os.ttyname(self._slave) if self._slave is not None else None

    def start(self) -> str:
        """Create the pty, start answering, return the stable path to open."""
        if self._thread is not None:
            return self.path
        if self._path is None:
            # the pid in the name lets the next `simulate` remove it if this process is
            # killed (shoe_controller.sim.table.clean_stale_sim_dirs)
            self._own_dir = tempfile.mkdtemp(prefix=f"smart-shoe-sim-{os.getpid()}-")
            self._path = os.path.join(self._own_dir, "smart-shoe")
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_r, False)
        self._plug()
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name="shoe-simulator", daemon=True)
        self._thread.start()
        return self.path

    def stop(self) -> None:
        self._stop.set()
        self._wake()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None
        with self._lock:
            self._unplug()
        for fd in (self._wake_r, self._wake_w):
            if fd >= 0:
                os.close(fd)
        self._wake_r = self._wake_w = -1
        if self._own_dir is not None:
            shutil.rmtree(self._own_dir, ignore_errors=True)
            self._own_dir = None
            self._path = None

    def __enter__(self) -> DeviceSimulator:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _plug(self) -> None:
        master, slave = os.openpty()
        tty.setraw(slave)  # no echo, no line discipline, before anyone writes
        os.set_blocking(master, False)
        name = os.ttyname(slave)
        tmp = f"{self.path}.{os.getpid()}.tmp"
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        os.symlink(name, tmp)
        os.replace(tmp, self.path)  # atomic, like udev re-pointing the name
        self._master, self._slave = master, slave
        self._held = None

    def _unplug(self) -> None:
        if self._master is None:
            return
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.path)
        for fd in (self._master, self._slave):
            with contextlib.suppress(OSError):
                os.close(fd)  # type: ignore[arg-type]
        self._master = self._slave = None
        self._held = None

    def _wake(self) -> None:
        if self._wake_w >= 0:
            with contextlib.suppress(OSError):
                os.write(self._wake_w, b"x")

    # ---------------------------------------------------------------- the device loop
    def _run(self) -> None:
        self._next_heartbeat = time.monotonic()
        while not self._stop.is_set():
            with self._lock:
                master = self._master
                now = time.monotonic()
                if not self._stalled:
                    self.core.tick()  # 1.1: the host's keepalive stopped -> lock
                if not self._stalled and now >= self._next_heartbeat:
                    self._next_heartbeat = now + self.heartbeat_interval
                    flags = 0
                    if self._flag_heartbeats:
                        self._flag_heartbeats -= 1
                        flags = FLAG_SEQUENCED
                    self._send(self.core.heartbeat(flags))
                timeout = min(0.02, max(0.0, self._next_heartbeat - now))
            fds = [self._wake_r] + ([master] if master is not None else [])
            try:
                readable, _, _ = select.select(fds, [], [], timeout)
            except (OSError, ValueError):
                continue  # the master was closed under us (unplug)
            if self._wake_r in readable:
                with contextlib.suppress(OSError):
                    os.read(self._wake_r, 4096)
            if master is None or master not in readable:
                continue
            with self._lock:
                if master != self._master:
                    continue
                try:
                    data = os.read(master, 4096)
                except OSError as exc:
                    if exc.errno in (errno.EAGAIN, errno.EINTR):
                        continue
                    data = b""  # EIO: nobody has the other side open
                if not data or self._stalled:
                    continue  # a stalled firmware reads nothing (the bytes are lost)
                self._handle_host_bytes(data)

    def _handle_host_bytes(self, data: bytes) -> None:
        for frame in self.core.decoder.feed(data):
            is_command = frame.type >= 0x80 and frame.type not in (
                HostHello.TYPE, Replay.TYPE, Keepalive.TYPE)
            self.received.append(frame.msg)
            if is_command and self._ignore_commands:
                self._ignore_commands -= 1
                continue
            if frame.type == Replay.TYPE and self._ignore_replays:
                self._ignore_replays -= 1
                continue
            for kind, wire in self.core.handle(frame):
                if kind == "ack" and self._drop_acks:
                    self._drop_acks -= 1
                    continue
                if kind == "status" and self._drop_status:
                    self._drop_status -= 1
                    continue
                self._send((kind, wire))
            if self.core.reboot_requested:
                self._reboot_locked()

    # ---------------------------------------------------------------- writing
    def _send(self, out: Out) -> None:
        """Write one frame, applying the injected faults to device-event frames."""
        kind, wire = out
        if kind not in ("event", "replay"):
            self._write(wire)
            return
        if kind == "event" and self._lose:
            self._lose -= 1
            self.core.unsendable.add(self.core.last_seq)  # never sent, never replayed
            return
        if self._drop:
            self._drop -= 1
            return
        if self._corrupt:
            self._corrupt -= 1
            wire = _corrupt(wire)
        if self._reorder and self._held is None:
            self._reorder -= 1
            self._held = wire
            return
        if self.on_event_write is not None and kind == "event":
            self.on_event_write(wire)
        self._write(wire)
        if self._duplicate:
            self._duplicate -= 1
            self._write(wire)
        if self._held is not None:
            held, self._held = self._held, None
            self._write(held)

    def _write(self, data: bytes) -> None:
        master = self._master
        if master is None or self._stalled:
            return
        view = memoryview(data)
        deadline = None
        while view:
            try:
                n = os.write(master, view)
            except BlockingIOError:
                # the host is not reading: a real CDC device drops what does not fit
                now = time.monotonic()
                deadline = deadline or now + 0.05
                if now > deadline:
                    return
                time.sleep(0.001)
                continue
            except OSError:
                return  # nobody on the other side
            view = view[n:]

    # ---------------------------------------------------------------- scripting: events
    def _event(self, make: str, *args: object) -> int:
        """Have the device core record one event (``make`` names the DeviceCore method)
        and send it; returns its sequence number. Under the lock: a reboot may replace
        the core at any time."""
        with self._lock:
            self._send(getattr(self.core, make)(*args))
            return self.core.last_seq

    def emit(self, msg: Message) -> int:
        """Send any device event message (for instance a type from a future firmware)."""
        return self._event("event", msg)

    def card_exit(self, duration_us: int = 40_000) -> int:
        """One card leaves the shoe. Returns its event sequence number (as all below)."""
        return self._event("card_exit", duration_us)

    def deal(self, count: int, pace: float = 0.0, duration_us: int = 40_000) -> None:
        """``count`` card exits, one every ``pace`` seconds (0: as fast as possible)."""
        for i in range(count):
            if i and pace > 0:
                time.sleep(pace)
            self.card_exit(duration_us)

    def deal_in_background(
        self, count: int, pace: float, duration_us: int = 40_000
    ) -> threading.Thread:
        t = threading.Thread(target=self.deal, args=(count, pace, duration_us), daemon=True)
        t.start()
        return t

    def card_read(self, payload: bytes | str, symbology: int = 1) -> int:
        """The shoe's scanner reads ``payload`` (symbology 1 = Code 128)."""
        raw = payload.encode() if isinstance(payload, str) else payload
        return self._event("card_read", raw, symbology)

    def press(self, button: str) -> int:
        """A button on the shoe (protocol.BUTTON_NAMES: new_round, confirm, ...)."""
        return self._event("button", button)

    def lid(self, is_open: bool) -> int:
        return self._event("lid", is_open)

    def shoe_loaded(self) -> int:
        return self._event("shoe", True)

    def shoe_empty(self) -> int:
        return self._event("shoe", False)

    def fault(self, fault: str | int = "exit_sensor_blocked", detail: str = "") -> int:
        """The firmware reports a fault (a name of protocol.FAULT_NAMES or a code)."""
        return self._event("fault", _fault_code(fault), detail)

    # ---------------------------------------------------------------- scripting: faults
    def garbage(self, data: bytes | int = 32) -> None:
        """Write line noise: the given bytes, or that many random bytes."""
        raw = os.urandom(data) if isinstance(data, int) else data
        with self._lock:
            self._write(raw)

    def corrupt_next(self, n: int = 1) -> None:
        """Flip a bit in the next ``n`` device-event frames (their CRC fails)."""
        with self._lock:
            self._corrupt += n

    def drop_next(self, n: int = 1) -> None:
        """Do not send the next ``n`` device-event frames (they stay in the replay buffer)."""
        with self._lock:
            self._drop += n

    def duplicate_next(self, n: int = 1) -> None:
        """Send each of the next ``n`` device-event frames twice."""
        with self._lock:
            self._duplicate += n

    def reorder_next(self, n: int = 1) -> None:
        """Hold back the next device-event frame and send it after the following one
        (``n`` times)."""
        with self._lock:
            self._reorder += n

    def lose_next(self, n: int = 1) -> None:
        """A broken firmware: the next ``n`` events are numbered and stay "in" the replay
        buffer (``oldest_seq`` covers them) but are never sent, nor replayed: a gap the
        host can never fill."""
        with self._lock:
            self._lose += n

    def ignore_replays(self, n: int = 1) -> None:
        """Ignore the next ``n`` replay requests (a device busy, or about to reboot)."""
        with self._lock:
            self._ignore_replays += n

    def strip_flag_next(self, n: int = 1) -> None:
        """Send the next ``n`` events without the SEQUENCED flag (a firmware bug)."""
        with self._lock:
            self.core.strip_flag += n

    def flag_heartbeats(self, n: int = 1) -> None:
        """Send the next ``n`` heartbeats with the SEQUENCED flag (a firmware bug)."""
        with self._lock:
            self._flag_heartbeats += n

    def oversize_event(self, size: int = 513, mtype: int = 0x3D) -> int:
        """Record and send a device event whose payload (header + body) is ``size`` bytes:
        over 512 it breaks §2, and the replay buffer re-sends it as it is every time."""
        return self._event("event", RawEvent(mtype, b"\x5a" * (size - 6)))

    def ignore_commands(self, n: int = 1) -> None:
        """Lose the next ``n`` host commands (the host must retry)."""
        with self._lock:
            self._ignore_commands += n

    def drop_acks(self, n: int = 1) -> None:
        """Execute the next ``n`` commands but lose their acks (the retry must not
        execute them twice)."""
        with self._lock:
            self._drop_acks += n

    def drop_status(self, n: int = 1) -> None:
        """Lose the Status frame of the next ``n`` status requests (their acks arrive)."""
        with self._lock:
            self._drop_status += n

    def stall(self) -> None:
        """The firmware hangs: no heartbeat, no answer, nothing sent. Events still go into
        the replay buffer (as if recorded by an interrupt handler)."""
        with self._lock:
            self._stalled = True

    def unstall(self) -> None:
        with self._lock:
            self._stalled = False
            self._next_heartbeat = time.monotonic()
        self._wake()

    def unplug(self) -> None:
        """Pull the USB cable: the pty and the stable path disappear."""
        with self._lock:
            self._unplug()
        self._wake()

    def replug(self) -> str:
        """Plug it back: a new pty behind the same stable path."""
        with self._lock:
            if self._master is None:
                self._plug()
        self._wake()
        return self.path

    def reboot(self) -> None:
        """The MCU restarts: new boot id, sequence numbers from 1, buffer and state lost.
        It announces itself with an unsolicited hello."""
        with self._lock:
            self._reboot_locked()

    def _reboot_locked(self) -> None:
        self.core = self._new_core()
        self._held = None
        self._send(self.core.hello())

    # ---------------------------------------------------------------- inspection
    def clock_us(self) -> int:
        """The device clock now (µs since its boot): the time base of ``t_us``."""
        with self._lock:
            return self.core.clock_us()

    @property
    def last_seq(self) -> int:
        return self.core.last_seq

    @property
    def brightness(self) -> int:
        return self.core.brightness

    @property
    def locked(self) -> bool:
        return self.core.locked

    @property
    def self_locked(self) -> bool:
        """(1.1) The draw lock was engaged by the device itself (the host went silent)."""
        return self.core.self_locked

    @property
    def fault_code(self) -> int:
        """The latched firmware fault (0: none)."""
        return self.core.fault_code

    @property
    def executed(self) -> list[object]:
        """Commands executed (each once, whatever the retries)."""
        return list(self.core.executed)


def _corrupt(wire: bytes) -> bytes:
    """Flip one bit inside the frame (not the delimiter, never creating a zero byte)."""
    b = bytearray(wire)
    i = len(b) // 2
    b[i] ^= 0x01 if b[i] != 0x01 else 0x02
    return bytes(b)


def main(argv: list[str] | None = None) -> int:
    """``python -m firmware_bridge.simulator``: a virtual shoe to point a daemon at."""
    import argparse

    ap = argparse.ArgumentParser(
        prog="python -m firmware_bridge.simulator",
        description="A virtual shoe microcontroller on a pty. Prints the path to open "
        "([serial] port), then deals card exits at a pace until interrupted.",
    )
    ap.add_argument("--path", help="stable path to create (default: a temporary one)")
    ap.add_argument("--pace", type=float, default=2.0, help="seconds between card exits")
    ap.add_argument("--cards", type=int, default=0, help="card exits to deal (0: none)")
    ap.add_argument("--device-id", default="SIM-0001")
    args = ap.parse_args(argv)
    import signal

    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))  # clean up the path on SIGTERM too
    with DeviceSimulator(args.device_id, path=args.path) as sim:
        print(sim.path, flush=True)
        try:
            sim.deal(args.cards, pace=args.pace)
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

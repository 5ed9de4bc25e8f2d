"""Input adapters of the daemon: the shoe's serial link and the camera, as game inputs.

Each adapter runs on its own thread and calls ``submit(input, origin)``; none of them
can stop the core loop. A lost link or camera becomes a ``Fault`` input (the round
pauses, the fault LED lights) and the adapter keeps retrying with back-off.

The translation from the firmware bridge's events to game inputs is a pure function
(:func:`bridge_inputs`) plus one small piece of timing state (:class:`ExitReadPairing`):
a card that left the shoe (exit sensor) but was never read by the shoe's scanner is an
``UnreadableCard`` after ``read_timeout`` seconds — a card is never lost silently.

>>> from firmware_bridge.events import ButtonPressed, LinkDown
>>> bridge_inputs(ButtonPressed(seq=1, t_us=0, button="confirm"))
[(ConfirmResult(), 'serial:confirm')]
>>> bridge_inputs(LinkDown(reason="no heartbeat for 1.0 s"))
[(Fault(kind='link_down', detail='no heartbeat for 1.0 s'), 'serial')]
"""

from __future__ import annotations

import contextlib
import logging
import os
import queue
import socket
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

from shoe_controller.game.inputs import (
    CardSeen,
    ConfirmResult,
    CutCardSeen,
    Fault,
    ForeignCard,
    Input,
    NewRound,
    NewShoe,
    Reveal,
    ShoeOpened,
    UnreadableCard,
)

__all__ = [
    "CameraInput",
    "ControlSocketInput",
    "ExitReadPairing",
    "SerialInput",
    "bridge_inputs",
    "control_input",
    "frame_read_input",
]

log = logging.getLogger("shoe_controller.daemon.inputs")

Submit = Callable[[Input, str], None]

_BUTTONS: dict[str, Input] = {
    "new_round": NewRound(),
    "confirm": ConfirmResult(),
    "reveal_player": Reveal("player"),
    "reveal_banker": Reveal("banker"),
}


def frame_read_input(read: Any, source: str) -> Input | None:
    """The game input one reader verdict (a FrameRead) stands for; None for "empty".

    >>> from shoe_controller.vision.reads import FrameRead
    >>> frame_read_input(FrameRead.foreign("XX-1"), "scanner")
    ForeignCard(payload='XX-1')
    >>> frame_read_input(FrameRead.cut(), "scanner")
    CutCardSeen()
    """
    kind = read.kind
    if kind == "card":
        return CardSeen(read.card, read.orientation, source)
    if kind == "cut":
        return CutCardSeen()
    if kind == "foreign":
        return ForeignCard(read.payload or "")
    if kind == "reject":
        return UnreadableCard(read.reason or "unreadable")
    return None


def bridge_inputs(event: Any, mapping: Any | None = None) -> list[tuple[Input, str]]:
    """Game inputs for one bridge event (card exits aside: see :class:`ExitReadPairing`).

    ``mapping`` (a vision.barcode.BarcodeMapping) turns scanner payloads into cards;
    without one, scanner reads are ignored (the camera reads the cards).
    """
    kind = getattr(event, "kind", None)
    if kind == "card_read":
        if mapping is None:
            return []
        inp = frame_read_input(mapping.map(event.text), "scanner")
        return [] if inp is None else [(inp, "serial:card_read")]
    if kind == "button":
        inp = _BUTTONS.get(event.button)
        if inp is None:
            # call_supervisor and unknown buttons: information for the log, no game input.
            log.info("shoe button %s pressed", event.button)
            return []
        return [(inp, f"serial:{event.button}")]
    if kind == "shoe_loaded":
        return [(NewShoe(), "serial:shoe_loaded")]
    if kind == "lid":
        if not event.open:
            log.info("shoe lid closed")
            return []
        return [(ShoeOpened("lid_opened", "the shoe's lid was opened"), "serial:lid")]
    if kind == "shoe_empty":
        return [(ShoeOpened("shoe_empty", "the shoe's presence sensor sees no cards"),
                 "serial:shoe_empty")]
    if kind == "fault":
        name = "firmware_fault" if event.source == "device" else f"link_{event.name}"
        detail = f"{event.name}: {event.detail}" if event.detail else event.name
        return [(Fault(name, detail), "serial")]
    if kind == "link_down":
        return [(Fault("link_down", event.reason), "serial")]
    return []


class ExitReadPairing:
    """Pairs the exit sensor's card exits with the scanner's reads, in device order.

    The shoe reports a card's scanner read after that card's exit (PROTOCOL.md: device
    events arrive in device order). So an exit followed by another exit with no read
    between them was an unreadable card — reported at once, before anything of the next
    card, so the game sees the cards in the order they left the shoe — and an exit with
    no read within ``read_timeout`` seconds is unreadable too. A read with no exit before
    it (a shoe without an exit sensor) is simply a card. Time is passed in (pure logic).

    >>> p = ExitReadPairing(read_timeout=0.3)
    >>> p.exit(10.0), p.read(10.05), p.tick(11.0)
    ([], None, [])
    >>> p.exit(12.0), p.exit(12.1)
    ([], [UnreadableCard(reason='card exit without a scanner read')])
    >>> p.read(12.15), p.tick(13.0)
    (None, [])
    """

    def __init__(self, read_timeout: float = 0.3) -> None:
        self.read_timeout = read_timeout
        self._pending: float | None = None

    def exit(self, now: float) -> list[Input]:
        out: list[Input] = []
        if self._pending is not None:
            out.append(UnreadableCard("card exit without a scanner read"))
        self._pending = now
        return out

    def read(self, now: float) -> None:
        self._pending = None

    def tick(self, now: float) -> list[Input]:
        if self._pending is not None and now - self._pending >= self.read_timeout:
            self._pending = None
            return [UnreadableCard("card exit without a scanner read")]
        return []


class SerialInput:
    """The shoe's microcontroller over the firmware bridge's :class:`Link`.

    The daemon engages the shoe's draw lock while play is paused (:meth:`set_lock`), so
    no card can be drawn until the supervisor resumes. ``scanner``: the shoe reads cards
    itself (scanner payloads mapped by ``mapping``, exits paired with reads); otherwise
    card exits go to ``on_card_exit`` (the camera's pass tracker uses them to bound
    passes).
    """

    name = "serial"

    def __init__(self, config: Any, *, mapping: Any | None = None, scanner: bool = True,
                 on_card_exit: Callable[[float], None] | None = None,
                 read_timeout: float = 0.3) -> None:
        self.config = config
        self.mapping = mapping
        self.scanner = scanner and mapping is not None
        self.on_card_exit = on_card_exit
        self.pairing = ExitReadPairing(read_timeout)
        self._pairing_lock = threading.Lock()  # the link's thread and the ticking one
        self.link: Any = None
        self.link_up = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock_wanted: bool | None = None
        self._lock_applied: bool | None = None
        self._lock_wake = threading.Event()

    def start(self, submit: Submit) -> None:
        from firmware_bridge.link import Link

        self._submit = submit
        # The link's reader thread translates each event itself (microseconds) and hands
        # the game input straight to the core loop's queue: no thread in between.
        self.link = Link(self.config, _Sink(self._on_event))
        self.link.start()
        self._thread = threading.Thread(target=self._run, name="serial-read-timeouts",
                                        daemon=True)
        self._thread.start()
        threading.Thread(target=self._locker, name="shoe-lock", daemon=True).start()

    def set_lock(self, locked: bool) -> None:
        """Engage or release the shoe's draw lock (never blocks: a worker sends the
        command with the link's ack and retries; the latest wish wins, and it is sent
        again whenever the link comes back)."""
        self._lock_wanted = locked
        self._lock_wake.set()

    def _locker(self) -> None:
        while not self._stop.is_set():
            self._lock_wake.wait(0.5)
            self._lock_wake.clear()
            want = self._lock_wanted
            if want is None or want == self._lock_applied or not self.link_up.is_set():
                continue
            try:
                self.link.set_lock(want)
                self._lock_applied = want
                log.info("shoe draw lock %s", "engaged" if want else "released")
            except Exception as exc:  # link down or the shoe refused: try again later
                log.warning("shoe draw lock %s failed: %s", want, exc)
                self._lock_wake.set()
                self._stop.wait(0.5)

    def _on_event(self, event: Any) -> None:
        """(the link's reader thread) One bridge event, in device order."""
        with self._pairing_lock:
            try:
                self._handle(event, time.monotonic())
            except Exception:  # one odd event must not end the adapter
                log.exception("serial event %r could not be translated", event)

    def _run(self) -> None:
        """A card exit with no scanner read within ``read_timeout`` is unreadable: look
        every 50 ms."""
        while not self._stop.wait(0.05):
            if self.scanner:
                with self._pairing_lock:
                    for inp in self.pairing.tick(time.monotonic()):
                        self._submit(inp, "serial:card_exit")

    def _handle(self, event: Any, now: float) -> None:
        kind = getattr(event, "kind", None)
        if kind == "link_up":
            self.link_up.set()
            self._lock_applied = None  # a replugged or rebooted shoe: say it again
            self._lock_wake.set()
            log.info("shoe link up: %s", getattr(event, "device", ""))
        elif kind == "link_down":
            self.link_up.clear()
            log.warning("shoe link down: %s (retrying)", event.reason)
        if kind == "card_exit":
            if self.scanner:
                for inp in self.pairing.exit(now):
                    self._submit(inp, "serial:card_exit")
            elif self.on_card_exit is not None:
                self.on_card_exit(now)
            return
        if kind == "card_read" and self.scanner:
            self.pairing.read(now)
        for inp, origin in bridge_inputs(event, self.mapping if self.scanner else None):
            self._submit(inp, origin)

    def stop(self) -> None:
        self._stop.set()
        if self.link is not None:
            self.link.stop()
        if self._thread is not None:
            self._thread.join(2)


class _Sink:
    """A Link's event sink that calls ``handle`` at once."""

    def __init__(self, handle: Callable[[Any], None]) -> None:
        self.put = handle


class CameraInput:
    """Frames from a source -> reader verdicts -> the pass tracker -> game inputs.

    ``open_source()`` returns an iterator of ``(monotonic time, frame)``; when it fails or
    ends unexpectedly the adapter submits ``Fault("camera_lost")`` once per outage and
    reopens with back-off (0.5 s doubling to ``max_backoff``). ``reader.read(frame)``
    gives a FrameRead; ``tracker`` is a vision.passes.PassTracker.
    """

    name = "camera"

    def __init__(self, open_source: Callable[[], Iterator[tuple[float, Any]]], reader: Any,
                 tracker: Any, *, max_backoff: float = 5.0, finite: bool = False) -> None:
        self.open_source = open_source
        self.reader = reader
        self.tracker = tracker
        self.max_backoff = max_backoff
        self.finite = finite
        self.exits: queue.Queue[float] = queue.Queue()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.frames = 0

    def card_exit(self, t: float) -> None:
        """The shoe's exit sensor fired (called from the serial adapter's thread)."""
        self.exits.put(t)

    def start(self, submit: Submit) -> None:
        self._submit = submit
        self._thread = threading.Thread(target=self._run, name="camera", daemon=True)
        self._thread.start()

    def _emit(self, inputs: list[Any]) -> None:
        for inp in inputs:
            self._submit(inp, "camera")

    def _exits(self) -> None:
        while True:
            try:
                t = self.exits.get_nowait()
            except queue.Empty:
                return
            self._emit(self.tracker.card_exit(t))

    def _run(self) -> None:
        backoff = 0.5
        lost = False
        while not self._stop.is_set():
            try:
                frames = self.open_source()
                for t, frame in frames:
                    if lost:
                        log.info("camera back")
                        lost, backoff = False, 0.5
                    self._exits()
                    self._emit(self.tracker.frame(t, self.reader.read(frame)))
                    self.frames += 1
                    if self._stop.is_set():
                        return
                if self.finite:
                    self._exits()
                    self._emit(self.tracker.flush())
                    return
                raise RuntimeError("the camera stopped delivering frames")
            except Exception as exc:
                if not lost:
                    log.error("camera lost: %s (retrying)", exc)
                    self._submit(Fault("camera_lost", str(exc)), "camera")
                    lost = True
                if self._stop.wait(backoff):
                    return
                backoff = min(backoff * 2, self.max_backoff)

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(2)


def control_input(line: str) -> Input:
    """The game input one supervisor command line stands for (the control socket).

    Commands: ``card <CODE>`` (enter a card checked by eye: ManualCard), ``pause
    [reason]``, ``resume``, ``void [reason]``. Raises ValueError saying what is wrong.

    >>> control_input("card qh"), control_input("void wrong shoe")
    (ManualCard(card=Card('QH')), Void(reason='wrong shoe'))
    >>> control_input("deal 4")
    Traceback (most recent call last):
    ...
    ValueError: unknown command 'deal': expected card CODE, pause, resume or void
    """
    from shoe_controller.game.cards import CardParseError, parse_card
    from shoe_controller.game.inputs import ManualCard, Pause, Resume, Void

    words = line.split()
    if not words:
        raise ValueError("empty command")
    verb, rest = words[0].lower(), " ".join(words[1:])
    if verb == "card":
        if len(words) != 2:
            raise ValueError("card needs one card code, e.g. card QH")
        try:
            return ManualCard(parse_card(words[1]))
        except CardParseError as exc:
            raise ValueError(str(exc)) from None
    if verb == "pause":
        return Pause(rest or "supervisor")
    if verb == "resume":
        return Resume()
    if verb == "void":
        return Void(rest or "supervisor")
    raise ValueError(f"unknown command {verb!r}: expected card CODE, pause, resume or void")


class ControlSocketInput:
    """The supervisor's terminal: a unix datagram socket taking one command per datagram
    (:func:`control_input`), answered with ``ok`` or ``error: ...`` to the sender.

    For what the station's key and buttons cannot say, above all the card a reader could
    not read (the round waits for it). The socket is created mode 0660: whoever may
    write to it acts as the supervisor, so keep it in a directory only they can reach
    (the state directory). Example: ``shoe-controller-ctl``-style one-liner::

        python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX,socket.SOCK_DGRAM);
        s.bind(""); s.sendto(sys.argv[1].encode(), "/var/lib/shoe-controller/control");
        print(s.recv(512).decode())' 'card QH'
    """

    name = "control"

    def __init__(self, path: str) -> None:
        self.path = path
        self._sock: Any = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self, submit: Submit) -> None:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.path)
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        old = os.umask(0o117)
        try:
            sock.bind(self.path)
        finally:
            os.umask(old)
        sock.settimeout(0.2)
        self._sock = sock
        self._submit = submit
        self._thread = threading.Thread(target=self._run, name="control", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                data, sender = self._sock.recvfrom(4096)
            except TimeoutError:
                continue
            except OSError:
                return
            try:
                inp = control_input(data.decode("utf-8", "replace"))
                self._submit(inp, "supervisor")
                reply = "ok"
            except ValueError as exc:
                reply = f"error: {exc}"
            log.info("supervisor command %r: %s", data[:80], reply)
            if sender:
                with contextlib.suppress(OSError):  # the sender did not wait for it
                    self._sock.sendto(reply.encode(), sender)

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(2)
        if self._sock is not None:
            self._sock.close()
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.path)

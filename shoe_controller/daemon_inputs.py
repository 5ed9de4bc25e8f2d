"""Input adapters of the daemon: the shoe's serial link and the camera, as game inputs.

Each adapter runs on its own thread and calls ``submit(input, origin)``; none of them
can stop the core loop. A lost link or camera becomes a ``Fault`` input (the round
pauses, the fault LED lights) and the adapter keeps retrying with back-off.

The translation from the firmware bridge's events to game inputs is a pure function
(:func:`bridge_inputs`) plus one small piece of state on the device's clock
(:class:`ExitReadPairing`): a card that left the shoe (exit sensor) but was never read
by the shoe's scanner is an ``UnreadableCard`` — a card is never lost silently — and a
read that does not pair with an exit is never dealt as it came.

>>> from firmware_bridge.events import ButtonPressed, LinkDown
>>> bridge_inputs(ButtonPressed(seq=1, t_us=0, button="confirm"))
[(ConfirmResult(), 'serial:confirm')]
>>> bridge_inputs(LinkDown(reason="no heartbeat for 1.0 s"))
[(Fault(kind='link_down', detail='no heartbeat for 1.0 s'), 'serial')]
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

from shoe_controller.control import ControlSocketInput, control_input
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
    """Pairs the exit sensor's card exits with the scanner's reads (PROTOCOL.md §7a).

    A shoe with an exit sensor and a scanner sends, for each card, its ``card_exit``
    first and then at most one ``card_read``, before the next card's exit and with a
    ``t_us`` at most ``window_us`` after the exit's, all on the device's clock (so a
    replay after a link stall pairs exactly as live). Everything else is flagged, never
    dealt as it came:

    - an exit with no read (the next exit came first, a read came too late, or the
      device's clock passed the window with every event delivered): ``UnreadableCard``;
    - a read with no exit before it (or too late for it): ``UnreadableCard`` naming what
      the scanner read (a card may have left unseen by the gate: the supervisor enters it
      or voids the round; the read alone is not trusted);
    - a second read for one exit: the same payload again is ``Fault("duplicate_read")``
      (the card was dealt once; the round pauses for a look); a different one is
      ``UnreadableCard`` (perhaps a second card the gate missed: the supervisor decides).

    Without an exit sensor (``exit_sensor=False``) every read is a card. Pure: the
    device's times are passed in, in device order; each call returns the inputs due.

    >>> from shoe_controller.game.inputs import NewRound
    >>> p = ExitReadPairing(window_us=500_000)
    >>> p.exit(10_000_000), p.read(10_040_000, NewRound(), "QH")
    ([], [NewRound()])
    >>> p.read(10_060_000, NewRound(), "QH")[0].kind
    'duplicate_read'
    >>> p.exit(12_000_000), p.clock(12_400_000), p.clock(12_600_000)
    ([], [], [UnreadableCard(reason='card exit without a scanner read within 0.5 s')])
    >>> p.read(13_000_000, NewRound(), "QH")
    [UnreadableCard(reason="scanner read 'QH' without a card exit: not dealt")]
    """

    def __init__(self, window_us: int = 500_000, exit_sensor: bool = True) -> None:
        self.window_us = window_us
        self.exit_sensor = exit_sensor
        self._exit: int | None = None  # t_us of the exit waiting for its read
        self._read: tuple[int, str] | None = None  # the last paired read: (exit t_us, payload)

    def _unread(self) -> UnreadableCard:
        return UnreadableCard(
            f"card exit without a scanner read within {self.window_us / 1e6:g} s")

    def exit(self, t_us: int) -> list[Input]:
        """A card exit at device time ``t_us``."""
        out: list[Input] = []
        if self._exit is not None:
            out.append(self._unread())  # said before anything of the next card
        self._exit = t_us
        self._read = None
        return out

    def read(self, t_us: int, inp: Input, payload: str) -> list[Input]:
        """A scanner read at device time ``t_us``; ``inp`` is the card (or cut card...) it
        stands for, dealt only if it pairs with an exit."""
        if not self.exit_sensor:
            return [inp]
        out: list[Input] = []
        if self._exit is not None:
            if t_us - self._exit <= self.window_us:
                self._read = (self._exit, payload)
                self._exit = None
                return [inp]
            out.append(self._unread())  # too late for its exit: both are flagged
            self._exit = None
        elif self._read is not None and t_us - self._read[0] <= self.window_us:
            exit_t, first = self._read
            if payload == first:
                return [Fault("duplicate_read", f"the scanner read {payload!r} twice for "
                              f"the card exit at device time {exit_t} us: dealt once")]
            return [UnreadableCard(f"second scanner read {payload!r} for one card exit "
                                   f"(the first was {first!r}): not dealt")]
        out.append(UnreadableCard(f"scanner read {payload!r} without a card exit: not dealt"))
        return out

    def clock(self, t_us: int) -> list[Input]:
        """The device's clock reads ``t_us`` and every event before it has been seen."""
        if self._exit is not None and t_us - self._exit > self.window_us:
            self._exit = None
            return [self._unread()]
        return []

    def restart(self) -> list[Input]:
        """The device restarted (or a new link began): a pending exit gets no read."""
        out = [self._unread()] if self._exit is not None else []
        self._exit = None
        self._read = None
        return out


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
                 on_card_exit: Callable[[float], None] | None = None) -> None:
        from firmware_bridge.protocol import READ_WINDOW_US

        self.config = config
        self.mapping = mapping
        self.scanner = scanner and mapping is not None
        self.on_card_exit = on_card_exit
        self.pairing = ExitReadPairing(READ_WINDOW_US)
        self.link: Any = None
        self.link_up = threading.Event()
        self._stop = threading.Event()
        self._lock_wanted: bool | None = None
        self._lock_applied: bool | None = None  # acknowledged by the shoe since link-up
        self._lights_wanted: int | None = getattr(config, "lights", None)
        self._lights_applied: int | None = None
        self._state_mark = 0  # the link's state_count at our last acknowledged command
        self._lock_wake = threading.Event()

    def start(self, submit: Submit) -> None:
        from firmware_bridge.link import Link

        self._submit = submit
        # The link's reader thread translates each event itself (microseconds) and hands
        # the game input straight to the core loop's queue: no thread in between.
        self.link = Link(self.config, _Sink(self._on_event), clock_events=self.scanner)
        self.link.start()
        threading.Thread(target=self._locker, name="shoe-lock", daemon=True).start()

    def set_lock(self, locked: bool) -> None:
        """Engage or release the shoe's draw lock (never blocks: a worker sends the
        command with the link's ack and retries; the latest wish wins, and it is sent
        again whenever the link comes back or the shoe reports another state, e.g. a 1.1
        shoe that locked itself when the host's keepalive stopped)."""
        self._lock_wanted = locked
        self._lock_wake.set()

    def set_lights(self, percent: int) -> None:
        """Set the shoe's illumination now and at every later link-up (a changed
        ``[serial] lights``, or the supervisor's ``lights N``)."""
        if not 0 <= percent <= 100:
            raise ValueError(f"lights: {percent} is not a percentage 0-100")
        self._lights_wanted = percent
        self._lights_applied = None
        self._lock_wake.set()

    def reset_faults(self) -> str:
        """The supervisor's ``reset``: clear the shoe's latched firmware fault (blocks
        for the ack, at most about 0.4 s). Raises LinkError subclasses when it cannot."""
        self.link.reset(False)
        log.warning("supervisor reset: the shoe's latched fault was cleared")
        return "the shoe's latched fault was cleared"

    def handlers(self) -> dict[str, Callable[[list[str], Any], str]]:
        """The supervisor's shoe verbs for the control socket (``shoe-controller ctl``):
        ``reset`` (clear the shoe's latched fault) and ``lights N`` (illumination,
        percent). Each returns the reply: ``ok: ...`` or ``error: ...``."""

        def reset(args: list[str], operator: Any) -> str:
            if args:
                return "error: reset takes no argument"
            try:
                return f"ok: {self.reset_faults()}"
            except Exception as exc:  # link down, no ack, refused: say so
                return f"error: the shoe did not clear its fault: {exc}"

        def lights(args: list[str], operator: Any) -> str:
            if len(args) != 1 or not args[0].isdigit():
                return "error: lights needs a percentage 0-100, e.g. lights 80"
            try:
                self.set_lights(int(args[0]))
            except ValueError as exc:
                return f"error: {exc}"
            return f"ok: shoe lights {int(args[0])}%"

        return {"reset": reset, "lights": lights}

    def shoe_link(self) -> Any:
        """What the resume guard needs (game.shoe_link.ShoeLink): is the link up, and is
        the draw lock in a state this host knows: the shoe acknowledged a ``set_lock``
        since the link came up (the last acknowledged state is reported; a newer wish
        may be on its way)?"""
        from shoe_controller.game.shoe_link import ShoeLink

        up = self.link_up.is_set() and self.link is not None and self.link.is_up
        device = getattr(self.link, "device", None)
        if device is not None and "lock" not in device.capabilities:
            return ShoeLink(up, "none")
        applied = self._lock_applied
        if not up or applied is None:
            return ShoeLink(up, "unknown")
        return ShoeLink(up, "engaged" if applied else "released")

    def _device_disagrees(self) -> tuple[bool, bool]:
        """(lock, lights): does a heartbeat sent after our last acknowledged command
        show a lock or lights other than what we set (a shoe that locked itself, a
        brightness changed behind our back)?"""
        link = self.link
        state = getattr(link, "device_state", None)
        if state is None or getattr(link, "state_count", 0) <= self._state_mark:
            return False, False
        from firmware_bridge.protocol import STATE_LOCKED

        bits, brightness = state
        lock = self._lock_applied is not None and bool(bits & STATE_LOCKED) != self._lock_applied
        lights = self._lights_applied is not None and brightness != self._lights_applied
        return lock, lights

    def _locker(self) -> None:
        """The one thread that sends the lock and the lights (with the link's acks)."""
        while not self._stop.is_set():
            self._lock_wake.wait(0.25)
            self._lock_wake.clear()
            if not self.link_up.is_set():
                continue
            lock_off, lights_off = self._device_disagrees()
            caps = getattr(getattr(self.link, "device", None), "capabilities", frozenset())
            try:
                want = self._lock_wanted
                if "lock" not in caps:
                    pass  # a shoe without a draw lock: nothing to send (shoe_link: "none")
                elif want is not None and (want != self._lock_applied or lock_off):
                    self.link.set_lock(want)
                    self._state_mark = getattr(self.link, "state_count", 0)
                    if self._lock_wanted == want:
                        self._lock_applied = want
                    log.info("shoe draw lock %s", "engaged" if want else "released")
                lights = self._lights_wanted
                if "lights" not in caps:
                    pass  # a shoe without lights
                elif lights is not None and (lights != self._lights_applied or lights_off):
                    self.link.set_lights(lights)
                    self._state_mark = getattr(self.link, "state_count", 0)
                    if self._lights_wanted == lights:
                        self._lights_applied = lights
                    log.info("shoe lights set to %d%%", lights)
            except Exception as exc:  # link down or the shoe refused: try again later
                from firmware_bridge.link import CommandRejected

                if isinstance(exc, CommandRejected) and exc.command == "set_lights":
                    self._lights_applied = self._lights_wanted  # said once, not every 0.5 s
                log.warning("shoe command failed: %s", exc)
                self._lock_wake.set()
                self._stop.wait(0.5)

    def _on_event(self, event: Any) -> None:
        """(the link's reader thread) One bridge event, in device order."""
        try:
            self._handle(event, time.monotonic())
        except Exception:  # one odd event must not end the adapter
            log.exception("serial event %r could not be translated", event)

    def _handle(self, event: Any, now: float) -> None:
        kind = getattr(event, "kind", None)
        if kind == "device_clock":
            for inp in self.pairing.clock(event.uptime_us):
                self._submit(inp, "serial:card_exit")
            return
        if kind == "link_up":
            if event.restarted:  # the shoe rebooted: a pending exit's read cannot come
                for inp in self.pairing.restart():
                    self._submit(inp, "serial:card_exit")
            self.pairing.exit_sensor = "card_exit" in event.device.capabilities
            self.link_up.set()
            self._lock_applied = None  # a replugged or rebooted shoe: say it again
            self._lights_applied = None
            self._lock_wake.set()
            log.info("shoe link up: %s", getattr(event, "device", ""))
        elif kind == "link_down":
            self.link_up.clear()
            self._lock_applied = None  # the shoe may lock itself (1.1 keepalive): unknown
            log.warning("shoe link down: %s (retrying)", event.reason)
        if kind == "card_exit":
            if self.scanner:
                for inp in self.pairing.exit(event.t_us):
                    self._submit(inp, "serial:card_exit")
            elif self.on_card_exit is not None:
                self.on_card_exit(now)
            return
        if kind == "card_read":
            if self.scanner:
                for card, origin in bridge_inputs(event, self.mapping):
                    for inp in self.pairing.read(event.t_us, card, event.text):
                        self._submit(inp, origin)
            return
        for inp, origin in bridge_inputs(event, self.mapping if self.scanner else None):
            self._submit(inp, origin)

    def stop(self) -> None:
        self._stop.set()
        if self.link is not None:
            self.link.stop()


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

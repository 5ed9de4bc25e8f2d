"""What the shoe's microcontroller tells the daemon: immutable values on the input queue.

The :class:`~firmware_bridge.link.Link` puts one of these on the queue the daemon gives
it, in device order, each device event exactly once (see PROTOCOL.md §7). Every value
has a stable ``kind`` string:

========== ====================================================================
kind       value
========== ====================================================================
card_exit  :class:`CardExit` (sensor timestamp, pass duration)
card_read  :class:`CardRead` (the shoe's scanner payload)
button     :class:`ButtonPressed` (button name)
lid        :class:`LidChanged` (open or closed)
shoe_loaded:class:`ShoeLoaded`
shoe_empty :class:`ShoeEmpty`
fault      :class:`BridgeFault` (from the firmware, or found by the link)
link_up    :class:`LinkUp` (handshake done; device identity)
link_down  :class:`LinkDown` (unplugged, silent, refused; the link keeps retrying)
device_clock :class:`DeviceClock` (only with ``Link(clock_events=True)``: the device's
           clock, once every event it had sent by then has been delivered)
========== ====================================================================

Device events carry ``seq`` (the device's event sequence number, from 1 after each
device boot), ``t_us`` (device clock, microseconds since its boot) and ``rx_ns``
(``time.monotonic_ns()`` on the host when the frame was decoded; not compared).

>>> CardExit(seq=3, t_us=1_250_000, duration_us=38_000).kind
'card_exit'
>>> CardRead(seq=4, t_us=1, symbology="code128", payload=b"QH").text
'QH'
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar, Literal

__all__ = [
    "BridgeEvent",
    "BridgeFault",
    "ButtonPressed",
    "CardExit",
    "CardRead",
    "DeviceClock",
    "DeviceEvent",
    "DeviceInfo",
    "DeviceStatus",
    "LidChanged",
    "LinkDown",
    "LinkUp",
    "ShoeEmpty",
    "ShoeLoaded",
]


@dataclass(frozen=True, slots=True)
class CardExit:
    """The exit gate saw a card leave the shoe.

    ``t_us`` is when the card's leading edge reached the gate (device clock) and
    ``duration_us`` how long the gate stayed blocked: a card dealt normally blocks it
    for a few tens of milliseconds; two cards stuck together or a card pushed back show
    up as an unusual duration.
    """

    kind: ClassVar[str] = "card_exit"
    seq: int
    t_us: int
    duration_us: int
    rx_ns: int = field(default=0, compare=False)


@dataclass(frozen=True, slots=True)
class CardRead:
    """The shoe's own barcode scanner read a code (raw bytes; ``text`` decodes UTF-8)."""

    kind: ClassVar[str] = "card_read"
    seq: int
    t_us: int
    symbology: str
    payload: bytes
    rx_ns: int = field(default=0, compare=False)

    @property
    def text(self) -> str:
        return self.payload.decode("utf-8", "replace")


@dataclass(frozen=True, slots=True)
class ButtonPressed:
    """A button on the shoe was pressed: ``new_round``, ``confirm``, ``reveal_player``,
    ``reveal_banker``, ``call_supervisor``, or ``button_<id>`` for ids this host does
    not know."""

    kind: ClassVar[str] = "button"
    seq: int
    t_us: int
    button: str
    rx_ns: int = field(default=0, compare=False)


@dataclass(frozen=True, slots=True)
class LidChanged:
    kind: ClassVar[str] = "lid"
    seq: int
    t_us: int
    open: bool
    rx_ns: int = field(default=0, compare=False)


@dataclass(frozen=True, slots=True)
class ShoeLoaded:
    """The shoe-presence sensor sees cards again after being empty."""

    kind: ClassVar[str] = "shoe_loaded"
    seq: int
    t_us: int
    rx_ns: int = field(default=0, compare=False)


@dataclass(frozen=True, slots=True)
class ShoeEmpty:
    kind: ClassVar[str] = "shoe_empty"
    seq: int
    t_us: int
    rx_ns: int = field(default=0, compare=False)


@dataclass(frozen=True, slots=True)
class BridgeFault:
    """Something is wrong at the shoe or on the link, but the link is not (yet) down.

    ``source="device"``: the firmware reported it; ``name`` is the fault's name
    (``exit_sensor_blocked``, ``scanner_error``, ``lock_jammed``, ... or ``fault_<code>``),
    ``code`` its number, ``seq``/``t_us`` as for every device event.
    ``source="link"``: the host found it; ``name`` is one of ``events_lost`` (events the
    host will never get: the device's replay buffer no longer held them, the device
    restarted first, or ``replay_retries`` requests brought nothing; ``detail`` says how
    many, which and why), ``flag_mismatch`` (a known type with the wrong SEQUENCED
    flag, handled as its type says; once per type and device boot),
    ``protocol_mismatch`` (the device speaks another major protocol version), ``port_busy``
    (another process holds the port), ``open_failed`` (the port cannot be opened),
    ``no_answer`` (the port opened but nothing answered the hello: a stalled firmware, or
    not a shoe).
    Link faults are reported once per distinct problem, not on every retry.
    """

    kind: ClassVar[str] = "fault"
    source: Literal["device", "link"]
    name: str
    detail: str = ""
    code: int = 0
    seq: int = 0
    t_us: int = 0
    rx_ns: int = field(default=0, compare=False)


@dataclass(frozen=True, slots=True)
class DeviceInfo:
    """Who answered the handshake."""

    device_id: str
    firmware: str  # "major.minor.patch"
    protocol: tuple[int, int]
    capabilities: frozenset[str]
    boot_id: int


@dataclass(frozen=True, slots=True)
class DeviceStatus:
    """Answer to :meth:`Link.request_status` (not an event)."""

    uptime_us: int
    lid_open: bool
    shoe_loaded: bool
    locked: bool
    brightness: int  # lights, percent 0-100
    cards_total: int  # card exits since the device booted
    fault: str | None  # the latched firmware fault, if any


@dataclass(frozen=True, slots=True)
class LinkUp:
    """The handshake succeeded. ``restarted``: the device booted since the link last saw it
    (its sequence numbers started again; events of the old boot the host had not received
    are gone, and are reported as a ``fault`` ``events_lost`` when the device says so)."""

    kind: ClassVar[str] = "link_up"
    device: DeviceInfo
    restarted: bool = False


@dataclass(frozen=True, slots=True)
class LinkDown:
    """The link is down (``reason``: unplugged, heartbeat timeout, ...). The link keeps
    trying to reconnect with back-off; the next ``link_up`` ends the outage."""

    kind: ClassVar[str] = "link_down"
    reason: str


@dataclass(frozen=True, slots=True)
class DeviceClock:
    """The device's clock (``uptime_us``, µs since its boot) from a heartbeat or status,
    queued only when every event the device had emitted before that frame has been
    delivered (so "no read by device time T" is a fact, not a transport delay).

    >>> DeviceClock(uptime_us=2_000_000).kind
    'device_clock'
    """

    kind: ClassVar[str] = "device_clock"
    uptime_us: int


DeviceEvent = CardExit | CardRead | ButtonPressed | LidChanged | ShoeLoaded | ShoeEmpty
BridgeEvent = DeviceEvent | BridgeFault | LinkUp | LinkDown | DeviceClock

"""``[serial]`` configuration of the firmware bridge. Import-light: msgspec only.

>>> SerialConfig().port
'/dev/smart-shoe'
>>> import msgspec
>>> msgspec.convert({"port": "loop://", "baudrate": 57600}, SerialConfig).baudrate
57600
>>> msgspec.convert({"prot": "x"}, SerialConfig)
Traceback (most recent call last):
  ...
msgspec.ValidationError: Object contains unknown field `prot`
"""

from __future__ import annotations

from typing import Annotated

import msgspec

__all__ = ["SerialConfig"]

_Seconds = Annotated[float, msgspec.Meta(gt=0, le=3600)]


class SerialConfig(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """How the daemon reaches the shoe's microcontroller. Every key is optional.

    Times are in seconds. The defaults suit a USB CDC shoe on a Raspberry Pi; tests use
    much shorter times.
    """

    #: Device path or any pyserial URL (``serial_for_url``): ``/dev/smart-shoe`` (the udev
    #: name, see systemd/99-smart-shoe.rules), ``/dev/ttyACM0``, ``loop://``,
    #: ``socket://host:port``, ``rfc2217://host:port`` or a pty path from the simulator.
    port: str = "/dev/smart-shoe"
    #: Line speed (ignored by USB CDC devices, used on a plain UART).
    baudrate: Annotated[int, msgspec.Meta(ge=1200, le=4_000_000)] = 115200
    #: Hold the port exclusively (TIOCEXCL: the kernel refuses any other open of the tty;
    #: and pyserial's flock), so a second daemon or a terminal can neither read nor write.
    exclusive: bool = True
    #: No frame from the device for this long -> ``link_down`` and reconnect. The device
    #: sends a heartbeat every 0.2 s, so the default tolerates four lost heartbeats.
    heartbeat_timeout: _Seconds = 1.0
    #: How long to wait for the device's hello after opening the port.
    handshake_timeout: _Seconds = 0.5
    #: How long to wait for a command's acknowledgement before re-sending it.
    ack_timeout: _Seconds = 0.1
    #: Re-sends of an unacknowledged command before it fails (so 1 + retries attempts).
    command_retries: Annotated[int, msgspec.Meta(ge=0, le=100)] = 3
    #: First wait before reconnecting; doubles after each failed attempt ...
    reconnect_initial: _Seconds = 0.1
    #: ... up to this.
    reconnect_max: _Seconds = 5.0
    #: An event arriving ahead of its turn waits this long for the missing ones before
    #: the host asks the device to replay them.
    reorder_window: _Seconds = 0.02
    #: (protocol 1.1) How often the host sends a keepalive to a 1.1 shoe.
    keepalive_interval: _Seconds = 0.25
    #: (1.1) The silence from the host after which the shoe engages its draw lock on
    #: its own (sent in every keepalive; 0 = the shoe never does). Four keepalives.
    keepalive_timeout: Annotated[float, msgspec.Meta(ge=0, le=60)] = 1.0
    #: Shoe illumination in percent (0 = off), set at every link-up and whenever the
    #: shoe reports another; the supervisor's ``lights N`` changes it until a restart.
    lights: Annotated[int, msgspec.Meta(ge=0, le=100)] = 100
    #: Replay requests for one missing event before it is reported lost (``events_lost``)
    #: and the link goes on; each waits twice as long as the one before (the reorder
    #: window, at most 8 times it): with the defaults a gap the shoe can never fill is
    #: given up after about 0.3 s.
    replay_retries: Annotated[int, msgspec.Meta(ge=1, le=100)] = 4
    #: How long one blocking read waits; bounds how quickly timeouts and stop() are noticed.
    poll_interval: _Seconds = 0.01

    def __post_init__(self) -> None:
        if 0 < self.keepalive_timeout < 2 * self.keepalive_interval:
            raise ValueError(
                f"keepalive_timeout ({self.keepalive_timeout} s) must be 0 (off) or at "
                f"least twice keepalive_interval ({self.keepalive_interval} s): one lost "
                "keepalive must not lock the shoe")

"""MQTT topic names of one table. Two audiences, split by topic so an ACL can keep them
apart: ``casino/...`` for the casino's systems, ``display/...`` for the public displays.

>>> t = Topics("shoe", "T1")
>>> t.status, t.casino_events, t.display_state
('shoe/T1/status', 'shoe/T1/casino/events', 'shoe/T1/display/state')
>>> t.casino_head, t.casino_replay, t.replay_responses
('shoe/T1/casino/head', 'shoe/T1/casino/replay', 'shoe/T1/casino/replay/response/')
>>> Topics("shoe", "T/1")
Traceback (most recent call last):
...
ValueError: table id 'T/1' cannot be used in an MQTT topic: no '/', '+', '#' or NUL
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Topics"]


def _check_level(value: str, what: str) -> None:
    if not value or any(c in value for c in "/+#\0"):
        raise ValueError(f"{what} {value!r} cannot be used in an MQTT topic: "
                         "no '/', '+', '#' or NUL")


@dataclass(frozen=True, slots=True)
class Topics:
    """``<prefix>/<table>/status`` (retained, last will), ``.../casino/events`` (every
    released event, signed) and ``.../display/state`` (retained public state)."""

    prefix: str
    table: str

    def __post_init__(self) -> None:
        _check_level(self.prefix, "topic prefix")
        _check_level(self.table, "table id")

    @property
    def base(self) -> str:
        return f"{self.prefix}/{self.table}"

    @property
    def status(self) -> str:
        return f"{self.base}/status"

    @property
    def casino_events(self) -> str:
        return f"{self.base}/casino/events"

    @property
    def casino_head(self) -> str:
        """Retained, signed: epoch, seq and hash of the last released event."""
        return f"{self.base}/casino/head"

    @property
    def casino_replay(self) -> str:
        """MQTT 5 replay requests from casino systems (the daemon subscribes)."""
        return f"{self.base}/casino/replay"

    @property
    def replay_responses(self) -> str:
        """The prefix every replay request's Response Topic must start with."""
        return f"{self.base}/casino/replay/response/"

    @property
    def display_state(self) -> str:
        return f"{self.base}/display/state"

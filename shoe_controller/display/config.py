"""``[display]``: the table display page the daemon serves (``--display-port``).

Import-light on purpose (only msgspec): the configuration loader imports this Struct.

>>> DisplayConfig().port, DisplayConfig().ws_port, DisplayConfig().broker_ws_url
(0, 9001, '')
>>> import msgspec
>>> msgspec.convert({"port": 8080, "broker_ws_url": "ws://pi.local:9001"}, DisplayConfig).port
8080
>>> msgspec.convert({"broker_ws_url": "http://x"}, DisplayConfig)
Traceback (most recent call last):
...
msgspec.ValidationError: display broker_ws_url must look like ws://HOST[:PORT][/PATH] or ...
>>> msgspec.convert({"prot": 1}, DisplayConfig)
Traceback (most recent call last):
...
msgspec.ValidationError: Object contains unknown field `prot`
"""

from __future__ import annotations

from typing import Annotated
from urllib.parse import urlsplit

import msgspec

__all__ = ["DisplayConfig"]


class DisplayConfig(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """``[display]``: where the page is served and how the browser reaches the broker."""

    #: HTTP port of the display page; 0 = not served (``--display-port`` overrides).
    port: Annotated[int, msgspec.Meta(ge=0, le=65535)] = 0
    #: Address the page's HTTP server binds: all interfaces, since the table screens are
    #: other machines (use 127.0.0.1 for a screen driven by the Pi itself).
    bind: str = "0.0.0.0"
    #: WebSocket URL of the broker as the BROWSER sees it (``ws://HOST:PORT`` or
    #: ``wss://...``). Empty: ``ws://<host the page was loaded from>:<ws_port>``, which is
    #: right when mosquitto runs on the Pi beside the daemon.
    broker_ws_url: str = ""
    #: Port of mosquitto's websockets listener, used when ``broker_ws_url`` is empty.
    ws_port: Annotated[int, msgspec.Meta(ge=1, le=65535)] = 9001
    #: Credentials of a READ-ONLY display account (the broker's ACL must let it read only
    #: the public topics): they are served to every browser that opens the page.
    username: str | None = None
    password: str | None = None
    #: Title shown on the page; empty: "Table <table id>".
    title: str = ""

    def __post_init__(self) -> None:
        if self.broker_ws_url:
            parts = urlsplit(self.broker_ws_url)
            if parts.scheme not in ("ws", "wss") or not parts.hostname:
                raise msgspec.ValidationError(
                    "display broker_ws_url must look like ws://HOST[:PORT][/PATH] or "
                    f"wss://..., got {self.broker_ws_url!r}"
                )

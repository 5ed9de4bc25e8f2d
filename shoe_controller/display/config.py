"""``[display]``: the table display page the daemon serves (``--display-port``).

Import-light on purpose (only msgspec): the configuration loader imports this Struct.

>>> DisplayConfig().port, DisplayConfig().bind, DisplayConfig().languages()
(0, '127.0.0.1', ('en',))
>>> import msgspec
>>> c = msgspec.convert({"port": 8080, "broker_ws_url": "ws://pi.local:9001",
...                      "language": ["zh-Hant", "en"]}, DisplayConfig)
>>> c.port, c.languages()
(8080, ('zh-Hant', 'en'))
>>> msgspec.convert({"broker_ws_url": "http://x"}, DisplayConfig)
Traceback (most recent call last):
...
msgspec.ValidationError: display broker_ws_url must look like ws://HOST[:PORT][/PATH] or ...
>>> msgspec.convert({"language": "klingon"}, DisplayConfig)
Traceback (most recent call last):
...
msgspec.ValidationError: display language 'klingon' has no language file; known: en, es, ...
>>> msgspec.convert({"prot": 1}, DisplayConfig)
Traceback (most recent call last):
...
msgspec.ValidationError: Object contains unknown field `prot`
"""

from __future__ import annotations

import re
from importlib import resources
from typing import Annotated, Final
from urllib.parse import urlsplit

import msgspec

__all__ = ["LIMIT_KEYS", "DisplayConfig", "available_languages"]

#: What ``[display.limits]`` may name: the main bets and the side bet groups the page
#: shows (see docs/display.md).
LIMIT_KEYS: Final = ("player", "banker", "tie", "pairs", "either_pair", "perfect_pair",
                     "naturals", "bonus", "lucky_six", "lucky_seven")

_TAG = re.compile(r"^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$")
_HOSTNAME = re.compile(r"^(?=.{1,253}$)[a-z0-9]([a-z0-9-]{0,62}[a-z0-9])?"
                       r"(\.[a-z0-9]([a-z0-9-]{0,62}[a-z0-9])?)*\.?$")


def available_languages() -> tuple[str, ...]:
    """The language tags with a data file in ``static/i18n/`` (adding a file adds one).

    >>> {"en", "zh-Hant", "th"} <= set(available_languages())
    True
    """
    root = resources.files("shoe_controller.display.static").joinpath("i18n")
    tags = []
    for entry in root.iterdir():
        name = entry.name
        if name.endswith(".json") and _TAG.match(name[:-5]):
            tags.append(name[:-5])
    return tuple(sorted(tags))


Limit = Annotated[list[Annotated[int, msgspec.Meta(ge=0)]], msgspec.Meta(min_length=2,
                                                                        max_length=2)]


class DisplayConfig(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """``[display]``: where the page is served, how the browser reaches the broker, what
    the page shows (languages, table limits)."""

    #: HTTP port of the display page; 0 = not served (``--display-port`` overrides).
    port: Annotated[int, msgspec.Meta(ge=0, le=65535)] = 0
    #: Address the page's HTTP server binds. Default loopback: the Pi drives the table
    #: screen itself (HDMI, Chromium in kiosk mode). For screens on other machines, give
    #: the address of the Pi's interface on the screen network (never a public one).
    bind: str = "127.0.0.1"
    #: Host names the page may be asked for (the ``Host`` header), besides IP literals,
    #: ``localhost`` and this machine's own host name (``name`` and ``name.local``).
    #: Anything else is refused: a DNS-rebinding page cannot read ``/config.json``.
    hosts: list[str] = msgspec.field(default_factory=list)
    #: Seconds a connection may stay idle (no request, or a request trickling in) before
    #: the server closes it.
    idle_timeout: Annotated[float, msgspec.Meta(gt=0, le=300)] = 10.0
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
    #: Title shown on the page; empty: "Table <table id>" in the page's language.
    title: str = ""
    #: The page's language (a file ``static/i18n/<tag>.json``), or a list the page
    #: alternates through every ``language_seconds``. A screen's ``?lang=`` overrides it.
    language: str | list[str] = "en"
    #: Seconds each language stays up when ``language`` lists several.
    language_seconds: Annotated[float, msgspec.Meta(ge=2, le=3600)] = 10.0
    #: Public keys the display state must be signed with: ``ed25519:<base64>`` texts or
    #: paths of ``signing.pub`` files (docs/mqtt.md). The daemon always adds its own
    #: device key's public half, so on the Pi this stays empty; list keys here for a page
    #: server that runs elsewhere, or during a key rotation. No key at all (only with
    #: ``--unsigned``): the page does not check signatures and says UNSIGNED.
    public_keys: list[str] = msgspec.field(default_factory=list)
    #: ISO 4217 currency of the table limits ("PHP", "THB", "USD"...); empty: plain numbers.
    currency: str = ""
    #: Table limits, ``[min, max]`` per bet or side bet group (player, banker, tie, pairs,
    #: either_pair, perfect_pair, naturals, bonus, lucky_six, lucky_seven), e.g.
    #: ``[display.limits] player = [100, 50000]``. Empty: no limits panel.
    limits: dict[str, Limit] = msgspec.field(default_factory=dict)

    def languages(self) -> tuple[str, ...]:
        """The configured language(s) as a tuple."""
        return (self.language,) if isinstance(self.language, str) else tuple(self.language)

    def __post_init__(self) -> None:
        if self.broker_ws_url:
            parts = urlsplit(self.broker_ws_url)
            if parts.scheme not in ("ws", "wss") or not parts.hostname:
                raise msgspec.ValidationError(
                    "display broker_ws_url must look like ws://HOST[:PORT][/PATH] or "
                    f"wss://..., got {self.broker_ws_url[:80]!r}"
                )
        for name in self.hosts:
            if not _HOSTNAME.match(name.lower()):
                raise msgspec.ValidationError(
                    f"display hosts: {name[:80]!r} is not a host name")
        langs = self.languages()
        if not langs:
            raise msgspec.ValidationError("display language: give at least one")
        known = available_languages()
        for tag in langs:
            if tag not in known:
                raise msgspec.ValidationError(
                    f"display language {tag[:80]!r} has no language file; known: "
                    + ", ".join(known))
        for key, (lo, hi) in self.limits.items():
            if key not in LIMIT_KEYS:
                raise msgspec.ValidationError(
                    f"display limits: unknown bet {key[:80]!r}; known: "
                    + ", ".join(LIMIT_KEYS))
            if lo > hi:
                raise msgspec.ValidationError(
                    f"display limits.{key}: minimum {lo} is above maximum {hi}")
        if self.currency and not re.fullmatch(r"[A-Z]{3}", self.currency):
            raise msgspec.ValidationError(
                f"display currency {self.currency[:80]!r}: an ISO 4217 code like PHP, THB")

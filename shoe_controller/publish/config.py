"""Configuration of the MQTT feeds and the event journal: ``[mqtt]`` and ``[journal]``.

Import-light on purpose (only msgspec and the standard library): the configuration
loader imports these Structs to validate a table's TOML file without pulling in paho or
SQLite. Every field has a default and unknown keys are refused, so a typo in the file is
an error naming the key instead of a silently ignored setting.

>>> MqttConfig().release, MqttConfig().qos, MqttConfig().endpoint()
('on_result', 1, ('localhost', 1883, False))
>>> MqttConfig(url="mqtts://broker.casino.lan").endpoint()
('broker.casino.lan', 8883, True)
>>> MqttConfig(url="mqtt://10.0.0.5:1884", tls=True).endpoint()
('10.0.0.5', 1884, True)
>>> import msgspec
>>> msgspec.convert({"release": "per_card", "keepalive": 15}, MqttConfig).release
'per_card'
>>> msgspec.convert({"relase": "per_card"}, MqttConfig)
Traceback (most recent call last):
...
msgspec.ValidationError: Object contains unknown field `relase`
>>> msgspec.convert({"url": "http://x"}, MqttConfig)
Traceback (most recent call last):
...
msgspec.ValidationError: mqtt url must look like mqtt://HOST[:PORT] or mqtts://HOST[:PORT], got 'http://x'
>>> JournalConfig().resolve("/var/lib/shoe-controller")
'/var/lib/shoe-controller/journal.sqlite3'
"""

from __future__ import annotations

import os
from typing import Annotated, Literal
from urllib.parse import urlsplit

import msgspec

__all__ = ["JournalConfig", "MqttConfig", "Release", "read_secret_file"]

#: When cards reach the feeds: when the dealer confirms the result (``on_result``, the
#: default: nobody learns a card before the table does) or as they are dealt
#: (``per_card``, for tables that show cards live anyway).
Release = Literal["on_result", "per_card"]

Port = Annotated[int, msgspec.Meta(ge=1, le=65535)]
Seconds = Annotated[int, msgspec.Meta(ge=0)]


class MqttConfig(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """``[mqtt]``: the broker, credentials, TLS, topics and release policy."""

    #: Publish at all. Off, events are still journaled; nothing leaves the Pi.
    enabled: bool = True
    #: ``mqtt://HOST[:PORT]`` or ``mqtts://HOST[:PORT]`` (TLS). When set it overrides
    #: ``host``/``port`` and an ``mqtts`` scheme turns ``tls`` on.
    url: str | None = None
    host: str = "localhost"
    #: Default 1883, or 8883 with TLS.
    port: Port | None = None
    #: MQTT client id; default ``shoe-controller-<table id>``. The persistent session is
    #: keyed on it, so keep it stable for a table.
    client_id: str | None = None
    #: Use TLS. With no ``ca_file`` the system trust store verifies the broker.
    tls: bool = False
    #: PEM file of the CA(s) that signed the broker's certificate.
    ca_file: str | None = None
    #: PEM client certificate and its key, for brokers that require client certificates.
    cert_file: str | None = None
    key_file: str | None = None
    username: str | None = None
    #: Prefer ``password_file`` (first line is the password) over a password in the TOML.
    password: str | None = None
    password_file: str | None = None
    #: Seconds between pings when idle; the broker declares us gone after 1.5x this and
    #: publishes the ``offline`` last will.
    keepalive: Annotated[int, msgspec.Meta(ge=5, le=3600)] = 30
    #: How long the broker keeps our session (and its queued QoS 1 messages) after a
    #: disconnect, in seconds (MQTT 5 Session Expiry Interval).
    session_expiry: Seconds = 86_400
    #: Reconnect back-off, doubling from the first to the second figure, in seconds.
    reconnect_min_delay: Annotated[int, msgspec.Meta(ge=1)] = 1
    reconnect_max_delay: Annotated[int, msgspec.Meta(ge=1)] = 30
    #: Topics are ``<topic_prefix>/<table id>/status``, ``.../casino/events`` and
    #: ``.../display/state``.
    topic_prefix: str = "shoe"
    qos: Literal[1] = 1
    release: Release = "on_result"
    #: The device's Ed25519 private key (PKCS#8 PEM, mode 0600) that signs the casino
    #: feed, the head and the display state. Unset: ``signing.key`` in the state
    #: directory (made by ``shoe-controller keys init``). The daemon refuses to start
    #: without it unless run with ``--unsigned``.
    signing_key_file: str | None = None
    #: Publish the public display state (``display/state``, retained).
    display_feed: bool = True
    #: At most this many messages handed to the broker and not yet acknowledged (and
    #: always fewer than the broker's MQTT 5 Receive Maximum).
    max_inflight: Annotated[int, msgspec.Meta(ge=1, le=65535)] = 100

    def __post_init__(self) -> None:
        if self.url is not None:
            parts = urlsplit(self.url)
            if parts.scheme not in ("mqtt", "mqtts") or not parts.hostname:
                raise msgspec.ValidationError(
                    "mqtt url must look like mqtt://HOST[:PORT] or mqtts://HOST[:PORT], "
                    f"got {self.url!r}"
                )
        if self.password is not None and self.password_file is not None:
            raise msgspec.ValidationError("mqtt: set password or password_file, not both")
        if (self.cert_file is None) != (self.key_file is None):
            raise msgspec.ValidationError("mqtt: cert_file and key_file go together")
        if self.reconnect_max_delay < self.reconnect_min_delay:
            raise msgspec.ValidationError(
                "mqtt: reconnect_max_delay must be >= reconnect_min_delay"
            )
        if not self.topic_prefix or "#" in self.topic_prefix or "+" in self.topic_prefix:
            raise msgspec.ValidationError(
                f"mqtt topic_prefix must be a plain topic level, got {self.topic_prefix!r}"
            )

    def endpoint(self) -> tuple[str, int, bool]:
        """``(host, port, tls)`` after applying ``url`` over ``host``/``port``/``tls``."""
        host, port, tls = self.host, self.port, self.tls
        if self.url is not None:
            parts = urlsplit(self.url)
            host = parts.hostname or host
            port = parts.port or port
            tls = tls or parts.scheme == "mqtts"
        return host, port or (8883 if tls else 1883), tls

    def signing_key_path(self, state_dir: str | os.PathLike[str]) -> str:
        """The signing key's path: ``signing_key_file``, else ``<state_dir>/signing.key``.

        >>> MqttConfig().signing_key_path("/var/lib/shoe-controller")
        '/var/lib/shoe-controller/signing.key'
        """
        if self.signing_key_file is not None:
            return os.path.expanduser(self.signing_key_file)
        return os.path.join(os.fspath(state_dir), "signing.key")

    def client_id_for(self, table_id: str) -> str:
        """The MQTT client id: configured, or derived from the table id."""
        return self.client_id or f"shoe-controller-{table_id}"

    def resolved_password(self) -> str | None:
        """The password from ``password`` or the first line of ``password_file``."""
        if self.password_file is not None:
            return read_secret_file(self.password_file, "mqtt password_file").decode().strip()
        return self.password


class JournalConfig(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """``[journal]``: where the event journal (and the MQTT outbox beside it) lives."""

    #: SQLite file. A relative path is taken inside the state directory
    #: (``--state-dir``, or systemd's ``$STATE_DIRECTORY``).
    path: str = "journal.sqlite3"
    #: Free space (MB) kept on the journal's filesystem: below it no new round opens and
    #: play stops with a ``disk_full`` fault until space is freed (docs/daemon.md). It must
    #: hold at least a round and its messages; 0 turns the check off (write failures are
    #: still caught).
    reserve_mb: Annotated[float, msgspec.Meta(ge=0)] = 64.0

    def resolve(self, state_dir: str | os.PathLike[str]) -> str:
        """The journal's path, relative ones resolved against ``state_dir``."""
        return os.path.join(os.fspath(state_dir), os.path.expanduser(self.path))

    @property
    def reserve_bytes(self) -> int:
        return int(self.reserve_mb * 1024 * 1024)


def read_secret_file(path: str, what: str) -> bytes:
    """Read a key or password file, with an error that says which setting it was.

    A single trailing newline (as editors add) is dropped.
    """
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as exc:
        raise ValueError(f"{what} {path!r}: cannot read it ({exc.strerror})") from None
    if data.endswith(b"\r\n"):
        data = data[:-2]
    elif data.endswith(b"\n"):
        data = data[:-1]
    if not data:
        raise ValueError(f"{what} {path!r}: the file is empty")
    return data

"""A tiny HTTP server for the table display page: the static files and ``/config.json``.

The page itself talks to the broker (MQTT over WebSockets); this server only hands it
the files and tells it where the broker is, which table to show, in which language(s),
the table limits and the keys that sign the display state. It serves a fixed list of
files from the package (no directory listing, no path from the request ever touches the
file system) and runs in a background thread, so the daemon's core loop never waits on
a browser.

Hardening (docs/display.md): every response carries a Content-Security-Policy that lets
the page load only its own files and connect only to its own server and the configured
broker (``frame-ancestors 'none'``), ``X-Content-Type-Options: nosniff`` and no
``Server:`` version banner; a request whose ``Host`` is not an IP literal, ``localhost``,
this machine's name or a configured name is refused (421), so a DNS-rebinding page
cannot read ``/config.json``; a connection idle for ``idle_timeout`` seconds is closed;
at most ``max_connections`` are served at once; only GET and HEAD are answered.

>>> srv = serve(0, "ws://127.0.0.1:9001", "T1", bind="127.0.0.1")
>>> import json, urllib.request
>>> json.load(urllib.request.urlopen(srv.url + "config.json"))["table_id"]
'T1'
>>> srv.close()

Run it alone (for a screen test without the daemon)::

    python -m shoe_controller.display.server --port 8080 --table-id T1 \\
        --broker-ws-url ws://127.0.0.1:9001
"""

from __future__ import annotations

import argparse
import ipaddress
import json
import logging
import socket
import threading
from collections.abc import Iterable, Mapping
from email.utils import formatdate
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from typing import Any
from urllib.parse import urlsplit

from shoe_controller.display.config import available_languages

__all__ = ["BUNDLE", "DisplayServer", "bundle_present", "content_security_policy",
           "host_allowed", "page_config", "serve", "serve_config", "verify_keys_for"]

log = logging.getLogger(__name__)

#: URL path -> (file under static/, content type). Nothing else is ever served.
FILES: dict[str, tuple[str, str]] = {
    "/": ("index.html", "text/html; charset=utf-8"),
    "/index.html": ("index.html", "text/html; charset=utf-8"),
    "/style.css": ("style.css", "text/css; charset=utf-8"),
    "/app.js": ("app.js", "text/javascript; charset=utf-8"),
    "/vendor/mqtt.min.js": ("vendor/mqtt.min.js", "text/javascript; charset=utf-8"),
    "/favicon.svg": ("favicon.svg", "image/svg+xml"),
    "/favicon.ico": ("favicon.ico", "image/x-icon"),
}
#: The MQTT client bundle copied in by the build step.
BUNDLE = "vendor/mqtt.min.js"


def _static(name: str) -> Any:
    return resources.files("shoe_controller.display.static").joinpath(name)


def _files() -> dict[str, tuple[str, str]]:
    """The fixed files plus one per language data file (``/i18n/<tag>.json``)."""
    files = dict(FILES)
    for tag in available_languages():
        files[f"/i18n/{tag}.json"] = (f"i18n/{tag}.json", "application/json; charset=utf-8")
    return files


def bundle_present() -> bool:
    """Whether ``python -m shoe_controller.display.build`` has put the MQTT bundle in place.

    >>> isinstance(bundle_present(), bool)
    True
    """
    return bool(_static(BUNDLE).is_file())


def page_config(broker_ws_url: str, table_id: str, *, topic_prefix: str = "shoe",
                ws_port: int = 9001, username: str | None = None,
                password: str | None = None, title: str = "",
                language: Iterable[str] = ("en",), language_seconds: float = 10.0,
                currency: str = "", limits: Mapping[str, Any] | None = None,
                bet_last_rounds: Mapping[str, int] | None = None,
                verify_keys: Mapping[str, str] | None = None) -> dict[str, Any]:
    """What ``/config.json`` tells the page.

    ``bet_last_rounds``: bet name -> the last round of a shoe it is offered (the page
    says when the open side bets close); ``verify_keys``: key id -> base64 raw Ed25519
    public key the display state must be signed with (empty: not checked).

    >>> page_config("", "T1")["topics"]
    {'state': 'shoe/T1/display/state', 'status': 'shoe/T1/status'}
    >>> page_config("", "T1", language=["zh-Hant", "en"])["language"]
    ['zh-Hant', 'en']
    """
    base = f"{topic_prefix}/{table_id}"
    return {
        "table_id": table_id,
        # empty: the page says "Table <id>" in its language
        "title": title,
        # empty: the page uses ws://<its own host>:<ws_port>
        "broker_ws_url": broker_ws_url,
        "ws_port": ws_port,
        "username": username,
        "password": password,
        "topics": {"state": f"{base}/display/state", "status": f"{base}/status"},
        "languages": list(available_languages()),
        "language": list(language),
        "language_seconds": language_seconds,
        "currency": currency,
        "limits": {k: list(v) for k, v in (limits or {}).items()},
        "bet_last_rounds": dict(bet_last_rounds or {}),
        "verify_keys": dict(verify_keys or {}),
    }


def _split_host(value: str) -> str | None:
    """The host part of a ``Host`` header (lower case, no port), None if malformed."""
    value = value.strip().lower()
    if not value:
        return None
    if value.startswith("["):
        end = value.find("]")
        if end < 0 or (value[end + 1:] and not value[end + 1:].startswith(":")):
            return None
        return value[: end + 1]
    host, sep, port = value.partition(":")
    if sep and not port.isdigit():
        return None
    return host.rstrip(".")


def host_allowed(header: str | None, names: Iterable[str]) -> bool:
    """Whether a request's ``Host`` header names this server.

    IP literals are always accepted (DNS rebinding needs a name the attacker controls);
    names must be in ``names`` (compared case-insensitively, port ignored).

    >>> names = {"localhost", "pi-table-4"}
    >>> host_allowed("pi-table-4:8080", names), host_allowed("192.168.1.20:8080", names)
    (True, True)
    >>> host_allowed("[::1]:8080", names), host_allowed("evil.example:8080", names)
    (True, False)
    >>> host_allowed(None, names), host_allowed("a:b:c", names)
    (False, False)
    """
    if header is None:
        return False
    host = _split_host(header)
    if host is None or not host:
        return False
    try:
        ipaddress.ip_address(host.strip("[]"))
        return True
    except ValueError:
        pass
    return host in {n.lower().rstrip(".") for n in names}


def default_host_names(extra: Iterable[str] = ()) -> set[str]:
    """``localhost``, this machine's host name (plain, ``.local``, fully qualified) and
    ``extra``.

    >>> "localhost" in default_host_names(["screen.casino.lan"])
    True
    """
    names = {"localhost", *extra}
    try:
        name = socket.gethostname()
    except OSError:
        name = ""
    if name:
        short = name.split(".")[0]
        names |= {name, short, f"{short}.local"}
    return {n.lower() for n in names}


def _ws_origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def content_security_policy(broker_ws_url: str, page_host: str, ws_port: int) -> str:
    """The page's CSP: its own files only; connections to itself and the broker only.

    ``page_host`` is the (already checked) host the page was asked for: used when the
    broker URL is left to the page (``ws://<page host>:<ws_port>``).

    >>> content_security_policy("wss://mq.casino.lan:8883/mqtt", "pi", 9001).split("; ")[3]
    "connect-src 'self' wss://mq.casino.lan:8883"
    >>> "ws://pi:9001 wss://pi:9001" in content_security_policy("", "pi", 9001)
    True
    """
    if broker_ws_url:
        broker = _ws_origin(broker_ws_url)
    else:
        broker = f"ws://{page_host}:{ws_port} wss://{page_host}:{ws_port}"
    return "; ".join([
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self'",
        f"connect-src 'self' {broker}",
        "img-src 'self'",
        "font-src 'self'",
        "object-src 'none'",
        "base-uri 'none'",
        "form-action 'none'",
        "frame-ancestors 'none'",
    ])


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def setup(self) -> None:
        self.timeout = self.server.idle_timeout  # socket timeout: idle clients are dropped
        super().setup()

    def version_string(self) -> str:  # never announce software or versions
        return ""

    def send_response(self, code: int, message: str | None = None) -> None:
        # BaseHTTPRequestHandler's adds "Server: BaseHTTP/x Python/y": not here
        self.log_request(code)
        self.send_response_only(code, message)
        self.send_header("Date", formatdate(usegmt=True))

    def end_headers(self) -> None:
        headers = getattr(self, "headers", None)  # unset when the request line was bad
        host = _split_host(headers.get("Host", "") if headers else "") or "127.0.0.1"
        if not host_allowed(host, self.server.host_names):
            host = "127.0.0.1"
        self.send_header("Content-Security-Policy", content_security_policy(
            self.server.config["broker_ws_url"], host, self.server.config["ws_port"]))
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("X-Frame-Options", "DENY")
        self.send_header("Referrer-Policy", "no-referrer")
        self.send_header("Cross-Origin-Opener-Policy", "same-origin")
        self.send_header("Cross-Origin-Resource-Policy", "same-origin")
        super().end_headers()

    def _send(self, status: int, body: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        # the page must pick up a new version after an upgrade without a manual reload
        self.send_header("Cache-Control", "no-cache" if status == 200 else "no-store")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def do_GET(self) -> None:
        if not host_allowed(self.headers.get("Host"), self.server.host_names):
            self._send(HTTPStatus.MISDIRECTED_REQUEST, b"unknown Host\n",
                       "text/plain; charset=utf-8")
            return
        path = self.path.split("?", 1)[0]
        if path == "/config.json":
            body = json.dumps(self.server.config).encode()
            self._send(HTTPStatus.OK, body, "application/json")
            return
        entry = self.server.files.get(path)
        if entry is None:
            self._send(HTTPStatus.NOT_FOUND, b"not found\n", "text/plain; charset=utf-8")
            return
        name, content_type = entry
        try:
            body = _static(name).read_bytes()
        except FileNotFoundError:
            msg = f"{name} is missing: run `python -m shoe_controller.display.build`\n"
            self._send(HTTPStatus.SERVICE_UNAVAILABLE, msg.encode(),
                       "text/plain; charset=utf-8")
            return
        self._send(HTTPStatus.OK, body, content_type)

    do_HEAD = do_GET

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("display http: " + format, *args)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    config: dict[str, Any]
    files: dict[str, tuple[str, str]]
    host_names: set[str]
    idle_timeout: float = 10.0

    def __init__(self, address: tuple[str, int], max_connections: int) -> None:
        self._slots = threading.BoundedSemaphore(max_connections)
        family = socket.AF_INET6 if ":" in address[0] else socket.AF_INET
        self.address_family = family
        super().__init__(address, _Handler)

    def process_request(self, request: Any, client_address: Any) -> None:
        if not self._slots.acquire(blocking=False):
            log.warning("display http: too many connections; dropping %s", client_address)
            self.shutdown_request(request)
            return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self._slots.release()
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._slots.release()


class DisplayServer:
    """A running display page server. ``stop()`` (or ``close()``) stops it."""

    def __init__(self, httpd: _Server) -> None:
        self._httpd = httpd
        self._thread = threading.Thread(target=httpd.serve_forever, name="display-http",
                                        daemon=True)
        self._thread.start()

    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    @property
    def host(self) -> str:
        """The address bound (the configured ``bind``)."""
        return str(self._httpd.server_address[0])

    @property
    def url(self) -> str:
        host = self.host
        host = {"0.0.0.0": "127.0.0.1", "::": "[::1]", "": "127.0.0.1"}.get(host, host)
        if ":" in host and not host.startswith("["):
            host = f"[{host}]"
        return f"http://{host}:{self.port}/"

    def stop(self) -> None:
        """Stop serving and release the port (idempotent)."""
        if self._thread.is_alive():
            self._httpd.shutdown()
            self._thread.join(5)
        self._httpd.server_close()

    close = stop


def serve(port: int, broker_ws_url: str, table_id: str, *, bind: str = "127.0.0.1",
          topic_prefix: str = "shoe", ws_port: int = 9001, username: str | None = None,
          password: str | None = None, title: str = "", hosts: Iterable[str] = (),
          idle_timeout: float = 10.0, max_connections: int = 32,
          language: Iterable[str] = ("en",), language_seconds: float = 10.0,
          currency: str = "", limits: Mapping[str, Any] | None = None,
          bet_last_rounds: Mapping[str, int] | None = None,
          verify_keys: Mapping[str, str] | None = None) -> DisplayServer:
    """Serve the display page on ``bind:port`` (0: a free port) in a background thread.

    ``broker_ws_url`` is the broker's WebSocket URL as the browser sees it; empty means
    ``ws://<host the page came from>:<ws_port>``. ``hosts``: host names accepted in the
    ``Host`` header besides IP literals, ``localhost`` and this machine's name.
    """
    if not bundle_present():
        log.warning("display page: the MQTT client bundle is missing; run "
                    "`python -m shoe_controller.display.build` (the page will say so)")
    httpd = _Server((bind, port), max_connections)
    httpd.idle_timeout = idle_timeout
    httpd.files = _files()
    httpd.host_names = default_host_names(hosts)
    httpd.config = page_config(broker_ws_url, table_id, topic_prefix=topic_prefix,
                               ws_port=ws_port, username=username, password=password,
                               title=title, language=language,
                               language_seconds=language_seconds, currency=currency,
                               limits=limits, bet_last_rounds=bet_last_rounds,
                               verify_keys=verify_keys)
    return DisplayServer(httpd)


def bet_last_rounds(rules: Any) -> dict[str, int]:
    """Bet name -> the last round of a shoe it is offered, from ``Rules.bet_availability``
    (bets offered all shoe long are left out).

    >>> from shoe_controller.game.rules import Rules
    >>> r = bet_last_rounds(Rules())
    >>> r["player_bonus"], r["player_pair"], "banker" in r
    (40, 60, False)
    """
    avail = getattr(rules, "bet_availability", None)
    if avail is None:
        return {}
    import msgspec

    out = {}
    for name, value in msgspec.structs.asdict(avail).items():
        if isinstance(value, int) and value < 999:
            out[name] = value
    return out


def verify_keys_for(specs: Iterable[str], device_key: Any = None) -> dict[str, str]:
    """key id -> base64 of the raw Ed25519 public key, for the page's signature check:
    each of ``specs`` (``ed25519:...`` text or a ``signing.pub`` path) and the public
    half of ``device_key`` (the daemon's :class:`shoe_controller.keys.SigningKey`).
    Raises ``ValueError`` naming a key that cannot be read.

    >>> from shoe_controller.keys import SigningKey
    >>> key = SigningKey.generate()
    >>> verify_keys_for([key.public.text]) == verify_keys_for([], key)
    True
    >>> verify_keys_for(["ed25519:nonsense"])
    Traceback (most recent call last):
    ...
    ValueError: [display] public_keys: ...
    """
    import base64

    from shoe_controller.keys import KeyFileError, load_public_key

    keys = [device_key.public] if device_key is not None else []
    for spec in specs:
        try:
            keys.append(load_public_key(spec))
        except KeyFileError as exc:
            raise ValueError(f"[display] public_keys: {exc}") from None
    return {k.key_id: base64.b64encode(k.raw).decode() for k in keys}


def serve_config(display: Any, table_id: str, *, topic_prefix: str = "shoe",
                 rules: Any = None, port: int | None = None, bind: str | None = None,
                 broker_ws_url: str | None = None, device_key: Any = None) -> DisplayServer:
    """:func:`serve` from a ``[display]`` section (a ``DisplayConfig``; None: defaults),
    the table's rules (when side bets close), the device's signing key (the page checks
    the display state against its public half and ``[display] public_keys``) and
    overrides.

    >>> srv = serve_config(None, "T2", port=0)
    >>> srv.host, srv.port > 0
    ('127.0.0.1', True)
    >>> srv.close()
    """
    from shoe_controller.display.config import DisplayConfig

    d = display if display is not None else DisplayConfig()
    return serve(
        d.port if port is None else port,
        d.broker_ws_url if broker_ws_url is None else broker_ws_url,
        table_id, bind=d.bind if bind is None else bind, topic_prefix=topic_prefix,
        ws_port=d.ws_port, username=d.username, password=d.password, title=d.title,
        hosts=d.hosts, idle_timeout=d.idle_timeout, language=d.languages(),
        language_seconds=d.language_seconds, currency=d.currency, limits=d.limits,
        bet_last_rounds=bet_last_rounds(rules) if rules is not None else None,
        verify_keys=verify_keys_for(d.public_keys, device_key),
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m shoe_controller.display.server",
                                     description="Serve the table display page alone.")
    parser.add_argument("--port", type=int, default=8080)
    parser.add_argument("--bind", default="127.0.0.1",
                        help="address to bind (default loopback: a screen on this machine)")
    parser.add_argument("--table-id", required=True)
    parser.add_argument("--broker-ws-url", default="",
                        help="broker WebSocket URL as the browser sees it "
                             "(default ws://<page host>:--ws-port)")
    parser.add_argument("--ws-port", type=int, default=9001)
    parser.add_argument("--topic-prefix", default="shoe")
    parser.add_argument("--host", action="append", default=[], metavar="NAME",
                        help="a host name the page may be asked for (repeatable)")
    parser.add_argument("--language", default="en",
                        help="language tag, or several separated by commas to alternate")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO)
    srv = serve(args.port, args.broker_ws_url, args.table_id, bind=args.bind,
                topic_prefix=args.topic_prefix, ws_port=args.ws_port, hosts=args.host,
                language=args.language.split(","))
    print(f"display page on {srv.url}", flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        pass
    finally:
        srv.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

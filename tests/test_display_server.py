"""The display page's HTTP server: its files, its /config.json, its headers, nothing else.

Hardening (issue 14): a Content-Security-Policy that allows only the page's own files and
connections to the configured broker, nosniff, no version banner, the Host header checked
(DNS rebinding), idle connections closed, the configured address bound.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import socket
import time
import urllib.error
import urllib.request
from collections.abc import Iterator

import msgspec
import pytest

from shoe_controller.display.config import DisplayConfig, available_languages
from shoe_controller.display.server import DisplayServer, serve, serve_config


@pytest.fixture
def server() -> Iterator[DisplayServer]:
    srv = serve(0, "ws://127.0.0.1:9001", "T4", bind="127.0.0.1", topic_prefix="casino1",
                username="display", password="public", title="Salon Privé 4",
                hosts=["screen-4.casino.lan"])
    yield srv
    srv.close()


def get(url: str) -> tuple[int, dict[str, str], bytes]:
    try:
        with urllib.request.urlopen(url, timeout=5) as r:
            return r.status, dict(r.headers), r.read()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read()


def request(srv: DisplayServer, path: str, host: str | None, method: str = "GET"
            ) -> tuple[int, http.client.HTTPMessage, bytes]:
    """A request with exactly the Host header given (None: none at all)."""
    conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=5)
    try:
        conn.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
        if host is not None:
            conn.putheader("Host", host)
        conn.endheaders()
        r = conn.getresponse()
        return r.status, r.headers, r.read()
    finally:
        conn.close()


def raw_exchange(port: int, data: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        s.sendall(data)
        chunks = []
        while True:
            chunk = s.recv(65536)
            if not chunk:
                return b"".join(chunks)
            chunks.append(chunk)


def csp(headers: object) -> dict[str, list[str]]:
    value = headers["Content-Security-Policy"]  # type: ignore[index]
    out: dict[str, list[str]] = {}
    for part in value.split(";"):
        words = part.split()
        if words:
            out[words[0]] = words[1:]
    return out


def test_config_json_tells_the_page_where_and_what(server) -> None:
    status, headers, body = get(server.url + "config.json")
    assert status == 200 and headers["Content-Type"] == "application/json"
    cfg = json.loads(body)
    assert {k: cfg[k] for k in ("table_id", "title", "broker_ws_url", "ws_port", "username",
                                "password", "topics", "language")} == {
        "table_id": "T4", "title": "Salon Privé 4", "broker_ws_url": "ws://127.0.0.1:9001",
        "ws_port": 9001, "username": "display", "password": "public",
        "topics": {"state": "casino1/T4/display/state", "status": "casino1/T4/status"},
        "language": ["en"],
    }
    assert cfg["languages"] == sorted(p.name[:-5] for p in _i18n_files())


def _i18n_files() -> list:
    from importlib import resources
    root = resources.files("shoe_controller.display.static").joinpath("i18n")
    return [p for p in root.iterdir() if p.name.endswith(".json")]


def test_static_files_are_served_with_their_types(server) -> None:
    status, headers, body = get(server.url)
    assert status == 200 and headers["Content-Type"].startswith("text/html")
    assert b'<script src="vendor/mqtt.min.js">' in body and b"app.js" in body
    status, headers, body = get(server.url + "app.js")
    assert status == 200 and "javascript" in headers["Content-Type"]
    assert b"mqtt.connect" in body
    status, headers, _ = get(server.url + "style.css?v=2")
    assert status == 200 and headers["Content-Type"].startswith("text/css")
    assert headers["Cache-Control"] == "no-cache"
    status, headers, body = get(server.url + "i18n/zh-Hant.json")
    assert status == 200 and headers["Content-Type"].startswith("application/json")
    assert json.loads(body)["strings"]["banker"] == "莊"


def test_favicon(server) -> None:
    status, headers, body = get(server.url + "favicon.ico")
    assert status == 200 and headers["Content-Type"] == "image/x-icon"
    assert body[:4] == b"\x00\x00\x01\x00"  # an ICO file with one image
    status, headers, body = get(server.url + "favicon.svg")
    assert status == 200 and headers["Content-Type"] == "image/svg+xml"
    assert body.startswith(b"<svg")


def test_nothing_else_is_served(server) -> None:
    for path in ("server.py", "../server.py", "%2e%2e/config.py", "static/app.js",
                 "vendor/", "node_modules/mqtt/package.json", "etc/passwd", "i18n/",
                 "i18n/../config.py", "i18n/xx.json", "i18n/__init__.py"):
        status, _, _ = get(server.url + path)
        assert status == 404, path


def test_content_security_policy_on_every_response(server) -> None:
    for path in ("/", "/app.js", "/config.json", "/nope"):
        _, headers, _ = request(server, path, f"127.0.0.1:{server.port}")
        policy = csp(headers)
        assert policy["default-src"] == ["'self'"]
        assert policy["script-src"] == ["'self'"]  # no inline script, no eval
        assert policy["connect-src"] == ["'self'", "ws://127.0.0.1:9001"]  # the broker only
        assert policy["frame-ancestors"] == ["'none'"]
        assert policy["object-src"] == ["'none'"]
        assert headers["X-Content-Type-Options"] == "nosniff"
        assert headers["X-Frame-Options"] == "DENY"


def test_csp_without_a_broker_url_allows_the_page_hosts_broker_only() -> None:
    srv = serve(0, "", "T1", bind="127.0.0.1", ws_port=9443, hosts=["pi-t1.casino.lan"])
    try:
        _, headers, _ = request(srv, "/", f"pi-t1.casino.lan:{srv.port}")
        assert csp(headers)["connect-src"] == [
            "'self'", "ws://pi-t1.casino.lan:9443", "wss://pi-t1.casino.lan:9443"]
        # a wss URL elsewhere: its origin, not the path
        srv2 = serve(0, "wss://mq.casino.lan:8884/mqtt", "T1", bind="127.0.0.1")
        try:
            _, headers, _ = request(srv2, "/", "127.0.0.1")
            assert csp(headers)["connect-src"] == ["'self'", "wss://mq.casino.lan:8884"]
        finally:
            srv2.close()
    finally:
        srv.close()


def test_no_version_banner(server) -> None:
    raw = raw_exchange(server.port, b"GET / HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
    head = raw.split(b"\r\n\r\n", 1)[0]
    assert head.startswith(b"HTTP/1.0 200")
    assert b"\r\nserver:" not in head.lower()
    for word in (b"BaseHTTP", b"Python", b"python"):
        assert word not in head
    # nor on the server's own error pages (a method it does not answer, a bad request)
    for data in (b"POST /config.json HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n",
                 b"GET /a b HTTP/1.0\r\n\r\n"):
        raw = raw_exchange(server.port, data)
        head = raw.split(b"\r\n\r\n", 1)[0]
        assert head.startswith((b"HTTP/1.0 501", b"HTTP/1.0 400")), head
        assert b"\r\nserver:" not in head.lower() and b"Python" not in raw
        assert b"nosniff" in head


def test_host_header_is_checked(server) -> None:
    port = server.port
    for host in (f"127.0.0.1:{port}", "127.0.0.1", f"localhost:{port}", "LOCALHOST",
                 f"screen-4.casino.lan:{port}", f"[::1]:{port}", "10.1.2.3:8080",
                 socket.gethostname()):
        status, _, body = request(server, "/config.json", host)
        assert status == 200, host
        assert json.loads(body)["password"] == "public"
    # a DNS-rebinding page asks with its own name: nothing of the config leaves
    for host in ("evil.example", f"evil.example:{port}", "screen-4.casino.lan.evil.example",
                 "localhost.evil.example", "", "a:b:c", None):
        status, headers, body = request(server, "/config.json", host)
        assert status == 421, host
        assert b"public" not in body and b"T4" not in body
        assert headers["X-Content-Type-Options"] == "nosniff"
        status, _, body = request(server, "/", host)
        assert status == 421 and b"<html" not in body


def test_idle_connections_are_closed() -> None:
    srv = serve(0, "", "T1", bind="127.0.0.1", idle_timeout=0.5)
    try:
        for opening in (b"", b"GET /config.json HTTP/1.1\r\nHost: 127.0.0.1\r\n"):
            with socket.create_connection(("127.0.0.1", srv.port), timeout=5) as s:
                s.sendall(opening)  # nothing, or a request that never ends
                start = time.monotonic()
                data = s.recv(65536)
                waited = time.monotonic() - start
            assert data == b"", data  # closed by the server, nothing served
            assert 0.3 < waited < 3, waited
        # the server still answers a proper request
        assert get(srv.url + "config.json")[0] == 200
    finally:
        srv.close()


def test_connections_beyond_the_limit_are_dropped() -> None:
    srv = serve(0, "", "T1", bind="127.0.0.1", idle_timeout=1.5, max_connections=2)
    try:
        idle = [socket.create_connection(("127.0.0.1", srv.port), timeout=5) for _ in range(2)]
        time.sleep(0.2)
        with socket.create_connection(("127.0.0.1", srv.port), timeout=5) as s:
            s.sendall(b"GET / HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
            with contextlib.suppress(ConnectionResetError):
                assert s.recv(100) == b""  # dropped at once
        for s in idle:
            s.close()
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:  # the slots come back
            try:
                if get(srv.url + "config.json")[0] == 200:
                    break
            except OSError:
                time.sleep(0.1)
        else:
            pytest.fail("the server never served again")
    finally:
        srv.close()


def test_binds_the_configured_address_only() -> None:
    srv = serve_config(DisplayConfig(), "T1", port=0)
    try:
        assert srv.host == "127.0.0.1"  # the documented default: loopback
        assert get(srv.url + "config.json")[0] == 200
        # 127.0.0.2 is this machine too, but not the address bound
        with pytest.raises(OSError):
            socket.create_connection(("127.0.0.2", srv.port), timeout=2).close()
    finally:
        srv.close()


def test_page_config_from_the_display_section_and_rules() -> None:
    from shoe_controller.game.rules import BetAvailability, Rules

    cfg = msgspec.convert({"language": ["zh-Hant", "en"], "language_seconds": 8,
                           "currency": "PHP", "limits": {"player": [100, 50000],
                                                         "tie": [50, 5000]}}, DisplayConfig)
    rules = Rules(bet_availability=BetAvailability(player_bonus=30, lucky_six=0))
    srv = serve_config(cfg, "T7", rules=rules, port=0)
    try:
        page = json.loads(get(srv.url + "config.json")[2])
        assert page["language"] == ["zh-Hant", "en"] and page["language_seconds"] == 8
        assert page["currency"] == "PHP"
        assert page["limits"] == {"player": [100, 50000], "tie": [50, 5000]}
        assert page["bet_last_rounds"]["player_bonus"] == 30
        assert page["bet_last_rounds"]["lucky_six"] == 0
        assert page["bet_last_rounds"]["player_pair"] == 60  # the rule sheets' default
        assert "player" not in page["bet_last_rounds"]  # offered all shoe long
        assert page["verify_keys"] == {}
    finally:
        srv.close()


def test_display_config_defaults_and_errors() -> None:
    cfg = DisplayConfig()
    assert (cfg.port, cfg.bind, cfg.broker_ws_url, cfg.ws_port) == (0, "127.0.0.1", "", 9001)
    assert cfg.languages() == ("en",) and cfg.idle_timeout == 10
    with pytest.raises(msgspec.ValidationError, match="broker_ws_url"):
        msgspec.convert({"broker_ws_url": "mqtt://pi:1883"}, DisplayConfig)
    with pytest.raises(msgspec.ValidationError, match="port"):
        msgspec.convert({"port": 70000}, DisplayConfig)
    assert msgspec.convert({"broker_ws_url": "wss://pi.casino.lan/mqtt"},
                           DisplayConfig).broker_ws_url == "wss://pi.casino.lan/mqtt"
    with pytest.raises(msgspec.ValidationError, match="no language file"):
        msgspec.convert({"language": ["en", "tlh"]}, DisplayConfig)
    with pytest.raises(msgspec.ValidationError, match="unknown bet 'dragon'"):
        msgspec.convert({"limits": {"dragon": [1, 2]}}, DisplayConfig)
    with pytest.raises(msgspec.ValidationError, match="minimum 500 is above maximum 100"):
        msgspec.convert({"limits": {"tie": [500, 100]}}, DisplayConfig)
    with pytest.raises(msgspec.ValidationError, match="not a host name"):
        msgspec.convert({"hosts": ["bad host/name"]}, DisplayConfig)
    with pytest.raises(msgspec.ValidationError, match="ISO 4217"):
        msgspec.convert({"currency": "pesos"}, DisplayConfig)
    assert set(available_languages()) == {"en", "zh-Hans", "zh-Hant", "th", "fil", "id", "ru",
                                          "es", "vi"}


def test_stop_releases_the_port_and_is_idempotent() -> None:
    srv = serve(0, "", "T1", bind="127.0.0.1")
    url = srv.url
    assert get(url + "config.json")[0] == 200
    srv.stop()
    srv.stop()
    with pytest.raises(OSError):
        urllib.request.urlopen(url + "config.json", timeout=2)

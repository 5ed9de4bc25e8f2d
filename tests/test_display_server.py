"""The display page's HTTP server: its files, its /config.json, nothing else."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator

import msgspec
import pytest

from shoe_controller.display.config import DisplayConfig
from shoe_controller.display.server import DisplayServer, serve


@pytest.fixture
def server() -> Iterator[DisplayServer]:
    srv = serve(0, "ws://127.0.0.1:9001", "T4", bind="127.0.0.1", topic_prefix="casino1",
                username="display", password="public", title="Salon Privé 4")
    yield srv
    srv.close()


def get(url: str) -> tuple[int, dict[str, str], bytes]:
    try:
        with urllib.request.urlopen(url, timeout=5) as r:
            return r.status, dict(r.headers), r.read()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read()


def test_config_json_tells_the_page_where_and_what(server) -> None:
    status, headers, body = get(server.url + "config.json")
    assert status == 200 and headers["Content-Type"] == "application/json"
    cfg = json.loads(body)
    assert cfg == {
        "table_id": "T4", "title": "Salon Privé 4", "broker_ws_url": "ws://127.0.0.1:9001",
        "ws_port": 9001, "username": "display", "password": "public",
        "topics": {"state": "casino1/T4/display/state", "status": "casino1/T4/status"},
    }


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


def test_nothing_else_is_served(server) -> None:
    for path in ("server.py", "../server.py", "%2e%2e/config.py", "static/app.js",
                 "vendor/", "node_modules/mqtt/package.json", "etc/passwd"):
        status, _, _ = get(server.url + path)
        assert status == 404, path


def test_page_config_defaults_to_the_page_host() -> None:
    srv = serve(0, "", "T1", bind="127.0.0.1")
    try:
        cfg = json.loads(get(srv.url + "config.json")[2])
        assert cfg["broker_ws_url"] == "" and cfg["ws_port"] == 9001
        assert cfg["title"] == "Table T1"
    finally:
        srv.close()


def test_display_config_defaults_and_errors() -> None:
    cfg = DisplayConfig()
    assert (cfg.port, cfg.bind, cfg.broker_ws_url, cfg.ws_port) == (0, "0.0.0.0", "", 9001)
    with pytest.raises(msgspec.ValidationError, match="broker_ws_url"):
        msgspec.convert({"broker_ws_url": "mqtt://pi:1883"}, DisplayConfig)
    with pytest.raises(msgspec.ValidationError, match="port"):
        msgspec.convert({"port": 70000}, DisplayConfig)
    assert msgspec.convert({"broker_ws_url": "wss://pi.casino.lan/mqtt"},
                           DisplayConfig).broker_ws_url == "wss://pi.casino.lan/mqtt"


def test_stop_releases_the_port_and_is_idempotent() -> None:
    srv = serve(0, "", "T1", bind="127.0.0.1")
    url = srv.url
    assert get(url + "config.json")[0] == 200
    srv.stop()
    srv.stop()
    with pytest.raises(OSError):
        urllib.request.urlopen(url + "config.json", timeout=2)
